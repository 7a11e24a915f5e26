"""Posterior targets of M*: the energies the samplers and Adam move on, with their exact gradients.

A target holds one data set per chain (or one shared by all chains) and evaluates
the negative log posterior ``U`` of ``R`` chains at once. Every target meets one
small contract (:class:`PosteriorTarget`):

* ``names`` -- the parameter groups, e.g. ``("g", "b")``, and ``shapes`` -- the
  per-chain shape of each;
* ``energy(params) -> (R,)`` -- ``U`` from the public definition, differentiable
  by autograd (the reference);
* ``energy_and_grad(params) -> (U (R,), grads)`` -- ``U`` and its gradient written
  out by hand (what the samplers evaluate at every step; checked against autograd
  in the tests), ``grads`` a dict with the keys of ``params``.

``params`` is a dict ``name -> float64 tensor (R, *shape)``. Chains never interact.

Targets:

* :class:`CollapsedPosterior` -- the logits ``(g, b)`` with the readout integrated
  out; ``U`` is :func:`copylib.posterior.evidence.effective_action`;
* :class:`JointPosterior` -- the whole network ``(g, b, W)``; ``U`` is
  :func:`map_objective`, whose minimum is the MAP estimate (Adam, :mod:`copylib.inference.map_training`).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import torch

from ..arguments import as_real_array, check_int
from ..model.attention import attention_kind
from ..model.network import ModelSpec, attention, attention_logits, check_spec, prior_energy
from ..model.statistics import BatchedReadoutMoments, sample_size, sum_squared_error, target_energy
from .evidence import effective_action

__all__ = ["PosteriorTarget", "CollapsedPosterior", "JointPosterior", "map_objective"]

_DTYPE = torch.float64


def map_objective(g: npt.ArrayLike | torch.Tensor, b: npt.ArrayLike | torch.Tensor, W: npt.ArrayLike | torch.Tensor, C: npt.ArrayLike | torch.Tensor, spec: ModelSpec,
                  y2: npt.ArrayLike | torch.Tensor | None = None) -> np.ndarray | torch.Tensor:
    """Negative log posterior ``U`` of ``(g, b, W)`` given data ``C``, shape ``(R,)`` (torch).

    ``U = SSE / (2 sigma^2) + |g|^2 / (2 sigma_G^2) + b^2 / (2 sigma_b^2) + |W|^2 / (2 omega)``.
    ``y2``: optional precomputed :func:`copylib.model.statistics.target_energy` of ``C``.
    """
    check_spec(spec)
    A = attention(attention_logits(g, b), spec.kind, spec.causal)
    sse = sum_squared_error(A, W, C, torch.as_tensor(spec.target, dtype=A.dtype), y2=y2)
    return sse / (2 * spec.sigma_sq) + prior_energy(g, b, W, spec)


def _chain_data(C, spec: ModelSpec, R: int | None) -> tuple[torch.Tensor, int]:
    """``C`` as float64, shape ``(L, L, V, V)`` (shared) or ``(R, L, L, V, V)`` (one per chain), and ``R``
    (``R = None``: one data set per chain, ``R = C.shape[0]``)."""
    C = C.detach().to(_DTYPE) if isinstance(C, torch.Tensor) else torch.tensor(as_real_array("C", C))
    L, V = spec.L, spec.V
    if R is None:
        if C.ndim != 5:
            raise ValueError(f"C must have shape (R, {L}, {L}, {V}, {V}) when R is not given, got {tuple(C.shape)}")
        R = C.shape[0]
    R = check_int("R", R, 1)
    if tuple(C.shape) not in ((L, L, V, V), (R, L, L, V, V)):
        raise ValueError(f"C must have shape ({L}, {L}, {V}, {V}) or (n_chains={R}, {L}, {L}, {V}, {V}), "
                         f"got {tuple(C.shape)}")
    if not torch.isfinite(C).all():
        raise ValueError("C must contain only finite values")
    return C, R


class PosteriorTarget:
    """The contract of a posterior target (see the module docstring); subclasses fill it in.

    C : array ``(L, L, V, V)`` (one data set shared by all chains) or ``(R, L, L, V, V)``
    (:func:`copylib.cooccurrence <copylib.model.statistics.cooccurrence>`), converted to float64;
    spec : ModelSpec; R : int >= 1, the number of chains (default ``C.shape[0]``, then ``C``
    must hold one data set per chain).
    """

    names: tuple[str, ...] = ()

    def __init__(self, C: npt.ArrayLike | torch.Tensor, spec: ModelSpec, R: int | None = None) -> None:
        self.spec = check_spec(spec)
        self.C, self.R = _chain_data(C, spec, R)
        L, V = spec.L, spec.V
        self.shapes = {n: {"g": (L, L), "b": (), "W": (V, V)}[n] for n in self.names}
        self.products = BatchedReadoutMoments(self.C, self.R, spec.cyclic)

    def attention(self, g: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        """Attention ``(R, L, L)`` of the logits of a state (no argument checks: the state is the sampler's)."""
        G = g + b[:, None, None]
        return attention_kind(self.spec.kind).forward(G, self.spec.causal)

    def energy(self, params: dict[str, torch.Tensor]) -> torch.Tensor:
        """``U (R,)`` from its public definition, differentiable by autograd."""
        raise NotImplementedError

    def energy_and_grad(self, params: dict[str, torch.Tensor]) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """``(U (R,), {name: dU/dparams[name]})``, the gradient written out by hand (no autograd)."""
        raise NotImplementedError


class CollapsedPosterior(PosteriorTarget):
    """The logits ``(g, b)`` with the readout integrated out: ``U`` is
    :func:`copylib.posterior.evidence.effective_action`.

    With ``M = K + kappa I`` and ``Z = M^{-1} B`` (``K, B`` the readout moments of
    :func:`copylib.model.statistics.readout_moments`) the evidence's derivatives are

        d(-ln p)/dK = (V/2) M^{-1} + Z Z^T / (2 sigma^2),    d(-ln p)/dB = -Z / sigma^2,

    then back through ``A`` to the logits, plus the prior terms. Arguments as
    :class:`PosteriorTarget`.
    """

    names = ("g", "b")

    def __init__(self, C: npt.ArrayLike | torch.Tensor, spec: ModelSpec, R: int | None = None) -> None:
        super().__init__(C, spec, R)
        R, C = self.R, self.C
        V, L, s2, kappa = spec.V, spec.L, spec.sigma_sq, spec.kappa
        y2 = target_energy(C, torch.as_tensor(spec.target)).expand(R)
        P = sample_size(C).expand(R)
        # the A-independent part of -ln p(Y | A)
        self.const = 0.5 * V * (P * L * math.log(2 * math.pi * s2) - V * math.log(kappa)) + y2 / (2 * s2)
        self.kappa_eye = kappa * torch.eye(V, dtype=C.dtype)

    def energy(self, params: dict[str, torch.Tensor]) -> torch.Tensor:
        return effective_action(params["g"], params["b"], self.C, self.spec)

    def energy_and_grad(self, params: dict[str, torch.Tensor]) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        g, b = params["g"], params["b"]
        spec = self.spec
        V, s2 = spec.V, spec.sigma_sq
        A = self.attention(g, b)
        K, B = self.products.moments(A)
        chol, info = torch.linalg.cholesky_ex(K + self.kappa_eye)
        if bool((info != 0).any()):
            raise FloatingPointError("K + kappa I is not numerically positive definite; use float64")
        Zt = torch.linalg.solve_triangular(chol, B, upper=False)
        logdet = 2 * torch.log(torch.diagonal(chol, dim1=-2, dim2=-1)).sum(-1)
        E = (self.const + 0.5 * V * logdet - (Zt * Zt).sum((1, 2)) / (2 * s2)
             + (g * g).sum((1, 2)) / (2 * spec.sigma_G**2) + b * b / (2 * spec.sigma_b**2))
        Z = torch.linalg.solve_triangular(chol.transpose(1, 2), Zt, upper=True)
        dK = torch.cholesky_inverse(chol).mul_(0.5 * V).add_(torch.bmm(Z, Z.transpose(1, 2)), alpha=0.5 / s2)
        dA = self.products.backward(A, dK, Z / (-s2))
        dG = attention_kind(spec.kind).backward(A, dA, spec.causal)
        dg = torch.add(dG, g, alpha=1.0 / spec.sigma_G**2)
        db = torch.add(dG.sum((1, 2)), b, alpha=1.0 / spec.sigma_b**2)
        return E, {"g": dg, "b": db}


class JointPosterior(PosteriorTarget):
    """The whole network ``(g, b, W)``: ``U`` is :func:`map_objective`, the negative log joint posterior.

    Its gradient is written out because a training or sampling step is a few dozen
    small tensor operations, where autograd's bookkeeping costs more than the
    arithmetic (``L = 32``, ``R ~ 50``). With ``K, B`` the readout moments:

        dU/dW = ((K + K^T) W - 2 B) / (2 sigma^2) + W / omega,
        dU/dK = W W^T / (2 sigma^2),   dU/dB = -W / sigma^2,

    then back through ``A`` to the logits, plus the prior terms ``g / sigma_G^2``
    and ``b / sigma_b^2``. Adam keeps all parameters of a run in one flat state
    ``x (R, L^2 + 1 + V^2)``: :meth:`split` and :meth:`gradient` work on it.
    Arguments as :class:`PosteriorTarget`.
    """

    names = ("g", "b", "W")

    def __init__(self, C: npt.ArrayLike | torch.Tensor, spec: ModelSpec, R: int | None = None) -> None:
        super().__init__(C, spec, R)
        L, V = spec.L, spec.V
        y2 = target_energy(self.C, torch.as_tensor(spec.target))
        self.y2 = y2.expand(self.R) if y2.ndim == 0 else y2
        self.L, self.V, self.D = L, V, L * L + 1 + V * V

    def energy(self, params: dict[str, torch.Tensor]) -> torch.Tensor:
        return map_objective(params["g"], params["b"], params["W"], self.C, self.spec)

    def energy_and_grad(self, params: dict[str, torch.Tensor]) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        U, (dg, db, dW) = self._value_and_grad(params["g"], params["b"], params["W"])
        return U, {"g": dg, "b": db, "W": dW}

    def split(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Views ``g (R, L, L), b (R,), W (R, V, V)`` of the flat state ``x (R, D)``."""
        L, V = self.L, self.V
        return x[:, : L * L].view(-1, L, L), x[:, L * L], x[:, L * L + 1:].view(-1, V, V)

    def gradient(self, x: torch.Tensor, out: torch.Tensor, value: bool = False) -> torch.Tensor | None:
        """Write ``dU/dx`` at the flat state ``x`` into ``out`` (same shape).

        Returns ``U (R,)`` if ``value``, else None (Adam does not need it).
        """
        return self._value_and_grad(*self.split(x), out=self.split(out), value=value)[0]

    def _value_and_grad(self, g, b, W, out=None, value: bool = True):
        """``(U, (dg, db, dW))``; the gradients are written into ``out`` if given (else new
        tensors); ``U`` is None unless ``value``."""
        spec = self.spec
        s2 = spec.sigma_sq
        A = self.attention(g, b)
        K, B = self.products.moments(A)
        dg, db, dW = out if out is not None else (torch.empty_like(g), torch.empty_like(b), torch.empty_like(W))
        KW2 = torch.bmm(K + K.transpose(1, 2), W)
        U = None
        if value:
            sse = 0.5 * (W * KW2).sum((1, 2)) - 2 * (W * B).sum((1, 2)) + self.y2
            U = (sse / (2 * s2) + (g * g).sum((1, 2)) / (2 * spec.sigma_G**2) + b * b / (2 * spec.sigma_b**2)
                 + (W * W).sum((1, 2)) / (2 * spec.omega))
        torch.add(KW2 - 2 * B, W, alpha=2 * s2 / spec.omega, out=dW)
        dW.mul_(0.5 / s2)
        dA = self.products.backward(A, torch.bmm(W, W.transpose(1, 2)).mul_(0.5 / s2), W / (-s2))
        dG = attention_kind(spec.kind).backward(A, dA, spec.causal)
        torch.add(dG, g, alpha=1.0 / spec.sigma_G**2, out=dg)
        torch.add(dG.sum((1, 2)), b, alpha=1.0 / spec.sigma_b**2, out=db)
        return U, (dg, db, dW)
