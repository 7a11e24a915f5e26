"""Unit tests for copylib.model.network: ModelSpec, logits, attention, network output, prior."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from copylib.model.network import ModelSpec, attention, attention_logits, network_output, prior_energy
from copylib.model.task import copy_task, shift_matrix

VARIANCES = ("sigma_G", "sigma_b", "omega", "sigma0_sq")


# --------------------------------------------------------------------------- ModelSpec


def test_modelspec_defaults_and_derived_quantities():
    spec = ModelSpec(L=5, V=3)
    assert spec.kind == "softmax" and spec.cyclic is True
    assert spec.sigma_G == spec.sigma_b == spec.omega == spec.sigma0_sq == 1.0

    spec = ModelSpec(L=6, V=4, kind="linear", sigma_G=2.0, sigma_b=0.5, omega=3.0, sigma0_sq=0.25, cyclic=False)
    assert spec.sigma_sq == pytest.approx(0.25 * 6)
    assert spec.kappa == pytest.approx(0.25 * 6 / 3.0)
    np.testing.assert_array_equal(spec.target, shift_matrix(6, cyclic=False))
    np.testing.assert_array_equal(ModelSpec(L=6, V=4).target, shift_matrix(6, cyclic=True))


def test_modelspec_normalises_types():
    spec = ModelSpec(L=np.int64(4), V=np.int32(3), sigma_G=2, omega=np.float32(0.5))
    assert type(spec.L) is int and type(spec.V) is int
    assert type(spec.sigma_G) is float and spec.sigma_G == 2.0
    assert type(spec.omega) is float and spec.omega == 0.5


def test_modelspec_is_frozen():
    spec = ModelSpec(L=4, V=3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.L = 5


@pytest.mark.parametrize("field, value", [("L", 1), ("L", 0), ("L", 2.5), ("V", 1), ("V", -2), ("V", 3.5)])
def test_modelspec_rejects_bad_sizes(field, value):
    kwargs = {"L": 4, "V": 3, field: value}
    with pytest.raises(ValueError, match=field):
        ModelSpec(**kwargs)


@pytest.mark.parametrize("field", ["L", "V"])
def test_modelspec_rejects_non_numeric_sizes(field):
    kwargs = {"L": 4, "V": 3, field: "4"}
    with pytest.raises(TypeError, match=field):
        ModelSpec(**kwargs)


@pytest.mark.parametrize("name", VARIANCES)
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf, -1.0, 0.0])
def test_modelspec_rejects_non_finite_or_non_positive_variances(name, value):
    with pytest.raises(ValueError, match=name):
        ModelSpec(L=4, V=3, **{name: value})


@pytest.mark.parametrize("name", VARIANCES)
@pytest.mark.parametrize("value", ["1", None, True])
def test_modelspec_rejects_non_real_variances(name, value):
    with pytest.raises(TypeError, match=name):
        ModelSpec(L=4, V=3, **{name: value})


@pytest.mark.parametrize("kind", ["relu", "Softmax", "", None])
def test_modelspec_rejects_unknown_kind(kind):
    with pytest.raises(ValueError, match="kind"):
        ModelSpec(L=4, V=3, kind=kind)


def test_modelspec_rejects_non_bool_cyclic():
    with pytest.raises(TypeError, match="cyclic"):
        ModelSpec(L=4, V=3, cyclic=1)


# --------------------------------------------------------------------------- attention_logits


def test_attention_logits_is_g_plus_b_everywhere():
    rng = np.random.default_rng(0)
    g, b = rng.normal(size=(4, 4)), 0.7
    G = attention_logits(g, np.float64(b))
    assert isinstance(G, np.ndarray) and G.shape == (4, 4) and G.dtype == np.float64
    expected = np.array([[g[i, j] + b for j in range(4)] for i in range(4)])
    np.testing.assert_allclose(G, expected, rtol=0, atol=1e-15)


def test_attention_logits_batched_matches_loop():
    rng = np.random.default_rng(1)
    g, b = rng.normal(size=(2, 3, 5, 5)), rng.normal(size=(2, 3))
    G = attention_logits(g, b)
    assert G.shape == (2, 3, 5, 5)
    for i in range(2):
        for j in range(3):
            np.testing.assert_array_equal(G[i, j], attention_logits(g[i, j], b[i, j]))


def test_attention_logits_torch_keeps_dtype_and_grad():
    g = torch.zeros(2, 3, 3, dtype=torch.float32, requires_grad=True)
    b = torch.ones(2, dtype=torch.float32, requires_grad=True)
    G = attention_logits(g, b)
    assert isinstance(G, torch.Tensor) and G.dtype == torch.float32
    G.sum().backward()
    torch.testing.assert_close(b.grad, torch.full((2,), 9.0))  # each b enters L*L = 9 logits
    torch.testing.assert_close(g.grad, torch.ones(2, 3, 3))


def test_attention_logits_rejects_bad_shapes():
    with pytest.raises(ValueError, match="g"):
        attention_logits(np.zeros((3, 4)), 0.0)  # not square
    with pytest.raises(ValueError, match="g"):
        attention_logits(np.zeros(3), np.zeros(()))  # not a matrix
    with pytest.raises(ValueError, match="b"):
        attention_logits(np.zeros((2, 3, 3)), np.zeros(3))  # batch mismatch
    with pytest.raises(ValueError, match="b"):
        attention_logits(np.zeros((3, 3)), np.zeros(1))  # b must be a scalar here


# --------------------------------------------------------------------------- attention


def _softmax_rows(G):
    E = np.exp(G - G.max(-1, keepdims=True))
    return E / E.sum(-1, keepdims=True)


def test_attention_linear_is_G_over_L():
    G = np.random.default_rng(2).normal(size=(5, 5))
    A = attention(G, "linear")
    assert isinstance(A, np.ndarray) and A.dtype == np.float64 and A.shape == (5, 5)
    np.testing.assert_allclose(A, G / 5, rtol=1e-15)


def test_attention_softmax_rows_are_distributions():
    G = 3 * np.random.default_rng(3).normal(size=(6, 6))
    A = attention(G, "softmax")
    assert A.shape == (6, 6) and A.dtype == np.float64
    assert np.all(A > 0)
    np.testing.assert_allclose(A.sum(-1), np.ones(6), rtol=0, atol=1e-14)
    # Independent computation with numpy.
    np.testing.assert_allclose(A, _softmax_rows(G), rtol=1e-13)


def test_attention_softmax_large_logits_are_stable():
    G = np.array([[1000.0, 0.0], [0.0, -1000.0]])
    A = attention(G, "softmax")
    np.testing.assert_allclose(A, [[1.0, 0.0], [1.0, 0.0]], atol=1e-300)


def test_bias_drops_out_of_softmax_but_not_linear():
    rng = np.random.default_rng(4)
    g = rng.normal(size=(5, 5))
    A1 = attention(attention_logits(g, np.float64(-2.0)), "softmax")
    A2 = attention(attention_logits(g, np.float64(3.5)), "softmax")
    np.testing.assert_allclose(A1, A2, rtol=1e-12)
    # Linear attention: b adds b/L to every entry.
    Al1 = attention(attention_logits(g, np.float64(-2.0)), "linear")
    Al2 = attention(attention_logits(g, np.float64(3.5)), "linear")
    np.testing.assert_allclose(Al2 - Al1, np.full((5, 5), 5.5 / 5), rtol=1e-12)


@pytest.mark.parametrize("kind", ["linear", "softmax"])
def test_attention_batched_matches_loop(kind):
    G = np.random.default_rng(5).normal(size=(3, 2, 4, 4))
    A = attention(G, kind)
    assert A.shape == G.shape
    for i in range(3):
        for j in range(2):
            np.testing.assert_allclose(A[i, j], attention(G[i, j], kind), rtol=1e-15)


@pytest.mark.parametrize("kind", ["linear", "softmax"])
def test_attention_torch_keeps_dtype_and_grad(kind):
    G = torch.randn(2, 3, 3, dtype=torch.float32, generator=torch.Generator().manual_seed(0), requires_grad=True)
    A = attention(G, kind)
    assert isinstance(A, torch.Tensor) and A.dtype == torch.float32 and A.requires_grad
    A.sum().backward()
    assert G.grad is not None and torch.isfinite(G.grad).all()
    if kind == "softmax":  # rows sum to 1 whatever G: zero gradient of the total
        torch.testing.assert_close(G.grad, torch.zeros_like(G.grad), atol=1e-6, rtol=0)
    else:
        torch.testing.assert_close(G.grad, torch.full_like(G.grad, 1 / 3))


@pytest.mark.parametrize("kind", ["relu", "Linear", None])
def test_attention_rejects_unknown_kind(kind):
    with pytest.raises(ValueError, match="kind"):
        attention(np.zeros((3, 3)), kind)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_attention_rejects_non_finite_G(bad):
    G = np.zeros((3, 3))
    G[1, 2] = bad
    with pytest.raises(ValueError, match="G"):
        attention(G, "softmax")
    with pytest.raises(ValueError, match="G"):
        attention(torch.as_tensor(G), "linear")


@pytest.mark.parametrize("shape", [(3, 4), (1, 1), (4,), (2, 3, 2)])
def test_attention_rejects_bad_shapes(shape):
    with pytest.raises(ValueError, match="G"):
        attention(np.zeros(shape), "linear")


# --------------------------------------------------------------------------- network_output


def test_network_output_is_A_X_W_per_sequence():
    rng = np.random.default_rng(6)
    P, L, V = 4, 5, 3
    X, _ = copy_task(P, L, V, rng)
    A, W = rng.normal(size=(L, L)), rng.normal(size=(V, V))
    F = network_output(X, A, W)
    assert isinstance(F, np.ndarray) and F.shape == (P, L, V) and F.dtype == np.float64
    for mu in range(P):
        np.testing.assert_allclose(F[mu], A @ X[mu] @ W, rtol=1e-13, atol=1e-14)


def test_network_output_batched_matches_loop():
    rng = np.random.default_rng(7)
    R, P, L, V = 3, 4, 5, 2
    X = np.stack([copy_task(P, L, V, rng)[0] for _ in range(R)])
    A, W = rng.normal(size=(R, L, L)), rng.normal(size=(R, V, V))
    F = network_output(X, A, W)
    assert F.shape == (R, P, L, V)
    for r in range(R):
        np.testing.assert_allclose(F[r], network_output(X[r], A[r], W[r]), rtol=1e-13, atol=1e-14)
    # Shared data, batched parameters: broadcasting over the run axis.
    F_shared = network_output(X[0], A, W)
    assert F_shared.shape == (R, P, L, V)
    for r in range(R):
        np.testing.assert_allclose(F_shared[r], network_output(X[0], A[r], W[r]), rtol=1e-13, atol=1e-14)


def test_network_output_perfect_copy_reproduces_target():
    rng = np.random.default_rng(8)
    for cyclic in (True, False):
        X, Y = copy_task(6, 4, 3, rng, cyclic=cyclic)
        np.testing.assert_array_equal(network_output(X, shift_matrix(4, cyclic), np.eye(3)), Y)


def test_network_output_torch_grad():
    X = torch.as_tensor(copy_task(3, 4, 2, np.random.default_rng(9))[0])
    A = torch.eye(4, dtype=torch.float64)
    W = torch.zeros(2, 2, dtype=torch.float64, requires_grad=True)
    F = network_output(X, A, W)
    assert isinstance(F, torch.Tensor) and F.requires_grad and F.dtype == torch.float64
    F.sum().backward()
    # d/dW_vw sum_{p,l,w'} (X W)_{p l w'} = sum_{p,l} X_{p l v}: the token counts.
    torch.testing.assert_close(W.grad, X.sum((0, 1))[:, None].expand(2, 2))


def test_network_output_rejects_bad_shapes():
    X = np.zeros((2, 4, 3))
    with pytest.raises(ValueError, match="X"):
        network_output(np.zeros((4, 3)), np.eye(4), np.eye(3))
    with pytest.raises(ValueError, match="A"):
        network_output(X, np.eye(5), np.eye(3))
    with pytest.raises(ValueError, match="A"):
        network_output(X, np.zeros((4, 5)), np.eye(3))
    with pytest.raises(ValueError, match="W"):
        network_output(X, np.eye(4), np.eye(2))
    with pytest.raises(ValueError, match="W"):
        network_output(X, np.eye(4), np.zeros((3, 2)))


# --------------------------------------------------------------------------- prior_energy


def _prior_by_hand(g, b, W, spec):
    return (
        np.sum(g * g) / (2 * spec.sigma_G**2)
        + b * b / (2 * spec.sigma_b**2)
        + np.sum(W * W) / (2 * spec.omega)
    )


def test_prior_energy_matches_hand_formula():
    rng = np.random.default_rng(10)
    spec = ModelSpec(L=4, V=3, sigma_G=0.7, sigma_b=2.0, omega=0.3)
    g, b, W = rng.normal(size=(4, 4)), np.float64(1.3), rng.normal(size=(3, 3))
    e = prior_energy(g, b, W, spec)
    assert np.shape(e) == ()
    np.testing.assert_allclose(e, _prior_by_hand(g, b, W, spec), rtol=1e-13)


def test_prior_energy_zero_at_origin_and_separable():
    spec = ModelSpec(L=3, V=2, sigma_G=2.0, sigma_b=3.0, omega=5.0)
    np.testing.assert_array_equal(prior_energy(np.zeros((3, 3)), np.float64(0.0), np.zeros((2, 2)), spec), 0.0)
    # A single unit entry in each group costs 1/(2 s^2) exactly.
    g = np.zeros((3, 3))
    g[0, 1] = 1.0
    W = np.zeros((2, 2))
    W[1, 0] = 1.0
    np.testing.assert_allclose(prior_energy(g, np.float64(0.0), np.zeros((2, 2)), spec), 1 / 8)
    np.testing.assert_allclose(prior_energy(np.zeros((3, 3)), np.float64(1.0), np.zeros((2, 2)), spec), 1 / 18)
    np.testing.assert_allclose(prior_energy(np.zeros((3, 3)), np.float64(0.0), W, spec), 1 / 10)


def test_prior_energy_batched_matches_loop():
    rng = np.random.default_rng(11)
    spec = ModelSpec(L=4, V=3, sigma_G=1.5, sigma_b=0.5, omega=2.0)
    g, b, W = rng.normal(size=(2, 3, 4, 4)), rng.normal(size=(2, 3)), rng.normal(size=(2, 3, 3, 3))
    e = prior_energy(g, b, W, spec)
    assert e.shape == (2, 3)
    for i in range(2):
        for j in range(3):
            np.testing.assert_allclose(e[i, j], _prior_by_hand(g[i, j], b[i, j], W[i, j], spec), rtol=1e-13)


def test_prior_energy_gradient_is_weight_decay():
    spec = ModelSpec(L=3, V=2, sigma_G=0.5, sigma_b=2.0, omega=4.0)
    gen = torch.Generator().manual_seed(0)
    g = torch.randn(3, 3, dtype=torch.float64, generator=gen, requires_grad=True)
    b = torch.randn((), dtype=torch.float64, generator=gen, requires_grad=True)
    W = torch.randn(2, 2, dtype=torch.float64, generator=gen, requires_grad=True)
    prior_energy(g, b, W, spec).backward()
    torch.testing.assert_close(g.grad, g.detach() / 0.25)
    torch.testing.assert_close(b.grad, b.detach() / 4.0)
    torch.testing.assert_close(W.grad, W.detach() / 4.0)


def test_prior_energy_rejects_bad_shapes():
    spec = ModelSpec(L=4, V=3)
    with pytest.raises(ValueError, match="g"):
        prior_energy(np.zeros((3, 3)), np.float64(0.0), np.zeros((3, 3)), spec)
    with pytest.raises(ValueError, match="W"):
        prior_energy(np.zeros((4, 4)), np.float64(0.0), np.zeros((4, 4)), spec)
    with pytest.raises(ValueError, match="b"):
        prior_energy(np.zeros((2, 4, 4)), np.zeros((2, 1)), np.zeros((2, 3, 3)), spec)
