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
* :func:`p3_from_shares`, :func:`p3_from_hopping` -- where the copy-basin mass (given,
  or of chains that hop between the basins) crosses one half;
* :func:`uniform_copy_attention` -- the copy pattern with a given copy weight in every row;
* :func:`basin_mean` -- a basin-conditional mean over chains with a jackknife error
  (leave one chain, or one group of chains sharing a data set, out);
* :func:`weak_double_minimum` -- the shallow double minimum of the plug-in marginal at
  ``L = 24`` (the one computation the softmax and predictability chapters both quote);
* :func:`map_data_gain` -- the data gain of the ``map`` action in closed form, and the ratio
  ``gamma_1 / (alpha_1 + eps)`` it depends on;
* :func:`spinodal_expansion` -- the one-gap action near its lower spinodal: derivatives there and
  how the copy minimum's depth and width vanish;
* :func:`planted_starts` -- Adam runs planted on either side of the barrier top of the ``map``
  action, with the minimum each should end in.

The evidence the chapter checks (finite-size tables, the comparison of the sampled
branches with the plug-in marginal, chain convergence, the plug-in action's error on
the exact evidence) is in :mod:`copylib.analysis.softmax_evidence`.

The chapter's MCMC diagnostics (R-hat of chains grouped by data set, the range
of ``mean(z^2)`` for correlated z-scores) are in :mod:`copylib.inference.diagnostics`.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
import pandas as pd
import torch

from ..arguments import (
    as_paired_arrays,
    as_real_array,
    check_bool,
    check_finite,
    check_int,
    check_positive,
)
from ..inference.map_training import train_map
from ..inference.posterior_sampling import sample_collapsed_posterior
from ..model.network import ModelSpec, attention, attention_logits, check_spec
from ..model.statistics import cooccurrence
from ..model.task import copy_task, shift_matrix
from ..posterior.evidence import optimal_readout
from ..posterior.order_parameters import copy_attention, copy_weight
from ..theory import softmax as softmax_theory
from ..theory.results import Spinodals
from ..theory.softmax_marginal import finite_size_cumulants, finite_size_row, marginal_scan

if TYPE_CHECKING:
    from ..inference.langevin import SamplingResult

__all__ = [
    "DoubleMinimum",
    "basin_mean",
    "PlantedStarts",
    "SpinodalExpansion",
    "interpolate_crossing",
    "map_data_gain",
    "p3_from_hopping",
    "p3_from_shares",
    "planted_init",
    "planted_logits",
    "planted_starts",
    "sample_two_starts",
    "spinodal_expansion",
    "state_fraction",
    "uniform_copy_attention",
    "weak_double_minimum",
]


def planted_logits(Delta: npt.ArrayLike, L: int, causal: bool = False) -> np.ndarray:
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


def planted_init(Delta: npt.ArrayLike, C: npt.ArrayLike, spec: ModelSpec) -> dict[str, np.ndarray]:
    """Initial states ``{"g": (R, L, L), "b": (R,), "W": (R, V, V)}`` planted in a copy state.

    Delta : float or ``(R,)`` (``0`` gives uniform pooling); C : ``(R, L, L, V, V)``.
    ``g = planted_logits(Delta, L, spec.causal)``, ``b = 0`` and ``W`` the ridge readout of that
    attention for each run's data (:func:`copylib.posterior.evidence.optimal_readout`).
    Drop ``"W"`` to start the collapsed sampler.
    """
    check_spec(spec)
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


def interpolate_crossing(x: npt.ArrayLike, y: npt.ArrayLike) -> float:
    """The ``x`` where the tabulated ``y`` first changes sign (linear interpolation), or ``nan``.

    x : increasing ``(n,)``; y : ``(n,)``, both finite. ``nan`` is returned only when
    ``y`` has no sign change and no zero.
    """
    x, y = as_paired_arrays("x", x, "y", y)
    if not (np.diff(x) > 0).all():
        raise ValueError("x must be strictly increasing")
    s = np.sign(y)
    idx = np.flatnonzero(s[:-1] * s[1:] < 0)
    if idx.size == 0:
        zero = np.flatnonzero(y == 0)
        return float(x[zero[0]]) if zero.size else float("nan")
    i = idx[0]
    return float(x[i] - y[i] * (x[i + 1] - x[i]) / (y[i + 1] - y[i]))


def state_fraction(x: npt.ArrayLike, threshold: float) -> np.ndarray:
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


def sample_two_starts(P_values: npt.ArrayLike, spec: ModelSpec, n_data: int, n_steps: int, *, n_warmup: int,
                      thin: int, seed: int, planted_gap: float = 2.4, gap_step: float | None = None,
                      cache: bool = False
                      ) -> tuple[SamplingResult, dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]]:
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


