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
