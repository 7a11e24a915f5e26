"""Locating and classifying changes of an observable across sample sizes.

A first-order transition shows as a jump: refining the grid of sample sizes
around it leaves the whole change inside one sub-interval. A smooth crossover
spreads the change, so refining the grid by a factor ``k`` divides the largest
step by about ``k``. :func:`step_concentration` measures exactly this.
:func:`refine_largest_drop` applies it level after level, zooming into the
largest sub-interval each time, and :func:`summarise_refinement` reads off the result. :func:`steepest_rise` locates a crossover on a
grid: where the observable grows fastest per unit of ``ln P``; :func:`half_way_point`
between grid points: where it first has made half of its change.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..arguments import as_real_array, check_finite, check_grid, check_int

__all__ = ["geometric_grid", "half_way_point", "largest_drop", "refine_largest_drop", "RefinementSummary",
           "steepest_rise", "step_concentration", "summarise_refinement"]


def geometric_grid(P_min: int, P_max: int, n: int) -> np.ndarray:
    """``n`` sample sizes spaced evenly in ``ln P`` from ``P_min`` to ``P_max``, rounded to integers.

    Rounding can merge neighbours at small ``P``; duplicates are removed, so the
    result may have fewer than ``n`` points.
    """
    P_min, P_max, n = check_int("P_min", P_min, 1), check_int("P_max", P_max, 1), check_int("n", n, 2)
    if P_max <= P_min:
        raise ValueError(f"P_max must be > P_min = {P_min}, got {P_max}")
    return np.unique(np.geomspace(P_min, P_max, n).round().astype(int))


def _check_series(name: str, values) -> np.ndarray:
    return check_grid(name, values, n_min=2)


def largest_drop(values: npt.ArrayLike) -> tuple[int, float]:
    """Index ``i`` and size of the largest decrease ``values[i] - values[i+1]``.

    values : ``(n,)``, ``n >= 2``, finite.
    """
    values = _check_series("values", values)
    drops = values[:-1] - values[1:]
    i = int(np.argmax(drops))
    return i, float(drops[i])


def step_concentration(fine_values: npt.ArrayLike) -> float:
    """Fraction of the total change over a refined interval that happens in its largest step.

    fine_values : ``(k+1,)`` observable on ``k`` sub-intervals of one interval,
    ordered by ``P``, with a net decrease. Returns a number in ``(0, 1]``: close to
    1 for a jump, about ``1/k`` for a change that is smooth on the interval's scale.
    """
    fine_values = _check_series("fine_values", fine_values)
    _, drop = largest_drop(fine_values)
    total = fine_values[0] - fine_values[-1]
    if not total > 0:
        raise ValueError("fine_values must decrease overall (first entry > last entry)")
    return drop / total


def refine_largest_drop(values_on: Callable[[np.ndarray], npt.ArrayLike], P: npt.ArrayLike, values: npt.ArrayLike, levels: int = 2,
                        k: int = 5) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """Refine the interval of the largest drop of ``values`` over ``P`` ``levels`` times.

    values_on : callable taking a 1-d integer array of sample sizes (increasing)
    and returning the observable there (one value per entry), e.g. the test loss of
    a training sweep on those sizes. P : ``(n,)`` the coarse grid, ``values`` :
    ``(n,)`` the observable on it. Level 1 splits the coarse interval of the largest
    drop into ``k`` sub-intervals evenly in ``ln P`` (:func:`geometric_grid`, so
    rounding may leave fewer points) and evaluates ``values_on`` there; each further
    level splits the sub-interval of the largest drop of the previous level.
    Returns one ``(grid, values, psi)`` per level, ``psi`` the
    :func:`step_concentration` of that level: above ``1/2`` at every level for a
    jump, about ``1/k`` for a change that is smooth on the level's scale.
    """
    if not callable(values_on):
        raise TypeError(f"values_on must be callable, got {type(values_on).__name__}")
    P, values = _check_series("P", P), _check_series("values", values)
    if values.size != P.size:
        raise ValueError(f"values must have the shape of P ({P.size},), got {values.shape}")
    if not (P >= 1).all() or not (np.diff(P) > 0).all() or not (P == np.round(P)).all():
        raise ValueError("P must hold integers >= 1, strictly increasing")
    levels, k = check_int("levels", levels, 1), check_int("k", k, 2)
    i, _ = largest_drop(values)
    lo, hi = int(P[i]), int(P[i + 1])
    ladder = []
    for _ in range(levels):
        if hi - lo < 2:
            raise ValueError(f"the interval of the largest drop, P in ({lo}, {hi}), has no integer inside to refine")
        grid = geometric_grid(lo, hi, k + 1)
        fine = _check_series("values_on(grid)", np.asarray(values_on(grid), dtype=float))
        if fine.size != grid.size:
            raise ValueError(f"values_on must return {grid.size} values (one per grid point), got {fine.size}")
        ladder.append((grid, fine, step_concentration(fine)))
        j, _ = largest_drop(fine)
        lo, hi = int(grid[j]), int(grid[j + 1])
    return ladder


@dataclass(frozen=True)
class RefinementSummary:
    """What a refinement ladder (:func:`refine_largest_drop`) says about a drop.

    psi : step concentration of each level, in order. interval : ``(lo, hi)``, the
    sample sizes bracketing the largest drop of the last level (the finest location
    of the drop). abrupt : whether ``psi > 1/2`` at every level (a jump at the
    ladder's resolution).
    """

    psi: tuple[float, ...]
    interval: tuple[int, int]
    abrupt: bool


def summarise_refinement(ladder: Sequence[tuple[npt.ArrayLike, npt.ArrayLike, float]]) -> RefinementSummary:
    """Summarise the ladder returned by :func:`refine_largest_drop`.

    ladder : non-empty sequence of ``(grid, values, psi)``, ``grid`` an increasing
    integer array of at least 2 sample sizes, ``values`` the observable there (same
    size, finite), ``psi`` in ``(0, 1]``. Returns the level's ``psi`` values, the
    interval of the last level's largest drop and whether every ``psi`` exceeds
    ``1/2``.
    """
    if isinstance(ladder, (str, bytes)) or not hasattr(ladder, "__len__") or len(ladder) == 0:
        raise TypeError("ladder must be a non-empty sequence of (grid, values, psi), as refine_largest_drop returns")
    psi = []
    for level in ladder:
        if not isinstance(level, tuple) or len(level) != 3:
            raise TypeError("ladder must hold (grid, values, psi) tuples, as refine_largest_drop returns")
        rho = float(as_real_array("psi", level[2]))
        if not 0 < rho <= 1:
            raise ValueError(f"psi must lie in (0, 1], got {rho}")
        psi.append(rho)
    grid, values = _check_series("grid", ladder[-1][0]), _check_series("values", ladder[-1][1])
    if values.size != grid.size:
        raise ValueError(f"values must have the shape of grid ({grid.size},), got {values.shape}")
    j, _ = largest_drop(values)
    return RefinementSummary(tuple(psi), (int(grid[j]), int(grid[j + 1])), all(r > 0.5 for r in psi))


def _curves_on_grid(P, y) -> tuple[np.ndarray, np.ndarray]:
    """Checked ``(P, y)``: ``P`` 1-d, finite, ``> 0`` and strictly increasing; ``y`` finite, ``(n,)`` or ``(n, k)``."""
    P = _check_series("P", P)
    if not (P > 0).all() or not (np.diff(P) > 0).all():
        raise ValueError("P must be > 0 and strictly increasing")
    y = as_real_array("y", y)
    if y.ndim not in (1, 2) or y.shape[0] != P.size:
        raise ValueError(f"y must have shape ({P.size},) or ({P.size}, k) (one row per P), got {y.shape}")
    check_finite("y", y)
    return P, y


def steepest_rise(P: npt.ArrayLike, y: npt.ArrayLike) -> float | np.ndarray:
    """The grid point ``P`` where ``y`` increases fastest per unit of ``ln P``.

    P : ``(n,)`` sample sizes, ``n >= 2``, finite, ``> 0`` and strictly increasing;
    y : ``(n,)`` or ``(n, k)`` (``k`` observables on the same grid), finite.
    The slope is ``numpy.gradient`` of ``y`` with respect to ``ln P`` (central
    differences inside the grid, one-sided at its ends); the result is the grid
    point of the largest slope, a float for 1-d ``y`` and an array ``(k,)``
    otherwise. It is the crossover of a smooth rise, resolved to the grid.
    """
    P, y = _curves_on_grid(P, y)
    at = P[np.argmax(np.gradient(y, np.log(P), axis=0), axis=0)]
    return float(at) if y.ndim == 1 else at


def half_way_point(P: npt.ArrayLike, y: npt.ArrayLike) -> float | np.ndarray:
    """Where ``y`` first has made half of its change from the first to the last ``P``, interpolated in ``ln P``.

    P : ``(n,)`` sample sizes, ``n >= 2``, finite, ``> 0`` and strictly increasing;
    y : ``(n,)`` or ``(n, k)`` (one column per curve: a seed, a row of the attention), finite,
    each column with ``y[-1] != y[0]``. The progress ``u = (y - y[0]) / (y[-1] - y[0])`` of a
    column runs from 0 to 1 (a falling curve too); the result is ``exp`` of the linear
    interpolation of ``ln P`` between the last grid point below ``u = 1/2`` and the first one
    at or above it, a float for 1-d ``y`` and an array ``(k,)`` otherwise. A curve that
    overshoots and comes back gets its first crossing.
    """
    P, y = _curves_on_grid(P, y)
    Y = y.reshape(P.size, -1)
    change = Y[-1] - Y[0]
    if (change == 0).any():
        raise ValueError("y must change between the first and the last P in every column (no change to locate)")
    u = (Y - Y[0]) / change
    i = np.argmax(u >= 0.5, axis=0)  # first index at or above half way (u[0] = 0 < 1/2 <= u[-1] = 1)
    cols = np.arange(Y.shape[1])
    u0, u1 = u[i - 1, cols], u[i, cols]
    ln_P = np.log(P)
    out = np.exp(ln_P[i - 1] + (0.5 - u0) / (u1 - u0) * (ln_P[i] - ln_P[i - 1]))
    return float(out[0]) if y.ndim == 1 else out