def p3_from_shares(P_values: npt.ArrayLike, shares: npt.ArrayLike) -> float:
    """``P`` where the copy-basin mass ``p`` crosses one half, from the shares at the increasing ``P_values``.

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


def p3_from_hopping(c_by_P: Sequence[npt.ArrayLike], P_values: npt.ArrayLike, threshold: float) -> float:
    """``P`` where the pooled copy-basin mass ``p = Pr(c >= threshold)`` crosses one half
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


def uniform_copy_attention(c_row: float, L: int) -> np.ndarray:
    """Attention ``(L, L)`` with copy weight ``c_row`` on the previous position in every row.

    It is the copy pattern :func:`copylib.posterior.order_parameters.copy_attention`
    at the gap ``ln[(L-1) c_row / (1 - c_row)]``; ``0 < c_row < 1``.
    """
    L = check_int("L", L, minimum=2)
    c_row = as_real_array("c_row", c_row)
    if c_row.ndim or not 0 < c_row < 1:
        raise ValueError(f"c_row must be a single number in (0, 1), got {c_row}")
    return np.asarray(copy_attention(np.log((L - 1) * c_row / (1 - c_row)), L))


def basin_mean(x: npt.ArrayLike, c: npt.ArrayLike, lo: float = -np.inf, hi: float = np.inf, *,
               groups: npt.ArrayLike | None = None, return_replicates: bool = False
               ) -> tuple[float, float] | tuple[float, float, np.ndarray]:
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


