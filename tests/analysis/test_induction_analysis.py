"""copylib.analysis.induction: the batched Adam sweep, the MALA sampler, tempering."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from copylib.analysis import induction as ia
from copylib.model.induction import InductionSpec, induction_task, layer1_copy_weight, layers_from_attention
from copylib.model.network import attention

pytestmark = pytest.mark.usefixtures("one_thread")

SPEC = InductionSpec(L=5, V=4, sigma0_sq=0.25)


def test_sweep_shapes_and_training_reduces_the_loss():
    sw = ia.induction_sweep([10, 30], SPEC, np.random.default_rng(0), n_seeds=2, n_steps=40, n_test=16, n_records=5)
    assert sw.c1.shape == sw.accuracy.shape == (2, 2) and sw.c1_curve.shape == (2, 2, 5)
    assert sw.g.shape == (2, 2, 5, 5) and sw.K.shape == (2, 2, 4, 4)
    assert (sw.train_mse_curve[..., -1] < sw.train_mse_curve[..., 0]).all()
    assert ((0 <= sw.accuracy) & (sw.accuracy <= 1)).all()


def test_same_rng_same_runs():
    a, b = (ia.induction_sweep([10, 20], SPEC, np.random.default_rng(1), n_seeds=1, n_steps=10, n_test=8)
            for _ in range(2))
    assert np.array_equal(a.g, b.g) and np.array_equal(a.accuracy, b.accuracy)


def test_sampler_shapes_and_start_from_given_state():
    init = {"g": np.zeros((2, 5, 5)), "K": np.zeros((2, 4, 4)), "W": np.zeros((2, 4, 4))}
    s = ia._sample_induction_posterior([5, 10], SPEC, np.random.default_rng(0), n_chains=2, n_steps=10, n_warmup=0,
                                      thin=5, init=init)
    assert s.c1.shape == (2, 2, 2) and s.accept_rate.shape == (2, 2)
    assert np.isfinite(s.score).all()


def test_shared_forward_equals_the_batched_forward():
    gen = torch.Generator().manual_seed(0)
    g, K, W = (torch.randn(3, *shape, generator=gen, dtype=torch.float64) for shape in ((5, 5), (4, 4), (4, 4)))
    X = torch.as_tensor(induction_task(7, 5, 4, np.random.default_rng(0)).X)
    A1 = attention(g, "softmax", causal=True)
    for a, b in zip(ia._shared_forward(A1, K, W, X), layers_from_attention(A1, K, W, X)):
        assert torch.allclose(a, b, atol=1e-13)  # the same sums in another order: rounding only


def test_tempering_counts_repeated_sequences_exactly():
    data = induction_task(40, 4, 3, np.random.default_rng(0))
    sub, counts = ia._distinct_counts(data, np.array([10, 40]))
    assert counts.sum(1).tolist() == [10, 40] and len(np.unique(sub.tokens, axis=0)) == len(sub.tokens)


def test_tempering_sampler_is_reproducible_and_starts_from_a_given_state():
    spec = InductionSpec(L=4, V=3, sigma0_sq=0.25)
    init = {"g": np.zeros((2, 4, 4)), "K": np.zeros((2, 3, 3)), "W": np.zeros((2, 3, 3))}
    a, b = (ia.sample_induction_tempering([5, 10], spec, np.random.default_rng(0), betas=[0.0, 0.5, 1.0],
                                          n_chains=2, n_steps=6, n_warmup=2, thin=3, init=init) for _ in range(2))
    assert a.c1.shape == (2, 2, 2) and a.swap_rate.shape == (2, 2, 2) and a.round_trips.shape == (2, 2)
    assert np.array_equal(a.c1, b.c1) and np.array_equal(a.accuracy, b.accuracy)


@pytest.mark.parametrize("call, name", [
    (lambda: ia.induction_sweep([10, 5], SPEC, np.random.default_rng(0)), "P_values"),
    (lambda: ia.induction_sweep([10], "spec", np.random.default_rng(0)), "spec"),
    (lambda: ia.induction_sweep([10], SPEC, np.random.default_rng(0), n_seeds=0), "n_seeds"),
    (lambda: ia.induction_sweep([10], SPEC, np.random.default_rng(0), lr=-1.0), "lr"),
    (lambda: ia.induction_sweep([10], SPEC, None), "rng"),
    (lambda: ia._sample_induction_posterior([10], SPEC, np.random.default_rng(0), init={"g": 0}), "init"),
    (lambda: ia.sample_induction_tempering([10], SPEC, np.random.default_rng(0), betas=[0.0, 0.5]), "betas"),
    (lambda: ia.sample_induction_tempering([10], SPEC, np.random.default_rng(0), betas=[1.0], swap_every=0),
     "swap_every"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises((ValueError, TypeError), match=rf"\b{name}\b"):
        call()


STATES_SPEC = InductionSpec(L=4, V=3, sigma0_sq=0.25)


@pytest.fixture(scope="module")
def states():
    return ia.sample_induction_states(60, STATES_SPEC, np.random.default_rng(3), betas=[0.0, 0.1, 0.4, 1.0],
                                      c_split=0.5, n_chains=3, n_steps=60, n_warmup=30, thin=3, n_prior=20_000)


def test_states_stay_in_their_region_and_have_the_documented_shapes(states):
    assert states.c1.shape == states.u_data.shape == (2, 4, 3, 20)
    assert (states.c1[0] <= 0.5).all() and (states.c1[1] > 0.5).all()
    assert states.accept_rate.shape == (2, 4, 3) and states.swap_rate.shape == (2, 3, 3)


def test_copy_mass_starts_at_the_prior_mass_and_is_a_probability(states):
    m = states.copy_mass([0.0, 0.2, 1.0])
    assert m.shape == (3, 3) and ((m > 0) & (m < 1)).all()
    assert m[:, 0] == pytest.approx(np.full(3, float(states.prior_mass)))
    # the prior mass of c1 > 1/2 from an independent estimate: mean over fresh prior draws
    g = torch.randn(20_000, 4, 4, generator=torch.Generator().manual_seed(9), dtype=torch.float64)
    fresh = float((layer1_copy_weight(attention(g, "softmax", causal=True)) > 0.5).double().mean())
    assert abs(fresh - states.prior_mass) < 4.5 * np.sqrt(2) * states.prior_mass_se


def test_density_integrates_to_one_and_states_are_reproducible(states):
    edges = np.linspace(0, 1, 11)
    dens = states.c1_density(0.4, edges)
    assert dens.shape == (3, 10) and dens.sum(1) * 0.1 == pytest.approx(np.ones(3))
    again = ia.sample_induction_states(60, STATES_SPEC, np.random.default_rng(3), betas=[0.0, 0.1, 0.4, 1.0],
                                       c_split=0.5, n_chains=3, n_steps=60, n_warmup=30, thin=3, n_prior=20_000)
    assert np.array_equal(again.u_data, states.u_data) and np.array_equal(again.c1, states.c1)


@pytest.mark.parametrize("kw, name", [
    (dict(betas=[0.1, 1.0], c_split=0.5), "betas"),
    (dict(betas=[0.0, 1.0], c_split=1.0), "c_split"),
    (dict(betas=[0.0, 1.0], c_split=0.5, n_chains=1), "n_chains"),
])
def test_states_bad_input_names_the_parameter(kw, name):
    with pytest.raises((ValueError, TypeError), match=rf"\b{name}\b"):
        ia.sample_induction_states(10, STATES_SPEC, np.random.default_rng(0), **kw)


def test_states_keep_the_last_posterior_draws_in_their_regions_and_the_data(states):
    assert states.g.shape == (2, 3, 4, 4) and states.K.shape == states.W.shape == (2, 3, 3, 3)
    c1 = layer1_copy_weight(attention(torch.as_tensor(states.g), "softmax", causal=True)).numpy()
    assert (c1[0] <= 0.5).all() and (c1[1] > 0.5).all()
    assert states.tokens.shape == (60, 4) and states.test_tokens.shape[1] == 4


def test_restarts_keep_the_lowest_objective_and_one_scale_is_the_plain_sweep():
    kw = dict(n_seeds=2, n_steps=20, n_test=8, n_records=3)
    one = ia.induction_sweep([10, 20], SPEC, np.random.default_rng(4), **kw)
    scalar = ia.induction_sweep([10, 20], SPEC, np.random.default_rng(4), init_scale=(0.1,), **kw)
    assert np.array_equal(one.g, scalar.g) and (one.kept_start == 0).all()
    both = ia.induction_sweep([10, 20], SPEC, np.random.default_rng(4), init_scale=(0.1, 2.0), **kw)
    assert set(np.unique(both.kept_start)) <= {0, 1} and both.g.shape == one.g.shape
    # the kept run is the one with the lower objective of its (seed, P): start-major rows
    out = {"objective": np.array([[3.0, 1.0], [2.0, 5.0]]), "c1": np.array([[0.1, 0.2], [0.3, 0.4]]),
           "P": np.array([1, 2]), "steps": np.array([0])}
    kept = ia._keep_lowest(out, 2, 1)
    assert np.array_equal(kept["kept_start"], [[1, 0]]) and np.array_equal(kept["c1"], [[0.3, 0.2]])
    with pytest.raises(ValueError, match=r"\binit_scale\b"):
        ia.induction_sweep([10], SPEC, np.random.default_rng(0), init_scale=(0.1, -1.0))


def test_map_from_states_starts_where_the_chains_ended(states):
    back = ia.map_from_states(states, STATES_SPEC, n_steps=5)
    assert back.c1.shape == back.objective.shape == back.c1_start.shape == (3, 3)
    c1 = layer1_copy_weight(attention(torch.as_tensor(states.g), "softmax", causal=True)).numpy()
    assert back.c1_start[:2] == pytest.approx(c1)
    assert ((back.accuracy >= 0) & (back.accuracy <= 1)).all() and back.table().shape == (3, 5)
    with pytest.raises(ValueError, match=r"\bspec\b"):
        ia.map_from_states(states, InductionSpec(L=5, V=3))
    with pytest.raises(TypeError, match=r"\bstates\b"):
        ia.map_from_states(None, STATES_SPEC)


def test_map_from_states_counts_equal_the_full_data(states):
    # the distinct sequences with their counts give the same U as the full data set
    from copylib.model.induction import induction_energy
    back = ia.map_from_states(states, STATES_SPEC, n_steps=1, lr=1e-12, lr_final=1e-12)
    data = ia._data_from_tokens(states.tokens, 3)
    U = induction_energy(torch.as_tensor(states.g[1, 0]), torch.as_tensor(states.K[1, 0]),
                         torch.as_tensor(states.W[1, 0]), data, STATES_SPEC)
    assert back.objective[1, 0] == pytest.approx(float(U), rel=1e-9)
