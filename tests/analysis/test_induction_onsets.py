"""copylib.analysis.induction_onsets: steepness, onsets against a reference, formation steps."""

from __future__ import annotations

import numpy as np
import pytest

from copylib.analysis import induction as ia
from copylib.analysis import induction_onsets as ion


def test_steepness_of_a_linear_rise_and_of_a_jump():
    P = np.exp([0.0, 1.0, 2.0])
    assert ion.steepness(P, [0.0, 0.5, 1.0]) == pytest.approx([0.5])  # u rises by 1/2 per unit of ln P
    assert ion.steepness(P, [[0.0, 0.0, 1.0], [2.0, 1.0, 0.0]]) == pytest.approx([1.0, 0.5])


def test_onsets_of_planted_curves_and_the_margins():
    P = np.exp([0.0, 1.0, 2.0, 3.0])
    rise = np.array([0.0, 0.25, 0.75, 1.0])  # half way at ln P = 1.5
    late = np.array([0.0, 0.0, 0.5, 1.0])  # half way at ln P = 2
    oc = ion.compare_onsets(P, {"a": np.stack([rise, rise]), "b": np.stack([late, late])}, P, np.stack([rise, rise]))
    assert oc.onset == pytest.approx(np.exp([[1.5, 1.5], [2.0, 2.0]]))
    assert oc.grid_step == pytest.approx(1.0) and oc.onset_ratio("b") == pytest.approx(np.exp(0.5))
    # identical seeds: no standard error, so the margins are the bare differences minus the grid step
    assert oc.later_margin("b") == pytest.approx(0.5 - 1.0)
    assert oc.same_onset_margin("a", "b") == pytest.approx(0.5 - 1.0)
    assert oc.steeper_margin("b") == pytest.approx(0.5 - 0.5)
    assert oc.table().loc["b", "onset P"] == pytest.approx(np.exp(2.0))


def test_formation_steps_of_planted_curves():
    steps = np.array([0, 10, 20, 30])
    rise_at = {10: [0.0, 0.6, 0.8, 1.0], 20: [0.0, 0.2, 0.6, 1.0]}
    c1_curve = np.array([[rise_at[10], rise_at[10]]])  # (1 seed, 2 P, 4 records)
    score_curve = np.array([[rise_at[20], rise_at[20]]])
    sw = ia.InductionSweep(P=np.array([5, 50]), steps=steps, c1=np.array([[0.1, 0.9]]), score=np.zeros((1, 2)),
                           accuracy=np.zeros((1, 2)), test_mse=np.zeros((1, 2)), objective=np.zeros((1, 2)),
                           c1_curve=c1_curve, score_curve=score_curve, train_mse_curve=-c1_curve, g=None, K=None, W=None,
                           kept_start=np.zeros((1, 2), dtype=int))
    f = ion.formation_steps(sw)
    assert f.P.tolist() == [50] and f.layer1.tolist() == [[10]] and f.layer2.tolist() == [[20]]
    assert f.lag.tolist() == [10] and f.record_interval == 10 and f.table()["mean step"].tolist() == [10, 20, 10]
