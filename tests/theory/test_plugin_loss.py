"""Tests of copylib.theory.plugin_loss (the loss of attention with its plug-in readout, from invariants)."""

from __future__ import annotations

import numpy as np
import pytest

from copylib import ModelSpec, expected_loss
from copylib.posterior.order_parameters import copy_attention, invariants
from copylib.theory import softmax as st
from copylib.theory.linear_action import _plugin_readout as _lin_readout
from copylib.theory.plugin_loss import plugin_loss, row_stochastic_plugin_loss
from copylib.theory.softmax_action import _plugin_readout as _soft_readout

LINEAR = ModelSpec(L=8, V=3, kind="linear", sigma_G=0.7, sigma_b=1.3, omega=0.8, sigma0_sq=1.2)
SOFTMAX = ModelSpec(L=32, V=4, kind="softmax")


def test_plugin_loss_equals_expected_loss_of_any_attention_with_plugin_readout():
    # any real L x L matrix, not only the symmetric family: the plug-in readout sees A only
    # through the four invariants
    A = np.random.default_rng(7).normal(size=(4, LINEAR.L, LINEAR.L)) / LINEAR.L
    P = np.array([3.0, 30.0, 300.0, 3000.0])
    want = expected_loss(A, _lin_readout(A, P, LINEAR), LINEAR.target)
    np.testing.assert_allclose(plugin_loss(*invariants(A), P, LINEAR), want, rtol=1e-11)
    with pytest.raises(ValueError, match="alpha_1"):
        plugin_loss(-1.0, 1.0, 0.0, 0.0, 10.0, LINEAR)


@pytest.mark.parametrize("cyclic", [True, False])
def test_plugin_loss_of_softmax_attention_equals_expected_loss(cyclic):
    # the general form holds for any kind and for the task without the wrap-around (n_T = L - 1)
    spec = ModelSpec(L=6, V=3, kind="softmax", cyclic=cyclic)
    g = np.random.default_rng(3).normal(size=(5, spec.L, spec.L))
    A = np.exp(g) / np.exp(g).sum(-1, keepdims=True)
    P = 40.0
    want = expected_loss(A, _soft_readout(A, P, spec), spec.target)
    a1, a2, g1, g2 = invariants(A, cyclic)
    np.testing.assert_allclose(plugin_loss(a1, a2, g1, g2, P, spec), want, rtol=1e-11)
    np.testing.assert_allclose(row_stochastic_plugin_loss(a1, g1, P, spec), want, rtol=1e-11)


def test_row_stochastic_plugin_loss_is_state_loss():
    D = np.array([0.0, 0.7, 2.0, 5.0])
    A = copy_attention(D, SOFTMAX.L)
    a1, a2, g1, g2 = invariants(A)
    for P in (10.0, 600.0):
        np.testing.assert_allclose(row_stochastic_plugin_loss(a1, g1, P, SOFTMAX), st.state_loss(D, P, SOFTMAX),
                                   rtol=1e-12)
        np.testing.assert_allclose(plugin_loss(a1, a2, g1, g2, P, SOFTMAX), st.state_loss(D, P, SOFTMAX), rtol=1e-12)
    with pytest.raises(ValueError, match="alpha_1"):
        row_stochastic_plugin_loss(0.5, 1.0, 10.0, SOFTMAX)
    with pytest.raises(ValueError, match="gamma_1"):
        row_stochastic_plugin_loss(2.0, 40.0, 10.0, SOFTMAX)
    with pytest.raises(ValueError, match="kind"):
        row_stochastic_plugin_loss(2.0, 1.0, 10.0, LINEAR)
