"""Softmax attention where chains no longer hop: the log-odds of the two basins by umbrella sampling along ``c``.

At ``L = 64`` the plug-in barrier at ``P3`` is about 6 nats and the paired chains of
:mod:`copylib.analysis.softmax_large_L` do not hop. Here ``K`` windows, each the collapsed posterior
(:class:`copylib.posterior.targets.CollapsedPosterior`) plus a bias ``spring/2 (c - c_k)^2`` on the copy
weight ``c``, are sampled by the book's MALA with the gap move (:func:`copylib.inference.langevin.langevin`),
and MBAR (pymbar) combines them; only the biases differ between windows, so MBAR needs only ``c``.

* :func:`windows_log_odds` -- MBAR on the draws of ``c`` of one data set's windows: the log-odds
  ``ln p(c >= c_div) / p(c < c_div)`` of the unbiased posterior (the free-energy difference
  ``Omega_pool - Omega_copy`` of the basins);
* :func:`umbrella_log_odds` -- the whole measurement at one ``L``: the plug-in ``P3``, ``c*`` and sharpness,
  the windows on ``n_data`` data sets, their diagnostics, the comparison with the plug-in log-odds at the
  same ``P`` (and so ``P3`` from sampling), and optionally the paired chains of
  :func:`copylib.analysis.softmax.sample_two_starts` on the same data sets (the validation where chains hop).

MBAR's own error bars assume independent draws; the errors here come from the spread over independent
data sets instead (jackknife), which also holds the data sets' own (quenched) spread.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import torch
from scipy.special import expit, logsumexp

from ..arguments import as_real_array, check_finite, check_int, check_positive
from ..inference.diagnostics import effective_sample_size, half_drift_z, split_rhat
from ..inference.free_energy import pymbar_module
from ..inference.langevin import langevin
from ..model.statistics import cooccurrence
from ..model.task import copy_task
from ..posterior.order_parameters import copy_weight
from ..posterior.targets import CollapsedPosterior
from ..theory.softmax_marginal import finite_size_cumulants, finite_size_row, plugin_marginal
from .softmax import planted_init, planted_logits, sample_two_starts
from .softmax_large_L import jackknife_se, logit_share

__all__ = ["UmbrellaLogOdds", "umbrella_log_odds", "windows_log_odds"]


def _mbar_log_odds(c: np.ndarray, centres: np.ndarray, spring: float, c_div: float) -> tuple[float, float]:
    """Checked input: ``(log-odds, smallest overlap of neighbouring windows)`` for draws ``c (K, n)``."""
    K, n = c.shape
    flat = c.ravel()
    u = 0.5 * spring * (flat[None, :] - centres[:, None]) ** 2  # reduced bias of every draw in every window
    mbar = pymbar_module().MBAR(u, np.full(K, n), verbose=False, initialize="BAR")
    log_w = -logsumexp(math.log(n) + mbar.f_k[:, None] - u, axis=0)  # weights of the unbiased law (bias 0)
    above = flat >= c_div
    overlap = np.asarray(mbar.compute_overlap()["matrix"])
    return float(logsumexp(log_w[above]) - logsumexp(log_w[~above])), float(np.diag(overlap, 1).min())


def windows_log_odds(c: npt.ArrayLike, centres: npt.ArrayLike, spring: float, c_div: float) -> float:
    """The log-odds ``ln p(c >= c_div) / p(c < c_div)`` of the unbiased law, by MBAR over harmonic windows.

    Parameters
    ----------
    c : array ``(K >= 2, n >= 2)``
        Row ``k``: draws of window ``k``, whose law is the unbiased one times ``exp(-spring/2 (c - c_k)^2)``.
    centres : array ``(K,)``
        The ``c_k``, strictly increasing.
    spring : float > 0
        The spring constant of every window (nats per unit ``c`` squared).
    c_div : float
        The dividing value; draws must lie on both sides of it.
    """
    c = as_real_array("c", c)
    if c.ndim != 2 or c.shape[0] < 2 or c.shape[1] < 2:
        raise ValueError(f"c must have shape (K >= 2, n >= 2) (window, draw), got {c.shape}")
    check_finite("c", c)
    centres = as_real_array("centres", centres)
    if centres.shape != c.shape[:1] or not np.isfinite(centres).all() or (np.diff(centres) <= 0).any():
        raise ValueError(f"centres must hold {c.shape[0]} finite, strictly increasing window centres, got {centres}")
    spring = check_positive("spring", spring)
    c_div = float(as_real_array("c_div", c_div))
    if not (c.min() < c_div <= c.max()):
        raise ValueError(f"c_div must lie inside the range of the draws of c ({c.min():.4g}, {c.max():.4g}], "
                         f"got {c_div}")
    return _mbar_log_odds(c, centres, spring, c_div)[0]


class _BiasedTarget:
    """The collapsed posterior of chain ``r`` plus ``spring/2 (c - centre_r)^2``; the bias's gradient by autograd."""

    def __init__(self, C: np.ndarray, spec, centres: np.ndarray, spring: float) -> None:
        self.posterior = CollapsedPosterior(C, spec, len(C))
        self.centres = torch.as_tensor(centres, dtype=torch.float64)
        self.spring = spring

    def bias(self, g: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        c = copy_weight(self.posterior.attention(g, b))
        return 0.5 * self.spring * (c - self.centres) ** 2

    def energy(self, params: dict) -> torch.Tensor:
        return self.posterior.energy(params) + self.bias(params["g"], params["b"])

    def energy_and_grad(self, params: dict) -> tuple[torch.Tensor, dict]:
        E, grads = self.posterior.energy_and_grad(params)
        with torch.enable_grad():
            g = params["g"].detach().requires_grad_(True)
            bias = self.bias(g, params["b"])
            (dg,) = torch.autograd.grad(bias.sum(), g)
        return E + bias.detach(), {"g": grads["g"] + dg, "b": grads["b"]}  # softmax ignores b


@dataclass(frozen=True)
class UmbrellaLogOdds:
    """The basins' log-odds at one ``(L, P)`` by umbrella sampling: see :func:`umbrella_log_odds`.

    Attributes
    ----------
    L, V, P : int
    c_div : float
        The plug-in ``c*`` at ``P3``, which splits the basins.
    centres : array ``(K,)``
        The windows' centres in ``c``.
    spring : float
        The windows' spring constant.
    data_log_odds : array ``(n_data,)``
        ``ln p_copy / (1 - p_copy)`` of each data set (MBAR over its windows).
    half_log_odds : array ``(n_data, 2)``
        The same from the first and from the second half of every window's draws (a drift between them
        shows windows that have not relaxed).
    log_odds, log_odds_err : float
        The log-odds of the copy-basin mass pooled over data sets (as the book's paired chains report it) and
        its leave-one-data-set-out jackknife error.
    plugin_log_odds, plugin_err : float
        The plug-in marginal's log-odds at ``P`` (Sobol set 21) and ``|set 21 - set 22|``.
    z : float
        ``(log_odds - plugin_log_odds) / hypot(log_odds_err, plugin_err)``.
    plugin_P3, sharpness : float
        The plug-in ``P3`` and its log-odds slope per unit ``ln P``.
    P3, P3_err : float
        ``P exp(-log_odds / sharpness)``: where the sampled log-odds crosses zero if its slope is the
        plug-in's, and its error from ``log_odds_err`` alone.
    rhat, ess : arrays ``(K,)``
        Per window, the worst split R-hat (each chain's halves as two chains) and the smallest bulk ESS of
        ``c`` over the data sets (ArviZ).
    overlap : float
        The smallest MBAR overlap between neighbouring windows, over the data sets.
    accept : tuple ``(min, max)``
        MALA acceptance of the window chains.
    direct_log_odds : array ``(n_data,)`` or None
        With ``direct_steps``: the log-odds of each data set from two hopping chains
        (:func:`copylib.analysis.softmax.sample_two_starts`, gap move ``0.8``) split at ``c_div``.
    paired_diff, paired_err : float or None
        Mean over data sets of umbrella minus direct log-odds and its standard error ``sd / sqrt(n_data)``.
    direct_crossings : int or None
        The fewest crossings of ``c_div`` of any direct chain.
    """

    L: int
    V: int
    P: int
    c_div: float
    centres: np.ndarray
    spring: float
    data_log_odds: np.ndarray
    half_log_odds: np.ndarray
    log_odds: float
    log_odds_err: float
    plugin_log_odds: float
    plugin_err: float
    z: float
    plugin_P3: float
    sharpness: float
    P3: float
    P3_err: float
    rhat: np.ndarray
    ess: np.ndarray
    overlap: float
    accept: tuple
    direct_log_odds: np.ndarray | None = None
    paired_diff: float | None = None
    paired_err: float | None = None
    direct_crossings: int | None = None

    @property
    def drift_z(self) -> float:
        """``|mean d| / (sd(d) / sqrt(n_data))`` of the second-half minus first-half log-odds ``d`` of the data
        sets (:func:`~copylib.inference.diagnostics.half_drift_z`, each data set one chain of two "draws"):
        windows that still relax make it large."""
        return float(half_drift_z(self.half_log_odds[None])[0])

    @property
    def paired_z(self) -> float:
        """``paired_diff / paired_err`` (``nan`` without direct chains)."""
        return math.nan if self.paired_diff is None else self.paired_diff / self.paired_err


def _pooled(data_log_odds: np.ndarray) -> tuple[float, float]:
    """Log-odds of the mean copy-basin mass over data sets and its jackknife error."""
    share = expit(data_log_odds)
    loo = (share.sum() - share) / (share.size - 1)
    lo = float(np.log(share.mean() / (1 - share.mean())))
    return lo, jackknife_se(np.log(loo / (1 - loo)))


def umbrella_log_odds(L: int, V: int, n_data: int, n_steps: int, *, n_warmup: int, thin: int, seed: int,
                      P: int | None = None, n_windows: int = 24, c_range: tuple[float, float] | None = None,
                      spring: float | None = None, gap_step: float = 0.1, direct_steps: int | None = None,
                      n_draws: int = 8192) -> UmbrellaLogOdds:
    """The log-odds of the copy basin at one ``(L, P)`` by umbrella sampling along ``c``, against the plug-in.

    1. The plug-in marginal (:func:`copylib.theory.softmax_marginal.finite_size_cumulants` with ``n_draws``
       Sobol draws, ``t_step = 0.2``, seeds 21 and 22; :func:`~copylib.theory.softmax_marginal.finite_size_row`
       on set 21, ``rel_step = 1e-3``, as :func:`copylib.analysis.softmax_large_L.sample_near_p3`): ``P3``,
       ``c*`` and the sharpness; ``P`` defaults to ``P3`` rounded.
    2. ``n_data`` data sets from ``numpy.random.default_rng(seed)`` (the same as ``sample_two_starts([P], ...,
       seed=seed)`` draws). For each, ``n_windows`` windows with centres evenly spaced over ``c_range``
       (default: where the plug-in ``Omega(c)`` at ``P`` is within 10 nats of its minimum) and spring constant
       ``spring`` (default ``1 / spacing^2``), each one chain started at the uniform-copy logits of its centre
       and sampled by MALA with the gap move ``gap_step`` (``torch.Generator().manual_seed(seed)``):
       ``n_warmup`` adapting steps, then ``n_steps`` kept every ``thin``-th.
    3. :func:`windows_log_odds` per data set, split at ``c*``; the pooled log-odds, its jackknife error over
       data sets and the plug-in log-odds at ``P``.
    4. With ``direct_steps``: two chains per data set of :func:`~copylib.analysis.softmax.sample_two_starts`
       (gap move 0.8, ``n_warmup`` and ``thin`` as above) on the same data sets, and the paired difference.

    Raises ``ValueError`` naming the parameter for a bad argument, or if the plug-in marginal has no ``P3``.
    """
    L, V = check_int("L", L, 3), check_int("V", V, 2)
    n_data = check_int("n_data", n_data, 2)
    thin = check_int("thin", thin, 1)
    n_steps = check_int("n_steps", n_steps, 8 * thin)
    n_warmup = check_int("n_warmup", n_warmup, 0)
    seed = check_int("seed", seed, 0)
    K = check_int("n_windows", n_windows, 2)
    gap_step = check_positive("gap_step", gap_step)
    if direct_steps is not None:
        direct_steps = check_int("direct_steps", direct_steps, 8 * thin)
    if P is not None:
        P = check_int("P", P, 1)
    if c_range is not None:
        lo_hi = as_real_array("c_range", c_range)
        if lo_hi.shape != (2,) or not (0 < lo_hi[0] < lo_hi[1] < 1):
            raise ValueError(f"c_range must be a pair 0 < c_lo < c_hi < 1, got {c_range!r}")
    if spring is not None:
        spring = check_positive("spring", spring)
    sets = [finite_size_cumulants(L, V, np.random.default_rng(s), n_draws=n_draws, t_step=0.2) for s in (21, 22)]
    spec = sets[0][0]
    row = finite_size_row(spec, sets[0][1], rel_step=1e-3)
    if not math.isfinite(row.P3):
        raise ValueError(f"the plug-in marginal has no P3 at L = {L}, V = {V} (no two basins to sample)")
    P = int(round(row.P3)) if P is None else P
    c_div = float(row.barrier)
    margs = [plugin_marginal(float(P), spec, cu) for _, cu in sets]
    plugin = [float(logit_share(m.mass(c_div), 10**12)) for m in margs]
    if c_range is None:
        inside = margs[0].c[margs[0].potential <= 10.0]
        lo_hi = np.array([inside[0], inside[-1]])
    centres = np.linspace(lo_hi[0], lo_hi[1], K)
    spring = spring if spring is not None else float(1 / (centres[1] - centres[0]) ** 2)
    data_rng = np.random.default_rng(seed)
    C = np.stack([cooccurrence(copy_task(P, L, V, data_rng)[0]) for _ in range(n_data)])
    C = np.repeat(C, K, axis=0)  # chain = (data set, window)
    all_centres = np.tile(centres, n_data)
    target = _BiasedTarget(C, spec, all_centres, spring)
    init = planted_init(np.log((L - 1) * all_centres / (1 - all_centres)), C, spec)
    del init["W"]
    out = langevin(target.energy, init, n_steps, 0.1, torch.Generator().manual_seed(seed), n_warmup=n_warmup,
                   thin=thin, record=lambda p: {"c": copy_weight(target.posterior.attention(p["g"], p["b"]))},
                   scales={"g": spec.sigma_G, "b": spec.sigma_b}, energy_grad=target.energy_and_grad,
                   direction={"g": planted_logits(1.0, L)}, direction_step=gap_step)
    c = out.samples["c"].reshape(n_data, K, -1)
    fits = [_mbar_log_odds(c[d], centres, spring, c_div) for d in range(n_data)]
    data_lo = np.array([f[0] for f in fits])
    halves = c[:, :, : 2 * (c.shape[2] // 2)].reshape(n_data, K, 2, -1)  # each chain's halves as two chains
    rhat = np.array([[split_rhat(halves[d, k]) for k in range(K)] for d in range(n_data)]).max(0)
    half_lo = np.array([[_mbar_log_odds(halves[d, :, h], centres, spring, c_div)[0] for h in (0, 1)]
                        for d in range(n_data)])
    ess = np.array([[effective_sample_size(c[d, k][None]) for k in range(K)] for d in range(n_data)]).min(0)
    lo, lo_err = _pooled(data_lo)
    sharp, P3 = float(row.sharpness), float(P * math.exp(-lo / float(row.sharpness)))
    extra = {}
    if direct_steps is not None:
        _, draws = sample_two_starts([P], spec, n_data, direct_steps, n_warmup=n_warmup, thin=thin, seed=seed,
                                     gap_step=0.8)
        cd = draws[P][0]  # (n_data, 2, n)
        direct = logit_share((cd >= c_div).mean((1, 2)), cd.shape[1] * cd.shape[2])
        diff = data_lo - direct
        above = (cd >= c_div).astype(int)
        extra = dict(direct_log_odds=direct, paired_diff=float(diff.mean()),
                     paired_err=float(diff.std(ddof=1) / math.sqrt(n_data)),
                     direct_crossings=int(np.abs(np.diff(above, axis=-1)).sum(-1).min()))
    return UmbrellaLogOdds(
        L=L, V=V, P=P, c_div=c_div, centres=centres, spring=spring, data_log_odds=data_lo, half_log_odds=half_lo, log_odds=lo,
        log_odds_err=lo_err, plugin_log_odds=plugin[0], plugin_err=abs(plugin[0] - plugin[1]),
        z=float((lo - plugin[0]) / math.hypot(lo_err, plugin[0] - plugin[1])), plugin_P3=float(row.P3),
        sharpness=sharp, P3=P3, P3_err=P3 * lo_err / sharp, rhat=rhat, ess=ess, overlap=min(f[1] for f in fits),
        accept=(float(out.accept_rate.min()), float(out.accept_rate.max())), **extra)
