"""Forecasting a transition from observations below it.

:func:`power_law_forecast` is the simplest forecaster one would use in practice:
fit the growth of an observable below the threshold by a power of the sample
size and extrapolate to the value that marks the switch. It works when the
observable grows smoothly into the transition (a crossover) and fails when
nothing announces it (a first-order jump).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..arguments import as_real_array, check_finite, check_positive

__all__ = ["Forecast", "power_law_forecast"]


@dataclass(frozen=True)
class Forecast:
    """:func:`power_law_forecast` result.

    P_forecast : sample size at which the fitted law reaches ``target``
    (``inf`` when the fitted exponent is ``<= 0``: the observable does not grow,
    or when the forecast exceeds the float range);
    exponent : fitted power ``k`` of ``y ∝ P^k``; prefactor : ``y`` at ``P = 1``.
    """

    P_forecast: float
    exponent: float
    prefactor: float


def power_law_forecast(P, y, target: float) -> Forecast:
    """Fit ``y = a P^k`` to observations below a threshold and solve ``a P^k = target``.

    Parameters
    ----------
    P : array ``(n,)``, ``n >= 2``, positive and strictly increasing
        Sample sizes of the observations.
    y : array ``(n,)``, positive
        The observable, measured as a distance from its value far below the
        transition (so that it grows from zero), e.g. a copy share or the excess
        of a copy weight over its prior mean.
    target : float > 0
        The value of ``y`` that marks the switch.

    Returns
    -------
    Forecast
        Least squares in ``ln y`` against ``ln P``.
    """
    P = as_real_array("P", P)
    y = as_real_array("y", y)
    if P.ndim != 1 or P.size < 2 or P.shape != y.shape:
        raise ValueError(f"P and y must be 1-d of equal length >= 2, got shapes {P.shape}, {y.shape}")
    check_finite("P", P)
    check_finite("y", y)
    if np.any(P <= 0) or np.any(np.diff(P) <= 0):
        raise ValueError("P must be positive and strictly increasing")
    if np.any(y <= 0):
        raise ValueError("y must be > 0 (a distance from the value below the transition)")
    target = check_positive("target", target)
    k, a = np.polyfit(np.log(P), np.log(y), 1)
    if k > 0:
        ln_P = (math.log(target) - a) / k
        # a nearly flat fit puts the forecast beyond the float range: inf (never) or 0 (already passed)
        P_forecast = math.inf if ln_P > 709.0 else math.exp(ln_P)
    else:
        P_forecast = math.inf
    return Forecast(P_forecast=float(P_forecast), exponent=float(k), prefactor=float(math.exp(a)))
