"""Unit tests for copylib.model.task: target matrix, token sampling, one-hot, copy task."""

from __future__ import annotations

import numpy as np
import pytest

from copylib.model.task import copy_task, one_hot, sample_tokens, shift_matrix

# --------------------------------------------------------------------------- shift_matrix


@pytest.mark.parametrize("L", [2, 3, 7])
def test_shift_matrix_cyclic_is_the_cyclic_shift(L):
    T = shift_matrix(L)
    assert T.shape == (L, L) and T.dtype == np.float64
    expected = np.zeros((L, L))
    for l in range(L):
        expected[l, (l - 1) % L] = 1.0
    np.testing.assert_array_equal(T, expected)
    # A permutation matrix: T^T T = I, and T^L = I.
    np.testing.assert_array_equal(T.T @ T, np.eye(L))
    np.testing.assert_array_equal(np.linalg.matrix_power(T, L), np.eye(L))


@pytest.mark.parametrize("L", [2, 3, 7])
def test_shift_matrix_noncyclic_drops_the_wraparound(L):
    T = shift_matrix(L, cyclic=False)
    assert T.shape == (L, L) and T.dtype == np.float64
    expected = np.zeros((L, L))
    for l in range(1, L):
        expected[l, l - 1] = 1.0
    np.testing.assert_array_equal(T, expected)
    assert not T[0].any()  # position 1 (row 0) has no previous token
    np.testing.assert_array_equal(shift_matrix(L, cyclic=True) - T, np.eye(L)[[0]].T @ np.eye(L)[[L - 1]])
    # Nilpotent: shifting L times pushes everything out.
    np.testing.assert_array_equal(np.linalg.matrix_power(T, L), np.zeros((L, L)))


def test_shift_matrix_applied_to_a_sequence_copies_the_previous_token():
    x = np.arange(5.0)[:, None]  # column "sequence" 0..4
    np.testing.assert_array_equal((shift_matrix(5) @ x).ravel(), [4, 0, 1, 2, 3])
    np.testing.assert_array_equal((shift_matrix(5, cyclic=False) @ x).ravel(), [0, 0, 1, 2, 3])


@pytest.mark.parametrize("L", [1, 0, -3])
def test_shift_matrix_rejects_small_L(L):
    with pytest.raises(ValueError, match="L"):
        shift_matrix(L)


def test_shift_matrix_rejects_non_integer_L():
    with pytest.raises(ValueError, match="L"):
        shift_matrix(2.5)
    with pytest.raises(TypeError, match="L"):
        shift_matrix("4")
    with pytest.raises(TypeError, match="L"):
        shift_matrix(True)


def test_shift_matrix_accepts_numpy_integer():
    np.testing.assert_array_equal(shift_matrix(np.int64(4)), shift_matrix(4))


# --------------------------------------------------------------------------- sample_tokens


def test_sample_tokens_shape_dtype_range():
    tok = sample_tokens(50, 6, 3, np.random.default_rng(0))
    assert tok.shape == (50, 6)
    assert np.issubdtype(tok.dtype, np.integer)
    assert tok.min() >= 0 and tok.max() <= 2


def test_sample_tokens_is_uniform():
    # Each of V symbols has frequency 1/V; with n draws the count is Binomial(n, 1/V),
    # standard error sqrt(n p (1-p)). Allow 5 standard errors.
    P, L, V = 4000, 5, 4
    tok = sample_tokens(P, L, V, np.random.default_rng(1))
    n, p = P * L, 1.0 / V
    counts = np.bincount(tok.ravel(), minlength=V)
    assert counts.size == V
    assert np.all(np.abs(counts - n * p) <= 5 * np.sqrt(n * p * (1 - p)))


def test_sample_tokens_same_seed_same_draw_and_different_seed_different():
    a = sample_tokens(10, 4, 5, np.random.default_rng(123))
    b = sample_tokens(10, 4, 5, np.random.default_rng(123))
    c = sample_tokens(10, 4, 5, np.random.default_rng(124))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize(
    "P, L, V, name",
    [(0, 4, 3, "P"), (-1, 4, 3, "P"), (3, 1, 3, "L"), (3, 4, 1, "V"), (3, 4, 0, "V")],
)
def test_sample_tokens_rejects_bad_sizes(P, L, V, name):
    with pytest.raises(ValueError, match=name):
        sample_tokens(P, L, V, np.random.default_rng(0))


@pytest.mark.parametrize(
    "P, L, V, name", [(2.5, 4, 3, "P"), (3, 4.0, 3, "L"), (3, 4, 2.5, "V")]
)
def test_sample_tokens_rejects_non_integer_sizes(P, L, V, name):
    with pytest.raises(ValueError, match=name):
        sample_tokens(P, L, V, np.random.default_rng(0))


