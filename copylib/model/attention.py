"""The attention kinds: one registry entry per nonlinearity from logits to attention.

Each kind (``"linear"``, ``"softmax"``) is one :class:`AttentionKind`, which holds
everything the rest of copylib needs to know about it, in the spirit of the
one-contract-per-layer design of Neural Tangents:

* ``forward``: logits ``G`` to attention weights ``A`` (causal mask included);
* ``backward``: the gradient with respect to ``G`` given ``dL/dA``, the hand-written
  backward pass of the samplers and of Adam (no autograd);
* ``prior_action``: the push-forward of the Gaussian prior on the logits to the
  kind's order parameters (a function of :mod:`copylib.posterior.order_parameters`);
* ``theory``: the module with the kind's reduced action and minima.

Every function that takes a kind looks it up with :func:`attention_kind`, so an
unknown kind is an error everywhere instead of silently meaning one of the two.
Adding a kind is adding one entry here (and a theory module).

The prior push-forward and the theory module are named, not imported: both
depend on :class:`copylib.model.network.ModelSpec`, which depends on this module.

Forward maps, for ``G`` of shape ``(..., L, L)``:

* linear: ``A = G / L``; with the causal mask row ``l`` (0-based) is divided by
  its number of visible entries, ``A[l, j] = G[l, j] / (l + 1)`` for ``j <= l``
  and ``0`` above the diagonal;
* softmax: each row of ``A`` is the softmax of the row of ``G``; with the causal
  mask over the visible entries ``j <= l`` only (row 0 is ``e_0``).
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

import torch

__all__ = ["AttentionKind", "attention_kind", "attention_kinds"]


@dataclass(frozen=True)
class AttentionKind:
    """One attention nonlinearity: its forward map, backward pass, prior push-forward and theory.

    Parameters
    ----------
    name : str
        The kind as :class:`copylib.model.network.ModelSpec` spells it.
    forward : callable ``(G, causal) -> A``
        Attention weights from logits (torch tensors ``(..., L, L)``, no argument
        checks; :func:`copylib.model.network.attention` is the checked version).
    backward : callable ``(A, dA, causal) -> dG``
        The gradient with respect to the logits of a scalar whose gradient with
        respect to ``A = forward(G, causal)`` is ``dA``; computed from ``A`` alone and
        written into ``dA`` (which is returned). The hidden logits of a causal row get 0.
    prior_action : str
        Qualified name of the prior push-forward: the negative log prior (up to a
        constant) that the Gaussian prior on the logits induces on the kind's order
        parameters (:meth:`prior_action_function` returns it).
    theory : str
        Name of the module with the kind's reduced action (:meth:`theory_module`
        imports it).
    """

    name: str
    forward: Callable
    backward: Callable
    prior_action: str
    theory: str

    def prior_action_function(self) -> Callable:
        """The function named by ``prior_action``, e.g.
        :func:`copylib.posterior.order_parameters.prior_action_linear`."""
        module, _, function = self.prior_action.rpartition(".")
        return getattr(importlib.import_module(module), function)

    def theory_module(self) -> ModuleType:
        """The module named by ``theory``, e.g. :mod:`copylib.theory.linear`."""
        return importlib.import_module(self.theory)


def _visible(L: int, like: torch.Tensor) -> torch.Tensor:
    """Boolean ``(L, L)`` causal mask: ``True`` where ``j <= l``."""
    return torch.ones(L, L, dtype=torch.bool, device=like.device).tril_()


def _linear_forward(G: torch.Tensor, causal: bool) -> torch.Tensor:
    L = G.shape[-1]
    if not causal:
        return G / L
    counts = torch.arange(1, L + 1, dtype=G.dtype, device=G.device)[:, None]
    return G.masked_fill(~_visible(L, G), 0.0) / counts


def _linear_backward(A: torch.Tensor, dA: torch.Tensor, causal: bool) -> torch.Tensor:
    L = A.shape[-1]
    if not causal:
        return dA.div_(L)
    counts = torch.arange(1, L + 1, dtype=dA.dtype)[:, None]
    return dA.div_(counts).mul_(torch.ones(L, L, dtype=dA.dtype).tril_())


def _softmax_forward(G: torch.Tensor, causal: bool) -> torch.Tensor:
    if not causal:
        return torch.softmax(G, dim=-1)
    return torch.softmax(G.masked_fill(~_visible(G.shape[-1], G), -math.inf), dim=-1)


def _softmax_backward(A: torch.Tensor, dA: torch.Tensor, causal: bool) -> torch.Tensor:
    # the causal mask needs no change: A = 0 at the hidden entries, so dG = A (dA - <dA, A>_row) vanishes there
    dA -= (dA * A).sum(-1, keepdim=True)
    return dA.mul_(A)


_KINDS = {
    kind.name: kind
    for kind in (
        AttentionKind(
            name="linear",
            forward=_linear_forward,
            backward=_linear_backward,
            prior_action="copylib.posterior.order_parameters.prior_action_linear",
            theory="copylib.theory.linear",
        ),
        AttentionKind(
            name="softmax",
            forward=_softmax_forward,
            backward=_softmax_backward,
            prior_action="copylib.posterior.order_parameters.prior_action_softmax",
            theory="copylib.theory.softmax",
        ),
    )
}


def attention_kinds() -> tuple[str, ...]:
    """The names of the registered attention kinds, in registration order."""
    return tuple(_KINDS)


def attention_kind(kind: str) -> AttentionKind:
    """The registry entry of ``kind``; ``ValueError`` naming ``kind`` and the registered kinds otherwise."""
    if not isinstance(kind, str) or kind not in _KINDS:
        raise ValueError(f"kind must be one of {attention_kinds()}, got {kind!r}")
    return _KINDS[kind]
