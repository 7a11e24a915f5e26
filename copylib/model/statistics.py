"""Sufficient statistics of a copy-task data set.

Everything the network's squared error (and the evidence with ``W`` integrated
out) needs from the data is the token co-occurrence tensor

    C[j, k] = sum_mu x_j^mu (x_k^mu)^T        shape (L, L, V, V).

With ``Phi`` the stacked rows of ``A X^mu`` and ``Y^mu = T X^mu``:

    Phi^T Phi = sum_jk (A^T A)_jk C[j, k]
    Phi^T Y   = sum_jk (A^T T)_jk C[j, k]
    tr Y^T Y  = sum_jk (T^T T)_jk tr C[j, k]

so one evaluation costs O(L^2 V^2) whatever the number of sequences ``P``.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import torch

from ..arguments import as_real_array, check_bool, check_finite, check_int, check_shape
from ..model.network import from_torch, to_torch

__all__ = ["BatchedReadoutMoments", "cooccurrence", "readout_moments", "sample_size", "sum_squared_error",
           "target_energy", "token_moment"]


def _check_cooccurrence_shape(C) -> None:
    """``C`` must be ``(..., L, L, V, V)``: square in both position and token axes."""
    check_shape("C", C, (None, None, None, None))
    if C.shape[-4] != C.shape[-3] or C.shape[-2] != C.shape[-1]:
        raise ValueError(f"C must have shape (..., L, L, V, V), got {tuple(C.shape)}")


def cooccurrence(X: npt.ArrayLike | torch.Tensor) -> np.ndarray | torch.Tensor:
    """Token co-occurrence ``C[..., l, m, a, b] = sum_mu X[..., mu, l, a] X[..., mu, m, b]``.

    X : ``(..., P, L, V)``. Returns ``(..., L, L, V, V)``.
    """
    as_numpy, (X,) = to_torch(X, names=("X",))
    check_shape("X", X, (None, None, None))
    check_finite("X", X)
    return from_torch(as_numpy, torch.einsum("...pla,...pmb->...lmab", X, X))


def sample_size(C: npt.ArrayLike | torch.Tensor) -> np.ndarray | torch.Tensor:
    """Number of sequences ``P`` behind a co-occurrence tensor, shape ``(...)``.

    Uses ``sum_l tr C[l, l] = P L`` (each position holds exactly one token).
    """
    as_numpy, (C,) = to_torch(C, names=("C",))
    _check_cooccurrence_shape(C)
    check_finite("C", C)
    L = C.shape[-3]
    P = torch.diagonal(torch.diagonal(C, dim1=-4, dim2=-3), dim1=-3, dim2=-2).sum((-1, -2)) / L
    return from_torch(as_numpy, P)


def readout_moments(A: npt.ArrayLike | torch.Tensor, C: npt.ArrayLike | torch.Tensor, T: npt.ArrayLike | torch.Tensor) -> tuple[np.ndarray | torch.Tensor, ...]:
    """The data moments seen by the readout: ``(Phi^T Phi, Phi^T Y, tr Y^T Y)``.

    A : ``(..., L, L)`` attention; C : ``(..., L, L, V, V)``; T : ``(L, L)`` target.
    Returns ``K (..., V, V)``, ``B (..., V, V)``, ``y2 (...)``.
    """
    as_numpy, (A, C, T) = to_torch(A, C, T, names=("A", "C", "T"))
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
    return tuple(from_torch(as_numpy, t) for t in (K, B, _target_energy(C, T)))


def _attention_moments(A, C, T):
    """``Phi^T Phi`` and ``Phi^T Y`` (torch, no checks)."""
    At = A.transpose(-1, -2)
    K = torch.einsum("...lm,...lmab->...ab", At @ A, C)
    B = torch.einsum("...lm,...lmab->...ab", At @ T, C)
    return K, B


def _target_energy(C, T):
    # trace over tokens first: a repeated-index einsum on C is ~10x slower
    return ((T.transpose(-1, -2) @ T) * torch.diagonal(C, dim1=-2, dim2=-1).sum(-1)).sum((-1, -2))


def target_energy(C: npt.ArrayLike | torch.Tensor, T: npt.ArrayLike | torch.Tensor) -> np.ndarray | torch.Tensor:
    """``tr Y^T Y = sum_mu |T X^mu|^2`` from the co-occurrence tensor, shape ``(...)``.

    It does not depend on the network; :func:`copylib.train_map <copylib.inference.map_training.train_map>` computes it once
    and passes it to :func:`sum_squared_error` at every step.
    """
    as_numpy, (C, T) = to_torch(C, T, names=("C", "T"))
    _check_cooccurrence_shape(C)
    L = C.shape[-3]
    if tuple(T.shape) != (L, L):
        raise ValueError(f"T must have shape ({L}, {L}) (L taken from C), got {tuple(T.shape)}")
    check_finite("C", C)
    check_finite("T", T)
    return from_torch(as_numpy, _target_energy(C, T.to(C.dtype)))


def sum_squared_error(A: npt.ArrayLike | torch.Tensor, W: npt.ArrayLike | torch.Tensor, C: npt.ArrayLike | torch.Tensor, T: npt.ArrayLike | torch.Tensor,
                      y2: npt.ArrayLike | torch.Tensor | None = None) -> np.ndarray | torch.Tensor:
    """``sum_mu |A X^mu W - T X^mu|^2`` from the sufficient statistics, shape ``(...)``.

    ``y2``: optional precomputed :func:`target_energy` ``(C, T)`` (it does not depend
    on ``A`` or ``W``; recomputing it dominates the cost of a training step).
    """
    as_numpy, (A, W, C, T) = to_torch(A, W, C, T, names=("A", "W", "C", "T"))
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
    return from_torch(as_numpy, sse)


def token_moment(M: npt.ArrayLike | torch.Tensor, V: int) -> np.ndarray | torch.Tensor:
    """Population mean ``E[X^T M X]`` over uniform i.i.d. one-hot rows, shape ``(..., V, V)``.

    ``E[X^T M X] = (tr M / V) I + ((1^T M 1 - tr M) / V^2) J``.
    """
    V = check_int("V", V, 2)
    as_numpy, (M,) = to_torch(M, names=("M",))
    check_shape("M", M, (None, None))
    if M.shape[-1] != M.shape[-2]:
        raise ValueError(f"M must be square in its last two dimensions, got {tuple(M.shape)}")
    check_finite("M", M)
    tr = torch.diagonal(M, dim1=-1, dim2=-2).sum(-1)
    tot = M.sum((-1, -2))
    eye = torch.eye(V, dtype=M.dtype)
    ones = torch.ones(V, V, dtype=M.dtype)
    E = (tr / V)[..., None, None] * eye + ((tot - tr) / V**2)[..., None, None] * ones
    return from_torch(as_numpy, E)


# --------------------------------------------------------------------------
# the readout moments of R attention matrices and their backward pass, without autograd
# --------------------------------------------------------------------------


def _repeat_block(C: torch.Tensor) -> int:
    """The ``k`` such that the runs of ``C (R, ...)`` come in consecutive blocks of ``k``
    identical data sets (1 if they do not)."""
    R = C.shape[0]
    k = 1
    while k < R and torch.equal(C[k], C[0]):
        k += 1
    if R % k or not all(torch.equal(C[i], C[i - i % k]) for i in range(R)):
        return 1
    return k


class BatchedReadoutMoments:
    """``K = Phi^T Phi``, ``B = Phi^T Y`` of ``R`` attention matrices, and the backward
    pass from ``(dK, dB)`` to ``dA``, for the samplers and Adam (float64, no checks).

    The batched, autograd-free form of :func:`readout_moments` for the copy task's
    target ``T = shift_matrix(L, cyclic)``; the step from ``dA`` on to the logits is the
    attention kind's ``backward`` (:class:`copylib.model.attention.AttentionKind`).

    ``K = sum_jk M1_jk C[j, k]`` with ``M1 = A^T A`` and ``B`` likewise with
    ``M2 = A^T T``: one batched product ``(R, 2, L^2) x (R, L^2, V^2)`` with the
    flattened co-occurrence tensor. Backwards, with ``D_k = sum_ab (dK or dB)_ab
    C[:, :, a, b]`` (one product ``(R, 2, V^2) x (R, V^2, L^2)``),

        dA = A (D_1 + D_1^T) + T D_2^T.

    At ``L = 32`` these two products cost the time it takes to read ``C``, so runs
    that share a data set (restarts, chains on one data set, an unbatched ``C``)
    are found once here and read ``C`` once for all of them. The target ``T`` is
    the shift of the copy task, applied by slicing: ``(A^T T)[l, m] = A[m + 1, l]``
    and ``(T X)[i, l] = X[i - 1, l]`` (without the wrap-around the last column /
    first row is zero).

    Parameters
    ----------
    C : floating-point tensor ``(L, L, V, V)`` (shared by all runs) or ``(R, L, L, V, V)``
        Co-occurrence tensor(s) (:func:`cooccurrence`).
    R : int >= 1
        Number of attention matrices per call.
    cyclic : bool
        The target ``T`` (as in :func:`copylib.model.task.shift_matrix`).

    The arguments are checked here, once; :meth:`moments` and :meth:`backward` run at
    every step of a sampler or of Adam and check nothing (``A``: ``(R, L, L)`` in the
    dtype of ``C``).
    """

    def __init__(self, C: torch.Tensor, R: int, cyclic: bool) -> None:
        R = check_int("R", R, 1)
        check_bool("cyclic", cyclic)
        if not isinstance(C, torch.Tensor) or not C.is_floating_point():
            raise TypeError(f"C must be a floating-point torch tensor, got {type(C).__name__}"
                            + (f" of dtype {C.dtype}" if isinstance(C, torch.Tensor) else ""))
        _check_cooccurrence_shape(C)
        if C.ndim not in (4, 5) or (C.ndim == 5 and C.shape[0] != R):
            raise ValueError(f"C must have shape (L, L, V, V) or ({R}, L, L, V, V) (R = {R}), got {tuple(C.shape)}")
        check_finite("C", C)
        L, V = C.shape[-3], C.shape[-1]
        self.R, self.L, self.V, self.cyclic = R, L, V, cyclic
        if C.ndim == 4:
            k, Cu = R, C[None]
        else:
            k = _repeat_block(C)
            Cu = C[::k]
        self.k, self.n_data = k, R // k
        self.Cf = Cu.reshape(self.n_data, L * L, V * V)
        self.CfT = self.Cf.transpose(1, 2).contiguous()  # the backward product reads it row by row
        # work buffers reused at every call; M[:, 1, :, L-1] stays 0 without the wrap-around
        self.M = torch.zeros(R, 2, L, L, dtype=C.dtype)
        self.AtA = torch.empty(R, L, L, dtype=C.dtype)
        self.N = torch.empty(R, 2, V, V, dtype=C.dtype)

    def moments(self, A: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``K, B`` (each ``(R, V, V)``) of the attention matrices ``A (R, L, L)``."""
        R, L, V, M = self.R, self.L, self.V, self.M
        torch.bmm(A.transpose(1, 2), A, out=self.AtA)
        M[:, 0].copy_(self.AtA)
        M[:, 1, :, : L - 1].copy_(A[:, 1:].transpose(1, 2))
        if self.cyclic:
            M[:, 1, :, L - 1].copy_(A[:, 0])
        # as (V^2 x L^2)(L^2 x 2k), not (2k x L^2)(L^2 x V^2): BLAS is about twice as fast
        # with the long L^2 axis contiguous in both operands and the narrow V^2 one outside
        KBt = torch.bmm(self.CfT, M.view(self.n_data, 2 * self.k, L * L).transpose(1, 2))
        KB = KBt.transpose(1, 2).reshape(R, 2, V, V)
        return KB[:, 0], KB[:, 1]

    def backward(self, A: torch.Tensor, dK: torch.Tensor, dB: torch.Tensor) -> torch.Tensor:
        """``dA (R, L, L)`` from ``dK, dB`` (the derivatives of a scalar by ``K`` and ``B``).

        ``dK`` must be symmetric (as the derivative of a function of the symmetric ``K``
        is): then ``D_1`` is symmetric too (``C[l, m, a, b] = C[m, l, b, a]``) and
        ``A (D_1 + D_1^T) = 2 A D_1``.
        """
        R, L, V, N = self.R, self.L, self.V, self.N
        N[:, 0].copy_(dK)
        N[:, 1].copy_(dB)
        Dm = torch.bmm(N.view(self.n_data, 2 * self.k, V * V), self.CfT).view(R, 2, L, L)
        D1, D2 = Dm[:, 0], Dm[:, 1]
        dA = torch.empty(R, L, L, dtype=A.dtype)
        dA[:, 1:] = D2[:, :, : L - 1].transpose(1, 2)
        if self.cyclic:
            dA[:, 0] = D2[:, :, L - 1]
        else:
            dA[:, 0] = 0.0
        return dA.baddbmm_(A, D1, alpha=2.0)

