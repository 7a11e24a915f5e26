"""The plug-in marginal of the copy weight scanned over many sample sizes at once, and the finite-size
character of its jump at one ``(L, V)``. Re-exported by :mod:`copylib.theory.softmax_marginal`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.optimize import brentq

from ..arguments import as_real_array, check_bool, check_int, check_P_range, check_positive
from ..model.network import ModelSpec
from .softmax_cumulants import RowCumulants, check_cumulants, check_marginal_spec
from .softmax_marginal_branches import potential_minima
from .softmax_marginal_density import EDGE_NATS, check_c_grid, copy_weight_lines, data_action, log_line_density

__all__ = [
    "MarginalScan",
    "marginal_scan",
    "FiniteSizeRow",
    "finite_size_row",
]


@dataclass(frozen=True)
class MarginalScan:
    """The plug-in marginal of ``c`` summarised on a set of sample sizes.

    Fields, arrays of shape ``(n_P,)`` unless stated:

    P : array
        The sample sizes, as given.
    mean, var : arrays
        Posterior mean and variance of ``c``.
    n_minima : int array
        Number of local minima of ``Omega(c) = -ln p(c)`` (see :func:`marginal_branches`).
    barrier_height : array ``(n_P, 2)``
        ``Omega(c*) - Omega(minimum)`` above the pooling (first) and the copy (last)
        minimum, nats; ``0`` with fewer than two minima.
    depth : array
        The smaller of the two: the depth of the shallower basin (``0`` with one minimum).
    barrier : array
        ``c*`` (``nan`` with one minimum).
    delta_F : array
        ``Omega_copy - Omega_pool`` (nats), the basins split at ``c*`` (``nan`` with one minimum),
        or at the fixed ``c_split`` if one was given (then ``+-inf`` where one side holds
        no mass in floating point).
    shoulder : array
        The smallest slope of ``Omega`` pointing the wrong way, ``min(min_{c > c_0} Omega'(c),
        min_{c < c_0} -Omega'(c))`` with ``c_0`` the global minimum, over the region
        ``Omega < max_nats`` (nats per unit of ``c``, finite differences on the grid). It
        is positive with one minimum, negative with two, and continuous in ``P``:
        its minimum over ``P`` decides whether two minima exist at any ``P``.
    """

    P: np.ndarray
    mean: np.ndarray
    var: np.ndarray
    n_minima: np.ndarray
    barrier_height: np.ndarray
    depth: np.ndarray
    barrier: np.ndarray
    delta_F: np.ndarray
    shoulder: np.ndarray


def _log_marginals(Ps, spec, cum, c, correction, check_coverage):
    """``ln p(c)`` (unnormalised) at every ``P`` of ``Ps``, ``(n_P, n_c)``; coverage checked as in
    :func:`plugin_marginal`. Vectorised over chunks of ``P``."""
    L = spec.L
    Y0, A = copy_weight_lines(cum, c, correction)
    if check_coverage:
        a1, g1 = L * cum.mean[..., 0], L * cum.mean[..., 1]
        logq0 = log_line_density(cum, correction)
        in_range = (g1 >= L * c[0]) & (g1 <= L * c[-1])
    out = np.empty((len(Ps), c.size))
    chunk = max(1, int(4e5 // Y0.size))  # small chunks: the temporaries stay in cache
    for k in range(0, len(Ps), chunk):
        Pc = np.asarray(Ps[k:k + chunk], dtype=np.float64)
        if check_coverage:
            logq = np.where(in_range, logq0[None] - data_action(a1[None], g1[None], Pc[:, None, None], spec), -np.inf)
            top = logq.max(axis=(1, 2))
            edge = np.max([logq[:, 0].max(1), logq[:, -1].max(1), logq[:, :, 0].max(1), logq[:, :, -1].max(1)], axis=0)
            bad = edge - top > -EDGE_NATS
            if bad.any():
                P_bad = Pc[bad][0]
                raise ValueError(
                    f"the tilt grid of cumulants does not cover the posterior at P = {P_bad}: the density on its edge "
                    f"is only {float((top - edge)[bad][0]):.1f} nats below the maximum (need {EDGE_NATS:g}); "
                    "widen lam1/lam2 in row_cumulants")
            heavy = logq > (top - EDGE_NATS)[:, None, None]
            if (heavy & (cum.t_edge[None] > 1e-6)).any():
                raise ValueError("the t grid of cumulants is too short where the posterior has mass; widen t_range")
        Y = Y0[None] - data_action(A[None], (L * c)[None, None], Pc[:, None, None], spec)
        top_c = Y.max(axis=1)
        if not np.isfinite(top_c).all():
            raise ValueError("the tilt grid does not reach every point of c_grid; narrow c_grid or widen lam2")
        mass = np.trapezoid(np.exp(Y - top_c[:, None, :]), cum.lam1, axis=1)
        out[k:k + chunk] = np.log(mass) + top_c
    return out


def marginal_scan(P_values: npt.ArrayLike, spec: ModelSpec, cumulants: RowCumulants, *,
                  c_grid: npt.ArrayLike | None = None, correction: bool = False,
                  check_coverage: bool = True, tol: float = 1e-6, max_nats: float = 30.0,
                  c_split: float | None = None) -> MarginalScan:
    """Mean, variance, minima, barrier and basin free energies of the marginal of ``c`` at many ``P``.

    The same quantities as :func:`plugin_marginal` followed by
    :func:`marginal_branches` (identical definitions and tolerances), computed for
    all ``P`` at once (vectorised; about ten times faster per ``P``), without the
    conditional means of ``alpha_1`` and of the loss.

    Parameters
    ----------
    P_values : 1-d array of ``P > 0`` (any order)
    spec : ModelSpec; cumulants : RowCumulants
    c_grid : 1-d increasing array in ``(0, 1)``, optional; default :func:`default_c_grid`
    correction, check_coverage : bool, see :func:`plugin_marginal`
    tol, max_nats : see :func:`marginal_branches`
    c_split : float in the range of ``c_grid``, optional
        If given, ``delta_F`` splits the basins at this fixed copy weight at every
        ``P`` (defined with one minimum too) instead of at each ``P``'s own barrier.

    Returns
    -------
    MarginalScan
    """
    spec = check_marginal_spec(spec)
    cum = check_cumulants(cumulants, spec)
    Ps = as_real_array("P_values", P_values)
    if Ps.ndim != 1 or Ps.size < 1:
        raise ValueError(f"P_values must be a non-empty 1-d array, got shape {Ps.shape}")
    if not (np.isfinite(Ps).all() and (Ps > 0).all()):
        raise ValueError("P_values must be finite and > 0")
    correction = check_bool("correction", correction)
    check_coverage = check_bool("check_coverage", check_coverage)
    tol = check_positive("tol", tol, allow_zero=True)
    max_nats = check_positive("max_nats", max_nats)
    c = check_c_grid(c_grid, spec.L)
    if c_split is not None:
        c_split = as_real_array("c_split", c_split)
        if c_split.size != 1:
            raise ValueError(f"c_split must be a single number, got shape {c_split.shape}")
        c_split = float(c_split.reshape(()))
        if not c[0] < c_split < c[-1]:
            raise ValueError(f"c_split must lie inside the range of c_grid [{c[0]}, {c[-1]}], got {c_split}")
    logd = _log_marginals(Ps.astype(np.float64), spec, cum, c, correction, check_coverage)
    n = Ps.size
    mean, var, depth, cs, dF, sh = (np.empty(n) for _ in range(6))
    nmin = np.empty(n, dtype=int)
    heights = np.zeros((n, 2))
    for k in range(n):
        Omega = logd[k].max() - logd[k]
        p = np.exp(-Omega)
        Z = np.trapezoid(p, c)
        mean[k] = np.trapezoid(p * c, c) / Z
        var[k] = np.trapezoid(p * (c - mean[k]) ** 2, c) / Z
        dOmega = np.diff(Omega) / np.diff(c)
        k0 = int(np.argmin(Omega))
        low = (Omega[1:] < max_nats) & (Omega[:-1] < max_nats)
        right, left = dOmega[k0:][low[k0:]], -dOmega[:k0][low[:k0]]
        sh[k] = min(right.min() if right.size else np.inf, left.min() if left.size else np.inf)
        idx = potential_minima(Omega, tol, max_nats)
        nmin[k] = idx.size
        if c_split is not None:  # +-inf if one side holds no mass in floating point
            m_pool = np.trapezoid(p * (c < c_split), c)
            with np.errstate(divide="ignore"):
                dF[k] = np.log(m_pool) - np.log(max(Z - m_pool, 0.0))
        if idx.size < 2:
            depth[k], cs[k] = 0.0, math.nan
            if c_split is None:
                dF[k] = math.nan
            continue
        i0, i1 = idx[0], idx[-1]
        j = i0 + int(np.argmax(Omega[i0:i1 + 1]))
        heights[k] = Omega[j] - Omega[i0], Omega[j] - Omega[i1]
        depth[k], cs[k] = heights[k].min(), c[j]
        if c_split is None:
            m_pool = np.trapezoid(p * (c < c[j]), c)
            dF[k] = math.log(m_pool) - math.log(Z - m_pool)
    return MarginalScan(P=Ps.copy(), mean=mean, var=var, n_minima=nmin, barrier_height=heights, depth=depth,
                        barrier=cs, delta_F=dF, shoulder=sh)


@dataclass(frozen=True)
class FiniteSizeRow:
    """The jump of the plug-in marginal of ``c`` at one ``(L, V)``: see :func:`finite_size_row`.

    Attributes
    ----------
    L, V : int
    P_peak : float
        The sample size with the largest posterior variance of ``c`` on the coarse scan
        (the crossover, defined with or without two minima).
    scanned : tuple ``(P_a, P_b)``
        The range searched for two minima at the resolution ``step``.
    step : float
        Resolution in ``P`` of the search that decided whether two minima exist
        (the coarse scan's largest spacing there if it found them, else the fine scan's
        spacing): a coexistence window narrower than ``step`` can be missed.
    two_minima : bool
        Whether ``Omega(c)`` has two local minima at some scanned ``P``.
    max_depth : float
        Largest depth of the shallower basin over the evaluated sizes (nats; 0 if never two minima).
    shoulder : float
        Smallest shoulder slope of ``Omega(c)`` over the deciding scan (see
        :class:`MarginalScan`; nats per unit of ``c``): negative with two minima;
        positive, the margin by which the marginal misses a second minimum there
        (it carries the grid-level noise of ``Omega``).
    P_lower, P_upper : float
        Spinodals (bisected to ``xtol``); ``nan`` without two minima.
    P3 : float
        Equal basin free energies; ``nan`` without two minima or if the basin masses do
        not balance inside the coexistence window.
    barrier_height : tuple ``(pooling, copy)``
        At ``P3``, nats (``nan`` without ``P3``).
    barrier : float
        ``c*`` at ``P3``.
    slope : float
        ``d(Omega_copy - Omega_pool)/dP`` at ``P3`` with the basins split at the fixed ``c*``
        (per unit of ``P``; ``< 0``).
    """

    L: int
    V: int
    P_peak: float
    scanned: tuple
    step: float
    two_minima: bool
    max_depth: float
    shoulder: float
    P_lower: float
    P_upper: float
    P3: float
    barrier_height: tuple
    barrier: float
    slope: float

    @property
    def window(self) -> float:
        """Coexistence window over ``P3``: ``(P_upper - P_lower) / P3`` (``nan`` without ``P3``)."""
        return (self.P_upper - self.P_lower) / self.P3

    @property
    def sharpness(self) -> float:
        """``-P3 d(Omega_copy - Omega_pool)/dP`` at ``P3``: the change of the log-odds of the two basins
        per unit relative change of ``P`` (dimensionless; it grows like the number of rows
        in a first-order limit)."""
        return -self.P3 * self.slope


def finite_size_row(spec: ModelSpec, cumulants: RowCumulants, *, P_range: tuple[float, float] | None = None,
                    n_coarse: int = 61, rel_step: float = 5e-4, xtol: float | None = None,
                    correction: bool = False) -> FiniteSizeRow:
    """Locate the jump of the plug-in marginal of ``c`` and measure it at one ``(L, V)``.

    1. A coarse geometric scan of ``n_coarse`` sizes over ``P_range`` (coverage not
       checked here) finds the variance peak ``P_peak`` and any ``P`` with two minima.
    2. If it finds none, a fine linear scan with step ``rel_step * P_peak`` covers
       the crossover, the region where the variance of ``c`` is above half its peak
       (padded by one coarse step on each side): a coexistence window wider than
       that step cannot be missed there (one outside it would need a second
       variance peak).
    3. Spinodals by bisection on ``n_minima >= 2`` to ``xtol``, ``P3`` by brentq on
       ``Omega_copy - Omega_pool`` between them, the barrier at ``P3``, and the slope of
       ``Omega_copy - Omega_pool`` there, the basins split at the fixed ``c*`` of ``P3``
       (so that the motion of ``c*`` with ``P`` does not enter), from a straight
       line through five sizes spread over the middle half of the coexistence
       window around ``P3``.

    Parameters
    ----------
    spec : ModelSpec; cumulants : RowCumulants
    P_range : pair ``0 < P_min < P_max``, optional
        Default ``(6 L, 40 L)`` (it holds the transition at ``V = 4``, ``16 <= L <= 96``,
        for the default priors).
    n_coarse : int >= 11
        Default 61 (3 % steps over the default range).
    rel_step : float in ``(0, 0.1]``
        Fine-scan spacing relative to ``P_peak``.
    xtol : float > 0, optional
        Precision of spinodals and ``P3`` in ``P``; default ``rel_step * P_peak / 8``.
    correction : bool
        Include the second-order saddlepoint term (a measure of the saddlepoint error).

    Returns
    -------
    FiniteSizeRow

    Raises
    ------
    ValueError
        If the variance peak or the coexistence region touches the end of ``P_range``,
        or the tilt grid does not cover the posterior where it is refined.
    """
    spec = check_marginal_spec(spec)
    cum = check_cumulants(cumulants, spec)
    L = spec.L
    if P_range is None:
        P_range = (6.0 * L, 40.0 * L)
    a, b = check_P_range(P_range)
    n_coarse = check_int("n_coarse", n_coarse, 11)
    rel_step = check_positive("rel_step", rel_step)
    if rel_step > 0.1:
        raise ValueError(f"rel_step must be <= 0.1, got {rel_step}")
    correction = check_bool("correction", correction)
    if xtol is not None:
        xtol = check_positive("xtol", xtol)

    def scan(P_values, check=True):
        return marginal_scan(np.atleast_1d(np.asarray(P_values, dtype=float)), spec, cum, correction=correction,
                             check_coverage=check)

    Pc = np.geomspace(a, b, n_coarse)
    coarse = scan(Pc, check=False)
    i_peak = int(np.argmax(coarse.var))
    if i_peak in (0, n_coarse - 1):
        raise ValueError(f"the variance of c peaks at the end of P_range = {P_range}; widen it")
    P_peak = float(Pc[i_peak])
    xtol = rel_step * P_peak / 8 if xtol is None else xtol
    two = coarse.n_minima >= 2
    if two.any():
        Ps, found = Pc, two
        step = float(np.diff(Pc[np.flatnonzero(two).min() - 1:np.flatnonzero(two).max() + 2]).max())
        scanned = (a, b)
        max_depth = float(coarse.depth.max())
        shoulder = float(coarse.shoulder.min())
    else:
        # a fine linear scan over the crossover: where the variance is above half its peak (padded by one coarse step)
        half = coarse.var >= 0.5 * coarse.var[i_peak]
        j0 = j1 = i_peak
        while j0 > 0 and half[j0 - 1]:
            j0 -= 1
        while j1 < n_coarse - 1 and half[j1 + 1]:
            j1 += 1
        j0, j1 = max(j0 - 1, 0), min(j1 + 1, n_coarse - 1)
        step = rel_step * P_peak
        Ps = np.arange(Pc[j0], Pc[j1] + step / 2, step)
        fine = scan(Ps)
        found = fine.n_minima >= 2
        scanned = (float(Pc[j0]), float(Pc[j1]))
        max_depth = float(fine.depth.max())
        shoulder = float(fine.shoulder.min())
    nan2 = (math.nan, math.nan)
    if not found.any():
        return FiniteSizeRow(L=L, V=spec.V, P_peak=P_peak, scanned=scanned, step=step, two_minima=False,
                             max_depth=max_depth, shoulder=shoulder, P_lower=math.nan, P_upper=math.nan, P3=math.nan,
                             barrier_height=nan2, barrier=math.nan, slope=math.nan)
    i0, i1 = np.flatnonzero(found)[[0, -1]]
    if i0 == 0 or i1 == Ps.size - 1:
        raise ValueError(f"the coexistence region touches the end of the scanned range {scanned}; widen P_range")

    def n_min(P):
        return int(scan([P]).n_minima[0])

    def bisect(p_one, p_two):
        while abs(p_two - p_one) > xtol:
            mid = 0.5 * (p_one + p_two)
            if n_min(mid) >= 2:
                p_two = mid
            else:
                p_one = mid
        return 0.5 * (p_one + p_two), p_two

    P_lo, lo_two = bisect(float(Ps[i0 - 1]), float(Ps[i0]))
    P_up, hi_two = bisect(float(Ps[i1 + 1]), float(Ps[i1]))

    def dF(P):
        return float(scan([P]).delta_F[0])

    f_lo, f_hi = dF(lo_two), dF(hi_two)
    if not (f_lo > 0 > f_hi):
        return FiniteSizeRow(L=L, V=spec.V, P_peak=P_peak, scanned=scanned, step=step, two_minima=True,
                             max_depth=max_depth, shoulder=shoulder, P_lower=P_lo, P_upper=P_up, P3=math.nan,
                             barrier_height=nan2, barrier=math.nan, slope=math.nan)
    P3 = brentq(dF, lo_two, hi_two, xtol=xtol / 4)
    at = scan([P3])
    h = min((hi_two - lo_two) / 4, P3 - lo_two, hi_two - P3)
    P_fit = P3 + np.linspace(-h, h, 5)
    fixed = marginal_scan(P_fit, spec, cum, correction=correction, c_split=float(at.barrier[0]))
    slope = np.polyfit(P_fit, fixed.delta_F, 1)[0]
    return FiniteSizeRow(L=L, V=spec.V, P_peak=P_peak, scanned=scanned, step=step, two_minima=True,
                         max_depth=max(max_depth, float(at.depth[0])), shoulder=shoulder, P_lower=P_lo, P_upper=P_up, P3=float(P3),
                         barrier_height=tuple(float(x) for x in at.barrier_height[0]), barrier=float(at.barrier[0]),
                         slope=float(slope))
