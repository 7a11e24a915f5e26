"""The induction task and a minimal two-layer attention-only network for it.

Task. A sequence of ``L`` i.i.d. uniform tokens over ``V`` (repeats occur by
chance). At position ``l`` (0-based in code) let ``prev(l) < l`` be the most recent
earlier position holding the same token, ``x_{prev(l)} = x_l``; the target is the
token that followed it, ``y_l = x_{prev(l)+1}``. Where the current token has not
occurred before there is no target: the position is masked out of the loss.

Network (parameters ``g``: ``L x L``, ``K``: ``V x V``, the key matrix written W_K in the book, ``W``: ``V x V``):

* layer 1 is the causal positional head of M*: ``A1 = causal row-softmax(g)``,
  output ``H = A1 X`` (a copy head puts the previous token at every position);
* layer 2 is a content head: query the current token ``x_l``, key layer 1's
  output ``h_j``, logits ``g2_lj = x_l^T K h_j`` (g^{(2)}_{lj} in the book) for ``1 <= j <= l`` (0-based: the keys
  that have a previous token, :func:`layer2_visible`),
  ``A2 = causal row-softmax(g2)``; the value is the token ``x_j`` and the
  readout ``W``: ``F = A2 X W``.

With ``A1`` the shift and ``K = lam I`` the logit is ``lam`` exactly where
``x_{j-1} = x_l``, so for large ``lam`` layer 2 reads out the tokens that followed
earlier occurrences of the current token: the induction head.

Posterior: Gaussian likelihood of the masked outputs with variance
``sigma^2 = sigma0_sq L`` (as in M*), priors ``g ~ N(0, sigma_G^2)``,
``K ~ N(0, sigma_K^2)``, ``W ~ N(0, omega)``; :func:`induction_energy` is
``U = SSE / (2 sigma^2) + |g|^2/(2 sigma_G^2) + |K|^2/(2 sigma_K^2) + |W|^2/(2 omega)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import torch

from ..arguments import check_generator, check_instance, check_int, check_positive, check_shape
from .network import ModelSpec, attention
from .task import one_hot, sample_tokens

__all__ = ["InductionSpec", "InductionData", "previous_occurrence", "induction_task", "induction_forward",
           "layer2_visible", "layers_from_attention", "sequence_errors", "induction_prior", "induction_energy",
           "layer1_copy_weight", "induction_accuracy", "induction_keys", "induction_attention_score"]


@dataclass(frozen=True)
class InductionSpec:
    """Sizes and prior/likelihood scales of the two-layer induction network.

    L, V : int >= 2; sigma_G, sigma_K : float > 0 prior standard deviations of the
    layer-1 logits and of the layer-2 key matrix; omega : float > 0 prior variance of
    each readout entry; sigma0_sq : float > 0, the noise variance is ``sigma0_sq * L``.
    """

    L: int
    V: int
    sigma_G: float = 1.0
    sigma_K: float = 1.0
    omega: float = 1.0
    sigma0_sq: float = 1.0

    def __post_init__(self):
        object.__setattr__(self, "L", check_int("L", self.L, 2))
        object.__setattr__(self, "V", check_int("V", self.V, 2))
        for name in ("sigma_G", "sigma_K", "omega", "sigma0_sq"):
            object.__setattr__(self, name, check_positive(name, getattr(self, name)))

    @property
    def sigma_sq(self) -> float:
        """Likelihood variance ``sigma^2 = sigma0_sq * L``."""
        return self.sigma0_sq * self.L

    @property
    def layer1(self) -> ModelSpec:
        """The one-layer causal network M* with the same sizes and scales (layer 1 alone on the copy task)."""
        return ModelSpec(L=self.L, V=self.V, kind="softmax", sigma_G=self.sigma_G, omega=self.omega,
                         sigma0_sq=self.sigma0_sq, cyclic=False, causal=True)


@dataclass(frozen=True)
class InductionData:
    """An induction data set: ``tokens (P, L)`` int, one-hot ``X`` and targets ``Y`` ``(P, L, V)``
    float64 (``Y`` is zero where masked), ``mask (P, L)`` bool (True where a target exists)."""

    tokens: np.ndarray
    X: np.ndarray
    Y: np.ndarray
    mask: np.ndarray


def _check_tokens(tokens) -> np.ndarray:
    tokens = np.asarray(tokens)
    if not np.issubdtype(tokens.dtype, np.integer):
        raise TypeError(f"tokens must be an integer array, got dtype {tokens.dtype}")
    if tokens.ndim != 2 or tokens.shape[1] < 2:
        raise ValueError(f"tokens must have shape (P, L) with L >= 2, got {tokens.shape}")
    if tokens.size and tokens.min() < 0:
        raise ValueError("tokens must be >= 0")
    return tokens


def previous_occurrence(tokens: npt.ArrayLike) -> np.ndarray:
    """Most recent earlier position of the same token, shape ``(P, L)``, ``-1`` where there is none.

    tokens : integer array ``(P, L)``, entries >= 0.
    """
    tokens = _check_tokens(tokens)
    L = tokens.shape[1]
    same = tokens[:, :, None] == tokens[:, None, :]  # (P, l, j)
    earlier = np.tril(np.ones((L, L), dtype=bool), -1)
    pos = np.where(same & earlier, np.arange(L)[None, None, :], -1)
    return pos.max(-1)


def induction_task(P: int, L: int, V: int, rng: np.random.Generator) -> InductionData:
    """Draw ``P`` i.i.d. uniform sequences and their induction targets (see the module docstring)."""
    P, L, V = check_int("P", P, 1), check_int("L", L, 2), check_int("V", V, 2)
    check_generator("rng", rng)
    tokens = sample_tokens(P, L, V, rng)
    prev = previous_occurrence(tokens)
    mask = prev >= 0
    target = np.take_along_axis(tokens, np.where(mask, prev + 1, 0), axis=1)
    X = one_hot(tokens, V)
    Y = one_hot(target, V) * mask[..., None]
    return InductionData(tokens=tokens, X=X, Y=Y, mask=mask)


def layer2_visible(L: int) -> torch.Tensor:
    """Keys layer 2 can attend to, bool ``(L, L)``: ``1 <= j <= l`` (0-based), and row 0 sees itself.

    Position 0 has no previous token, so its layer-1 output ``h_0 = x_0`` would pose as the
    follower of an occurrence of ``x_0``; it is excluded as a key. Row 0 (always masked in the
    loss) attends to itself so that every row is a distribution.
    """
    L = check_int("L", L, 2)
    visible = torch.ones(L, L, dtype=torch.bool).tril()
    visible[1:, 0] = False
    return visible


def _as_tensor(name, a):
    if isinstance(a, torch.Tensor):
        if not a.is_floating_point():
            raise TypeError(f"{name} must be a floating-point tensor, got dtype {a.dtype}")
        return a
    return torch.as_tensor(np.asarray(a, dtype=np.float64))


def layers_from_attention(A1: torch.Tensor, K: torch.Tensor, W: torch.Tensor,
                          X: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(A2, F)`` from layer-1 attention ``A1 (..., L, L)``, ``K, W (..., V, V)`` and ``X (..., P, L, V)`` tensors.

    The parameters' batch dimensions ``...`` broadcast against those of ``X`` before ``P``. Inner function
    for training and sampling loops (shapes unchecked); :func:`induction_forward` is the checked entry.
    """
    L = X.shape[-2]
    # batched matrix products (not einsum): the batches are many tiny matrices
    H = A1[..., None, :, :] @ X
    scores = (X @ K[..., None, :, :]) @ H.transpose(-1, -2)
    scores = scores.masked_fill(~layer2_visible(L), -torch.inf)
    A2 = torch.softmax(scores, dim=-1)
    F = (A2 @ X) @ W[..., None, :, :]
    return A2, F


