"""Property tests of copylib.analysis.softmax_numbers: finite-size and z-table numbers."""

from __future__ import annotations

import functools
import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from copylib.analysis import softmax_evidence as sxe
from copylib.analysis import softmax_large_L as sl
from copylib.analysis import softmax_numbers as sxn
from copylib.inference.diagnostics import studentized_z_null
from copylib.theory.softmax_marginal import FiniteSizeRow

from props_helpers import budget, covers, raises_naming


def _row(L, P3, bar):
    return FiniteSizeRow(L=L, V=4, P_peak=P3, scanned=(P3 / 2, 2 * P3), step=0.1, two_minima=True, max_depth=0.01,
                         shoulder=-0.1, P_lower=P3 - 1, P_upper=P3 + 1, P3=P3, barrier_height=bar, barrier=0.1,
                         slope=-0.5)


@covers(sxn.finite_size_numbers, sxn.FiniteSizeNumbers)
@budget(30)
@given(Ls=st.lists(st.integers(3, 200), min_size=2, max_size=6, unique=True),
       P3s=st.lists(st.floats(10, 1e4), min_size=6, max_size=6),
       bars=st.lists(st.floats(0, 50), min_size=12, max_size=12))
def test_finite_size_numbers_read_set_A_at_the_quoted_sizes(Ls, P3s, bars):
    rows = {L: (_row(L, P3, (bars[2 * i], bars[2 * i + 1])), _row(L, P3 + 1, (bars[2 * i + 1], bars[2 * i])))
            for i, (L, P3) in enumerate(zip(Ls, P3s))}
    a, b = sorted(Ls)[:2]
    fs = sxe.finite_size_summary(rows)
    v = sxn.finite_size_numbers(fs, rows, quoted=Ls[:3], compared=(a,), slopes=((a, b), (a, b)),
                                saddle_P3={"s": {L: 2.0 * L for L in Ls}}).values
    for L in Ls[:3]:
        assert v[f"bar_{L}"] == rows[L][0].barrier_height[0] and v[f"P3_{L}"] == rows[L][0].P3
    assert v["L_min"] == min(Ls) and v["L_max"] == max(Ls) and v["L_jump"] == min(Ls) and "L_none" not in v
    assert v["sobol_max"] == max(abs(bars[2 * i] - bars[2 * i + 1]) for i in range(len(Ls)))
    # the slope k between a and b carries P3 from a to b: P3_b = P3_a (b / a)^k
    assert math.isclose(rows[a][0].P3 * (b / a) ** v["k_plug_lo"], rows[b][0].P3, rel_tol=1e-9)
    assert math.isclose(v["k_s_hi"], 1.0) and math.isclose(v[f"ratio_{a}"], rows[a][0].P3 / (2.0 * a))
    assert all(math.isfinite(x) for x in v.values())


@covers(sxn.finite_size_numbers)
@budget(10)
@given(which=st.sampled_from(["summary", "rows", "weak", "corrected", "quoted", "slopes"]))
def test_finite_size_numbers_name_a_bad_argument(which):
    rows = {28: (_row(28, 100.0, (1, 1)),) * 2, 32: (_row(32, 150.0, (2, 2)),) * 2}
    args = dict(summary=sxe.finite_size_summary(rows), rows=rows, slopes=())
    bad = {"summary": rows, "rows": {28: (1, 2)}, "weak": 1.0, "corrected": {40: rows[28][0]}, "quoted": [2],
           "slopes": ((28, 40), (28, 32))}[which]
    args[which] = bad
    with raises_naming(which):
        sxn.finite_size_numbers(args.pop("summary"), args.pop("rows"), **args)


