"""Tests of copylib.theory.softmax, the public names of the softmax saddle-point theory: every
function checks its input at the boundary. The themes are tested beside their modules
(test_softmax_noise, test_softmax_action, test_softmax_transition)."""

from __future__ import annotations

import numpy as np
import pytest

from copylib import ModelSpec
from copylib.theory.softmax import (
    first_order_point,
    local_minima,
    minimum_curve,
    reduced_action,
    row_noise,
    spinodals,
)
from copylib.theory.softmax_action import _plugin_readout

SPEC = ModelSpec(L=32, V=4)
ODD = ModelSpec(L=24, V=3, sigma_G=1.3, omega=0.7, sigma0_sq=0.6)


@pytest.fixture(scope="module")
def noise():
    return row_noise(SPEC, np.random.default_rng(0), n_draws=1024)


def test_bad_input(noise):
    with pytest.raises(ValueError, match="P"):
        reduced_action(1.0, 0.0, SPEC)
    with pytest.raises(ValueError, match="P"):
        reduced_action(1.0, [10.0, -1.0], SPEC)
    with pytest.raises(ValueError, match="P"):
        local_minima(-5.0, SPEC)
    with pytest.raises(ValueError, match="Delta"):
        reduced_action([1.0, np.nan], 10.0, SPEC)
    with pytest.raises(ValueError, match="Delta"):
        reduced_action(np.inf, 10.0, SPEC)
    with pytest.raises(ValueError, match="kind"):
        reduced_action(1.0, 10.0, ModelSpec(L=8, V=2, kind="linear"))
    with pytest.raises(ValueError, match="kind"):
        first_order_point(ModelSpec(L=8, V=2, kind="linear"))
    with pytest.raises(ValueError, match="version"):
        reduced_action(1.0, 10.0, SPEC, version="bayes")
    with pytest.raises(TypeError, match="noise"):
        reduced_action(1.0, 10.0, SPEC, version="fluct")
    with pytest.raises(ValueError, match="noise"):
        reduced_action(1.0, 10.0, SPEC, version="mean_field", noise=noise)
    with pytest.raises(ValueError, match="L"):
        reduced_action(1.0, 10.0, ODD, version="fluct", noise=noise)
    with pytest.raises(ValueError, match="n_draws"):
        row_noise(SPEC, np.random.default_rng(0), n_draws=1000)
    with pytest.raises(TypeError, match="rng"):
        row_noise(SPEC, 0)
    with pytest.raises(ValueError, match="P_values"):
        minimum_curve(np.array([10.0, 0.0]), SPEC)
    with pytest.raises(ValueError, match="P_range"):
        spinodals(SPEC, P_range=(10.0, 5.0))
    with pytest.raises(ValueError, match="A"):
        _plugin_readout(np.ones((3, 3)), 10.0, SPEC)
