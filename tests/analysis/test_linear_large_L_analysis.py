"""Tests of copylib.analysis.linear_large_L (paired chains from a pooling and a copying start)."""

import numpy as np
import pytest

import copylib as cl
from copylib.analysis import linear_large_L as ll
from copylib.posterior.order_parameters import order_parameters


def test_state_logits_put_the_order_parameters_in_the_attention_matrix():
    g, b = ll._state_logits(0.7, 2.5, 9)
    A = (g + b) / 9  # linear attention: A = G / L
    m, q, r2 = order_parameters(A)
    assert m == pytest.approx(0.7) and 8 * q == pytest.approx(2.5) and r2 == pytest.approx(0, abs=1e-20)


def _draws(rng, means, n_data=6, n=200, noise=0.1):
    """Independent draws around ``means[k, start]`` plus a data-set offset shared by both starts."""
    offset = 0.05 * rng.standard_normal((len(means), n_data, 1, 1))
    return np.asarray(means, dtype=float)[:, None, :, None] + offset + noise * rng.standard_normal(
        (len(means), n_data, 2, n))


def test_compare_starts_tells_meeting_from_separate_starts():
    rng = np.random.default_rng(1)
    x = _draws(rng, [[1.0, 1.0], [1.0, 3.0]])
    acc = np.full((2, 6, 2), 0.6)
    cmp = ll._compare_starts(x, [1.0, 2.0], acc, [100, 200])
    assert cmp.meet.tolist() == [True, False]
    assert cmp.paired_d[1] == pytest.approx(-2.0, abs=0.05) and cmp.meet_z[1] < -ll._MEET_Z
    assert abs(cmp.plugin_z[0]) < 4 and cmp.mean[1] == pytest.approx(2.0, abs=0.1)
    assert cmp.rhat[0] < 1.05 and cmp.rhat[1] > 1.5  # the stuck pair shows in R-hat too
    assert cmp.accept_min.tolist() == [0.6, 0.6] and list(cmp.frame().index) == [100, 200]


def test_compare_starts_errors_name_the_argument():
    x = np.zeros((1, 3, 2, 10))
    with pytest.raises(ValueError, match="x"):
        ll._compare_starts(np.zeros((1, 3, 3, 10)), [0.0], np.zeros((1, 3, 2)), [1])
    with pytest.raises(ValueError, match="plugin"):
        ll._compare_starts(x, [0.0, 1.0], np.zeros((1, 3, 2)), [1])
    with pytest.raises(ValueError, match="accept"):
        ll._compare_starts(x, [0.0], np.full((1, 3, 2), 1.5), [1])


def test_sample_paired_starts_keeps_starts_and_data_sets_apart():
    spec = cl.ModelSpec(L=6, V=2, kind="linear")
    ch = ll._sample_paired_starts([20, 40], spec, 2, 40, n_warmup=160, thin=2, seed=3, starts=((1.0, 0.0), (0.2, 4.0)))
    assert ch.Q.shape == (2, 2, 2, 20) and ch.accept.shape == (2, 2, 2)
    assert ((ch.accept > 0) & (ch.accept <= 1)).all() and (ch.abs_m >= 0).all()
    assert ch.starts == ((1.0, 0.0), (0.2, 4.0))
    with pytest.raises(ValueError, match="starts"):
        ll._sample_paired_starts([20], spec, 2, 10, n_warmup=160, thin=1, seed=3, starts=((1.0, 0.0),))
    with pytest.raises(ValueError, match="spec"):
        ll._sample_paired_starts([20], cl.ModelSpec(L=6, V=2, kind="softmax"), 2, 10, n_warmup=160, thin=1, seed=3,
                                starts=((1.0, 0.0), (0.2, 4.0)))


