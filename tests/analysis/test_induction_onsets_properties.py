"""Property tests of the onsets, steepness and formation steps in copylib.analysis.induction_onsets.

Random valid arguments give results of the documented shape and range; invalid ones raise an
error naming the parameter.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from copylib.analysis import induction as ia
from copylib.analysis import induction_onsets as ion

from props_helpers import budget, covers, raises_naming

pytestmark = pytest.mark.usefixtures("one_thread")

seeds = st.integers(0, 2**16)


def _rises(rng, n_curves, P):
    """Noisy sigmoids in ln P, rising from about 0 to about 1 (first and last points pinned)."""
    centre = rng.uniform(np.log(P[1]), np.log(P[-2]), size=(n_curves, 1))
    y = 1 / (1 + np.exp(-(np.log(P) - centre) * rng.uniform(1, 20, size=(n_curves, 1))))
    y[:, 0], y[:, -1] = 0.0, 1.0
    return y


@covers(ion.steepness)
@budget(30)
@given(n=st.integers(3, 12), k=st.integers(1, 4), seed=seeds)
def test_steepness_is_at_least_the_mean_slope_and_invariant_to_affine_y(n, k, seed):
    rng = np.random.default_rng(seed)
    P = np.cumsum(rng.uniform(0.5, 5.0, size=n)) + 1.0
    y = _rises(rng, k, P)
    s = ion.steepness(P, y)
    assert s.shape == (k,)
    # the largest slope of u is at least its mean slope 1 / ln(P_max / P_min)
    assert (s >= 1 / np.log(P[-1] / P[0]) - 1e-12).all()
    assert np.allclose(ion.steepness(P, 3.0 * y - 2.0), s) and np.allclose(ion.steepness(P, 1 - y), s)


@covers(ion.steepness)
@given(name=st.sampled_from(["P", "y"]))
def test_steepness_rejects_bad_input(name):
    args = {"P": np.array([1.0, 2.0, 4.0]), "y": np.array([0.0, 1.0, 2.0])}
    args[name] = {"P": np.array([1.0, 1.0, 4.0]), "y": np.zeros((2, 3))}[name]  # not increasing / no change
    with raises_naming(name):
        ion.steepness(**args)


@covers(ion.compare_onsets, ion.OnsetComparison)
@budget(25)
@given(n_seeds=st.integers(2, 5), shift=st.floats(0.0, 2.0), seed=seeds)
def test_onsets_lie_on_the_grid_and_margins_are_consistent(n_seeds, shift, seed):
    rng = np.random.default_rng(seed)
    P = np.geomspace(10, 1000, 9)
    obs = {"a": _rises(rng, n_seeds, P), "b": _rises(rng, n_seeds, P)}
    oc = ion.compare_onsets(P, obs, P / np.exp(shift), _rises(rng, 3, P))
    assert oc.names == ("a", "b") and oc.onset.shape == oc.steepness.shape == (2, n_seeds)
    assert ((oc.onset >= P[0]) & (oc.onset <= P[-1])).all() and oc.ref_onset.shape == (3,)
    assert oc.grid_step == pytest.approx(np.log(10) / 4)
    # the same observable has the same onset as itself, within any grid step
    assert oc.same_onset_margin("a", "a") == pytest.approx(-oc.grid_step)
    assert oc.later_margin("a") < np.log(oc.onset_ratio("a"))
    assert np.isfinite(oc.steeper_margin("b")) and list(oc.table().index)[:2] == ["a", "b"]
    with raises_naming("name"):
        oc.onset_ratio("c")


@covers(ion.compare_onsets)
@given(which=st.sampled_from(["observables", "reference", "P"]))
def test_compare_onsets_rejects_bad_input(which):
    P = np.geomspace(10, 1000, 5)
    args = {"P": P, "observables": {"a": np.tile(np.linspace(0, 1, 5), (2, 1))}, "P_ref": P,
            "reference": np.tile(np.linspace(0, 1, 5), (2, 1))}
    args[which] = {"observables": {"a": np.linspace(0, 1, 5)[None]}, "reference": np.zeros((2, 4)),
                   "P": P[::-1]}[which]
    with raises_naming(which):
        ion.compare_onsets(**args)


@covers(ion.formation_steps, ion.FormationSteps)
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
                           W=None, kept_start=np.zeros((n_seeds, 3), dtype=int))
    f = ion.formation_steps(sw)
    assert f.P.tolist() == [40] and f.layer1.shape == f.layer2.shape == f.loss.shape == (n_seeds, 1)
    assert np.isin(f.layer1, steps).all() and np.isin(f.layer2, steps).all() and np.isin(f.loss, steps).all()
    assert f.lag.shape == (n_seeds,) and f.record_interval == np.diff(steps).max()
    with raises_naming("sweep"):
        ion.formation_steps("sweep")


@covers(ion.onset_shift, ion.OnsetShift)
@budget(25)
@given(n_seeds=st.integers(2, 5), noise=st.floats(0.0, 0.05), seed=seeds)
def test_onset_shift_of_a_sweep_with_itself_is_zero(n_seeds, noise, seed):
    rng = np.random.default_rng(seed)
    P = np.geomspace(10, 1000, 9)
    a = {"x": _rises(rng, n_seeds, P), "y": _rises(rng, n_seeds, P)}
    same = ion.onset_shift(P, a, a)
    assert same.onset_a.shape == same.steepness_b.shape == (2, n_seeds)
    # the same curves: no shift, so the margin is minus the combined s.e. (sqrt 2 times one s.e.)
    se = same.onset_a.std(1, ddof=1) / np.sqrt(n_seeds)
    assert same.margins()[:, 0] == pytest.approx(-np.sqrt(2) * se)
    b = {k: v + noise * rng.standard_normal(v.shape) * np.r_[0, np.ones(7), 0] for k, v in a.items()}
    shifted = ion.onset_shift(P, a, b)
    assert shifted.margins().shape == (2, 2) and np.isfinite(shifted.margins()).all()
    assert list(shifted.table(labels=("short", "long")).columns)[:2] == ["onset P (short)", "onset P (long)"]
    with raises_naming("observables_a"):
        ion.onset_shift(P, {"z": a["x"]}, b)
    with raises_naming("labels"):
        shifted.table(labels=("one",))
