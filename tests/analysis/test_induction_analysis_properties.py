"""Property tests of the induction chapter's summaries in copylib.analysis.induction.

Random valid arguments give results of the documented shape and range; invalid ones raise an
error naming the parameter.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from copylib.analysis import induction as ia
from copylib.model.induction import InductionSpec

from props_helpers import budget, covers, raises_naming

pytestmark = pytest.mark.usefixtures("one_thread")

seeds = st.integers(0, 2**16)


def _rises(rng, n_curves, P):
    """Noisy sigmoids in ln P, rising from about 0 to about 1 (first and last points pinned)."""
    centre = rng.uniform(np.log(P[1]), np.log(P[-2]), size=(n_curves, 1))
    y = 1 / (1 + np.exp(-(np.log(P) - centre) * rng.uniform(1, 20, size=(n_curves, 1))))
    y[:, 0], y[:, -1] = 0.0, 1.0
    return y


@covers(ia.steepness)
@budget(30)
@given(n=st.integers(3, 12), k=st.integers(1, 4), seed=seeds)
def test_steepness_is_at_least_the_mean_slope_and_invariant_to_affine_y(n, k, seed):
    rng = np.random.default_rng(seed)
    P = np.cumsum(rng.uniform(0.5, 5.0, size=n)) + 1.0
    y = _rises(rng, k, P)
    s = ia.steepness(P, y)
    assert s.shape == (k,)
    # the largest slope of u is at least its mean slope 1 / ln(P_max / P_min)
    assert (s >= 1 / np.log(P[-1] / P[0]) - 1e-12).all()
    assert np.allclose(ia.steepness(P, 3.0 * y - 2.0), s) and np.allclose(ia.steepness(P, 1 - y), s)


@covers(ia.steepness)
@given(name=st.sampled_from(["P", "y"]))
def test_steepness_rejects_bad_input(name):
    args = {"P": np.array([1.0, 2.0, 4.0]), "y": np.array([0.0, 1.0, 2.0])}
    args[name] = {"P": np.array([1.0, 1.0, 4.0]), "y": np.zeros((2, 3))}[name]  # not increasing / no change
    with raises_naming(name):
        ia.steepness(**args)


@covers(ia.compare_onsets, ia.OnsetComparison)
@budget(25)
@given(n_seeds=st.integers(2, 5), shift=st.floats(0.0, 2.0), seed=seeds)
def test_onsets_lie_on_the_grid_and_margins_are_consistent(n_seeds, shift, seed):
    rng = np.random.default_rng(seed)
    P = np.geomspace(10, 1000, 9)
    obs = {"a": _rises(rng, n_seeds, P), "b": _rises(rng, n_seeds, P)}
    oc = ia.compare_onsets(P, obs, P / np.exp(shift), _rises(rng, 3, P))
    assert oc.names == ("a", "b") and oc.onset.shape == oc.steepness.shape == (2, n_seeds)
    assert ((oc.onset >= P[0]) & (oc.onset <= P[-1])).all() and oc.ref_onset.shape == (3,)
    assert oc.grid_step == pytest.approx(np.log(10) / 4)
    # the same observable has the same onset as itself, within any grid step
    assert oc.same_onset_margin("a", "a") == pytest.approx(-oc.grid_step)
    assert oc.later_margin("a") < np.log(oc.onset_ratio("a"))
    assert np.isfinite(oc.steeper_margin("b")) and list(oc.table().index)[:2] == ["a", "b"]
    with raises_naming("name"):
        oc.onset_ratio("c")


@covers(ia.compare_onsets)
@given(which=st.sampled_from(["observables", "reference", "P"]))
def test_compare_onsets_rejects_bad_input(which):
    P = np.geomspace(10, 1000, 5)
    args = {"P": P, "observables": {"a": np.tile(np.linspace(0, 1, 5), (2, 1))}, "P_ref": P,
            "reference": np.tile(np.linspace(0, 1, 5), (2, 1))}
    args[which] = {"observables": {"a": np.linspace(0, 1, 5)[None]}, "reference": np.zeros((2, 4)),
                   "P": P[::-1]}[which]
    with raises_naming(which):
        ia.compare_onsets(**args)


@covers(ia.formation_steps, ia.FormationSteps)
@budget(30)
@given(n_seeds=st.integers(1, 4), n_rec=st.integers(2, 8), seed=seeds)
def test_formation_steps_are_recorded_steps_of_the_runs_above(n_seeds, n_rec, seed):
    rng = np.random.default_rng(seed)
    P, steps = np.array([10, 20, 40]), np.cumsum(rng.integers(1, 9, size=n_rec))
    curves = np.sort(rng.uniform(size=(3, n_seeds, 3, n_rec)), -1)  # rising curves: c1, score, -loss
    curves[..., -1] += 1.0  # every curve changes
    c1 = np.array([0.1, 0.2, 0.9]) + 0.01 * rng.uniform(size=(n_seeds, 3))  # only the largest P is above
    zeros = np.zeros((n_seeds, 3))
    sw = ia.InductionSweep(P=P, steps=steps, c1=c1, score=zeros, accuracy=zeros, test_mse=zeros, objective=zeros,
                           c1_curve=curves[0], score_curve=curves[1], train_mse_curve=-curves[2], g=None, K=None,
                           W=None)
    f = ia.formation_steps(sw)
    assert f.P.tolist() == [40] and f.layer1.shape == f.layer2.shape == f.loss.shape == (n_seeds, 1)
    assert np.isin(f.layer1, steps).all() and np.isin(f.layer2, steps).all() and np.isin(f.loss, steps).all()
    assert f.lag.shape == (n_seeds,) and f.record_interval == np.diff(steps).max()
    with raises_naming("sweep"):
        ia.formation_steps("sweep")


@covers(ia.tempering_mixing, ia.TemperingMixing)
@budget(3)
@given(seed=seeds, rhat_max=st.floats(1.01, 2.0))
def test_tempering_mixing_flags_are_the_stated_criteria(seed, rhat_max):
    spec = InductionSpec(4, 3)
    runs = {s: ia.sample_induction_tempering([4, 8], spec, np.random.default_rng(seed), betas=[0.0, 1.0], n_chains=2,
                                             n_steps=8, n_warmup=0, thin=1, n_test=4) for s in ("one", "two")}
    m = ia.tempering_mixing(runs, rhat_max=rhat_max, min_trips=1)
    assert m.rhat.shape == m.fewest_trips.shape == m.mixed.shape == (2,) and m.c1.shape == (2, 2)
    assert np.array_equal(m.mixed, (m.rhat < rhat_max) & (m.fewest_trips >= 1))
    assert 0 <= m.swap_min <= 1 and m.swap_bottom.shape == (2,)
    assert np.isnan(m.P_copy) or m.P_copy in (4, 8)
    assert list(m.table().index) == [4, 8] and m.summary()["P_hi"] == 8.0
    with raises_naming("rhat_max"):
        ia.tempering_mixing(runs, rhat_max=1.0)
    with raises_naming("runs"):
        ia.tempering_mixing({"one": runs["one"]})


@covers(ia.induction_switch, ia.InductionSwitch)
@budget(2)
@given(seed=seeds)
def test_switch_quartiles_are_ordered_and_masses_are_probabilities(seed):
    s = ia.sample_induction_states(40, InductionSpec(4, 3), np.random.default_rng(seed), betas=[0.0, 0.1, 0.5, 1.0],
                                   c_split=0.5, n_chains=2, n_steps=6, n_warmup=0, thin=1, n_prior=2000, n_test=4)
    sw = ia.induction_switch(s, n_grid=11, n_bins=10)
    assert sw.copy_mass.shape == sw.log_odds.shape == (2, 11) and ((sw.copy_mass > 0) & (sw.copy_mass < 1)).all()
    assert sw.P_eff[0] == pytest.approx(4.0) and sw.P_eff[-1] == pytest.approx(40.0)
    ok = np.isfinite(sw.P25) & np.isfinite(sw.P75)
    assert (sw.P25[ok] <= sw.P75[ok]).all() and set(sw.summary()) >= {"P_sw", "P_sw_se", "width", "dip"}
    assert sw.table().shape == (8, 2)
    with raises_naming("n_grid"):
        ia.induction_switch(s, n_grid=1)
    with raises_naming("states"):
        ia.induction_switch(None)
