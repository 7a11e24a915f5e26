"""Helpers for the softmax-attention chapter: planted copy states and their dynamics.

Gradient descent and Langevin chains started in the basin of a local minimum
stay there for a long time. To see both branches of the first-order copy
transition, the chapter starts runs in each basin:

* :func:`planted_logits` -- the cheapest logits with gap ``Delta`` on the
  previous position, ``g = Delta (T - J/L)`` with the cyclic shift ``T`` (the row means drop out of softmax);
* :func:`planted_init` -- a batched initial state ``{"g", "b", "W"}`` with those
  logits and the ridge (MAP) readout of each run's data;
* :func:`interpolate_crossing` -- where a tabulated difference changes sign;
* :func:`state_fraction` -- the share of draws on the copy side of a threshold;
* :func:`sample_two_starts` -- MALA on the collapsed posterior of many data sets,
  two chains per data set (one at uniform attention, one planted in the copy
  state), with the copy weight and ``alpha_1`` of every draw;
* :func:`p3_from_shares`, :func:`p3_from_hopping` -- where the copy share (given,
  or of chains that hop between the basins) crosses one half;
* :func:`uniform_copy_attention` -- the copy pattern with a given copy weight in every row;
* :func:`basin_mean` -- a basin-conditional mean over chains with a jackknife error
  (leave one chain, or one group of chains sharing a data set, out);
* :func:`weak_double_minimum` -- the shallow double minimum of the plug-in marginal at
  ``L = 24`` (the one computation the softmax and predictability chapters both quote);
* :func:`finite_size_frame` -- the finite-size rows of the plug-in marginal as a table;
* :func:`finite_size_summary` -- barriers, their numerical errors, windows and sharpness across ``L``;
* :func:`branch_comparison` -- sampled posterior means against the plug-in marginal, basin by
  basin, with jackknife errors, z-scores and the correlations of the z-scores.

The chapter's MCMC diagnostics (R-hat of chains grouped by data set, the range
of ``mean(z^2)`` for correlated z-scores) are in :mod:`copylib.inference.diagnostics`.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch

from ..arguments import (
    as_real_array,
    check_bool,
    check_finite,
    check_int,
    check_positive,
)
from ..inference.posterior_sampling import sample_collapsed_posterior
from ..model.network import ModelSpec, attention, attention_logits, check_spec
from ..model.statistics import cooccurrence
from ..model.task import copy_task, shift_matrix
from ..posterior.evidence import optimal_readout
from ..posterior.order_parameters import copy_attention
from ..theory.plugin_loss import row_stochastic_plugin_loss
from ..theory.softmax_marginal import (
    FiniteSizeRow,
    copy_weight_marginal,
    finite_size_cumulants,
    finite_size_row,
    marginal_scan,
)

__all__ = [
    "BranchComparison",
    "DoubleMinimum",
    "FiniteSizeSummary",
    "basin_mean",
    "branch_comparison",
    "finite_size_frame",
    "finite_size_summary",
    "interpolate_crossing",
    "p3_from_hopping",
    "p3_from_shares",
    "planted_init",
    "planted_logits",
    "sample_two_starts",
    "state_fraction",
    "uniform_copy_attention",
    "weak_double_minimum",
]


def planted_logits(Delta, L: int, causal: bool = False) -> np.ndarray:
    """Logits ``Delta (T - J/L)``, shape ``(..., L, L)`` for ``Delta`` of shape ``(...)``.

    ``row-softmax`` of them is :func:`copylib.posterior.order_parameters.copy_attention` ``(Delta, L)``;
    their squared norm ``(L-1) Delta^2`` is the smallest among all logits with that attention.

    With ``causal=True``: the smallest logits whose causal softmax
    (:func:`copylib.model.network.attention` with ``causal=True``) puts the gap ``Delta``
    on the previous position of every row ``l >= 1``: row ``l`` (0-based) is
    ``Delta (e_{l-1} - 1/(l+1))`` on its ``l + 1`` visible entries and ``0`` on the
    hidden ones; row 0 is zero. Squared norm ``Delta^2 sum_{n=2}^{L} (1 - 1/n)
    = Delta^2 (L - H_L)``, ``H_L`` the harmonic number.
    """
    L = check_int("L", L, 2)
    causal = check_bool("causal", causal)
    Delta = as_real_array("Delta", Delta)
    if not np.isfinite(Delta).all():
        raise ValueError("Delta must be finite")
    if causal:
        counts = np.arange(1, L + 1)[:, None]
        base = (shift_matrix(L, False) - 1.0 / counts) * np.tri(L)
        base[0] = 0.0
    else:
        base = shift_matrix(L, True) - 1.0 / L
    return Delta[..., None, None] * base


def planted_init(Delta, C, spec: ModelSpec) -> dict:
    """Initial states ``{"g": (R, L, L), "b": (R,), "W": (R, V, V)}`` planted in a copy state.

    Delta : float or ``(R,)`` (``0`` gives uniform pooling); C : ``(R, L, L, V, V)``.
    ``g = planted_logits(Delta, L, spec.causal)``, ``b = 0`` and ``W`` the ridge readout of that
    attention for each run's data (:func:`copylib.posterior.evidence.optimal_readout`).
    Drop ``"W"`` to start the collapsed sampler.
    """
    if not isinstance(spec, ModelSpec):
        raise TypeError(f"spec must be a copylib.ModelSpec, got {type(spec).__name__}")
    C = as_real_array("C", C)
    if C.ndim != 5 or C.shape[1:] != (spec.L, spec.L, spec.V, spec.V):
        raise ValueError(f"C must have shape (R, {spec.L}, {spec.L}, {spec.V}, {spec.V}), got {C.shape}")
    R = C.shape[0]
    Delta = as_real_array("Delta", Delta)
    if Delta.shape not in ((), (1,), (R,)):
        raise ValueError(f"Delta must be a float or have shape ({R},) (one per run of C), got {Delta.shape}")
    Delta = np.broadcast_to(Delta, (R,))
    g = planted_logits(Delta, spec.L, spec.causal)
    b = np.zeros(R)
    A = attention(attention_logits(g, b), spec.kind, spec.causal)
    W = optimal_readout(A, C, spec)
    return {"g": g, "b": b, "W": np.asarray(W)}


def interpolate_crossing(x, y) -> float:
    """The ``x`` where the tabulated ``y`` first changes sign (linear interpolation), or ``nan``.

    x : increasing ``(n,)``; y : ``(n,)``, both finite. ``nan`` is returned only when
    ``y`` has no sign change and no zero.
    """
    x, y = as_real_array("x", x), as_real_array("y", y)
    if x.ndim != 1 or x.shape != y.shape or x.size < 2:
        raise ValueError("x and y must be 1-d of equal length >= 2")
    check_finite("x", x)
    check_finite("y", y)
    if not (np.diff(x) > 0).all():
        raise ValueError("x must be strictly increasing")
    s = np.sign(y)
    idx = np.flatnonzero(s[:-1] * s[1:] < 0)
    if idx.size == 0:
        zero = np.flatnonzero(y == 0)
        return float(x[zero[0]]) if zero.size else float("nan")
    i = idx[0]
    return float(x[i] - y[i] * (x[i + 1] - x[i]) / (y[i + 1] - y[i]))


def state_fraction(x, threshold: float) -> np.ndarray:
    """Fraction of draws above ``threshold`` in each chain: ``x (R, n)`` -> ``(R,)``."""
    x = as_real_array("x", x)
    if x.ndim != 2 or x.shape[1] == 0:
        raise ValueError(f"x must have shape (R, n) with n >= 1, got {x.shape}")
    check_finite("x", x)
    threshold = as_real_array("threshold", threshold)
    if threshold.ndim:
        raise ValueError(f"threshold must be a single number, got shape {threshold.shape}")
    check_finite("threshold", threshold)
    return (x > threshold).mean(axis=1)


def sample_two_starts(P_values, spec: ModelSpec, n_data: int, n_steps: int, *, n_warmup: int, thin: int, seed: int,
                      planted_gap: float = 2.4, gap_step: float | None = None, cache: bool = False):
    """MALA on the collapsed posterior of ``n_data`` data sets per ``P``, two chains per data set, in one batch.

    The data sets are drawn with ``numpy.random.default_rng(seed)`` (``P`` by ``P``);
    each is sampled by a chain started at uniform attention (``g = 0``) and one
    planted at the gap ``planted_gap`` with the ridge readout
    (:func:`planted_init`); the sampler's generator is ``torch.Generator().manual_seed(seed)``.
    With ``gap_step``, every MALA step is followed by a move of the uniform gap: the
    logits ``g`` shift by ``delta (T - J/L)`` (:func:`planted_logits` of ``delta``), ``delta ~
    N(0, gap_step^2)``, kept by a Metropolis test (``direction`` of
    :func:`~copylib.inference.langevin.langevin`; exact).

    Returns ``(result, draws)``: the :class:`~copylib.inference.langevin.SamplingResult`
    and, for each ``P``, ``(c, alpha_1, energy)``, each of shape
    ``(n_data, 2, n_kept)`` (data set, start: 0 uniform / 1 planted, draw), with the copy
    weight ``c = gamma_1 / L`` and ``alpha_1`` of every draw (rows of softmax
    attention sum to one, ``m = 1``). ``cache`` as in :func:`~copylib.inference.posterior_sampling.sample_collapsed_posterior`.
    """
    spec = check_spec(spec, kind="softmax", theory="sample_two_starts")
    P_values = [check_int("P", P, minimum=1) for P in P_values]
    n_data = check_int("n_data", n_data, minimum=1)
    L, V = spec.L, spec.V
    data_rng = np.random.default_rng(seed)
    C = np.stack([cooccurrence(copy_task(P, L, V, data_rng)[0]) for P in P_values for _ in range(n_data)])
    C = np.repeat(C, 2, axis=0)  # chain = (P, data set, start)
    init = planted_init(np.tile([0.0, planted_gap], len(C) // 2), C, spec)
    del init["W"]  # the readout is integrated out
    moves = {} if gap_step is None else dict(direction={"g": planted_logits(1.0, L, spec.causal)},
                                             direction_step=check_positive("gap_step", gap_step))
    out = sample_collapsed_posterior(C, spec, len(C), n_steps, torch.Generator().manual_seed(seed), n_warmup=n_warmup,
                                     init=init, thin=thin, record="order", cache=cache, **moves)
    m, q, r2 = (out.samples[k] for k in ("m", "q", "r2"))
    shape = (len(P_values), n_data, 2, -1)  # (P, data set, start, draw)
    c = ((m + (L - 1) * q) / L).reshape(shape)  # gamma_1 / L (m = 1: rows sum to one)
    a1 = (m**2 + (L - 1) * q**2 + r2).reshape(shape)  # alpha_1
    return out, {P: (c[i], a1[i], out.energy.reshape(shape)[i]) for i, P in enumerate(P_values)}


def p3_from_shares(P_values, shares) -> float:
    """``P`` where the copy share ``p`` crosses one half, from the shares at the increasing ``P_values``.

    The log-odds ``ln p/(1-p)`` (the free-energy difference of the two sides) is
    interpolated linearly in ``P`` between the sizes where both sides carry mass
    (``0 < p < 1``); ``nan`` if it does not change sign there. The same estimate
    made from a theory's shares at the same sizes is that theory's counterpart: the
    interpolation's own bias (where the log-odds curve) is then common to both.
    """
    P_values, p = as_real_array("P_values", P_values), as_real_array("shares", shares)
    if P_values.ndim != 1 or p.shape != P_values.shape:
        raise ValueError(f"shares must hold one value per P, got shape {p.shape} for {P_values.size} P values")
    if not ((p >= 0) & (p <= 1)).all():
        raise ValueError("shares must lie in [0, 1]")
    ok = (p > 0) & (p < 1)
    if ok.sum() < 2:
        return float("nan")
    return interpolate_crossing(P_values[ok], np.log(p[ok] / (1 - p[ok])))


def p3_from_hopping(c_by_P, P_values, threshold: float) -> float:
    """``P`` where the pooled copy share ``p = Pr(c >= threshold)`` crosses one half
    (:func:`p3_from_shares`).

    ``c_by_P``: one array of draws of the copy weight per sample size (any shape,
    all draws pooled), for the increasing ``P_values``.
    """
    P_values = as_real_array("P_values", P_values)
    if P_values.ndim != 1 or len(c_by_P) != P_values.size:
        raise ValueError(f"c_by_P must hold one array per P, got {len(c_by_P)} arrays for {P_values.size} P values")
    threshold = as_real_array("threshold", threshold)
    if threshold.ndim:
        raise ValueError(f"threshold must be a single number, got shape {threshold.shape}")
    check_finite("threshold", threshold)
    return p3_from_shares(P_values, [(as_real_array("c_by_P", c) >= threshold).mean() for c in c_by_P])


def uniform_copy_attention(c_row, L: int) -> np.ndarray:
    """Attention ``(L, L)`` with copy weight ``c_row`` on the previous position in every row.

    It is the copy pattern :func:`copylib.posterior.order_parameters.copy_attention`
    at the gap ``ln[(L-1) c_row / (1 - c_row)]``; ``0 < c_row < 1``.
    """
    L = check_int("L", L, minimum=2)
    c_row = as_real_array("c_row", c_row)
    if c_row.ndim or not 0 < c_row < 1:
        raise ValueError(f"c_row must be a single number in (0, 1), got {c_row}")
    return np.asarray(copy_attention(np.log((L - 1) * c_row / (1 - c_row)), L))


def basin_mean(x, c, lo: float = -np.inf, hi: float = np.inf, *, groups=None, return_replicates: bool = False):
    """Mean of ``x`` over the draws with ``lo <= c < hi``, pooled over chains, with a jackknife error.

    Parameters
    ----------
    x, c : arrays ``(R, n)``
        A quantity and the copy weight of ``n`` draws in each of ``R >= 2``
        chains.
    lo, hi : float
        The basin, an interval of ``c``.
    groups : array ``(R,)`` of int, optional
        Which chains belong together (e.g. chains run on the same data set);
        the jackknife leaves out one group at a time, so the groups, not the
        chains, must be independent. Default: every chain is its own group.
    return_replicates : bool
        Also return the leave-one-group-out estimates (for the jackknife
        covariance of several estimates computed from the same chains).

    Returns
    -------
    mean, se : float
        The ratio estimator ``sum x 1[basin] / sum 1[basin]`` over all draws and
        its leave-one-group-out jackknife standard error, which includes the
        autocorrelation within chains and the spread between the groups' data
        sets. ``se`` is ``nan`` if fewer than two groups visit the basin.
    replicates : array ``(G,)``
        Only with ``return_replicates``: the estimate without each group, in the
        order of ``np.unique(groups)`` (``nan`` for a group that holds every draw
        in the basin).

    Raises
    ------
    ValueError
        If the shapes differ, ``R < 2``, there are fewer than two groups, an
        entry is not finite, ``lo >= hi``, or no draw lies in the basin.
    """
    x, c = as_real_array("x", x), as_real_array("c", c)
    if x.ndim != 2 or x.shape != c.shape or x.shape[0] < 2 or x.shape[1] == 0:
        raise ValueError(f"x and c must have the same shape (R, n) with R >= 2, n >= 1; got {x.shape}, {c.shape}")
    check_finite("x", x)
    check_finite("c", c)
    for name, value in (("lo", lo), ("hi", hi)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value):
            raise TypeError(f"{name} must be a real number (not NaN), got {value!r}")
    lo, hi = float(lo), float(hi)
    if not lo < hi:
        raise ValueError(f"lo must be < hi, got lo = {lo}, hi = {hi}")
    return_replicates = check_bool("return_replicates", return_replicates)
    R = x.shape[0]
    if groups is None:
        label = np.arange(R)
    else:
        groups = np.asarray(groups)
        if groups.shape != (R,) or not np.issubdtype(groups.dtype, np.integer):
            raise ValueError(f"groups must be {R} integer labels (one per chain), got {groups.dtype} {groups.shape}")
        label = np.unique(groups, return_inverse=True)[1].ravel()
    G = int(label.max()) + 1
    if G < 2:
        raise ValueError("groups must contain at least two different labels")
    inside = (c >= lo) & (c < hi)
    num = np.bincount(label, (x * inside).sum(axis=1), minlength=G)
    den = np.bincount(label, inside.sum(axis=1).astype(float), minlength=G)
    if den.sum() == 0:
        raise ValueError(f"no draw has {lo} <= c < {hi}")
    mean = float(num.sum() / den.sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        loo = np.where(den.sum() > den, (num.sum() - num) / (den.sum() - den), np.nan)
    if (den > 0).sum() < 2:
        se = float("nan")
    else:
        ok = loo[np.isfinite(loo)]
        se = float(np.sqrt((ok.size - 1) / ok.size * ((ok - ok.mean()) ** 2).sum()))
    return (mean, se, loo) if return_replicates else (mean, se)


@dataclass(frozen=True)
class DoubleMinimum:
    """The double minimum of the plug-in marginal of ``c`` at one ``(L, V)``, from several Sobol sets.

    Attributes
    ----------
    L, V, n_draws : int
    seeds : tuple of int
        One independent set of Sobol draws per seed.
    rows : tuple of :class:`~copylib.theory.softmax_marginal.FiniteSizeRow`
        :func:`~copylib.theory.softmax_marginal.finite_size_row` of each set.
    P_lower, P_upper : float
        The union of the coexistence windows of the sets (``nan`` if no set has two minima).
    width : float
        The widest window of one set (units of ``P``; ``0`` without two minima).
    depth : float
        The deepest shallower basin, over the scan of every window and the row's own scan
        (nats; ``0`` without two minima).
    delta_F_max : float
        The largest ``Omega_copy - Omega_pool`` inside the windows (nats; negative: the copy
        side of the barrier holds more mass everywhere in them; ``nan`` without two minima).
    cumulants : tuple
        The ``(spec, RowCumulants)`` of each set (for further scans).
    """

    L: int
    V: int
    n_draws: int
    seeds: tuple
    rows: tuple
    P_lower: float
    P_upper: float
    width: float
    depth: float
    delta_F_max: float
    cumulants: tuple = field(repr=False)

    @property
    def has_P3(self) -> bool:
        """Whether some set has a first-order point (equal basin masses between two minima)."""
        return any(math.isfinite(r.P3) for r in self.rows)


def weak_double_minimum(L: int = 24, V: int = 4, *, seeds=(21, 22), n_draws: int = 8192, rel_step: float = 1e-3,
                        n_scan: int = 17) -> DoubleMinimum:
    """Measure the shallow double minimum of the plug-in marginal of ``c`` at ``(L, V)``.

    For each seed, the row cumulants (:func:`~copylib.theory.softmax_marginal.finite_size_cumulants`,
    ``n_draws`` Sobol draws, the default ``t_step``) and the finite-size row
    (:func:`~copylib.theory.softmax_marginal.finite_size_row` with ``rel_step``); then
    ``n_scan`` sizes across each coexistence window give the depth of the shallower basin
    and ``Omega_copy - Omega_pool`` inside it. The defaults are the one computation that the
    softmax and the predictability chapters both quote at ``L = 24``: the full ``n_draws`` of
    the chapter's ``L = 32`` marginal (the depth is a few thousandths of a nat, the size of
    the Sobol noise at fewer draws) and two Sobol sets, so that the union of their windows and
    the largest depth bound what either set alone would report.

    Parameters
    ----------
    L : int >= 3
    V : int >= 2
    seeds : sequence of int, at least one
    n_draws : int
        A power of 2, ``>= 16``.
    rel_step : float in ``(0, 0.1]``
    n_scan : int >= 3
        Sizes across each window, ends included (only the interior ones are evaluated).

    Returns
    -------
    DoubleMinimum

    Raises
    ------
    ValueError, TypeError
        For an invalid argument (naming it).
    """
    L = check_int("L", L, 3)
    V = check_int("V", V, 2)
    n_scan = check_int("n_scan", n_scan, 3)
    if isinstance(seeds, (str, bytes)) or not hasattr(seeds, "__len__") or len(seeds) == 0:
        raise ValueError(f"seeds must be a non-empty sequence of integers >= 0, got {seeds!r}")
    seeds = tuple(check_int("seeds", s_, 0) for s_ in seeds)
    rows, cums, depths, dF = [], [], [], []
    for seed in seeds:
        spec, cum = finite_size_cumulants(L, V, np.random.default_rng(seed), n_draws=n_draws)
        row = finite_size_row(spec, cum, rel_step=rel_step)
        rows.append(row)
        cums.append((spec, cum))
        depths.append(row.max_depth)
        if row.two_minima:
            inside = marginal_scan(np.linspace(row.P_lower, row.P_upper, n_scan)[1:-1], spec, cum)
            depths.append(float(inside.depth.max()))
            dF.extend(inside.delta_F[np.isfinite(inside.delta_F)].tolist())
    two = [r for r in rows if r.two_minima]
    return DoubleMinimum(
        L=L, V=V, n_draws=int(n_draws), seeds=seeds, rows=tuple(rows),
        P_lower=min((r.P_lower for r in two), default=math.nan),
        P_upper=max((r.P_upper for r in two), default=math.nan),
        width=max((r.P_upper - r.P_lower for r in two), default=0.0),
        depth=float(max(depths)) if two else 0.0,
        delta_F_max=float(max(dF)) if dF else math.nan,
        cumulants=tuple(cums))


def finite_size_frame(rows, errors=None, saddle_points=None) -> pd.DataFrame:
    """The finite-size rows of the plug-in marginal as a table, one row per ``L``.

    Parameters
    ----------
    rows : mapping ``L -> (FiniteSizeRow, FiniteSizeRow)``
        Two independent Sobol sets per ``L`` (A, B).
    errors : mapping ``L -> float``, optional
        The numerical error of the barrier above the pooling minimum (nats); without it
        the table has no ``error`` column.
    saddle_points : mapping ``version -> (mapping L -> P3)``, optional
        ``P3`` of saddle-point versions (columns ``"P3 <version>"``, ``nan`` without a jump).

    Returns
    -------
    pandas.DataFrame
        Indexed by ``L``: ``two minima`` (both sets), ``P3`` (set A; ``nan`` without a
        first-order point), ``window`` (the coexistence window of set A, ``lower-upper``,
        or empty), ``barrier pool``, ``barrier copy`` (nats, at ``P3``), ``error``,
        ``window / P3``, ``sharpness`` and the saddle-point columns.
    """
    if not hasattr(rows, "items"):
        raise TypeError(f"rows must be a mapping L -> (FiniteSizeRow, FiniteSizeRow), got {type(rows).__name__}")
    saddle_points = {} if saddle_points is None else saddle_points
    records = []
    for n_pos, pair in rows.items():
        if len(pair) != 2 or not all(isinstance(r, FiniteSizeRow) for r in pair):
            raise TypeError(f"rows must map L to two FiniteSizeRow (Sobol sets A, B); got {pair!r} at L = {n_pos}")
        a, b = pair
        rec = {"L": int(n_pos), "two minima": "yes" if a.two_minima and b.two_minima else
               ("one set" if a.two_minima or b.two_minima else "no"),
               "P3": a.P3,
               "window": f"{a.P_lower:.1f}-{a.P_upper:.1f}" if a.two_minima else "",
               "barrier pool": a.barrier_height[0], "barrier copy": a.barrier_height[1],
               **({"error": float(errors.get(n_pos, math.nan))} if errors else {}),
               "window / P3": a.window if math.isfinite(a.P3) else math.nan,
               "sharpness": a.sharpness if math.isfinite(a.P3) else math.nan}
        for version, P3_of in saddle_points.items():
            rec[f"P3 {version}"] = float(P3_of.get(n_pos, math.nan))
        records.append(rec)
    return pd.DataFrame.from_records(records).set_index("L")


@dataclass(frozen=True)
class BranchComparison:
    """Sampled posterior means against the plug-in marginal: see :func:`branch_comparison`.

    Attributes
    ----------
    rows : tuple
        One ``(P, quantity, basin, sampled mean, s.e., theory, z)`` per comparison.
    corr_blocks : tuple of arrays ``(n, n)``
        Per ``P``, the estimated correlation matrix of that size's z-scores.
    n_groups : tuple of int
        Per ``P``, the number of data sets with a jackknife replicate of every compared mean.
    theory_err : array ``(n_rows,)``
        ``|theory - theory_b| / s.e.`` of every comparison (the Sobol error against the sampling error).
    res_c_near : array ``(len(near),)``
        For the copy weight at the sizes ``near``: 3.5 error bars over the theory's value (%).
    res_theory_near : array ``(len(near),)``
        For the copy weight at the sizes ``near``: ``|theory - theory_b| / s.e.``.
    marginals : dict
        ``P -> (marginal, marginal_b)`` of the two sets of cumulants.
    """

    rows: tuple
    corr_blocks: tuple
    n_groups: tuple
    theory_err: np.ndarray
    res_c_near: np.ndarray
    res_theory_near: np.ndarray
    marginals: dict = field(repr=False)

    @property
    def z(self) -> np.ndarray:
        """The z-scores of all comparisons, in the order of ``rows``."""
        return np.array([row[-1] for row in self.rows])

    def frame(self) -> pd.DataFrame:
        """The comparisons as a table (one row each)."""
        return pd.DataFrame(list(self.rows), columns=["P", "quantity", "basin", "sampled", "s.e.", "theory", "z"])


def branch_comparison(draws, spec: ModelSpec, cumulants, c_div: float, *, near=(), min_mass: float = 0.05
                      ) -> BranchComparison:
    """Compare sampled posterior means with the plug-in marginal, over all draws and basin by basin.

    At every ``P`` of ``draws`` the means of the copy weight ``c``, of ``alpha_1`` and of the
    test loss (:func:`~copylib.theory.plugin_loss.row_stochastic_plugin_loss`) are compared over
    all draws and within each basin (``c < c_div``, ``c >= c_div``), and the copy share
    ``Pr(c >= c_div)`` where the theory puts between 2 % and 98 % of the mass there. A basin
    enters when the theory gives it at least ``min_mass`` (and not all but ``min_mass``) and at
    least two data sets visit it. The error of a sampled mean is the leave-one-data-set-out
    jackknife (:func:`basin_mean`, the two chains of a data set as one group), combined with the
    theory's numerical error, the difference between two sets of cumulants: ``z = (sampled -
    theory) / hypot(s.e., theory - theory_b)``. The correlations of the z-scores of one ``P``
    are estimated from the jackknife replicates, their magnitudes shrunk by the noise bias
    ``(1 - r^2)^2 / (G - 1)`` of a correlation from ``G`` groups.

    Parameters
    ----------
    draws : mapping ``P -> (c, alpha_1, energy)``
        Each of shape ``(n_data, 2, n)`` (data set, chain, draw), as :func:`sample_two_starts` returns.
    spec : ModelSpec
        Softmax, cyclic.
    cumulants : pair of RowCumulants
        Two independent sets (:func:`~copylib.theory.softmax_marginal.row_cumulants`).
    c_div : float in ``(0, 1)``
        The dividing copy weight between the basins.
    near : sequence of P
        Sizes whose copy-weight comparisons enter ``res_c_near`` and ``res_theory_near``.
    min_mass : float in ``(0, 0.5)``

    Returns
    -------
    BranchComparison
    """
    spec = check_spec(spec, kind="softmax", theory="branch_comparison")
    if not hasattr(draws, "items") or len(draws) == 0:
        raise TypeError(f"draws must be a non-empty mapping P -> (c, alpha_1, energy), got {type(draws).__name__}")
    if len(cumulants) != 2:
        raise ValueError(f"cumulants must be a pair of RowCumulants (two Sobol sets), got {len(cumulants)} items")
    c_div = _finite_scalar("c_div", c_div)
    if not 0 < c_div < 1:
        raise ValueError(f"c_div must lie in (0, 1), got {c_div}")
    min_mass = _finite_scalar("min_mass", min_mass)
    if not 0 < min_mass < 0.5:
        raise ValueError(f"min_mass must lie in (0, 0.5), got {min_mass}")
    near = {float(P) for P in near}
    L = spec.L
    basins = {"all": (-np.inf, np.inf), "pool": (-np.inf, c_div), "copy": (c_div, np.inf)}
    marginals = {P: tuple(copy_weight_marginal(float(P), spec, cu) for cu in cumulants) for P in draws}
    rows, corr_blocks, n_groups, theory_err, res_c, res_th = [], [], [], [], [], []
    for P, (c3, a13, _) in draws.items():
        c3, a13 = as_real_array("draws", c3), as_real_array("draws", a13)
        if c3.ndim != 3 or c3.shape != a13.shape or c3.shape[1] != 2:
            raise ValueError(f"draws[{P}] must hold arrays of shape (n_data, 2, n), got {c3.shape}, {a13.shape}")
        n_data = c3.shape[0]
        groups = np.repeat(np.arange(n_data), 2)  # chain -> data set
        c, a1 = c3.reshape(2 * n_data, -1), a13.reshape(2 * n_data, -1)
        values = {"c": c, "alpha_1": a1, "loss": row_stochastic_plugin_loss(a1, L * c, float(P), spec)}
        m, m_b = marginals[P]
        todo = []
        if 0.02 < m.mass(c_div) < 0.98:
            todo.append(("copy share", (c >= c_div).astype(float), "all", m.mass(c_div), m_b.mass(c_div)))
        for basin, (lo, hi) in basins.items():
            mass = m.mass(lo, hi)
            visits = np.bincount(groups, ((c >= lo) & (c < hi)).sum(1))
            if mass < min_mass or (basin != "all" and mass > 1 - min_mass) or (visits > 0).sum() < 2:
                continue  # little mass, the same as "all", or fewer than two data sets visit the basin
            for what, x in values.items():
                todo.append((what, x, basin, m.mean(what, lo, hi), m_b.mean(what, lo, hi)))
        reps, scale = [], []
        for what, x, basin, th, th_b in todo:
            mean, err, loo = basin_mean(x, c, *basins[basin], groups=groups, return_replicates=True)
            s_ = float(np.hypot(err, th - th_b))
            rows.append((P, what, basin, mean, err, th, (mean - th) / s_))
            if what == "c" and float(P) in near:
                res_c.append(100 * 3.5 * s_ / abs(th))
                res_th.append(abs(th - th_b) / err)
            theory_err.append(abs(th - th_b) / err)
            reps.append(loo)
            scale.append(s_)
        if not todo:
            continue
        reps, scale = np.array(reps), np.array(scale)
        ok = np.isfinite(reps).all(0)  # a data set holding every draw of a basin has no replicate
        G = int(ok.sum())
        dev = reps[:, ok] - reps[:, ok].mean(1, keepdims=True)
        cov = (G - 1) / G * dev @ dev.T  # jackknife covariance of the compared means
        r = cov / np.outer(scale, scale)
        np.fill_diagonal(r, 1.0)  # z has unit variance: se^2 + delta^2 over itself
        r = np.clip(r, -1, 1)
        r2 = np.clip(r**2 - (1 - r**2) ** 2 / (G - 1), 0, 1)  # remove the noise bias of Xi-hat^2
        np.fill_diagonal(r2, 1.0)
        corr_blocks.append(np.sign(r) * np.sqrt(r2))
        n_groups.append(G)
    return BranchComparison(rows=tuple(rows), corr_blocks=tuple(corr_blocks), n_groups=tuple(n_groups),
                            theory_err=np.array(theory_err), res_c_near=np.array(res_c),
                            res_theory_near=np.array(res_th), marginals=marginals)


def _finite_scalar(name: str, value) -> float:
    """``value`` as a finite float, else ``TypeError``/``ValueError`` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    return value