@covers(sxn.z_table_numbers, sxn.ZTableNumbers)
@budget(20)
@given(z=st.lists(st.floats(-6, 6), min_size=2, max_size=8), groups=st.integers(4, 30), limit=st.floats(0.5, 5))
def test_z_table_numbers_bound_the_table_and_its_false_alarms(z, groups, limit):
    rows = tuple((450, "c", "all", 0.1, 0.01, 0.1, x) for x in z)
    bc = sxe.BranchComparison(rows=rows, corr_blocks=(np.eye(len(z)),), n_groups=(groups,),
                              theory_err=np.full(len(z), 0.5), res_c_near=np.array([]),
                              res_theory_near=np.array([]), marginals={})
    null = studentized_z_null(bc.corr_blocks, bc.n_groups, np.random.default_rng(1), n_sim=200)
    r = sxn.z_table_numbers(bc, null, groups, limit=limit)
    assert r.n == len(z) and r.dof == groups - 1 and r.maxz == max(abs(x) for x in z)
    assert 0 <= r.fail_one_normal <= r.fail_one <= 100 and 0 <= r.fail <= 100
    # one comparison fails at most as often as some comparison of the table
    assert r.fail_one_normal <= r.fail_normal + 1e-9
    assert r.lo <= r.hi and r.fac_lo > 0 and r.fac_hi > 0 and math.isnan(r.res_c_min)


@covers(sxn.z_table_numbers)
@budget(10)
@given(which=st.sampled_from(["comparison", "null", "n_sets", "limit"]))
def test_z_table_numbers_name_a_bad_argument(which):
    rows = tuple((450, "c", "all", 0.1, 0.01, 0.1, x) for x in (0.5, -1.0))
    bc = sxe.BranchComparison(rows=rows, corr_blocks=(np.eye(2),), n_groups=(5,), theory_err=np.zeros(2),
                              res_c_near=np.array([]), res_theory_near=np.array([]), marginals={})
    args = dict(comparison=bc, null=studentized_z_null(bc.corr_blocks, bc.n_groups, np.random.default_rng(2),
                                                       n_sim=100), n_sets=5, limit=3.5)
    args[which] = {"comparison": rows, "null": bc, "n_sets": 3, "limit": -1.0}[which]
    with raises_naming(which):
        sxn.z_table_numbers(**args)


@functools.cache
def _near_and_reference():
    from test_softmax_numbers import _near_p3

    near = _near_p3()
    rows = tuple((q, 590.0, x / 2, 0.05 * x, x, 0.0, 0.0) for q, _, x, *_ in near.comparison.rows)
    return near, sl.PluginComparison(L=32, at=590.0, weights=near.comparison.weights, rows=rows)


@covers(sxn.large_L_numbers, sxn.LargeLNumbers)
@budget(20)
@given(jumps=st.dictionaries(st.integers(3, 200), st.floats(0, 1), min_size=1, max_size=6),
       steps=st.tuples(st.integers(1, 10**5), st.integers(1, 10**5)), level=st.floats(0.5, 0.999),
       sharp=st.floats(0.1, 1e3))
def test_large_L_numbers_bound_the_spread_and_pick_the_extreme_sizes(jumps, steps, level, sharp):
    near, ref = _near_and_reference()
    r = sxn.large_L_numbers(near, ref, reference_sharpness=sharp, plugin_jumps=jumps, n_steps=steps, level=level)
    v = r.values
    assert (v["jump_L_min"], v["jump_L_max"]) == (min(jumps), max(jumps)) and r["jump_plug_max"] == jumps[max(jumps)]
    assert (v["steps_side"], v["steps_mid"]) == steps and v["sharp_32"] == sharp
    # an upper confidence bound lies above the estimate, and rises with the level
    assert v["spread_hi"] >= v["spread_total"]
    higher = sxn.large_L_numbers(near, ref, reference_sharpness=sharp, plugin_jumps=jumps, n_steps=steps,
                                 level=(1 + level) / 2).values
    assert higher["spread_hi"] >= v["spread_hi"]
    assert all(math.isfinite(x) for x in v.values())


@covers(sxn.large_L_numbers)
@budget(10)
@given(which=st.sampled_from(["near", "reference", "reference_sharpness", "plugin_jumps", "n_steps", "level"]))
def test_large_L_numbers_name_a_bad_argument(which):
    near, ref = _near_and_reference()
    args = dict(near=near, reference=ref, reference_sharpness=10.0, plugin_jumps={28: 0.1}, n_steps=(10, 20))
    args[which] = {"near": ref, "reference": near, "reference_sharpness": -1.0, "plugin_jumps": {},
                   "n_steps": 5, "level": 1.5}[which]
    with raises_naming(which):
        sxn.large_L_numbers(**args)
