"""Analyses of the causal-mask chapter: the order in which rows switch, and the shape of sampled draws.

The order in which the rows switch comes from
:func:`copylib.analysis.transitions.half_way_point` (each row's copy weight
against ``P``). :func:`bimodality_coefficient` is the coefficient
``(g_1^2 + 1)/(g_2 + 3)`` of a sample (skewness ``g_1``, excess kurtosis ``g_2``):
``1/3`` for a Gaussian, ``5/9`` for a uniform distribution, ``1`` for two sharp
states.
"""

from __future__ import annotations

from scipy.stats import kurtosis, skew

from ..arguments import as_real_array, check_finite

__all__ = ["bimodality_coefficient"]


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