@pytest.mark.parametrize("rng", [None, 0, np.random.RandomState(0), "seed"])
def test_sample_tokens_requires_numpy_generator(rng):
    with pytest.raises(TypeError, match="rng"):
        sample_tokens(3, 4, 3, rng)


# --------------------------------------------------------------------------- one_hot


def test_one_hot_basic():
    tokens = np.array([[0, 2, 1], [1, 1, 0]])
    X = one_hot(tokens, 3)
    assert X.shape == (2, 3, 3) and X.dtype == np.float64
    for p in range(2):
        for l in range(3):
            expected = np.zeros(3)
            expected[tokens[p, l]] = 1.0
            np.testing.assert_array_equal(X[p, l], expected)
    np.testing.assert_array_equal(X.sum(-1), np.ones((2, 3)))
    np.testing.assert_array_equal(X.argmax(-1), tokens)


def test_one_hot_arbitrary_leading_shape_and_empty():
    tokens = np.random.default_rng(0).integers(0, 4, size=(2, 3, 5))
    X = one_hot(tokens, 4)
    assert X.shape == (2, 3, 5, 4)
    np.testing.assert_array_equal(X.sum(-1), 1.0)
    assert one_hot(np.zeros((0, 3), dtype=int), 4).shape == (0, 3, 4)


def test_one_hot_accepts_lists():
    np.testing.assert_array_equal(one_hot([1, 0], 2), [[0.0, 1.0], [1.0, 0.0]])


def test_one_hot_rejects_out_of_range_tokens():
    with pytest.raises(ValueError, match="tokens"):
        one_hot(np.array([0, 3]), 3)
    with pytest.raises(ValueError, match="tokens"):
        one_hot(np.array([-1, 0]), 3)


def test_one_hot_rejects_float_tokens():
    with pytest.raises(TypeError, match="tokens"):
        one_hot(np.array([0.0, 1.0]), 3)


@pytest.mark.parametrize("V", [1, 0, 2.5])
def test_one_hot_rejects_bad_V(V):
    with pytest.raises(ValueError, match="V"):
        one_hot(np.array([0, 0]), V)


# --------------------------------------------------------------------------- copy_task


@pytest.mark.parametrize("cyclic", [True, False])
def test_copy_task_shapes_one_hot_and_target(cyclic):
    P, L, V = 7, 5, 4
    X, Y = copy_task(P, L, V, np.random.default_rng(0), cyclic=cyclic)
    assert X.shape == Y.shape == (P, L, V)
    assert X.dtype == Y.dtype == np.float64
    # X is one-hot: entries in {0, 1}, rows sum to 1.
    assert set(np.unique(X)) <= {0.0, 1.0}
    np.testing.assert_array_equal(X.sum(-1), np.ones((P, L)))
    # Y = T X, checked sequence by sequence with an explicit matrix product.
    T = shift_matrix(L, cyclic)
    for mu in range(P):
        np.testing.assert_array_equal(Y[mu], T @ X[mu])
    # ... and element-wise: y_l = x_{l-1}; y_0 = x_{L-1} (cyclic) or 0.
    np.testing.assert_array_equal(Y[:, 1:], X[:, :-1])
    np.testing.assert_array_equal(Y[:, 0], X[:, -1] if cyclic else np.zeros((P, V)))


def test_copy_task_matches_sample_tokens_with_same_seed():
    X, _ = copy_task(6, 4, 3, np.random.default_rng(5))
    tok = sample_tokens(6, 4, 3, np.random.default_rng(5))
    np.testing.assert_array_equal(X, one_hot(tok, 3))


def test_copy_task_same_seed_identical_different_seed_different():
    X1, Y1 = copy_task(20, 6, 5, np.random.default_rng(123))
    X2, Y2 = copy_task(20, 6, 5, np.random.default_rng(123))
    X3, _ = copy_task(20, 6, 5, np.random.default_rng(321))
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(Y1, Y2)
    assert not np.array_equal(X1, X3)


@pytest.mark.parametrize(
    "P, L, V, name",
    [(0, 4, 3, "P"), (2.5, 4, 3, "P"), (3, 1, 3, "L"), (3, 2.5, 3, "L"), (3, 4, 1, "V"), (3, 4, 2.5, "V")],
)
def test_copy_task_rejects_bad_sizes(P, L, V, name):
    with pytest.raises(ValueError, match=name):
        copy_task(P, L, V, np.random.default_rng(0))


def test_copy_task_requires_numpy_generator():
    with pytest.raises(TypeError, match="rng"):
        copy_task(3, 4, 3, 42)
