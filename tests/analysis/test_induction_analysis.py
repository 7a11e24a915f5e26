"""copylib.analysis.induction: the batched Adam sweep, the MALA sampler, onsets."""

from __future__ import annotations

import numpy as np
import pytest

from copylib.analysis import induction as ia
from copylib.model.induction import InductionSpec

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


def test_onset_interpolates_in_log_P():
    P = np.array([10.0, 100.0, 1000.0])
    assert ia.onset(P, np.array([0.0, 0.5, 1.0])) == pytest.approx(100.0)
    assert ia.onset(P, np.array([0.0, 0.0, 1.0])) == pytest.approx(np.sqrt(100.0 * 1000.0))
    assert ia.onset(P, np.array([[0.0, 0.0], [0.5, 0.0], [1.0, 1.0]])).shape == (2,)


@pytest.mark.parametrize("call, name", [
    (lambda: ia.induction_sweep([10, 5], SPEC, np.random.default_rng(0)), "P_values"),
    (lambda: ia.induction_sweep([10], "spec", np.random.default_rng(0)), "spec"),
    (lambda: ia.induction_sweep([10], SPEC, np.random.default_rng(0), n_seeds=0), "n_seeds"),
    (lambda: ia.induction_sweep([10], SPEC, np.random.default_rng(0), lr=-1.0), "lr"),
    (lambda: ia.induction_sweep([10], SPEC, None), "rng"),
    (lambda: ia.sample_induction_posterior([10], SPEC, np.random.default_rng(0), init={"g": 0}), "init"),
    (lambda: ia.onset([1.0, 2.0], [1.0, 1.0]), "y"),
    (lambda: ia.onset([2.0, 1.0], [0.0, 1.0]), "P"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises((ValueError, TypeError), match=rf"\b{name}\b"):
        call()
