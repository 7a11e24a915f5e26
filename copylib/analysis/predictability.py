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
``_copy_share_of_chains`` is the copy share of sampled chains with its error.

What the forecasting chapter computes from them: :func:`window_forecasts` (both
forecasters on windows of observations below a threshold),
:func:`finite_size_forecast` (the jump of the softmax plug-in marginal at another
length and the susceptibility forecast of it), :func:`sampled_copy_observable`
(sampled observables against the theory curve, as z-scores) and :func:`sampled_variance`
(the sampled posterior variance against the theory curve's, and the susceptibility
forecast run on it, with jackknife errors over chains).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ..arguments import (
    as_paired_arrays,
    as_real_array,
    check_finite,
    check_generator,
    check_grid,
    check_int,
    check_positive,
)
from ..model.network import ModelSpec
from ..theory.linear import copy_share
from ..theory.linear_marginal import plugin_posterior_moments
from ..theory.softmax_marginal import (
    FiniteSizeRow,
    RowCumulants,
    finite_size_row,
    plugin_marginal,
    row_cumulants,
)
from .softmax import basin_mean

__all__ = ["Forecast", "power_law_forecast", "susceptibility_forecast", "linear_copy_observables",
           "softmax_copy_observables", "WindowForecasts", "window_forecasts",
           "FiniteSizeForecast", "finite_size_forecast", "SampledObservable", "sampled_copy_observable",
           "SampledVariance", "sampled_variance"]


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


def _curve(name: str, P, y) -> tuple[np.ndarray, np.ndarray]:
    """``P`` and the observable ``y`` (called ``name``) as finite 1-d arrays of one length >= 2, ``P`` increasing."""
    P, y = as_paired_arrays("P", P, name, y)
    if np.any(np.diff(P) <= 0):
        raise ValueError("P must be strictly increasing")
    return P, y


def power_law_forecast(P: npt.ArrayLike, y: npt.ArrayLike, target: float) -> Forecast:
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
    P, y = _curve("y", P, y)
    if np.any(P <= 0):
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


def susceptibility_forecast(P: npt.ArrayLike, var: npt.ArrayLike) -> float:
    """Fit a straight line to ``1/var`` against ``P`` and return the ``P`` where it reaches zero.

    P : array ``(n,)``, ``n >= 2``, finite and strictly increasing; var : array
    ``(n,)``, finite and ``> 0`` (a posterior variance at each ``P``). A
    susceptibility that diverges as ``a/(P_* - P)`` has ``1/var`` linear in ``P``
    with zero at ``P_*``, so the forecast is exact for it. Returns ``inf`` when the
    fitted line does not fall (slope ``>= 0``): nothing is announced.
    """
    P, var = _curve("var", P, var)
    if np.any(var <= 0):
        raise ValueError("var must be > 0 (a variance)")
    slope, icpt = np.polyfit(P, 1 / var, 1)
    return float(-icpt / slope) if slope < 0 else math.inf


def linear_copy_observables(P: float, spec: ModelSpec, **moment_kwargs: float | None) -> tuple[float, float]:
    """``(copy share of the posterior means, Var q)`` of the plug-in posterior of linear attention at ``P``.

    The moments are those of :func:`copylib.theory.linear_marginal.plugin_posterior_moments`
    (keyword arguments passed on); the share is
    ``(L-1) E[q sign m] / (E|m| + (L-1) E[q sign m])``, the variance that of the copy
    amplitude ``q`` with its sign fixed by ``m > 0``.
    """
    mom = plugin_posterior_moments(P, spec, **moment_kwargs)
    return float(copy_share(mom.abs_m, mom.q, spec.L)), float(mom.var_q)


def softmax_copy_observables(P: float, spec: ModelSpec, cumulants: RowCumulants) -> tuple[float, float]:
    """``(mean, variance)`` of the copy weight ``c`` under the plug-in marginal of softmax attention at ``P``.

    cumulants : the row cumulants of :func:`copylib.theory.softmax_marginal.row_cumulants`
    for ``spec``; the marginal is :func:`copylib.theory.softmax_marginal.plugin_marginal`.
    """
    marginal = plugin_marginal(float(P), spec, cumulants)
    return float(marginal.mean()), float(marginal.var())


