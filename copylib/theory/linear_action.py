"""The reduced action of linear attention in M*, its order parameters and the plug-in readout.

Everything here is for the cyclic copy task with linear attention
(``ModelSpec(kind="linear", cyclic=True)``) and is plain float64 numpy/scipy.

Order parameters and the reduced action
---------------------------------------
An attention matrix is written ``A = m J/L + q (T - J/L) + A_perp``
(:func:`copylib.posterior.order_parameters.order_parameters`): ``m`` pooling, ``q`` copy,
``r2 = |A_perp|^2`` the weight of the ``n = L^2 - 2`` transverse directions.
With ``xi_L = L (L-1)/(L^2 - 2)`` (see :func:`~copylib.theory.linear.transverse_row_sum_factor`) the
four invariants of the plug-in action are taken as

    alpha_1 = m^2 + (L-1) q^2 + r2,      alpha_2 = L m^2 + xi_L r2,
    gamma_1 = m + (L-1) q,               gamma_2 = L m.

Three versions of the action ``S(m, q)`` (units: nats; only ``A``-dependent
terms, so ``S(0, 0) = 0`` for "mean_field" and "map"):

* ``"mean_field"``: :func:`copylib.posterior.order_parameters.plugin_action` of
  ``A = m J/L + q (T - J/L)`` plus the exact marginal prior
  :func:`copylib.posterior.order_parameters.prior_action_linear`. The readout ``W`` is
  integrated out (log-det "Occam" terms present), ``A_perp = 0``.
* ``"fluct"``: the transverse modes are kept in a radial (one-number)
  treatment (the linear chapter, "Three versions of the reduced action"). Their prior is isotropic,
  ``A_perp ~ N(0, s_c^2 I_n)`` with ``s_c^2 = sigma_G^2/L^2``, so the measure
  of the shell ``|A_perp|^2 = r2`` is ``∝ r2^{n/2-1} exp(-r2/(2 s_c^2)) d r2``.
  We use the entropy ``-(n/2) ln r2`` (the book's choice; the ``-1`` is an
  ``O(1/n)`` correction) and normalise so that without data the transverse
  term vanishes at its minimum ``r2 = n s_c^2`` (= the exact prior mean of
  ``r2``). With ``Lambda = r2/(n s_c^2)`` the transverse term is

      (n/2) (Lambda - 1 - ln Lambda)   (>= 0, = r2/(2 s_c^2) - (n/2) ln r2 + const).

  The data enter through ``alpha_1`` (exact: ``|A|^2`` is additive over
  orthogonal directions) and ``alpha_2`` (``|A 1|^2 = L m^2 + |A_perp 1|^2``
  exactly, because ``<A_perp, J> = 0`` and ``(T - J/L) 1 = 0``; the
  isotropic average of ``|A_perp 1|^2`` over the shell is ``xi_L r2``).
  ``gamma_1, gamma_2`` do not see ``A_perp`` (it is orthogonal to ``S`` and
  ``J``). ``r2`` is then fixed by its saddle point (minimised, not
  integrated: ``n`` is large, the width correction is ``O(ln n)`` and
  ``(m, q)``-independent to leading order). The minimiser obeys
  ``r2* < n s_c^2`` exactly: every data term increases with ``r2``.
* ``"map"``: ``W`` is minimised instead of integrated (what Adam with matching
  weight decays finds). At fixed ``A``,
  ``min_W [SSE/(2 sigma^2) + |W|^2/(2 omega)] = (y2 - tr B^T (K + kappa I)^{-1} B)/(2 sigma^2)``:
  the plug-in action *without* its two log-det terms. The prior part is the
  cheapest ``(g, b)`` with ``(b J + g)/L = A``: minimising
  ``|L A - b J|^2/(2 sigma_G^2) + b^2/(2 sigma_b^2)`` over ``b`` gives exactly
  ``m^2/(2 s_p^2) + (L-1) q^2/(2 s_c^2)`` (+ ``r2/(2 s_c^2)``), i.e.
  :func:`copylib.posterior.order_parameters.prior_action_linear`; there is no entropy.
  The gauge ``A -> c A, W -> W/c`` is fixed by the two priors: the reduced
  MAP action at fixed ``A`` already contains the optimal ``W``.

By the symmetry ``(G, b, W) -> (-G, -b, -W)`` (``(m, q) -> (-m, -q)``), minima
are reported with ``m >= 0``. The functions here work with the *minimum* of
``S``; ``exp(-S(m, q))`` integrated over ``(m, q)`` (e.g. on a grid, with
:func:`~copylib.theory.linear.reduced_action` vectorised) is the corresponding approximation to the
marginal posterior of ``(m, q)``, which is what posterior samples should be
compared with when ``m*`` is not large compared to its spread.

Notation used in the derivations: ``sigma^2 = sigma0_sq L``,
``kappa = sigma^2/omega``, ``eps = V kappa / P`` (noise level of the
readout), ``c = P/(2 sigma^2 V)``, ``s_p^2 = sigma_b^2 + sigma_G^2/L^2``,
``beta = 1/(sigma^2 kappa V^2) = omega/(sigma0^4 L^2 V^2)``, ``ld = 1``
with the log-det terms (mean_field, fluct) and ``0`` without (map).

``ActionConstants`` (``action_constants`` of a spec), ``action_grad``,
``action_hessian``, ``origin_r2`` and ``origin_hessian`` are the batched
kernels the minima, threshold and marginal modules share; the public functions check their
arguments once and call them. Re-exported by :mod:`copylib.theory.linear`.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.optimize.elementwise import find_root

from ..arguments import as_finite_array, check_version
from ..model.network import ModelSpec, check_spec
from ..model.statistics import token_moment
from .plugin_loss import plugin_loss

__all__ = [
    "VERSIONS",
    "transverse_row_sum_factor",
    "reduced_action",
    "hessian_at_origin",
    "predicted_test_loss",
    "copy_share"]

VERSIONS = ("mean_field", "fluct", "map")

# grid in y = ln(r2 / (n s_c^2)) on which the transverse saddle is bracketed (y* < 0 exactly)
_Y_GRID = np.linspace(-40.0, 0.0, 161)


# --------------------------------------------------------------------------
# validation and constants
# --------------------------------------------------------------------------


def check_linear_spec(spec: object) -> ModelSpec:
    """``spec`` if it is a cyclic linear-attention ``ModelSpec`` (the theory's domain), else an error."""
    return check_spec(spec, kind="linear", theory="copylib.theory.linear",
                      cyclic_because="the order-parameter reduction assumes the cyclic task")


@dataclass(frozen=True)
class ActionConstants:
    """The constants of the reduced action of one spec (see :func:`action_constants`).

    ``sig2 = sigma0_sq L``, ``kappa = sig2 / omega``, ``s_p2 = sigma_b^2 + sigma_G^2/L^2``,
    ``s_c2 = sigma_G^2/L^2``, ``n = L^2 - 2`` transverse directions, ``cL = xi_L``
    (:func:`~copylib.theory.linear.transverse_row_sum_factor`). The fields may be float arrays
    (one row per problem of a batch).
    """

    L: int
    V: int
    sig2: float
    kappa: float
    s_p2: float
    s_c2: float
    n: int
    cL: float
    sigma0_sq: float
    omega: float
    sigma_G: float
    sigma_b: float

    @property
    def n_a(self) -> int:
        """Dimension of the row-constant shell (zero grand sum): ``L - 1``."""
        return self.L - 1

    @property
    def n_b(self) -> int:
        """Dimension of the rest shell (zero row sums, orthogonal to ``T``): ``L^2 - L - 1``."""
        return self.L * self.L - self.L - 1


def action_constants(spec: ModelSpec) -> ActionConstants:
    """The :class:`ActionConstants` of a (checked) linear spec."""
    L, V = spec.L, spec.V
    return ActionConstants(
        L=L, V=V, sig2=spec.sigma_sq, kappa=spec.kappa,
        s_p2=spec.sigma_b**2 + spec.sigma_G**2 / L**2, s_c2=spec.sigma_G**2 / L**2,
        n=L * L - 2, cL=L * (L - 1) / (L * L - 2), sigma0_sq=spec.sigma0_sq, omega=spec.omega,
        sigma_G=spec.sigma_G, sigma_b=spec.sigma_b,
    )


def spec_of_constants(k: ActionConstants) -> ModelSpec:
    """The linear ``ModelSpec`` whose :func:`action_constants` are ``k``."""
    return ModelSpec(L=k.L, V=k.V, kind="linear", sigma_G=k.sigma_G, sigma_b=k.sigma_b, omega=k.omega,
                     sigma0_sq=k.sigma0_sq)


def transverse_row_sum_factor(L: int) -> float:
    """``xi_L = L (L-1) / (L^2 - 2)``: the isotropic average of ``|A_perp 1|^2 / |A_perp|^2``.

    Derivation. ``|A 1|^2 = vec(A)^T Q_1 vec(A)`` with ``Q_1 = I_L ⊗ 1 1^T``
    (``tr Q_1 = L^2``; eigenvalue ``L`` on the ``L`` row-constant matrices
    ``e_l 1^T/sqrt(L)``, ``0`` elsewhere). The transverse space is the
    orthogonal complement of ``J/L`` (unit norm, ``<J/L, Q_1 J/L> = |1|^2 = L``)
    and of ``T - J/L`` (zero row sums, ``Q_1 (T - J/L) = 0``), dimension
    ``n = L^2 - 2``. For ``A_perp`` uniform on the sphere of radius ``r`` in it,
    ``E |A_perp 1|^2 = r^2 tr(Pi Q_1)/n = r^2 (L^2 - L)/(L^2 - 2)``.
    Adding ``r^2`` to ``alpha_2`` outright is this with ``xi_L -> 1`` (error ``O(1/L)``).
    """
    if isinstance(L, bool) or not isinstance(L, numbers.Integral) or L < 2:
        raise ValueError(f"L must be an integer >= 2, got {L!r}")
    return L * (L - 1) / (L * L - 2)


# --------------------------------------------------------------------------
# the action and its gradient (internal, broadcast numpy)
# --------------------------------------------------------------------------


def _action_terms(m, q, r2, P, k: ActionConstants):
    """``eps, c = P/(2 sigma^2 V)``, the invariants ``alpha_1, alpha_2, gamma_1, gamma_2`` of the
    symmetric pattern (plus transverse weight) and the denominators ``alpha_i + eps``."""
    L, V = k.L, k.V
    eps = V * k.kappa / P
    a1 = m * m + (L - 1) * q * q + r2
    a2 = L * m * m + k.cL * r2
    return eps, P / (2 * k.sig2 * V), a1, a2, m + (L - 1) * q, L * m, a1 + eps, a2 + eps


def _action_value(m, q, r2, P, k: ActionConstants, version: str):
    """``S`` alone (broadcast); the value of :func:`action_grad`."""
    return _value_of_terms(m, q, r2, k, version, _action_terms(m, q, r2, P, k))


def _value_of_terms(m, q, r2, k: ActionConstants, version: str, terms):
    """``S`` from the :func:`_action_terms` of ``(m, q, r2, P)``."""
    L, V = k.L, k.V
    ld = 0.0 if version == "map" else 1.0
    eps, c, a1, a2, g1, g2, d1, d2 = terms
    S = (
        ld * (V * (V - 1) / 2 * np.log1p(a1 / eps) + V / 2 * np.log1p(a2 / eps))
        - c * ((V - 1) * g1**2 / d1 + g2**2 / d2)
        + m * m / (2 * k.s_p2) + (L - 1) * q * q / (2 * k.s_c2)
    )
    if version == "fluct":
        shell = r2 / (k.n * k.s_c2)  # Lambda
        return S + k.n / 2 * (shell - 1 - np.log(shell))
    return S + r2 / (2 * k.s_c2)


def action_grad(m: np.ndarray | float, q: np.ndarray | float, r2: np.ndarray | float, P: np.ndarray | float,
                k: ActionConstants, version: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``S`` and ``dS/dm, dS/dq, dS/dr2`` (all broadcast), r2 held fixed.

    For "fluct" the transverse term is ``(n/2)(Lambda - 1 - ln Lambda)``; for the
    other versions it is the bare prior ``r2/(2 s_c^2)``.
    """
    L, V = k.L, k.V
    ld = 0.0 if version == "map" else 1.0
    terms = _action_terms(m, q, r2, P, k)
    S = _value_of_terms(m, q, r2, k, version, terms)
    eps, c, a1, a2, g1, g2, d1, d2 = terms
    S_a1 = ld * V * (V - 1) / (2 * d1) + c * (V - 1) * g1**2 / d1**2
    S_a2 = ld * V / (2 * d2) + c * g2**2 / d2**2
    S_g1 = -2 * c * (V - 1) * g1 / d1
    S_g2 = -2 * c * g2 / d2
    dm = 2 * m * S_a1 + 2 * L * m * S_a2 + S_g1 + L * S_g2 + m / k.s_p2
    dq = 2 * (L - 1) * q * S_a1 + (L - 1) * S_g1 + (L - 1) * q / k.s_c2
    dr = S_a1 + k.cL * S_a2 + 1 / (2 * k.s_c2)
    if version == "fluct":
        dr = dr - k.n / (2 * r2)
    return S, dm, dq, dr


def _r2_saddle(m, q, P, k: ActionConstants):
    """Minimiser ``r2*`` of the fluct action at fixed ``(m, q)`` (broadcast arrays).

    Grid in ``y = ln Lambda`` on ``[-40, 0]`` (``y* < 0`` exactly), extended downwards
    when :func:`_y_floor` says ``y*`` may lie lower, bracket around the grid minimum,
    then the root of ``dS/dy`` in the bracket (Chandrupatla, all points at once;
    bisection where the bracket has no sign change): accurate to rounding.
    """
    m, q, P = np.broadcast_arrays(m, q, P)
    shape = m.shape
    m, q, P = m.reshape(-1), q.reshape(-1), P.reshape(-1)
    scale = k.n * k.s_c2
    Y = _Y_GRID
    # not below r2 = 1e-300 (where r2 would underflow; also guards a non-finite floor)
    floor = max(float(np.min(_y_floor(m, q, P, k), initial=Y[0])), math.log(1e-300 / scale))
    if floor < Y[0]:
        # extreme scales (e.g. sigma0_sq -> 0, P -> 1e6) push y* below the default grid:
        # extend it downwards with the same spacing so that its minimum is bracketed
        step = Y[1] - Y[0]
        Y = np.concatenate([Y[0] - step * np.arange(math.ceil((Y[0] - floor) / step), 0, -1), Y])
    S = _action_value(m[..., None], q[..., None], scale * np.exp(Y), P[..., None], k, "fluct")
    i = np.argmin(S, axis=-1)
    lo = Y[np.clip(i - 1, 0, Y.size - 1)]
    hi = Y[np.clip(i + 1, 0, Y.size - 1)]

    def dS(y, m, q, P):  # has the sign of dS/dy
        return action_grad(m, q, scale * np.exp(y), P, k, "fluct")[3]

    y = np.empty(lo.shape)
    bracketed = (dS(lo, m, q, P) < 0) & (dS(hi, m, q, P) > 0)
    if bracketed.any():  # the usual case: a sign change of dS/dy around the grid minimum
        res = find_root(dS, (lo[bracketed], hi[bracketed]), args=(m[bracketed], q[bracketed], P[bracketed]),
                        tolerances=dict(xatol=1e-15, xrtol=4 * np.finfo(float).eps, fatol=0.0, frtol=0.0))
        where = np.flatnonzero(bracketed)
        y[where] = res.x
        bracketed[where[~res.success]] = False
    rest = ~bracketed
    if rest.any():  # a grid end or a zero at a bracket end: bisection towards the sign change
        lo_r, hi_r, m_r, q_r, P_r = lo[rest], hi[rest], m[rest], q[rest], P[rest]
        for _ in range(64):
            mid = 0.5 * (lo_r + hi_r)
            up = dS(mid, m_r, q_r, P_r) > 0  # minimum lies below mid
            hi_r = np.where(up, mid, hi_r)
            lo_r = np.where(up, lo_r, mid)
        y[rest] = 0.5 * (lo_r + hi_r)
    return (scale * np.exp(y)).reshape(shape)


def _y_floor(m, q, P, k: ActionConstants):
    """A ``y = ln(r2 / (n s_c^2))`` below which the fluct action decreases in ``y`` (broadcast).

    ``dS/dy = (n/2)(Lambda - 1) + r2 D(r2)`` with ``D = dS_data/dr2`` positive and decreasing
    in ``r2`` (every data term is increasing and concave in ``r2``), so ``D(r2) <= D(0)``
    and ``dS/dy < 0`` wherever ``Lambda <= 1/2`` and ``r2 D(0) <= n/4``: the saddle ``y*``
    lies above ``ln min(1/2, n / (4 D(0) n s_c^2))``. One unit lower as a margin.
    """
    V = k.V
    _, c, _, _, g1, g2, d1, d2 = _action_terms(m, q, 0.0, P, k)
    D0 = V * (V - 1) / (2 * d1) + k.cL * V / (2 * d2) + c * (V - 1) * g1**2 / d1**2 + k.cL * c * g2**2 / d2**2
    return np.log(np.minimum(0.5, k.n / (4 * D0 * k.n * k.s_c2))) - 1.0


def origin_r2(P: npt.ArrayLike, k: ActionConstants) -> np.ndarray:
    """``r2*`` at ``m = q = 0`` (fluct): unique root of a monotone equation.

    At ``m = q = 0`` the fit terms vanish and ``r2 dS/dr2 = 0`` reads
    ``V(V-1) r2/(r2+eps) + V xi_L r2/(xi_L r2+eps) + r2/s_c^2 - n = 0`` (times 1/2):
    every term increases with ``r2``, so the root in ``(0, n s_c^2)`` is unique
    (the positive root of a cubic). Solved by bisection in ``ln r2``.
    """
    P = np.asarray(P, dtype=np.float64)
    eps = k.V * k.kappa / P
    scale = k.n * k.s_c2
    # -60 covers ordinary scales; extreme ones (eps -> 0) need the floor of _y_floor
    lo = np.minimum(-60.0, np.maximum(_y_floor(np.zeros(()), np.zeros(()), P, k), np.log(1e-300 / scale)))
    hi = np.zeros(P.shape)
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        r2 = scale * np.exp(mid)
        f = k.V * (k.V - 1) * r2 / (r2 + eps) + k.V * k.cL * r2 / (k.cL * r2 + eps) + r2 / k.s_c2 - k.n
        up = f > 0
        hi = np.where(up, mid, hi)
        lo = np.where(up, lo, mid)
    return scale * np.exp(0.5 * (lo + hi))


# --------------------------------------------------------------------------
# public action functions
# --------------------------------------------------------------------------


def _action_arguments(m, q, P, spec, version, r2):
    """Validated arrays for the action and its gradient; ``r2=None`` means its saddle (fluct) or 0."""
    spec = check_linear_spec(spec)
    version = check_version(version, VERSIONS)
    k = action_constants(spec)
    m = as_finite_array("m", m)
    q = as_finite_array("q", q)
    P = as_finite_array("P", P, positive=True)
    if r2 is None:
        r2 = _r2_saddle(m, q, P, k) if version == "fluct" else np.zeros(())
    else:
        r2 = as_finite_array("r2", r2, positive=(version == "fluct"), nonnegative=True)
    return m, q, r2, P, k, version


def reduced_action(m: npt.ArrayLike, q: npt.ArrayLike, P: npt.ArrayLike, spec: ModelSpec, *,
                   version: str = "mean_field", r2: npt.ArrayLike | None = None) -> np.ndarray:
    """Reduced action ``S(m, q)`` of linear attention (nats; ``A``-dependent terms only).

    Parameters
    ----------
    m, q : array_like, broadcastable
        Pooling and copy amplitudes (dimensionless; ``A = m J/L + q (T - J/L)``).
    P : float or array_like > 0, broadcastable with ``m, q``
        Number of training sequences (may be non-integer).
    spec : ModelSpec
        ``kind="linear"``, ``cyclic=True``.
    version : {"mean_field", "fluct", "map"}
        See the module docstring.
    r2 : None or array_like, broadcastable
        Transverse weight ``|A_perp|^2``. ``None``: ``0`` for "mean_field" and
        "map"; for "fluct" the saddle point ``r2*(m, q)`` (see
        ``_transverse_saddle``). Given: ``r2 >= 0`` (``> 0`` for "fluct")
        enters ``alpha_1`` and ``xi_L r2`` enters ``alpha_2``; "mean_field" and
        "map" then add its prior energy ``r2/(2 s_c^2)``, "fluct" the
        transverse term ``(n/2)(Lambda - 1 - ln Lambda)``.

    Returns
    -------
    ndarray
        The broadcast shape of ``m, q, P`` (and ``r2``).

        With ``r2=None`` and "mean_field" this is exactly
        ``plugin_action_of_attention(attention_from_order_parameters(m, q, L), P, spec)
        + prior_action_linear(m, q, spec)``; "map" is the same without the two
        log-det terms ``V(V-1)/2 ln(1 + alpha_1/eps) + V/2 ln(1 + alpha_2/eps)``.
    """
    m, q, r2, P, k, version = _action_arguments(m, q, P, spec, version, r2)
    S, *_ = action_grad(m, q, r2, P, k, version)
    return S


def _reduced_action_gradient(m: npt.ArrayLike, q: npt.ArrayLike, P: npt.ArrayLike, spec: ModelSpec, *,
                            version: str = "mean_field", r2: npt.ArrayLike | None = None
                            ) -> tuple[np.ndarray, np.ndarray]:
    """Gradient ``(dS/dm, dS/dq)`` of :func:`reduced_action` (same arguments and shapes).

    For "fluct" with ``r2=None`` this is the gradient of the minimised action
    ``min_r2 S(m, q, r2)``: by the envelope theorem the partial derivatives at
    ``r2*``. Returns two arrays of the broadcast shape (units: nats).
    """
    m, q, r2, P, k, version = _action_arguments(m, q, P, spec, version, r2)
    _, dm, dq, _ = action_grad(m, q, r2, P, k, version)
    shape = np.broadcast_shapes(np.shape(m), np.shape(q), np.shape(P), np.shape(r2))
    return np.broadcast_to(dm, shape).copy(), np.broadcast_to(dq, shape).copy()


def _transverse_saddle(m: npt.ArrayLike, q: npt.ArrayLike, P: npt.ArrayLike, spec: ModelSpec) -> np.ndarray:
    """Saddle-point transverse weight ``r2*(m, q)`` of the "fluct" action, broadcast shape.

    Minimises ``S_fluct(m, q, r2)`` over ``r2 > 0``. Always
    ``0 < r2* < n s_c^2 = (L^2 - 2) sigma_G^2 / L^2`` (the prior mean).
    """
    spec = check_linear_spec(spec)
    k = action_constants(spec)
    m = as_finite_array("m", m)
    q = as_finite_array("q", q)
    P = as_finite_array("P", P, positive=True)
    return _r2_saddle(m, q, P, k)


def origin_hessian(P: np.ndarray | float, k: ActionConstants,
                   version: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Analytic Hessian blocks ``H_mm, H_qq, H_mq`` at ``m = q = 0`` (broadcast over P)."""
    L, V = k.L, k.V
    ld = 0.0 if version == "map" else 1.0
    r2 = origin_r2(P, k) if version == "fluct" else 0.0
    eps = V * k.kappa / P
    c = P / (2 * k.sig2 * V)
    d1, d2 = r2 + eps, k.cL * r2 + eps
    S_a1 = ld * V * (V - 1) / (2 * d1)
    S_a2 = ld * V / (2 * d2)
    S_g1g1 = -2 * c * (V - 1) / d1
    S_g2g2 = -2 * c / d2
    H_mm = 2 * S_a1 + 2 * L * S_a2 + S_g1g1 + L * L * S_g2g2 + 1 / k.s_p2
    H_qq = 2 * (L - 1) * S_a1 + (L - 1) ** 2 * S_g1g1 + (L - 1) / k.s_c2
    H_mq = (L - 1) * S_g1g1
    return H_mm, H_qq, H_mq


def hessian_at_origin(P: npt.ArrayLike, spec: ModelSpec, version: str = "mean_field") -> np.ndarray:
    """Hessian of ``S(m, q)`` at the symmetric point ``m = q = 0``, shape ``(..., 2, 2)``.

    P : float or array ``(...)`` > 0. Order ``(m, q)``. Closed form: with
    ``d_1 = r2_0 + eps``, ``d_2 = xi_L r2_0 + eps`` (``r2_0 = 0`` except for
    "fluct", where it is ``r2*(0, 0)``), ``ld`` as in the module docstring,

        H_mm = ld [V(V-1)/d_1 + V L/d_2] - 2c [(V-1)/d_1 + L^2/d_2] + 1/s_p^2,
        H_qq = (L-1) { ld V(V-1)/d_1 - 2c (V-1)(L-1)/d_1 + L^2/sigma_G^2 },
        H_mq = -2c (V-1)(L-1)/d_1.

    (The fit terms are quadratic in the ``gamma``'s, which are linear in
    ``(m, q)``; the log-det terms contribute through the ``alpha``'s, which are
    quadratic; at the origin no cross terms survive. For "fluct" the coupling
    ``d^2 S/dm dr2`` vanishes at the origin, so the Hessian of the
    ``r2``-minimised action equals this partial Hessian.)
    """
    spec = check_linear_spec(spec)
    version = check_version(version, VERSIONS)
    P = as_finite_array("P", P, positive=True)
    H_mm, H_qq, H_mq = origin_hessian(P, action_constants(spec), version)
    H = np.empty(P.shape + (2, 2))
    H[..., 0, 0], H[..., 1, 1] = H_mm, H_qq
    H[..., 0, 1] = H[..., 1, 0] = H_mq
    return H


# --------------------------------------------------------------------------
# readout and test loss
# --------------------------------------------------------------------------


def _plugin_readout(A: npt.ArrayLike, P: npt.ArrayLike, spec: ModelSpec, *, r2: npt.ArrayLike = 0.0) -> np.ndarray:
    """Plug-in posterior-mean readout ``W = (K_bar + kappa I)^{-1} B_bar``, shape ``(..., V, V)``.

    ``K_bar = P E[X^T A^T A X]``, ``B_bar = P E[X^T A^T T X]`` (population token
    moments, :func:`copylib.token_moment <copylib.model.statistics.token_moment>`): the
    readout of :func:`copylib.optimal_readout <copylib.posterior.evidence.optimal_readout>`
    with the data moments replaced by their means.

    Parameters
    ----------
    A : array ``(..., L, L)``
    P : float > 0 (or array broadcastable with the batch shape of ``A``)
    spec : ModelSpec (linear, cyclic)
    r2 : float or array ``>= 0``
        An isotropic transverse part ``A_perp`` of weight ``r2`` on top of ``A``:
        ``tr(A^T A)`` gains ``r2`` and ``1^T A^T A 1`` gains ``xi_L r2`` (cross
        terms average to zero), i.e. ``K_bar += P r2 [I/V + (xi_L - 1) J/V^2]``;
        ``B_bar`` is unchanged (``A_perp`` is orthogonal to ``T`` and ``J``).
    """
    spec = check_linear_spec(spec)
    k = action_constants(spec)
    A = as_finite_array("A", A)
    if A.ndim < 2 or A.shape[-2:] != (k.L, k.L):
        raise ValueError(f"A must have shape (..., {k.L}, {k.L}), got {A.shape}")
    P = as_finite_array("P", P, positive=True)
    r2 = as_finite_array("r2", r2, nonnegative=True)
    V = k.V
    At = np.swapaxes(A, -1, -2)
    Kb = token_moment(At @ A, V)
    Bb = token_moment(At @ spec.target, V)
    Pm = P[..., None, None]
    r2m = r2[..., None, None]
    Kb = Pm * (Kb + r2m * (np.eye(V) / V + (k.cL - 1) * np.ones((V, V)) / V**2))
    Bb = Pm * Bb
    return np.linalg.solve(Kb + k.kappa * np.eye(V), np.broadcast_to(Bb, Kb.shape))


def predicted_test_loss(m: npt.ArrayLike, q: npt.ArrayLike, P: npt.ArrayLike, spec: ModelSpec, *,
                        r2: npt.ArrayLike = 0.0) -> np.ndarray:
    """Population loss per position of ``A(m, q)`` (+ transverse ``r2``) with the plug-in readout.

    :func:`copylib.theory.plugin_loss.plugin_loss` of the invariants of ``A(m, q)``. All moments
    are ``a I + b J_V``; on ``1^perp`` (multiplicity ``V-1``) and on ``1`` the readout of
    the plug-in readout has eigenvalues ``w_perp = gamma_1/(alpha_1 + eps)`` and ``w_1 = gamma_2/(alpha_2 + eps)``,
    and :func:`copylib.expected_loss <copylib.model.losses.expected_loss>` becomes

        1 + [(V-1)(alpha_1 w_perp^2 - 2 gamma_1 w_perp) + alpha_2 w_1^2 - 2 gamma_2 w_1] / (L V)

    (dimensionless; ``1`` for ``A = 0``, ``(1-1/L)(1-1/V)`` for pooling
    ``m = 1, q = 0`` at ``P -> inf``, ``0`` for perfect copying). With ``r2``
    this is the loss of a typical posterior attention matrix (``A_perp`` of
    weight ``r2``) with its plug-in readout, neglecting the posterior spread of ``W``.
    Arrays broadcast.
    """
    spec = check_linear_spec(spec)
    k = action_constants(spec)
    m = as_finite_array("m", m)
    q = as_finite_array("q", q)
    P = as_finite_array("P", P, positive=True)
    r2 = as_finite_array("r2", r2, nonnegative=True)
    L = k.L
    return plugin_loss(m * m + (L - 1) * q * q + r2, L * m * m + k.cL * r2, m + (L - 1) * q, L * m, P, spec)


def copy_share(m: npt.ArrayLike, q: npt.ArrayLike, L: int) -> np.ndarray:
    """Share of the copy term in ``gamma_1 = m + (L-1) q``: ``(L-1) q / (m + (L-1) q)``.

    ``gamma_1 = L x`` (the mean attention on the previous token): the pooling part
    contributes ``m``, the copy part ``(L-1) q``. 0 for pure pooling, ``(L-1)/L``
    for ``A ∝ S``. Sign- and scale (gauge) invariant. Returns ``nan`` where
    ``m + (L-1) q = 0``. Broadcast arrays.
    """
    if isinstance(L, bool) or not isinstance(L, numbers.Integral) or L < 2:
        raise ValueError(f"L must be an integer >= 2, got {L!r}")
    m = as_finite_array("m", m)
    q = as_finite_array("q", q)
    g1 = m + (L - 1) * q
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(g1 != 0, (L - 1) * q / np.where(g1 != 0, g1, 1.0), np.nan)




def action_hessian(m: npt.ArrayLike, q: npt.ArrayLike, r2: npt.ArrayLike, P: npt.ArrayLike, k: ActionConstants,
                   version: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``S (B,)``, its gradient ``(B, 3)`` in ``(m, q, r2)`` and the ``(B, 3, 3)`` Hessian."""
    L, V = k.L, k.V
    ld = 0.0 if version == "map" else 1.0
    m, q, r2, P = np.broadcast_arrays(*(np.asarray(x, dtype=np.float64).reshape(-1) for x in (m, q, r2, P)))
    S, dm, dq, dr = action_grad(m, q, r2, P, k, version)
    eps, c, a1, a2, g1, g2, d1, d2 = _action_terms(m, q, r2, P, k)
    S_a1 = ld * V * (V - 1) / (2 * d1) + c * (V - 1) * g1**2 / d1**2
    S_a2 = ld * V / (2 * d2) + c * g2**2 / d2**2
    # second derivatives in the invariants (a1, a2, g1, g2)
    S2 = np.zeros(m.shape + (4, 4))
    S2[:, 0, 0] = -ld * V * (V - 1) / (2 * d1**2) - 2 * c * (V - 1) * g1**2 / d1**3
    S2[:, 1, 1] = -ld * V / (2 * d2**2) - 2 * c * g2**2 / d2**3
    S2[:, 0, 2] = S2[:, 2, 0] = 2 * c * (V - 1) * g1 / d1**2
    S2[:, 1, 3] = S2[:, 3, 1] = 2 * c * g2 / d2**2
    S2[:, 2, 2] = -2 * c * (V - 1) / d1
    S2[:, 3, 3] = -2 * c / d2
    J = np.zeros(m.shape + (4, 3))
    J[:, 0, 0], J[:, 0, 1], J[:, 0, 2] = 2 * m, 2 * (L - 1) * q, 1.0
    J[:, 1, 0], J[:, 1, 2] = 2 * L * m, k.cL
    J[:, 2, 0], J[:, 2, 1] = 1.0, L - 1.0
    J[:, 3, 0] = L
    H = np.einsum("bia,bij,bjc->bac", J, S2, J)
    H[:, 0, 0] += 2 * S_a1 + 2 * L * S_a2 + 1 / k.s_p2
    H[:, 1, 1] += 2 * (L - 1) * S_a1 + (L - 1) / k.s_c2
    # (for "fluct" the transverse entropy's n/(2 r2^2) is added by WhitenedAction, in y = ln Lambda)
    return S, np.stack([dm, dq, dr], axis=1), H