@dataclass(frozen=True)
class FiniteSizeSummary:
    """The finite-size rows of the plug-in marginal in arrays: see :func:`finite_size_summary`.

    Attributes
    ----------
    L : int array ``(n,)``
        The sizes with a first-order point (in Sobol set A), increasing.
    barrier, barrier_b : arrays ``(n, 2)``
        Barrier at ``P3`` above the pooling and the copy minimum (nats), Sobol sets A and B.
    barrier_err : array ``(n, 2)``
        Numerical error of ``barrier``: ``|A - B|`` plus the change under grid refinement
        (at a refined ``L``; elsewhere the largest change measured, ``grid_change``).
    window, sharpness, slope : arrays ``(n, 2)``
        Of sets A and B (:class:`~copylib.theory.softmax_marginal.FiniteSizeRow`).
    L_two, L_none : tuple of int
        The sizes where both sets find two minima, and where neither does.
    grid_change : float
        The largest change of a barrier under grid refinement (nats; ``0`` without refined rows).
    """

    L: np.ndarray
    barrier: np.ndarray
    barrier_b: np.ndarray
    barrier_err: np.ndarray
    window: np.ndarray
    sharpness: np.ndarray
    slope: np.ndarray
    L_two: tuple
    L_none: tuple
    grid_change: float