def _copy_share_of_chains(Q: npt.ArrayLike, M: npt.ArrayLike) -> tuple[float, float]:
    """Copy share ``Q/(M + Q)`` of the means over chains, with its standard error.

    Q, M : arrays ``(n_chains,)``, ``n_chains >= 2``, finite, one value per chain:
    ``(L-1)`` times the chain mean of ``q sign m``, and the chain mean of ``|m|``
    (``M + Q`` must not vanish). The error is the delta method on the covariance
    of ``(Q, M)`` over the chains divided by ``n_chains`` (independent chains).
    """
    Q, M = as_paired_arrays("Q", Q, "M", M)
    Q_, M_ = Q.mean(), M.mean()
    if M_ + Q_ == 0:
        raise ValueError("M + Q must not vanish (the share is undefined)")
    grad = np.array([M_, -Q_]) / (M_ + Q_) ** 2
    cov = np.cov(np.stack([Q, M])) / Q.size
    return float(Q_ / (M_ + Q_)), float(np.sqrt(grad @ cov @ grad))


@dataclass(frozen=True)
class WindowForecasts:
    """:func:`window_forecasts` result, one entry per window.

    ratio_mean : power-law forecast of the order parameter divided by the threshold;
    ratio_var : susceptibility forecast divided by the threshold;
    observations : array ``(n_windows, 3, 2)``, the observable and its variance at each ``P``.
    """

    ratio_mean: tuple[float, ...]
    ratio_var: tuple[float, ...]
    observations: np.ndarray


def window_forecasts(observables: Callable[[float], tuple[float, float]], P_star: float,
                     windows: Sequence[Sequence[float]], start: float, y_star: float) -> WindowForecasts:
    """Run both forecasters on observations at fractions of a threshold ``P_star``.

    Parameters
    ----------
    observables : callable ``P -> (y, var)``
        The observable and its posterior variance at ``P`` (e.g.
        :func:`linear_copy_observables` with its spec bound).
    P_star : float > 0
        The threshold.
    windows : sequence of sequences of float
        Each window: increasing fractions of ``P_star`` (positive, at least two).
    start : float
        The observable far below the threshold (its value at ``P = 0``).
    y_star : float
        The observable at the threshold (``> start``).

    Returns
    -------
    WindowForecasts
        For each window the power-law forecast (:func:`power_law_forecast` of
        ``y - start`` with target ``y_star - start``) and the susceptibility forecast
        (:func:`susceptibility_forecast` of the variance), both divided by ``P_star``.
    """
    P_star = check_positive("P_star", P_star)
    if not callable(observables):
        raise TypeError(f"observables must be callable P -> (y, var), got {type(observables).__name__}")
    start, y_star = float(start), float(y_star)
    for name, value in (("start", start), ("y_star", y_star)):
        if not math.isfinite(value):
            raise ValueError(f"{name} must be finite, got {value}")
    if not y_star > start:
        raise ValueError(f"y_star must be > start (the observable grows to the threshold), got {y_star} <= {start}")
    if len(windows) == 0:
        raise ValueError("windows must hold at least one window")
    ratio_mean, ratio_var, data = [], [], []
    for w in windows:
        P_obs = np.array(w) * P_star
        y = np.array([observables(P) for P in P_obs])
        data.append(y)
        forecast = power_law_forecast(P_obs, (y[:, 0] - start), y_star - start)
        ratio_mean.append(forecast.P_forecast / P_star)
        ratio_var.append(susceptibility_forecast(P_obs, y[:, 1]) / P_star)
    return WindowForecasts(ratio_mean=tuple(ratio_mean), ratio_var=tuple(ratio_var), observations=np.array(data))


