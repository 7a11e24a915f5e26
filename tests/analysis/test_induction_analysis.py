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
    s = ia.sample_induction_posterior([5, 10], SPEC, np.random.default_rng(0), n_chains=2, n_steps=10, n_warmup=0,
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
    (lambda: ia.sample_induction_posterior([10], SPEC, np.random.default_rng(0), init={"g": 0}), "init"),
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


def test_dip_ratio_is_one_without_a_dip_and_small_between_separated_states():
    edges = np.linspace(0, 1, 11)
    c = (edges[:-1] + edges[1:]) / 2
    one = np.exp(-(c - 0.4) ** 2 / 0.05)
    two = np.exp(-(c - 0.15) ** 2 / 0.005) + np.exp(-(c - 0.85) ** 2 / 0.005)
    assert ia.dip_ratio(one, edges, 0.5) == pytest.approx(1.0)
    assert ia.dip_ratio(np.stack([two, one]), edges, 0.5)[0] < 0.01
    with pytest.raises(ValueError, match="c_split"):
        ia.dip_ratio(one, edges, 1.5)


@pytest.mark.parametrize("kw, name", [
    (dict(betas=[0.1, 1.0], c_split=0.5), "betas"),
    (dict(betas=[0.0, 1.0], c_split=1.0), "c_split"),
    (dict(betas=[0.0, 1.0], c_split=0.5, n_chains=1), "n_chains"),
])
def test_states_bad_input_names_the_parameter(kw, name):
    with pytest.raises((ValueError, TypeError), match=rf"\b{name}\b"):
        ia.sample_induction_states(10, STATES_SPEC, np.random.default_rng(0), **kw)


# --------------------------------------------------------------------------
# the chapter's summaries
# --------------------------------------------------------------------------

def test_steepness_of_a_linear_rise_and_of_a_jump():
    P = np.exp([0.0, 1.0, 2.0])
    assert ia.steepness(P, [0.0, 0.5, 1.0]) == pytest.approx([0.5])  # u rises by 1/2 per unit of ln P
    assert ia.steepness(P, [[0.0, 0.0, 1.0], [2.0, 1.0, 0.0]]) == pytest.approx([1.0, 0.5])


def test_onsets_of_planted_curves_and_the_margins():
    P = np.exp([0.0, 1.0, 2.0, 3.0])
    rise = np.array([0.0, 0.25, 0.75, 1.0])  # half way at ln P = 1.5
    late = np.array([0.0, 0.0, 0.5, 1.0])  # half way at ln P = 2
    oc = ia.compare_onsets(P, {"a": np.stack([rise, rise]), "b": np.stack([late, late])}, P, np.stack([rise, rise]))
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
                           c1_curve=c1_curve, score_curve=score_curve, train_mse_curve=-c1_curve, g=None, K=None, W=None)
    f = ia.formation_steps(sw)
    assert f.P.tolist() == [50] and f.layer1.tolist() == [[10]] and f.layer2.tolist() == [[20]]
    assert f.lag.tolist() == [10] and f.record_interval == 10 and f.table()["mean step"].tolist() == [10, 20, 10]


def _tempering(c1, trips, swap):
    n_P, n_chains, _ = c1.shape
    return ia.InductionTempering(P=np.array([10, 20]), betas=np.array([0.0, 1.0]), c1=c1, score=c1, accuracy=c1,
                                 accept_rate=np.full((2, n_P, n_chains), 0.5), swap_rate=swap,
                                 round_trips=trips)


def test_tempering_mixing_on_planted_chains():
    rng = np.random.default_rng(0)
    same = rng.normal(0.3, 0.01, size=(2, 40))
    a = _tempering(np.stack([same, same + 0.0]), np.array([[5, 6], [0, 1]]), np.full((1, 2, 2), 0.4))
    split = np.stack([rng.normal(0.3, 0.01, size=(2, 40)), rng.normal(0.9, 0.01, size=(2, 40))])
    b = _tempering(split, np.array([[4, 4], [3, 3]]), np.full((1, 2, 2), 0.2))
    m = ia.tempering_mixing({"one": a, "two": b})
    assert m.mixed.tolist() == [True, False] and m.fewest_trips.tolist() == [4, 0]
    assert m.rhat[0] < 1.1 < m.rhat[1] and m.P_copy == 20 and m.swap_min == pytest.approx(0.2)
    assert m.table().shape == (2, 6)


def test_switch_agrees_with_the_copy_mass_it_interpolates(states):
    sw = ia.induction_switch(states, n_grid=41, n_bins=10)
    assert sw.P_eff[0] == pytest.approx(6.0) and sw.P_eff[-1] == pytest.approx(60.0)
    assert sw.copy_mass == pytest.approx(states.copy_mass(sw.P_eff / 60))
    for i, p in enumerate(sw.P_sw):
        if np.isfinite(p):  # the crossing of the log odds: the copy mass there is 1/2
            assert np.interp(np.log(p), np.log(sw.P_eff), sw.log_odds[i]) == pytest.approx(0.0, abs=1e-9)
    assert sw.summary()["odds_top"] == pytest.approx(sw.log_odds[:, -1].mean())


def test_summaries_are_plain_numbers_of_the_fields(states):
    sw = ia.induction_switch(states, n_grid=41, n_bins=10)
    tab = sw.table()
    assert tab.loc["P_sw: copy mass 1/2", "s.e."] == pytest.approx(np.std(sw.P_sw, ddof=1) / np.sqrt(sw.P_sw.size), nan_ok=True)
    rng = np.random.default_rng(1)
    a = _tempering(rng.normal(0.3, 0.01, size=(2, 2, 30)), np.array([[5, 6], [0, 1]]), np.full((1, 2, 2), 0.4))
    s = ia.tempering_mixing({"one": a, "two": a}).summary()
    assert s["P_lo"] == 10 and s["trips_hi"] == 0 and isinstance(s["trips_lo"], int) and s["P_mix"] == 10