def _check_params(g, K, W, X):
    g, K, W, X = (_as_tensor(n, a) for n, a in (("g", g), ("K", K), ("W", W), ("X", X)))
    check_shape("X", X, (None, None, None))
    L, V = X.shape[-2], X.shape[-1]
    check_shape("g", g, (L, L), source="X")
    check_shape("K", K, (V, V), source="X")
    check_shape("W", W, (V, V), source="X")
    for name, t in (("g", g), ("K", K), ("W", W), ("X", X)):
        if not torch.isfinite(t).all():
            raise ValueError(f"{name} must contain only finite values")
    return g, K, W, X


def induction_forward(g: npt.ArrayLike | torch.Tensor, K: npt.ArrayLike | torch.Tensor,
                      W: npt.ArrayLike | torch.Tensor, X: npt.ArrayLike | torch.Tensor
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Both layers of the network: ``(A1, A2, F)``.

    g : ``(..., L, L)`` layer-1 logits; K, W : ``(..., V, V)``; X : ``(..., P, L, V)`` one-hot
    (the parameters' batch dimensions ``...`` broadcast against those of ``X`` before ``P``).
    Returns ``A1 (..., L, L)``, ``A2 (..., P, L, L)`` (row ``l`` over ``1 <= j <= l``) and the output
    ``F (..., P, L, V)``. Numpy in gives numpy out; tensors keep autograd.
    """
    as_numpy = not any(isinstance(a, torch.Tensor) for a in (g, K, W, X))
    g, K, W, X = _check_params(g, K, W, X)
    A1 = attention(g, "softmax", causal=True)
    A2, F = layers_from_attention(A1, K, W, X)
    if as_numpy:
        return A1.detach().numpy(), A2.detach().numpy(), F.detach().numpy()
    return A1, A2, F


def sequence_errors(A1: torch.Tensor, K: torch.Tensor, W: torch.Tensor, X: torch.Tensor, Y: torch.Tensor,
                    mask: torch.Tensor) -> torch.Tensor:
    """Masked squared error of every sequence, shape ``(..., P)`` (tensors, autograd kept).

    A1 : ``(..., L, L)`` layer-1 attention (e.g. ``attention(g, "softmax", causal=True)``);
    K, W : ``(..., V, V)``; X, Y : ``(..., P, L, V)``; mask : ``(..., P, L)`` (bool or 0/1).
    Inner function for training and sampling loops: shapes are not re-checked.
    """
    _, F = layers_from_attention(A1, K, W, X)
    return (((F - Y) ** 2).sum(-1) * mask).sum(-1)


def induction_energy(g: npt.ArrayLike | torch.Tensor, K: npt.ArrayLike | torch.Tensor,
                     W: npt.ArrayLike | torch.Tensor, data: InductionData, spec: InductionSpec) -> torch.Tensor:
    """Potential ``U(g, K, W)`` (negative log posterior up to a constant), shape ``(...)``.

    g : ``(..., L, L)``, K, W : ``(..., V, V)`` tensors (autograd kept) or arrays; ``data`` one data set
    shared by every batch entry.
    """
    check_instance("spec", spec, InductionSpec)
    check_instance("data", data, InductionData)
    g, K, W, X = _check_params(g, K, W, data.X)
    if X.shape[-2:] != (spec.L, spec.V):
        raise ValueError(f"data must have L = {spec.L} and V = {spec.V} (spec), got {tuple(X.shape[-2:])}")
    Y = torch.as_tensor(data.Y)
    mask = torch.as_tensor(data.mask, dtype=torch.float64)
    A1 = attention(g, "softmax", causal=True)
    sse = sequence_errors(A1, K, W, X, Y, mask).sum(-1)
    return sse / (2 * spec.sigma_sq) + induction_prior(g, K, W, spec)


def induction_prior(g: torch.Tensor, K: torch.Tensor, W: torch.Tensor, spec: InductionSpec) -> torch.Tensor:
    """The prior part of ``U``: ``|g|^2/(2 sigma_G^2) + |K|^2/(2 sigma_K^2) + |W|^2/(2 omega)``, shape ``(...)``.

    Tensors ``g (..., L, L)``, ``K, W (..., V, V)`` (autograd kept); inner function, shapes unchecked.
    """
    return ((g ** 2).sum((-1, -2)) / (2 * spec.sigma_G ** 2) + (K ** 2).sum((-1, -2)) / (2 * spec.sigma_K ** 2)
            + (W ** 2).sum((-1, -2)) / (2 * spec.omega))


def layer1_copy_weight(A1: npt.ArrayLike | torch.Tensor) -> np.ndarray | torch.Tensor:
    """Mean previous-token weight of layer 1, ``c = (1/(L-1)) sum_{l>=1} A1[l, l-1]`` (0-based), shape ``(...)``.

    The causal copy weight ``gamma_1 / (L - 1)`` of the one-layer chapter.
    """
    as_numpy = not isinstance(A1, torch.Tensor)
    A1 = _as_tensor("A1", A1)
    check_shape("A1", A1, (None, None))
    if A1.shape[-1] != A1.shape[-2] or A1.shape[-1] < 2:
        raise ValueError(f"A1 must be square with L >= 2 in its last two dimensions, got {tuple(A1.shape)}")
    c = torch.diagonal(A1, offset=-1, dim1=-2, dim2=-1).sum(-1) / (A1.shape[-1] - 1)
    return c.detach().numpy() if as_numpy else c


def induction_accuracy(F: npt.ArrayLike | torch.Tensor, data: InductionData) -> torch.Tensor:
    """Share of the masked positions where ``argmax F`` is the target token, shape ``F.shape[:-3]``.

    F : ``(..., P, L, V)`` network outputs on ``data``.
    """
    F = torch.as_tensor(F)
    hit = (F.argmax(-1) == torch.as_tensor(data.Y.argmax(-1))) & torch.as_tensor(data.mask)
    return hit.sum((-1, -2)).double() / float(data.mask.sum())


def induction_keys(tokens: npt.ArrayLike) -> np.ndarray:
    """The induction keys of every position, bool ``(P, L, L)``: entry ``(l, j)`` is True for
    ``1 <= j <= l`` with ``x_{j-1} = x_l`` (the value at ``j`` followed an occurrence of the current token)."""
    t = _check_tokens(tokens)
    keys = np.zeros(t.shape + (t.shape[1],), dtype=bool)
    keys[:, :, 1:] = t[:, :, None] == t[:, None, :-1]
    return keys & np.tril(np.ones((t.shape[1],) * 2, dtype=bool))[None]


def induction_attention_score(A2: npt.ArrayLike | torch.Tensor, data: InductionData) -> torch.Tensor:
    """Layer 2's attention mass on the induction keys, averaged over masked positions, shape ``A2.shape[:-3]``.

    The induction keys of position ``l`` are the ``j <= l`` with ``x_{j-1} = x_l`` (``j >= 1``).
    A2 : ``(..., P, L, L)``. 1 for a perfect induction head; for uniform attention it is the share of
    such keys among the visible positions.
    """
    A2 = torch.as_tensor(A2)
    mass = (A2 * torch.as_tensor(induction_keys(data.tokens))).sum(-1)
    return (mass * torch.as_tensor(data.mask)).sum((-1, -2)) / float(data.mask.sum())
