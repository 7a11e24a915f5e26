"""Property tests of copylib.model.induction, copylib.analysis.induction (the samplers) and the induction explorer.

Random valid arguments give output of the documented shape and range; invalid ones raise an error
naming the parameter.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from copylib import explorers
from copylib.analysis import induction as ia
from copylib.model import induction as ind

from props_helpers import budget, covers, raises_naming, sizes

pytestmark = pytest.mark.usefixtures("one_thread")


@covers(ind.induction_task, ind.InductionData, ind.previous_occurrence, ind.induction_keys)
@budget(20)
@given(P=st.integers(1, 6), L=sizes, V=sizes, seed=st.integers(0, 2**16))
def test_task_targets_follow_the_previous_occurrence(P, L, V, seed):
    d = ind.induction_task(P, L, V, np.random.default_rng(seed))
    prev = ind.previous_occurrence(d.tokens)
    assert d.X.shape == d.Y.shape == (P, L, V) and d.mask.shape == (P, L)
    assert np.array_equal(d.mask, prev >= 0) and (prev < np.arange(L)).all()
    keys = ind.induction_keys(d.tokens)
    # the follower of the most recent occurrence is always one of the induction keys
    mu, l = np.nonzero(d.mask)
    assert keys[mu, l, prev[mu, l] + 1].all()


@covers(ind.InductionSpec, ind.induction_forward, ind.layers_from_attention, ind.sequence_errors,
        ind.induction_energy, ind.layer1_copy_weight, ind.induction_accuracy, ind.induction_attention_score,
        ind.layer2_visible, ind.induction_prior)
@budget(15)
@given(L=sizes, V=sizes, seed=st.integers(0, 2**16), scale=st.floats(0.0, 5.0))
def test_network_outputs_are_distributions_and_energy_is_finite(L, V, seed, scale):
    rng = np.random.default_rng(seed)
    d = ind.induction_task(4, L, V, rng)
    g, K, W = scale * rng.normal(size=(L, L)), scale * rng.normal(size=(V, V)), rng.normal(size=(V, V))
    A1, A2, F = ind.induction_forward(g, K, W, d.X)
    assert np.allclose(A1.sum(-1), 1) and np.allclose(A2.sum(-1), 1) and (A2[..., 1:, 0] == 0).all()
    assert 0 <= ind.layer1_copy_weight(A1) <= 1
    assert 0 <= float(ind.induction_accuracy(F, d)) <= 1 or not d.mask.any()
    U = ind.induction_energy(g, K, W, d, ind.InductionSpec(L, V))
    assert np.isfinite(float(U)) and float(U) >= 0


@covers(ind.InductionSpec)
@given(bad=st.sampled_from([0.0, -1.0, float("nan"), float("inf")]),
       name=st.sampled_from(["sigma_G", "sigma_K", "omega", "sigma0_sq"]))
def test_spec_rejects_bad_scales(bad, name):
    with raises_naming(name):
        ind.InductionSpec(4, 3, **{name: bad})


@covers(ia.induction_sweep, ia.InductionSweep, ia._sample_induction_posterior, ia._InductionSampling)
@budget(3)
@given(seed=st.integers(0, 2**16))
def test_sweep_and_sampler_give_values_in_range(seed):
    spec = ind.InductionSpec(4, 3)
    sw = ia.induction_sweep([4, 8], spec, np.random.default_rng(seed), n_seeds=1, n_steps=3, n_test=4, n_records=2)
    assert ((0 <= sw.c1) & (sw.c1 <= 1)).all() and ((0 <= sw.score) & (sw.score <= 1 + 1e-12)).all()
    s = ia._sample_induction_posterior([4], spec, np.random.default_rng(seed), n_chains=1, n_steps=2, n_warmup=0,
                                      thin=1)
    assert s.c1.shape == (1, 1, 2) and ((0 <= s.accept_rate) & (s.accept_rate <= 1)).all()


@covers(ia.sample_induction_tempering, ia.InductionTempering)
@budget(3)
@given(seed=st.integers(0, 2**16))
def test_tempering_sampler_gives_values_in_range(seed):
    spec = ind.InductionSpec(4, 3)
    s = ia.sample_induction_tempering([4, 6], spec, np.random.default_rng(seed), betas=[0.0, 1.0], n_chains=1,
                                      n_steps=2, n_warmup=0, thin=1, n_test=4)
    assert s.c1.shape == s.accuracy.shape == (2, 1, 2) and s.swap_rate.shape == (1, 2, 1)
    assert ((0 <= s.c1) & (s.c1 <= 1)).all() and ((0 <= s.accuracy) & (s.accuracy <= 1)).all()


@covers(ia.sample_induction_states, ia.InductionStates)
@budget(2)
@given(seed=st.integers(0, 2**16), c_split=st.floats(0.3, 0.7))
def test_restricted_ladders_stay_in_their_regions_and_give_probabilities(seed, c_split):
    s = ia.sample_induction_states(8, ind.InductionSpec(4, 3), np.random.default_rng(seed), betas=[0.0, 0.5, 1.0],
                                   c_split=c_split, n_chains=2, n_steps=4, n_warmup=0, thin=1, n_prior=2000, n_test=4)
    assert s.c1.shape == s.u_data.shape == (2, 3, 2, 4)
    assert (s.c1[0] <= c_split).all() and (s.c1[1] > c_split).all() and (s.u_data >= 0).all()
    m = s.copy_mass([0.0, 1.0])
    assert m.shape == (2, 2) and ((0 < m) & (m < 1)).all()


@covers(ia.map_from_states, ia.MapFromStates)
@budget(2)
@given(seed=st.integers(0, 2**16), n_steps=st.integers(1, 4))
def test_map_from_states_gives_values_in_range(seed, n_steps):
    spec = ind.InductionSpec(4, 3)
    s = ia.sample_induction_states(8, spec, np.random.default_rng(seed), betas=[0.0, 1.0], c_split=0.5, n_chains=2,
                                   n_steps=2, n_warmup=0, thin=1, n_prior=2000, n_test=4)
    back = ia.map_from_states(s, spec, n_steps=n_steps, seed=seed)
    assert back.c1.shape == back.objective.shape == (3, 2) and back.starts[1] == "copying draws"
    assert ((0 <= back.c1) & (back.c1 <= 1)).all() and (back.objective >= 0).all()
    assert (back.c1_start[0] <= 0.5).all() and (back.c1_start[1] > 0.5).all()
    with raises_naming("n_steps"):
        ia.map_from_states(s, spec, n_steps=0)


@covers(explorers.induction_figure, explorers.induction_explorer)
def test_induction_explorer_has_one_frame_per_P():
    import matplotlib.pyplot as plt

    L, V = 4, 3
    d = ind.induction_task(1, L, V, np.random.default_rng(0))
    A1, A2, _ = ind.induction_forward(np.zeros((2, L, L)), np.zeros((2, V, V)), np.eye(V), d.X)
    fig = explorers.induction_figure(A1[0], np.eye(V), d.tokens[0], A2[0, 0], 10.0)
    assert len(fig.axes) >= 3
    plt.close(fig)
    box = explorers.induction_explorer([10.0, 20.0], A1, np.zeros((2, V, V)), d.tokens[0], A2[:, 0])
    assert box is not None
    with raises_naming("P"):
        explorers.induction_figure(A1[0], np.eye(V), d.tokens[0], A2[0, 0], -1.0)