@dataclass(frozen=True)
class FiniteSizeForecast:
    """:func:`finite_size_forecast` result.

    row : the jump of the plug-in marginal (:func:`copylib.theory.softmax_marginal.finite_size_row`);
    forecast : susceptibility forecast divided by ``row.P3`` (``nan`` without a first-order point).
    """

    row: FiniteSizeRow
    forecast: float

    @property
    def summary(self) -> str:
        """The first-order point, its barriers and the forecast in one line, or why there is none."""
        row = self.row
        if not np.isfinite(row.P3):
            seen = (f"two minima over {row.P_lower:.1f}-{row.P_upper:.1f}, depth {row.max_depth:.4f} nats,"
                    " basin masses never equal" if row.two_minima else
                    f"no two minima at a step of {row.step:.2f} over {row.scanned[0]:.0f}-{row.scanned[1]:.0f}")
            return f"no first-order point ({seen}); crossover (variance peak) at P = {row.P_peak:.0f}"
        return (f"P3 = {row.P3:.0f}, barrier {np.round(row.barrier_height, 2)} nats,"
                f" susceptibility forecast / P3 = {self.forecast:.2f}")


def finite_size_forecast(L: int, V: int, window: npt.ArrayLike, rng: np.random.Generator, *, rel_step: float = 1e-3,
                         P_range: tuple[float, float] | None = None, n_coarse: int = 61,
                         **cumulant_kwargs: Any) -> FiniteSizeForecast:
    """The jump of the softmax plug-in marginal at ``(L, V)`` and the susceptibility forecast of it.

    Parameters
    ----------
    L, V : int
        The model size (softmax attention, default priors).
    window : sequence of float
        Increasing fractions of ``P3`` at which the variance of ``c`` is observed.
    rng : numpy.random.Generator
        Draws the row cumulants (:func:`copylib.theory.softmax_marginal.row_cumulants`).
    rel_step, P_range, n_coarse
        Passed to :func:`copylib.theory.softmax_marginal.finite_size_row` (``rel_step``
        is the step of its fine scan).
    **cumulant_kwargs
        Passed to :func:`copylib.theory.softmax_marginal.row_cumulants`.

    Returns
    -------
    FiniteSizeForecast
        The forecast is :func:`susceptibility_forecast` on the window divided by
        ``P3``; ``nan`` when the marginal has no first-order point.
    """
    check_generator("rng", rng)
    rel_step = check_positive("rel_step", rel_step)
    window = check_grid("window", window, n_min=2, positive=True, increasing=True)
    spec = ModelSpec(L=L, V=V, kind="softmax")
    cum = row_cumulants(spec, rng, **cumulant_kwargs)
    row = finite_size_row(spec, cum, P_range=P_range, n_coarse=n_coarse, rel_step=rel_step)
    if not np.isfinite(row.P3):
        return FiniteSizeForecast(row=row, forecast=math.nan)
    P_obs = window * row.P3
    var = [softmax_copy_observables(P, spec, cum)[1] for P in P_obs]
    return FiniteSizeForecast(row=row, forecast=susceptibility_forecast(P_obs, var) / row.P3)


@dataclass(frozen=True)
class SampledObservable:
    """:func:`sampled_copy_observable` result, one entry per sample size.

    P : the sample sizes; sampled, se : the sampled observable and its standard
    error; theory : the theory curve; z : ``(sampled - theory) / se``.
    """

    P: tuple[float, ...]
    sampled: tuple[float, ...]
    se: tuple[float, ...]
    theory: tuple[float, ...]
    z: tuple[float, ...]

    def lines(self, label: str) -> list[str]:
        """One printable line per sample size, headed by ``label``."""
        return [f"{label:8s} P = {P:5d}: sampled {s:.4f} ± {e:.4f}, theory {t:.4f}, z = {z:+.1f}"
                for P, s, e, t, z in zip(self.P, self.sampled, self.se, self.theory, self.z)]


