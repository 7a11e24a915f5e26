"""Tests of copylib.analysis.linear_thresholds (threshold tables, local-minimum scans, bisections)."""

from __future__ import annotations

import numpy as np
import pytest

from copylib import ModelSpec
from copylib.theory import linear as lt

SPEC = ModelSpec(L=32, V=4, kind="linear")


def test_threshold_versions_match_the_theory_functions():
    from copylib.analysis.linear_thresholds import threshold_versions

    t = threshold_versions(SPEC, ("mean_field", "fluct"))
    assert t.p1_exact["mean_field"] == lt.p1_analytic(SPEC, "mean_field")
    assert t.p2_asymptotic["fluct"] == lt.p2_analytic(SPEC, "fluct")
    assert t.p2_numerical["mean_field"] == pytest.approx(lt.p2_numerical(SPEC, "mean_field", rtol=1e-4), rel=1e-12)
    table = t.table()
    assert abs(table.loc["mean_field", "P1 numerical / exact - 1"]) < 1e-6
    assert np.isnan(table.loc["fluct", "P1 leading order / exact - 1"])
    with pytest.raises(ValueError, match="versions"):
        threshold_versions(SPEC, ())


def test_local_minimum_scan_finds_one_minimum_at_L32_and_the_table_reads_the_jump():
    from copylib.analysis.linear_thresholds import jump_table, local_minimum_scan

    scan = local_minimum_scan(SPEC, "mean_field", 1.05 * lt.p1_analytic(SPEC, "mean_field"), 6)
    assert (scan.n_minima == 1).all() and abs(scan.steepest.jump) < 1e-6
    table = jump_table({"mean_field": {32: scan.steepest}}, 4)
    assert table.loc[("mean_field", 32), "P2 / asymptotic"] == pytest.approx(
        scan.steepest.P2 / lt.p2_analytic(SPEC, "mean_field"))
    with pytest.raises(ValueError, match="P_from"):
        local_minimum_scan(SPEC, "map", 100.0, 4, P_to=50.0)


def test_smallest_jump_size_brackets_the_switch_of_map():
    from copylib.analysis.linear_thresholds import smallest_jump_size

    r = smallest_jump_size("map", 64, 128, V=4)  # the paper-scale bisection of the chapter: MAP jumps from L = 89
    assert r.start_valid and (r.lo, r.hi) == (88, 89) and r.at_hi.first_order


def test_posterior_onset_scan_reads_the_plugin_moments_at_multiples_of_P1():
    from copylib.analysis.linear_thresholds import posterior_onset_scan
    from copylib.theory.linear_marginal import plugin_posterior_moments

    grid = dict(n_m=21, n_q=11, n_row=8, n_rest=8)
    f = [0.25, 0.5, 1.0, 2.0, 4.0]
    scan = posterior_onset_scan([(4, 2), (6, 3)], f, **grid)
    assert (scan.i_half, scan.i_one) == (1, 2)
    sp = ModelSpec(L=6, V=3, kind="linear")
    r = scan[6, 3]
    assert r.P1 == lt.p1_analytic(sp, "fluct")
    assert r.m2[2] == plugin_posterior_moments(r.P1, sp, **grid).var_m
    assert r.K == r.m2[-1] / r.m2[0] and r.rise == r.m2[2] / r.m2[1] - 1
    assert r.m2_star == lt.global_minimum(4 * r.P1, sp, "fluct").coordinates["m"] ** 2
    assert np.all(np.isfinite(r.share)) and np.all(r.binder <= 2 / 3 + 1e-9)  # E m^4 >= (E m^2)^2
    table = scan.table()
    assert table.shape == (2, 10) and table.loc[(6, 3), "at P1"] == r.m2[2]
    with pytest.raises(ValueError, match="f must"):
        posterior_onset_scan([(4, 2)], [1.0, 0.5])
    with pytest.raises(ValueError, match="sizes"):
        posterior_onset_scan([(4, 2), (4, 2)], f)


def test_posterior_switch_scan_uses_known_P2_and_bisects_as_the_theory_function():
    from copylib.analysis.linear_thresholds import posterior_switch_scan
    from copylib.theory.linear_marginal import plugin_posterior_switch

    sp = ModelSpec(L=8, V=2, kind="linear")
    p2 = lt.p2_numerical(sp, "fluct", rtol=1e-6)
    scan = posterior_switch_scan([8], 2, known_P2={8: p2}, n_bisect=1, n_m={8: 41})
    direct = plugin_posterior_switch(sp, 0.9 * p2, 1.05 * p2, n_bisect=1, q_max=6 / 7, m_max=3.0, n_m=41)
    assert scan.P2 == {8: p2}
    assert (scan[8].P_lo, scan[8].P_hi, scan[8].bimodal) == (direct.P_lo, direct.P_hi, direct.bimodal)
    # L_hi is the smallest L with two modes, L_lo the largest one-mode L below it; -1 where there is none
    assert scan.L_hi == (8 if direct.bimodal else -1) and scan.L_lo == -1
    assert scan.table().loc[8, "to"] == pytest.approx(direct.P_hi / p2)
    with pytest.raises(ValueError, match="span"):
        posterior_switch_scan([8], 2, span=(1.1, 1.0))
    with pytest.raises(ValueError, match="L_values"):
        posterior_switch_scan([8, 8], 2)


def test_copy_share_curves_follow_the_minimum_and_the_posterior_means():
    from copylib.analysis.linear import posterior_copy_share
    from copylib.analysis.linear_thresholds import copy_share_curves
    from copylib.theory.linear_marginal import plugin_posterior_moments

    sp = ModelSpec(L=6, V=2, kind="linear")
    p2 = {v: lt.p2_numerical(sp, v, rtol=1e-4) for v in ("map", "fluct")}
    rel, rel_post = np.array([0.5, 1.0, 2.0]), np.array([0.9, 1.1])
    r = copy_share_curves({v: {6: p} for v, p in p2.items()}, 2, rel, rel_post, L_minimum=(6,), L_posterior=(6,))
    share = r.minimum["map", 6]
    assert share.tolist() == lt.minimum_curve(rel * p2["map"], sp, "map").order_parameter.tolist()
    assert share[0] < 0.5 < share[-1]  # P2 is where the minimum's copy share crosses 1/2
    mo = [plugin_posterior_moments(f * p2["fluct"], sp, q_max=6 / 5, m_max=3.0) for f in rel_post]
    np.testing.assert_array_equal(r.posterior[6], posterior_copy_share(mo, 6))
    with pytest.raises(ValueError, match="P2 has no entry"):
        copy_share_curves({"map": {6: p2["map"]}}, 2, rel, rel_post, L_minimum=(8,), L_posterior=(6,))
    with pytest.raises(ValueError, match="rel_post"):
        copy_share_curves({"map": {6: p2["map"]}}, 2, rel, [1.0, 0.5], L_minimum=(6,), L_posterior=(6,))
