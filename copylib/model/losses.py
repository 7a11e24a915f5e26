"""Losses of a predictor ``F = A X W`` on the copy task, and reference predictors.

The loss is the squared error per position, ``|f_l - y_l|^2`` averaged over
positions and sequences. Its population value (the test loss on infinitely many
fresh sequences) has a closed form, because for uniform i.i.d. one-hot rows
``E[X^T M X] = (tr M / V) I + ((1^T M 1 - tr M) / V^2) J``.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import torch

from ..arguments import check_finite, check_int, check_shape
from ..model.network import from_torch, to_torch
from ..model.statistics import sample_size, sum_squared_error, token_moment
from ..model.task import shift_matrix

__all__ = ["constant_predictor", "constant_predictor_loss", "empirical_loss", "expected_loss", "perfect_copy",
           "perfect_copy_loss", "uniform_pooling", "uniform_pooling_loss"]


def expected_loss(A: npt.ArrayLike | torch.Tensor, W: npt.ArrayLike | torch.Tensor, T: npt.ArrayLike | torch.Tensor) -> np.ndarray | torch.Tensor:
    """Population (test) loss per position of ``F = A X W`` for targets ``Y = T X``.

    A : ``(..., L, L)``; W : ``(..., V, V)``; T : ``(L, L)``. Returns shape ``(...)``.
    """
    as_numpy, (A, W, T) = to_torch(A, W, T, names=("A", "W", "T"))
    check_shape("A", A, (None, None))
    check_shape("W", W, (None, None))
    L, V = A.shape[-1], W.shape[-1]
    check_shape("A", A, (L, L))
    check_shape("W", W, (V, V))
    check_shape("T", T, (L, L), source="A")
    for name, t in (("A", A), ("W", W), ("T", T)):
        check_finite(name, t)
    T = T.to(A.dtype)
    At = A.transpose(-1, -2)
    quad = token_moment(At @ A, V)
    cross = token_moment(At @ T, V)
    const = token_moment(T.transpose(-1, -2) @ T, V)
    loss = (
        (W * (quad @ W)).sum((-1, -2))
        - 2 * (W * cross).sum((-1, -2))
        + torch.diagonal(const, dim1=-1, dim2=-2).sum(-1)
    ) / L
    return from_torch(as_numpy, loss)


def empirical_loss(A: npt.ArrayLike | torch.Tensor, W: npt.ArrayLike | torch.Tensor, C: npt.ArrayLike | torch.Tensor, T: npt.ArrayLike | torch.Tensor) -> np.ndarray | torch.Tensor:
    """Training loss per position from the co-occurrence tensor ``C``, shape ``(...)``."""
    as_numpy, (A, W, C, T) = to_torch(A, W, C, T, names=("A", "W", "C", "T"))
    P = sample_size(C)
    if not (P > 0).all():
        raise ValueError("C must come from at least one sequence (P >= 1)")
    return from_torch(as_numpy, sum_squared_error(A, W, C, T) / (P * A.shape[-1]))


def constant_predictor(L: int, V: int) -> tuple[np.ndarray, np.ndarray]:
    """``(A, W)`` predicting ``1/V`` for every token: any row-stochastic A with ``W = J/V``."""
    L, V = check_int("L", L, 2), check_int("V", V, 2)
    return np.full((L, L), 1.0 / L), np.full((V, V), 1.0 / V)


def uniform_pooling(L: int, V: int) -> tuple[np.ndarray, np.ndarray]:
    """``(A, W) = (J/L, I)``: the in-context unigram predictor (token frequencies in the sequence)."""
    L, V = check_int("L", L, 2), check_int("V", V, 2)
    return np.full((L, L), 1.0 / L), np.eye(V)


def perfect_copy(L: int, V: int, cyclic: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """``(A, W) = (T, I)``: attend to the previous token and copy it."""
    V = check_int("V", V, 2)
    return shift_matrix(L, cyclic), np.eye(V)


def constant_predictor_loss(V: int) -> float:
    """Exact test loss of the constant ``1/V`` predictor: ``1 - 1/V``."""
    V = check_int("V", V, 2)
    return 1.0 - 1.0 / V


def uniform_pooling_loss(L: int, V: int) -> float:
    """Exact test loss of uniform pooling on the cyclic task: ``(1 - 1/L)(1 - 1/V)``."""
    L, V = check_int("L", L, 2), check_int("V", V, 2)
    return (1.0 - 1.0 / L) * (1.0 - 1.0 / V)


def perfect_copy_loss() -> float:
    """Exact test loss of the perfect copy predictor on the cyclic task: 0."""
    return 0.0
