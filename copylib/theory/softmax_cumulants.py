"""The prior of one softmax row for the plug-in marginal: the cumulant generating function of its
``(u, v) = (|a|^2, A[l, l-1])`` on a grid of tilts and the saddlepoint (Daniels) density of the ``L``-row
sums ``(alpha_1, gamma_1)`` it gives. Re-exported by :mod:`copylib.theory.softmax_marginal`, whose
documentation derives both.

Shared with the other modules of the plug-in marginal: ``check_marginal_spec`` (the domain: softmax,
cyclic) and ``check_cumulants`` (a
:class:`~copylib.theory.softmax_marginal.RowCumulants` made for the spec).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.special import expit, ndtri
from scipy.stats import qmc

from ..arguments import check_generator, check_grid, check_int, check_positive
from ..model.network import ModelSpec, check_spec

__all__ = [
    "RowCumulants",
    "row_cumulants",
    "finite_size_cumulants",
    "default_tilts",
]

# the raw moments E[u^a v^b], a + b <= 4, in one table; the central ones of order 2 to 4
_RAW = {(a, b): k for k, (a, b) in enumerate((a, b) for a in range(5) for b in range(5 - a))}
_CENTRAL = [(a, b) for a in range(5) for b in range(5 - a) if a + b >= 2]


def check_marginal_spec(spec: object) -> ModelSpec:
    """``spec`` if it is a cyclic softmax-attention ``ModelSpec`` (the plug-in marginal's domain), else an error."""
    return check_spec(spec, kind="softmax", theory="the softmax theory",
                      cyclic_because="the plug-in marginal uses gamma_2 = L (cyclic task)")


@dataclass(frozen=True)
class RowCumulants:
    """The cumulant generating function of one softmax row's ``(u, v)`` on a grid of tilts.

    ``u = |a|^2`` (squared norm of the row of attention weights) and ``v`` the
    weight on the previous position; logits i.i.d. ``N(0, sigma_G^2)``.

    Attributes
    ----------
    lam1, lam2 : arrays ``(n1,)``, ``(n2,)``
        The tilts conjugate to ``u`` and ``v`` (dimensionless; ``lam = 0`` is the prior).
    phi : array ``(n1, n2)``
        ``ln E[exp(lam1 u + lam2 v)]`` (nats).
    mean : array ``(n1, n2, 2)``
        Tilted means ``(E u, E v)``.
    cov : array ``(n1, n2, 2, 2)``
        Tilted covariance ``Sigma`` of ``(u, v)`` (the Hessian of ``phi``).
    correction : array ``(n1, n2)``
        The second-order saddlepoint term ``r`` (see the module docstring); the
        density of a sum of ``L`` rows is multiplied by ``1 + r/L``.
    t_edge : array ``(n1, n2)``
        Largest tilted weight of a point at either end of the ``t`` grid: the
        quadrature in ``t`` is complete where it is tiny (checked by
        :func:`plugin_marginal` wherever the posterior has mass).
    L : int
        Row length.
    sigma_G : float
        Prior scale of the logits.
    n_draws : int
        Quasi-Monte Carlo draws of the other ``L - 1`` logits.
    """

    lam1: np.ndarray
    lam2: np.ndarray
    phi: np.ndarray
    mean: np.ndarray
    cov: np.ndarray
    correction: np.ndarray
    t_edge: np.ndarray
    L: int
    sigma_G: float
    n_draws: int

    def log_prior_density(self, correction: bool = False) -> np.ndarray:
        """``ln p0(alpha_1, gamma_1)`` at ``(alpha_1, gamma_1) = L mean`` (Daniels), ``(n1, n2)``.

        With ``correction=True`` the second-order factor ``1 + r/L`` is included
        (clipped below at ``1e-3``). It is off by default: where the tilted row is
        close to degenerate or bimodal (far from the posterior's mass, e.g. at
        large positive ``lam1``) ``r`` is huge and the expansion is useless; where
        the posterior has its mass (``L = 32``) it changes means by ``~1e-4``, and
        the change it makes is a measure of the saddlepoint error there.
        """
        L = self.L
        lam1, lam2 = np.meshgrid(self.lam1, self.lam2, indexing="ij")
        s1, s2 = L * self.mean[..., 0], L * self.mean[..., 1]
        det = self.cov[..., 0, 0] * self.cov[..., 1, 1] - self.cov[..., 0, 1] ** 2
        out = L * self.phi - lam1 * s1 - lam2 * s2 - math.log(2 * math.pi * L) - 0.5 * np.log(det)
        if correction:
            out = out + np.log(np.maximum(1.0 + self.correction / L, 1e-3))
        return out


def default_tilts(L: int) -> tuple[np.ndarray, np.ndarray]:
    """The default tilt grids ``(lam1, lam2)`` of :func:`row_cumulants` for rows of length ``L``.

    ``lam1`` runs from ``-420`` to ``hi`` in steps of 5, ``lam2`` from ``-240`` to
    ``320`` in steps of 2 (dimensionless). ``hi = 40`` up to ``L = 48`` (with
    ``hi = 20``, the edge used before, the posterior density at ``L = 32`` reaches
    within 18-20 nats of its maximum on the edge for ``P <= 600``, which the
    coverage check rejects for some Sobol sets); beyond, the pooling state of a
    longer row sits at larger ``lam1`` (the prior of ``u = |a|^2`` narrows like
    ``1/L``), and ``hi`` grows by 5 every 8 positions (``70`` at ``L = 96``). :func:`plugin_marginal` checks at every ``P``
    that the grid covers the posterior and raises otherwise.
    """
    L = check_int("L", L, 3)
    hi = 40.0 + 5.0 * math.ceil(max(0, L - 48) / 8)
    return np.arange(-420.0, hi + 2.5, 5.0), np.linspace(-240.0, 320.0, 281)


def _other_logits(L: int, sigma_G: float, n_draws: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """``shift`` and ``rho`` of ``n_draws`` scrambled-Sobol draws of ``L - 1`` logits."""
    u01 = qmc.Sobol(d=L - 1, scramble=True, seed=rng).random_base2(n_draws.bit_length() - 1)
    eta = sigma_G * ndtri(np.clip(u01, 1e-300, 1 - 1e-16))
    mx = eta.max(axis=1, keepdims=True)
    e = np.exp(eta - mx)
    s1 = e.sum(axis=1)
    s2 = (e**2).sum(axis=1)
    return np.log(s1) + mx[:, 0], s2 / s1**2


def _third_fourth(mom, cov):
    """Tilted central moments ``mom[a, b] = E[(u-Eu)^a (v-Ev)^b]`` -> the term ``r``."""
    Si = np.linalg.inv(cov)

    def k3(*idx):
        a = idx.count(0)
        return mom[a][3 - a]

    C = [[cov[..., 0, 0], cov[..., 0, 1]], [cov[..., 1, 0], cov[..., 1, 1]]]

    def k4(i, j, k, l):
        a = (i, j, k, l).count(0)
        return mom[a][4 - a] - C[i][j] * C[k][l] - C[i][k] * C[j][l] - C[i][l] * C[j][k]

    r4 = r13 = r23 = 0.0
    idx = range(2)
    for i in idx:
        for j in idx:
            for k in idx:
                for l in idx:
                    r4 = r4 + k4(i, j, k, l) * Si[..., i, j] * Si[..., k, l]
    for i in idx:
        for j in idx:
            for k in idx:
                a = k3(i, j, k)
                for l in idx:
                    for m in idx:
                        for n in idx:
                            b = a * k3(l, m, n)
                            r13 = r13 + b * Si[..., i, j] * Si[..., k, l] * Si[..., m, n]
                            r23 = r23 + b * Si[..., i, l] * Si[..., j, m] * Si[..., k, n]
    return r4 / 8 - r13 / 8 - r23 / 12


def row_cumulants(spec: ModelSpec, rng: np.random.Generator, *, n_draws: int = 8192,
                  lam1: npt.ArrayLike | None = None, lam2: npt.ArrayLike | None = None, t_step: float = 0.1,
                  t_range: tuple[float, float] = (-14.0, 10.0)) -> RowCumulants:
    """Tabulate the cumulant generating function of one softmax row on a ``(lam1, lam2)`` grid.

    Parameters
    ----------
    spec : ModelSpec
        ``kind="softmax"``, cyclic; uses ``L`` and ``sigma_G``.
    rng : numpy.random.Generator
        Seeds the scrambling of the Sobol points (the result is deterministic given ``rng``).
    n_draws : int
        Draws of the ``L - 1`` other logits, a power of 2 (``>= 16``).
    lam1, lam2 : 1-d increasing arrays, optional
        Tilt grids (dimensionless). Defaults :func:`default_tilts` (``linspace(-420, 40, 93)``
        and ``linspace(-240, 320, 281)`` up to ``L = 48``): they cover the posterior at
        ``L = 32, V = 4`` for ``P`` up to about 1500 and, at ``V = 4``, the transition
        region for ``16 <= L <= 96`` (:func:`plugin_marginal` checks the coverage
        at every ``P`` and raises if the grid is too small).
    t_step : float, ``0 < t_step <= sigma_G / 4``
        Spacing of the trapezoid grid in ``t = x - shift`` (logit units). The
        integrand is analytic, so the trapezoid rule converges exponentially: at
        ``L = 32`` halving the default step changes nothing at the 5th digit.
    t_range : pair of floats
        Range of that grid; it must hold the prior density of ``t`` (to ``1e-6``,
        else ``ValueError``). The defaults suit ``sigma_G`` of order one.

    Returns
    -------
    RowCumulants
        Cost ``O(n1 n_t n_draws + n1 n2 n_t)``: about two seconds at the defaults.
    """
    spec = check_marginal_spec(spec)
    check_generator("rng", rng)
    n_draws = check_int("n_draws", n_draws, 16)
    if n_draws & (n_draws - 1):
        raise ValueError(f"n_draws must be a power of 2 (Sobol points), got {n_draws}")
    lam1 = check_grid("lam1", default_tilts(spec.L)[0] if lam1 is None else lam1, n_min=5, increasing=True)
    lam2 = check_grid("lam2", default_tilts(spec.L)[1] if lam2 is None else lam2, n_min=5, increasing=True)
    t_step = check_positive("t_step", t_step)
    try:
        t_lo, t_hi = (float(x) for x in t_range)
    except (TypeError, ValueError):
        raise ValueError(f"t_range must be a pair (t_min, t_max), got {t_range!r}") from None
    if not (math.isfinite(t_lo) and math.isfinite(t_hi) and t_lo < t_hi):
        raise ValueError(f"t_range must satisfy t_min < t_max (finite), got {t_range!r}")
    n_t = int(round((t_hi - t_lo) / t_step)) + 1
    if n_t < 20:
        raise ValueError(f"t_step must give at least 20 grid points on t_range, got {n_t}")
    L, sG = spec.L, spec.sigma_G
    if L < 3:
        raise ValueError(f"spec.L must be >= 3 (for L = 2, u is a function of v and (u, v) has no density), got {L}")
    if t_step > sG / 4:
        raise ValueError(f"t_step must be <= sigma_G / 4 = {sG / 4:g} to resolve the logit density, got {t_step:g}")
    t = np.linspace(t_lo, t_hi, n_t)
    h = t[1] - t[0]
    sig = expit(t)
    w = (1.0 - sig) ** 2
    shift, rho = _other_logits(L, sG, n_draws, rng)
    logN = -0.5 * ((t[None, :] + shift[:, None]) / sG) ** 2 - math.log(math.sqrt(2 * math.pi) * sG)
    captured = h * np.exp(logN).sum() / n_draws
    if abs(captured - 1) > 1e-6:
        raise ValueError(
            f"t_range = {t_range!r} holds only {captured:.6f} of the prior density of t = x - shift; widen it"
        )
    R = np.stack([rho**j for j in range(5)])  # (5, k)
    n1, n2 = lam1.size, lam2.size
    t_edge = np.empty((n1, n2))
    phi = np.empty((n1, n2))
    mean = np.empty((n1, n2, 2))
    mom = [[np.empty((n1, n2)) for _ in range(5)] for _ in range(5)]

    def basis(mj):
        rj = [np.ones_like(t), *mj]
        cols = np.empty((t.size, len(_RAW)))
        for (aa, bb), col in _RAW.items():
            cu = sum(math.comb(aa, j) * sig ** (2 * (aa - j)) * w**j * rj[j] for j in range(aa + 1))
            cols[:, col] = cu * sig**bb
        return cols

    a = np.empty((n_draws, t.size))  # work buffer: in place, (n_draws, n_t) is read three times, not six
    for i, l1 in enumerate(lam1):
        # tilted sum over the other logits, for every t: E[rho^j N(t + shift)] e^{l1 rho w}
        np.multiply.outer(l1 * rho, w, out=a)
        a += logN
        m = a.max(axis=0)
        a -= m
        # einsum, not @: BLAS threads on a shared machine are ~50x slower here than a plain loop
        Wj = np.einsum("jk,kt->jt", R, np.exp(a, out=a))  # (5, n_t), times e^m / n_draws
        mj = Wj[1:] / Wj[0]  # E[rho^j | t], tilted
        lw = np.log(Wj[0]) + m + l1 * sig**2  # log weight of t, without the lam2 term
        # tilt in lam2
        lwt = lw[None, :] + lam2[:, None] * sig[None, :]
        mx = lwt.max(axis=1, keepdims=True)
        p = np.exp(lwt - mx)
        Z = p.sum(axis=1)
        phi[i] = np.log(Z * h) + mx[:, 0] - math.log(n_draws)
        p /= Z[:, None]
        t_edge[i] = np.maximum(p[:, 0], p[:, -1])
        # raw moments E[u^a v^b] from the conditional moments of rho given t:
        # u = sig^2 + w rho, so E[u^a | t] = sum_j C(a, j) sig^(2(a-j)) w^j E[rho^j | t]
        raw = np.einsum("nt,tm->nm", p, basis(mj))  # (n2, 15)
        Eu, Ev = raw[:, _RAW[(1, 0)]], raw[:, _RAW[(0, 1)]]
        mean[i, :, 0], mean[i, :, 1] = Eu, Ev
        for (aa, bb) in _CENTRAL:
            # central moment from raw ones (binomial expansion in both variables)
            acc = 0.0
            for j in range(aa + 1):
                for k in range(bb + 1):
                    acc = acc + (math.comb(aa, j) * math.comb(bb, k) * (-Eu) ** (aa - j) * (-Ev) ** (bb - k)
                                 * raw[:, _RAW[(j, k)]])
            mom[aa][bb][i] = acc
    cov = np.empty((n1, n2, 2, 2))
    cov[..., 0, 0], cov[..., 1, 1] = mom[2][0], mom[0][2]
    cov[..., 0, 1] = cov[..., 1, 0] = mom[1][1]
    correction = _third_fourth(mom, cov)
    return RowCumulants(lam1=lam1, lam2=lam2, phi=phi, mean=mean, cov=cov, correction=correction,
                        t_edge=t_edge, L=L, sigma_G=sG, n_draws=n_draws)


def finite_size_cumulants(L: int, V: int, rng: np.random.Generator, *, refine: int = 1,
                          **kwargs: Any) -> tuple[ModelSpec, RowCumulants]:
    """The cyclic softmax spec of size ``L``, ``V`` and its :func:`row_cumulants` on a refinable tilt grid.

    The tilt grids are :func:`default_tilts` ``(L)`` as ``linspace`` grids over the
    same range with the spacing divided by ``refine`` (an integer >= 1), so every
    point of the ``refine = 1`` grid is also a point of the refined grid: a grid
    refinement measures the interpolation error of the marginal (the finite-size
    table of the softmax chapter). ``kwargs`` go to :func:`row_cumulants`
    (``n_draws``, ``t_step``, ``t_range``; not the tilt grids).
    """
    refine = check_int("refine", refine, 1)
    if {"lam1", "lam2"} & set(kwargs):
        raise TypeError("finite_size_cumulants sets the tilt grids lam1, lam2 itself (use refine)")
    spec = ModelSpec(L=check_int("L", L, 3), V=check_int("V", V, 2), kind="softmax")
    grids = {name: np.linspace(g[0], g[-1], refine * (g.size - 1) + 1)
             for name, g in zip(("lam1", "lam2"), default_tilts(spec.L))}
    return spec, row_cumulants(spec, rng, **grids, **kwargs)


def check_cumulants(cum: object, spec: ModelSpec) -> RowCumulants:
    """``cum`` if it is a :class:`~copylib.theory.softmax_marginal.RowCumulants` for the ``L`` and ``sigma_G`` of ``spec``."""
    if not isinstance(cum, RowCumulants):
        raise TypeError(f"cumulants must be a RowCumulants (make it with row_cumulants), got {type(cum).__name__}")
    if cum.L != spec.L or cum.sigma_G != spec.sigma_G:
        raise ValueError(
            f"cumulants were made for L = {cum.L}, sigma_G = {cum.sigma_G}; spec has L = {spec.L}, "
            f"sigma_G = {spec.sigma_G}"
        )
    return cum