def test_rewarm_continues_the_warmup_from_where_it_ended_with_fresh_steps():
    """``n_rewarm``: the first warm-up's states and steps start a second warm-up, which adapts afresh."""
    import torch

    from copylib.inference.posterior_sampling import sample_collapsed_posterior

    spec, starts = cl.ModelSpec(L=6, V=2, kind="linear"), ((1.0, 0.0), (0.2, 4.0))
    ch = ll._sample_paired_starts([20], spec, 2, 30, n_warmup=20, thin=1, seed=3, starts=starts, n_leapfrog=3,
                                  n_rewarm=15)
    once = ll._sample_paired_starts([20], spec, 2, 30, n_warmup=20, thin=1, seed=3, starts=starts, n_leapfrog=3)
    assert ch.Q.shape == once.Q.shape and not np.array_equal(ch.Q, once.Q)
    # by hand: the same data sets and starts, the first warm-up, then the second from its end
    rng = np.random.default_rng(3)
    C = np.repeat(np.stack([cl.cooccurrence(cl.copy_task(20, 6, 2, rng)[0]) for _ in range(2)]), 2, axis=0)
    (g0, b0), (g1, b1) = (ll._state_logits(m, Q, 6) for m, Q in starts)
    init = {"g": np.tile(np.stack([g0, g1]), (2, 1, 1)), "b": np.tile([b0, b1], 2)}
    gen, hmc = torch.Generator().manual_seed(3), dict(n_leapfrog=3, target_accept=0.75)
    first = sample_collapsed_posterior(C, spec, 4, 1, gen, n_warmup=20, init=init, **hmc)
    second = sample_collapsed_posterior(C, spec, 4, 30, gen, n_warmup=15, init=first.final_params,
                                        step_size=first.step_size, **hmc)
    Q = (5 * second.samples["q"] * np.sign(second.samples["m"])).reshape(ch.Q.shape)
    assert np.array_equal(Q, ch.Q) and not np.array_equal(second.step_size, first.step_size)
    with pytest.raises(ValueError, match="n_rewarm"):
        ll._sample_paired_starts([20], spec, 2, 10, n_warmup=160, thin=1, seed=3, starts=starts, n_rewarm=10)
    with pytest.raises(ValueError, match="n_rewarm"):
        ll._sample_paired_starts([20], spec, 2, 10, n_warmup=20, thin=1, seed=3, starts=starts, n_leapfrog=3,
                                 n_rewarm=-1)


def test_sample_near_switch_runs_and_compares_with_the_plug_in_posterior():
    near = ll.sample_near_switch(8, 2, 2, 40, P_over_P2=(0.9, 1.1), n_warmup=160, thin=4, seed=5)
    assert near.P.size == 2 and near.P[0] < near.P2 < near.P[1]
    assert near.starts[0][1] == 0.0 and near.starts[1][1] > 0
    assert np.isfinite(near.Q.plugin).all() and (near.abs_m.plugin > 0).all()
    assert set(near.frame().index.get_level_values(0)) == {"Q", "|m|"}
    with pytest.raises(ValueError, match="P_over_P2"):
        ll.sample_near_switch(8, 2, 2, 40, P_over_P2=(1.1, 0.9), n_warmup=160, thin=4, seed=5)


def test_barrier_grid_error_takes_the_largest_change(monkeypatch):
    from types import SimpleNamespace

    seen = []

    def fake(P, spec, coordinate, **grid):
        seen.append(grid)
        shift = {"n_m": 161, "n_q": 321, "n_row": 48, "n_rest": 32}
        barrier = 1.0 + sum(0.01 * k for k, (name, n) in enumerate(shift.items(), 1) if grid.get(name) == n)
        return SimpleNamespace(P=P, modes=np.array([0.5, 4.0]), barrier=barrier, log_weight_ratio=0.1)

    monkeypatch.setattr(ll, "plugin_marginal", fake)
    res = ll.barrier_grid_error(100.0, None, q_max=0.1)
    assert res.barrier == 1.0 and res.error == pytest.approx(0.04)
    assert res.refined == pytest.approx({"n_m": 1.01, "n_q": 1.02, "n_row": 1.03, "n_rest": 1.04})
    assert all(g["q_max"] == 0.1 for g in seen) and len(seen) == 5


def test_barrier_grid_error_needs_two_modes():
    with pytest.raises(ValueError, match="two modes"):
        ll.barrier_grid_error(50.0, cl.ModelSpec(L=8, V=2, kind="linear"), n_m=21, n_q=21, n_row=8, n_rest=8)
