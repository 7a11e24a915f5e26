"""Analyses of the causal-mask chapter: the order in which rows switch, and the shape of sampled draws.

:func:`half_way_points` finds, for each row of the attention, the sample size at
which its copy weight has made half of its change across a grid of ``P``
(interpolated in ``ln P``): under the causal mask the rows switch one after the
other, and this orders them. :func:`bimodality_coefficient` is the coefficient
``(g_1^2 + 1)/(g_2 + 3)`` of a sample (skewness ``g_1``, excess kurtosis ``g_2``):
``1/3`` for a Gaussian, ``5/9`` for a uniform distribution, ``1`` for two sharp
states.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import kurtosis, skew

from ..arguments import as_real_array, check_finite

__all__ = ["half_way_points", "bimodality_coefficient"]


def half_way_points(P, profile) -> np.ndarray:
    """Sample size where each column of ``profile`` has made half of its change from the first to the last ``P``.

    P : ``(n,)``, ``n >= 2``, finite, ``> 0`` and strictly increasing;
    profile : ``(n, k)`` finite, column ``r`` the observable of row ``r`` along ``P``,
    with a nonzero change ``profile[-1, r] - profile[0, r]``.
    The progress ``u = (profile - profile[0]) / (profile[-1] - profile[0])`` of
    each column runs from 0 to 1; the result ``(k,)`` is ``exp`` of the linear
    interpolation of ``ln P`` at ``u = 1/2`` (``numpy.interp``: the progress is
    assumed to increase along ``P``, as a switching row's does).
    """
    P = as_real_array("P", P)
    profile = as_real_array("profile", profile)
    if P.ndim != 1 or P.size < 2:
        raise ValueError(f"P must be 1-d with at least 2 points, got shape {P.shape}")
    check_finite("P", P)
    if not (P > 0).all() or not (np.diff(P) > 0).all():
        raise ValueError("P must be > 0 and strictly increasing")
    if profile.ndim != 2 or profile.shape[0] != P.size:
        raise ValueError(f"profile must have shape ({P.size}, k), got {profile.shape}")
    check_finite("profile", profile)
    change = profile[-1] - profile[0]
    if not (change != 0).all():
        raise ValueError("profile must change between the first and the last P in every column")
    u = (profile - profile[0]) / change
    ln_P = np.log(P)
    return np.array([np.exp(np.interp(0.5, u[:, r], ln_P)) for r in range(profile.shape[1])])


def bimodality_coefficient(x, axis: int = -1):
    """``(g_1^2 + 1) / (g_2 + 3)`` of the sample(s) ``x`` along ``axis``.

    x : array with at least 4 finite values along ``axis``. ``g_1`` and ``g_2``
    are the (biased) sample skewness and excess kurtosis of ``scipy.stats``.
    Values above ``5/9`` (a uniform distribution) are read as bimodal.
    Returns a float for 1-d ``x``, else an array without ``axis``.
    """
    x = as_real_array("x", x)
    if x.ndim == 0:
        raise ValueError("x must have at least one axis")
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be in [{-x.ndim}, {x.ndim - 1}] for x of shape {x.shape}, got {axis}")
    check_finite("x", x)
    if x.shape[axis] < 4:
        raise ValueError(f"x must have at least 4 values along axis, got {x.shape[axis]}")
    bc = (skew(x, axis=axis) ** 2 + 1) / (kurtosis(x, axis=axis) + 3)
    return float(bc) if x.ndim == 1 else bc
