"""Tests of copylib.softmax_experiments (planted copy states, Adam from a given start)."""

import numpy as np
import pytest
import torch

import copylib as cl
from copylib import softmax_experiments as sx
from copylib.evidence import optimal_readout
from copylib.order_parameters import copy_attention, copy_weight


@pytest.fixture
def spec():
    return cl.ModelSpec(L=8, V=3, kind="softmax")


def test_planted_logits_give_copy_attention_with_minimal_norm():
    L = 8
    Delta = np.array([0.0, 1.3, -0.4])
    g = sx.planted_logits(Delta, L)
    assert g.shape == (3, L, L)
    np.testing.assert_allclose(cl.attention(g, "softmax"), copy_attention(Delta, L), atol=1e-14)
    np.testing.assert_allclose((g**2).sum((-1, -2)), (L - 1) * Delta**2, rtol=1e-12)
    np.testing.assert_allclose(g.sum(-1), 0.0, atol=1e-13)  # row means removed


def test_planted_init_uses_ridge_readout(spec):
    C = cl.nested_cooccurrence([40, 80], spec, np.random.default_rng(0))
    init = sx.planted_init([0.0, 2.0], C, spec)
    assert init["g"].shape == (2, 8, 8) and init["b"].shape == (2,) and init["W"].shape == (2, 3, 3)
    A = cl.attention(cl.attention_logits(init["g"], init["b"]), "softmax")
    np.testing.assert_allclose(init["W"], optimal_readout(A, C, spec), rtol=1e-12)
    np.testing.assert_allclose(copy_weight(A), copy_attention(np.array([0.0, 2.0]), 8)[:, 1, 0], rtol=1e-12)
    with pytest.raises(ValueError):
        sx.planted_init(1.0, C[0], spec)


def test_train_map_with_given_init_matches_its_random_start(spec):
    """Given the initial state train_map would draw, train_map(init=...) reproduces the run exactly."""
    C = np.repeat(cl.nested_cooccurrence([60], spec, np.random.default_rng(1)), 2, axis=0)
    ref = cl.train_map(C, spec, torch.Generator().manual_seed(3), init_scale=0.5, n_steps=50, n_records=5)
    gen = torch.Generator().manual_seed(3)
    g = 0.5 * torch.randn(2, 8, 8, generator=gen, dtype=torch.float64)
    b = 0.5 * torch.randn(2, generator=gen, dtype=torch.float64)
    W = 0.1 * spec.omega**0.5 * torch.randn(2, 3, 3, generator=gen, dtype=torch.float64)
    out = cl.train_map(C, spec, init={"g": g.numpy(), "b": b.numpy(), "W": W.numpy()}, n_steps=50, n_records=5)
    np.testing.assert_allclose(out.objective, ref.objective, rtol=1e-12)
    np.testing.assert_allclose(out.test_loss, ref.test_loss, rtol=1e-12)
    np.testing.assert_array_equal(out.steps, ref.steps)


def test_train_map_validates_init(spec):
    C = cl.nested_cooccurrence([30], spec, np.random.default_rng(2))
    init = sx.planted_init(1.0, C, spec)
    with pytest.raises(ValueError, match="init"):
        cl.train_map(C, spec, init={"g": init["g"], "b": init["b"]})
    with pytest.raises(ValueError, match="init"):
        cl.train_map(C, spec, init={**init, "g": init["g"][:, :4]})
    with pytest.raises(TypeError, match="generator"):
        cl.train_map(C, spec)


def test_interpolate_crossing_and_state_fraction():
    x = np.array([0.0, 1.0, 2.0, 3.0])
    assert sx.interpolate_crossing(x, [2.0, 1.0, -1.0, -3.0]) == pytest.approx(1.5)
    assert np.isnan(sx.interpolate_crossing(x, [1.0, 2.0, 3.0, 4.0]))
    assert sx.interpolate_crossing(x, [1.0, 0.0, 1.0, 2.0]) == 1.0
    np.testing.assert_allclose(sx.state_fraction(np.array([[0.0, 0.2, 0.3, 0.05]]), 0.1), [0.5])
