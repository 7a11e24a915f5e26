"""Branches of the plug-in marginal of the copy weight: the local minima of ``Omega(c) = -ln p(c)``,
the barrier and the basin free energies at one ``P``, and the spinodals and first-order point along
``P``. Re-exported by :mod:`copylib.theory.softmax_marginal`. ``potential_minima`` (the minima of a
potential on a grid, with a depth tolerance) is shared with the scans of
:mod:`copylib.theory.softmax_marginal_scan`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import brentq

from ..arguments import as_real_array, check_bool, check_instance, check_int, check_P_range, check_positive
from ..model.network import ModelSpec
from .reduced_action import downward_crossings, upward_crossings
from .softmax_cumulants import RowCumulants, check_cumulants, check_marginal_spec
from .softmax_marginal_density import CopyWeightMarginal, plugin_marginal

__all__ = [
    "MarginalBranches",
    "marginal_branches",
    "log_odds_branches",
    "half_mass_P",
    "MarginalTransition",
    "marginal_transition",
]


@dataclass(frozen=True)
class MarginalBranches:
    """Local minima of the effective potential ``Omega(c) = -ln p(c)`` and their basins.

    Attributes
    ----------
    P : float or None
    minima : array ``(n_min,)``
        Copy weights of the local minima of ``Omega`` (ascending).
    barrier : float
        ``c*``, the maximum of ``Omega`` between the first (pooling) and the last
        (copy) minimum; ``nan`` with one minimum.
    barrier_height : tuple ``(from pooling, from copy)``
        ``Omega(c*) - Omega(minimum)`` in nats; ``nan`` with one minimum.
    free_energy : tuple ``(pooling, copy)``
        ``Omega_pool``, ``Omega_copy`` ``= -ln`` (posterior mass of ``c < c*`` resp. ``c >= c*``), nats.
    copy_weight, alpha_1, loss : tuples ``(pooling, copy)``
        Basin-conditional posterior means.
    """

    P: float | None
    minima: np.ndarray
    barrier: float
    barrier_height: tuple
    free_energy: tuple
    copy_weight: tuple
    alpha_1: tuple
    loss: tuple

    @property
    def n_minima(self) -> int:
        """Number of local minima of ``Omega``."""
        return int(self.minima.size)


def potential_minima(Omega: np.ndarray, tol: float, max_nats: float) -> np.ndarray:
    """Indices of interior local minima of ``Omega`` (shifted to minimum 0) that lie below ``max_nats``
    and whose depth (to the neighbouring maxima) exceeds ``tol``."""
    # the steps of Omega, 0 between equal values (also two infinite ones): each has the sign of the
    # comparison of its neighbours (IEEE subtraction of unequal numbers never gives 0)
    with np.errstate(invalid="ignore"):
        dOmega = np.where(Omega[1:] == Omega[:-1], 0.0, Omega[1:] - Omega[:-1])
    idx = upward_crossings(dOmega) + 1
    idx = idx[Omega[idx] < max_nats]
    maxima = downward_crossings(dOmega) + 1
    keep = []
    for i in idx:
        left = maxima[maxima < i]
        right = maxima[maxima > i]
        hl = Omega[left].max() - Omega[i] if left.size else np.inf
        hr = Omega[right].max() - Omega[i] if right.size else np.inf
        if min(hl, hr) > tol:
            keep.append(i)
    return np.array(keep, dtype=int)


def marginal_branches(marginal: CopyWeightMarginal, *, tol: float = 1e-6,
                      max_nats: float = 30.0) -> MarginalBranches:
    """Branches of the posterior marginal of ``c``: minima, barrier, basin free energies and means.

    Parameters
    ----------
    marginal : CopyWeightMarginal
    tol : float >= 0
        A local minimum of ``Omega`` counts only if it is more than ``tol`` nats below
        the nearest maxima on both sides (guards against rounding wiggles).
    max_nats : float > 0
        Only minima less than ``max_nats`` above the global minimum of ``Omega`` count
        (the far tails carry no mass and the quasi-Monte Carlo error of
        :func:`row_cumulants` grows there).

    Returns
    -------
    MarginalBranches
        With fewer than two minima every basin entry is ``nan`` (the global means
        are :meth:`CopyWeightMarginal.mean`).
    """
    check_instance("marginal", marginal, CopyWeightMarginal)
    tol = check_positive("tol", tol, allow_zero=True)
    max_nats = check_positive("max_nats", max_nats)
    Omega, c = marginal.potential, marginal.c
    idx = potential_minima(Omega, tol, max_nats)
    mins = c[idx]
    nan2 = (math.nan, math.nan)
    if idx.size < 2:
        return MarginalBranches(P=marginal.P, minima=mins, barrier=math.nan, barrier_height=nan2,
                                free_energy=nan2, copy_weight=nan2, alpha_1=nan2, loss=nan2)
    i0, i1 = idx[0], idx[-1]
    k = i0 + int(np.argmax(Omega[i0:i1 + 1]))
    cs = float(c[k])
    heights = (float(Omega[k] - Omega[i0]), float(Omega[k] - Omega[i1]))
    basins = ((-np.inf, cs), (cs, np.inf))
    F = tuple(-math.log(marginal.mass(lo, hi)) for lo, hi in basins)
    mean = {w: tuple(marginal.mean(w, lo, hi) for lo, hi in basins) for w in ("c", "alpha_1")}
    loss = tuple(marginal.mean("loss", lo, hi) for lo, hi in basins) if marginal.P is not None else nan2
    return MarginalBranches(P=marginal.P, minima=mins, barrier=cs, barrier_height=heights, free_energy=F,
                            copy_weight=mean["c"], alpha_1=mean["alpha_1"], loss=loss)


@dataclass(frozen=True)
class MarginalTransition:
    """Spinodals and first-order point of the plug-in marginal of ``c``.

    Attributes
    ----------
    P3 : float
        Equal basin free energies (equal posterior mass on either side of the barrier).
    P_lower, P_upper : float
        The copy minimum of ``Omega(c)`` exists for ``P > P_lower``; the pooling
        minimum for ``P < P_upper``.
    at_P3 : MarginalBranches
        The branches at ``P3``.
    """

    P3: float
    P_lower: float
    P_upper: float
    at_P3: MarginalBranches


def log_odds_branches(marginal: CopyWeightMarginal, **kwargs: Any) -> MarginalBranches:
    """:func:`marginal_branches` of the same posterior in the log-odds ``y = ln c/(1-c)``.

    The density of ``y`` is ``p(c) c (1-c)``: the minima and the barrier of its
    potential ``Omega(y) = -ln p(y)`` depend on the coordinate, the mass on either
    side of a dividing point does not. The branches are reported as copy
    weights. ``kwargs`` go to :func:`marginal_branches`.
    """
    if not isinstance(marginal, CopyWeightMarginal):
        raise ValueError(f"marginal must be a CopyWeightMarginal, got {type(marginal).__name__}")
    m = marginal
    in_y = CopyWeightMarginal(P=m.P, c=m.c, log_density=m.log_density + np.log(m.c * (1 - m.c)),
                              alpha_1=m.alpha_1, loss=m.loss, edge=m.edge)  # the potential depends only on the shape
    return marginal_branches(in_y, **kwargs)


def half_mass_P(threshold: float, spec: ModelSpec, cumulants: RowCumulants, *,
                P_range: tuple[float, float] = (500.0, 700.0), xtol: float = 0.01, **kwargs: Any) -> float:
    """The ``P`` in ``P_range`` where the plug-in marginal puts half its mass at ``c >= threshold``.

    With ``threshold`` the barrier ``c*`` at ``P3`` this is the free-energy ``P3``
    itself; other dividing points give the counterpart of a sampler's copy-basin mass.
    Brent's method to ``xtol`` in ``P``; ``P_range`` must bracket the crossing.
    ``kwargs`` (``c_grid``, ``check_coverage``) go to :func:`plugin_marginal`.
    """
    spec = check_marginal_spec(spec)
    threshold = as_real_array("threshold", threshold)
    if threshold.ndim or not 0 < threshold < 1:
        raise ValueError(f"threshold must be a single copy weight in (0, 1), got {threshold}")
    lo, hi = check_P_range(P_range)
    xtol = check_positive("xtol", xtol)

    def excess(P):
        return plugin_marginal(P, spec, cumulants, **kwargs).mass(threshold) - 0.5

    if excess(lo) * excess(hi) > 0:
        raise ValueError(f"P_range {(lo, hi)} does not bracket the P where the mass at c >= {float(threshold)} "
                         "is one half")
    return float(brentq(excess, lo, hi, xtol=xtol))


def marginal_transition(spec: ModelSpec, cumulants: RowCumulants, *, P_range: tuple[float, float] = (300.0, 1200.0),
                     n_scan: int = 141, xtol: float = 0.05, correction: bool = False) -> MarginalTransition:
    """Spinodals (where a local minimum of ``-ln p(c)`` disappears) and ``P3`` (equal basin masses).

    A geometric scan of ``n_scan`` sample sizes in ``P_range`` finds the interval
    with two minima (at the defaults consecutive sizes differ by 1 %: a
    coexistence window narrower than that can be missed); the spinodals are refined by bisection to ``xtol`` (in ``P``)
    and ``P3`` by brentq on ``Omega_copy - Omega_pool``, which decreases with ``P``.

    Parameters
    ----------
    spec : ModelSpec; cumulants : RowCumulants
    P_range : pair ``0 < P_min < P_max``
    n_scan : int >= 5
    xtol : float > 0
    correction : bool, see :func:`plugin_marginal`

    Returns
    -------
    MarginalTransition

    Raises
    ------
    ValueError
        If no interval with two minima lies strictly inside ``P_range``, or if the
        basin free energies do not cross inside it (then there is no first-order
        point in this sense).
    """
    spec = check_marginal_spec(spec)
    cum = check_cumulants(cumulants, spec)
    a, b = check_P_range(P_range)
    n_scan = check_int("n_scan", n_scan, 5)
    xtol = check_positive("xtol", xtol)
    correction = check_bool("correction", correction)

    def br(P):
        return marginal_branches(plugin_marginal(P, spec, cum, correction=correction))

    Ps = np.geomspace(a, b, n_scan)
    two = np.array([br(P).n_minima >= 2 for P in Ps])
    if not two.any():
        raise ValueError(f"no P in {P_range} with two minima of the marginal of c (no first-order transition)")
    i0, i1 = np.flatnonzero(two)[[0, -1]]
    if i0 == 0 or i1 == n_scan - 1:
        raise ValueError(f"the coexistence region touches the end of P_range = {P_range}; widen it")

    def bisect(p_one, p_two):
        """Bisection on ``n_minima >= 2``; returns (spinodal estimate, nearest P with two minima)."""
        while abs(p_two - p_one) > xtol:
            mid = 0.5 * (p_one + p_two)
            if br(mid).n_minima >= 2:
                p_two = mid
            else:
                p_one = mid
        return 0.5 * (p_one + p_two), p_two

    P_lo, lo = bisect(Ps[i0 - 1], Ps[i0])
    P_up, hi = bisect(Ps[i1 + 1], Ps[i1])

    def diff(P):
        f = br(P).free_energy
        return f[1] - f[0]

    if not diff(lo) > 0 > diff(hi):
        raise ValueError("the basin free energies do not cross inside the coexistence region")
    P3 = brentq(diff, lo, hi, xtol=xtol)
    return MarginalTransition(P3=float(P3), P_lower=float(P_lo), P_upper=float(P_up), at_P3=br(P3))
