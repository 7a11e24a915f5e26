"""The evidence of an attention matrix: the readout ``W`` integrated out exactly.

With ``W_ij ~ N(0, omega)`` i.i.d. and Gaussian noise of variance
``sigma^2 = spec.sigma_sq``, the targets of each vocabulary column are jointly
Gaussian given ``A``: ``Y[:, v] ~ N(0, Sigma)`` with the ``PL x PL`` kernel

    Sigma = omega Phi Phi^T + sigma^2 I,        Phi = rows of A X^mu stacked (PL x V).

The Woodbury and determinant identities turn ``-ln p(Y | A)`` into a ``V x V``
("dual") form that needs only the readout moments of
:func:`copylib.readout_moments <copylib.model.statistics.readout_moments>` (``K = Phi^T Phi``, ``B = Phi^T Y``,
``y2 = tr Y^T Y``) and ``P`` (:func:`copylib.sample_size <copylib.model.statistics.sample_size>`):

    -ln p(Y | A) = (V/2) [P L ln(2 pi sigma^2) + ln det(I_V + K / kappa)]
                   + (1 / (2 sigma^2)) [y2 - tr B^T (K + kappa I)^{-1} B],

``kappa = sigma^2 / omega``, all constants included. Given the co-occurrence
tensor ``C`` one evaluation costs ``O(L^3 + L^2 V^2 + V^3)``, whatever ``P``.

Functions:

* :func:`negative_log_evidence` -- the dual form (batched, differentiable);
* :func:`negative_log_evidence_primal` -- the naive ``PL x PL`` kernel form
  (reference for checks and the benchmark);
* :func:`negative_log_evidence_mc` -- a Monte Carlo average over prior draws
  of ``W`` (an independent check on tiny sizes);
* :func:`effective_action` -- the collapsed negative log posterior of the
  logits ``(g, b)``, what the collapsed sampler differentiates;
* :func:`optimal_readout` -- the posterior mean (= ridge/MAP) readout given ``A``.

All functions accept numpy arrays or torch tensors; numpy input gives numpy
output (float64), torch input keeps its dtype and autograd.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import torch

from ..arguments import check_finite, check_generator, check_int, check_shape
from ..model.network import ModelSpec, attention, attention_logits, check_spec, from_torch, to_torch
from ..model.statistics import readout_moments, sample_size

__all__ = [
    "effective_action",
    "negative_log_evidence",
    "negative_log_evidence_mc",
    "negative_log_evidence_primal",
    "optimal_readout",
]


def _check_A_C(A: torch.Tensor, C: torch.Tensor, spec: ModelSpec) -> None:
    """Shapes ``A (..., L, L)``, ``C (..., L, L, V, V)`` with broadcastable batches; finite."""
    L, V = spec.L, spec.V
    check_shape("A", A, (L, L))
    check_shape("C", C, (L, L, V, V))
    try:
        torch.broadcast_shapes(A.shape[:-2], C.shape[:-4])
    except RuntimeError:
        raise ValueError(
            f"the batch shapes of A {tuple(A.shape[:-2])} and C {tuple(C.shape[:-4])} do not broadcast"
        ) from None
    check_finite("A", A)
    check_finite("C", C)
    # counts are >= 0; a negated or shifted C can still give a factorisable K + kappa I
    # and a finite, meaningless evidence, so this is checked rather than left to Cholesky
    if C.numel() and C.detach().min().item() < 0:
        raise ValueError("C must be a co-occurrence tensor (copylib.cooccurrence): it has negative entries")


def _chol_moments(A: torch.Tensor, C: torch.Tensor, spec: ModelSpec):
    """``K, B, y2`` and the Cholesky factor of ``K + kappa I`` (``A``'s dtype)."""
    T = torch.as_tensor(spec.target, dtype=A.dtype)
    K, B, y2 = readout_moments(A, C, T)
    eye = torch.eye(spec.V, dtype=A.dtype)
    chol, info = torch.linalg.cholesky_ex(K + spec.kappa * eye)
    if bool((info != 0).any()):
        raise _not_positive_definite(K, spec)
    return K, B, y2, chol


def _not_positive_definite(K: torch.Tensor, spec: ModelSpec) -> Exception:
    """Say why the Cholesky factorisation of ``K + kappa I`` failed, naming the culprit.

    ``K = Phi^T Phi`` is positive semi-definite for a genuine co-occurrence tensor, so
    ``K + kappa I`` can only fail to factor when (a) ``C`` is not one (a clearly negative
    eigenvalue), (b) the input is float32, or (c) ``K`` is singular (e.g. ``P < V``, or
    uniform attention) and ``kappa`` lies below the rounding level of ``K``'s entries:
    then ``ln det(I + K/kappa)`` depends on rounding noise in ``K``'s null space and no
    reformulation from ``C`` can recover it; only a larger ``kappa`` can.
    """
    with torch.no_grad():
        ev = torch.linalg.eigvalsh(K.detach().to(torch.float64))
    top = ev.abs().amax(-1).clamp(min=torch.finfo(torch.float64).tiny)
    # rounding in a float64 K built from a co-occurrence tensor stays ~1e-15 of its top eigenvalue
    if bool((ev[..., 0] < -1e-10 * top).any()):
        return ValueError(
            "C must be a co-occurrence tensor (copylib.cooccurrence): Phi^T Phi built from it has a "
            "negative eigenvalue, so K + kappa I is not positive definite"
        )
    if K.dtype != torch.float64:
        return FloatingPointError(f"K + kappa I is not numerically positive definite in {K.dtype}; use float64")
    ratio = spec.kappa / float(top.max())
    return ValueError(
        f"kappa = sigma0_sq * L / omega = {spec.kappa:.3g} (spec.sigma0_sq = {spec.sigma0_sq:.3g}, "
        f"spec.omega = {spec.omega:.3g}) is {ratio:.1e} of the largest eigenvalue of K = Phi^T Phi, "
        "below float64 resolution while K is singular: the evidence is not representable; "
        "kappa must exceed ~1e-14 of K's largest eigenvalue (raise sigma0_sq or lower omega)"
    )


def negative_log_evidence(A: npt.ArrayLike | torch.Tensor, C: npt.ArrayLike | torch.Tensor, spec: ModelSpec) -> np.ndarray | torch.Tensor:
    """Exact ``-ln p(Y | A)`` with the readout ``W`` integrated out, all constants included.

    Parameters
    ----------
    A : array ``(..., L, L)``
        Attention matrices, ``L = spec.L``; must be finite.
    C : array ``(..., L, L, V, V)``
        Co-occurrence tensor of the data (:func:`copylib.cooccurrence <copylib.model.statistics.cooccurrence>`),
        ``V = spec.V``. Its batch shape must broadcast against that of ``A``; an
        unbatched ``C`` shared by a batch of ``A`` is not copied.
    spec : ModelSpec
        Supplies ``sigma^2 = spec.sigma_sq``, ``kappa = spec.kappa`` and the target
        ``T = spec.target``.

    Returns
    -------
    array ``(...)``
        The broadcast batch shape of ``A`` and ``C``.

    Notes
    -----
    Dual (``V x V``) form, with ``K, B, y2 = readout_moments(A, C, T)``,
    ``P = sample_size(C)`` and ``M = K + kappa I = R R^T`` (Cholesky):

    ::

        (V/2) [P L ln(2 pi sigma^2) + 2 sum ln diag R - V ln kappa]
        + (y2 - |R^{-1} B|_F^2) / (2 sigma^2),

    using ``ln det(I + K/kappa) = ln det M - V ln kappa`` and
    ``tr B^T M^{-1} B = |R^{-1} B|_F^2`` (one triangular solve, no inverse).
    Differentiable through ``A`` (and ``C``). Cost ``O(L^3 + L^2 V^2 + V^3)``
    per batch entry, independent of ``P``.

    Raises
    ------
    ValueError
        Naming ``C`` when it cannot be a co-occurrence tensor (negative entries);
        naming ``sigma0_sq`` and ``omega`` when ``K`` is singular (e.g. ``P < V``
        or uniform attention) and ``kappa`` lies below its float64 resolution
        (about ``1e-15`` of its largest eigenvalue): ``ln det(I + K/kappa)`` is
        then set by rounding noise, not representable. The same holds for
        :func:`optimal_readout` and :func:`effective_action`.
    """
    spec = check_spec(spec)
    as_numpy, (A, C) = to_torch(A, C, names=("A", "C"))
    _check_A_C(A, C, spec)
    C = C.to(A.dtype)
    _, B, y2, chol = _chol_moments(A, C, spec)
    P = sample_size(C)
    V, L, s2, kappa = spec.V, spec.L, spec.sigma_sq, spec.kappa
    logdet = 2 * torch.log(torch.diagonal(chol, dim1=-2, dim2=-1)).sum(-1) - V * math.log(kappa)
    Z = torch.linalg.solve_triangular(chol, B, upper=False)
    fit = (Z**2).sum((-1, -2))
    nle = 0.5 * V * (P * L * math.log(2 * math.pi * s2) + logdet) + (y2 - fit) / (2 * s2)
    return from_torch(as_numpy, nle)


def optimal_readout(A: npt.ArrayLike | torch.Tensor, C: npt.ArrayLike | torch.Tensor, spec: ModelSpec) -> np.ndarray | torch.Tensor:
    """Posterior mean of ``W`` given ``A``: ``(K + kappa I)^{-1} B``, shape ``(..., V, V)``.

    A : ``(..., L, L)``; C : ``(..., L, L, V, V)`` (batches broadcast). This is
    also the ridge / MAP readout: it minimises
    ``sum_mu |A X^mu W - Y^mu|^2 / (2 sigma^2) + |W|^2 / (2 omega)`` over ``W``.
    The posterior covariance of each column of ``W`` is ``sigma^2 (K + kappa I)^{-1}``.
    """
    spec = check_spec(spec)
    as_numpy, (A, C) = to_torch(A, C, names=("A", "C"))
    _check_A_C(A, C, spec)
    _, B, _, chol = _chol_moments(A, C, spec)
    return from_torch(as_numpy, torch.cholesky_solve(B, chol))


def effective_action(g: npt.ArrayLike | torch.Tensor, b: npt.ArrayLike | torch.Tensor, C: npt.ArrayLike | torch.Tensor, spec: ModelSpec) -> np.ndarray | torch.Tensor:
    """Collapsed negative log posterior of the logits, up to a ``(g, b)``-independent constant.

    ``negative_log_evidence(A(g, b), C, spec) + |g|^2 / (2 sigma_G^2) + b^2 / (2 sigma_b^2)``
    with ``A = attention(attention_logits(g, b), spec.kind, spec.causal)``.

    Parameters
    ----------
    g : array ``(..., L, L)``; b : array ``(...)`` (the batch shape of ``g``)
    C : array ``(..., L, L, V, V)``
        Batch shape broadcast against that of ``g``: e.g. ``g (R, L, L)``,
        ``b (R,)`` with ``C (R, L, L, V, V)`` (one data set per chain) or
        ``C (L, L, V, V)`` (one data set shared by all chains, not copied ``R`` times).
    spec : ModelSpec

    Returns
    -------
    array ``(...)``, differentiable in ``g`` and ``b`` (torch input).

    For softmax attention ``b`` drops out of ``A``; its term stays, so ``b``'s
    posterior is its prior.
    """
    spec = check_spec(spec)
    as_numpy, (g, b, C) = to_torch(g, b, C, names=("g", "b", "C"))
    check_shape("g", g, (spec.L, spec.L))
    A = attention(attention_logits(g, b), spec.kind, spec.causal)
    prior = (g**2).sum((-1, -2)) / (2 * spec.sigma_G**2) + b**2 / (2 * spec.sigma_b**2)
    return from_torch(as_numpy, negative_log_evidence(A, C, spec) + prior)


def _check_data(X: torch.Tensor, Y: torch.Tensor, A: torch.Tensor, spec: ModelSpec) -> None:
    L, V = spec.L, spec.V
    if X.ndim != 3:
        raise ValueError(f"X must have shape (P, {L}, {V}), got {tuple(X.shape)}")
    check_shape("X", X, (None, L, V))
    if tuple(Y.shape) != tuple(X.shape):
        raise ValueError(f"Y must have the shape of X {tuple(X.shape)}, got {tuple(Y.shape)}")
    if tuple(A.shape) != (L, L):
        raise ValueError(f"A must have shape ({L}, {L}) (unbatched), got {tuple(A.shape)}")
    for name, t in (("X", X), ("Y", Y), ("A", A)):
        check_finite(name, t)


def _features(X: torch.Tensor, A: torch.Tensor) -> torch.Tensor:
    """``Phi``: the rows of ``A X^mu`` stacked, shape ``(P L, V)``."""
    return torch.einsum("lm,pmv->plv", A, X).reshape(-1, X.shape[-1])


def negative_log_evidence_primal(X: npt.ArrayLike | torch.Tensor, Y: npt.ArrayLike | torch.Tensor, A: npt.ArrayLike | torch.Tensor, spec: ModelSpec) -> np.ndarray | torch.Tensor:
    """Naive reference: ``-ln p(Y | A)`` from the ``PL x PL`` Gaussian-process kernel.

    ``(V/2) ln det(2 pi Sigma) + (1/2) tr Y^T Sigma^{-1} Y`` with
    ``Sigma = omega Phi Phi^T + sigma^2 I`` and ``Y`` stacked ``(PL, V)``.
    Computed in float64 with a Cholesky factor of ``Sigma``: memory
    ``O((PL)^2)``, time ``O((PL)^3)``. Use :func:`negative_log_evidence` for
    real work; this is for checks and the benchmark.

    X, Y : ``(P, L, V)`` inputs and targets (any targets, not only ``T X``);
    A : ``(L, L)`` (unbatched). Returns a scalar.
    """
    spec = check_spec(spec)
    as_numpy, (X, Y, A) = to_torch(X, Y, A, names=("X", "Y", "A"))
    X, Y, A = X.double(), Y.double(), A.double()
    _check_data(X, Y, A, spec)
    Phi = _features(X, A)
    Yf = Y.reshape(-1, spec.V)
    n = Phi.shape[0]
    Sigma = spec.omega * (Phi @ Phi.T)
    Sigma.diagonal().add_(spec.sigma_sq)
    chol = torch.linalg.cholesky(Sigma)
    del Sigma
    logdet = 2 * torch.log(torch.diagonal(chol)).sum() + n * math.log(2 * math.pi)
    Z = torch.linalg.solve_triangular(chol, Yf, upper=False)
    return from_torch(as_numpy, 0.5 * spec.V * logdet + 0.5 * (Z**2).sum())


def negative_log_evidence_mc(X: npt.ArrayLike | torch.Tensor, Y: npt.ArrayLike | torch.Tensor, A: npt.ArrayLike | torch.Tensor, spec: ModelSpec, n_samples: int,
                             rng: np.random.Generator, chunk_size: int = 1 << 14) -> tuple[float, float]:
    """Monte Carlo ``-ln E_W p(Y | A, W)`` over prior draws ``W_ij ~ N(0, omega)``.

    ``-ln[(1/n) sum_k p(Y | A, W_k)]`` via a log-sum-exp accumulated over chunks of
    ``chunk_size`` draws (memory ``O(chunk_size P L V)``). The likelihood is
    evaluated directly from the residuals ``A X^mu W_k - Y^mu`` (no sufficient
    statistics), so this is an independent check of the other two forms.

    Parameters
    ----------
    X, Y : ``(P, L, V)``; A : ``(L, L)`` (unbatched); spec : ModelSpec
    n_samples : int >= 2
    rng : numpy.random.Generator
        Source of the draws of ``W``.

    Returns
    -------
    (estimate, standard_error) : floats
        ``standard_error`` is the delta-method error of ``-ln`` of the mean,
        ``std(w) / (sqrt(n) mean(w))`` for the weights ``w_k = p(Y | A, W_k)``,
        computed in log space. ``-ln`` of a mean is biased upwards by about
        ``standard_error^2 / 2`` (Jensen), negligible when the error is small.

    Only meaningful on tiny sizes: the prior draws must overlap the posterior
    of ``W``, and the weight variance grows exponentially with ``V^2`` and with
    the data (``P L``); the returned error is then itself unreliable.
    """
    spec = check_spec(spec)
    n_samples = check_int("n_samples", n_samples, 2)
    chunk_size = check_int("chunk_size", chunk_size, 1)
    check_generator("rng", rng)
    _, (X, Y, A) = to_torch(X, Y, A, names=("X", "Y", "A"))
    X, Y, A = X.double(), Y.double(), A.double()
    _check_data(X, Y, A, spec)
    V, s2 = spec.V, spec.sigma_sq
    Phi = _features(X, A)
    Yf = Y.reshape(-1, V)
    const = -0.5 * Yf.numel() * math.log(2 * math.pi * s2)
    lse1, lse2 = [], []
    done = 0
    while done < n_samples:
        m = min(chunk_size, n_samples - done)
        W = torch.from_numpy(rng.standard_normal((m, V, V)) * math.sqrt(spec.omega))
        resid = Phi @ W - Yf  # (m, PL, V)
        ll = const - (resid**2).sum((-1, -2)) / (2 * s2)
        lse1.append(torch.logsumexp(ll, 0))
        lse2.append(torch.logsumexp(2 * ll, 0))
        done += m
    log_n = math.log(n_samples)
    log_mean = torch.logsumexp(torch.stack(lse1), 0).item() - log_n  # ln mean(w)
    log_mean2 = torch.logsumexp(torch.stack(lse2), 0).item() - log_n  # ln mean(w^2)
    # relative variance var(w) / mean(w)^2 = mean(w^2)/mean(w)^2 - 1, with the n/(n-1) correction
    rel_var = max(math.expm1(log_mean2 - 2 * log_mean), 0.0) * n_samples / (n_samples - 1)
    return -log_mean, math.sqrt(rel_var / n_samples)
