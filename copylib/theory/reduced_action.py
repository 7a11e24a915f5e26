"""Minima and inflection points of a one-dimensional reduced action sampled on a grid.

The softmax theories reduce the posterior to an action ``S(Delta)`` of one order
parameter (:mod:`copylib.theory.softmax`, :mod:`copylib.theory.causal`), and the
plug-in marginal gives a potential ``Omega(c)`` on a grid (:mod:`copylib.theory.softmax_marginal`).
Their minima, and the coexistence of two minima, are found the same way in all of them:

* a local minimum lies where the slope changes sign from ``-`` to ``+``
  (:func:`upward_crossings`; a local maximum: :func:`downward_crossings`);
* :func:`grid_minimum_points` sorts those sign changes into grid points that are
  minima themselves and brackets that hold a root of the slope (each caller refines
  the brackets with its own root finder);
* :func:`inflection_pair` finds the first local maximum of the slope ("hump") and the
  first local minimum after it ("dip"): two minima coexist exactly when the slope is
  positive at the hump and negative at the dip.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt
from scipy.optimize import brentq

from ..arguments import as_real_array

__all__ = ["upward_crossings", "downward_crossings", "grid_minimum_points", "inflection_pair"]


def _slope(name: str, values) -> np.ndarray:
    a = as_real_array(name, values)
    if a.ndim != 1 or a.size < 2:
        raise ValueError(f"{name} must be a 1-d array of at least 2 values, got shape {a.shape}")
    return a


def upward_crossings(slope: npt.ArrayLike) -> np.ndarray:
    """Indices ``i`` with ``slope[i] < 0 <= slope[i + 1]``: a sign change ``- -> +`` (a local minimum).

    slope : 1-d array of at least 2 values (NaN compares false: no crossing). Returns an int array.
    """
    s = _slope("slope", slope)
    return np.flatnonzero((s[:-1] < 0) & (s[1:] >= 0))


def downward_crossings(slope: npt.ArrayLike) -> np.ndarray:
    """Indices ``i`` with ``slope[i] > 0 >= slope[i + 1]``: a sign change ``+ -> -`` (a local maximum).

    slope : 1-d array of at least 2 values (NaN compares false: no crossing). Returns an int array.
    """
    s = _slope("slope", slope)
    return np.flatnonzero((s[:-1] > 0) & (s[1:] <= 0))


def grid_minimum_points(slope: npt.ArrayLike, *, right_end: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Where a function has local minima on a grid interval, from its slope at the grid points.

    Parameters
    ----------
    slope : 1-d array of at least 2 values
        ``F'`` at increasing grid points ``x_0 < ... < x_{n-1}``.
    right_end : bool
        Whether the right end counts as a minimum when ``F`` still decreases there
        (``slope[-1] < 0``; the caller's grid is then too short).

    Returns
    -------
    points, brackets : int arrays
        ``points``: grid indices that are minima themselves, increasing: ``0`` if
        ``slope[0] >= 0`` (``F`` increases from the left end), ``i + 1`` where the slope
        turns from negative to exactly zero, and ``n - 1`` under ``right_end``.
        ``brackets``: indices ``i`` with ``slope[i] < 0 < slope[i + 1]``: a root of the
        slope strictly inside ``(x_i, x_{i+1})``, for the caller to refine.
    """
    s = _slope("slope", slope)
    if not isinstance(right_end, (bool, np.bool_)):
        raise TypeError(f"right_end must be a bool, got {type(right_end).__name__}")
    up = upward_crossings(s)
    exact = s[up + 1] == 0
    points = list(up[exact] + 1)
    if s[0] >= 0:
        points.insert(0, 0)
    if right_end and s[-1] < 0:
        points.append(s.size - 1)
    return np.asarray(points, dtype=np.intp), up[~exact]


def inflection_pair(x: npt.ArrayLike, curvature: npt.ArrayLike,
                    curvature_at: Callable[[float], float]) -> tuple[float, float] | None:
    """The first local maximum of the slope ("hump") and the first local minimum after it ("dip").

    The slope ``F'`` has a local maximum where the curvature ``F''`` turns from positive to
    non-positive and a local minimum where it turns from negative to non-negative. Both
    are refined by brentq on ``curvature_at`` to ``1e-14`` absolute.

    Parameters
    ----------
    x : 1-d increasing array of at least 2 grid points
    curvature : 1-d array, ``F''`` at ``x``
    curvature_at : callable, ``F''`` at one point (a float), with the sign of ``curvature``

    Returns
    -------
    (hump, dip) : floats, or None if ``F''`` has no such pair of sign changes on the grid.
    Two minima of ``F`` coexist exactly when ``F'(hump) > 0 > F'(dip)``.
    """
    x = _slope("x", x)
    c = _slope("curvature", curvature)
    if c.shape != x.shape:
        raise ValueError(f"curvature must have the shape of x {x.shape}, got {c.shape}")
    if not callable(curvature_at):
        raise TypeError(f"curvature_at must be callable, got {type(curvature_at).__name__}")
    down = downward_crossings(c)
    up = upward_crossings(c)
    if down.size == 0 or up.size == 0:
        return None
    i = down[0]
    later = up[up > i]
    if later.size == 0:
        return None
    j = later[0]
    hump = brentq(curvature_at, x[i], x[i + 1], xtol=1e-14)
    dip = brentq(curvature_at, x[j], x[j + 1], xtol=1e-14)
    return hump, dip
