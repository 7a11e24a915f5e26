"""Tests of copylib.theory.softmax_noise: the noisy rows of the "fluct" action and the full
transverse average."""

from __future__ import annotations

import numpy as np
import pytest

from copylib import ModelSpec
from copylib.posterior.order_parameters import (
    prior_action_softmax,
)
from copylib.theory.softmax_action import (
    copy_weight_of_gap,
    reduced_action,
)
from copylib.theory.softmax_noise import _transverse_average as transverse_average
from copylib.theory.softmax_noise import row_noise

SPEC = ModelSpec(L=32, V=4)


@pytest.fixture(scope="module")
def noise():
    return row_noise(SPEC, np.random.default_rng(0), n_draws=1024)


def test_fluct_is_deterministic_and_matches_full_matrix_average(noise):
    again = row_noise(SPEC, np.random.default_rng(0), n_draws=1024)
    np.testing.assert_array_equal(again.shift, noise.shift)
    # mean copy weight of noisy rows (global copy mode removed) vs full noisy matrices
    ta = transverse_average(2.0, 600.0, SPEC, np.random.default_rng(4), n_samples=400)
    c = copy_weight_of_gap(2.0, SPEC, version="fluct", noise=noise)
    assert c == pytest.approx(ta.copy_weight, rel=0.02)
    data = reduced_action(2.0, 600.0, SPEC, version="fluct", noise=noise) - prior_action_softmax(2.0, SPEC)
    assert data == pytest.approx(ta.mean_field, abs=1.0)
    assert ta.free_energy <= ta.mean + 1e-12  # Jensen
