"""Unit tests for copylib.model.losses: population/empirical losses and reference predictors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from copylib.model.losses import (
    constant_predictor,
    constant_predictor_loss,
    empirical_loss,
    expected_loss,
    perfect_copy,
    perfect_copy_loss,
    uniform_pooling,
    uniform_pooling_loss,
)
from copylib.model.network import attention, network_output
from copylib.model.statistics import cooccurrence
from copylib.model.task import copy_task, one_hot, shift_matrix


def _per_sequence_loss(X, Y, A, W):
    """Loss per position of each sequence, from a direct forward pass: shape (P,)."""
    L = X.shape[-2]
    return np.sum((network_output(X, A, W) - Y) ** 2, axis=(-1, -2)) / L


def _exact_expected_loss(A, W, T):
    """Population loss by enumerating all V^L equally likely sequences."""
    L, V = A.shape[0], W.shape[0]
    X = one_hot(np.array(list(itertools.product(range(V), repeat=L))), V)
    Y = np.einsum("lm,pmv->plv", T, X)
    return _per_sequence_loss(X, Y, A, W).mean()


def _random_predictor(L, V, kind, seed):
    rng = np.random.default_rng(seed)
    return attention(rng.normal(size=(L, L)), kind), rng.normal(size=(V, V))


# --------------------------------------------------------------------------- expected_loss


@pytest.mark.parametrize("cyclic", [True, False])
@pytest.mark.parametrize("kind", ["linear", "softmax"])
@pytest.mark.parametrize("L, V", [(2, 3), (3, 2), (4, 3)])
def test_expected_loss_matches_exhaustive_enumeration(L, V, kind, cyclic):
    A, W = _random_predictor(L, V, kind, seed=L + 10 * V)
    T = shift_matrix(L, cyclic)
    loss = expected_loss(A, W, T)
    assert np.shape(loss) == () and np.asarray(loss).dtype == np.float64
    np.testing.assert_allclose(loss, _exact_expected_loss(A, W, T), rtol=1e-11)


@pytest.mark.parametrize("cyclic", [True, False])
def test_expected_loss_matches_monte_carlo(cyclic):
    # Test loss on N fresh sequences; its standard error is std(per-sequence loss)/sqrt(N).
    # Require agreement within 5 standard errors.
    L, V, N = 6, 5, 20000
    A, W = _random_predictor(L, V, "softmax", seed=1)
    X, Y = copy_task(N, L, V, np.random.default_rng(2), cyclic=cyclic)
    per_seq = _per_sequence_loss(X, Y, A, W)
    se = per_seq.std(ddof=1) / np.sqrt(N)
    assert abs(expected_loss(A, W, shift_matrix(L, cyclic)) - per_seq.mean()) <= 5 * se


def test_expected_loss_batched_matches_loop():
    rng = np.random.default_rng(3)
    L, V = 4, 3
    A = attention(rng.normal(size=(2, 3, L, L)), "softmax")
    W = rng.normal(size=(2, 3, V, V))
    T = shift_matrix(L)
    loss = expected_loss(A, W, T)
    assert loss.shape == (2, 3)
    for i in range(2):
        for j in range(3):
            np.testing.assert_allclose(loss[i, j], expected_loss(A[i, j], W[i, j], T), rtol=1e-13)


def test_expected_loss_torch_keeps_grad():
    A, W = _random_predictor(4, 3, "softmax", seed=4)
    Wt = torch.as_tensor(W).requires_grad_()
    loss = expected_loss(torch.as_tensor(A), Wt, torch.as_tensor(shift_matrix(4)))
    assert isinstance(loss, torch.Tensor) and loss.requires_grad
    loss.backward()
    assert torch.isfinite(Wt.grad).all() and Wt.grad.abs().sum() > 0


def test_expected_loss_rejects_bad_shapes():
    A, W, T = np.eye(4), np.eye(3), shift_matrix(4)
    with pytest.raises(ValueError, match="A"):
        expected_loss(np.zeros((3, 4)), W, T)
    with pytest.raises(ValueError, match="W"):
        expected_loss(A, np.zeros((2, 3)), T)
    with pytest.raises(ValueError, match="T"):
        expected_loss(A, W, shift_matrix(3))


# --------------------------------------------------------------------------- empirical_loss


@pytest.mark.parametrize("cyclic", [True, False])
@pytest.mark.parametrize("kind", ["linear", "softmax"])
def test_empirical_loss_matches_direct_mean_squared_error(kind, cyclic):
    P, L, V = 15, 5, 3
    X, Y = copy_task(P, L, V, np.random.default_rng(5), cyclic=cyclic)
    A, W = _random_predictor(L, V, kind, seed=6)
    direct = np.mean(np.sum((network_output(X, A, W) - Y) ** 2, axis=-1))  # mean over (mu, l)
    loss = empirical_loss(A, W, cooccurrence(X), shift_matrix(L, cyclic))
    assert np.shape(loss) == ()
    np.testing.assert_allclose(loss, direct, rtol=1e-11)


def test_empirical_loss_batched_over_data_and_parameters():
    rng = np.random.default_rng(7)
    R, L, V = 3, 4, 3
    Ps = [2, 5, 11]
    data = [copy_task(P, L, V, rng) for P in Ps]
    C = np.stack([cooccurrence(X) for X, _ in data])
    A = attention(rng.normal(size=(R, L, L)), "softmax")
    W = rng.normal(size=(R, V, V))
    loss = empirical_loss(A, W, C, shift_matrix(L))
    assert loss.shape == (R,)
    for r, (X, Y) in enumerate(data):
        direct = np.mean(np.sum((network_output(X, A[r], W[r]) - Y) ** 2, axis=-1))
        np.testing.assert_allclose(loss[r], direct, rtol=1e-11)


# --------------------------------------------------------------------------- reference predictors


@pytest.mark.parametrize("L, V", [(2, 2), (5, 3), (8, 10)])
def test_reference_predictor_shapes(L, V):
    for A, W in (constant_predictor(L, V), uniform_pooling(L, V), perfect_copy(L, V)):
        assert A.shape == (L, L) and W.shape == (V, V)
        assert A.dtype == W.dtype == np.float64
        np.testing.assert_allclose(A.sum(-1), np.ones(L), rtol=1e-14)  # row-stochastic
    np.testing.assert_array_equal(perfect_copy(L, V, cyclic=False)[0], shift_matrix(L, cyclic=False))


def test_reference_predictor_outputs():
    L, V = 5, 4
    X, Y = copy_task(6, L, V, np.random.default_rng(8))
    # Constant predictor: 1/V for every token.
    np.testing.assert_allclose(network_output(X, *constant_predictor(L, V)), np.full(X.shape, 1 / V), rtol=1e-14)
    # Uniform pooling: the token frequencies of the sequence, at every position.
    F = network_output(X, *uniform_pooling(L, V))
    np.testing.assert_allclose(F, np.broadcast_to(X.mean(1, keepdims=True), X.shape), rtol=1e-14)
    # Perfect copy: exactly the target, cyclic or not.
    np.testing.assert_array_equal(network_output(X, *perfect_copy(L, V)), Y)
    Xn, Yn = copy_task(6, L, V, np.random.default_rng(9), cyclic=False)
    np.testing.assert_array_equal(network_output(Xn, *perfect_copy(L, V, cyclic=False)), Yn)


@pytest.mark.parametrize("L, V", [(2, 2), (3, 5), (6, 4), (9, 2)])
def test_closed_form_reference_losses(L, V):
    assert constant_predictor_loss(V) == pytest.approx(1 - 1 / V, rel=1e-15)
    assert uniform_pooling_loss(L, V) == pytest.approx((1 - 1 / L) * (1 - 1 / V), rel=1e-15)
    assert perfect_copy_loss() == 0.0
    # Ordering: copying beats pooling beats the constant.
    assert perfect_copy_loss() < uniform_pooling_loss(L, V) < constant_predictor_loss(V)


@pytest.mark.parametrize("L, V", [(2, 2), (3, 5), (6, 4), (9, 2)])
def test_expected_loss_of_reference_predictors(L, V):
    T = shift_matrix(L)
    np.testing.assert_allclose(expected_loss(*constant_predictor(L, V), T), constant_predictor_loss(V), rtol=1e-12)
    np.testing.assert_allclose(expected_loss(*uniform_pooling(L, V), T), uniform_pooling_loss(L, V), rtol=1e-12)
    np.testing.assert_allclose(expected_loss(*perfect_copy(L, V), T), perfect_copy_loss(), atol=1e-12)
    # Perfect copy is perfect on the non-cyclic task too.
    np.testing.assert_allclose(
        expected_loss(*perfect_copy(L, V, cyclic=False), shift_matrix(L, cyclic=False)), 0.0, atol=1e-12
    )


def test_reference_losses_against_monte_carlo_test_loss():
    L, V, N = 5, 3, 20000
    X, Y = copy_task(N, L, V, np.random.default_rng(10))
    C, T = cooccurrence(X), shift_matrix(L)
    # Constant predictor: |1/V - y|^2 = 1 - 1/V for every one-hot y, so exact on any sample.
    np.testing.assert_allclose(empirical_loss(*constant_predictor(L, V), C, T), constant_predictor_loss(V), rtol=1e-12)
    np.testing.assert_allclose(
        _per_sequence_loss(X, Y, *constant_predictor(L, V)), constant_predictor_loss(V), rtol=1e-12
    )
    # Perfect copy: zero on any sample.
    np.testing.assert_allclose(empirical_loss(*perfect_copy(L, V), C, T), 0.0, atol=1e-12)
    # Uniform pooling varies with the sequence: sample mean within 5 standard errors.
    per_seq = _per_sequence_loss(X, Y, *uniform_pooling(L, V))
    se = per_seq.std(ddof=1) / np.sqrt(N)
    assert abs(per_seq.mean() - uniform_pooling_loss(L, V)) <= 5 * se
    np.testing.assert_allclose(empirical_loss(*uniform_pooling(L, V), C, T), per_seq.mean(), rtol=1e-11)


@pytest.mark.parametrize("L, V, name", [(1, 3, "L"), (2.5, 3, "L"), (4, 1, "V"), (4, 2.5, "V")])
def test_reference_predictors_reject_bad_sizes(L, V, name):
    for f in (constant_predictor, uniform_pooling, perfect_copy):
        with pytest.raises(ValueError, match=name):
            f(L, V)
    with pytest.raises(ValueError, match=name):
        uniform_pooling_loss(L, V)


@pytest.mark.parametrize("V", [1, 0, 2.5])
def test_constant_predictor_loss_rejects_bad_V(V):
    with pytest.raises(ValueError, match="V"):
        constant_predictor_loss(V)
