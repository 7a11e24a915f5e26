"""The induction chapter's posterior evidence: mixing of the replica-exchange ladders and the switch.

* :func:`tempering_mixing` -- whether replica exchange over the whole posterior mixes, per ``P``;
* :func:`induction_switch` -- where the posterior moves its weight to the copying region, from the
  restricted ladders of :func:`copylib.analysis.induction.sample_induction_states`;
* ``_dip_ratio`` -- how deep the density of the layer-1 copy weight dips between two states;
* :func:`ladder_diagnostics` -- R-hat, ESS and half-chain drift (ArviZ) of every rung of the restricted ladders;
* :func:`one_layer_switch` -- the same switch for layer 1 alone: the one-layer posterior on the ladders' sequences.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
import torch
from scipy import stats

from ..arguments import as_real_array, check_finite, check_instance, check_int, check_positive
from ..inference.diagnostics import chain_diagnostics, split_rhat
from ..inference.posterior_sampling import sample_collapsed_posterior
from ..model.induction import InductionSpec, layer1_copy_weight
from ..model.statistics import cooccurrence
from ..model.task import one_hot
from .induction import InductionStates, InductionTempering
from .softmax import interpolate_crossing

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["TemperingMixing", "tempering_mixing", "InductionSwitch", "induction_switch",
           "LadderDiagnostics", "ladder_diagnostics", "OneLayerSwitch", "one_layer_switch"]


def _se(x, axis=None):
    """Standard error of the mean (``ddof = 1``) along ``axis`` (all entries for ``None``)."""
    x = np.asarray(x, dtype=float)
    n = x.size if axis is None else x.shape[axis]
    return np.std(x, axis=axis, ddof=1) / np.sqrt(n)


def _dip_ratio(density: npt.ArrayLike, edges: npt.ArrayLike, c_split: float) -> np.ndarray:
    """How deep the density of ``c^(1)`` dips between a state below and a state above ``c_split``.

    density : ``(..., n_bins)`` on the bin ``edges`` ``(n_bins + 1,)``. The peaks are the highest bins on
    each side of ``c_split``; the result is the lowest bin between them over the lower peak, ``(...)``:
    1 when the density does not dip between them (one state, or a monotone slope), near 0 for two
    separated states.
    """
    d = as_real_array("density", density)
    e = as_real_array("edges", edges)
    if e.ndim != 1 or d.shape[-1] != e.size - 1 or not (np.diff(e) > 0).all():
        raise ValueError("edges must be increasing, with one more entry than density's last axis")
    check_finite("density", d)
    centre = (e[:-1] + e[1:]) / 2
    below, above = centre <= c_split, centre > c_split
    if not (below.any() and above.any()):
        raise ValueError(f"c_split = {c_split} must lie inside the bins' range")
    flat = d.reshape(-1, d.shape[-1])
    out = np.empty(flat.shape[0])
    for k, row in enumerate(flat):
        i = int(np.flatnonzero(below)[np.argmax(row[below])])
        j = int(np.flatnonzero(above)[np.argmax(row[above])])
        low_peak = min(row[i], row[j])
        if low_peak <= 0:
            raise ValueError("density must be positive on both sides of c_split")
        out[k] = row[i:j + 1].min() / low_peak
    return out.reshape(d.shape[:-1])


@dataclass(frozen=True)
class TemperingMixing:
    """Whether replica exchange over the whole posterior mixes, per ``P``, from two or more starts.

    starts : the starts' names; P : ``(n_P,)``; rhat : ``(n_P,)`` split R-hat of the layer-1 copy weight
    over the chains of all starts; fewest_trips : ``(n_P,)`` the fewest round trips of a chain;
    mixed : ``(n_P,)`` ``rhat < rhat_max`` and ``fewest_trips >= min_trips``; swap_min : the lowest exchange
    rate at the smallest ``P`` (every pair of rungs, chain and start); swap_bottom : ``(2,)`` the mean rate
    of the lowest pair of rungs at the smallest and the largest ``P``; P_copy : the first ``P`` at which
    some chain's mean copy weight exceeds ``copy_level`` (``nan`` if none); c1, accuracy : ``(n_starts, n_P)``
    the means over chains and draws on the posterior rung.
    """

    starts: tuple
    P: np.ndarray
    rhat: np.ndarray
    fewest_trips: np.ndarray
    mixed: np.ndarray
    swap_min: float
    swap_bottom: np.ndarray
    P_copy: float
    c1: np.ndarray
    accuracy: np.ndarray

    def summary(self) -> dict:
        """The smallest and the largest ``P`` (``P_lo``, ``P_hi``) with their R-hat and fewest round trips
        (``rhat_lo``, ``trips_lo``, ``rhat_hi``, ``trips_hi``), the largest ``P`` that mixes (``P_mix``, 0 if
        none), ``swap_min``, ``swap_bottom_lo``, ``swap_bottom_hi`` and ``P_copy``: plain floats, the trips ints."""
        return {"P_lo": float(self.P[0]), "P_hi": float(self.P[-1]), "rhat_lo": float(self.rhat[0]),
                "rhat_hi": float(self.rhat[-1]), "trips_lo": int(self.fewest_trips[0]),
                "trips_hi": int(self.fewest_trips[-1]),
                "P_mix": float(self.P[self.mixed].max()) if self.mixed.any() else 0.0, "swap_min": float(self.swap_min),
                "swap_bottom_lo": float(self.swap_bottom[0]), "swap_bottom_hi": float(self.swap_bottom[1]),
                "P_copy": float(self.P_copy)}

    def table(self) -> pd.DataFrame:
        """One row per ``P``: R-hat, fewest round trips, and each start's mean copy weight and accuracy
        (a pandas ``DataFrame``)."""
        import pandas as pd

        cols = {"R-hat": self.rhat, "fewest round trips": self.fewest_trips.astype(int)}
        for i, s in enumerate(self.starts):
            cols[f"c1, {s} start"], cols[f"accuracy, {s} start"] = self.c1[i], self.accuracy[i]
        return pd.DataFrame(cols, index=pd.Index(self.P.astype(int), name="P"))


def tempering_mixing(runs: dict, *, rhat_max: float = 1.1, min_trips: int = 3,
                     copy_level: float = 0.55) -> TemperingMixing:
    """Mixing diagnostics of replica-exchange runs started from different states on the same data.

    Parameters
    ----------
    runs : dict of str to InductionTempering
        At least two runs (e.g. from prior draws and from Adam's solution) on the same ``P`` grid.
    rhat_max : float > 1
        A ``P`` mixes when the split R-hat of the copy weight over all chains is below it ...
    min_trips : int >= 1
        ... and every chain's walkers make at least this many round trips.
    copy_level : float in (0, 1)
        A chain sits in the copying state when its mean copy weight exceeds it.

    Returns
    -------
    TemperingMixing
    """
    if not isinstance(runs, dict) or len(runs) < 2 or not all(isinstance(r, InductionTempering)
                                                              for r in runs.values()):
        raise TypeError("runs must be a dict of at least two InductionTempering results")
    rs = list(runs.values())
    if any(not np.array_equal(r.P, rs[0].P) for r in rs):
        raise ValueError("runs must share one P grid")
    rhat_max = check_positive("rhat_max", rhat_max)
    if not rhat_max > 1:
        raise ValueError(f"rhat_max must exceed 1, got {rhat_max}")
    min_trips = check_int("min_trips", min_trips, 1)
    copy_level = check_positive("copy_level", copy_level)
    if not copy_level < 1:
        raise ValueError(f"copy_level must lie in (0, 1), got {copy_level}")
    c1 = np.concatenate([r.c1 for r in rs], 1)  # (P, chains of all starts, draws)
    rhat = np.array([float(split_rhat(c)) for c in c1])
    trips = np.min([r.round_trips.min(1) for r in rs], 0)
    copying = (c1.mean(-1) > copy_level).any(1)
    P = rs[0].P
    return TemperingMixing(starts=tuple(runs), P=P, rhat=rhat, fewest_trips=trips,
                           mixed=(rhat < rhat_max) & (trips >= min_trips),
                           swap_min=min(float(r.swap_rate[:, 0].min()) for r in rs),
                           swap_bottom=np.array([np.mean([r.swap_rate[0, i].mean() for r in rs]) for i in (0, -1)]),
                           P_copy=float(P[np.argmax(copying)]) if copying.any() else float("nan"),
                           c1=np.stack([r.c1.mean((1, 2)) for r in rs]),
                           accuracy=np.stack([r.accuracy.mean((1, 2)) for r in rs]))


@dataclass(frozen=True)
class InductionSwitch:
    """Where the posterior moves its weight to the copying region, from the restricted ladders at one ``P``.

    P : the ladder's ``P``; P_eff : ``(n_grid,)`` ``beta P`` from the lowest non-zero rung to ``P`` (geometric);
    log_odds, copy_mass : ``(n_pairs, n_grid)`` per pair of chains
    (:meth:`copylib.analysis.induction.InductionStates.log_odds`); P_sw, P25, P75 : ``(n_pairs,)`` where the
    copy mass first reaches 1/2, 1/4, 3/4 (``nan`` if never);
    edges : the bins of the copy weight's density; dip, dip_below : ``(n_pairs,)`` ``_dip_ratio`` at the
    mean ``P_sw`` and at half of it; odds_top : ``(n_pairs,)`` the log odds at ``P``; acc_gap :
    ``(n_pairs,)`` the held-out accuracy of the copying state minus the other's at ``P``.
    """

    P: float
    P_eff: np.ndarray
    log_odds: np.ndarray
    copy_mass: np.ndarray
    P_sw: np.ndarray
    P25: np.ndarray
    P75: np.ndarray
    edges: np.ndarray
    dip: np.ndarray
    dip_below: np.ndarray
    odds_top: np.ndarray
    acc_gap: np.ndarray

    @property
    def width(self) -> np.ndarray:
        """``P75 / P25`` per pair of chains: the window over which the weight moves."""
        return self.P75 / self.P25

    _LABELS = {"P_sw": "P_sw: copy mass 1/2", "P25": "P_25: copy mass 1/4", "P75": "P_75: copy mass 3/4",
               "width": "window P_75 / P_25", "dip": "dip ratio at P_sw", "dip_below": "dip ratio at P_sw / 2",
               "odds_top": "log odds at P", "acc_gap": "accuracy gain of the copying state at P"}

    def table(self) -> pd.DataFrame:
        """:meth:`summary` as a pandas ``DataFrame``: one row per quantity (named in words), its mean over
        the pairs of chains and its standard error."""
        import pandas as pd

        s = self.summary()
        return pd.DataFrame({"mean over pairs of chains": [s[k] for k in self._LABELS],
                             "s.e.": [s[k + "_se"] for k in self._LABELS]},
                            index=pd.Index(list(self._LABELS.values()), name="quantity"))

    def summary(self) -> dict:
        """Means over the pairs of chains, and standard errors (``*_se``), as plain floats."""
        out = {}
        for name in ("P_sw", "P25", "P75", "width", "dip", "dip_below", "odds_top", "acc_gap"):
            v = getattr(self, name)
            out[name], out[name + "_se"] = float(v.mean()), float(_se(v))
        return out


def induction_switch(states: InductionStates, *, n_grid: int = 121, n_bins: int = 25) -> InductionSwitch:
    """The posterior's switch along ``beta P``, per pair of chains, from the restricted ladders of
    :func:`copylib.analysis.induction.sample_induction_states`.

    Parameters
    ----------
    states : InductionStates
        The restricted ladders; their lowest non-zero rung sets the smallest ``beta P``.
    n_grid : int >= 2
        Points of the geometric ``beta P`` grid on which the crossings are interpolated (in ``ln P``).
    n_bins : int >= 2
        Bins of the copy weight on [0, 1] for the density and its dip at ``c_split``.

    Returns
    -------
    InductionSwitch
    """
    check_instance("states", states, InductionStates)
    n_grid, n_bins = check_int("n_grid", n_grid, 2), check_int("n_bins", n_bins, 2)
    P = float(states.P)
    P_eff = np.geomspace(P * states.betas[1], P, n_grid)
    log_odds = states.log_odds(P_eff / P)
    cross = {q: np.exp([interpolate_crossing(np.log(P_eff), lo - np.log(q / (1 - q))) for lo in log_odds])
             for q in (0.5, 0.25, 0.75)}  # per pair of chains: where Pr(C) first reaches q
    edges = np.linspace(0, 1, n_bins + 1)
    c_split, P_sw = float(states.c_split), float(np.mean(cross[0.5]))
    if np.isfinite(P_sw):
        dip = _dip_ratio(states.c1_density(P_sw / P, edges), edges, c_split)
        dip_below = _dip_ratio(states.c1_density(P_sw / 2 / P, edges), edges, c_split)  # control: one state
    else:  # some pair of chains never reaches 1/2: no switch to look at
        dip = dip_below = np.full(log_odds.shape[0], np.nan)
    return InductionSwitch(P=P, P_eff=P_eff, log_odds=log_odds, copy_mass=1 / (1 + np.exp(-log_odds)),
                           P_sw=cross[0.5], P25=cross[0.25], P75=cross[0.75], edges=edges, dip=dip,
                           dip_below=dip_below, odds_top=log_odds[:, -1],
                           acc_gap=states.accuracy[1].mean(-1) - states.accuracy[0].mean(-1))


@dataclass(frozen=True)
class LadderDiagnostics:
    """Chain diagnostics of the restricted ladders, per region, rung and observable.

    observables : ``("c1", "U_data")``; rhat, ess_bulk, ess_tail, drift_z : ``(2, K, 2)`` (region, rung,
    observable), from :func:`copylib.inference.diagnostics.chain_diagnostics` over the chains of one region
    at one rung; n_chains, n_draws : the chains and kept draws per chain.
    """

    observables: tuple
    rhat: np.ndarray
    ess_bulk: np.ndarray
    ess_tail: np.ndarray
    drift_z: np.ndarray
    n_chains: int
    n_draws: int

    def drift_limit(self, alpha: float = 0.01) -> float:
        """The level that the largest ``|drift z|`` of stationary chains exceeds with probability ``alpha``:
        with ``R`` chains each z is Student-t with ``R - 1`` degrees of freedom, Bonferroni over all entries."""
        if not 0 < alpha < 1:
            raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
        return float(stats.t.isf(alpha / (2 * self.drift_z.size), self.n_chains - 1))

    def table(self) -> pd.DataFrame:
        """The worst value of each diagnostic per region and observable, over the rungs (a pandas ``DataFrame``)."""
        import pandas as pd

        rows = {}
        for r, region in enumerate(("non-copying", "copying")):
            for o, name in enumerate(self.observables):
                rows[(region, name)] = {"largest R-hat": self.rhat[r, :, o].max(),
                                        "smallest ESS bulk": self.ess_bulk[r, :, o].min(),
                                        "smallest ESS tail": self.ess_tail[r, :, o].min(),
                                        "largest |drift z|": self.drift_z[r, :, o].max()}
        return pd.DataFrame(rows).T.rename_axis(["region", "observable"])


def ladder_diagnostics(states: InductionStates) -> LadderDiagnostics:
    """R-hat, bulk and tail ESS and half-chain drift of ``c^(1)`` and ``U_data`` at every rung of each region.

    Parameters
    ----------
    states : InductionStates
        The restricted ladders of :func:`copylib.analysis.induction.sample_induction_states` (``n_chains >= 2``,
        at least 8 kept draws per chain).

    Returns
    -------
    LadderDiagnostics
    """
    check_instance("states", states, InductionStates)
    x = np.stack([states.c1, states.u_data], -1)  # (region, K, chains, draws, observable)
    diag = [[chain_diagnostics(x[r, k]) for k in range(x.shape[1])] for r in range(2)]
    field = {name: np.array([[getattr(d, name) for d in row] for row in diag])
             for name in ("rhat", "ess_bulk", "ess_tail", "drift_z")}
    return LadderDiagnostics(observables=("c1", "U_data"), n_chains=int(x.shape[2]), n_draws=int(x.shape[3]), **field)


@dataclass(frozen=True)
class OneLayerSwitch:
    """The one-layer posterior's switch along ``beta P`` on the restricted ladders' sequences.

    P_eff : ``(n_P,)`` the sizes ``beta P``; c1 : ``(n_P, n_chains)`` chain means of the copy weight;
    copy_share : ``(n_chains, n_P)`` each chain's share of draws with copy weight above ``c_split``;
    P_sw : ``(n_chains,)`` where a chain's share first reaches 1/2 along ``P_eff`` (interpolated in ``ln P``,
    ``nan`` if never); c_split : the border of the copying region.
    """

    P_eff: np.ndarray
    c1: np.ndarray
    copy_share: np.ndarray
    P_sw: np.ndarray
    c_split: float


def one_layer_switch(states: InductionStates, spec: InductionSpec, P_eff: npt.ArrayLike, *, n_chains: int = 4,
                     n_steps: int = 1000, n_warmup: int = 300, thin: int = 5, seed: int = 0,
                     cache: bool = False) -> OneLayerSwitch:
    """MALA on the one-layer collapsed posterior (layer 1 alone on the copy task, ``spec.layer1``) of the ladders'
    sequences scaled to ``beta P`` sequences, with the empirical law of the ladders' data (as the ladders' rungs).

    Parameters
    ----------
    states : InductionStates
        From :func:`copylib.analysis.induction.sample_induction_states`: its sequences and ``c_split``.
    spec : InductionSpec
        The ladders' spec; ``spec.layer1`` is the one-layer network with the same sizes and scales.
    P_eff : array_like, shape (n_P,)
        Sizes ``beta P`` in ``(0, P]``, strictly increasing.
    n_chains : int >= 2
        Chains per size, from prior draws.
    n_steps, n_warmup, thin, seed, cache :
        Sampling steps after the warmup, warmup steps, thinning, the torch seed, the result cache
        (:func:`copylib.inference.posterior_sampling.sample_collapsed_posterior`).

    Returns
    -------
    OneLayerSwitch
    """
    check_instance("states", states, InductionStates)
    check_instance("spec", spec, InductionSpec)
    P = float(states.P)
    P_eff = as_real_array("P_eff", P_eff)
    check_finite("P_eff", P_eff)
    if P_eff.ndim != 1 or P_eff.size < 2 or not ((P_eff > 0).all() and (P_eff <= P).all() and
                                                 (np.diff(P_eff) > 0).all()):
        raise ValueError(f"P_eff must be 1-d, strictly increasing, in (0, {P:g}], with at least 2 entries")
    n_chains, seed = check_int("n_chains", n_chains, 2), check_int("seed", seed, 0)
    C = cooccurrence(one_hot(np.asarray(states.tokens), spec.V))  # (L, L, V, V), linear in the sequence counts
    C = np.repeat((P_eff / P)[:, None, None, None, None] * C[None], n_chains, 0)
    run = sample_collapsed_posterior(C, spec.layer1, len(C), n_steps, torch.Generator().manual_seed(seed),
                                     n_warmup=n_warmup, thin=thin, record="attention", cache=cache)
    c = np.asarray(layer1_copy_weight(torch.as_tensor(run.samples["A"]))).reshape(P_eff.size, n_chains, -1)
    c_split = float(states.c_split)
    share = (c > c_split).mean(-1).T  # (n_chains, n_P)
    P_sw = np.exp([interpolate_crossing(np.log(P_eff), row - 0.5) for row in share])
    return OneLayerSwitch(P_eff=P_eff, c1=c.mean(-1), copy_share=share, P_sw=P_sw, c_split=c_split)
