"""Analyses of the causal-mask chapter: checks of the reduced action, the order in which rows switch,
agreement of training starts, and the shape of sampled draws.

* :func:`bimodality_coefficient` -- ``(g_1^2 + 1)/(g_2 + 3)`` of a sample (skewness
  ``g_1``, excess kurtosis ``g_2``): ``1/3`` for a Gaussian, ``5/9`` for a uniform
  distribution, ``1`` for two sharp states;
* :func:`gap_prior_variance` -- the prior push-forward of the logits onto one causal gap;
* :func:`plugin_agreement` -- the plug-in action against the exact evidence over data sets;
* :func:`coexistence_scan` -- the smallest sequence length with two minima of the one-gap action;
* :func:`start_agreement` -- Adam runs from two starts on several data sets;
* :func:`sampled_copy_weights` -- per-chain copy weights, their errors and the bimodality of draws;
* :func:`row_switch_order` -- the order in which rows reach half way (with
  :func:`copylib.analysis.transitions.half_way_point`), bootstrapped over chains;
* :func:`sample_two_start_copy_weights` -- MALA draws of the copy weight from a pooling and a
  copying start on several nested data sets (causal or cyclic softmax);
* :func:`no_jump_tests` -- the posterior "no jump" tests (no hysteresis, unimodality, monotone
  mean) with per-test verdicts and the chains' R-hat, ESS and drift (ArviZ).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import numpy.typing as npt
import torch
from scipy.stats import kurtosis, skew

from ..arguments import (
    as_real_array,
    check_finite,
    check_generator,
    check_grid,
    check_int,
    check_int_array,
    check_positive,
)
from ..inference.diagnostics import dataset_chain_diagnostics
from ..inference.map_training import nested_cooccurrence
from ..inference.posterior_sampling import sample_collapsed_posterior
from ..model.network import ModelSpec, attention, check_spec
from ..model.statistics import cooccurrence
from ..model.task import copy_task
from ..posterior.evidence import negative_log_evidence
from ..posterior.order_parameters import plugin_action_of_attention
from ..theory import causal as ct
from ..theory.results import FirstOrderPoint
from .softmax import planted_init, planted_logits
from .transitions import half_way_point

__all__ = [
    "NO_JUMP_TESTS",
    "CoexistenceScan",
    "GapPriorVariance",
    "NoJumpTests",
    "TwoStartDraws",
    "PluginAgreement",
    "RowSwitchOrder",
    "SampledCopyWeights",
    "StartAgreement",
    "bimodality_coefficient",
    "coexistence_scan",
    "gap_prior_variance",
    "no_jump_tests",
    "plugin_agreement",
    "row_switch_order",
    "sample_two_start_copy_weights",
    "sampled_copy_weights",
    "start_agreement",
]


def bimodality_coefficient(x: npt.ArrayLike, axis: int = -1) -> float | np.ndarray:
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


def _causal_softmax_spec(spec) -> ModelSpec:
    spec = check_spec(spec, kind="softmax", theory="the causal-attention analysis")
    if not spec.causal or spec.cyclic:
        raise ValueError("spec must be a causal softmax spec (kind='softmax', causal=True, cyclic=False)")
    return spec


@dataclass(frozen=True)
class GapPriorVariance:
    """Prior draws of the logits projected on the unit-gap direction (see :func:`gap_prior_variance`).

    Attributes
    ----------
    stiffness : float
        ``L - H_L``, the prior stiffness of one gap in all rows (``H_L`` the harmonic number).
    unit_norm2 : float
        Squared norm of the unit-gap logits (equal to ``stiffness``).
    relative_error : float
        Sample variance of the projected gap over ``sigma_G^2 / (L - H_L)``, minus 1.
    tolerance : float
        Five standard errors of a relative variance estimate, ``5 sqrt(2 / (n_draws - 1))``.
    """

    stiffness: float
    unit_norm2: float
    relative_error: float
    tolerance: float


def gap_prior_variance(spec: ModelSpec, rng: np.random.Generator, n_draws: int = 20_000) -> GapPriorVariance:
    """Push the logit prior forward to the causal gap ``Delta`` and compare its variance with ``sigma_G^2/(L - H_L)``.

    Parameters
    ----------
    spec : a causal softmax spec; rng : the generator of the prior draws;
    n_draws : number of prior draws of the ``L x L`` logits, ``>= 3``.
    """
    spec = _causal_softmax_spec(spec)
    check_generator("rng", rng)
    n_draws = check_int("n_draws", n_draws, 3)
    L = spec.L
    stiffness = float(L - np.sum(1 / np.arange(1, L + 1)))
    unit_gap = planted_logits(1.0, L, causal=True)
    unit_norm2 = float((unit_gap**2).sum())
    g = spec.sigma_G * rng.normal(size=(n_draws, L, L))
    Delta = np.einsum("nij,ij->n", g, unit_gap) / unit_norm2
    rel = float(Delta.var(ddof=1) / (spec.sigma_G**2 / stiffness) - 1)
    return GapPriorVariance(stiffness, unit_norm2, rel, float(5 * np.sqrt(2 / (n_draws - 1))))


@dataclass(frozen=True)
class PluginAgreement:
    """Copy-minus-average action from the exact evidence over data sets and from the plug-in formula.

    Attributes
    ----------
    exact_mean, exact_se, exact_sd : float
        Mean, its standard error and the spread (sd) over data sets of the exact difference (nats).
    plugin : float
        The plug-in difference (nats).
    relative_difference : float
        ``|exact_mean / plugin - 1|``.
    """

    exact_mean: float
    exact_se: float
    exact_sd: float
    plugin: float
    relative_difference: float


def plugin_agreement(spec: ModelSpec, P: int, n_sets: int, rng: np.random.Generator, Delta: float = 2.0
                     ) -> PluginAgreement:
    """The action of the causal copy state (gap ``Delta`` in every row) minus that of the average (``Delta = 0``).

    Parameters
    ----------
    spec : a causal softmax spec; P : sequences per data set, ``>= 1``;
    n_sets : data sets drawn with ``rng``, ``>= 2``; Delta : the gap of the copy state, ``> 0``.
    """
    spec = _causal_softmax_spec(spec)
    P = check_int("P", P, 1)
    n_sets = check_int("n_sets", n_sets, 2)
    check_generator("rng", rng)
    Delta = check_positive("Delta", Delta)
    C = np.stack([cooccurrence(copy_task(P, spec.L, spec.V, rng, cyclic=False)[0]) for _ in range(n_sets)])
    A = attention(planted_logits(np.array([0.0, Delta]), spec.L, causal=True), "softmax", causal=True)
    exact = negative_log_evidence(A[1], C, spec) - negative_log_evidence(A[0], C, spec)
    plugin = float(np.diff(plugin_action_of_attention(A, P, spec))[0])
    mean, sd = float(exact.mean()), float(exact.std(ddof=1))
    return PluginAgreement(mean, float(sd / np.sqrt(n_sets)), sd, plugin, abs(mean / plugin - 1))


@dataclass(frozen=True)
class CoexistenceScan:
    """One-gap transitions of the causal network along a scan of sequence lengths (see :func:`coexistence_scan`).

    Attributes
    ----------
    L : tuple of int
        The lengths scanned, increasing.
    transitions : tuple, per length, the :class:`copylib.theory.results.FirstOrderPoint`
        or ``None`` where the scan of ``P`` finds no coexistence window.
    first_L : int or None
        The smallest length with a coexistence window.
    last_L_without : int or None
        The length scanned just before ``first_L`` (``None`` if ``first_L`` is the first or missing).
    """

    L: tuple
    transitions: tuple
    first_L: int | None
    last_L_without: int | None

    def at(self, L: int) -> FirstOrderPoint | None:
        """The transition at the scanned length ``L``."""
        if L not in self.L:
            raise ValueError(f"L must be one of the scanned lengths {self.L}, got {L!r}")
        return self.transitions[self.L.index(L)]


def coexistence_scan(L_values: npt.ArrayLike, V: int, *, version: str = "mean_field",
                     P_range: tuple[float, float] = (1e3, 1e4),
                     n_scan: int = 2000) -> CoexistenceScan:
    """Scan causal softmax networks of lengths ``L_values`` (vocabulary ``V``) for two minima of the one-gap action.

    Parameters
    ----------
    L_values : strictly increasing integers ``>= 2``; V : vocabulary size, ``>= 2``;
    version, P_range, n_scan : passed to :func:`copylib.theory.causal.first_order_point`.
    """
    if isinstance(L_values, (str, bytes)) or not hasattr(L_values, "__iter__"):
        raise TypeError(f"L_values must be a sequence of integers, got {type(L_values).__name__}")
    Ls = tuple(check_int("L_values", n, 2) for n in L_values)
    if not Ls or any(b <= a for a, b in pairwise(Ls)):
        raise ValueError(f"L_values must be a non-empty, strictly increasing sequence, got {Ls}")
    V = check_int("V", V, 2)
    found = []
    for n in Ls:
        try:
            found.append(ct.first_order_point(ModelSpec(n, V, kind="softmax", cyclic=False, causal=True),
                                                   version=version, P_range=P_range, n_scan=n_scan))
        except ValueError as exc:
            if "no coexistence" not in str(exc):
                raise
            found.append(None)
    i = next((k for k, t in enumerate(found) if t is not None), None)
    first = None if i is None else Ls[i]
    before = None if i is None or i == 0 else Ls[i - 1]
    return CoexistenceScan(Ls, tuple(found), first, before)


@dataclass(frozen=True)
class StartAgreement:
    """Final copy weights of training runs from two starts on several data sets (see :func:`start_agreement`).

    Attributes
    ----------
    start_gap : float
        Largest ``|c(second start) - c(first start)|`` over data sets and sample sizes.
    deviation : float
        Largest ``|c(first start) - c_theory|``.
    """

    start_gap: float
    deviation: float


def start_agreement(c: npt.ArrayLike, c_theory: npt.ArrayLike) -> StartAgreement:
    """Compare runs ``c`` of shape ``(n_sets, n_P, 2)`` (last axis: the two starts) with ``c_theory`` ``(n_P,)``.

    ``n_sets >= 2``; every value finite.
    """
    c = as_real_array("c", c)
    if c.ndim != 3 or c.shape[0] < 2 or c.shape[2] != 2:
        raise ValueError(f"c must have shape (n_sets >= 2, n_P, 2), got {c.shape}")
    check_finite("c", c)
    c_theory = as_real_array("c_theory", c_theory)
    if c_theory.shape != (c.shape[1],):
        raise ValueError(f"c_theory must have shape ({c.shape[1]},) (n_P of c), got {c_theory.shape}")
    check_finite("c_theory", c_theory)
    return StartAgreement(float(np.abs(c[..., 1] - c[..., 0]).max()), float(np.abs(c[..., 0] - c_theory).max()))


@dataclass(frozen=True)
class SampledCopyWeights:
    """Copy weights of sampled chains from two starts at several sample sizes (see :func:`sampled_copy_weights`).

    Attributes
    ----------
    mean, se : ``(n_P, 2)``
        Mean over chains of each start of the chain-mean copy weight, and its standard error.
    mean_all, se_all : ``(n_P,)``
        The same over the chains of both starts.
    z_starts : ``(n_P,)``
        ``|mean[:, 1] - mean[:, 0]|`` in standard errors of the difference.
    bimodality : ``(n_P,)``
        :func:`bimodality_coefficient` of the pooled draws of the mean copy weight.
    row_chain_means : ``(n_P, 2 n_chains, n_rows)``
        Chain means of every row's copy weight (the chains of both starts).
    """

    mean: np.ndarray
    se: np.ndarray
    mean_all: np.ndarray
    se_all: np.ndarray
    z_starts: np.ndarray
    bimodality: np.ndarray
    row_chain_means: np.ndarray


def sampled_copy_weights(c_rows: npt.ArrayLike) -> SampledCopyWeights:
    """Summarise per-row copy weights ``c_rows`` of shape ``(n_P, 2, n_chains, n_draws, n_rows)``.

    Axis 1 is the start (two starts); ``n_chains >= 2``, ``2 n_chains n_draws >= 4``; finite values.
    The copy weight of a draw is its mean over rows.
    """
    c_rows = as_real_array("c_rows", c_rows)
    if c_rows.ndim != 5 or c_rows.shape[1] != 2 or c_rows.shape[2] < 2 or 2 * c_rows.shape[2] * c_rows.shape[3] < 4:
        raise ValueError(f"c_rows must have shape (n_P, 2, n_chains >= 2, n_draws, n_rows), got {c_rows.shape}")
    check_finite("c_rows", c_rows)
    n_P, _, n_chains, _, n_rows = c_rows.shape
    c = c_rows.mean(-1)  # (P, start, chain, draw)
    chain_means = c.mean(-1)
    mean, se = chain_means.mean(-1), chain_means.std(-1, ddof=1) / np.sqrt(n_chains)
    pooled = chain_means.reshape(n_P, -1)
    se_all = pooled.std(-1, ddof=1) / np.sqrt(2 * n_chains)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.abs(mean[:, 1] - mean[:, 0]) / np.hypot(se[:, 0], se[:, 1])
    z = np.where(mean[:, 1] == mean[:, 0], 0.0, z)
    return SampledCopyWeights(mean, se, pooled.mean(-1), se_all, z,
                              np.asarray(bimodality_coefficient(c.reshape(n_P, -1), axis=1)),
                              c_rows.reshape(n_P, 2 * n_chains, -1, n_rows).mean(2))


@dataclass(frozen=True)
class RowSwitchOrder:
    """Where groups of rows reach half way, and how robustly they are ordered (see :func:`row_switch_order`).

    Attributes
    ----------
    P_half : ``(n_rows,)``
        Half-way ``P`` of every row's chain-averaged copy weight.
    group_half : ``(n_groups,)``
        Mean half-way ``P`` of each group of consecutive rows.
    ordered_fraction : float
        Fraction of bootstrap resamples (chains resampled within each ``P``) in which the
        group means increase strictly from the first group to the last.
    """

    P_half: np.ndarray
    group_half: np.ndarray
    ordered_fraction: float


def row_switch_order(P: npt.ArrayLike, row_chain_means: npt.ArrayLike, rng: np.random.Generator, *, n_groups: int = 3,
                     n_boot: int = 200) -> RowSwitchOrder:
    """Half-way points of the rows' copy weights along ``P``, in ``n_groups`` groups of consecutive rows.

    Parameters
    ----------
    P : ``(n_P,)`` increasing sample sizes (see :func:`copylib.analysis.transitions.half_way_point`);
    row_chain_means : ``(n_P, n_chains, n_rows)`` chain means per row (``n_rows >= n_groups``), e.g.
        :attr:`SampledCopyWeights.row_chain_means`; every row must change between the first and last ``P``;
    rng : the generator of the bootstrap; n_groups : ``>= 2``; n_boot : bootstrap resamples, ``>= 1``.
    """
    y = as_real_array("row_chain_means", row_chain_means)
    if y.ndim != 3:
        raise ValueError(f"row_chain_means must have shape (n_P, n_chains, n_rows), got {y.shape}")
    check_finite("row_chain_means", y)
    check_generator("rng", rng)
    n_groups = check_int("n_groups", n_groups, 2)
    n_boot = check_int("n_boot", n_boot, 1)
    if y.shape[2] < n_groups:
        raise ValueError(f"n_groups must be at most the number of rows {y.shape[2]}, got {n_groups}")
    groups = np.array_split(np.arange(y.shape[2]), n_groups)
    P_half = half_way_point(P, y.mean(1))
    ordered = []
    for _ in range(n_boot):
        pick = rng.integers(0, y.shape[1], size=y.shape[:2])
        h = half_way_point(P, np.take_along_axis(y, pick[..., None], 1).mean(1))
        ordered.append(bool(np.all(np.diff([h[g].mean() for g in groups]) > 0)))
    return RowSwitchOrder(P_half, np.array([P_half[g].mean() for g in groups]), float(np.mean(ordered)))



@dataclass(frozen=True)
class TwoStartDraws:
    """Draws of the copy weight from two starts (see :func:`sample_two_start_copy_weights`).

    Attributes
    ----------
    c : ``(n_sets, n_P, 2, n_chains, n_draws)``
        Copy weight of every draw, the mean of ``A_{l,l-1}`` over the rows with a target;
        axis 2 is the start (0: pooling, ``g = 0``; 1: planted copy state).
    accept_rate : ``(n_sets, n_P, 2, n_chains)``
        MALA acceptance rate of every chain.
    """

    c: np.ndarray
    accept_rate: np.ndarray


def sample_two_start_copy_weights(P: npt.ArrayLike, spec: ModelSpec, data_seeds: Sequence[int], n_chains: int,
                                  n_steps: int, *, n_warmup: int, thin: int, seed: int, planted_gap: float = 3.0,
                                  cache: bool = False
                                  ) -> TwoStartDraws:
    """MALA on the collapsed posterior of nested data sets, ``n_chains`` chains from each of two starts.

    Parameters
    ----------
    P : increasing sample sizes (``>= 1``); spec : a softmax spec, cyclic or causal (non-cyclic);
    data_seeds : one seed per data set (``numpy.random.default_rng(seed)`` draws its nested
        sequences, :func:`copylib.inference.map_training.nested_cooccurrence`), at least one;
    n_chains : chains per start, data set and ``P`` (``>= 1``); n_steps, n_warmup, thin : the sampler's
        (:func:`copylib.inference.posterior_sampling.sample_collapsed_posterior`); seed : the sampler's
        ``torch.Generator`` seed; planted_gap : the gap of the copy start (``> 0``, every row,
        :func:`copylib.analysis.softmax.planted_init`); cache : keep the run in the result cache.

    All chains run in one batch.
    """
    spec = check_spec(spec, kind="softmax", theory="sample_two_start_copy_weights")
    if not (spec.cyclic or spec.causal):
        raise ValueError("spec must be cyclic or causal: the copy weight of a non-cyclic, unmasked network "
                         "would count the entry A[1, L], which has no target")
    P = check_int_array("P", P, 1, increasing=True).tolist()
    data_seeds = check_int_array("data_seeds", data_seeds, 0).tolist()
    n_chains = check_int("n_chains", n_chains, 1)
    seed = check_int("seed", seed, 0)
    planted_gap = check_positive("planted_gap", planted_gap)
    C = np.concatenate([nested_cooccurrence(P, spec, np.random.default_rng(s)) for s in data_seeds])
    C = np.repeat(C, 2 * n_chains, axis=0)  # chain = (set, P, start, k)
    init = planted_init(np.tile(np.repeat([0.0, planted_gap], n_chains), len(data_seeds) * len(P)), C, spec)
    del init["W"]  # the readout is integrated out
    run = sample_collapsed_posterior(C, spec, len(C), n_steps, torch.Generator().manual_seed(seed),
                                     n_warmup=n_warmup, init=init, thin=thin, record="copy_weight", cache=cache)
    shape = (len(data_seeds), len(P), 2, n_chains)
    c = np.asarray(run.samples["c"]) * (spec.L / float(spec.target.sum()))  # mean over the rows with a target
    return TwoStartDraws(c.reshape(*shape, -1), np.asarray(run.accept_rate).reshape(shape))


NO_JUMP_TESTS = ("no hysteresis", "unimodal", "monotone mean")


@dataclass(frozen=True)
class NoJumpTests:
    """The posterior "no jump" tests on draws from two starts, with the chains' diagnostics (:func:`no_jump_tests`).

    Attributes
    ----------
    P : ``(n_P,)`` the sample sizes.
    mean : ``(n_sets, n_P)``
        Posterior mean copy weight of each data set (all chains of both starts).
    start_difference, z_starts : ``(n_P,)``
        Copy start minus pooling start (chain means, averaged over data sets) and its size in standard
        errors (the spread of the chain means within each data set and start).
    bimodality : ``(n_sets, n_P)``
        :func:`bimodality_coefficient` of the pooled draws of each data set.
    rhat, ess_bulk, ess_tail, drift_z : ``(n_P,)``
        :func:`copylib.inference.diagnostics.dataset_chain_diagnostics` of the copy weight at each ``P``
        (the chains of both starts on a data set compared with each other): the worst R-hat over the data
        sets, the bulk and tail ESS summed over them and the half-chain drift z.
    z_max, bimodality_max : float
        The thresholds of the first two tests.
    """

    P: np.ndarray
    mean: np.ndarray
    start_difference: np.ndarray
    z_starts: np.ndarray
    bimodality: np.ndarray
    rhat: np.ndarray
    ess_bulk: np.ndarray
    ess_tail: np.ndarray
    drift_z: np.ndarray
    z_max: float
    bimodality_max: float

    @property
    def verdicts(self) -> dict[str, bool]:
        """Pass (``True``) or fail of every test in ``NO_JUMP_TESTS``: starts within ``z_max`` standard errors
        at every ``P``; bimodality below ``bimodality_max`` for every data set and ``P``; the mean rising at
        every step of ``P`` for every data set."""
        return {"no hysteresis": bool((self.z_starts < self.z_max).all()),
                "unimodal": bool((self.bimodality < self.bimodality_max).all()),
                "monotone mean": bool((np.diff(self.mean, axis=1) > 0).all())}

    def mixed(self, rhat_max: float, ess_min: float, drift_max: float = 4.0) -> bool:
        """True if R-hat < ``rhat_max``, bulk and tail ESS > ``ess_min`` and drift z < ``drift_max`` at every ``P``."""
        return bool((self.rhat < rhat_max).all() and (self.ess_bulk > ess_min).all()
                    and (self.ess_tail > ess_min).all() and (self.drift_z < drift_max).all())


def no_jump_tests(P: npt.ArrayLike, c: npt.ArrayLike, *, z_max: float = 4.0, bimodality_max: float = 5 / 9
                  ) -> NoJumpTests:
    """Run the posterior "no jump" tests on copy-weight draws ``c`` from two starts.

    Parameters
    ----------
    P : ``(n_P,)`` strictly increasing sample sizes, ``n_P >= 2``;
    c : ``(n_sets, n_P, 2, n_chains, n_draws)`` finite draws (axis 2: pooling and copy start), e.g.
        :attr:`TwoStartDraws.c`; ``n_chains >= 2``, ``n_draws >= 8``; the data at successive ``P`` should be
        nested, so that the mean of one data set is compared along ``P`` on the same sequences;
    z_max : threshold of the start difference in standard errors, ``> 0``;
    bimodality_max : threshold of the bimodality coefficient, in ``(1/3, 1)`` (``5/9``: a uniform distribution).
    """
    P = check_grid("P", P, n_min=2, increasing=True)
    c = as_real_array("c", c)
    if c.ndim != 5 or c.shape[1] != P.size or c.shape[2] != 2 or c.shape[3] < 2 or c.shape[4] < 8:
        raise ValueError(f"c must have shape (n_sets, n_P = {P.size}, 2, n_chains >= 2, n_draws >= 8), got {c.shape}")
    check_finite("c", c)
    z_max = check_positive("z_max", z_max)
    bimodality_max = float(bimodality_max)
    if not 1 / 3 < bimodality_max < 1:
        raise ValueError(f"bimodality_max must be in (1/3, 1), got {bimodality_max}")
    n_sets, n_P, _, n_chains, n_draws = c.shape
    chain_means = c.mean(-1)  # (set, P, start, chain)
    diff = chain_means[:, :, 1].mean(-1) - chain_means[:, :, 0].mean(-1)  # (set, P)
    var = (chain_means.var(-1, ddof=1) / n_chains).sum(2)  # (set, P): variance of each difference
    d, se = diff.mean(0), np.sqrt(var.sum(0)) / n_sets
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(d == 0, 0.0, np.abs(d) / se)
    pooled = c.reshape(n_sets, n_P, -1)
    diags = [dataset_chain_diagnostics(c[:, i].reshape(n_sets, 2 * n_chains, n_draws)) for i in range(n_P)]
    return NoJumpTests(P, pooled.mean(-1), d, z, np.asarray(bimodality_coefficient(pooled, axis=-1)),
                       *(np.array([getattr(g, k) for g in diags], dtype=float)
                         for k in ("rhat", "ess_bulk", "ess_tail", "drift_z")), z_max, bimodality_max)
