"""The single-head attention network M* and its priors.

Attention logits are positional, ``G = b J + g`` (``L x L``), with ``J`` the
all-ones matrix, ``g_ij ~ N(0, sigma_G^2)`` and a global bias ``b ~ N(0, sigma_b^2)``.
The attention matrix is ``A = G / L`` (linear) or ``A = row-softmax(G)`` (softmax,
where ``b`` drops out). With a causal mask (``ModelSpec(causal=True)``) position
``l`` sees only positions ``j <= l``: the softmax runs over those entries only,
and linear attention divides by their number, ``A_lj = G_lj / (l + 1)``
(0-based ``l``), so that the bias still gives every row the sum ``b``. The output for one sequence ``X`` (``L x V``) is
``F = A X W`` with readout ``W`` (``V x V``), ``W_ij ~ N(0, omega)``. The
likelihood is Gaussian with variance ``sigma^2 = sigma0_sq * L``.

All array functions accept numpy arrays or torch tensors and are written once,
in torch, so that training, sampling and theory use the same definition. Numpy
input gives numpy output (float64); torch input keeps its dtype and autograd.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import torch

from ..arguments import as_real_array, check_bool, check_finite, check_int, check_positive, check_shape
from ..model.attention import attention_kind
from ..model.task import shift_matrix

__all__ = ["attention", "attention_logits", "check_spec", "from_torch", "ModelSpec", "network_output",
           "prior_energy", "to_torch"]


@dataclass(frozen=True)
class ModelSpec:
    """Sizes, attention kind and prior/likelihood scales of the model M*.

    Parameters
    ----------
    L : int, >= 2
        Sequence length.
    V : int, >= 2
        Vocabulary size.
    kind : str
        Attention nonlinearity, one of :func:`copylib.model.attention.attention_kinds`
        (``"linear"``, ``"softmax"``).
    sigma_G, sigma_b : float > 0
        Prior standard deviations of the logits ``g`` and of the bias ``b``.
    omega : float > 0
        Prior variance of each readout entry ``W_ij``.
    sigma0_sq : float > 0
        Likelihood temperature; the noise variance is ``sigma0_sq * L``.
    cyclic : bool
        Cyclic copy target (default) or the shift without wrap-around.
    causal : bool
        Causal mask (default ``False``): position ``l`` attends only to
        positions ``j <= l`` (see :func:`attention`). A causal network has no
        wrap-around, so ``causal=True`` requires ``cyclic=False`` (the target
        of the first position is then the zero vector).
    """

    L: int
    V: int
    kind: str = "softmax"
    sigma_G: float = 1.0
    sigma_b: float = 1.0
    omega: float = 1.0
    sigma0_sq: float = 1.0
    cyclic: bool = True
    causal: bool = False

    def __post_init__(self):
        object.__setattr__(self, "L", check_int("L", self.L, 2))
        object.__setattr__(self, "V", check_int("V", self.V, 2))
        attention_kind(self.kind)
        for name in ("sigma_G", "sigma_b", "omega", "sigma0_sq"):
            object.__setattr__(self, name, check_positive(name, getattr(self, name)))
        for name in ("cyclic", "causal"):
            object.__setattr__(self, name, check_bool(name, getattr(self, name)))
        if self.causal and self.cyclic:
            raise ValueError("causal=True needs cyclic=False: under a causal mask position 1 cannot see "
                             "position L, so the cyclic target is unreachable (pass cyclic=False)")

    @property
    def sigma_sq(self) -> float:
        """Likelihood variance ``sigma^2 = sigma0_sq * L``."""
        return self.sigma0_sq * self.L

    @property
    def kappa(self) -> float:
        """Ridge ratio ``kappa = sigma^2 / omega`` of the readout."""
        return self.sigma_sq / self.omega

    @property
    def target(self) -> np.ndarray:
        """Target matrix ``T`` (``L x L``): ``Y = T X``."""
        return shift_matrix(self.L, self.cyclic)


def check_spec(spec: object, *, kind: str | None = None, cyclic_because: str | None = None,
               theory: str = "this function") -> ModelSpec:
    """Return ``spec`` if it is a :class:`ModelSpec` that meets a caller's requirements.

    ``kind``: the attention kind the caller needs (``None``: any; else a registered kind,
    :func:`copylib.model.attention.attention_kind`); ``cyclic_because``:
    if given, ``spec.cyclic`` must be True, and the message says why; ``theory``
    names the caller in the messages. The one check of a spec at a public boundary:
    a ``ModelSpec`` validated its own fields when it was made.
    """
    if not isinstance(spec, ModelSpec):
        raise TypeError(f"spec must be a copylib.ModelSpec, got {type(spec).__name__}")
    if kind is not None and spec.kind != attention_kind(kind).name:
        raise ValueError(f"spec.kind must be {kind!r} for {theory}, got {spec.kind!r}")
    if cyclic_because is not None and not spec.cyclic:
        raise ValueError(f"spec.cyclic must be True: {cyclic_because}")
    return spec


def to_torch(*arrays: npt.ArrayLike | torch.Tensor, names: Sequence[str]) -> tuple[bool, list[torch.Tensor]]:
    """The arrays as torch tensors, and whether the caller gets numpy back: ``(as_numpy, tensors)``.

    Numpy (or other real array-like) inputs become float64 tensors; tensors are kept
    as they are (dtype and autograd). ``as_numpy`` is True when no input is a tensor:
    pass it to :func:`from_torch` with the result, so that numpy in gives numpy out.
    ``names`` (one per array) are the parameter names used in the ``TypeError``
    raised for something that is not a real array, or a tensor that is not
    floating point (integer tensors would fail later with torch-internal errors).
    """
    as_numpy = not any(isinstance(a, torch.Tensor) for a in arrays)
    out = []
    for name, a in zip(names, arrays, strict=True):
        if isinstance(a, torch.Tensor):
            if not a.is_floating_point():
                raise TypeError(f"{name} must be a floating-point tensor, got dtype {a.dtype}")
            out.append(a)
        else:
            out.append(torch.as_tensor(as_real_array(name, a)))
    return as_numpy, out


def from_torch(as_numpy: bool, t: torch.Tensor) -> np.ndarray | torch.Tensor:
    """``t`` as a numpy array if ``as_numpy`` (from :func:`to_torch`), else the tensor itself."""
    return t.detach().numpy() if as_numpy else t


def attention_logits(g: npt.ArrayLike | torch.Tensor, b: npt.ArrayLike | torch.Tensor) -> np.ndarray | torch.Tensor:
    """Logits ``G = b J + g``.

    g : shape ``(..., L, L)``; b : shape ``(...)`` (one bias per batch entry).
    Returns shape ``(..., L, L)``.
    """
    as_numpy, (g, b) = to_torch(g, b, names=("g", "b"))
    check_shape("g", g, (None, None))
    if g.shape[-1] != g.shape[-2]:
        raise ValueError(f"g must be square in its last two dimensions, got {tuple(g.shape)}")
    if tuple(b.shape) != tuple(g.shape[:-2]):
        raise ValueError(f"b must have shape {tuple(g.shape[:-2])} (the batch shape of g), got {tuple(b.shape)}")
    check_finite("g", g)
    check_finite("b", b)
    return from_torch(as_numpy, g + b[..., None, None])


def attention(G: npt.ArrayLike | torch.Tensor, kind: str, causal: bool = False) -> np.ndarray | torch.Tensor:
    """Attention matrix from logits, shape ``(..., L, L)``.

    ``kind`` is a registered attention kind (:func:`copylib.model.attention.attention_kind`;
    its ``forward`` map is applied). ``kind="linear"``: ``A = G / L``; ``kind="softmax"``:
    each row of ``A`` is the softmax of the corresponding row of ``G``.

    With ``causal=True`` row ``l`` (0-based) sees only the columns ``j <= l``:
    ``A[l, j] = 0`` for ``j > l`` and the logits there are ignored. Softmax
    rows are normalised over the ``l + 1`` visible entries (row 0 is ``e_0``);
    linear rows are divided by their number of visible entries,
    ``A[l, j] = G[l, j] / (l + 1)``, the causal analogue of ``G / L``: a
    constant logit ``b`` gives every row the causal average with row sum ``b``.
    """
    entry = attention_kind(kind)
    check_bool("causal", causal)
    as_numpy, (G,) = to_torch(G, names=("G",))
    check_shape("G", G, (None, None))
    if G.shape[-1] != G.shape[-2] or G.shape[-1] < 2:
        raise ValueError(f"G must be square with L >= 2 in its last two dimensions, got {tuple(G.shape)}")
    check_finite("G", G)
    return from_torch(as_numpy, entry.forward(G, causal))


def network_output(X: npt.ArrayLike | torch.Tensor, A: npt.ArrayLike | torch.Tensor, W: npt.ArrayLike | torch.Tensor) -> np.ndarray | torch.Tensor:
    """Network output ``F = A X W``.

    X : ``(..., P, L, V)`` one-hot inputs; A : ``(..., L, L)``; W : ``(..., V, V)``.
    Returns ``(..., P, L, V)``.
    """
    as_numpy, (X, A, W) = to_torch(X, A, W, names=("X", "A", "W"))
    check_shape("X", X, (None, None, None))
    L, V = X.shape[-2], X.shape[-1]
    check_shape("A", A, (L, L), source="X")
    check_shape("W", W, (V, V), source="X")
    for name, t in (("X", X), ("A", A), ("W", W)):
        check_finite(name, t)
    F = torch.einsum("...lm,...pmv,...vw->...plw", A, X, W)
    return from_torch(as_numpy, F)


def prior_energy(g: npt.ArrayLike | torch.Tensor, b: npt.ArrayLike | torch.Tensor, W: npt.ArrayLike | torch.Tensor, spec: ModelSpec) -> np.ndarray | torch.Tensor:
    """Negative log prior up to a constant, one value per batch entry.

    ``|g|^2 / (2 sigma_G^2) + b^2 / (2 sigma_b^2) + |W|^2 / (2 omega)``.
    g : ``(..., L, L)``; b : ``(...)``; W : ``(..., V, V)``. Returns shape ``(...)``.
    """
    check_spec(spec)
    as_numpy, (g, b, W) = to_torch(g, b, W, names=("g", "b", "W"))
    check_shape("g", g, (spec.L, spec.L))
    check_shape("W", W, (spec.V, spec.V))
    if tuple(b.shape) != tuple(g.shape[:-2]):
        raise ValueError(f"b must have shape {tuple(g.shape[:-2])} (the batch shape of g), got {tuple(b.shape)}")
    for name, t in (("g", g), ("b", b), ("W", W)):
        check_finite(name, t)
    e = (
        (g**2).sum((-1, -2)) / (2 * spec.sigma_G**2)
        + b**2 / (2 * spec.sigma_b**2)
        + (W**2).sum((-1, -2)) / (2 * spec.omega)
    )
    return from_torch(as_numpy, e)
