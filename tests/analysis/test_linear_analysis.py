"""Tests of copylib.analysis.linear (sampled summaries, onset fit, MAP sweeps and their agreement, the loss
plateau, the posterior's loss, Adam's optimisation error)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from copylib import ModelSpec
from copylib.analysis.linear import (
    by_chain,
    by_data_set,
    chain_group_summary,
    map_predictions,
    onset_from_squares,
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


def test_map_predictions_match_the_action_minimum_and_reject_bad_P():
    pred = map_predictions([3.0, 500.0], SPEC)
    r = lt.global_minimum(500.0, SPEC, "map")
    assert pred.shape == (3, 2)
    assert np.array_equal(pred[:, 1], [r.coordinates["m"], r.coordinates["q"], r.test_loss])
    with pytest.raises(ValueError, match="P_values"):
        map_predictions([0.0, 3.0], SPEC)


def test_map_agreement_and_loss_plateau_examples():
    from copylib.analysis.linear import loss_plateau, map_agreement

    P = np.array([20.0, 500.0])
    th = map_predictions(P, SPEC)
    obs = np.stack([th * (1 + 0.1 / np.sqrt(P)), th * (1 - 0.1 / np.sqrt(P))])
    r = map_agreement(P, SPEC, obs, th, P_shift=0.0)
    assert np.allclose(r.mean, th) and np.all(r.shift == 0)
    # relative deviations +-0.1/sqrt(P) at both P: pooled s = 0.1 sqrt(2) (two P, one degree of freedom each)
    np.testing.assert_allclose(r.spread, 0.1 * np.sqrt(2) * np.abs(th) / np.sqrt(P))
    with pytest.raises(ValueError, match="theory"):
        map_agreement([1.0, 500.0], SPEC, np.stack([th, th]), th * [[0, 1]] * np.ones((3, 1)))
    p = loss_plateau([1.0, 2.0, 4.0, 8.0, 16.0], [1.0, 0.52, 0.5, 0.48, 0.1], 0.5)
    assert (p.P_from, p.P_to) == (2.0, 8.0)
    assert p.factor == pytest.approx(4.0) and p.largest_step_up == pytest.approx(-0.02)


def _invariants(A):
    """``(alpha_1, alpha_2, gamma_1, gamma_2)`` of attention matrices ``(..., L, L)`` (cyclic shift ``T``)."""
    L = A.shape[-1]
    T = np.roll(np.eye(L), 1, axis=0)  # T[l, l-1] = 1
    ones = np.ones(L)
    return (np.sum(A**2, (-2, -1)), np.sum((A @ ones) ** 2, -1), np.einsum("...ij,ij->...", A, T),
            ones @ np.swapaxes(A, -1, -2) @ T @ ones)


def test_posterior_loss_averages_each_data_set_then_over_sets():
    from copylib.analysis.linear import posterior_loss
    from copylib.theory.plugin_loss import plugin_loss

    spec = ModelSpec(L=5, V=3, kind="linear")
    rng = np.random.default_rng(7)
    n_P, n_sets, n_draws = 2, 3, 4
    A = rng.normal(scale=0.3, size=(n_P, n_sets, 5, 5))  # one matrix per data set: every draw of the set equal
    inv = _invariants(A)
    samples = {k: np.repeat(x.reshape(-1, 1), n_draws, axis=1)
               for k, x in zip(("alpha_1", "alpha_2", "gamma_1", "gamma_2"), inv)}
    P = [10.0, 100.0]
    per_set = np.array([[plugin_loss(*(x[i, j] for x in inv), P[i], spec) for j in range(n_sets)] for i in range(n_P)])
    moments = [SimpleNamespace(loss=0.5), SimpleNamespace(loss=0.6)]
    minima = [SimpleNamespace(test_loss=1.0), SimpleNamespace(test_loss=0.9)]
    r = posterior_loss(samples, P, n_sets, spec, moments, minima)
    np.testing.assert_allclose(r.mean, per_set.mean(1), rtol=1e-12)
    np.testing.assert_allclose(r.se, per_set.std(1, ddof=1) / np.sqrt(n_sets), rtol=1e-12)
    np.testing.assert_allclose(r.z, np.abs(r.mean - [0.5, 0.6]) / r.se)
    assert r.minimum.tolist() == [1.0, 0.9] and list(r.table().index) == P
    with pytest.raises(ValueError, match="moments"):
        posterior_loss(samples, P, n_sets, spec, moments[:1], minima)


def test_optimisation_error_is_relative_to_the_exact_minimiser():
    from copylib.analysis.linear import QuenchedMap, optimisation_error

    ones = np.ones((2, 3))
    exact = SimpleNamespace(m=0.5 * ones, q=0.02 * ones, obj=-3.0 * ones)
    adam = QuenchedMap(P=np.array([1.0, 2.0, 3.0]), m=exact.m * 1.01, q=exact.q, test_loss=ones,
                       objective=exact.obj + 1e-4, m_exact=exact.m, q_exact=exact.q, objective_exact=exact.obj,
                       grad_exact=1e-9 * ones)
    r = optimisation_error(adam, floor_m=1e-3, floor_q=1e-6)
    np.testing.assert_allclose(r.rel[0], 0.005 / (0.5 + 1e-3))  # 1 % of m, relative to |m_exact| + floor
    assert np.all(r.rel[1] == 0) and r.largest == r.rel.max()
    np.testing.assert_allclose(r.objective_gap, 1e-4)
    assert r.table().shape == (4, 1)
    with pytest.raises(TypeError, match="adam"):
        optimisation_error(SimpleNamespace())
    with pytest.raises(ValueError, match="floor_q"):
        optimisation_error(adam, floor_q=0.0)
