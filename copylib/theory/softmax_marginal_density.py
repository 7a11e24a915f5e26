"""The plug-in marginal of the copy weight ``c = gamma_1 / L`` at one ``P`` (or of the prior), with the
conditional means of ``alpha_1`` and of the test loss. Re-exported by :mod:`copylib.theory.softmax_marginal`,
whose documentation derives the integral over the lines of constant ``gamma_1``.

Shared with the branches and scans of the marginal: ``EDGE_NATS`` (how far below its maximum the
posterior must be on the edge of the tilt grid), ``check_c_grid``, ``data_action`` (the plug-in data
action of ``(alpha_1, gamma_1)``), ``log_line_density`` and ``copy_weight_lines`` (the
``P``-independent part on the lines of constant ``gamma_1``, cached on the cumulants).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.interpolate import PchipInterpolator

from ..arguments import check_bool, check_grid, check_int, check_positive
from ..model.network import ModelSpec
from .plugin_loss import row_stochastic_plugin_loss
from .softmax_cumulants import RowCumulants, check_cumulants, check_marginal_spec

__all__ = [
    "CopyWeightMarginal",
    "plugin_marginal",
    "default_c_grid",
]

EDGE_NATS = 20.0  # the grid edge must lie this far below the maximum of the posterior (nats)


def default_c_grid(L: int) -> np.ndarray:
    """The default copy-weight grid of :func:`plugin_marginal` for rows of length ``L``.

    From ``c_lo = min(0.01, 0.4 / L)`` (well below the prior mean ``1/L``) to
    ``0.7`` in steps of ``min(0.0005, c_lo / 20)``: ``linspace(0.01, 0.7, 1381)``
    up to ``L = 40``, finer and lower beyond, where the pooling basin is narrower.
    """
    L = check_int("L", L, 3)
    c_lo = min(0.01, 0.4 / L)
    step = min(5e-4, c_lo / 20)
    return np.linspace(c_lo, 0.7, int(round((0.7 - c_lo) / step)) + 1)

def check_c_grid(c_grid: npt.ArrayLike | None, L: int) -> np.ndarray:
    """``c_grid`` (default :func:`default_c_grid` of ``L``) checked: a strictly increasing grid in ``(0, 1)``."""
    c = check_grid("c_grid", default_c_grid(L) if c_grid is None else c_grid, n_min=5, increasing=True)
    if c[0] <= 0 or c[-1] >= 1:
        raise ValueError(f"c_grid must lie in (0, 1), got [{c[0]}, {c[-1]}]")
    return c


def data_action(a1: np.ndarray | float, g1: np.ndarray | float, P: np.ndarray | float,
                spec: ModelSpec) -> np.ndarray | float:
    """``plugin_action(alpha_1, L, gamma_1, L, P, spec)`` in plain numpy (same terms), broadcast."""
    L, V = spec.L, spec.V
    eps = V * spec.kappa / P
    return (V * (V - 1) / 2 * np.log1p(a1 / eps) + V / 2 * np.log1p(L / eps)
            - P / (2 * spec.sigma_sq * V) * ((V - 1) * g1**2 / (a1 + eps) + L**2 / (L + eps)))


@dataclass(frozen=True)
class CopyWeightMarginal:
    """The plug-in marginal of the copy weight ``c = gamma_1 / L`` at one ``P``.

    Attributes
    ----------
    P : float or None
        Number of training sequences (``None``: the prior).
    c : array ``(n_c,)``
        Grid of copy weights.
    log_density : array ``(n_c,)``
        ``ln p(c)``, normalised so that the trapezoid integral of ``exp`` over the
        ``c`` grid is 1 (i.e. conditional on ``c`` in the grid's range: choose the
        range to hold the mass).
    alpha_1 : array ``(n_c,)``
        ``E[alpha_1 | c]``.
    loss : array ``(n_c,)``
        ``E[loss | c]``: test loss per position of the attention with its plug-in
        readout (:func:`copylib.theory.softmax.state_loss`'s definition); ``nan`` for ``P = None``.
    edge : float
        Largest log density on the boundary of the tilt grid relative to the
        maximum over the grid, both over the points whose ``c`` lies in the range of
        the ``c`` grid (nats, ``<= 0``): the grid covers the posterior if it is well
        below zero.
    """

    P: float | None
    c: np.ndarray
    log_density: np.ndarray
    alpha_1: np.ndarray
    loss: np.ndarray
    edge: float

    @property
    def potential(self) -> np.ndarray:
        """The effective potential ``Omega(c) = -ln p(c)`` (nats), shifted to minimum 0."""
        Omega = -self.log_density
        return Omega - Omega.min()

    def mean(self, what: str = "c", lo: float = -np.inf, hi: float = np.inf) -> float:
        """Posterior mean of ``what`` in ``{"c", "alpha_1", "loss"}`` over ``lo <= c < hi``."""
        if what not in ("c", "alpha_1", "loss"):
            raise ValueError(f"what must be 'c', 'alpha_1' or 'loss', got {what!r}")
        val = self.c if what == "c" else getattr(self, what)
        p = np.exp(self.log_density - self.log_density.max()) * ((self.c >= lo) & (self.c < hi))
        return float(np.trapezoid(p * val, self.c) / np.trapezoid(p, self.c))

    def var(self) -> float:
        """Posterior variance of the copy weight ``c`` (the susceptibility of the copy order parameter)."""
        p = np.exp(self.log_density - self.log_density.max())
        mean = np.trapezoid(p * self.c, self.c) / np.trapezoid(p, self.c)
        return float(np.trapezoid(p * (self.c - mean) ** 2, self.c) / np.trapezoid(p, self.c))

    def mass(self, lo: float = -np.inf, hi: float = np.inf) -> float:
        """Posterior probability of ``lo <= c < hi`` (trapezoid rule on the grid).

        The ratio of the two trapezoid sums, not the masked sum alone: the density is normalised only
        to rounding, and a sum of a subset of the same non-negative terms cannot round above the whole."""
        p = np.exp(self.log_density - self.log_density.max())
        inside = p * ((self.c >= lo) & (self.c < hi))
        return float(np.trapezoid(inside, self.c) / np.trapezoid(p, self.c))


def log_line_density(cum: RowCumulants, correction: bool) -> np.ndarray:
    """``ln`` of the prior density in the coordinates ``(lam1, gamma_1)``, on the tilt grid ``(n1, n2)``."""
    det = cum.cov[..., 0, 0] * cum.cov[..., 1, 1] - cum.cov[..., 0, 1] ** 2
    return cum.log_prior_density(correction) + np.log(cum.L * det / cum.cov[..., 1, 1])


def copy_weight_lines(cum: RowCumulants, c: np.ndarray, correction: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(Y0, A)``, each ``(n1, n_c)``: the log prior density in ``(lam1, gamma_1)`` and ``alpha_1``
    on every line ``lam1 = const`` at ``gamma_1 = L c`` (monotone piecewise-cubic interpolation in
    ``gamma_1``, which never overshoots the tabulated values;
    ``Y0 = -inf`` where the line does not reach ``c``). Cached on ``cum`` (it does not depend on ``P``)."""
    key = (hash(c.tobytes()), c.size, bool(correction))
    cache = cum.__dict__.setdefault("_lines_cache", {})
    if key in cache:
        return cache[key]
    L = cum.L
    a1 = L * cum.mean[..., 0]
    g1 = L * cum.mean[..., 1]
    logq0 = log_line_density(cum, correction)
    gam = L * c
    n1 = cum.lam1.size
    Y0 = np.full((n1, c.size), -np.inf)
    A = np.zeros((n1, c.size))
    for i in range(n1):
        x = g1[i]
        keep = np.concatenate([[True], np.diff(x) > 0])  # strictly increasing (it is, up to rounding)
        x = x[keep]
        inside = (gam >= x[0]) & (gam <= x[-1])
        if inside.any():
            Y0[i, inside] = PchipInterpolator(x, logq0[i][keep])(gam[inside])
            A[i, inside] = PchipInterpolator(x, a1[i][keep])(gam[inside])
    for t in (Y0, A):
        t.setflags(write=False)
    if len(cache) >= 4:
        cache.pop(next(iter(cache)))
    cache[key] = (Y0, A)
    return Y0, A


def plugin_marginal(P: float | None, spec: ModelSpec, cumulants: RowCumulants, *,
                         c_grid: npt.ArrayLike | None = None,
                         correction: bool = False, check_coverage: bool = True) -> CopyWeightMarginal:
    """The plug-in marginal of the copy weight at ``P`` (or of the prior).

    Parameters
    ----------
    P : float > 0 or None
        Number of training sequences; ``None`` gives the prior marginal (no data action).
    spec : ModelSpec
        Softmax, cyclic.
    cumulants : RowCumulants
        From :func:`row_cumulants` with the same ``L`` and ``sigma_G``.
    c_grid : 1-d increasing array in ``(0, 1)``, optional
        Default :func:`default_c_grid` (``linspace(0.01, 0.7, 1381)`` up to ``L = 40``).
    correction : bool
        Include the second-order saddlepoint term (see
        :meth:`RowCumulants.log_prior_density`; default off).
    check_coverage : bool
        Raise ``ValueError`` if the posterior density on the edge of the tilt grid
        is within 20 nats of its maximum (the grid would cut off mass), or if the
        ``t`` quadrature is cut off where the posterior has mass.

    Returns
    -------
    CopyWeightMarginal
    """
    spec = check_marginal_spec(spec)
    cum = check_cumulants(cumulants, spec)
    P = None if P is None else check_positive("P", P)
    correction = check_bool("correction", correction)
    check_coverage = check_bool("check_coverage", check_coverage)
    c = check_c_grid(c_grid, spec.L)
    L = spec.L
    a1 = L * cum.mean[..., 0]
    g1 = L * cum.mean[..., 1]
    logq0 = log_line_density(cum, correction)
    logq = logq0 if P is None else logq0 - data_action(a1, g1, P, spec)
    # coverage: the density on the edges of the tilt grid, where those edges map into c_grid's range
    in_range = (g1 >= L * c[0]) & (g1 <= L * c[-1])
    masked = np.where(in_range, logq, -np.inf)
    top = masked.max()
    edge = float(max(masked[0].max(), masked[-1].max(), masked[:, 0].max(), masked[:, -1].max()) - top)
    if check_coverage and edge > -EDGE_NATS:
        raise ValueError(
            f"the tilt grid of cumulants does not cover the posterior at P = {P}: the density on its edge is "
            f"only {-edge:.1f} nats below the maximum (need {EDGE_NATS:g}); widen lam1/lam2 in row_cumulants"
        )
    heavy = logq > top - EDGE_NATS
    if check_coverage and cum.t_edge[heavy].max() > 1e-6:
        raise ValueError(
            f"the t grid of cumulants is too short at P = {P}: a point at its end carries "
            f"{cum.t_edge[heavy].max():.1e} of the tilted weight where the posterior has mass; widen t_range"
        )
    # the P-independent part on the lines of constant gamma_1 = L c; the data action
    # is then evaluated exactly at (alpha_1 on the line, L c)
    Y0, A = copy_weight_lines(cum, c, correction)
    Y = Y0 if P is None else Y0 - data_action(A, L * c, P, spec)
    top_c = Y.max(axis=0)
    if not np.isfinite(top_c).all():
        raise ValueError("the tilt grid does not reach every point of c_grid; narrow c_grid or widen lam2")
    wts = np.exp(Y - top_c)  # trapezoid over lam1 at every c, in log space
    mass = np.trapezoid(wts, cum.lam1, axis=0)
    logd = np.log(mass) + top_c + math.log(L)  # d gamma_1 = L dc
    alpha = np.trapezoid(wts * A, cum.lam1, axis=0) / mass
    loss = (np.full_like(c, np.nan) if P is None
            # off the lines (Y0 = -inf, zero weight) alpha_1 is a placeholder that any loss multiplies by 0
            else np.trapezoid(wts * row_stochastic_plugin_loss(np.where(np.isfinite(Y0), A, 1.0), L * c, P, spec),
                              cum.lam1, axis=0) / mass)
    mx = logd.max()
    logd -= mx + math.log(np.trapezoid(np.exp(logd - mx), c))
    return CopyWeightMarginal(P=P, c=c, log_density=logd, alpha_1=alpha, loss=loss, edge=edge)
