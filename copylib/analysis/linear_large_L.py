"""Linear attention beyond ``L = 32``: paired chains from a pooling and a copying start against the plug-in posterior.

The linear chapter's statements at ``L > 32`` rest on the plug-in posterior integral
(:mod:`copylib.theory.linear_marginal`). These functions test it there with Metropolis-adjusted
chains (MALA, acceptance recorded), two per data set on the same data: one started in a pooling
state (``Q = 0``), one in a copying state (large ``Q``), with ``Q = (L-1) q sign m`` the copy part of
the attention matrix, the coordinate of the plug-in marginal:

* ``_state_logits`` -- the logits ``(g, b)`` of an attention matrix ``m J/L + q (T - J/L)`` (a start);
* ``_sample_paired_starts`` -- the chains at several ``P``, both starts on each data set, in one batch;
* ``_compare_starts`` -- per ``P``: the chain means of each start, whether the starts meet (their
  paired difference against its standard error over data sets), the pooled mean against the plug-in
  posterior's, acceptance, R-hat within data sets, ESS and drift;
* :func:`sample_near_switch` -- the whole measurement at one ``L``, at sizes relative to the ``fluct``
  crossover ``P_2``;
* :func:`barrier_grid_error` -- the plug-in marginal's barrier at one ``P`` and its quadrature error,
  from grids refined one coordinate at a time.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import pandas as pd
import torch

from ..arguments import as_real_array, check_finite, check_grid, check_int
from ..inference.diagnostics import dataset_chain_diagnostics
from ..inference.posterior_sampling import sample_collapsed_posterior
from ..model.network import ModelSpec, check_spec
from ..model.statistics import cooccurrence
from ..model.task import copy_task
from ..posterior.order_parameters import attention_from_order_parameters
from ..theory.linear import first_order_point
from ..theory.linear_marginal import plugin_marginal, plugin_posterior_moments

__all__ = ["BarrierGridError", "PairedChains", "StartComparison", "NearSwitch", "barrier_grid_error",
           "sample_near_switch"]

#: |paired difference| / s.e. above this: the two starts have not met (a two-sided 4-sigma test per P)
_MEET_Z = 4.0


def _finite_scalar(name: str, x) -> float:
    x = as_real_array(name, x)
    if x.ndim or not np.isfinite(x):
        raise ValueError(f"{name} must be one finite number, got {x}")
    return float(x)


def _state_logits(m: float, Q: float, L: int) -> tuple[np.ndarray, float]:
    """Logits ``(g, b)`` of linear attention ``A = m J/L + q (T - J/L)`` with ``q = Q / (L - 1)``.

    Linear attention is ``A = (g + b J) / L``; the bias is set to zero and the whole matrix put in
    ``g = L A``. ``m``, ``Q`` finite, ``L >= 2``. Returns ``g`` of shape ``(L, L)`` and ``b = 0``.
    """
    L = check_int("L", L, 2)
    m, Q = (_finite_scalar(name, x) for name, x in (("m", m), ("Q", Q)))
    A = attention_from_order_parameters(np.array(m), np.array(Q / (L - 1)), L)
    return L * np.asarray(A, dtype=np.float64), 0.0


@dataclass(frozen=True)
class PairedChains:
    """Chains from two starts on the same data sets (``_sample_paired_starts``).

    P : array ``(n_P,)``; Q, abs_m : arrays ``(n_P, n_data, 2, n)`` (size, data set, start: 0 pooling,
    1 copying, draw) of ``Q = (L-1) q sign m`` and ``|m|``; accept : ``(n_P, n_data, 2)`` acceptance
    rates of the Metropolis test; starts : ``((m, Q) pooling, (m, Q) copying)``.
    """

    P: np.ndarray
    Q: np.ndarray = field(repr=False)
    abs_m: np.ndarray = field(repr=False)
    accept: np.ndarray
    starts: tuple


def _sample_paired_starts(P_values: npt.ArrayLike, spec: ModelSpec, n_data: int, n_steps: int, *, n_warmup: int,
                         thin: int, seed: int, starts: tuple[tuple[float, float], tuple[float, float]],
                         n_leapfrog: int = 1, n_rewarm: int = 0, cache: bool = False) -> PairedChains:
    """Metropolis-adjusted chains on the collapsed posterior, a pooling and a copying start per data set.

    The data sets (``n_data`` per ``P``) are drawn with ``numpy.random.default_rng(seed)``, ``P`` by
    ``P``; the sampler's generator is ``torch.Generator().manual_seed(seed)``. ``n_leapfrog = 1``:
    MALA, each chain adapting its step lengths per parameter group in the warm-up (``adapt_scales``, so
    ``n_warmup >= 160``); ``n_leapfrog > 1``: HMC with that many leapfrog steps per proposal and
    ``target_accept = 0.75`` (the copy part ``Q`` is one soft direction among ``L^2``, which MALA's
    diffusion crosses slowly and HMC's trajectories cross ballistically). Every proposal passes a
    Metropolis test, so the step size biases nothing. ``starts`` gives ``(m, Q)`` of the pooling and
    of the copying start (``_state_logits``); ``cache`` as in
    :func:`~copylib.inference.posterior_sampling.sample_collapsed_posterior`.

    ``n_rewarm > 0`` (HMC only): a second warm-up of that many steps, from the states and steps the
    first one ended with, adapts each chain's step afresh where the chain now is. A chain that moved
    between the pooling and the copying region during the first warm-up keeps otherwise a step
    averaged over both, which can be too long for the region it stays in.
    """
    spec = check_spec(spec, kind="linear", theory="_sample_paired_starts")
    if spec.causal:
        raise ValueError("spec must be cyclic (causal=False): Q is the copy part of the cyclic task")
    P_values = [check_int("P", P, minimum=1) for P in np.atleast_1d(P_values)]
    n_data = check_int("n_data", n_data, minimum=2)
    if len(starts) != 2 or any(len(s) != 2 for s in starts):
        raise ValueError(f"starts must be two (m, Q) pairs (pooling, copying), got {starts!r}")
    L, V = spec.L, spec.V
    rng = np.random.default_rng(seed)
    C = np.stack([cooccurrence(copy_task(P, L, V, rng)[0]) for P in P_values for _ in range(n_data)])
    C = np.repeat(C, 2, axis=0)  # chain = (P, data set, start)
    (g0, b0), (g1, b1) = (_state_logits(m, Q, L) for m, Q in starts)
    init = {"g": np.tile(np.stack([g0, g1]), (len(C) // 2, 1, 1)), "b": np.tile([b0, b1], len(C) // 2)}
    n_leapfrog = check_int("n_leapfrog", n_leapfrog, 1)
    n_rewarm = check_int("n_rewarm", n_rewarm, 0)
    if n_rewarm and n_leapfrog == 1:
        raise ValueError("n_rewarm needs HMC (n_leapfrog > 1): MALA re-adapts its step after each scale window")
    moves = dict(adapt_scales=True) if n_leapfrog == 1 else dict(n_leapfrog=n_leapfrog, target_accept=0.75)
    generator = torch.Generator().manual_seed(seed)
    if n_rewarm:
        first = sample_collapsed_posterior(C, spec, len(C), 1, generator, n_warmup=n_warmup, init=init, cache=cache,
                                           **moves)
        init, n_warmup, moves = first.final_params, n_rewarm, dict(moves, step_size=first.step_size)
    out = sample_collapsed_posterior(C, spec, len(C), n_steps, generator, n_warmup=n_warmup, init=init, thin=thin,
                                     cache=cache, **moves)
    shape = (len(P_values), n_data, 2, -1)
    m, q = out.samples["m"], out.samples["q"]
    return PairedChains(P=np.array(P_values, dtype=float), Q=((L - 1) * q * np.sign(m)).reshape(shape),
                        abs_m=np.abs(m).reshape(shape), accept=np.asarray(out.accept_rate).reshape(shape[:-1]),
                        starts=tuple((float(a), float(b)) for a, b in starts))


@dataclass(frozen=True)
class StartComparison:
    """Two starts on the same data sets against each other and the plug-in posterior (``_compare_starts``).

    All arrays ``(n_P,)``. mean_pool, mean_copy : the chain means of each start averaged over data sets;
    paired_d, paired_err : their difference (pooling minus copying start) and its standard error
    ``sd / sqrt(n_data)`` over data sets; meet_z : ``paired_d / paired_err``; mean, mean_err : all chains
    (data-set means, each of its two chains averaged) and the standard error over data sets; plugin :
    the plug-in posterior's mean; plugin_z : ``(mean - plugin) / mean_err``; rhat : the worst split
    R-hat over data sets of the two chains of a data set; ess : bulk ESS summed over data sets; drift :
    the half-chain drift z over all chains; accept_min, accept_max : the chains' acceptance rates;
    P_shift : ``(mean - plugin) / (d plugin / d ln P)``, the relative shift in ``P`` that would bring
    the plug-in posterior onto the sampled mean (``nan`` without the slope).
    """

    P: np.ndarray
    mean_pool: np.ndarray
    mean_copy: np.ndarray
    paired_d: np.ndarray
    paired_err: np.ndarray
    meet_z: np.ndarray
    mean: np.ndarray
    mean_err: np.ndarray
    plugin: np.ndarray
    plugin_z: np.ndarray
    rhat: np.ndarray
    ess: np.ndarray
    drift: np.ndarray
    accept_min: np.ndarray
    accept_max: np.ndarray
    P_shift: np.ndarray

    @property
    def meet(self) -> np.ndarray:
        """Whether the two starts agree within ``_MEET_Z`` standard errors, per ``P``."""
        return np.abs(self.meet_z) < _MEET_Z

    def frame(self) -> pd.DataFrame:
        """One row per ``P``."""
        names = [f.name for f in self.__dataclass_fields__.values() if f.name != "P"]
        return pd.DataFrame({n: getattr(self, n) for n in names}, index=pd.Index(self.P.astype(int), name="P"))


def _compare_starts(x: npt.ArrayLike, plugin: npt.ArrayLike, accept: npt.ArrayLike, P: npt.ArrayLike,
                   plugin_slope: npt.ArrayLike | None = None) -> StartComparison:
    """Chain means of two starts, whether they meet, their diagnostics and the plug-in comparison.

    Parameters
    ----------
    x : array ``(n_P, n_data >= 2, 2, n >= 8)``
        Draws of one observable (size, data set, start: pooling then copying, draw), finite.
    plugin : array ``(n_P,)``
        The plug-in posterior's mean of the observable at each ``P``.
    accept : array ``(n_P, n_data, 2)``
        Acceptance rates of the chains, in ``[0, 1]``.
    P : array ``(n_P,)``
        The sample sizes.
    plugin_slope : array ``(n_P,)``, optional
        ``d plugin / d ln P`` (finite, non-zero): turns the difference from the plug-in posterior into
        a shift in ``P``.

    Returns
    -------
    StartComparison
        The standard errors are the spread over data sets: they contain each chain's Monte Carlo error
        whatever its autocorrelation, and (for ``mean_err``) the data-set spread of the posterior mean.
    """
    x = as_real_array("x", x)
    if x.ndim != 4 or x.shape[1] < 2 or x.shape[2] != 2 or x.shape[3] < 8:
        raise ValueError(f"x must have shape (n_P, n_data >= 2, 2, n >= 8), got {x.shape}")
    check_finite("x", x)
    n_P, n_data = x.shape[:2]
    plugin, P = as_real_array("plugin", plugin), as_real_array("P", P)
    if plugin.shape != (n_P,) or not np.isfinite(plugin).all():
        raise ValueError(f"plugin must hold {n_P} finite means, got shape {plugin.shape}")
    if P.shape != (n_P,):
        raise ValueError(f"P must hold {n_P} sample sizes, got shape {P.shape}")
    accept = as_real_array("accept", accept)
    if accept.shape != x.shape[:3] or not ((accept >= 0) & (accept <= 1)).all():
        raise ValueError(f"accept must hold rates in [0, 1] of shape {x.shape[:3]}, got {accept.shape}")
    if plugin_slope is None:
        shift_per = np.full(n_P, math.nan)
    else:
        slope = as_real_array("plugin_slope", plugin_slope)
        if slope.shape != (n_P,) or not (np.isfinite(slope) & (slope != 0)).all():
            raise ValueError(f"plugin_slope must hold {n_P} finite non-zero slopes, got {slope}")
        shift_per = 1 / slope
    chain = x.mean(-1)  # (n_P, n_data, 2)
    d = chain[..., 0] - chain[..., 1]
    d_err = d.std(-1, ddof=1) / math.sqrt(n_data)
    data = chain.mean(-1)
    err = data.std(-1, ddof=1) / math.sqrt(n_data)
    diags = [dataset_chain_diagnostics(x[k]) for k in range(n_P)]
    with np.errstate(divide="ignore", invalid="ignore"):  # identical chains: z = nan or inf, as for any zero error
        meet_z, plugin_z = d.mean(-1) / d_err, (data.mean(-1) - plugin) / err
    return StartComparison(P=P, mean_pool=chain[..., 0].mean(-1), mean_copy=chain[..., 1].mean(-1),
                           paired_d=d.mean(-1), paired_err=d_err, meet_z=meet_z, mean=data.mean(-1), mean_err=err,
                           plugin=plugin, plugin_z=plugin_z, rhat=np.array([g.rhat for g in diags]),
                           ess=np.array([g.ess_bulk for g in diags]), drift=np.array([g.drift_z for g in diags]),
                           accept_min=accept.reshape(n_P, -1).min(-1), accept_max=accept.reshape(n_P, -1).max(-1),
                           P_shift=(data.mean(-1) - plugin) * shift_per)


@dataclass(frozen=True)
class NearSwitch:
    """:func:`sample_near_switch` result.

    L : int; P2 : the ``fluct`` minimum's crossover ``P_2`` at this ``L``; P : the sampled sizes;
    starts : ``(m, Q)`` of the pooling and the copying start; Q, abs_m : :class:`StartComparison` of the
    copy part ``Q = (L-1) q sign m`` and of ``|m|`` (plug-in: ``(L-1) E[q sign m]`` and ``E|m|``);
    chains : the :class:`PairedChains`.
    """

    L: int
    P2: float
    P: np.ndarray
    starts: tuple
    Q: StartComparison
    abs_m: StartComparison
    chains: PairedChains = field(repr=False)

    def summary(self) -> dict[str, float]:
        """The numbers a text quotes: the sampled range (``f_lo, f_hi`` in units of ``P2``), the plug-in
        ``E Q`` at its ends, the number of data sets, the largest ``|meet_z|``, ``|plugin_z|``, ``|P_shift|``
        and drift z over ``Q`` and ``|m|`` and all ``P``, the paired difference of ``Q`` (and its s.e.) and
        its mean at the largest ``P``, the acceptance range, R-hat of ``Q`` at the ends and its ESS at the
        largest ``P``."""
        both = (self.Q, self.abs_m)
        largest = {k: float(max(np.abs(getattr(c, k)).max() for c in both)) for k in ("meet_z", "plugin_z", "P_shift",
                                                                                    "drift")}
        Q = self.Q
        return dict(f_lo=float(self.P[0] / self.P2), f_hi=float(self.P[-1] / self.P2), plugin_lo=float(Q.plugin[0]),
                    plugin_hi=float(Q.plugin[-1]), n_data=int(self.chains.Q.shape[1]), meet_max=largest["meet_z"],
                    z_max=largest["plugin_z"], shift_max=largest["P_shift"], drift_max=largest["drift"],
                    d_hi=float(Q.paired_d[-1]), d_hi_err=float(Q.paired_err[-1]), mean_hi=float(Q.mean[-1]),
                    acc_lo=float(Q.accept_min.min()), acc_hi=float(Q.accept_max.max()), rhat_lo=float(Q.rhat[0]),
                    rhat_hi=float(Q.rhat[-1]), ess_hi=float(Q.ess[-1]))

    def frame(self) -> pd.DataFrame:
        """Both comparisons, one row per (observable, ``P``)."""
        return pd.concat({"Q": self.Q.frame(), "|m|": self.abs_m.frame()}, names=["observable"])


def sample_near_switch(L: int, V: int, n_data: int, n_steps: int, *, P_over_P2: Sequence[float] = (0.8, 1.0, 1.25),
                       n_warmup: int, thin: int, seed: int, n_leapfrog: int = 1, n_rewarm: int = 0,
                       cache: bool = False) -> NearSwitch:
    """Paired chains at sizes around the ``fluct`` crossover ``P_2`` of one ``L``, against the plug-in posterior.

    1. ``P_2`` of the ``fluct`` action (:func:`copylib.theory.linear.first_order_point`); the sizes are
       ``P_over_P2 * P_2`` rounded.
    2. The plug-in posterior (:func:`copylib.theory.linear_marginal.plugin_posterior_moments`, default
       grid) at every size and at ``P e^{+-0.02}`` (its slope in ``ln P``); the starts are its pooling state at the smallest size (``E|m|`` there,
       ``Q = 0``) and its copying state at the largest (``E|m|`` and ``(L-1) E[q sign m]`` there).
    3. ``_sample_paired_starts`` (``n_leapfrog``: MALA or HMC; ``n_rewarm``: HMC's second warm-up) and
       ``_compare_starts`` of ``Q`` and of ``|m|``.
    """
    L, V = check_int("L", L, 4), check_int("V", V, 2)
    f = check_grid("P_over_P2", P_over_P2, positive=True, increasing=True)
    n_data, n_steps = check_int("n_data", n_data, 2), check_int("n_steps", n_steps, 1)
    spec = ModelSpec(L=L, V=V, kind="linear")
    P2 = first_order_point(spec, "fluct").P2
    Ps = np.round(f * P2).astype(int)
    if np.unique(Ps).size != Ps.size:
        raise ValueError(f"P_over_P2 = {f} puts two sizes on one integer: {Ps}")
    moments = [plugin_posterior_moments(float(P), spec) for P in Ps]
    # the slopes in ln P by central differences, a 2 % step: the plug-in's grid noise is far smaller than its change
    side = [[plugin_posterior_moments(float(P) * math.exp(s), spec) for P in Ps] for s in (-0.02, 0.02)]
    slope_Q, slope_m = (np.array([(get(hi) - get(lo)) / 0.04 for lo, hi in zip(*side)])
                        for get in (lambda mo: (L - 1) * mo.q, lambda mo: mo.abs_m))
    starts = ((moments[0].abs_m, 0.0), (moments[-1].abs_m, (L - 1) * moments[-1].q))
    chains = _sample_paired_starts(Ps, spec, n_data, n_steps, n_warmup=n_warmup, thin=thin, seed=seed, starts=starts,
                                  n_leapfrog=n_leapfrog, n_rewarm=n_rewarm, cache=cache)
    plugin_Q = np.array([(L - 1) * mo.q for mo in moments])
    plugin_m = np.array([mo.abs_m for mo in moments])
    return NearSwitch(L=L, P2=float(P2), P=chains.P, starts=chains.starts,
                      Q=_compare_starts(chains.Q, plugin_Q, chains.accept, chains.P, slope_Q),
                      abs_m=_compare_starts(chains.abs_m, plugin_m, chains.accept, chains.P, slope_m), chains=chains)


#: the quadrature points of the plug-in marginal and their defaults (:func:`plugin_marginal`)
_GRID_POINTS = {"n_m": 81, "n_q": 161, "n_row": 24, "n_rest": 16}


@dataclass(frozen=True)
class BarrierGridError:
    """:func:`barrier_grid_error` result.

    P : float; barrier : the barrier (nats) of the ``Q`` marginal on the given grid; refined : ``{grid
    parameter: barrier}`` with that parameter's points multiplied by ``factor``; error : the largest
    ``|refined - barrier|`` (the quadrature error bound the text quotes); log_weight_ratio : the
    free-energy difference of the two modes on the given grid.
    """

    P: float
    barrier: float
    refined: dict
    error: float
    log_weight_ratio: float


def barrier_grid_error(P: float, spec: ModelSpec, *, factor: int = 2, **grid: float) -> BarrierGridError:
    """The barrier of the plug-in ``Q`` marginal at ``P`` and its change when one grid is refined at a time.

    :func:`copylib.theory.linear_marginal.plugin_marginal` at ``P`` with ``grid`` (its keyword
    arguments, e.g. ``n_m``, ``q_max``), then with each of ``n_m, n_q, n_row, n_rest`` in turn
    multiplied by ``factor`` (an int >= 2; ``n_m`` and ``n_q`` to ``factor (n - 1) + 1``, so that the old
    points stay on the grid). The marginal must have two modes on the given grid.
    """
    factor = check_int("factor", factor, 2)
    if "coordinate" in grid:
        raise ValueError("coordinate is fixed to 'Q' for barrier_grid_error")
    base = plugin_marginal(P, spec, "Q", **grid)
    if base.modes.size < 2:
        raise ValueError(f"the Q marginal at P = {P} must have two modes for a barrier, found {base.modes.size}")
    refined = {}
    for name, default in _GRID_POINTS.items():
        n = int(grid.get(name, default))
        finer = factor * (n - 1) + 1 if name in ("n_m", "n_q") else factor * n
        refined[name] = plugin_marginal(P, spec, "Q", **{**grid, name: finer}).barrier
    error = max(abs(b - base.barrier) for b in refined.values())
    return BarrierGridError(P=float(base.P), barrier=base.barrier, refined=refined, error=float(error),
                            log_weight_ratio=base.log_weight_ratio)
