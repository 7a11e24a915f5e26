"""Tests of copylib.analysis.linear (sampled summaries, onset fit, MAP sweeps)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from copylib import ModelSpec
from copylib.analysis.linear import (
    by_chain,
    by_data_set,
    chain_group_summary,
    diagnostics_arrays,
    diagnostics_per_group,
    diagnostics_table,
    excess_z,
    map_predictions,
    onset_from_squares,
    posterior_copy_share,
    z_scores,
)
from copylib.theory import linear as lt

SPEC = ModelSpec(L=32, V=4, kind="linear")


def test_chain_group_summary_on_gaussian_draws():
    rng = np.random.default_rng(0)
    m = rng.normal(size=(2, 8, 400)) * np.array([1.0, 2.0])[:, None, None]
    q = 0.1 * m + 0.01 * rng.normal(size=m.shape)
    s = chain_group_summary(m, q)
    assert np.allclose(s.rms_m, [1.0, 2.0], rtol=0.05)
    assert np.all(s.rms_m_se > 0) and np.all(s.rms_m_se < 0.05 * s.rms_m)
    # E[q sign m] = 0.1 E|m| = 0.1 sqrt(2/pi) sigma
    assert np.allclose(s.q, 0.1 * np.sqrt(2 / np.pi) * np.array([1.0, 2.0]), rtol=0.05)
    with pytest.raises(ValueError):
        chain_group_summary(m[0], q[0])


def test_onset_from_squares_exact_for_linear_m2():
    P = np.arange(1.0, 12.0)
    m = np.sqrt(np.clip(0.3 * (P - 4.4), 0, None))
    assert onset_from_squares(P, m) == pytest.approx(4.4, rel=1e-12)
    with pytest.raises(ValueError):
        onset_from_squares(P, np.zeros_like(P))


def test_map_sweep_datasets_shapes_and_gauge():
    from copylib.analysis.linear import map_sweep_datasets

    spec = ModelSpec(L=6, V=3, kind="linear")
    r = map_sweep_datasets([2, 50], spec, (1, 2), init_scales=(0.1, 1.0), n_steps=200, lr=0.05)
    assert r.m.shape == r.q.shape == r.test_loss.shape == r.objective.shape == (2, 2)
    assert np.all(r.m >= 0)
    assert np.all(np.isfinite(r.test_loss)) and np.all(r.test_loss <= 1.0 + 1e-9)



def test_map_sweep_quenched_adam_part_equals_map_sweep_datasets_and_polish_lowers_the_objective():
    from copylib.analysis.linear import map_sweep_datasets, map_sweep_quenched

    spec = ModelSpec(L=6, V=3, kind="linear")
    kw = {"init_scales": (0.1, 1.0), "n_steps": 60, "lr": 0.05, "lr_final": 1e-2}
    r = map_sweep_quenched([2, 40], spec, (3, 4), **kw)
    a = map_sweep_datasets([2, 40], spec, (3, 4), **kw)
    for name in ("m", "q", "test_loss", "objective"):
        assert np.array_equal(getattr(r, name), getattr(a, name))
    # 60 Adam steps are far from converged: L-BFGS must go lower and reach a stationary point
    assert (r.objective_exact <= r.objective + 1e-12).all()
    assert (r.objective - r.objective_exact).max() > 1e-6
    assert r.grad_exact.max() < 1e-5
    assert (r.m_exact >= 0).all() and r.m_exact.shape == (2, 2)
    # a converged minimiser is a fixed point: polishing it again changes nothing
    r2 = map_sweep_quenched([40], spec, (3,), init_scales=(1.0,), n_steps=3000, lr=0.05, lr_final=1e-4)
    assert abs(r2.m[0, 0] - r2.m_exact[0, 0]) < 1e-3 * max(r2.m_exact[0, 0], 1e-3)


def test_by_data_set_and_by_chain_follow_the_batch_order():
    # chain index = ((group * n_sets) + set) * n_chains + chain, as np.repeat of the data sets lays them out
    n_groups, n_sets, n_chains, n_draws = 3, 4, 2, 5
    chain_id = np.arange(n_groups * n_sets * n_chains)
    x = np.repeat(chain_id[:, None], n_draws, axis=1) + 0.01 * np.arange(n_draws)
    per_chain = by_chain(x, n_groups, n_sets, n_chains)
    assert per_chain.shape == (n_groups, n_sets, n_chains, n_draws)
    assert per_chain[2, 1, 1, 3] == pytest.approx((2 * n_sets + 1) * n_chains + 1 + 0.03)
    per_set = by_data_set(x, n_groups, n_sets)
    assert per_set.shape == (n_groups, n_sets, n_chains * n_draws)
    assert np.array_equal(per_set[1, 3], per_chain[1, 3].ravel())  # both chains of one data set, pooled
    with pytest.raises(ValueError, match="n_groups \\* n_sets"):
        by_data_set(x[:-1], n_groups, n_sets)
    with pytest.raises(ValueError, match="24 chains"):
        by_chain(x[:-2], n_groups, n_sets, n_chains)


def test_diagnostics_of_independent_draws_pass_and_a_shifted_chain_fails():
    rng = np.random.default_rng(1)
    m, q, E = (rng.normal(size=(2, 3, 2, 400)) for _ in range(3))
    q[1, 0, 1] += 3.0  # one chain of one data set in another state: R-hat of q sgn m must flag it
    rows = diagnostics_per_group(m, q * np.sign(m), E)
    arrays = diagnostics_arrays(rows)
    assert arrays["rhat"].shape == (2, 3) and arrays["median_rhat"].shape == (2, 3)
    assert np.all(arrays["rhat"][0] < 1.02)
    assert arrays["rhat"][1, 1] > 1.5
    # independent draws: the summed ESS is near the number of draws (3 sets x 2 chains x 400)
    assert np.all(np.abs(arrays["ess_bulk"][0] / 2400 - 1) < 0.3)
    assert np.allclose(arrays["ess_per_chain"], arrays["ess_bulk"] / 6)
    text = diagnostics_table(rows, [10, 40], "test")
    assert text.splitlines()[0].startswith("test:") and len(text.splitlines()) == 3
    with pytest.raises(ValueError, match="same length"):
        diagnostics_table(rows, [10], "test")
    with pytest.raises(ValueError, match="one shape"):
        diagnostics_per_group(m, q[..., :10], E)


def test_z_scores_and_posterior_copy_share():
    rng = np.random.default_rng(2)
    s = chain_group_summary(rng.normal(size=(2, 4, 50)), rng.normal(size=(2, 4, 50)))
    theory = [SimpleNamespace(rms_m=t, q=u, abs_m=1.0)
              for t, u in zip(s.rms_m + s.rms_m_se * np.array([2.0, -1.0]), s.q + s.q_se)]
    z_m, z_q = z_scores(s, theory)
    assert np.allclose(z_m, [-2.0, 1.0]) and np.allclose(z_q, [-1.0, -1.0])
    with pytest.raises(ValueError, match="one entry per group"):
        z_scores(s, theory[:1])
    # (L-1) q = 1 against E|m| = 1: share 1/2; no copying: share 0
    share = posterior_copy_share([SimpleNamespace(q=0.1, abs_m=1.0), SimpleNamespace(q=0.0, abs_m=1.0)], L=11)
    assert np.allclose(share, [0.5, 0.0])


def test_map_predictions_match_the_action_minimum_and_reject_bad_P():
    pred = map_predictions([3.0, 500.0], SPEC)
    r = lt.action_minimum(500.0, SPEC, "map")
    assert pred.shape == (3, 2)
    assert np.array_equal(pred[:, 1], [r.m, r.q, r.test_loss])
    with pytest.raises(ValueError, match="P_values"):
        map_predictions([0.0, 3.0], SPEC)


def test_excess_z_example_and_bad_input():
    # 3 % of 1.0 allowed: 1.05 is 0.02 beyond it, 2 standard errors of 0.01; 1.02 is inside
    np.testing.assert_allclose(excess_z([1.05, 1.02], [0.01, 0.01], [1.0, 1.0], 0.03), [2.0, 0.0], atol=1e-12)
    with pytest.raises(ValueError, match="se must be > 0"):
        excess_z([1.0], [0.0], [1.0], 0.03)
    with pytest.raises(ValueError, match="one shape"):
        excess_z([1.0, 2.0], [0.1], [1.0, 2.0], 0.03)
    with pytest.raises(ValueError, match="allowance"):
        excess_z([1.0], [0.1], [1.0], -0.01)
    with pytest.raises(ValueError, match="theory must contain only finite"):
        excess_z([1.0], [0.1], [np.nan], 0.03)


def test_threshold_versions_match_the_theory_functions():
    from copylib.analysis.linear import threshold_versions

    t = threshold_versions(SPEC, ("mean_field", "fluct"))
    assert t.p1_exact["mean_field"] == lt.p1_analytic(SPEC, "mean_field")
    assert t.p2_asymptotic["fluct"] == lt.p2_analytic(SPEC, "fluct")
    assert t.p2_numerical["mean_field"] == pytest.approx(lt.p2_numerical(SPEC, "mean_field", rtol=1e-4), rel=1e-12)
    table = t.table()
    assert abs(table.loc["mean_field", "P1 numerical / exact - 1"]) < 1e-6
    assert np.isnan(table.loc["fluct", "P1 leading order / exact - 1"])
    with pytest.raises(ValueError, match="versions"):
        threshold_versions(SPEC, ())


def test_plugin_z_test_splits_at_P_split_and_applies_the_allowance_below():
    from copylib.analysis.linear import plugin_z_test

    rng = np.random.default_rng(3)
    s = chain_group_summary(rng.normal(size=(3, 6, 40)), rng.normal(size=(3, 6, 40)))
    # theory 2 % below the sampled rms at every P: inside a 3 % allowance, a z of 0.02 rms / se without one
    theory = [SimpleNamespace(rms_m=r / 1.02, q=u) for r, u in zip(s.rms_m, s.q)]
    r = plugin_z_test(s, theory, [10, 50, 200], 6, np.random.default_rng(4), allowance=0.03, P_split=100)
    assert r.small.tolist() == [True, True, False]
    assert np.allclose(r.rel_small, 0.02) and np.all(r.excess == 0)
    assert r.z_exact.size == 1 + 3 and np.allclose(r.z_exact[3:], 0)
    assert np.allclose(r.z_exact[0], (s.rms_m[2] - theory[2].rms_m) / s.rms_m_se[2])


def test_diagnostics_summary_and_frame_of_a_shifted_chain():
    from copylib.analysis.linear import diagnostics_frame, diagnostics_summary

    rng = np.random.default_rng(1)
    m, q, E = (rng.normal(size=(2, 3, 2, 400)) for _ in range(3))
    q[1, 0, 1] += 3.0  # unmixed at the second P
    rows = diagnostics_per_group(m, q * np.sign(m), E)
    s = diagnostics_summary(rows, [10, 40], mixed_P=[10])
    assert s.mixed.tolist() == [True, False]
    assert s.worst["rhat_q"] < 1.02
    assert s.worst["rhat_q_bad"] > 1.5
    frame = diagnostics_frame(rows, [10, 40])
    assert frame.loc[40, ("R-hat (worst)", "q sgn m")] == pytest.approx(s.worst["rhat_q_bad"])
    with pytest.raises(ValueError, match="mixed_P"):
        diagnostics_summary(rows, [10, 40], mixed_P=[20])


def test_local_minimum_scan_finds_one_minimum_at_L32_and_the_table_reads_the_jump():
    from copylib.analysis.linear import jump_table, local_minimum_scan

    scan = local_minimum_scan(SPEC, "mean_field", 1.05 * lt.p1_analytic(SPEC, "mean_field"), 6)
    assert (scan.n_minima == 1).all() and abs(scan.steepest.jump) < 1e-6
    table = jump_table({"mean_field": {32: scan.steepest}}, 4)
    assert table.loc[("mean_field", 32), "P2 / asymptotic"] == pytest.approx(
        scan.steepest.P2 / lt.p2_analytic(SPEC, "mean_field"))
    with pytest.raises(ValueError, match="P_from"):
        local_minimum_scan(SPEC, "map", 100.0, 4, P_to=50.0)


def test_smallest_jump_size_brackets_the_switch_of_map():
    from copylib.analysis.linear import smallest_jump_size

    r = smallest_jump_size("map", 64, 128, V=4)  # the paper-scale bisection of the chapter: MAP jumps from L = 89
    assert r.start_valid and (r.lo, r.hi) == (88, 89) and r.at_hi.first_order


def test_map_agreement_and_loss_plateau_examples():
    from copylib.analysis.linear import loss_plateau, map_agreement

    th = map_predictions([3.0, 500.0], SPEC)
    obs = np.stack([th * 1.01, th * 0.99])
    r = map_agreement([3.0, 500.0], SPEC, obs, th, P_shift=0.0)
    assert np.allclose(r.mean, th) and np.all(r.shift == 0)
    np.testing.assert_allclose(r.spread, 0.02 * np.abs(th) / np.sqrt(2))  # two sets: |a - b| / sqrt(2)
    p = loss_plateau([1.0, 2.0, 4.0, 8.0, 16.0], [1.0, 0.52, 0.5, 0.48, 0.1], 0.5)
    assert (p.P_from, p.P_to) == (2.0, 8.0)
    assert p.factor == pytest.approx(4.0) and p.largest_step_up == pytest.approx(-0.02)
