"""Numbers the softmax chapter quotes from its finite-size and error-bar results.

The chapter's prose states dozens of numbers read off two results: the finite-size rows of
the plug-in marginal across ``L`` and the table of z-scores of the sampled branches. These
functions compute them in one place, each a small frozen result the chapter glues:

* :func:`finite_size_numbers` -- barriers, windows, sharpness and ``P3`` at the quoted sizes,
  the sizes with and without two minima, the numerical errors, the shallow double minimum,
  the ratio to a saddle-point version's ``P3`` and two-point slopes of ``ln P3`` in ``ln L``;
* :func:`z_table_numbers` -- the size and worst z-score of the table, the false-alarm chances
  of the test ``|z| < limit`` (Student-t, normal, and simulated for the correlated table),
  the calibration range of the mean of ``z^2`` and the error-bar factors it can detect;
* :func:`large_L_numbers` -- the paired chains near ``P3`` at a larger ``L`` against those at a
  reference ``L``: the plug-in jump, the chains' length, mixing and crossings, the data-set spread
  of the basins' log-odds with its upper bound, and the sampled barrier, sharpness and jump at both.

The results they read are made by :mod:`copylib.analysis.softmax_evidence`,
:mod:`copylib.analysis.softmax` and :mod:`copylib.analysis.softmax_large_L`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
from scipy import stats

from ..arguments import check_instance, check_int, check_positive
from ..inference.diagnostics import StudentizedZNull, z_calibration
from ..theory.softmax_marginal import FiniteSizeRow
from .softmax import DoubleMinimum
from .softmax_evidence import BranchComparison, FiniteSizeSummary
from .softmax_large_L import NearP3, PluginComparison

__all__ = ["FiniteSizeNumbers", "LargeLNumbers", "ZTableNumbers", "finite_size_numbers", "large_L_numbers",
           "z_table_numbers"]


@dataclass(frozen=True)
class FiniteSizeNumbers:
    """The finite-size numbers a chapter quotes: see :func:`finite_size_numbers`.

    Attributes
    ----------
    values : read-only mapping ``name -> number``
        Names as listed in :func:`finite_size_numbers` (a chapter glues them under a prefix).
    """

    values: Mapping

    def __getitem__(self, name: str):
        return self.values[name]


def _sizes(name: str, sizes) -> tuple[int, ...]:
    if isinstance(sizes, (str, bytes)) or not hasattr(sizes, "__iter__"):
        raise TypeError(f"{name} must be a sequence of sizes L >= 3, got {sizes!r}")
    return tuple(check_int(name, n, 3) for n in sizes)


def finite_size_numbers(summary: FiniteSizeSummary, rows: Mapping[int, tuple[FiniteSizeRow, FiniteSizeRow]], *,
                        weak: DoubleMinimum | None = None, corrected: Mapping[int, FiniteSizeRow] | None = None,
                        saddle_P3: Mapping[str, Mapping[int, float]] | None = None,
                        quoted: Sequence[int] = (28, 32, 40, 48, 64, 96), compared: Sequence[int] = (32, 96),
                        slopes: Sequence[tuple[int, int]] = ((28, 48), (48, 96))) -> FiniteSizeNumbers:
    """Collect the numbers read off the finite-size rows of the plug-in marginal.

    With ``n`` an ``L`` of ``quoted`` that has a first-order point (in ``summary.L``; Sobol set A):

    * ``bar_n``, ``barc_n`` -- the barrier at ``P3`` above the pooling and the copy minimum
      (nats); ``win_n``, ``sharp_n`` -- the window over ``P3`` and the sharpness; ``P3_n``;
    * ``L_two``, ``L_none``, ``L_jump`` -- the smallest ``L`` with two minima in both sets, the
      largest with none in either, the smallest with a first-order point; ``L_min``, ``L_max``
      of ``rows``; ``step_n`` -- the resolution of the search at every ``L`` without two minima,
      and ``shoulder``, the largest shoulder slope of ``Omega`` there (both sets);
    * ``grid_abs`` -- the largest change of a barrier under grid refinement; ``sobol_max`` --
      the largest difference of a barrier between the two sets;
    * with ``weak`` (a :class:`~copylib.analysis.softmax.DoubleMinimum` at ``L = w``): ``w_lo``,
      ``w_hi``, ``w_width``, ``w_depth`` of its windows, and ``w_depth_A``, the depth on set A's
      own scan (``rows[w][0]``);
    * with ``corrected`` (``L -> FiniteSizeRow`` with the second-order saddlepoint term):
      ``corr_n``, the change of the pooling-side barrier at every such ``n`` with a first-order
      point, and ``w_depth_corr`` at the weak ``L``;
    * with ``saddle_P3`` (``L -> P3`` of a saddle-point version, here called ``s``): for ``n`` in
      ``compared``, ``s_n`` (as ``mean_field_n`` for the key ``"mean_field"``; see below) and
      ``ratio_n``, the plug-in ``P3`` over it; and for each pair ``(a, b)`` of ``slopes`` the
      two-point slopes ``ln(P3_b / P3_a) / ln(b / a)`` as ``k_plug_lo`` / ``k_plug_hi`` and
      ``k_s_lo`` / ``k_s_hi`` (first pair ``lo``, second ``hi``).

    Parameters
    ----------
    summary : FiniteSizeSummary
        :func:`~copylib.analysis.softmax_evidence.finite_size_summary` of ``rows``.
    rows : mapping ``L -> (FiniteSizeRow, FiniteSizeRow)``
        Sobol sets A and B per ``L``.
    weak : DoubleMinimum, optional
    corrected : mapping ``L -> FiniteSizeRow``, optional
    saddle_P3 : mapping ``name -> (mapping L -> float)``, optional
        At most one version, e.g. ``{"mean_field": {L: P3}}``.
    quoted, compared : sequences of int
    slopes : two pairs ``(a, b)`` of sizes with a first-order point, or ``()``

    Returns
    -------
    FiniteSizeNumbers
    """
    check_instance("summary", summary, FiniteSizeSummary)
    if not hasattr(rows, "items") or len(rows) == 0 or not all(
            len(p) == 2 and all(isinstance(r, FiniteSizeRow) for r in p) for p in rows.values()):
        raise TypeError("rows must be a non-empty mapping L -> (FiniteSizeRow, FiniteSizeRow)")
    if weak is not None and not isinstance(weak, DoubleMinimum):
        raise TypeError(f"weak must be a DoubleMinimum or None, got {type(weak).__name__}")
    corrected = {} if corrected is None else corrected
    if not hasattr(corrected, "items") or not all(isinstance(r, FiniteSizeRow) and n in rows
                                                  for n, r in corrected.items()):
        raise TypeError("corrected must map some L of rows to a FiniteSizeRow")
    saddle_P3 = {} if saddle_P3 is None else saddle_P3
    if not hasattr(saddle_P3, "items") or len(saddle_P3) > 1:
        raise TypeError("saddle_P3 must map at most one version name to a mapping L -> P3")
    quoted, compared = _sizes("quoted", quoted), _sizes("compared", compared)
    slopes = tuple(_sizes("slopes", pair) for pair in slopes)
    if len(slopes) not in (0, 2) or any(len(p) != 2 for p in slopes):
        raise ValueError(f"slopes must be two pairs (a, b) of sizes or empty, got {slopes}")
    by_L = {int(n): i for i, n in enumerate(summary.L)}
    plug_P3 = {n: rows[n][0].P3 for n in rows}
    for n in {n for p in slopes for n in p} | ({n for n in compared} if saddle_P3 else set()):
        if n not in by_L or n not in rows:
            raise ValueError(f"slopes and compared: L = {n} has no first-order point in summary and rows")
    bar, win, sharp = summary.barrier, summary.window, summary.sharpness
    out = {f"{k}_{n}": float(x) for n in quoted if n in by_L for k, x in (
        ("bar", bar[by_L[n], 0]), ("barc", bar[by_L[n], 1]), ("win", win[by_L[n], 0]), ("sharp", sharp[by_L[n], 0]),
        ("P3", plug_P3[n]))}
    if summary.L_two:
        out["L_two"] = float(min(summary.L_two))
    if summary.L_none:
        out["L_none"] = float(max(summary.L_none))
        out["shoulder"] = float(max(rows[n][k].shoulder for n in summary.L_none for k in (0, 1)))
    if len(summary.L):
        out["L_jump"] = float(min(summary.L))
        out["sobol_max"] = float(np.abs(bar - summary.barrier_b).max())
    out.update(L_min=float(min(rows)), L_max=float(max(rows)), grid_abs=float(summary.grid_change))
    out.update({f"step_{n}": float(rows[n][0].step) for n in summary.L_none})
    if weak is not None:
        w = weak.L
        out.update({f"{w}_lo": float(weak.P_lower), f"{w}_hi": float(weak.P_upper), f"{w}_width": float(weak.width),
                    f"{w}_depth": float(weak.depth)})
        if w in rows:
            out[f"{w}_depth_A"] = float(rows[w][0].max_depth)
        if w in corrected:
            out[f"{w}_depth_corr"] = float(corrected[w].max_depth)
    for n, r in corrected.items():
        if n in by_L:
            out[f"corr_{n}"] = float(abs(r.barrier_height[0] - rows[n][0].barrier_height[0]))
    curves = {"plug": plug_P3}
    for name, P3_of in saddle_P3.items():
        out.update({f"{name}_{n}": float(P3_of[n]) for n in compared})
        out.update({f"ratio_{n}": float(plug_P3[n] / P3_of[n]) for n in compared})
        curves[name] = P3_of
    for name, P3_of in curves.items():
        out.update({f"k_{name}_{end}": float(np.log(P3_of[b] / P3_of[a]) / np.log(b / a))
                    for end, (a, b) in zip(("lo", "hi"), slopes)})
    for key, x in out.items():
        if not math.isfinite(x):
            raise ValueError(f"rows, weak and saddle_P3 must give finite numbers; {key} is {x}")
    return FiniteSizeNumbers(values=MappingProxyType(out))


@dataclass(frozen=True)
class ZTableNumbers:
    """The numbers quoted about a table of z-scores and its test: see :func:`z_table_numbers`.

    Attributes
    ----------
    n : int
        Comparisons in the table.
    maxz : float
        The largest ``|z|``.
    theory_err : float
        The largest theory error over the sampling error (``|theory - theory_b| / s.e.``).
    dof : int
        Degrees of freedom of one z (data sets minus one).
    fail_one, fail_one_normal : float
        ``P(|z| >= limit)`` for one comparison, Student-t with ``dof`` and standard normal (%).
    fail_normal : float
        ``P(max |z| >= limit)`` for ``n`` independent normal z's (%).
    fail : float
        The same for the correlated table, from its simulated law (%).
    res_c_min, res_c_max : float
        The range of ``res_c_near`` of the comparison (% of the copy weight; ``nan`` if empty).
    n_sim : int
        Tables simulated for the law of the mean of ``z^2``.
    mean_z2, lo, hi : float
        The mean of ``z^2`` and the central 95 % range of its simulated law.
    null_mean : float
        The mean of that law.
    naive_lo, naive_hi : float
        The range for independent standard normal z's.
    fac_lo, fac_hi : float
        Error bars too large by ``fac_lo`` (too small by ``fac_hi``) move a typical mean of ``z^2``
        (``null_mean``) to the end of the range: the factors the calibration can detect.
    """

    n: int
    maxz: float
    theory_err: float
    dof: int
    fail_one: float
    fail_one_normal: float
    fail_normal: float
    fail: float
    res_c_min: float
    res_c_max: float
    n_sim: int
    mean_z2: float
    lo: float
    hi: float
    null_mean: float
    naive_lo: float
    naive_hi: float
    fac_lo: float
    fac_hi: float


def z_table_numbers(comparison: BranchComparison, null: StudentizedZNull, n_sets: int, *,
                    limit: float = 3.5) -> ZTableNumbers:
    """Describe a table of z-scores, its test ``|z| < limit`` and the calibration of its error bars.

    Parameters
    ----------
    comparison : BranchComparison
        :func:`~copylib.analysis.softmax_evidence.branch_comparison` (at least two comparisons).
    null : StudentizedZNull
        The simulated law of the table (:func:`~copylib.inference.diagnostics.studentized_z_null`).
    n_sets : int >= 4
        Data sets behind each error bar (a z is close to Student-t with ``n_sets - 1`` degrees of freedom).
    limit : float > 0

    Returns
    -------
    ZTableNumbers
    """
    check_instance("comparison", comparison, BranchComparison)
    check_instance("null", null, StudentizedZNull)
    n_sets = check_int("n_sets", n_sets, 4)
    limit = check_positive("limit", limit)
    z = comparison.z
    if z.size < 2 or not np.isfinite(z).all():
        raise ValueError(f"comparison must hold at least two finite z-scores, got {z.size}")
    cal, naive = null.calibration(z), z_calibration(z)
    typical = float(null.mean_z2.mean())
    res = comparison.res_c_near
    return ZTableNumbers(
        n=int(len(z)), maxz=float(np.abs(z).max()), theory_err=float(max(comparison.theory_err)), dof=int(n_sets - 1),
        fail_one=float(100 * 2 * stats.t.sf(limit, n_sets - 1)), fail_one_normal=float(100 * 2 * stats.norm.sf(limit)),
        fail_normal=float(100 * (1 - (1 - 2 * stats.norm.sf(limit)) ** len(z))),
        fail=float(100 * null.false_alarm(limit)),
        res_c_min=float(min(res)) if len(res) else math.nan, res_c_max=float(max(res)) if len(res) else math.nan,
        n_sim=int(null.mean_z2.size), mean_z2=float(cal.mean_z2), lo=float(cal.lo), hi=float(cal.hi),
        null_mean=typical, naive_lo=float(naive.lo), naive_hi=float(naive.hi),
        fac_lo=float(np.sqrt(typical / cal.lo)), fac_hi=float(np.sqrt(cal.hi / typical)))


@dataclass(frozen=True)
class LargeLNumbers:
    """The numbers a chapter quotes about paired chains near ``P3`` at a larger ``L``: see :func:`large_L_numbers`.

    Attributes
    ----------
    values : read-only mapping ``name -> number``
        Names as listed in :func:`large_L_numbers` (a chapter glues them under a prefix); counts are ints.
    """

    values: Mapping

    def __getitem__(self, name: str):
        return self.values[name]


_SAMPLED = (("jump", "jump of c", "sampled"), ("jump_se", "jump of c", "s.e."), ("slope", "log-odds slope", "sampled"),
            ("slope_se", "log-odds slope", "s.e."), ("bar", "barrier from pooling", "sampled"),
            ("bar_se", "barrier from pooling", "s.e."))


def large_L_numbers(near: NearP3, reference: PluginComparison, *, reference_sharpness: float,
                    plugin_jumps: Mapping[int, float], n_steps: tuple[int, int], level: float = 0.95
                    ) -> LargeLNumbers:
    """Collect the numbers read off paired chains near the plug-in ``P3`` of one ``L`` and a reference ``L``.

    With ``near`` sampled at ``L`` (sizes ``near.P = (below, P3, above)``) and ``reference`` the same
    comparison at a smaller ``L_ref``:

    * ``P3``, ``bar_pool``, ``bar_copy``, ``sharp`` -- the plug-in jump at ``L`` (``near.plugin``), and
      ``window``, its coexistence window over ``P3`` in %; ``sharp_<L_ref>`` -- ``reference_sharpness``;
    * ``n_data`` -- data sets per size; ``P_lo``, ``P_hi`` -- the side sizes; ``steps_side``,
      ``steps_mid`` -- ``n_steps`` (side, centre);
    * ``ess_chain`` -- the fewest effective draws of ``c`` per chain at ``P3``, ``rhat_expected`` --
      ``1 + 1 / ess_chain``, the R-hat of perfectly mixed chains that short; ``cross_min`` -- the fewest
      crossings of ``c*`` by one chain at ``P3``;
    * ``spread_total``, ``spread_sampling``, ``spread_data`` -- the data-set spread of the basins'
      log-odds at ``P3`` and its parts (:class:`~copylib.analysis.softmax_large_L.BasinWeights`);
      ``spread_hi`` -- the one-sided ``level`` upper bound of the total spread (chi-square with
      ``n_data - 1`` degrees of freedom), ``spread_P`` -- that bound over the sharpness, in % of ``P3``;
    * for ``n`` in ``(L_ref, L)``: ``jump_n``, ``slope_n``, ``bar_n`` -- the sampled jump of ``c``, log-odds
      slope and binned barrier from pooling, and ``jump_se_n``, ``slope_se_n``, ``bar_se_n`` their errors;
    * ``jump_plug_min``, ``jump_plug_max`` -- ``plugin_jumps`` (``L -> jump of c at P3``,
      :func:`~copylib.analysis.softmax_large_L.plugin_jump`) at its smallest and largest ``L``, which
      are ``jump_L_min`` and ``jump_L_max``.

    Parameters
    ----------
    near : NearP3
        :func:`~copylib.analysis.softmax_large_L.sample_near_p3`.
    reference : PluginComparison
        :func:`~copylib.analysis.softmax_large_L.compare_with_plugin` at a different ``L``.
    reference_sharpness : float > 0
        The plug-in sharpness at the reference ``L``.
    plugin_jumps : non-empty mapping ``L -> float``
    n_steps : pair of int >= 1
        The steps per chain ``(side, centre)`` of ``near``.
    level : float in ``(0, 1)``

    Returns
    -------
    LargeLNumbers
    """
    check_instance("near", near, NearP3)
    check_instance("reference", reference, PluginComparison)
    if reference.L == near.L:
        raise ValueError(f"reference must be at another L than near (both L = {near.L})")
    reference_sharpness = check_positive("reference_sharpness", reference_sharpness)
    if not hasattr(plugin_jumps, "items") or len(plugin_jumps) == 0:
        raise TypeError("plugin_jumps must be a non-empty mapping L -> jump of c")
    jumps = {check_int("plugin_jumps", n, 3): float(x) for n, x in plugin_jumps.items()}
    steps = tuple(n_steps) if hasattr(n_steps, "__iter__") else ()
    if len(steps) != 2:
        raise ValueError(f"n_steps must be a pair (side, centre) of step counts, got {n_steps!r}")
    side, centre = (check_int("n_steps", n, 1) for n in steps)
    level = check_positive("level", level)
    if level >= 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    row, conv, weights = near.plugin, near.convergence, near.comparison.weights
    k = 1  # near.P = (below, P3, above)
    n_data = int(weights.data_log_odds.shape[1])
    spread_hi = float(weights.spread_total[k] * math.sqrt((n_data - 1) / stats.chi2.ppf(1 - level, n_data - 1)))
    out = dict(P3=float(row.P3), bar_pool=float(row.barrier_height[0]), bar_copy=float(row.barrier_height[1]),
               sharp=float(row.sharpness), window=float(100 * row.window),
               **{f"sharp_{reference.L}": reference_sharpness}, n_data=n_data, P_lo=int(near.P[0]),
               P_hi=int(near.P[2]), steps_side=side, steps_mid=centre, ess_chain=float(conv.ess_chain_mid),
               rhat_expected=float(1 + 1 / conv.ess_chain_mid),
               cross_min=int(np.min(conv.crossings[near.P[k]])), spread_total=float(weights.spread_total[k]),
               spread_sampling=float(weights.spread_sampling[k]), spread_data=float(weights.spread_data[k]),
               spread_hi=spread_hi, spread_P=float(100 * spread_hi / row.sharpness))
    out.update({f"{key}_{cmp.L}": cmp.value(quantity, column) for cmp in (reference, near.comparison)
                for key, quantity, column in _SAMPLED})
    lo, hi = min(jumps), max(jumps)
    out.update(jump_plug_min=jumps[lo], jump_plug_max=jumps[hi], jump_L_min=lo, jump_L_max=hi)
    for key, x in out.items():
        if not math.isfinite(x):
            raise ValueError(f"near, reference and plugin_jumps must give finite numbers; {key} is {x}")
    return LargeLNumbers(values=MappingProxyType(out))