def sampled_copy_observable(observable: str, samples: Mapping[str, np.ndarray], P_values: Sequence[int],
                            n_chains: int, L: int, theory: Callable[[int], Sequence[float]]) -> SampledObservable:
    """The copy observable of sampled chains at each sample size, against the theory curve.

    Parameters
    ----------
    observable : ``"copy_share"`` or ``"copy_weight"``
        ``"copy_share"`` (linear attention): the copy share of the chain means (``_copy_share_of_chains``, from
        ``samples["m"]`` and ``samples["q"]``); ``"copy_weight"`` (softmax attention): the mean copy weight
        (``samples["c"]``) with its jackknife error over chains
        (:func:`copylib.analysis.softmax.basin_mean`).
    samples : mapping of arrays ``(n_chains * len(P_values), n_draws)``
        The chains, ``n_chains`` consecutive ones per sample size.
    P_values : sequence of int
        The sample sizes, in the order of the chains.
    n_chains : int >= 2
        Chains per sample size.
    L : int >= 2
        Sequence length (the copy share weighs ``q`` by ``L - 1``).
    theory : callable ``P -> (y, ...)``
        The theory curve (its first entry is compared).

    Returns
    -------
    SampledObservable
    """
    if observable not in ("copy_share", "copy_weight"):
        raise ValueError(f"observable must be 'copy_share' or 'copy_weight', got {observable!r}")
    n_chains = check_int("n_chains", n_chains, 2)
    L = check_int("L", L, 2)
    if not callable(theory):
        raise TypeError(f"theory must be callable P -> (y, ...), got {type(theory).__name__}")
    P_values = list(P_values)
    rows = []
    for i, P in enumerate(P_values):
        sl = slice(i * n_chains, (i + 1) * n_chains)
        if observable == "copy_share":
            m, q = np.asarray(samples["m"][sl]), np.asarray(samples["q"][sl])
            if m.shape[0] != n_chains:
                raise ValueError(f"samples must hold n_chains = {n_chains} chains per sample size")
            # the share of the pooled per-chain means, with its s.e. by the delta method over chains
            sampled, se_ = _copy_share_of_chains((L - 1) * (q * np.sign(m)).mean(-1), np.abs(m).mean(-1))
        else:
            c = np.asarray(samples["c"][sl])
            if c.shape[0] != n_chains:
                raise ValueError(f"samples must hold n_chains = {n_chains} chains per sample size")
            sampled, se_ = basin_mean(c, c)
        th = theory(P)[0]
        rows.append((P, sampled, se_, th, (sampled - th) / se_))
    P, sampled, se, th, z = (tuple(col) for col in zip(*rows)) if rows else ((),) * 5
    return SampledObservable(P=P, sampled=sampled, se=se, theory=th, z=z)


@dataclass(frozen=True)
class SampledVariance:
    """:func:`sampled_variance` result, one entry per sample size.

    P : the sample sizes; sampled : the variance of all draws of the chains at ``P``
    pooled; se : its leave-one-chain-out jackknife standard error; theory : the
    theory curve's variance; z : ``(sampled - theory) / se``; ratio : ``sampled / theory``;
    between : the variance of the chain means over ``sampled`` (an upper bound on the
    share that the spread of the data sets' posterior means adds to the pooled
    variance: it also holds the Monte Carlo error of each chain mean);
    replicates : array ``(n_chains, n_P)``, the pooled variance with chain ``j`` of
    every sample size left out.
    """

    P: tuple[float, ...]
    sampled: tuple[float, ...]
    se: tuple[float, ...]
    theory: tuple[float, ...]
    z: tuple[float, ...]
    ratio: tuple[float, ...]
    between: tuple[float, ...]
    replicates: np.ndarray = field(repr=False)

    def forecast(self, P_obs: Sequence[float]) -> tuple[float, float]:
        """:func:`susceptibility_forecast` on the sampled variances at ``P_obs`` (a subset of ``P``), with its error.

        The error is the jackknife over the chain index: chain ``j`` of every sample size is
        left out together, which is valid because all chains are independent. Returns
        ``(forecast, se)``; the forecast is ``inf`` when the sampled ``1/Var`` does not
        fall, and ``se`` is ``inf`` when a replicate's does not.
        """
        P_obs = [float(P) for P in P_obs]
        missing = [P for P in P_obs if P not in self.P]
        if missing or len(P_obs) < 2:
            raise ValueError(f"P_obs must be >= 2 of the sampled sizes {self.P}, got {P_obs}")
        idx = [self.P.index(P) for P in P_obs]
        value = susceptibility_forecast(P_obs, np.array(self.sampled)[idx])
        reps = np.array([susceptibility_forecast(P_obs, r[idx]) for r in self.replicates])
        n = reps.size
        se = float(np.sqrt((n - 1) / n * np.sum((reps - reps.mean()) ** 2))) if np.all(np.isfinite(reps)) else math.inf
        return value, se

    def worst_z(self, scale: float = 1.0) -> float:
        """The largest ``|sampled - scale * theory| / se`` over the sample sizes.

        ``scale = 1`` is the comparison itself; another ``scale`` asks whether the same
        comparison would reject a curve off by that factor (its power).
        """
        scale = check_positive("scale", scale)
        return float(np.max(np.abs(np.array(self.sampled) - scale * np.array(self.theory)) / np.array(self.se)))

    def lines(self, label: str) -> list[str]:
        """One printable line per sample size, headed by ``label``."""
        return [f"{label:8s} P = {P:5.0f}: sampled Var {s:.3e} ± {e:.1e}, theory {t:.3e}, ratio {r:.2f},"
                f" z = {z:+.1f}; chain means {b:.0%} of it"
                for P, s, e, t, r, z, b in zip(self.P, self.sampled, self.se, self.theory, self.ratio, self.z,
                                               self.between)]


