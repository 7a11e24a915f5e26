"""Order parameters of the attention matrix and the large-P (plug-in) action.

For i.i.d. uniform one-hot tokens every ``V x V`` data moment has the form
``a I + b J_V`` (vocabulary permutation symmetry), so at large ``P`` the data
term of the collapsed posterior depends on the attention matrix ``A`` only
through four invariants (:func:`invariants`). Translation symmetry then
organises ``A`` into a pooling amplitude ``m``, a copy amplitude ``q`` and a
transverse remainder (:func:`order_parameters`); for softmax attention the
natural coordinate is the logit gap ``Delta`` on the previous position
(:func:`copy_attention`, :func:`logit_gap`).

Notation (the book's): ``J`` is the all-ones ``L x L`` matrix, ``T`` the cyclic
shift (``T_{l,l-1} = 1`` for positions ``l = 1, ..., L``, position 1 copying
position ``L``; :func:`copylib.model.task.shift_matrix`), which is the target
matrix of the cyclic task (the non-cyclic task's target drops the wrap-around),
``1`` the all-ones vector and ``<X, Y> = tr X^T Y`` the Frobenius product. Array
indices are 0-based: ``A[l, l-1]`` below is the previous-token weight of the row
with index ``l`` (``A[0, -1]`` wraps to the last column).

Every function accepts numpy arrays or torch tensors with arbitrary leading
batch dimensions and is written once in torch (like :mod:`copylib.model.network`):
numpy input gives numpy float64 output, torch input keeps its dtype and
autograd, so the same definitions serve the theory, the plots and gradient
based minimisation of the reduced action.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import numpy.typing as npt
import torch

from ..arguments import as_real_array, check_attention, check_bool, check_finite, check_int
from ..model.network import ModelSpec, check_spec, from_torch, to_torch
from ..model.task import shift_matrix

__all__ = [
    "invariants",
    "order_parameters",
    "attention_from_order_parameters",
    "copy_attention",
    "logit_gap",
    "copy_weight",
    "plugin_action",
    "plugin_action_of_attention",
    "prior_action_linear",
    "prior_action_softmax",
    "subspace_coverage",
    "plane_coverage",
]


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------


def _check_nonnegative(name: str, t: torch.Tensor) -> None:
    check_finite(name, t)
    if (t.detach() < 0).any().item():
        raise ValueError(f"{name} must be >= 0, got a minimum of {t.detach().min().item()}")


def _common_dtype(tensors) -> torch.dtype:
    """Promoted floating dtype of the tensors (float64 if none is floating)."""
    floats = [t.dtype for t in tensors if t.is_floating_point()]
    return functools.reduce(torch.promote_types, floats) if floats else torch.float64


def _shift(L: int, cyclic: bool, like: torch.Tensor) -> torch.Tensor:
    return torch.as_tensor(shift_matrix(L, cyclic), dtype=like.dtype, device=like.device)


# --------------------------------------------------------------------------
# invariants and order parameters
# --------------------------------------------------------------------------


def invariants(A: npt.ArrayLike | torch.Tensor, cyclic: bool = True) -> tuple[np.ndarray | torch.Tensor, ...]:
    """The four invariants through which the large-P data action depends on ``A``.

    Parameters
    ----------
    A : array, shape ``(..., L, L)``
        Attention matrix (any real matrix).
    cyclic : bool
        Target ``T = shift_matrix(L, cyclic)``.

    Returns
    -------
    alpha_1, alpha_2, gamma_1, gamma_2 : arrays, shape ``(...)``
        ``alpha_1 = tr A^T A = |A|^2``, ``alpha_2 = |A 1|^2``,
        ``gamma_1 = tr A^T T`` (``= sum_l A[l, l-1]`` in the cyclic task),
        ``gamma_2 = 1^T A^T T 1 = (A 1) . (T 1)``.

    Notes
    -----
    ``alpha_1, gamma_1`` are the traces and ``alpha_2, gamma_2`` the grand sums
    of ``M = A^T A`` and ``M = A^T T``, the two quantities that enter
    ``E[X^T M X]``. In the cyclic task ``T 1 = 1``, so ``gamma_2 = 1^T A 1``
    (equation (invariants) of the order-parameter chapter). Without the wrap-around ``T 1 = 1 - e_0`` and
    ``gamma_2 = 1^T A 1 - (A 1)_0``: the grand sum of ``A^T T`` is what the
    plug-in action needs, so that is what is returned.
    """
    check_bool("cyclic", cyclic)
    as_numpy, (A,) = to_torch(A, names=("A",))
    L = check_attention("A", A)
    T = _shift(L, cyclic, A)
    row = A.sum(-1)  # A 1, shape (..., L)
    alpha_1 = (A**2).sum((-1, -2))
    alpha_2 = (row**2).sum(-1)
    gamma_1 = (A * T).sum((-1, -2))
    gamma_2 = (row * T.sum(-1)).sum(-1)
    return tuple(from_torch(as_numpy, t) for t in (alpha_1, alpha_2, gamma_1, gamma_2))


def order_parameters(A: npt.ArrayLike | torch.Tensor) -> tuple[np.ndarray | torch.Tensor, ...]:
    """Pooling amplitude ``m``, copy amplitude ``q`` and transverse weight ``r2``.

    ``A = m J/L + q (T - J/L) + A_perp`` with ``A_perp`` Frobenius-orthogonal
    to ``J`` and to ``T - J/L`` (``T`` the cyclic shift). The two directions are
    orthogonal to each other, ``|J/L|^2 = 1`` and ``|T - J/L|^2 = L - 1``, so

    ::

        m  = 1^T A 1 / L,
        q  = <A, T - J/L> / (L - 1),
        r2 = |A_perp|^2 = |A|^2 - m^2 - (L - 1) q^2.

    A : shape ``(..., L, L)``. Returns ``m, q, r2``, each shape ``(...)``.
    ``r2`` is computed as ``|A_perp|^2`` from the explicit residual (so it is
    never negative from rounding).

    In these coordinates (exact, cyclic task): ``alpha_1 = m^2 + (L-1) q^2 + r2``,
    ``gamma_1 = m + (L-1) q``, ``gamma_2 = L m`` and
    ``alpha_2 = L m^2 + |A_perp 1|^2``, which is ``L m^2`` exactly when
    ``A_perp`` has zero row sums, i.e. when all row sums of ``A`` are equal
    (e.g. every row-stochastic ``A``).
    """
    as_numpy, (A,) = to_torch(A, names=("A",))
    L = check_attention("A", A)
    T = _shift(L, True, A)
    m = A.sum((-1, -2)) / L
    q = ((A * T).sum((-1, -2)) - m) / (L - 1)  # <A, T - J/L> = <A, T> - 1^T A 1 / L
    A_perp = A - _attention_from_mq(m, q, L)
    r2 = (A_perp**2).sum((-1, -2))
    return tuple(from_torch(as_numpy, t) for t in (m, q, r2))


def _attention_from_mq(m: torch.Tensor, q: torch.Tensor, L: int) -> torch.Tensor:
    T = _shift(L, True, m)
    m, q = torch.broadcast_tensors(m, q)
    m, q = m[..., None, None], q[..., None, None]
    return (m - q) / L + q * T


def attention_from_order_parameters(m: npt.ArrayLike | torch.Tensor, q: npt.ArrayLike | torch.Tensor, L: int) -> np.ndarray | torch.Tensor:
    """The symmetric attention matrix ``A = m J/L + q (T - J/L)``.

    m, q : arrays broadcastable to a common shape ``(...)``; L : int >= 2.
    Returns shape ``(..., L, L)``. Inverse of :func:`order_parameters` on
    matrices with ``A_perp = 0`` (then ``r2 = 0``).
    """
    L = check_int("L", L, 2)
    as_numpy, (m, q) = to_torch(m, q, names=("m", "q"))
    check_finite("m", m)
    check_finite("q", q)
    dtype = _common_dtype((m, q))
    return from_torch(as_numpy, _attention_from_mq(m.to(dtype), q.to(dtype), L))


# --------------------------------------------------------------------------
# softmax coordinates
# --------------------------------------------------------------------------


def copy_attention(Delta: npt.ArrayLike | torch.Tensor, L: int) -> np.ndarray | torch.Tensor:
    """Softmax attention with logit gap ``Delta`` on the previous position.

    ``A = row-softmax(Delta T)``: every row has logit ``Delta`` at ``l-1``
    (cyclic) and equal logits elsewhere, so

        A[l, l-1] = c = 1 / (1 + (L-1) e^{-Delta}),   A[l, j] = (1-c)/(L-1) otherwise.

    Delta : shape ``(...)`` (any real); L : int >= 2. Returns ``(..., L, L)``.
    Computed with a numerically stable sigmoid. In order parameters: ``m = 1``,
    ``q = (L c - 1)/(L - 1)``, ``r2 = 0``.
    """
    L = check_int("L", L, 2)
    as_numpy, (Delta,) = to_torch(Delta, names=("Delta",))
    check_finite("Delta", Delta)
    x = Delta - math.log(L - 1)
    c = torch.sigmoid(x)
    other = torch.sigmoid(-x) / (L - 1)
    T = _shift(L, True, Delta)
    A = other[..., None, None] + (c - other)[..., None, None] * T
    return from_torch(as_numpy, A)


def copy_weight(A: npt.ArrayLike | torch.Tensor) -> np.ndarray | torch.Tensor:
    """Mean previous-token weight ``c = (1/L) sum_l A[l, l-1]`` (cyclic), shape ``(...)``.

    A : ``(..., L, L)``. The softmax order parameter (the paper's ``a_G``-like
    quantity): ``c = 1/L`` for uniform pooling, ``c = 1`` for perfect copying.
    Equals ``gamma_1 / L`` of the cyclic task.
    """
    as_numpy, (A,) = to_torch(A, names=("A",))
    L = check_attention("A", A)
    T = _shift(L, True, A)
    return from_torch(as_numpy, (A * T).sum((-1, -2)) / L)


def logit_gap(A: npt.ArrayLike | torch.Tensor) -> np.ndarray | torch.Tensor:
    """Logit gap ``Delta = ln((L-1) c / (1 - c))`` from the copy weight ``c`` of ``A``.

    A : ``(..., L, L)``. Returns shape ``(...)``. Exact inverse of
    :func:`copy_attention`; for any other ``A`` it is the gap of the
    :func:`copy_attention` matrix with the same :func:`copy_weight`.
    Raises ``ValueError`` if some ``c`` lies outside the open interval ``(0, 1)``
    (no finite gap reproduces it).
    """
    as_numpy, (A,) = to_torch(A, names=("A",))
    L = check_attention("A", A)
    T = _shift(L, True, A)
    c = (A * T).sum((-1, -2)) / L
    cd = c.detach()
    bad = (cd <= 0) | (cd >= 1)
    if bad.any().item():
        raise ValueError(
            "A: its mean previous-token weight c = mean_l A[l, l-1] must lie in (0, 1) "
            f"for a finite logit gap, got c = {cd[bad].flatten()[0].item()!r}"
        )
    Delta = math.log(L - 1) + torch.log(c) - torch.log1p(-c)
    return from_torch(as_numpy, Delta)


# --------------------------------------------------------------------------
# plug-in (large-P) data action
# --------------------------------------------------------------------------


def plugin_action(alpha_1: npt.ArrayLike | torch.Tensor, alpha_2: npt.ArrayLike | torch.Tensor, gamma_1: npt.ArrayLike | torch.Tensor,
                  gamma_2: npt.ArrayLike | torch.Tensor, P: npt.ArrayLike | torch.Tensor, spec: ModelSpec,
                  include_constant: bool = False) -> np.ndarray | torch.Tensor:
    """Large-P plug-in data action ``S_data(A)`` from the four invariants.

    The exact collapsed evidence (readout ``W`` integrated out) is, in the
    ``V x V`` dual form,

        -ln p(Y|A) = (V/2) ln det(I + K/kappa)
                     + (1/(2 sigma^2)) [y2 - tr B^T (K + kappa I)^{-1} B] + const,

    ``K = sum_mu X^T A^T A X``, ``B = sum_mu X^T A^T T X``, ``y2 = tr Y^T Y``.
    The plug-in action replaces ``K, B`` by their means ``P E[X^T M X]``
    (``E[X^T M X] = (tr M/V) I + ((1^T M 1 - tr M)/V^2) J_V``). Both means are
    ``a I + b J_V``: they share the eigenbasis {``1``, ``1^perp``} with
    eigenvalues ``P tr M / V`` (multiplicity ``V-1``) and ``P 1^T M 1 / V`` (on
    ``1``). With ``eps = V kappa / P`` this gives exactly

        S_data = V(V-1)/2 ln(1 + alpha_1/eps) + V/2 ln(1 + alpha_2/eps)
                 - P/(2 sigma^2 V) [(V-1) gamma_1^2/(alpha_1 + eps) + gamma_2^2/(alpha_2 + eps)],

    which is equation (plugin-action) of the order-parameter chapter term by term. For the
    non-cyclic task ``gamma_2`` must be the grand sum ``1^T A^T T 1`` of :func:`invariants`
    (``1^T A 1`` is that quantity only for cyclic ``T``).

    Only ``A``-dependent terms are kept by default. With
    ``include_constant=True`` the plug-in data term ``E[y2]/(2 sigma^2) =
    P tr(T^T T)/(2 sigma^2)`` (``= P L/(2 sigma^2)`` cyclic) is added, i.e. the
    plug-in dual form above without the Gaussian normaliser
    ``(P L V/2) ln(2 pi sigma^2)``.

    Parameters
    ----------
    alpha_1, alpha_2 : arrays ``>= 0``, broadcastable; gamma_1, gamma_2 : arrays
        (see :func:`invariants`).
    P : float > 0 or array broadcastable with the invariants (number of sequences;
        may be non-integer for continuous sweeps).
    spec : ModelSpec (uses ``V``, ``kappa = sigma^2/omega``, ``sigma^2``, and for
        the constant ``L`` and ``cyclic``).

    Returns
    -------
    array, broadcast shape ``(...)`` of the inputs. numpy in -> numpy float64
    out; any torch tensor in -> torch out (autograd preserved).
    """
    spec = check_spec(spec)
    include_constant = check_bool("include_constant", include_constant)
    as_numpy, (a1, a2, g1, g2, P) = to_torch(
        alpha_1, alpha_2, gamma_1, gamma_2, P, names=("alpha_1", "alpha_2", "gamma_1", "gamma_2", "P")
    )
    _check_nonnegative("alpha_1", a1)
    _check_nonnegative("alpha_2", a2)
    check_finite("gamma_1", g1)
    check_finite("gamma_2", g2)
    check_finite("P", P)
    if (P.detach() <= 0).any().item():
        raise ValueError(f"P must be > 0, got a minimum of {P.detach().min().item()}")
    dtype = _common_dtype((a1, a2, g1, g2, P))
    a1, a2, g1, g2, P = (t.to(dtype) for t in (a1, a2, g1, g2, P))
    V, sig2 = spec.V, spec.sigma_sq
    eps = V * spec.kappa / P
    S = (
        V * (V - 1) / 2 * torch.log1p(a1 / eps)
        + V / 2 * torch.log1p(a2 / eps)
        - P / (2 * sig2 * V) * ((V - 1) * g1**2 / (a1 + eps) + g2**2 / (a2 + eps))
    )
    if include_constant:
        n_targets = spec.L if spec.cyclic else spec.L - 1  # tr T^T T
        S = S + P * n_targets / (2 * sig2)
    return from_torch(as_numpy, S)


def plugin_action_of_attention(A: npt.ArrayLike | torch.Tensor, P: npt.ArrayLike | torch.Tensor, spec: ModelSpec,
                               include_constant: bool = False) -> np.ndarray | torch.Tensor:
    """:func:`plugin_action` of an attention matrix ``A`` (``(..., L, L)``, ``L = spec.L``).

    Uses ``invariants(A, spec.cyclic)``. Returns shape ``(...)`` (broadcast with ``P``).
    """
    spec = check_spec(spec)
    as_numpy, (A_t,) = to_torch(A, names=("A",))
    check_attention("A", A_t, spec.L)
    inv = invariants(A, spec.cyclic)
    return plugin_action(*inv, P, spec, include_constant=include_constant)


# --------------------------------------------------------------------------
# priors in order-parameter space
# --------------------------------------------------------------------------


def prior_action_linear(m: npt.ArrayLike | torch.Tensor, q: npt.ArrayLike | torch.Tensor, spec: ModelSpec) -> np.ndarray | torch.Tensor:
    """Exact negative log prior (up to a constant) of ``(m, q)`` for linear attention.

    ``m^2/(2 s_p^2) + (L-1) q^2/(2 s_c^2)``, ``s_p^2 = sigma_b^2 + sigma_G^2/L^2``,
    ``s_c^2 = sigma_G^2/L^2``. Shapes: ``m, q`` broadcastable, result ``(...)``.

    Derivation: ``A = (b J + g)/L`` is Gaussian. ``m = <A, J/L> = b + 1^T g 1/L^2``
    has variance ``sigma_b^2 + sigma_G^2 L^2/L^4 = s_p^2``; ``q = <A, T - J/L>/(L-1)
    = <g, T - J/L>/(L (L-1))`` (``J`` is orthogonal to ``T - J/L``) has variance
    ``sigma_G^2 (L-1)/(L^2 (L-1)^2) = s_c^2/(L-1)``; ``m`` and ``q`` are
    uncorrelated (orthogonal directions), hence independent. So this is the
    exact marginal prior of ``(m, q)``.
    """
    spec = check_spec(spec)
    as_numpy, (m, q) = to_torch(m, q, names=("m", "q"))
    check_finite("m", m)
    check_finite("q", q)
    L = spec.L
    s_p2 = spec.sigma_b**2 + spec.sigma_G**2 / L**2
    s_c2 = spec.sigma_G**2 / L**2
    return from_torch(as_numpy, m**2 / (2 * s_p2) + (L - 1) * q**2 / (2 * s_c2))


def prior_action_softmax(Delta: npt.ArrayLike | torch.Tensor, spec: ModelSpec) -> np.ndarray | torch.Tensor:
    """Prior cost ``(L-1) Delta^2/(2 sigma_G^2)`` of the softmax copy state with gap ``Delta``.

    Shape of ``Delta`` is kept. Derivation: a softmax row is unchanged by a
    constant shift of its logits, so the row mean of ``g`` (and ``b``) drops out
    (integrating it gives a constant). The logits producing
    :func:`copy_attention` are ``Delta e_{l-1} + const 1`` per row; the
    smallest-norm choice is ``Delta (e_{l-1} - 1/L)``, i.e. ``g = Delta (T - J/L)``,
    with ``|.|^2 = Delta^2 (1 - 1/L)`` per row and ``Delta^2 (L-1)`` over ``L``
    rows; the Gaussian prior ``|g|^2/(2 sigma_G^2)`` gives the result.
    """
    spec = check_spec(spec)
    as_numpy, (Delta,) = to_torch(Delta, names=("Delta",))
    check_finite("Delta", Delta)
    return from_torch(as_numpy, (spec.L - 1) * Delta**2 / (2 * spec.sigma_G**2))


def subspace_coverage(A: npt.ArrayLike, center: npt.ArrayLike) -> tuple[float, float]:
    """How much of the attention lies in the span of ``J`` and ``T`` (the order-parameter plane).

    A : ``(n, L, L)`` samples of the attention matrix (posterior samples or trained
    networks); center : ``(L, L)`` the symmetric reference point (``0`` for linear
    attention, ``J/L`` for softmax). With ``D = A - center`` and ``Pi`` the
    Frobenius projection on ``span(J, T)``, returns

    * ``samples``: ``sum_k |Pi D_k|^2 / sum_k |D_k|^2``, the fraction of the
      second moment of the samples around ``center`` that the plane captures;
    * ``mean``: ``|Pi mean(D)|^2 / |mean(D)|^2``, the same for the mean pattern.

    Both are in ``[0, 1]``; ``2 / L^2`` is the fraction an isotropic cloud would give.
    """
    A = as_real_array("A", A)
    center = as_real_array("center", center)
    if A.ndim != 3 or A.shape[1] != A.shape[2]:
        raise ValueError(f"A must have shape (n, L, L), got {A.shape}")
    if center.shape != A.shape[1:]:
        raise ValueError(f"center must have shape {A.shape[1:]}, got {center.shape}")
    check_finite("A", A)
    check_finite("center", center)
    D = A - center
    m, q, _ = order_parameters(D)
    proj = attention_from_order_parameters(m, q, A.shape[-1])
    total = (D**2).sum()
    if not total > 0:
        raise ValueError("A must not coincide with center in every sample")
    mean_D = D.mean(0)
    mean_total = (mean_D**2).sum()
    if not mean_total > 0:
        raise ValueError("the mean of A must differ from center")
    return float((proj**2).sum() / total), float((proj.mean(0) ** 2).sum() / mean_total)


def plane_coverage(A: npt.ArrayLike, center: npt.ArrayLike, sign_gauge: bool = False) -> tuple[float, float, float]:
    """:func:`subspace_coverage` of samples ``A`` around ``center``, and ``q`` of their mean.

    A : ``(n, L, L)`` samples; center : ``(L, L)``. With ``sign_gauge`` each sample
    is first multiplied by the sign of its pooling amplitude ``m`` (``A -> -A`` when
    ``m < 0``): linear attention's posterior is symmetric under that flip (with the
    readout), so without fixing the gauge the mean pattern of a well-mixed chain
    set would vanish. Returns ``(samples, mean, q)``: the two fractions of
    :func:`subspace_coverage` and the copy amplitude ``q`` of the (gauge-fixed)
    mean pattern, which tells whether the samples sit in the copy phase.
    """
    sign_gauge = check_bool("sign_gauge", sign_gauge)
    A = as_real_array("A", A)
    if A.ndim != 3 or A.shape[1] != A.shape[2]:
        raise ValueError(f"A must have shape (n, L, L), got {A.shape}")
    check_finite("A", A)
    if sign_gauge:
        # m = 0 exactly keeps the sample as it is (sign 0 would erase it)
        A = A * np.where(order_parameters(A)[0] < 0, -1.0, 1.0)[:, None, None]
    samples, mean = subspace_coverage(A, center)
    _, q, _ = order_parameters(A.mean(0))
    return samples, mean, float(q)
