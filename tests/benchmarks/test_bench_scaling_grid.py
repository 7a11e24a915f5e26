"""Tests of benchmarks/bench_scaling_grid.py: both versions time the same thresholds (the timing itself is the
benchmark)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_scaling_grid as bsg  # noqa: E402  (a script directory, not a package)


def test_only_thresholds_both_versions_have_are_timed(monkeypatch):
    names = {"old": ["P1_mean_field", "P1_map", "P1_leading", "P2_fluct", "P3_bayes", "P3_energy"],
             "new": [n for group in bsg.GROUPS.values() for n in group]}
    monkeypatch.setattr(bsg, "run", lambda tree: {"names": names[tree.name]})
    groups, left_out = bsg.common_groups(Path("old"), Path("new"))
    assert groups == {"P1": ["P1_mean_field", "P1_map", "P1_leading"], "P2": ["P2_fluct"], "P3": ["P3_energy"]}
    assert set(left_out) == {"P2_mean_field", "P2_analytic_mean_field", "P2_analytic_fluct", "P3_mean_field",
                             "P3_leading"}


def test_the_current_tree_runs_the_grid_it_is_given():
    out = bsg.run(ROOT, {"P1": ["P1_leading"]})
    assert list(out["time"]) == ["P1"] and list(out["values"]) == ["P1_leading"]
    assert len(out["values"]["P1_leading"]) == 16  # 4 L x 4 V
    assert set(bsg.GROUPS["P1"]) <= set(out["names"])
    with pytest.raises(RuntimeError, match="failed"):
        bsg.run(ROOT, {"P1": ["no_such_threshold"]})