def finite_size_summary(rows, refined=None) -> FiniteSizeSummary:
    """Collect the finite-size rows of two Sobol sets into arrays, with the barriers' numerical errors.

    Parameters
    ----------
    rows : mapping ``L -> (FiniteSizeRow, FiniteSizeRow)``
        Sobol sets A and B per ``L``.
    refined : mapping ``L -> FiniteSizeRow``, optional
        Set A recomputed on a refined tilt grid at some ``L``: the change of its barriers is
        the grid error there, and the largest such change stands for it at the other ``L``.

    Returns
    -------
    FiniteSizeSummary
    """
    if not hasattr(rows, "items") or len(rows) == 0:
        raise TypeError(f"rows must be a non-empty mapping L -> (FiniteSizeRow, FiniteSizeRow), got {rows!r}")
    for n_pos, pair in rows.items():
        if len(pair) != 2 or not all(isinstance(r, FiniteSizeRow) for r in pair):
            raise TypeError(f"rows must map L to two FiniteSizeRow (Sobol sets A, B); got {pair!r} at L = {n_pos}")
    refined = {} if refined is None else refined
    if not hasattr(refined, "items") or not all(isinstance(r, FiniteSizeRow) and n in rows for n, r in refined.items()):
        raise TypeError("refined must map some L of rows to a FiniteSizeRow")
    sizes = sorted(rows)
    L_jump = np.array([n for n in sizes if math.isfinite(rows[n][0].P3)], dtype=int)

    def per_set(attr):
        return np.array([[getattr(rows[n][k], attr) for k in (0, 1)] for n in L_jump], dtype=float).reshape(-1, 2)

    bar = np.array([rows[n][0].barrier_height for n in L_jump], dtype=float).reshape(-1, 2)
    bar_b = np.array([rows[n][1].barrier_height for n in L_jump], dtype=float).reshape(-1, 2)
    change = {n: np.abs(np.array(r.barrier_height) - np.array(rows[n][0].barrier_height)) for n, r in refined.items()}
    grid = float(max((float(np.nanmax(x)) for x in change.values()), default=0.0))
    err = np.abs(bar - bar_b) + np.array([change.get(n, [grid, grid]) for n in L_jump], dtype=float).reshape(-1, 2)
    return FiniteSizeSummary(
        L=L_jump, barrier=bar, barrier_b=bar_b, barrier_err=err, window=per_set("window"),
        sharpness=per_set("sharpness"), slope=per_set("slope"),
        L_two=tuple(n for n in sizes if rows[n][0].two_minima and rows[n][1].two_minima),
        L_none=tuple(n for n in sizes if not (rows[n][0].two_minima or rows[n][1].two_minima)),
        grid_change=grid)
