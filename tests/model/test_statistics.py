"""Unit tests for copylib.model.statistics: co-occurrence tensor and the quantities built on it."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from copylib.model.network import attention, network_output
from copylib.model.statistics import cooccurrence, readout_moments, sample_size, sum_squared_error, token_moment
from copylib.model.task import copy_task, one_hot, shift_matrix


def _data(P=9, L=4, V=3, seed=0, cyclic=True):
    return copy_task(P, L, V, np.random.default_rng(seed), cyclic=cyclic)


def _cooccurrence_by_loop(X):
    P, L, V = X.shape
    C = np.zeros((L, L, V, V))
    for mu in range(P):
        for l in range(L):
            for m in range(L):
                C[l, m] += np.outer(X[mu, l], X[mu, m])
    return C


# --------------------------------------------------------------------------- cooccurrence


def test_cooccurrence_matches_explicit_sum_of_outer_products():
    X, _ = _data()
    C = cooccurrence(X)
    assert isinstance(C, np.ndarray) and C.shape == (4, 4, 3, 3) and C.dtype == np.float64
    np.testing.assert_array_equal(C, _cooccurrence_by_loop(X))


def test_cooccurrence_invariants():
    P, L, V = 11, 5, 4
    X, _ = _data(P, L, V, seed=1)
    C = cooccurrence(X)
    # Symmetry C[l, m] = C[m, l]^T.
    np.testing.assert_array_equal(C, C.transpose(1, 0, 3, 2))
    # sum_l tr C[l, l] = P L (one token per position).
    assert sum(np.trace(C[l, l]) for l in range(L)) == P * L
    # Each block counts P pairs of tokens.
    np.testing.assert_array_equal(C.sum((-1, -2)), np.full((L, L), P))
    # Diagonal blocks are diagonal and hold the token counts at position l.
    for l in range(L):
        np.testing.assert_array_equal(C[l, l], np.diag(X[:, l].sum(0)))
    # Non-negative integer counts.
    assert np.all(C >= 0) and np.array_equal(C, np.round(C))


def test_cooccurrence_is_additive_over_sequences():
    X, _ = _data(P=10, seed=2)
    np.testing.assert_array_equal(cooccurrence(X), cooccurrence(X[:3]) + cooccurrence(X[3:]))


def test_cooccurrence_batched_matches_loop():
    rng = np.random.default_rng(3)
    X = np.stack([copy_task(6, 4, 3, rng)[0] for _ in range(3)])
    C = cooccurrence(X)
    assert C.shape == (3, 4, 4, 3, 3)
    for r in range(3):
        np.testing.assert_array_equal(C[r], cooccurrence(X[r]))


def test_cooccurrence_torch_input_returns_tensor():
    X, _ = _data(seed=4)
    C = cooccurrence(torch.as_tensor(X))
    assert isinstance(C, torch.Tensor) and C.dtype == torch.float64
    np.testing.assert_array_equal(C.numpy(), cooccurrence(X))


def test_cooccurrence_rejects_bad_input():
    with pytest.raises(ValueError, match="X"):
        cooccurrence(np.zeros((4, 3)))
    X, _ = _data()
    X[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="X"):
        cooccurrence(X)
    X[0, 0, 0] = np.inf
    with pytest.raises(ValueError, match="X"):
        cooccurrence(X)


# --------------------------------------------------------------------------- sample_size


@pytest.mark.parametrize("P, L, V", [(1, 2, 2), (7, 4, 3), (25, 6, 5)])
def test_sample_size_recovers_P(P, L, V):
    X, _ = _data(P, L, V, seed=P)
    assert sample_size(cooccurrence(X)) == P


def test_sample_size_batched_and_empty():
    rng = np.random.default_rng(5)
    Ps = [1, 4, 9]
    C = np.stack([cooccurrence(copy_task(P, 3, 2, rng)[0]) for P in Ps])
    np.testing.assert_array_equal(sample_size(C), Ps)
    assert sample_size(np.zeros((3, 3, 2, 2))) == 0
    Ct = torch.as_tensor(C)
    assert isinstance(sample_size(Ct), torch.Tensor)


@pytest.mark.parametrize("shape", [(3, 3), (3, 3, 2), (4, 3, 2, 2), (3, 3, 2, 4)])
def test_sample_size_rejects_bad_shapes(shape):
    with pytest.raises(ValueError, match="C"):
        sample_size(np.zeros(shape))


# --------------------------------------------------------------------------- readout_moments


def _stacked(X, Y, A):
    """Phi (P L x V): the rows of A X^mu stacked over mu; likewise Y."""
    Phi = np.concatenate([A @ X[mu] for mu in range(X.shape[0])], axis=0)
    Ys = np.concatenate(list(Y), axis=0)
    return Phi, Ys


@pytest.mark.parametrize("cyclic", [True, False])
@pytest.mark.parametrize("kind", ["linear", "softmax"])
def test_readout_moments_match_stacked_design_matrix(cyclic, kind):
    P, L, V = 8, 5, 3
    X, Y = _data(P, L, V, seed=6, cyclic=cyclic)
    A = attention(np.random.default_rng(7).normal(size=(L, L)), kind)
    T = shift_matrix(L, cyclic)
    K, B, y2 = readout_moments(A, cooccurrence(X), T)
    Phi, Ys = _stacked(X, Y, A)
    assert K.shape == B.shape == (V, V) and np.shape(y2) == ()
    np.testing.assert_allclose(K, Phi.T @ Phi, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(B, Phi.T @ Ys, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(y2, np.trace(Ys.T @ Ys), rtol=1e-12)
    # Every target row is one-hot except position 1 (row 0) when non-cyclic.
    assert y2 == P * (L if cyclic else L - 1)
    np.testing.assert_allclose(K, K.T, rtol=1e-12, atol=1e-12)


def test_readout_moments_batched_matches_loop():
    rng = np.random.default_rng(8)
    R, L, V = 3, 4, 3
    C = np.stack([cooccurrence(copy_task(5, L, V, rng)[0]) for _ in range(R)])
    A = attention(rng.normal(size=(R, L, L)), "softmax")
    T = shift_matrix(L)
    K, B, y2 = readout_moments(A, C, T)
    assert K.shape == B.shape == (R, V, V) and y2.shape == (R,)
    for r in range(R):
        Kr, Br, y2r = readout_moments(A[r], C[r], T)
        np.testing.assert_allclose(K[r], Kr, rtol=1e-13)
        np.testing.assert_allclose(B[r], Br, rtol=1e-13)
        np.testing.assert_allclose(y2[r], y2r, rtol=1e-13)
    # One data set shared by batched attention.
    K2, _, _ = readout_moments(A, C[0], T)
    for r in range(R):
        np.testing.assert_allclose(K2[r], readout_moments(A[r], C[0], T)[0], rtol=1e-13)


def test_readout_moments_rejects_bad_shapes():
    C = cooccurrence(_data(P=3, L=4, V=3)[0])
    A, T = np.eye(4), shift_matrix(4)
    with pytest.raises(ValueError, match="A"):
        readout_moments(np.zeros((4, 3)), C, T)
    with pytest.raises(ValueError, match="C"):
        readout_moments(np.eye(5), C, shift_matrix(5))
    with pytest.raises(ValueError, match="C"):
        readout_moments(A, C[..., :2], T)
    with pytest.raises(ValueError, match="T"):
        readout_moments(A, C, shift_matrix(3))
    with pytest.raises(ValueError, match="T"):
        readout_moments(A, C, np.stack([T, T]))


# --------------------------------------------------------------------------- sum_squared_error


@pytest.mark.parametrize("cyclic", [True, False])
@pytest.mark.parametrize("kind", ["linear", "softmax"])
def test_sum_squared_error_matches_direct_forward_pass(cyclic, kind):
    rng = np.random.default_rng(9)
    P, L, V = 12, 5, 4
    X, Y = copy_task(P, L, V, rng, cyclic=cyclic)
    A = attention(rng.normal(size=(L, L)), kind)
    W = rng.normal(size=(V, V))
    direct = np.sum((network_output(X, A, W) - Y) ** 2)
    sse = sum_squared_error(A, W, cooccurrence(X), shift_matrix(L, cyclic))
    assert np.shape(sse) == ()
    np.testing.assert_allclose(sse, direct, rtol=1e-11)


def test_sum_squared_error_zero_for_perfect_copy():
    X, _ = _data(P=10, L=4, V=3, seed=10)
    T = shift_matrix(4)
    np.testing.assert_allclose(sum_squared_error(T, np.eye(3), cooccurrence(X), T), 0.0, atol=1e-12)


def test_sum_squared_error_batched_matches_loop():
    rng = np.random.default_rng(11)
    R, P, L, V = 4, 6, 3, 2
    X = np.stack([copy_task(P, L, V, rng)[0] for _ in range(R)])
    Y = np.einsum("lm,rpmv->rplv", shift_matrix(L), X)
    A = attention(rng.normal(size=(R, L, L)), "softmax")
    W = rng.normal(size=(R, V, V))
    sse = sum_squared_error(A, W, cooccurrence(X), shift_matrix(L))
    assert sse.shape == (R,)
    for r in range(R):
        direct = np.sum((network_output(X[r], A[r], W[r]) - Y[r]) ** 2)
        np.testing.assert_allclose(sse[r], direct, rtol=1e-11)


def test_sum_squared_error_torch_gradient_matches_direct():
    rng = np.random.default_rng(12)
    X, Y = _data(P=7, L=4, V=3, seed=13)
    A = torch.as_tensor(attention(rng.normal(size=(4, 4)), "softmax"))
    W1 = torch.as_tensor(rng.normal(size=(3, 3)), dtype=torch.float64).requires_grad_()
    W2 = W1.detach().clone().requires_grad_()
    sum_squared_error(A, W1, torch.as_tensor(cooccurrence(X)), torch.as_tensor(shift_matrix(4))).backward()
    ((network_output(torch.as_tensor(X), A, W2) - torch.as_tensor(Y)) ** 2).sum().backward()
    torch.testing.assert_close(W1.grad, W2.grad, rtol=1e-10, atol=1e-10)


def test_sum_squared_error_rejects_bad_W():
    C = cooccurrence(_data(P=3, L=4, V=3)[0])
    T = shift_matrix(4)
    for W in (np.ones((3, 1)), np.ones((2, 2)), np.ones(3)):
        with pytest.raises(ValueError, match="W"):
            sum_squared_error(T, W, C, T)


# --------------------------------------------------------------------------- token_moment


def _exact_token_moment(M, V):
    """E[X^T M X] by enumerating all V^L equally likely sequences."""
    L = M.shape[0]
    E = np.zeros((V, V))
    for seq in itertools.product(range(V), repeat=L):
        X = one_hot(np.array(seq), V)
        E += X.T @ M @ X
    return E / V**L


@pytest.mark.parametrize("L, V", [(2, 2), (3, 3), (4, 2)])
def test_token_moment_matches_exhaustive_enumeration(L, V):
    M = np.random.default_rng(L * 10 + V).normal(size=(L, L))
    E = token_moment(M, V)
    assert E.shape == (V, V) and E.dtype == np.float64
    np.testing.assert_allclose(E, _exact_token_moment(M, V), rtol=1e-12, atol=1e-14)


def test_token_moment_matches_monte_carlo():
    # N sampled sequences; each entry of the sample mean of X^T M X has standard error
    # std / sqrt(N). Require agreement within 5 standard errors (plus round-off).
    L, V, N = 5, 4, 20000
    rng = np.random.default_rng(14)
    M = rng.normal(size=(L, L))
    X, _ = copy_task(N, L, V, rng)
    samples = np.einsum("nla,lm,nmb->nab", X, M, X)
    mean, se = samples.mean(0), samples.std(0, ddof=1) / np.sqrt(N)
    assert np.all(np.abs(token_moment(M, V) - mean) <= 5 * se + 1e-12)


def test_token_moment_batched_and_torch():
    rng = np.random.default_rng(15)
    M = rng.normal(size=(2, 3, 4, 4))
    E = token_moment(M, 3)
    assert E.shape == (2, 3, 3, 3)
    for i in range(2):
        for j in range(3):
            np.testing.assert_allclose(E[i, j], token_moment(M[i, j], 3), rtol=1e-14)
    Et = token_moment(torch.as_tensor(M, dtype=torch.float32), 3)
    assert isinstance(Et, torch.Tensor) and Et.dtype == torch.float32
    np.testing.assert_allclose(Et.numpy(), E, rtol=1e-5)


def test_token_moment_rejects_bad_input():
    with pytest.raises(ValueError, match="M"):
        token_moment(np.zeros((3, 4)), 3)
    with pytest.raises(ValueError, match="M"):
        token_moment(np.zeros(3), 3)
    for V in (1, 0, 2.5):
        with pytest.raises(ValueError, match="V"):
            token_moment(np.eye(3), V)


def test_sum_squared_error_with_precomputed_target_energy():
    """Passing tr Y^T Y precomputed gives the same SSE (and the value is tr Y^T Y of the data)."""
    import copylib as cl

    rng = np.random.default_rng(11)
    X, Y = cl.copy_task(30, 6, 3, rng)
    C = cl.cooccurrence(X)
    T = cl.shift_matrix(6)
    y2 = cl.target_energy(C, T)
    assert y2 == pytest.approx((Y**2).sum(), rel=1e-14)
    A, W = rng.normal(size=(6, 6)), rng.normal(size=(3, 3))
    assert cl.sum_squared_error(A, W, C, T, y2=y2) == pytest.approx(cl.sum_squared_error(A, W, C, T), rel=1e-14)
    with pytest.raises(ValueError, match="T"):
        cl.target_energy(C, np.eye(5))