def sampled_variance(x: npt.ArrayLike, P_values: Sequence[float], n_chains: int,
                     theory: Callable[[float], Sequence[float]]) -> SampledVariance:
    """The posterior variance of an observable in sampled chains at each sample size, against the theory curve.

    Parameters
    ----------
    x : array ``(n_chains * len(P_values), n_draws)``, ``n_draws >= 2``, finite
        The observable in each draw (the copy weight ``c``, or the copy amplitude
        ``q sign m``), ``n_chains`` consecutive chains per sample size, each chain
        on its own data set.
    P_values : sequence of float
        The sample sizes, in the order of the chains.
    n_chains : int >= 2
        Chains per sample size.
    theory : callable ``P -> (y, var, ...)``
        The theory curve (its second entry, the variance, is compared).

    Returns
    -------
    SampledVariance
        At each ``P`` the variance of all draws pooled over its chains (the posterior
        variance averaged over data sets, plus the spread of the data sets' posterior
        means), with the leave-one-chain-out jackknife error.
    """
    n_chains = check_int("n_chains", n_chains, 2)
    if not callable(theory):
        raise TypeError(f"theory must be callable P -> (y, var, ...), got {type(theory).__name__}")
    P_values = [float(P) for P in P_values]
    x = as_real_array("x", x)
    if x.ndim != 2 or x.shape[0] != n_chains * len(P_values) or x.shape[1] < 2 or not P_values:
        raise ValueError(f"x must have shape (n_chains * len(P_values), n_draws >= 2) = ({n_chains * len(P_values)},"
                         f" n_draws), got {x.shape}")
    check_finite("x", x)
    groups = x.reshape(len(P_values), n_chains, -1)
    pooled = groups.reshape(len(P_values), -1).var(axis=1)
    if np.any(pooled <= 0):
        raise ValueError("x must vary within the chains of each sample size (a variance of zero has no ratio)")
    keep = ~np.eye(n_chains, dtype=bool)
    reps = np.array([groups[:, keep[j]].reshape(len(P_values), -1).var(axis=1) for j in range(n_chains)])
    se = np.sqrt((n_chains - 1) / n_chains * np.sum((reps - reps.mean(axis=0)) ** 2, axis=0))
    th = np.array([float(theory(P)[1]) for P in P_values])
    between = groups.mean(axis=2).var(axis=1) / pooled
    return SampledVariance(P=tuple(P_values), sampled=tuple(map(float, pooled)), se=tuple(map(float, se)),
                           theory=tuple(map(float, th)), z=tuple(map(float, (pooled - th) / se)),
                           ratio=tuple(map(float, pooled / th)), between=tuple(map(float, between)),
                           replicates=reps)
