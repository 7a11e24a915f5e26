"""Sufficient statistics of a copy-task data set.

Everything the network's squared error (and the evidence with ``W`` integrated
out) needs from the data is the token co-occurrence tensor

    C[l, m] = sum_mu x_l^mu (x_m^mu)^T        shape (L, L, V, V).

With ``Phi`` the stacked rows of ``A X^mu`` and ``Y^mu = T X^mu``:

    Phi^T Phi = sum_lm (A^T A)_lm C[l, m]
    Phi^T Y   = sum_lm (A^T T)_lm C[l, m]
    tr Y^T Y  = sum_lm (T^T T)_lm tr C[l, m]

so one evaluation costs O(L^2 V^2) whatever the number of sequences ``P``.
"""

from __future__ import annotations

import numpy as np
import torch

from ._validation import as_real_array, check_finite, check_int, check_shape
from .model import _back, _to_torch


def _check_cooccurrence_shape(C) -> None:
    """``C`` must be ``(..., L, L, V, V)``: square in both position and token axes."""
    check_shape("C", C, (None, None, None, None))
    if C.shape[-4] != C.shape[-3] or C.shape[-2] != C.shape[-1]:
        raise ValueError(f"C must have shape (..., L, L, V, V), got {tuple(C.shape)}")


def cooccurrence(X):
    """Token co-occurrence ``C[..., l, m, a, b] = sum_mu X[..., mu, l, a] X[..., mu, m, b]``.

    X : ``(..., P, L, V)``. Returns ``(..., L, L, V, V)``.
    """
    as_numpy, (X,) = _to_torch(X, names=("X",))
    check_shape("X", X, (None, None, None))
    check_finite("X", X)
    return _back(as_numpy, torch.einsum("...pla,...pmb->...lmab", X, X))


def sample_size(C):
    """Number of sequences ``P`` behind a co-occurrence tensor, shape ``(...)``.

    Uses ``sum_l tr C[l, l] = P L`` (each position holds exactly one token).
    """
    as_numpy, (C,) = _to_torch(C, names=("C",))
    _check_cooccurrence_shape(C)
    check_finite("C", C)
    L = C.shape[-3]
    P = torch.diagonal(torch.diagonal(C, dim1=-4, dim2=-3), dim1=-3, dim2=-2).sum((-1, -2)) / L
    return _back(as_numpy, P)


def readout_moments(A, C, T):
    """The data moments seen by the readout: ``(Phi^T Phi, Phi^T Y, tr Y^T Y)``.

    A : ``(..., L, L)`` attention; C : ``(..., L, L, V, V)``; T : ``(L, L)`` target.
    Returns ``K (..., V, V)``, ``B (..., V, V)``, ``y2 (...)``.
    """
    as_numpy, (A, C, T) = _to_torch(A, C, T, names=("A", "C", "T"))
    check_shape("A", A, (None, None))
    L = A.shape[-1]
    check_shape("A", A, (L, L))
    check_shape("C", C, (L, L, None, None), source="A")
    _check_cooccurrence_shape(C)
    if tuple(T.shape) != (L, L):
        raise ValueError(f"T must have shape ({L}, {L}) (L taken from A), got {tuple(T.shape)}")
    for name, t in (("A", A), ("C", C), ("T", T)):
        check_finite(name, t)
    T = T.to(A.dtype)
    C = C.to(A.dtype)
    K, B = _attention_moments(A, C, T)
    return tuple(_back(as_numpy, t) for t in (K, B, _target_energy(C, T)))


def _attention_moments(A, C, T):
    """``Phi^T Phi`` and ``Phi^T Y`` (torch, no checks)."""
    At = A.transpose(-1, -2)
    K = torch.einsum("...lm,...lmab->...ab", At @ A, C)
    B = torch.einsum("...lm,...lmab->...ab", At @ T, C)
    return K, B


def _target_energy(C, T):
    # trace over tokens first: a repeated-index einsum on C is ~10x slower
    return ((T.transpose(-1, -2) @ T) * torch.diagonal(C, dim1=-2, dim2=-1).sum(-1)).sum((-1, -2))


def target_energy(C, T):
    """``tr Y^T Y = sum_mu |T X^mu|^2`` from the co-occurrence tensor, shape ``(...)``.

    It does not depend on the network; :func:`copylib.train_map` computes it once
    and passes it to :func:`sum_squared_error` at every step.
    """
    as_numpy, (C, T) = _to_torch(C, T, names=("C", "T"))
    _check_cooccurrence_shape(C)
    L = C.shape[-3]
    if tuple(T.shape) != (L, L):
        raise ValueError(f"T must have shape ({L}, {L}) (L taken from C), got {tuple(T.shape)}")
    check_finite("C", C)
    check_finite("T", T)
    return _back(as_numpy, _target_energy(C, T.to(C.dtype)))


def sum_squared_error(A, W, C, T, y2=None):
    """``sum_mu |A X^mu W - T X^mu|^2`` from the sufficient statistics, shape ``(...)``.

    ``y2``: optional precomputed :func:`target_energy` ``(C, T)`` (it does not depend
    on ``A`` or ``W``; recomputing it dominates the cost of a training step).
    """
    as_numpy, (A, W, C, T) = _to_torch(A, W, C, T, names=("A", "W", "C", "T"))
    _check_cooccurrence_shape(C)
    V = C.shape[-1]
    check_shape("W", W, (V, V), source="C")
    check_finite("W", W)
    if y2 is None:
        K, B, y2 = readout_moments(A, C, T)
    else:
        check_shape("A", A, (None, None))
        L = A.shape[-1]
        check_shape("A", A, (L, L))
        check_shape("C", C, (L, L, V, V), source="A and C")
        if tuple(T.shape) != (L, L):
            raise ValueError(f"T must have shape ({L}, {L}) (L taken from A), got {tuple(T.shape)}")
        for name, t in (("A", A), ("C", C), ("T", T)):
            check_finite(name, t)
        K, B = _attention_moments(A, C.to(A.dtype), T.to(A.dtype))
        if not isinstance(y2, torch.Tensor):
            y2 = torch.as_tensor(as_real_array("y2", y2))
        check_finite("y2", y2)
        y2 = y2.to(A.dtype)
    sse = (W * (K @ W)).sum((-1, -2)) - 2 * (W * B).sum((-1, -2)) + y2
    return _back(as_numpy, sse)


def token_moment(M, V: int):
    """Population mean ``E[X^T M X]`` over uniform i.i.d. one-hot rows, shape ``(..., V, V)``.

    ``E[X^T M X] = (tr M / V) I + ((1^T M 1 - tr M) / V^2) J``.
    """
    V = check_int("V", V, 2)
    as_numpy, (M,) = _to_torch(M, names=("M",))
    check_shape("M", M, (None, None))
    if M.shape[-1] != M.shape[-2]:
        raise ValueError(f"M must be square in its last two dimensions, got {tuple(M.shape)}")
    check_finite("M", M)
    tr = torch.diagonal(M, dim1=-1, dim2=-2).sum(-1)
    tot = M.sum((-1, -2))
    eye = torch.eye(V, dtype=M.dtype)
    ones = torch.ones(V, V, dtype=M.dtype)
    E = (tr / V)[..., None, None] * eye + ((tot - tr) / V**2)[..., None, None] * ones
    return _back(as_numpy, E)
