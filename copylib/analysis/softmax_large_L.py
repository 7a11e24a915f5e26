"""Softmax attention beyond ``L = 32``: basin weights of paired chains near ``P3`` against the plug-in marginal.

The softmax chapter's numbers at ``L >= 40`` come from the plug-in marginal of the copy weight
(:mod:`copylib.theory.softmax_marginal`). These functions measure, from chains run two per data set
(one started at pooling, one planted in the copy state, as
:func:`copylib.analysis.softmax.sample_two_starts` returns them), what the plug-in marginal predicts
there:

* ``_basin_weights`` -- per sample size, the copy-basin mass (the weight of the copy basin, draws
  with ``c >= c_div``) pooled over data sets with a jackknife error, its log-odds (the free-energy
  difference of the two basins), the spread of that log-odds between data sets with the chains'
  sampling noise removed (measured from the two chains of each data set), the basin means of ``c``
  and the jump between them, the paired difference of the two starts, and the crossings of ``c_div``;
* ``_log_odds_slope`` -- the change of the log-odds per unit of ``ln P`` (the sharpness of the
  jump), by least squares with its error;
* ``_bin_barrier`` -- the barrier of ``-ln p(c)`` above either basin's lowest point, from masses
  in bins of ``c`` (the same estimate from sampled draws and from the plug-in marginal);
* ``_bin_barrier`` -- that barrier from draws of chains grouped by data set, with a
  leave-one-data-set-out jackknife error;
* :func:`compare_with_plugin` -- all of these against the plug-in marginal at the same sizes, with
  z-scores that combine the sampling error with the plug-in's numerical error (two Sobol sets);
* :func:`sample_near_p3` -- the whole measurement at one ``L``: the plug-in ``P3`` and barrier, paired
  chains at ``P3`` and one size on each side, their convergence and the comparison;
* :func:`plugin_jump` -- the plug-in marginal's jump of the copy weight between its basins at ``P3``;
* :func:`plugin_error_by_L` -- the plug-in action against the exact evidence of independent data sets at
  each ``L``, between the states of the plug-in marginal's own branches (its error bound and the
  data-set spread of the evidence differences, size by size).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import pandas as pd

from ..arguments import (
    as_paired_arrays,
    as_real_array,
    check_finite,
    check_generator,
    check_grid,
    check_instance,
    check_int,
    check_positive,
)
from ..model.network import ModelSpec, check_spec
from ..theory.softmax_marginal import (
    FiniteSizeRow,
    RowCumulants,
    finite_size_cumulants,
    finite_size_row,
    marginal_branches,
    plugin_marginal,
)
from .softmax import basin_mean, sample_two_starts
from .softmax_evidence import ChainConvergence, chain_convergence, plugin_evidence_error

__all__ = ["BasinWeights", "NearP3", "PluginComparison", "PluginErrorByL", "compare_with_plugin", "plugin_error_by_L",
           "plugin_jump", "sample_near_p3"]


def _c_div(c_div) -> float:
    c_div = as_real_array("c_div", c_div)
    if c_div.ndim or not np.isfinite(c_div) or not 0 < c_div < 1:
        raise ValueError(f"c_div must be a single copy weight in (0, 1), got {c_div}")
    return float(c_div)


def _paired(name: str, c) -> np.ndarray:
    """``c`` as a finite float array ``(n_data >= 2, 2, n >= 2)``."""
    c = as_real_array(name, c)
    if c.ndim != 3 or c.shape[0] < 2 or c.shape[1] != 2 or c.shape[2] < 2:
        raise ValueError(f"{name} must have shape (n_data >= 2, 2, n >= 2) (data set, start, draw), got {c.shape}")
    check_finite(name, c)
    return c


def logit_share(p: npt.ArrayLike, n: int) -> np.ndarray:
    """``ln p/(1-p)`` with ``p`` kept ``1/(2n)`` away from 0 and 1 (a share of ``n`` draws)."""
    p = np.clip(p, 0.5 / n, 1 - 0.5 / n)
    return np.log(p / (1 - p))


def jackknife_se(replicates: np.ndarray) -> float:
    """Leave-one-out jackknife standard error from the replicates (last axis)."""
    G = replicates.shape[-1]
    return float(np.sqrt((G - 1) / G * ((replicates - replicates.mean(-1, keepdims=True)) ** 2).sum(-1)))


@dataclass(frozen=True)
class BasinWeights:
    """The two basins of the copy weight in paired chains at several sample sizes: see ``_basin_weights``.

    Attributes
    ----------
    P : array ``(n_P,)``
        The sample sizes, ascending.
    c_div : float
        The dividing copy weight.
    share, share_err : arrays ``(n_P,)``
        The copy-basin mass (fraction of all draws with ``c >= c_div``) and its leave-one-data-set-out
        jackknife error.
    log_odds, log_odds_err : arrays ``(n_P,)``
        ``ln share/(1 - share)`` (the free-energy difference ``Omega_pool - Omega_copy`` of the two
        basins, nats) and its jackknife error.
    data_log_odds : array ``(n_P, n_data)``
        The log-odds of each data set (its two chains pooled).
    spread_total : array ``(n_P,)``
        Standard deviation of ``data_log_odds`` over the data sets.
    spread_sampling : array ``(n_P,)``
        The part of it from the chains: the root mean of ``(lo_1 - lo_2)^2 / 4`` over the data sets,
        ``lo_j`` the log-odds of chain ``j`` (two chains on one data set differ by sampling alone).
    spread_data : array ``(n_P,)``
        The data-set (quenched) spread of the log-odds, ``sqrt(max(spread_total^2 - spread_sampling^2, 0))``.
    pool_mean, copy_mean, jump, jump_err : arrays ``(n_P,)``
        Basin means of ``c`` (all draws pooled), their difference and its jackknife error (``nan``
        where fewer than two data sets visit a basin).
    paired_d, paired_err : arrays ``(n_P,)``
        Mean over data sets of the copy-basin mass of the pooling-start chain minus that of the copy-start
        chain, and its standard error ``sd / sqrt(n_data)``: a hysteresis makes it negative.
    crossings : array ``(n_P, n_data, 2)`` of int
        Crossings of ``c_div`` between consecutive draws of every chain.
    """

    P: np.ndarray
    c_div: float
    share: np.ndarray
    share_err: np.ndarray
    log_odds: np.ndarray
    log_odds_err: np.ndarray
    data_log_odds: np.ndarray
    spread_total: np.ndarray
    spread_sampling: np.ndarray
    spread_data: np.ndarray
    pool_mean: np.ndarray
    copy_mean: np.ndarray
    jump: np.ndarray
    jump_err: np.ndarray
    paired_d: np.ndarray
    paired_err: np.ndarray
    crossings: np.ndarray

    @property
    def min_crossings(self) -> np.ndarray:
        """The fewest crossings of ``c_div`` of any chain, per ``P``."""
        return self.crossings.reshape(len(self.P), -1).min(1)


def _basin_weights(draws: Mapping[float, npt.ArrayLike | tuple], c_div: float) -> BasinWeights:
    """Basin weights, their data-set spread, the jump of ``c`` and the crossings of paired chains.

    Parameters
    ----------
    draws : mapping ``P -> c`` or ``P -> (c, ...)``
        Copy weights of shape ``(n_data, 2, n)`` (data set, start, draw; start 0 at pooling, 1
        planted in the copy state), ``n_data >= 2``, ``n >= 2``, the same ``n_data`` at every ``P``,
        as :func:`copylib.analysis.softmax.sample_two_starts` returns them (its first entry is used).
    c_div : float in ``(0, 1)``
        The dividing copy weight (e.g. the barrier of the plug-in marginal at ``P3``).

    Returns
    -------
    BasinWeights
        Errors are leave-one-data-set-out jackknife errors (the two chains of a data set left out
        together): they contain the autocorrelation within chains and the spread of the data sets.
        A share of ``n`` draws is kept ``1/(2n)`` away from 0 and 1 before taking log-odds.
    """
    if not hasattr(draws, "items") or len(draws) == 0:
        raise TypeError(f"draws must be a non-empty mapping P -> c, got {type(draws).__name__}")
    c_div = _c_div(c_div)
    Ps = sorted(draws)
    cs = [_paired("draws", draws[P][0] if isinstance(draws[P], tuple) else draws[P]) for P in Ps]
    if len({c.shape[0] for c in cs}) != 1:
        raise ValueError("draws must hold the same number of data sets at every P")
    out = {k: [] for k in ("share", "share_err", "log_odds", "log_odds_err", "data_log_odds", "spread_total",
                           "spread_sampling", "pool_mean", "copy_mean", "jump", "jump_err", "paired_d",
                           "paired_err", "crossings")}
    for c in cs:
        n_data, n = c.shape[0], c.shape[2]
        above = c >= c_div
        chain_share = above.mean(-1)  # (n_data, 2)
        data_share = chain_share.mean(-1)
        share = float(data_share.mean())
        loo = (data_share.sum() - data_share) / (n_data - 1)
        lo_chain = logit_share(chain_share, n)
        data_lo = logit_share(data_share, 2 * n)
        out["share"].append(share)
        out["share_err"].append(jackknife_se(loo))
        out["log_odds"].append(float(logit_share(share, 2 * n * n_data)))
        out["log_odds_err"].append(jackknife_se(logit_share(loo, 2 * n * (n_data - 1))))
        out["data_log_odds"].append(data_lo)
        out["spread_total"].append(float(data_lo.std(ddof=1)))
        out["spread_sampling"].append(float(np.sqrt(np.mean((lo_chain[:, 0] - lo_chain[:, 1]) ** 2) / 4)))
        flat, groups = c.reshape(2 * n_data, n), np.repeat(np.arange(n_data), 2)
        means, reps = [], []
        for lo, hi in ((-np.inf, c_div), (c_div, np.inf)):
            visits = ((flat >= lo) & (flat < hi)).reshape(n_data, -1).any(1).sum()
            if visits < 2:
                means.append(math.nan)
                reps.append(np.full(n_data, math.nan))
                continue
            m, _, r = basin_mean(flat, flat, lo, hi, groups=groups, return_replicates=True)
            means.append(m)
            reps.append(r)
        out["pool_mean"].append(means[0])
        out["copy_mean"].append(means[1])
        out["jump"].append(means[1] - means[0])
        d_rep = reps[1] - reps[0]
        ok = np.isfinite(d_rep)
        out["jump_err"].append(jackknife_se(d_rep[ok]) if ok.sum() >= 2 else math.nan)
        d = chain_share[:, 0] - chain_share[:, 1]
        out["paired_d"].append(float(d.mean()))
        out["paired_err"].append(float(d.std(ddof=1) / math.sqrt(n_data)))
        out["crossings"].append(np.abs(np.diff(above.astype(int), axis=-1)).sum(-1))
    arr = {k: np.array(v) for k, v in out.items()}
    spread_data = np.sqrt(np.maximum(arr["spread_total"] ** 2 - arr["spread_sampling"] ** 2, 0.0))
    return BasinWeights(P=np.array(Ps, dtype=float), c_div=c_div, spread_data=spread_data, **arr)


def _log_odds_slope(P_values: npt.ArrayLike, log_odds: npt.ArrayLike, err: npt.ArrayLike | None = None
                   ) -> tuple[float, float]:
    """The slope of the log-odds against ``ln P`` (the sharpness of the jump) and its error.

    Parameters
    ----------
    P_values : array ``(n >= 2,)`` of positive, distinct sample sizes
    log_odds : array ``(n,)``, finite
    err : array ``(n,)`` of positive errors, optional
        Independent errors of the log-odds; with them the slope is the weighted least-squares
        slope and its error the propagated one; without them the error is ``nan``.

    Returns
    -------
    slope, slope_err : float
    """
    x, y = as_paired_arrays("P_values", P_values, "log_odds", log_odds)
    if not (x > 0).all() or np.unique(x).size != x.size:
        raise ValueError("P_values must be positive and distinct")
    if err is None:
        w = np.ones_like(x)
    else:
        e = as_real_array("err", err)
        if e.shape != x.shape or not np.isfinite(e).all() or not (e > 0).all():
            raise ValueError(f"err must hold {x.size} positive finite errors, got {e}")
        w = 1 / e**2
    t = np.log(x)
    t_bar = (w * t).sum() / w.sum()
    sxx = (w * (t - t_bar) ** 2).sum()
    slope = float((w * (t - t_bar) * y).sum() / sxx)
    return slope, (float(1 / math.sqrt(sxx)) if err is not None else math.nan)


def _edges(edges) -> np.ndarray:
    return check_grid("edges", edges, n_min=4, increasing=True)


def _bin_barrier(mass: npt.ArrayLike, edges: npt.ArrayLike, c_div: float) -> tuple[float, float]:
    """The barrier of ``Omega = -ln(mass / width)`` in bins of ``c``, above either side's lowest bin.

    The barrier is ``Omega`` of the bin holding ``c_div``; the sides are the bins entirely below
    and above it. Returns ``(from pooling, from copy)`` in nats: a side without mass gives ``-inf``
    (no basin there), an empty barrier bin ``+inf``, both ``nan``.

    Parameters
    ----------
    mass : array ``(n_bins,)`` of non-negative masses (need not be normalised)
    edges : array ``(n_bins + 1,)``, strictly increasing, at least 4
    c_div : float, strictly inside the second to the second-to-last bin
    """
    edges = _edges(edges)
    mass = as_real_array("mass", mass)
    if mass.shape != (edges.size - 1,) or not np.isfinite(mass).all() or (mass < 0).any():
        raise ValueError(f"mass must hold {edges.size - 1} non-negative finite masses, got shape {mass.shape}")
    c_div = _c_div(c_div)
    k = int(np.searchsorted(edges, c_div, side="right")) - 1
    if not 1 <= k <= edges.size - 3:
        raise ValueError(f"c_div = {c_div} must lie in an interior bin of edges (bins 1 to {edges.size - 3})")
    with np.errstate(divide="ignore", invalid="ignore"):  # empty bins: Omega = inf, inf - inf = nan
        omega = -np.log(mass / np.diff(edges))
        return float(omega[k] - omega[:k].min()), float(omega[k] - omega[k + 1:].min())


def _sampled_bin_barrier(c: npt.ArrayLike, edges: npt.ArrayLike, c_div: float
                        ) -> tuple[tuple[float, float], tuple[float, float]]:
    """``_bin_barrier`` of the histogram of paired chains' draws, with a jackknife error over data sets.

    Parameters
    ----------
    c : array ``(n_data >= 2, 2, n >= 2)``
        Copy weights (data set, start, draw), all chains pooled into one histogram.
    edges, c_div : as ``_bin_barrier``

    Returns
    -------
    (from pooling, from copy), (their errors)
        The leave-one-data-set-out jackknife errors (``nan`` if a replicate has an empty barrier bin
        or an empty side).
    """
    c = _paired("c", c)
    edges = _edges(edges)
    counts = np.stack([np.histogram(c[d], bins=edges)[0] for d in range(c.shape[0])]).astype(float)
    total = _bin_barrier(counts.sum(0), edges, c_div)
    reps = np.array([_bin_barrier(counts.sum(0) - counts[d], edges, c_div) for d in range(c.shape[0])])
    errs = tuple(jackknife_se(reps[:, j]) if np.isfinite(reps[:, j]).all() else math.nan for j in range(2))
    return total, errs


@dataclass(frozen=True)
class PluginComparison:
    """Paired chains at one ``L`` against the plug-in marginal: see :func:`compare_with_plugin`.

    Attributes
    ----------
    L : int
    at : float
        The sample size of the barrier and jump comparisons.
    weights : BasinWeights
        The sampled basin weights at every sample size.
    rows : tuple
        One ``(quantity, P, sampled, s.e., plug-in, plug-in error, z)`` per comparison: the copy-basin mass
        at every ``P``, the log-odds slope (with two or more sizes), the binned barrier from either
        side and the jump of ``c`` at ``at``. The plug-in error is ``|set A - set B|`` of the two
        Sobol sets; ``z = (sampled - plug-in) / hypot(s.e., plug-in error)``.
    """

    L: int
    at: float
    weights: BasinWeights
    rows: tuple

    @property
    def z(self) -> np.ndarray:
        """The z-scores, in the order of ``rows``."""
        return np.array([r[-1] for r in self.rows])

    def value(self, quantity: str, column: str = "sampled") -> float:
        """One entry of the comparison of ``quantity`` (the first row of that name; ``column`` one of
        ``"sampled"``, ``"s.e."``, ``"plug-in"``, ``"plug-in error"``, ``"z"``, ``"P"``).

        A comparison whose errors are both zero has ``z = inf`` (or ``nan`` when the values agree);
        the slope is unweighted, with error ``nan``, when a size has no error on its log-odds."""
        columns = ("P", "sampled", "s.e.", "plug-in", "plug-in error", "z")
        if column not in columns:
            raise ValueError(f"column must be one of {columns}, got {column!r}")
        for r in self.rows:
            if r[0] == quantity:
                return float(r[1 + columns.index(column)])
        raise ValueError(f"quantity {quantity!r} is not among {sorted({r[0] for r in self.rows})}")

    def frame(self) -> pd.DataFrame:
        """The comparisons as a table (one row each, indexed by ``L``)."""
        frame = pd.DataFrame(list(self.rows), columns=["quantity", "P", "sampled", "s.e.", "plug-in",
                                                       "plug-in error", "z"])
        return frame.assign(L=self.L).set_index("L")


def compare_with_plugin(draws: Mapping[float, npt.ArrayLike | tuple], spec: ModelSpec,
                        cumulants: tuple[RowCumulants, RowCumulants], c_div: float, *, at: float,
                        edges: npt.ArrayLike | None = None) -> PluginComparison:
    """Basin weights, sharpness, binned barrier and jump of paired chains against the plug-in marginal.

    Parameters
    ----------
    draws : mapping ``P -> c`` or ``P -> (c, ...)``
        As ``_basin_weights``.
    spec : ModelSpec
        Softmax, cyclic; the ``L`` of the chains.
    cumulants : pair of RowCumulants
        Two independent Sobol sets (:func:`copylib.theory.softmax_marginal.row_cumulants`) for ``spec``.
    c_div : float in ``(0, 1)``
        The dividing copy weight (the same for the chains and the plug-in marginal).
    at : one of the ``P`` of ``draws``
        Where the barrier and the jump are compared.
    edges : array, optional
        Bin edges of ``c`` for the barrier (``_bin_barrier``); default ``0, 0.01, ..., 0.4``.

    Returns
    -------
    PluginComparison
        The sampled values are the plug-in marginal's counterparts computed the same way: the copy
        share is the mass at ``c >= c_div``, the slope is fitted to the plug-in log-odds at the same
        sizes, the barrier is taken from the plug-in masses in the same bins, and the jump is the
        difference of the basin means of ``c`` split at ``c_div``.
    """
    spec = check_spec(spec, kind="softmax", theory="compare_with_plugin")
    if len(cumulants) != 2:
        raise ValueError(f"cumulants must be a pair of RowCumulants (two Sobol sets), got {len(cumulants)} items")
    weights = _basin_weights(draws, c_div)
    if at not in draws:
        raise ValueError(f"at must be one of the P of draws {sorted(draws)}, got {at!r}")
    edges = _edges(np.linspace(0.0, 0.4, 41) if edges is None else edges)
    c_div = weights.c_div
    Ps = sorted(draws)
    margs = [[plugin_marginal(float(P), spec, cu) for P in Ps] for cu in cumulants]
    rows = []

    def add(quantity, P, sampled, se, theory, theory_b):
        err = abs(theory - theory_b)
        with np.errstate(divide="ignore", invalid="ignore"):  # no error at all (e.g. one basin only): inf or nan
            z = np.float64(sampled - theory) / np.float64(math.hypot(se, err))
        rows.append((quantity, float(P), float(sampled), float(se), float(theory), float(err), float(z)))

    share = [np.array([m.mass(c_div) for m in ms]) for ms in margs]
    for k, P in enumerate(Ps):
        add("copy-basin mass", P, weights.share[k], weights.share_err[k], share[0][k], share[1][k])
    if len(Ps) >= 2:
        e = weights.log_odds_err
        slope, slope_err = _log_odds_slope(Ps, weights.log_odds, e if (e > 0).all() else None)
        theory = [_log_odds_slope(Ps, np.log(s / (1 - s)))[0] for s in share]
        add("log-odds slope", np.exp(np.mean(np.log(Ps))), slope, slope_err, *theory)
    k = Ps.index(at)
    c_at = draws[at][0] if isinstance(draws[at], tuple) else draws[at]
    (pool, copy), (e_pool, e_copy) = _sampled_bin_barrier(c_at, edges, c_div)
    theory = [_bin_barrier([ms[k].mass(a, b) for a, b in zip(edges[:-1], edges[1:])], edges, c_div) for ms in margs]
    add("barrier from pooling", at, pool, e_pool, theory[0][0], theory[1][0])
    add("barrier from copy", at, copy, e_copy, theory[0][1], theory[1][1])
    jump = [ms[k].mean("c", c_div, np.inf) - ms[k].mean("c", -np.inf, c_div) for ms in margs]
    add("jump of c", at, weights.jump[k], weights.jump_err[k], *jump)
    return PluginComparison(L=spec.L, at=float(at), weights=weights, rows=tuple(rows))


@dataclass(frozen=True)
class NearP3:
    """Paired chains near the plug-in ``P3`` of one ``L``: see :func:`sample_near_p3`.

    Attributes
    ----------
    L : int
    plugin : copylib.theory.softmax_marginal.FiniteSizeRow
        The plug-in marginal's jump at this ``L`` (first Sobol set): ``P3``, ``c*`` and the barrier.
    P : tuple of int
        The sampled sizes ``(below, at P3, above)``.
    comparison : PluginComparison
        The chains against the plug-in marginal (split at ``plugin.barrier``).
    convergence : copylib.analysis.softmax_evidence.ChainConvergence
        R-hat within data sets, ESS, drift and crossings (``P3`` the size near the transition).
    accept : tuple ``(min, max)``
        The MALA acceptance rates of the chains.
    draws : dict
        ``P -> (c, alpha_1, S)`` as :func:`copylib.analysis.softmax.sample_two_starts` returns them.
    """

    L: int
    plugin: FiniteSizeRow
    P: tuple
    comparison: PluginComparison
    convergence: ChainConvergence
    accept: tuple
    draws: dict = field(repr=False)


def sample_near_p3(L: int, V: int, n_data: int, n_steps: int | tuple[int, int], *, n_warmup: int, thin: int, seed: int,
                   log_odds_step: float = 1.8, n_draws: int = 8192, gap_step: float = 0.8, rel_step: float = 1e-3,
                   cache: bool = False) -> NearP3:
    """Sample the posterior at and on either side of the plug-in ``P3`` of one ``L``, from two starts.

    1. The plug-in marginal (:func:`copylib.theory.softmax_marginal.finite_size_cumulants` with
       ``n_draws`` Sobol draws and ``t_step = 0.2``, seeds 21 and 22 for the two sets; the jump by
       :func:`~copylib.theory.softmax_marginal.finite_size_row` on set 21 with ``rel_step``) gives
       ``P3``, the barrier ``c*`` and the sharpness ``s``; the sizes are ``P3 exp(-d/s)``, ``P3``,
       ``P3 exp(d/s)`` rounded, ``d = log_odds_step``, where the plug-in log-odds of the basins is
       about ``-d``, 0 and ``d``.
    2. :func:`copylib.analysis.softmax.sample_two_starts` (MALA with the gap move ``gap_step``, the
       data sets and the sampler seeded by ``seed``): ``n_steps = (side, centre)`` steps at the two
       side sizes and at ``P3`` (one int: the same at all three), two chains per data set.
    3. :func:`compare_with_plugin` at ``P3`` (both Sobol sets) and
       :func:`copylib.analysis.softmax_evidence.chain_convergence`.

    ``cache`` as in :func:`copylib.analysis.softmax.sample_two_starts`.
    """
    L, V = check_int("L", L, 3), check_int("V", V, 2)
    n_data = check_int("n_data", n_data, 2)
    steps = (n_steps, n_steps) if isinstance(n_steps, (int, np.integer)) else tuple(n_steps)
    if len(steps) != 2:
        raise ValueError(f"n_steps must be an int or a pair (side, centre), got {n_steps!r}")
    side, centre = (check_int("n_steps", n, 1) for n in steps)
    d = check_positive("log_odds_step", log_odds_step)
    pair = [finite_size_cumulants(L, V, np.random.default_rng(s), n_draws=n_draws, t_step=0.2) for s in (21, 22)]
    spec = pair[0][0]
    row = finite_size_row(spec, pair[0][1], rel_step=rel_step)
    if not math.isfinite(row.P3):
        raise ValueError(f"the plug-in marginal has no P3 at L = {L}, V = {V} (no two basins to sample)")
    Ps = tuple(int(round(row.P3 * math.exp(k * d / row.sharpness))) for k in (-1, 0, 1))
    if len(set(Ps)) != 3:
        raise ValueError(f"log_odds_step = {d} puts the three sizes on fewer than three integers: {Ps}")
    kw = dict(n_warmup=n_warmup, thin=thin, seed=seed, gap_step=gap_step, cache=cache)
    run_side, draws = sample_two_starts([Ps[0], Ps[2]], spec, n_data, side, **kw)
    run_mid, draws_mid = sample_two_starts([Ps[1]], spec, n_data, centre, **kw)
    draws = {P: {**draws, **draws_mid}[P] for P in Ps}
    acc = np.concatenate([run_side.accept_rate, run_mid.accept_rate])
    comparison = compare_with_plugin(draws, spec, [cu for _, cu in pair], row.barrier, at=Ps[1])
    conv = chain_convergence(draws, row.barrier, {Ps[0]: side, Ps[1]: centre, Ps[2]: side}, [Ps[1]])
    return NearP3(L=L, plugin=row, P=Ps, comparison=comparison, convergence=conv,
                  accept=(float(acc.min()), float(acc.max())), draws=draws)


def plugin_jump(row: FiniteSizeRow, spec: ModelSpec, cumulants: RowCumulants) -> float:
    """The jump of the copy weight at the plug-in ``P3``: the copy basin's mean minus the pooling basin's.

    The marginal of ``c`` at ``row.P3`` (:func:`~copylib.theory.softmax_marginal.plugin_marginal`
    with ``spec`` and ``cumulants``, as :func:`~copylib.theory.softmax_marginal.finite_size_cumulants`
    returns them) is split at the barrier ``row.barrier``; ``row`` must have a first-order point.
    """
    check_instance("row", row, FiniteSizeRow)
    if not (math.isfinite(row.P3) and 0 < row.barrier < 1):
        raise ValueError(f"row must have a first-order point (finite P3, barrier in (0, 1)), got P3 = {row.P3}, "
                         f"barrier = {row.barrier}")
    marginal = plugin_marginal(float(row.P3), spec, cumulants)
    return float(marginal.mean("c", row.barrier, 1.0) - marginal.mean("c", 0.0, row.barrier))


@dataclass(frozen=True)
class PluginErrorByL:
    """The plug-in action's error on exact-evidence differences, size by size: see :func:`plugin_error_by_L`.

    Attributes
    ----------
    L : array of int ``(n,)``
        The sizes, ascending.
    P : array of int ``(n,)``
        The sample size at each ``L``.
    barrier : array ``(n,)``
        The plug-in marginal's barrier above its pooling minimum at that ``P`` (nats).
    bias, exact_se, spread : arrays ``(n, 2)``
        Per ``L``, for the barrier and the copy state: exact minus plug-in difference from the pooling
        minimum, the standard error of the exact difference and its standard deviation over the data sets (nats).
    bound : array ``(n,)``
        The largest ``|bias| + 2 exact_se`` at each ``L`` (nats).
    errors : tuple of :class:`~copylib.analysis.softmax_evidence.PluginEvidenceError`
        Per ``L``, the states ``("barrier c*", "copy minimum")`` against the pooling minimum.
    """

    L: np.ndarray
    P: np.ndarray
    barrier: np.ndarray
    errors: tuple = field(repr=False)  # no default: the fields after it need none
    bias: np.ndarray
    exact_se: np.ndarray
    spread: np.ndarray
    bound: np.ndarray

    @property
    def spread_ratio(self) -> np.ndarray:
        """``(n,)``: the data-set spread of the copy-minus-pooling evidence difference over the barrier."""
        return self.spread[:, 1] / self.barrier

    @property
    def clear_from(self) -> float:
        """The smallest ``L`` from which on that spread stays below the barrier (``nan`` if it never does)."""
        above = np.flatnonzero(self.spread_ratio >= 1)
        start = 0 if above.size == 0 else above[-1] + 1
        return float(self.L[start]) if start < self.L.size else math.nan

    def index(self, L: int) -> int:
        """The row of size ``L``."""
        rows = np.flatnonzero(self.L == L)
        if rows.size == 0:
            raise ValueError(f"L = {L} is not among the measured sizes {self.L.tolist()}")
        return int(rows[0])

    def frame(self) -> pd.DataFrame:
        """One row per ``L``: ``P``, barrier, the error of either state with its s.e., bound and spreads (nats)."""
        bias, se, spread = self.bias, self.exact_se, self.spread
        return pd.DataFrame({"P": self.P, "barrier": self.barrier,
                             "error c*": bias[:, 0], "s.e. c*": se[:, 0], "error copy": bias[:, 1],
                             "s.e. copy": se[:, 1], "bound": self.bound,
                             "spread c*": spread[:, 0], "spread copy": spread[:, 1]},
                            index=pd.Index(self.L, name="L"))


def plugin_error_by_L(points: Mapping[int, tuple[ModelSpec, RowCumulants, float]], n_data: int,
                      rng: np.random.Generator) -> PluginErrorByL:
    """The plug-in action against the exact evidence at several ``L``, between the plug-in marginal's branches.

    At each ``L`` the plug-in marginal of ``c`` at ``P`` (rounded to an integer) gives the
    pooling minimum, the barrier ``c*`` and the copy minimum
    (:func:`~copylib.theory.softmax_marginal.marginal_branches`); then
    :func:`~copylib.analysis.softmax_evidence.plugin_evidence_error` compares, over ``n_data``
    data sets, the exact evidence difference of the barrier and copy states from the pooling
    minimum with the same difference of the plug-in action. The sizes run in ascending order and
    draw their data sets from ``rng`` one after the other.

    Parameters
    ----------
    points : mapping ``L -> (spec, cumulants, P)``
        ``spec`` and ``cumulants`` as :func:`~copylib.theory.softmax_marginal.finite_size_cumulants`
        returns them; ``P`` a sample size where the marginal has two minima (``P3``, or a size
        inside the coexistence window).
    n_data : int >= 2
    rng : numpy.random.Generator

    Returns
    -------
    PluginErrorByL
    """
    if not hasattr(points, "items") or len(points) == 0:
        raise TypeError(f"points must be a non-empty mapping L -> (spec, cumulants, P), got {points!r}")
    n_data = check_int("n_data", n_data, 2)
    check_generator("rng", rng)
    checked = {}
    for n_pos, point in points.items():
        if len(point) != 3:
            raise TypeError(f"points[{n_pos}] must be (spec, cumulants, P), got {point!r}")
        spec, cumulants, P = point
        spec = check_spec(spec, kind="softmax", theory="plugin_error_by_L")
        check_instance(f"points[{n_pos}] cumulants", cumulants, RowCumulants)
        if spec.L != n_pos:
            raise ValueError(f"points: the key L = {n_pos} differs from its spec's L = {spec.L}")
        P = check_int(f"points[{n_pos}] P", int(round(check_positive(f"points[{n_pos}] P", P))), 1)
        checked[n_pos] = (spec, cumulants, P)
    L, P_used, barrier, errors = [], [], [], []
    for n_pos in sorted(checked):
        spec, cumulants, P = checked[n_pos]
        branches = marginal_branches(plugin_marginal(float(P), spec, cumulants))
        if branches.n_minima < 2:
            raise ValueError(f"points: the plug-in marginal at L = {n_pos}, P = {P} has one minimum; "
                             "P must lie inside the coexistence window")
        pool, c_star, copy = float(branches.minima[0]), float(branches.barrier), float(branches.minima[-1])
        errors.append(plugin_evidence_error(spec, P, pool, {"barrier c*": c_star, "copy minimum": copy}, n_data, rng))
        L.append(n_pos)
        P_used.append(P)
        barrier.append(float(branches.barrier_height[0]))
    stack = {name: np.array([getattr(e, name) for e in errors], dtype=float)
             for name in ("bias", "exact_se", "spread", "bound")}
    return PluginErrorByL(L=np.array(L, dtype=int), P=np.array(P_used, dtype=int),
                          barrier=np.array(barrier, dtype=float), errors=tuple(errors), **stack)
