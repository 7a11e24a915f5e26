"""Tests of benchmarks/bench_near_p3.py: equal evaluation budgets, the chapter's starts, a clear refusal."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import bench_near_p3 as bn  # noqa: E402  (a script directory, not a package)


def test_evaluations_per_step_follow_the_moves():
    for n_leapfrog, gap, _, per_step in bn.SAMPLERS.values():
        assert per_step == n_leapfrog + (1 if gap else 0)


def test_each_data_set_is_sampled_by_two_chains():
    C, spec = bn.data(6, 40, 3, seed=0)
    assert C.shape == (6, 6, 6, bn.V, bn.V) and spec.L == 6 and spec.kind == "softmax"
    assert all(np.array_equal(C[2 * i], C[2 * i + 1]) for i in range(3))
    assert not np.array_equal(C[0], C[2])


def test_a_budget_too_small_for_ten_steps_is_refused_with_its_numbers():
    C, spec = bn.data(4, 20, 1, seed=0)
    with pytest.raises(SystemExit, match="give at least 90"):
        bn.run("HMC 8 + gap move", C, spec, evals=80, warmup_evals=9, seed=0)


def test_samplers_share_the_evaluation_budget():
    C, spec = bn.data(4, 20, 1, seed=0)
    runs = {name: bn.run(name, C, spec, evals=360, warmup_evals=72, seed=0) for name in bn.SAMPLERS}
    for name, r in runs.items():
        assert r["steps"] * bn.SAMPLERS[name][3] <= 360 < (r["steps"] + 1) * bn.SAMPLERS[name][3]
        assert r["ess"] > 0 and r["cpu"] > 0 and np.isfinite(r["mean"]) and r["mcse"] > 0
