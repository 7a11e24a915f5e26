"""Forecasting a transition from observations below it.

:func:`power_law_forecast` is the simplest forecaster one would use in practice:
fit the growth of an observable below the threshold by a power of the sample
size and extrapolate to the value that marks the switch. It works when the
observable grows smoothly into the transition (a crossover) and fails when
nothing announces it (a first-order jump). :func:`susceptibility_forecast` is
the other forecaster: a straight line through ``1/Var`` of the observable,
extrapolated to zero, which announces a diverging susceptibility.

The observables at the book's thresholds: :func:`linear_copy_observables` (copy
share of the plug-in posterior means of linear attention and the posterior
variance of the copy amplitude) and :func:`softmax_copy_observables` (mean and
variance of the softmax copy weight under its plug-in marginal);
:func:`copy_share_of_chains` is the copy share of sampled chains with its error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..arguments import as_real_array, check_finite, check_positive
from ..model.network import ModelSpec
from ..theory.linear import copy_share
from ..theory.linear_marginal import plugin_posterior_moments
from ..theory.softmax_marginal import copy_weight_marginal

__all__ = ["Forecast", "power_law_forecast", "susceptibility_forecast", "linear_copy_observables",
           "softmax_copy_observables", "copy_share_of_chains"]


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


def susceptibility_forecast(P, var) -> float:
    """Fit a straight line to ``1/var`` against ``P`` and return the ``P`` where it reaches zero.

    P : array ``(n,)``, ``n >= 2``, finite and strictly increasing; var : array
    ``(n,)``, finite and ``> 0`` (a posterior variance at each ``P``). A
    susceptibility that diverges as ``a/(P_* - P)`` has ``1/var`` linear in ``P``
    with zero at ``P_*``, so the forecast is exact for it. Returns ``inf`` when the
    fitted line does not fall (slope ``>= 0``): nothing is announced.
    """
    P = as_real_array("P", P)
    var = as_real_array("var", var)
    if P.ndim != 1 or P.size < 2 or P.shape != var.shape:
        raise ValueError(f"P and var must be 1-d of equal length >= 2, got shapes {P.shape}, {var.shape}")
    check_finite("P", P)
    check_finite("var", var)
    if np.any(np.diff(P) <= 0):
        raise ValueError("P must be strictly increasing")
    if np.any(var <= 0):
        raise ValueError("var must be > 0 (a variance)")
    slope, icpt = np.polyfit(P, 1 / var, 1)
    return float(-icpt / slope) if slope < 0 else math.inf


def linear_copy_observables(P: float, spec: ModelSpec, **moment_kwargs) -> tuple[float, float]:
    """``(copy share of the posterior means, Var q)`` of the plug-in posterior of linear attention at ``P``.

    The moments are those of :func:`copylib.theory.linear_marginal.plugin_posterior_moments`
    (keyword arguments passed on); the share is
    ``(L-1) E[q sign m] / (E|m| + (L-1) E[q sign m])``, the variance that of the copy
    amplitude ``q`` with its sign fixed by ``m > 0``.
    """
    mom = plugin_posterior_moments(P, spec, **moment_kwargs)
    return float(copy_share(mom.abs_m, mom.q, spec.L)), float(mom.var_q)


def softmax_copy_observables(P: float, spec: ModelSpec, cumulants) -> tuple[float, float]:
    """``(mean, variance)`` of the copy weight ``c`` under the plug-in marginal of softmax attention at ``P``.

    cumulants : the row cumulants of :func:`copylib.theory.softmax_marginal.row_cumulants`
    for ``spec``; the marginal is :func:`copylib.theory.softmax_marginal.copy_weight_marginal`.
    """
    marginal = copy_weight_marginal(float(P), spec, cumulants)
    return float(marginal.mean()), float(marginal.var())


def copy_share_of_chains(Q, M) -> tuple[float, float]:
    """Copy share ``Q/(M + Q)`` of the means over chains, with its standard error.

    Q, M : arrays ``(n_chains,)``, ``n_chains >= 2``, finite, one value per chain:
    ``(L-1)`` times the chain mean of ``q sign m``, and the chain mean of ``|m|``
    (``M + Q`` must not vanish). The error is the delta method on the covariance
    of ``(Q, M)`` over the chains divided by ``n_chains`` (independent chains).
    """
    Q = as_real_array("Q", Q)
    M = as_real_array("M", M)
    if Q.ndim != 1 or Q.size < 2 or Q.shape != M.shape:
        raise ValueError(f"Q and M must be 1-d of equal length >= 2, got shapes {Q.shape}, {M.shape}")
    check_finite("Q", Q)
    check_finite("M", M)
    Q_, M_ = Q.mean(), M.mean()
    if M_ + Q_ == 0:
        raise ValueError("M + Q must not vanish (the share is undefined)")
    grad = np.array([M_, -Q_]) / (M_ + Q_) ** 2
    cov = np.cov(np.stack([Q, M])) / Q.size
    return float(Q_ / (M_ + Q_)), float(np.sqrt(grad @ cov @ grad))