def weak_double_minimum(L: int = 24, V: int = 4, *, seeds: Sequence[int] = (21, 22), n_draws: int = 8192,
                        rel_step: float = 1e-3, n_scan: int = 17) -> DoubleMinimum:
    """Measure the shallow double minimum of the plug-in marginal of ``c`` at ``(L, V)``.

    For each seed, the row cumulants (:func:`~copylib.theory.softmax_marginal.finite_size_cumulants`,
    ``n_draws`` Sobol draws, the default ``t_step``) and the finite-size row
    (:func:`~copylib.theory.softmax_marginal.finite_size_row` with ``rel_step``); then
    ``n_scan`` sizes across each coexistence window give the depth of the shallower basin
    and ``Omega_copy - Omega_pool`` inside it. The defaults are the one computation at ``L = 24``
    that the softmax chapter runs and glues (the predictability chapter pastes its numbers): the full ``n_draws`` of
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


def map_data_gain(Delta: npt.ArrayLike, P: float, spec: ModelSpec) -> tuple[np.ndarray, np.ndarray]:
    """The data gain of the ``map`` action at the gap ``Delta``, in closed form, and the ratio it grows with.

    At the uniform copy pattern with gap ``Delta`` (copy weight ``c = 1 / (1 + (L-1) e^-Delta)``,
    ``alpha_1 = L (c^2 + (1-c)^2/(L-1))``, ``gamma_1 = L c``) the ``map`` action is
    ``-G0 gamma_1^2 / (L (alpha_1 + eps)) + (L-1) Delta^2 / (2 sigma_G^2)`` up to a constant in ``Delta``,
    with ``G0 = P (V-1) / (2 sigma0^2 V)`` and the ridge ``eps = V sigma0^2 L / (omega P)``.

    Parameters
    ----------
    Delta : float or array
        Gaps, finite.
    P : float > 0
        Sample size.
    spec : ModelSpec
        Softmax.

    Returns
    -------
    gain, ratio : arrays of the shape of ``Delta``
        ``G0 gamma_1^2 / (L (alpha_1 + eps))`` and ``gamma_1 / (alpha_1 + eps)``.
    """
    spec = check_spec(spec, kind="softmax", theory="map_data_gain")
    Delta = as_real_array("Delta", Delta)
    check_finite("Delta", Delta)
    P = check_positive("P", P)
    c = 1 / (1 + (spec.L - 1) * np.exp(-Delta))
    alpha_1, gamma_1 = spec.L * (c**2 + (1 - c)**2 / (spec.L - 1)), spec.L * c
    eps = spec.V * spec.sigma0_sq * spec.L / (spec.omega * P)
    G0 = P * (spec.V - 1) / (2 * spec.sigma0_sq * spec.V)
    return G0 * gamma_1**2 / (spec.L * (alpha_1 + eps)), gamma_1 / (alpha_1 + eps)


@dataclass(frozen=True)
class SpinodalExpansion:
    """The one-gap action near its lower spinodal: see :func:`spinodal_expansion`.

    Attributes
    ----------
    dS, d2S : float
        ``S'`` and ``S''`` at the lower spinodal (both zero there).
    d3S : float
        The third derivative ``S'''`` there (central difference of ``S''`` with step ``h``).
    dS_dP : float
        ``a = dS'/dP`` there (central difference with ``P -+ 1``).
    rel_P : array ``(2,)``
        Relative distances ``delta / P_lower`` above the spinodal.
    depth, width : arrays ``(2,)``
        Depth ``S_b`` (nats) and width ``x_+ - x_-`` of the copy minimum at those distances
        (:func:`~copylib.theory.softmax.copy_minimum_depth`).
    exponents : array ``(2,)``
        The two-point power laws of ``S_b`` and ``x_+ - x_-`` in ``delta`` (``3/2`` and ``1/2`` expected).
    depth_far, depth_near : float
        ``S_b`` at ``P_lower + dP[0]`` and ``P_lower + dP[1]``.
    """

    dS: float
    d2S: float
    d3S: float
    dS_dP: float
    rel_P: np.ndarray
    depth: np.ndarray
    width: np.ndarray
    exponents: np.ndarray
    depth_far: float
    depth_near: float


def spinodal_expansion(spinodals: Spinodals, spec: ModelSpec, *, version: str = "mean_field",
                       rel_P: npt.ArrayLike = (1e-4, 1e-3), h: float = 1e-4,
                       dP: tuple[float, float] = (5.0, 1.25)) -> SpinodalExpansion:
    """Expand the one-gap action ``S(Delta; P)`` around its lower spinodal ``(Delta_lower, P_lower)``.

    Near the spinodal the first two derivatives vanish; with ``delta = P - P_lower`` the copy
    minimum's depth below the barrier top grows like ``delta^(3/2)`` and its distance from the top
    like ``delta^(1/2)``, the depth being the third derivative times the distance cubed over 12 at
    leading order. This returns the pieces of that expansion, from
    :func:`copylib.theory.softmax.reduced_action_derivatives` and
    :func:`copylib.theory.softmax.copy_minimum_depth`.

    Parameters
    ----------
    spinodals : :class:`~copylib.theory.results.Spinodals`
        Of ``spec`` and ``version``.
    spec : ModelSpec
        Softmax.
    version : str
        A theory version of :mod:`copylib.theory.softmax` without noise.
    rel_P : two floats in ``(0, 1)``, increasing
    h : float > 0
        Step of the central difference of ``S''``.
    dP : two floats > 0
        Distances above ``P_lower`` of ``depth_far`` and ``depth_near``.

    Returns
    -------
    SpinodalExpansion
    """
    spec = check_spec(spec, kind="softmax", theory="spinodal_expansion")
    for name in ("P_lower", "Delta_lower"):
        value = getattr(spinodals, name, None)
        if not isinstance(value, numbers.Real) or not math.isfinite(value):
            raise TypeError(f"spinodals must be a Spinodals with a finite {name}, got {spinodals!r}")
    rel_P = as_real_array("rel_P", rel_P)
    if rel_P.shape != (2,) or not (0 < rel_P[0] < rel_P[1] < 1):
        raise ValueError(f"rel_P must be two increasing numbers in (0, 1), got {rel_P}")
    h = check_positive("h", h)
    if isinstance(dP, (str, bytes)) or not hasattr(dP, "__len__") or len(dP) != 2:
        raise ValueError(f"dP must be two distances > 0, got {dP!r}")
    dP = tuple(check_positive("dP", x) for x in dP)
    D, P = spinodals.Delta_lower, spinodals.P_lower

    def derivs(Delta, P_):
        return softmax_theory.reduced_action_derivatives(Delta, P_, spec, version=version)

    _, dS, d2S = derivs(D, P)
    depth, width = np.array([softmax_theory.copy_minimum_depth(P * (1 + r), spec, version) for r in rel_P]).T
    exponents = np.log(np.array([depth[1] / depth[0], width[1] / width[0]])) / np.log(rel_P[1] / rel_P[0])
    d3S = (derivs(D + h, P)[2] - derivs(D - h, P)[2]) / (2 * h)
    dS_dP = (derivs(D, P + 1)[1] - derivs(D, P - 1)[1]) / 2
    depth_far, depth_near = (softmax_theory.copy_minimum_depth(P + x, spec, version)[0] for x in dP)
    return SpinodalExpansion(dS=float(dS), d2S=float(d2S), d3S=float(d3S), dS_dP=float(dS_dP), rel_P=rel_P,
                             depth=depth, width=width, exponents=exponents, depth_far=float(depth_far),
                             depth_near=float(depth_near))


@dataclass(frozen=True)
class PlantedStarts:
    """Adam runs planted around the barrier top of the ``map`` action: see :func:`planted_starts`.

    Attributes
    ----------
    P : float
    Delta_min : array ``(n_minima,)``
        The gaps of the local minima of ``S_map`` at ``P`` (pooling first).
    Delta_top : float
        The barrier top between the outer two (on a grid of 2001 gaps).
    fracs : array ``(k,)``
        Where each run is planted: negative on the pooling side, a fraction of the way from the
        top to the pooling minimum; positive on the copy side, towards the copy minimum.
    Delta_planted : array ``(k,)``
    c_end : array ``(R, k)``
        The copy weight each run ends at (data set, planted gap).
    c_predicted : array ``(k,)``
        The copy weight of the minimum on the planted side.
    """

    P: float
    Delta_min: np.ndarray
    Delta_top: float
    fracs: np.ndarray
    Delta_planted: np.ndarray
    c_end: np.ndarray
    c_predicted: np.ndarray

    def frame(self) -> pd.DataFrame:
        """Planted gaps, predicted and reached copy weights, one column per planted gap."""
        rows = {"planted Delta": self.Delta_planted, "predicted c": self.c_predicted,
                **{f"data set {s}": c for s, c in enumerate(self.c_end)}}
        return pd.DataFrame(rows, index=pd.Index(self.fracs, name="planted at")).T


def planted_starts(C: npt.ArrayLike, P: float, spec: ModelSpec, *, fracs: npt.ArrayLike = (-0.5, -0.25, 0.25, 0.5),
                   n_steps: int = 1000, n_records: int = 11) -> PlantedStarts:
    """Adam planted on either side of the barrier top of ``S_map(Delta; P)``: which minimum does each run reach?

    The local minima of the ``map`` action (:func:`copylib.theory.softmax.local_minima`) and the
    top between the outer two (the largest action on 2001 gaps between them) set the planted
    gaps ``Delta_top + f (Delta_top - Delta_pool)`` for ``f < 0`` and ``Delta_top + f (Delta_copy -
    Delta_top)`` for ``f > 0``; every data set of ``C`` is trained from each planted gap
    (:func:`planted_init`, :func:`~copylib.inference.map_training.train_map`, no random draw).

    Parameters
    ----------
    C : array ``(R, L, L, V, V)``
        One co-occurrence tensor per data set.
    P : float > 0
        Where ``S_map`` has two minima.
    spec : ModelSpec
        Softmax.
    fracs : sequence of float in ``[-1, 1]``, none zero
    n_steps, n_records : int
        As in :func:`~copylib.inference.map_training.train_map`.

    Returns
    -------
    PlantedStarts
    """
    spec = check_spec(spec, kind="softmax", theory="planted_starts")
    P = check_positive("P", P)
    fracs = as_real_array("fracs", fracs)
    if fracs.ndim != 1 or fracs.size == 0 or not ((np.abs(fracs) <= 1) & (fracs != 0)).all():
        raise ValueError(f"fracs must be non-zero numbers in [-1, 1], got {fracs}")
    C = as_real_array("C", C)
    if C.ndim != 5 or C.shape[1:] != (spec.L, spec.L, spec.V, spec.V):
        raise ValueError(f"C must have shape (R, {spec.L}, {spec.L}, {spec.V}, {spec.V}), got {C.shape}")
    D_min = np.array([r.coordinates["Delta"] for r in softmax_theory.local_minima(P, spec, "map")])
    if D_min.size < 2:
        raise ValueError(f"P: S_map must have two minima at P = {P}, it has {D_min.size}")
    D_line = np.linspace(D_min[0], D_min[-1], 2001)
    D_top = D_line[np.argmax(softmax_theory.reduced_action(D_line, P, spec, version="map"))]
    D_plant = np.where(fracs < 0, D_top + fracs * (D_top - D_min[0]), D_top + fracs * (D_min[-1] - D_top))
    n_data = C.shape[0]
    C_runs = np.repeat(C, fracs.size, axis=0)  # run = (data set, planted gap)
    runs = train_map(C_runs, spec, init=planted_init(np.tile(D_plant, n_data), C_runs, spec), n_steps=n_steps,
                     n_records=n_records)
    c_end = np.asarray(copy_weight(runs.A)).reshape(n_data, fracs.size)
    c_pred = softmax_theory.copy_weight_of_gap(np.where(fracs < 0, D_min[0], D_min[-1]), spec, version="map")
    return PlantedStarts(P=P, Delta_min=D_min, Delta_top=float(D_top), fracs=fracs, Delta_planted=D_plant,
                         c_end=c_end, c_predicted=np.asarray(c_pred))
