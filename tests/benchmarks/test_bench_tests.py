"""Tests of benchmarks/bench_tests.py: the verdicts and the summary line (the timing itself is the benchmark)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import bench_tests as bt  # noqa: E402  (a script directory, not a package)


def test_verdicts_pass_and_fail_on_each_budget():
    lines = bt.verdicts(bt.BUDGET, bt.BUDGET / bt.RATIO)
    assert [ok for _, ok in lines] == [True, True]  # each on its boundary
    lines = bt.verdicts(bt.BUDGET + 1, bt.BUDGET)
    assert [ok for _, ok in lines] == [False, False]
    assert "1.00" in lines[1][0]  # the ratio is printed


def test_verdicts_without_baseline_have_no_ratio():
    assert len(bt.verdicts(1.0, None)) == 1


def test_summary_line_is_pytests_last_result_line():
    out = "....\n=== 3 passed, 1 skipped in 12.5s ===\n"
    assert bt.summary_line(out) == "3 passed, 1 skipped in 12.5s"
    assert bt.summary_line("collecting ...\nERROR: file not found: x\n") == "ERROR: file not found: x"
    assert bt.summary_line("") == "(no output)"
