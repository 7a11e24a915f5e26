"""Saddle-point theory of linear attention in M*: reduced action, minima, thresholds.

Everything here is for the cyclic copy task with linear attention
(``ModelSpec(kind="linear", cyclic=True)``) and is plain float64 numpy/scipy.

Order parameters and the reduced action
---------------------------------------
An attention matrix is written ``A = m J/L + q (T - J/L) + A_perp``
(:func:`copylib.posterior.order_parameters.order_parameters`): ``m`` pooling, ``q`` copy,
``r2 = |A_perp|^2`` the weight of the ``n = L^2 - 2`` transverse directions.
With ``xi_L = L (L-1)/(L^2 - 2)`` (see :func:`transverse_row_sum_factor`) the
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
:func:`reduced_action` vectorised) is the corresponding approximation to the
marginal posterior of ``(m, q)``, which is what posterior samples should be
compared with when ``m*`` is not large compared to its spread.

Notation used in the derivations: ``sigma^2 = sigma0_sq L``,
``kappa = sigma^2/omega``, ``eps = V kappa / P`` (noise level of the
readout), ``c = P/(2 sigma^2 V)``, ``s_p^2 = sigma_b^2 + sigma_G^2/L^2``,
``beta = 1/(sigma^2 kappa V^2) = omega/(sigma0^4 L^2 V^2)``, ``ld = 1``
with the log-det terms (mean_field, fluct) and ``0`` without (map).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, fields

import numpy as np
from scipy import optimize
from scipy.optimize.elementwise import find_root

from ..arguments import as_finite_array, check_positive, check_version
from ..model.network import ModelSpec, check_spec
from ..model.statistics import token_moment
from .plugin_loss import plugin_loss

__all__ = [
    "VERSIONS",
    "ActionMinimum",
    "MinimumCurve",
    "transverse_row_sum_factor",
    "reduced_action",
    "reduced_action_gradient",
    "transverse_saddle",
    "hessian_at_origin",
    "action_minimum",
    "minimum_curve",
    "plugin_readout",
    "predicted_test_loss",
    "copy_share",
    "p1_analytic",
    "p1_numerical",
    "p2_analytic",
    "p2_numerical",
    "p2_numerical_many",
    "susceptibility_m",
    "local_minima",
    "CopyJump",
    "copy_share_jump",
]

VERSIONS = ("mean_field", "fluct", "map")

# grid in y = ln(r2 / (n s_c^2)) on which the transverse saddle is bracketed (y* < 0 exactly)
_Y_GRID = np.linspace(-40.0, 0.0, 161)


# --------------------------------------------------------------------------
# validation and constants
# --------------------------------------------------------------------------


def _check_spec(spec) -> ModelSpec:
    return check_spec(spec, kind="linear", theory="copylib.theory.linear",
                      cyclic_because="the order-parameter reduction assumes the cyclic task")


@dataclass(frozen=True)
class _Const:
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


def _const(spec: ModelSpec) -> _Const:
    L, V = spec.L, spec.V
    return _Const(
        L=L, V=V, sig2=spec.sigma_sq, kappa=spec.kappa,
        s_p2=spec.sigma_b**2 + spec.sigma_G**2 / L**2, s_c2=spec.sigma_G**2 / L**2,
        n=L * L - 2, cL=L * (L - 1) / (L * L - 2), sigma0_sq=spec.sigma0_sq, omega=spec.omega,
        sigma_G=spec.sigma_G, sigma_b=spec.sigma_b,
    )


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


def _action_terms(m, q, r2, P, k: _Const):
    """``eps, c = P/(2 sigma^2 V)``, the invariants ``alpha_1, alpha_2, gamma_1, gamma_2`` of the
    symmetric pattern (plus transverse weight) and the denominators ``alpha_i + eps``."""
    L, V = k.L, k.V
    eps = V * k.kappa / P
    a1 = m * m + (L - 1) * q * q + r2
    a2 = L * m * m + k.cL * r2
    return eps, P / (2 * k.sig2 * V), a1, a2, m + (L - 1) * q, L * m, a1 + eps, a2 + eps


def _action_value(m, q, r2, P, k: _Const, version: str):
    """``S`` alone (broadcast); the value of :func:`_action_grad`."""
    L, V = k.L, k.V
    ld = 0.0 if version == "map" else 1.0
    eps, c, a1, a2, g1, g2, d1, d2 = _action_terms(m, q, r2, P, k)
    S = (
        ld * (V * (V - 1) / 2 * np.log1p(a1 / eps) + V / 2 * np.log1p(a2 / eps))
        - c * ((V - 1) * g1**2 / d1 + g2**2 / d2)
        + m * m / (2 * k.s_p2) + (L - 1) * q * q / (2 * k.s_c2)
    )
    if version == "fluct":
        shell = r2 / (k.n * k.s_c2)  # Lambda
        return S + k.n / 2 * (shell - 1 - np.log(shell))
    return S + r2 / (2 * k.s_c2)


def _action_grad(m, q, r2, P, k: _Const, version: str):
    """``S`` and ``dS/dm, dS/dq, dS/dr2`` (all broadcast), r2 held fixed.

    For "fluct" the transverse term is ``(n/2)(Lambda - 1 - ln Lambda)``; for the
    other versions it is the bare prior ``r2/(2 s_c^2)``.
    """
    L, V = k.L, k.V
    ld = 0.0 if version == "map" else 1.0
    eps, c, a1, a2, g1, g2, d1, d2 = _action_terms(m, q, r2, P, k)
    S = (
        ld * (V * (V - 1) / 2 * np.log1p(a1 / eps) + V / 2 * np.log1p(a2 / eps))
        - c * ((V - 1) * g1**2 / d1 + g2**2 / d2)
        + m * m / (2 * k.s_p2) + (L - 1) * q * q / (2 * k.s_c2)
    )
    S_a1 = ld * V * (V - 1) / (2 * d1) + c * (V - 1) * g1**2 / d1**2
    S_a2 = ld * V / (2 * d2) + c * g2**2 / d2**2
    S_g1 = -2 * c * (V - 1) * g1 / d1
    S_g2 = -2 * c * g2 / d2
    dm = 2 * m * S_a1 + 2 * L * m * S_a2 + S_g1 + L * S_g2 + m / k.s_p2
    dq = 2 * (L - 1) * q * S_a1 + (L - 1) * S_g1 + (L - 1) * q / k.s_c2
    dr = S_a1 + k.cL * S_a2
    if version == "fluct":
        shell = r2 / (k.n * k.s_c2)  # Lambda
        S = S + k.n / 2 * (shell - 1 - np.log(shell))
        dr = dr + 1 / (2 * k.s_c2) - k.n / (2 * r2)
    else:
        S = S + r2 / (2 * k.s_c2)
        dr = dr + 1 / (2 * k.s_c2)
    return S, dm, dq, dr


def _r2_saddle(m, q, P, k: _Const):
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
        return _action_grad(m, q, scale * np.exp(y), P, k, "fluct")[3]

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


def _y_floor(m, q, P, k: _Const):
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


def _r2_origin(P, k: _Const):
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
    spec = _check_spec(spec)
    version = check_version(version, VERSIONS)
    k = _const(spec)
    m = as_finite_array("m", m)
    q = as_finite_array("q", q)
    P = as_finite_array("P", P, positive=True)
    if r2 is None:
        r2 = _r2_saddle(m, q, P, k) if version == "fluct" else np.zeros(())
    else:
        r2 = as_finite_array("r2", r2, positive=(version == "fluct"), nonnegative=True)
    return m, q, r2, P, k, version


def reduced_action(m, q, P, spec: ModelSpec, *, version: str = "mean_field", r2=None):
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
        :func:`transverse_saddle`). Given: ``r2 >= 0`` (``> 0`` for "fluct")
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
    S, *_ = _action_grad(m, q, r2, P, k, version)
    return S


def reduced_action_gradient(m, q, P, spec: ModelSpec, *, version: str = "mean_field", r2=None):
    """Gradient ``(dS/dm, dS/dq)`` of :func:`reduced_action` (same arguments and shapes).

    For "fluct" with ``r2=None`` this is the gradient of the minimised action
    ``min_r2 S(m, q, r2)``: by the envelope theorem the partial derivatives at
    ``r2*``. Returns two arrays of the broadcast shape (units: nats).
    """
    m, q, r2, P, k, version = _action_arguments(m, q, P, spec, version, r2)
    _, dm, dq, _ = _action_grad(m, q, r2, P, k, version)
    shape = np.broadcast_shapes(np.shape(m), np.shape(q), np.shape(P), np.shape(r2))
    return np.broadcast_to(dm, shape).copy(), np.broadcast_to(dq, shape).copy()


def transverse_saddle(m, q, P, spec: ModelSpec):
    """Saddle-point transverse weight ``r2*(m, q)`` of the "fluct" action, broadcast shape.

    Minimises ``S_fluct(m, q, r2)`` over ``r2 > 0``. Always
    ``0 < r2* < n s_c^2 = (L^2 - 2) sigma_G^2 / L^2`` (the prior mean).
    """
    spec = _check_spec(spec)
    k = _const(spec)
    m = as_finite_array("m", m)
    q = as_finite_array("q", q)
    P = as_finite_array("P", P, positive=True)
    return _r2_saddle(m, q, P, k)


def _origin_hessian(P, k: _Const, version: str):
    """Analytic Hessian blocks ``H_mm, H_qq, H_mq`` at ``m = q = 0`` (broadcast over P)."""
    L, V = k.L, k.V
    ld = 0.0 if version == "map" else 1.0
    r2 = _r2_origin(P, k) if version == "fluct" else 0.0
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


def hessian_at_origin(P, spec: ModelSpec, version: str = "mean_field"):
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
    spec = _check_spec(spec)
    version = check_version(version, VERSIONS)
    P = as_finite_array("P", P, positive=True)
    H_mm, H_qq, H_mq = _origin_hessian(P, _const(spec), version)
    H = np.empty(P.shape + (2, 2))
    H[..., 0, 0], H[..., 1, 1] = H_mm, H_qq
    H[..., 0, 1] = H[..., 1, 0] = H_mq
    return H


# --------------------------------------------------------------------------
# readout and test loss
# --------------------------------------------------------------------------


def plugin_readout(A, P, spec: ModelSpec, *, r2=0.0):
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
    spec = _check_spec(spec)
    k = _const(spec)
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


def predicted_test_loss(m, q, P, spec: ModelSpec, *, r2=0.0):
    """Population loss per position of ``A(m, q)`` (+ transverse ``r2``) with the plug-in readout.

    :func:`copylib.theory.plugin_loss.plugin_loss` of the invariants of ``A(m, q)``. All moments
    are ``a I + b J_V``; on ``1^perp`` (multiplicity ``V-1``) and on ``1`` the readout of
    :func:`plugin_readout` has eigenvalues ``w_perp = gamma_1/(alpha_1 + eps)`` and ``w_1 = gamma_2/(alpha_2 + eps)``,
    and :func:`copylib.expected_loss <copylib.model.losses.expected_loss>` becomes

        1 + [(V-1)(alpha_1 w_perp^2 - 2 gamma_1 w_perp) + alpha_2 w_1^2 - 2 gamma_2 w_1] / (L V)

    (dimensionless; ``1`` for ``A = 0``, ``(1-1/L)(1-1/V)`` for pooling
    ``m = 1, q = 0`` at ``P -> inf``, ``0`` for perfect copying). With ``r2``
    this is the loss of a typical posterior attention matrix (``A_perp`` of
    weight ``r2``) with its plug-in readout, neglecting the posterior spread of ``W``.
    Arrays broadcast.
    """
    spec = _check_spec(spec)
    k = _const(spec)
    m = as_finite_array("m", m)
    q = as_finite_array("q", q)
    P = as_finite_array("P", P, positive=True)
    r2 = as_finite_array("r2", r2, nonnegative=True)
    L = k.L
    return plugin_loss(m * m + (L - 1) * q * q + r2, L * m * m + k.cL * r2, m + (L - 1) * q, L * m, P, spec)


def copy_share(m, q, L: int):
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


# --------------------------------------------------------------------------
# minimisation
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class ActionMinimum:
    """Global minimum of the reduced action at one ``P`` (see :func:`action_minimum`).

    m, q : floats, ``m >= 0``; r2 : transverse weight (``0`` unless "fluct");
    action : ``S`` at the minimum (nats); test_loss : :func:`predicted_test_loss`;
    grad_norm : ``|grad S|`` at the returned point (in prior-whitened units).
    """

    P: float
    version: str
    m: float
    q: float
    r2: float
    action: float
    test_loss: float
    grad_norm: float


@dataclass(frozen=True)
class MinimumCurve:
    """:func:`minimum_curve` result: arrays of shape ``(n_P,)``."""

    P: np.ndarray
    version: str
    m: np.ndarray
    q: np.ndarray
    r2: np.ndarray
    action: np.ndarray
    test_loss: np.ndarray
    copy_share: np.ndarray


class _Whitened:
    """The action in prior-whitened coordinates ``z = (m/s_p, q sqrt(L-1)/s_c[, ln Lambda])``,
    for a batch of points ``z (B, d)`` at sample sizes ``P (B,)``.

    ``value_grad_hess(z, P)`` returns the action ``(B,)``, its gradient ``(B, d)``
    and its analytic Hessian ``(B, d, d)`` (chain rule through the four invariants).
    """

    def __init__(self, k: _Const, version: str):
        self.k, self.version = k, version
        self.fl = version == "fluct"
        self.d = 3 if self.fl else 2
        self.sm = np.sqrt(k.s_p2)
        self.sq = np.sqrt(k.s_c2 / (k.L - 1))
        self.rs = k.n * k.s_c2

    def at(self, idx):
        """The action of rows ``idx`` of the batch (itself when the constants are shared)."""
        if not isinstance(self.k.L, np.ndarray):
            return self
        return _Whitened(_Const(**{f.name: getattr(self.k, f.name)[idx] for f in fields(_Const)}), self.version)

    def phys(self, z):
        m, q = z[:, 0] * self.sm, z[:, 1] * self.sq
        r2 = self.rs * np.exp(z[:, 2]) if self.fl else np.zeros_like(m)
        return m, q, r2

    def zvec(self, m, q, r2):
        cols = [np.asarray(m, dtype=np.float64) / self.sm, np.asarray(q, dtype=np.float64) / self.sq]
        if self.fl:
            cols.append(np.log(np.asarray(r2, dtype=np.float64) / self.rs))
        return np.stack(np.broadcast_arrays(*cols), axis=-1)

    def value_grad_hess(self, z, P):
        m, q, r2 = self.phys(z)
        S, g, H = _action_hessian(m, q, r2, P, self.k, self.version)
        if self.fl:
            D = np.stack([np.broadcast_to(self.sm, r2.shape), np.broadcast_to(self.sq, r2.shape), r2], axis=1)
            grad = D * g
            hess = D[:, :, None] * H * D[:, None, :]
            # d^2/dy^2 = r2^2 S_rr + r2 S_r; the entropy's r2^2 * n/(2 r2^2) = n/2 is added here,
            # already whitened: r2^2 underflows to 0 at extreme scales (division by zero)
            hess[:, 2, 2] += self.k.n / 2 + r2 * g[:, 2]
        else:
            D = np.stack([np.broadcast_to(self.sm, m.shape), np.broadcast_to(self.sq, m.shape)], axis=1)
            grad = D * g[:, :2]
            hess = D[:, :, None] * H[:, :2, :2] * D[:, None, :]
        return S, grad, hess


def _action_hessian(m, q, r2, P, k: _Const, version: str):
    """``S (B,)``, its gradient ``(B, 3)`` in ``(m, q, r2)`` and the ``(B, 3, 3)`` Hessian."""
    L, V = k.L, k.V
    ld = 0.0 if version == "map" else 1.0
    m, q, r2, P = np.broadcast_arrays(*(np.asarray(x, dtype=np.float64).reshape(-1) for x in (m, q, r2, P)))
    S, dm, dq, dr = _action_grad(m, q, r2, P, k, version)
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
    # (for "fluct" the transverse entropy's n/(2 r2^2) is added by _Whitened, in y = ln Lambda)
    return S, np.stack([dm, dq, dr], axis=1), H


def _trust_region_step(g, H, radius):
    """Exact solution of ``min g.p + p.H.p/2`` over ``|p| <= radius`` for a batch of small
    problems (``g (B, d)``, ``H (B, d, d)``), via the eigendecomposition of ``H``.

    Returns ``p (B, d)`` and whether it lies on the boundary. The multiplier
    ``mu`` of ``(H + mu I) p = -g`` solves ``|p(mu)| = radius`` by safeguarded
    Newton on ``1/|p| - 1/radius`` (More & Sorensen); in the "hard case"
    (gradient orthogonal to the lowest eigenvector of an indefinite ``H``) the
    step is completed along that eigenvector.
    """
    lam, U = np.linalg.eigh(H)
    a = np.einsum("bij,bi->bj", U, g)  # components of g along the eigenvectors
    lam_min = lam[:, 0]
    lo = np.maximum(0.0, -lam_min)
    gn = np.linalg.norm(g, axis=1)
    hi = lo + gn / radius + np.abs(lam).max(axis=1) + 1e-300

    def norm_p(mu):
        return np.sqrt(((a / (lam + mu[:, None])) ** 2).sum(1))

    with np.errstate(divide="ignore", invalid="ignore"):
        interior = (lam_min > 0) & (norm_p(np.zeros_like(lam_min)) <= radius)
        mu = np.where(interior, 0.0, hi)
        todo = ~interior
        # |p(mu)| decreases from |p(lo+)| to below radius at hi: Newton from the right is monotone
        for _ in range(100):
            if not todo.any():
                break
            d = lam[todo] + mu[todo, None]
            q = (a[todo] / d) ** 2
            pn = np.sqrt(q.sum(1))
            dpn = -(q / d).sum(1) / pn  # d|p|/dmu
            phi = 1 / pn - 1 / radius[todo]
            dphi = -dpn / pn**2
            step = phi / dphi
            new = mu[todo] - step
            new = np.where(new <= lo[todo], 0.5 * (mu[todo] + lo[todo]), new)
            done = np.abs(new - mu[todo]) <= 1e-15 * np.maximum(new, 1e-300) + 1e-300
            mu[todo] = new
            idx = np.flatnonzero(todo)
            todo[idx[done]] = False
        p = -np.einsum("bij,bj->bi", U, a / (lam + mu[:, None]))
        p = np.where(np.isfinite(p), p, 0.0)
    pn = np.linalg.norm(p, axis=1)
    hard = ~interior & (pn < radius * (1 - 1e-8))
    if hard.any():  # complete the step to the boundary along the lowest eigenvector
        tau = np.sqrt(np.maximum(radius[hard] ** 2 - pn[hard] ** 2, 0.0))
        p[hard] += tau[:, None] * U[hard, :, 0]
    return p, ~interior


def _descend_many(obj: _Whitened, z0, P, *, gtol: float = 1e-12, maxiter: int = 500,
                  radius0: float = 1.0, max_radius: float = 1000.0, eta: float = 0.15):
    """Trust-region Newton with the exact subproblem (scipy's ``trust-exact`` scheme and
    constants) for a batch of starts ``z0 (B, d)`` at ``P (B,)``, all iterated together.

    Each start stops on its own when its gradient norm is below ``gtol``, when the
    model predicts no decrease (precision exhausted) or after ``maxiter`` steps.
    Returns the end points (with the sign convention ``m >= 0``) and their action.
    """
    z = np.array(z0, dtype=np.float64)
    P = np.asarray(P, dtype=np.float64)
    S, g, H = obj.value_grad_hess(z, P)
    radius = np.full(z.shape[0], radius0)
    active = np.linalg.norm(g, axis=1) >= gtol
    for _ in range(maxiter):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        p, hits = _trust_region_step(g[idx], H[idx], radius[idx])
        # as scipy: the model value, then its difference to S, so that the predicted
        # reduction rounds to zero (and the search stops) once steps fall below S's precision
        model = S[idx] + np.einsum("bi,bi->b", g[idx], p) + 0.5 * np.einsum("bi,bij,bj->b", p, H[idx], p)
        predicted = S[idx] - model
        # a trial point may leave the action's domain (r2 underflows to 0 far out in ln rho):
        # its value is not finite and the step is rejected below
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            S_new, g_new, H_new = obj.at(idx).value_grad_hess(z[idx] + p, P[idx])
        rho = (S[idx] - S_new) / np.where(predicted > 0, predicted, 1.0)
        stop = ~(predicted > 0)
        r = radius[idx]
        r = np.where(rho < 0.25, 0.25 * r, np.where((rho > 0.75) & hits, np.minimum(2 * r, max_radius), r))
        radius[idx] = r
        take = (rho > eta) & ~stop & np.isfinite(S_new)
        t = idx[take]
        z[t] += p[take]
        S[t], g[t], H[t] = S_new[take], g_new[take], H_new[take]
        active[idx[stop]] = False
        active[t] = np.linalg.norm(g[t], axis=1) >= gtol
    flip = z[:, 0] < 0  # sign symmetry (m, q) -> (-m, -q)
    z[flip, :2] = -z[flip, :2]
    return z, S


def _starts(obj: _Whitened, r2_0: float, hint, H0, eig=None):
    """Pooling-like, copy-like and mixed starts, the unstable direction of the origin (if
    any) and the hint; ``r2_0``: the transverse saddle at the origin (fluct) or 0;
    ``eig``: ``eigh(H0)`` if already known."""
    k = obj.k
    L, V = k.L, k.V
    c_copy = (V * k.sigma_G**2 / (k.omega * L**3)) ** 0.25
    ms = np.array([0.05, 0.5, 1.5, c_copy, 3 * c_copy])
    qs = np.array([0.0, 0.005, 0.01, c_copy, 0.7 * c_copy])
    zs = list(obj.zvec(ms, qs, r2_0))
    w, U = np.linalg.eigh(H0) if eig is None else eig
    if w[0] < 0:
        v = U[:, 0] * (1.0 if U[0, 0] >= 0 else -1.0)
        for a in (1e-2, 1.0):
            zs.append(np.concatenate([a * v, [math.log(r2_0 / obj.rs)]]) if obj.fl else a * v)
    if hint is not None and hint[0] > 0:
        zs.insert(0, _hint_start(obj, r2_0, hint))
    return zs


def _hint_start(obj: _Whitened, r2_0: float, hint):
    """The start at a hint ``(m, q, r2)`` (``m > 0``); without its own ``r2`` at the origin's."""
    m, q, r2 = hint
    return obj.zvec(m, q, r2 if (obj.fl and r2 > 0) else r2_0)


def _stack(ks: list) -> _Const:
    """One :class:`_Const` for a batch: ``ks[0]`` if all are the same, else float arrays row by row."""
    if all(k is ks[0] for k in ks):
        return ks[0]
    return _Const(**{f.name: np.array([getattr(k, f.name) for k in ks], dtype=np.float64) for f in fields(_Const)})


def _minimise_many(Ps, k, version: str, hints=None, standard: bool = True) -> list:
    """Global minimum (:class:`ActionMinimum`) at each ``P`` of ``Ps``: the multi-start search of
    :func:`action_minimum`, with the starts of all ``P`` descended together.

    k : one :class:`_Const`, or a list of them (one per ``P``: several specs in one batch);
    hints : optional list (one per ``P``) of lists of extra ``(m, q, r2)`` starts;
    standard : whether to use the standard starts too (False: the hints only).
    """
    Ps = [float(P) for P in Ps]
    ks = list(k) if isinstance(k, (list, tuple)) else [k] * len(Ps)
    objs = {id(kk): _Whitened(kk, version) for kk in ks}
    kP = _stack(ks)
    fl = version == "fluct"
    Pa = np.asarray(Ps)
    r2_origin = _r2_origin(Pa, kP) if fl else np.zeros(Pa.size)
    S_origin = _action_grad(0.0, 0.0, r2_origin, Pa, kP, version)[0]
    H_mm, H_qq, H_mq = np.broadcast_arrays(*_origin_hessian(Pa, kP, version))
    objP = _Whitened(kP, version)
    H0s = np.zeros((Pa.size, 2, 2))
    H0s[:, 0, 0] = H_mm * kP.s_p2
    H0s[:, 0, 1] = H0s[:, 1, 0] = H_mq * objP.sm * objP.sq
    H0s[:, 1, 1] = H_qq * objP.sq**2
    w, U = np.linalg.eigh(H0s)
    origin_stable = np.linalg.eigvalsh(H0s)[:, 0] > 0
    zs, owner = [], []
    for i in range(Pa.size):
        obj, r2_0 = objs[id(ks[i])], float(r2_origin[i])
        starts = _starts(obj, r2_0, None, H0s[i], (w[i], U[i])) if standard else []
        for hint in (hints[i] if hints is not None else []):
            starts = [_hint_start(obj, r2_0, hint)] + starts if hint[0] > 0 else starts
        zs += starts
        owner += [i] * len(starts)
    owner = np.asarray(owner)
    obj_rows = _Whitened(_stack([ks[o] for o in owner]), version)
    z, f = _descend_many(obj_rows, np.asarray(zs), Pa[owner])
    # the lowest end point of each P (the first of equal values, as a sequential search keeps)
    best = np.array([np.flatnonzero(owner == i)[np.argmin(f[owner == i])] for i in range(Pa.size)])
    S0 = np.asarray(S_origin, dtype=np.float64)
    at_origin = (z[best, 0] <= 1e-300) | (origin_stable & (f[best] >= S0 - 1e-12 * np.maximum(1.0, np.abs(S0))))
    m, q, r2 = obj_rows.at(best).phys(z[best])
    gn = np.zeros(Pa.size)
    off = np.flatnonzero(~at_origin)  # the gradient only where the minimum is not the origin (as reported)
    if off.size:
        gn[off] = np.linalg.norm(obj_rows.at(best[off]).value_grad_hess(z[best[off]], Pa[off])[1], axis=1)
    m, q = (np.where(at_origin, 0.0, a) for a in (m, q))
    r2 = np.where(at_origin, r2_origin, r2)
    S = np.where(at_origin, S0, f[best])
    loss = np.empty(Pa.size)
    for kk in {id(kk): kk for kk in ks}.values():  # one call per spec
        mine = np.array([kj is kk for kj in ks])
        loss[mine] = predicted_test_loss(m[mine], q[mine], Pa[mine], _spec_from(kk), r2=r2[mine])
    return [ActionMinimum(P=Ps[i], version=version, m=float(m[i]), q=float(q[i]), r2=float(r2[i]),
                          action=float(S[i]), test_loss=float(loss[i]), grad_norm=float(gn[i]))
            for i in range(Pa.size)]


def _minimise(P: float, k: _Const, version: str, hint=None) -> ActionMinimum:
    return _minimise_many([P], k, version, None if hint is None else [[hint]])[0]


def _spec_from(k: _Const) -> ModelSpec:
    return ModelSpec(L=k.L, V=k.V, kind="linear", sigma_G=k.sigma_G, sigma_b=k.sigma_b, omega=k.omega,
                     sigma0_sq=k.sigma0_sq)


def action_minimum(P, spec: ModelSpec, version: str = "mean_field", *, hint=None) -> ActionMinimum:
    """Global minimiser ``(m*, q*)`` (and ``r2*`` for "fluct") of the reduced action at one ``P``.

    Multi-start trust-region Newton (scipy ``trust-exact`` with the analytic
    Hessian) in prior-whitened coordinates (``m/s_p``, ``q sqrt(L-1)/s_c``, and
    ``ln(r2/(n s_c^2))`` jointly for "fluct": minimising jointly equals
    minimising the ``r2``-saddle action) from pooling-like, copy-like and mixed
    starts, plus the unstable eigendirection of the origin Hessian when there
    is one; the lowest end point wins. The
    symmetric point is returned exactly (``m = q = 0``) when it is a local
    minimum and no start finds a lower action. ``m >= 0`` (sign symmetry).

    P : float > 0; spec : ModelSpec (linear, cyclic); version : see module doc;
    hint : optional ``(m, q, r2)`` extra start (e.g. the minimum at a nearby ``P``).
    """
    spec = _check_spec(spec)
    version = check_version(version, VERSIONS)
    P = check_positive("P", P)
    if hint is not None:
        h = as_finite_array("hint", hint)
        if h.shape != (3,):
            raise ValueError(f"hint must be None or (m, q, r2), got shape {h.shape}")
        hint = tuple(float(x) for x in h)
    return _minimise(P, _const(spec), version, hint)


def _scan_minima(segments, version: str) -> list:
    """Global minima along increasing sample sizes, for several segments ``(Ps, k, before)`` at once.

    All points are descended together, then each ``P`` is restarted from its neighbours'
    minima (the warm start of a sequential scan, from both sides; ``before``: the minimum
    just below ``Ps[0]``, or None); the lower end point wins. Returns one list per segment.
    """
    Ps = np.concatenate([np.asarray(seg[0], dtype=np.float64) for seg in segments])
    ks = [seg[1] for seg in segments for _ in seg[0]]
    flat = _minimise_many(Ps, ks, version)
    bounds = np.cumsum([0] + [len(seg[0]) for seg in segments])
    hints = []
    for (_, _, before), lo, hi in zip(segments, bounds[:-1], bounds[1:]):
        first = flat[lo:hi]
        for a, b in zip([before] + first[:-1], first[1:] + [None]):
            hints.append([(r.m, r.q, r.r2) for r in (a, b) if r is not None and r.m > 0])
    redo = [j for j, h in enumerate(hints) if h]
    out = list(flat)
    if redo:
        second = _minimise_many(Ps[redo], [ks[j] for j in redo], version, [hints[j] for j in redo], standard=False)
        for j, r in zip(redo, second):
            if r.action < flat[j].action:
                out[j] = r
    return [out[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:])]


def minimum_curve(P_grid, spec: ModelSpec, version: str = "mean_field") -> MinimumCurve:
    """:func:`action_minimum` over a grid of ``P`` (each warm-started from its neighbour).

    P_grid : 1-d array_like of ``P > 0`` (any order; results in the given order).
    Returns :class:`MinimumCurve` (``m, q, r2, action, test_loss, copy_share``).
    """
    spec = _check_spec(spec)
    version = check_version(version, VERSIONS)
    Pg = as_finite_array("P_grid", P_grid, positive=True)
    if Pg.ndim != 1 or Pg.size == 0:
        raise ValueError(f"P_grid must be a non-empty 1-d array, got shape {Pg.shape}")
    k = _const(spec)
    order = np.argsort(Pg, kind="stable")
    out = [None] * Pg.size
    for j, r in enumerate(_scan_minima([(Pg[order], k, None)], version)[0]):
        out[order[j]] = r
    m = np.array([r.m for r in out])
    q = np.array([r.q for r in out])
    return MinimumCurve(
        P=Pg.copy(), version=version, m=m, q=q, r2=np.array([r.r2 for r in out]),
        action=np.array([r.action for r in out]), test_loss=np.array([r.test_loss for r in out]),
        copy_share=copy_share(m, q, k.L),
    )


# --------------------------------------------------------------------------
# P1: instability of the symmetric point
# --------------------------------------------------------------------------


def _smallest_positive_root(coeffs_ascending, f) -> float:
    """Smallest positive real root of a polynomial, polished with brentq on ``f``."""
    roots = np.polynomial.polynomial.polyroots(coeffs_ascending)
    real = np.sort(roots[(np.abs(roots.imag) <= 1e-9 * np.abs(roots)) & (roots.real > 0)].real)
    if real.size == 0:
        raise ArithmeticError("no positive root: the symmetric point never loses stability")
    r = real[0]
    lo, hi = r * (1 - 1e-6), r * (1 + 1e-6)
    if f(lo) * f(hi) < 0:
        r = optimize.brentq(f, lo, hi, xtol=1e-15 * r, rtol=1e-15)
    return float(r)


def _first_instability(f, per_decade: int, what: str, vectorised: bool = True):
    """Bracket ``(a, b)`` with ``f(a) > 0 >= f(b)`` around the first sign change of ``f(P)``.

    Geometric scan with ``per_decade`` points per decade over ``[1e-3, 1e9]`` (where ``P1``
    lies for ordinary scales), widened by factors of ``1e6`` down to ``1e-300`` while
    ``f`` is not positive at the low end (e.g. ``sigma0_sq -> 0``) and up to ``1e300`` while
    it has no sign change (e.g. ``sigma0_sq -> inf``). ``f`` maps an array of ``P`` to an
    array (``vectorised``) or a float to a float (then the scan stops at the first ``f <= 0``).
    """
    def first_nonpositive(grid):
        if vectorised:
            idx = np.flatnonzero(f(grid) <= 0)
            return int(idx[0]) if idx.size else None
        return next((i for i, P in enumerate(grid) if f(P) <= 0), None)

    lo, hi = 1e-3, 1e9
    while first_nonpositive(np.array([lo])) is not None:
        if lo < 1e-294:
            raise ArithmeticError(f"the symmetric point of the {what} action is unstable already at P = {lo:g}")
        lo *= 1e-6
    while True:
        grid = np.geomspace(lo, hi, round(per_decade * math.log10(hi / lo)) + 1)
        i = first_nonpositive(grid)
        if i is not None:
            return grid[i - 1], grid[i]
        if hi > 1e294:
            raise ArithmeticError(f"the symmetric point of the {what} action stays stable up to P = {hi:g}")
        lo, hi = hi, hi * 1e6


def _p1_fluct(k: _Const, which: str) -> float:
    def f(P):
        """``H_mm`` ("m_only") or the lowest eigenvalue of ``H`` (zero exactly where ``det H`` is).

        Not ``det H`` itself: at extreme scales both eigenvalues turn negative within one
        grid step, ``det H > 0`` again, and a scan on its sign misses the instability.
        """
        with np.errstate(over="ignore", invalid="ignore"):  # far past P1 the entries overflow
            H_mm, H_qq, H_mq = _origin_hessian(np.asarray(P, dtype=np.float64), k, "fluct")
            if which == "m_only":
                return H_mm
            tr, det = H_mm + H_qq, H_mm * H_qq - H_mq**2
            lam_max = 0.5 * (tr + np.hypot(H_mm - H_qq, 2 * H_mq))
            # det / lam_max avoids the cancellation of (tr - hypot) / 2 near lam_min = 0
            return np.where(tr > 0, det / np.where(tr > 0, lam_max, 1.0), tr - lam_max)

    a, b = _first_instability(f, 20, "fluct")
    return float(optimize.brentq(lambda P: float(f(P)), a, b, xtol=1e-15 * a, rtol=1e-15))


def p1_analytic(spec: ModelSpec, version: str = "mean_field", form: str = "exact") -> float:
    """Threshold ``P1`` where the symmetric point ``m = q = 0`` stops being a minimum.

    Parameters
    ----------
    spec : ModelSpec (linear, cyclic)
    version : {"mean_field", "fluct", "map"}
    form : {"exact", "m_only", "leading"}
        ``"exact"``: the smallest ``P`` with ``det H(P) = 0`` (``H`` of
        :func:`hessian_at_origin`): the lowest eigenvalue crosses zero there.
        ``"m_only"``: ``H_mm(P) = 0`` (the curvature along ``m`` alone).
        ``"leading"``: the large-``L`` expansion (equation (p1-leading) of the linear
        chapter, for "mean_field"; not available for "fluct").

    Returns
    -------
    float, in units of sequences.

    Derivation (mean field)
    -----------------------
    With ``u = P``, ``1/eps = u/(V kappa)`` and ``c = u/(2 sigma^2 V)``, the entries
    of :func:`hessian_at_origin` (``r2_0 = 0``) are polynomials in ``u``:

        H_mm   = 1/s_p^2 + (V - 1 + L) u/kappa - beta (V - 1 + L^2) u^2,
        H_qq   = (L-1) [L^2/sigma_G^2 + (V-1) u/kappa - beta (V-1)(L-1) u^2],
        H_mq^2 = (L-1)^2 beta^2 (V-1)^2 u^4,

    ``beta = omega/(sigma0^4 L^2 V^2)``. The linear terms are the log-det
    (Occam) costs of switching on a readout channel, the ``u^2`` terms the fit
    gain ``-2c/eps``. ``m`` and ``q`` are coupled (``H_mq != 0``: ``gamma_1``
    contains both), so the exact threshold is the smallest positive root of the
    quartic ``det H(u) = H_mm H_qq - H_mq^2``, reached slightly *before*
    ``H_mm = 0`` (``H_mm = H_mq^2/H_qq = O(P^4/L^5)`` there). ``H_mm = 0`` alone is
    a quadratic with the closed-form root

        P1_m = [b + sqrt(b^2 + 4 a / s_p^2)] / (2 a),   a = beta (V - 1 + L^2),  b = (V - 1 + L)/kappa,

    i.e. ``P1_m = sigma0^2 V^2 L (L + V - 1)/(L^2 + V - 1) + sigma0^2 L/(omega s_p^2 (L+V-1)) + ...``
    and, to first order in ``1/L`` and in the prior term, equation (p1-leading),
    ``sigma0^2 V^2 [1 + (V-1)/L + 1/(omega sigma_b^2 V^2)]`` (the ``"leading"``
    form). The transition is continuous (the quartic coefficient of ``S`` along
    the unstable direction is positive), so ``m* ~ (P - P1)^{1/2}``.

    MAP: the linear (log-det) terms are absent,
    ``H_mm = 1/s_p^2 - (V - 1 + L^2) w``, ``H_qq/(L-1) = L^2/sigma_G^2 - (V-1)(L-1) w``,
    ``H_mq^2/(L-1) = (L-1)(V-1)^2 w^2`` with ``w = beta P^2``; ``det H = 0`` is a
    quadratic in ``w``: ``A w^2 - B w + C = 0``, ``A = (V-1)(L-1) L^2``,
    ``B = (V - 1 + L^2) L^2/sigma_G^2 + (V-1)(L-1)/s_p^2``, ``C = L^2/(sigma_G^2 s_p^2)``,
    and ``P1_map = sigma0^2 L V sqrt(w_-/omega)`` with the smaller root ``w_-``.
    Leading order: ``P1_map ≈ sigma0^2 V L / (s_p sqrt(omega (L^2 + V - 1))) ≈ sigma0^2 V/(sqrt(omega) s_p)``:
    without the Occam factor the threshold drops from ``~V^2`` to ``~V``.

    Fluct: same Hessian with ``d_1 = r2_0 + eps``, ``d_2 = xi_L r2_0 + eps``,
    ``r2_0(P)`` the transverse saddle at the origin (a cubic root); ``det H = 0``
    is solved by bracketing and brentq (semi-analytic). The transverse weight
    ``r2_0 ≈ sigma_G^2`` adds to the noise level ``eps`` in the ``1/d`` factors,
    but it divides the Occam cost and the fit gain alike, so only the relative
    weight of the prior term ``1/s_p^2`` changes: ``P1`` moves up by well under
    1 % (18.32 -> 18.43 at ``L = 32, V = 4``). The threshold is robust to the
    transverse fluctuations; the amplitude ``m*`` above it is not.
    """
    spec = _check_spec(spec)
    version = check_version(version, VERSIONS)
    if not isinstance(form, str) or form not in ("exact", "m_only", "leading"):
        raise ValueError(f"form must be 'exact', 'm_only' or 'leading', got {form!r}")
    k = _const(spec)
    L, V = k.L, k.V
    beta = k.omega / (k.sigma0_sq**2 * L**2 * V**2)
    if version == "fluct":
        if form == "leading":
            raise ValueError("form='leading' is not available for version='fluct'")
        return _p1_fluct(k, form)
    if version == "map":
        if form == "leading":
            return k.sigma0_sq * V * L / math.sqrt(k.s_p2 * k.omega * (L * L + V - 1))
        if form == "m_only":
            return math.sqrt(1 / (k.s_p2 * beta * (V - 1 + L * L)))
        A = (V - 1) * (L - 1) * L**2
        B = (V - 1 + L * L) * L**2 / k.sigma_G**2 + (V - 1) * (L - 1) / k.s_p2
        C = L**2 / (k.sigma_G**2 * k.s_p2)
        w = 2 * C / (B + math.sqrt(B * B - 4 * A * C))  # smaller root, cancellation-free
        return math.sqrt(w / beta)
    # mean field
    if form == "leading":
        return k.sigma0_sq * V**2 * (1 + (V - 1) / L + 1 / (k.omega * k.sigma_b**2 * V**2))
    a = beta * (V - 1 + L * L)
    b = (V - 1 + L) / k.kappa
    if form == "m_only":
        return (b + math.sqrt(b * b + 4 * a / k.s_p2)) / (2 * a)
    P_ = np.polynomial.polynomial
    H_mm = np.array([1 / k.s_p2, b, -a])
    h_qq = np.array([L**2 / k.sigma_G**2, (V - 1) / k.kappa, -beta * (V - 1) * (L - 1)])
    det = P_.polysub(P_.polymul(H_mm, h_qq), np.array([0, 0, 0, 0, beta**2 * (V - 1) ** 2 * (L - 1)]))

    def f(u):
        return float(P_.polyval(u, det))

    return _smallest_positive_root(det, f)


def _numerical_origin_eigmin(P: float, spec: ModelSpec, version: str, h: float = 1e-3) -> float:
    """Lowest eigenvalue of the finite-difference Hessian of :func:`reduced_action` at 0.

    Whitened coordinates; central differences at steps ``h`` and ``h/2`` combined
    by Richardson extrapolation (error ``O(h^4)``). For "fluct" every evaluation
    re-solves the transverse saddle (independent of the analytic Hessian).
    """
    k = _const(spec)
    sm, sq = math.sqrt(k.s_p2), math.sqrt(k.s_c2 / (k.L - 1))
    pts = [(0.0, 0.0)]
    for s in (h, h / 2):
        pts += [(s, 0), (-s, 0), (0, s), (0, -s), (s, s), (s, -s), (-s, s), (-s, -s)]
    z = np.asarray(pts, dtype=np.float64)
    S = reduced_action(z[:, 0] * sm, z[:, 1] * sq, P, spec, version=version)
    S0 = S[0]

    def H_of(block, s):
        Sp0, Sm0, S0p, S0m, Spp, Spm, Smp, Smm = block
        return np.array([[(Sp0 + Sm0 - 2 * S0) / s**2, (Spp - Spm - Smp + Smm) / (4 * s**2)],
                         [(Spp - Spm - Smp + Smm) / (4 * s**2), (S0p + S0m - 2 * S0) / s**2]])

    H1 = H_of(S[1:9], h)
    H2 = H_of(S[9:17], h / 2)
    H = (4 * H2 - H1) / 3
    return float(np.linalg.eigvalsh(0.5 * (H + H.T))[0])


def p1_numerical(spec: ModelSpec, version: str = "mean_field") -> float:
    """``P1`` from the action itself: where the minimiser leaves ``m = 0``.

    1. Scan ``P`` geometrically over ``[1e-3, 1e9]`` (widened if needed, see
       ``_first_instability``) for the first sign change of
       the lowest eigenvalue of a finite-difference Hessian of
       :func:`reduced_action` at the origin (``_numerical_origin_eigmin``,
       no use of the analytic Hessian); refine with brentq (``xtol ~ 1e-13 P``).
    2. Check with :func:`action_minimum` that ``m* = 0`` just below (``P1 (1 - 1e-3)``)
       and ``m* > 0`` just above (``P1 (1 + 1e-3)``), i.e. that no first-order jump
       preempts the instability. If ``m* > 0`` already below, ``P1`` is instead
       located by bisection on ``m*(P) > 0`` (first-order case) to ``1e-6`` relative.

    Returns a float (sequences).
    """
    spec = _check_spec(spec)
    version = check_version(version, VERSIONS)

    def f(P):
        return _numerical_origin_eigmin(P, spec, version)

    a, b = _first_instability(f, 8, version, vectorised=False)
    P1 = optimize.brentq(f, a, b, xtol=1e-13 * b, rtol=1e-14)
    below = action_minimum(P1 * (1 - 1e-3), spec, version)
    if below.m == 0.0:
        return float(P1)
    # first-order case: the minimum jumps before the spinodal
    lo, hi = P1 / 100, P1 * (1 - 1e-3)
    if action_minimum(lo, spec, version).m > 0:
        raise ArithmeticError("m* > 0 already at P1/100: cannot bracket the jump")
    while hi / lo - 1 > 1e-6:
        mid = math.sqrt(lo * hi)
        if action_minimum(mid, spec, version).m > 0:
            hi = mid
        else:
            lo = mid
    return float(math.sqrt(lo * hi))


def susceptibility_m(P, spec: ModelSpec, version: str = "mean_field"):
    """Laplace (Gaussian) posterior variance of ``m`` around the symmetric point, ``P < P1``.

    ``Var(m) ≈ (H^{-1})_mm = H_qq / (H_mm H_qq - H_mq^2)`` with ``H`` the Hessian
    of the reduced action at ``m = q = 0`` (:func:`hessian_at_origin`; the
    marginal variance, ``q`` integrated out). At ``P -> 0`` it is the prior
    variance ``s_p^2 = sigma_b^2 + sigma_G^2/L^2``; it diverges as ``1/(P1 - P)``
    at ``P1`` (:func:`p1_analytic`, ``form="exact"``): the precursor of the
    continuous transition. ``1/H_mm`` (the inverse curvature along ``m`` alone) differs only
    by ``H_mq^2/H_qq``, i.e. by the tiny shift between ``P1`` and ``P1_m``.

    P : float or array > 0. Returns an array of ``P``'s shape (units of ``m^2``),
    ``nan`` where the origin is not a minimum (``P >= P1``).
    """
    spec = _check_spec(spec)
    version = check_version(version, VERSIONS)
    P = as_finite_array("P", P, positive=True)
    H_mm, H_qq, H_mq = _origin_hessian(P, _const(spec), version)
    det = H_mm * H_qq - H_mq**2
    stable = (det > 0) & (H_qq > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(stable, H_qq / np.where(stable, det, 1.0), np.nan)


# --------------------------------------------------------------------------
# P2: the crossover to copying
# --------------------------------------------------------------------------


def p2_analytic(spec: ModelSpec, version: str = "mean_field") -> float:
    """Crossover ``P2`` to copying, leading order in large ``L`` (sequences).

    Definition (shared with :func:`p2_numerical`). The mean attention on the
    previous token is ``gamma_1/L``, ``gamma_1 = m + (L-1) q``: ``m`` is the
    pooling part, ``Q = (L-1) q`` the copy part. ``P2`` is where the copy share
    :func:`copy_share` ``= Q/(m + Q)`` of the global minimiser reaches 1/2 (the
    previous token gets twice the weight of the others). The share is sign and
    gauge (scale) invariant, and it is the quantity that switches: it goes from
    ``O(1/L)``-small to ``~1``, while ``m`` and ``q`` separately are
    non-monotone.

    Derivation (leading order). Write the ``V-1``-fold ("token identity")
    channel of the fit with ``Q = (L-1) q``:
    ``-zeta (V-1) (m + Q)^2 / (m^2 + Q^2/(L-1) + rho + eps)``, ``rho = r2`` (fluct)
    or ``0``. The prior of the copy direction is ``(L-1) q^2/(2 s_c^2) ≈ L Q^2/(2 sigma_G^2)``.
    In a copying state ``Q >> m`` (the pooling amplitude only dilutes this
    channel; it is needed in the ``1``-channel, whose cost is subleading), so
    with ``Upsilon = Q^2/(L (rho + eps))``:

        S_copy(Upsilon) ≈ -calG Upsilon/(1 + Upsilon) + calC Upsilon,
        calG = zeta (V-1) L,   calC = L^2 (rho + eps)/(2 sigma_G^2),

    (log-det terms are ``O(ln)``, subleading). ``Upsilon = 0`` is stable for
    ``calG < calC``; for ``calG > calC`` the minimum moves to ``1 + Upsilon* = sqrt(calG/calC)``:
    copying switches on at ``calG = calC``, i.e. with ``zeta = P/(2 sigma0^2 L V)``,
    ``eps = V sigma0^2 L/(omega P)``:

        P2 = sigma0^2 L^2 V (rho + eps(P2)) / ((V-1) sigma_G^2).

    * mean field and MAP (``rho = 0``): ``P2^2 = sigma0^4 L^3 V^2/(omega (V-1) sigma_G^2)``,

          P2 = sigma0^2 L^{3/2} V / (sigma_G sqrt(omega (V-1))),

      equation (p2-asymptotic) of the linear chapter (``-> L^{3/2} V^{1/2}``). It is the same for both
      versions: the Occam terms that move ``P1`` are subleading here.
    * fluct (``rho = r2 ≈ n s_c^2 = (L^2-2) sigma_G^2/L^2``, the transverse
      weight, which the data barely reduce before copying): the positive root of
      ``P^2 - (sigma0^2 L^2 V rho/((V-1) sigma_G^2)) P - sigma0^4 L^3 V^2/(omega (V-1) sigma_G^2) = 0``,
      ``-> sigma0^2 L^2 V/(V-1)`` when ``rho >> eps``: the law ``L^2 V/(V-1)`` that the scaling chapter tests.
      The transverse noise floor ``rho ~ sigma_G^2`` replaces the readout noise
      ``eps ~ L^{-1/2}`` in the denominator of the copy channel.

    Finite-``L`` corrections come from the pooling amplitude ``m``: its linear
    coupling ``2 m Q`` to the copy channel turns the onset into a smooth
    crossover (share 1/2 slightly *before* ``P2``, mean field), and the
    pooling state competes with a large ``m`` (MAP: ``m_0^2 -> s_p sqrt(V/omega)``;
    fluct: ``m_0^2 ~ sqrt(P)``), which delays copying and, at large ``L``,
    makes the switch first order (two coexisting minima exchanging order; at
    ``V = 4``, all scales 1, from ``L = 89`` for MAP and ``L = 115`` for fluct
    on, continuous at ``L = 88`` and ``114``; mean field is continuous up to
    ``L = 512``: see :func:`copy_share_jump`). Numerically (``V = 4``, all scales 1) the
    ratio ``p2_numerical/p2_analytic`` for ``L = 16, 32, 64, 128, 256`` is
    0.88, 0.89, 0.92, 0.96, 1.00 (mean field), 1.21, 1.16, 1.13, 1.12, 1.10 (MAP)
    and 0.94, 1.05, 1.14, 1.18, 1.17 (fluct); the local exponents of ``L`` of
    ``p2_numerical`` are 1.51-1.56 (mean field), 1.44-1.48 (MAP) and 1.97-2.08 (fluct).
    """
    spec = _check_spec(spec)
    version = check_version(version, VERSIONS)
    k = _const(spec)
    L, V = k.L, k.V
    e = k.sigma0_sq**2 * L**3 * V**2 / (k.omega * (V - 1) * k.sigma_G**2)
    if version in ("mean_field", "map"):
        return float(math.sqrt(e))
    b = k.sigma0_sq * L**2 * V * (k.n * k.s_c2) / ((V - 1) * k.sigma_G**2)
    return float(0.5 * (b + math.sqrt(b * b + 4 * e)))


def p2_numerical(spec: ModelSpec, version: str = "mean_field", *, rtol: float = 1e-6) -> float:
    """``P2`` from the global minimiser: ``copy_share(m*(P), q*(P)) = 1/2``.

    Scans ``P`` geometrically (8 points per factor 10) from ``1.01 P1`` with
    warm-started global minimisations to the first crossing (16 points at a time,
    descended together, each also restarted from its neighbours' minima), then
    narrows that bracket by multisection (15 interior points at a time, each
    started also from the minimum below the crossing) until its relative width
    is below ``rtol``, and returns its midpoint. If the switch is first order
    (the global minimum jumps between two coexisting minima), this converges to
    the jump, i.e. to the ``P`` where the two minima have equal action. Definition of ``P2``: :func:`p2_analytic`. Returns a float (sequences).

    Raises ``ArithmeticError`` when there is no crossover to locate: the share is
    already ``>= 1/2`` at ``1.01 P1`` (copying dominates from the onset, e.g. a copy
    prior much wider than the pooling one, ``sigma_G >> sigma_b``), or stays below
    1/2 over the whole scan.
    """
    spec = _check_spec(spec)
    version = check_version(version, VERSIONS)
    rtol = check_positive("rtol", rtol)
    out = _p2_many([_const(spec)], [p1_analytic(spec, version)], version, rtol)[0]
    if isinstance(out, ArithmeticError):
        raise out
    return out


def p2_numerical_many(specs, version: str = "mean_field", *, rtol: float = 1e-6) -> np.ndarray:
    """:func:`p2_numerical` for several specs at once (their minimisations batched together).

    specs : sequence of linear ModelSpec; returns a float array with one ``P2`` per spec,
    NaN where :func:`p2_numerical` raises ``ArithmeticError`` (no crossover to locate).
    The numbers are those of :func:`p2_numerical` (the same scan and multisection).
    """
    specs = [_check_spec(sp) for sp in specs]
    if not specs:
        raise ValueError("specs must contain at least one linear ModelSpec")
    version = check_version(version, VERSIONS)
    rtol = check_positive("rtol", rtol)
    out = _p2_many([_const(sp) for sp in specs], [p1_analytic(sp, version) for sp in specs], version, rtol)
    return np.array([np.nan if isinstance(r, ArithmeticError) else r for r in out])


def _p2_scan(ks, P1s, version: str) -> list:
    """The scan of :func:`p2_numerical` for every spec: ``(P below, P above, minimum below)`` of the
    first crossing of share 1/2 on ``1.01 P1 * 10^(i/8)``, or an ``ArithmeticError``."""
    grids = [1.01 * P1 * 10 ** (np.arange(0, 80) / 8) for P1 in P1s]
    out = [None] * len(ks)
    before = [None] * len(ks)
    for start in range(0, 80, _P2_CHUNK):  # the scan, a chunk of P at a time, all specs together
        todo = [i for i in range(len(ks)) if out[i] is None]
        if not todo:
            break
        mins = _scan_minima([(grids[i][start:start + _P2_CHUNK], ks[i], before[i]) for i in todo], version)
        for i, mi in zip(todo, mins):
            above = np.flatnonzero(np.array([_share(r, ks[i].L) for r in mi]) >= 0.5)
            if not above.size:
                before[i] = mi[-1]
            elif start + above[0] == 0:
                out[i] = ArithmeticError("copy share >= 1/2 already just above P1")
            else:
                j = start + above[0]
                out[i] = (float(grids[i][j - 1]), float(grids[i][j]), mi[above[0] - 1] if above[0] else before[i])
    return [ArithmeticError("copy share stays below 1/2 up to the end of the scan") if r is None else r for r in out]


def _p2_many(ks, P1s, version: str, rtol: float) -> list:
    """``P2`` (or the ``ArithmeticError`` of :func:`p2_numerical`) for each constant set of ``ks``.

    After the scan, each bracket is narrowed by multisection (:data:`_P2_SPLIT` points at a
    time, all specs together, each started also from the minimum below the crossing, as
    every evaluation of a sequential root search) until its relative width is below ``rtol``.
    """
    brackets = _p2_scan(ks, P1s, version)
    todo = [i for i, b in enumerate(brackets) if not isinstance(b, ArithmeticError)]
    lo = {i: brackets[i][0] for i in todo}
    hi = {i: brackets[i][1] for i in todo}
    hint = {i: (r.m, r.q, r.r2) if r.m > 0 else None for i in todo for r in [brackets[i][2]]}
    while todo := [i for i in todo if hi[i] - lo[i] > rtol * lo[i]]:
        Ps = {i: np.geomspace(lo[i], hi[i], _P2_SPLIT + 2)[1:-1] for i in todo}
        mins = _minimise_many(np.concatenate([Ps[i] for i in todo]), [ks[i] for i in todo for _ in range(_P2_SPLIT)],
                              version, [[hint[i]] if hint[i] else [] for i in todo for _ in range(_P2_SPLIT)])
        for n, i in enumerate(todo):
            mi = mins[n * _P2_SPLIT:(n + 1) * _P2_SPLIT]
            up = np.flatnonzero(np.array([_share(r, ks[i].L) for r in mi]) >= 0.5)
            j = up[0] if up.size else _P2_SPLIT
            lo[i], hi[i] = (float(Ps[i][j - 1]) if j else lo[i]), (float(Ps[i][j]) if j < _P2_SPLIT else hi[i])
    return [b if isinstance(b, ArithmeticError) else 0.5 * (lo[i] + hi[i]) for i, b in enumerate(brackets)]


_P2_CHUNK = 16  # scan points of P2 minimised together (two decades)
_P2_SPLIT = 15  # interior points per multisection step of P2 (the bracket shrinks 16-fold)


def _share(r: ActionMinimum, L: int) -> float:
    """Copy share of a minimum, 0 at the symmetric point."""
    return float(copy_share(r.m, r.q, L)) if r.m > 0 else 0.0


# --------------------------------------------------------------------------
# large L: coexisting minima and the jump of the copy share
# --------------------------------------------------------------------------


def _minimum_test(obj: _Whitened, z, P):
    """Lowest Hessian eigenvalue, length of the Newton step ``|H^{-1} g|`` and ``|g|`` at points ``z (B, d)``
    (prior-whitened). A local minimum has a positive eigenvalue and a Newton step at rounding level."""
    _, grad, hess = obj.value_grad_hess(z, P)
    lam = np.linalg.eigvalsh(hess)[:, 0]
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        step = np.linalg.norm(np.linalg.solve(hess, grad[..., None])[..., 0], axis=1)
    return lam, np.where(np.isfinite(step), step, np.inf), np.linalg.norm(grad, axis=1)


def _local_minima_many(Ps, k: _Const, version: str, n_rays: int, sep: float):
    """All local minima found at each ``P`` of ``Ps`` (lists of :class:`ActionMinimum`, by copy share)."""
    obj = _Whitened(k, version)
    L = k.L
    Pa = np.asarray(Ps, dtype=np.float64)
    glob = _minimise_many(Pa, k, version)
    r2_origin = _r2_origin(Pa, k) if obj.fl else np.zeros(Pa.size)
    shares = (np.arange(n_rays) + 0.5) / n_rays
    zs, owner = [], []
    H_mm, H_qq, H_mq = np.broadcast_arrays(*_origin_hessian(Pa, k, version))
    for i, g in enumerate(glob):
        r2_0 = float(r2_origin[i])
        H0 = np.array([[H_mm[i] * k.s_p2, H_mq[i] * obj.sm * obj.sq],
                       [H_mq[i] * obj.sm * obj.sq, H_qq[i] * obj.sq**2]])
        std = _starts(obj, r2_0, None, H0)  # the starts of action_minimum
        zs += std
        owner += [i] * len(std)
        g1 = g.m + (L - 1) * g.q if g.m > 0 else 1.0
        for scale in (0.5, 1.0, 2.0):
            for s in shares:
                m, Q = scale * g1 * (1 - s), scale * g1 * s
                zs.append(obj.zvec(m, Q / (L - 1), g.r2 if (obj.fl and g.m > 0) else r2_0))
                owner.append(i)
        if g.m > 0:
            zs.append(obj.zvec(g.m, g.q, g.r2 if obj.fl else 0.0))
            owner.append(i)
    owner = np.asarray(owner)
    z, f = _descend_many(obj, np.asarray(zs), Pa[owner])
    lam, newton, gn = _minimum_test(obj, z, Pa[owner])
    m_all, q_all, r2_all = obj.phys(z)
    share_all = copy_share(m_all, q_all, L)
    out = []
    for i, P in enumerate(Pa):
        mine = np.flatnonzero((owner == i) & (lam > 0) & (m_all > 1e-12) & (q_all >= 0) & (newton < 1e-4))
        mine = mine[np.argsort(share_all[mine], kind="stable")]
        found = []
        for j in mine:
            if found and abs(share_all[j] - found[-1][0]) <= sep:
                if f[j] < found[-1][1]:
                    found[-1] = (share_all[j], f[j], j)
                continue
            found.append((share_all[j], f[j], j))
        mins = []
        for _, fj, j in found:
            m, q, r2 = float(m_all[j]), float(q_all[j]), float(r2_all[j])
            mins.append(ActionMinimum(P=float(P), version=version, m=m, q=q, r2=r2, action=float(fj),
                                      test_loss=float(predicted_test_loss(m, q, float(P), _spec_from(k), r2=r2)),
                                      grad_norm=float(gn[j])))
        out.append(mins)
    return out


def local_minima(P, spec: ModelSpec, version: str = "fluct", *, n_rays: int = 24, sep: float = 1e-4) -> list:
    """Every local minimum of the reduced action with ``m > 0`` that a dense set of starts finds.

    At each ``P`` the action is descended (the trust-region Newton of
    :func:`action_minimum`, all starts together) from ``3 n_rays`` starts laid
    on rays of fixed copy share ``s = (i + 1/2)/n_rays`` at three amplitudes
    (``0.5, 1, 2`` times the ``gamma_1 = m + (L-1) q`` of the global minimum),
    plus the starts of :func:`action_minimum` and the global minimum itself. An
    end point counts as a local minimum if its Newton step ``|H^{-1} grad S|`` (prior-whitened) is below ``1e-4`` (the
    descent stops at rounding level; a soft minimum near a spinodal has a long
    Newton step), its Hessian is positive definite and ``m > 0``; end points
    whose copy shares differ by at most
    ``sep`` are one minimum. Reported are the minima with ``m > 0`` and ``q >= 0``
    (pooling and copying in the same direction, copy share in ``[0, 1]``); the
    symmetric point ``m = q = 0`` and the states that copy against the pooling
    direction (``m q < 0``, shares above 1; at ``L = 128, V = 4`` such a state is a
    further local minimum from about ``1.15 P2`` on) are not.

    Parameters
    ----------
    P : float or 1-d array_like of floats > 0
    spec : ModelSpec (linear, cyclic); version : {"mean_field", "fluct", "map"}
    n_rays : int >= 2; sep : float > 0 (copy-share resolution).

    Returns
    -------
    list (one entry per ``P``; a single list for scalar ``P``) of lists of
    :class:`ActionMinimum`, ordered by increasing copy share. Two entries mean
    two coexisting minima (pooling and copying).
    """
    spec = _check_spec(spec)
    version = check_version(version, VERSIONS)
    if isinstance(n_rays, bool) or not isinstance(n_rays, numbers.Integral) or n_rays < 2:
        raise ValueError(f"n_rays must be an integer >= 2, got {n_rays!r}")
    if isinstance(sep, bool) or not isinstance(sep, numbers.Real) or not (0 < sep < 1):
        raise ValueError(f"sep must be a real number in (0, 1), got {sep!r}")
    scalar = np.ndim(P) == 0
    Pa = as_finite_array("P", P, positive=True)
    if Pa.ndim > 1 or Pa.size == 0:
        raise ValueError(f"P must be a float or a non-empty 1-d array, got shape {Pa.shape}")
    out = _local_minima_many(Pa.reshape(-1), _const(spec), version, int(n_rays), float(sep))
    return out[0] if scalar else out


@dataclass(frozen=True)
class CopyJump:
    """:func:`copy_share_jump` result: the largest change of the global minimum's copy share near ``P2``.

    P_jump : where it happens (the bracket's geometric midpoint); rel_width : the
    final bracket ``P_hi/P_lo - 1``; below, above : the global minima at the
    bracket ends; jump : ``copy_share(above) - copy_share(below)``;
    two_minima : whether, at ``P_jump (1 -/+ delta)``, descents started from
    ``below`` and from ``above`` end at two distinct local minima (copy shares
    more than ``sep`` apart); delta_action : ``S_copy - S_pool`` (nats) of those
    two branches at ``P_jump (1 - delta)`` and ``P_jump (1 + delta)`` (``nan``
    without two minima); slope : ``d(S_copy - S_pool)/d ln P`` at ``P_jump``
    (nats; ``nan`` without two minima); first_order : two minima whose action
    difference changes sign across ``P_jump`` with a negative slope.
    """

    L: int
    V: int
    version: str
    P2: float
    P_jump: float
    rel_width: float
    below: ActionMinimum
    above: ActionMinimum
    jump: float
    two_minima: bool
    delta_action: tuple
    slope: float
    first_order: bool


def copy_share_jump(spec: ModelSpec, version: str = "fluct", *, span=(0.3, 3.0), n_scan: int = 41,
                    rtol: float = 1e-11, delta: float = 1e-8, sep: float = 1e-4) -> CopyJump:
    """Locate the steepest change of the global minimum's copy share around ``P2`` and test it for a jump.

    1. :func:`minimum_curve` on ``n_scan`` geometric points of
       ``P in [span[0], span[1]] * p2_numerical``; take the neighbouring pair with
       the largest change of :func:`copy_share`.
    2. Bisect that interval (geometric midpoints) down to ``P_hi/P_lo - 1 < rtol``,
       assigning each midpoint to the side whose share its global minimum
       (standard starts plus both current end minima; the end minima alone once
       the bracket is below ``1e-3`` relative) is closer to. If the share
       is continuous, the two ends converge to the same share; if the global
       minimum jumps, they keep a finite difference ``jump``.
    3. Branches: at ``P_jump (1 -/+ delta)`` descend from each end minimum alone.
       A first-order jump has two distinct local minima there (shares more than
       ``sep`` apart) whose action difference ``S_copy - S_pool`` is positive below and
       negative above, with ``slope = d(S_copy - S_pool)/d ln P < 0``.

    Parameters
    ----------
    spec : ModelSpec (linear, cyclic); version : {"mean_field", "fluct", "map"}
    span : (lo, hi), ``0 < lo < 1 < hi``, the scanned range in units of ``p2_numerical``
    n_scan : int >= 3; rtol : float in (0, 1e-3]; delta : float in (0, 1e-2]; sep : float in (0, 1).

    Returns
    -------
    CopyJump
    """
    spec = _check_spec(spec)
    version = check_version(version, VERSIONS)
    span_a = as_finite_array("span", span, positive=True).reshape(-1)
    lo_f, hi_f = (float(span_a[0]), float(span_a[1])) if span_a.size == 2 else (0.0, 0.0)
    if not (0 < lo_f < 1 < hi_f):
        raise ValueError(f"span must be (lo, hi) with 0 < lo < 1 < hi, got {span!r}")
    if isinstance(n_scan, bool) or not isinstance(n_scan, numbers.Integral) or n_scan < 3:
        raise ValueError(f"n_scan must be an integer >= 3, got {n_scan!r}")
    for name, x, top in (("rtol", rtol, 1e-3), ("delta", delta, 1e-2), ("sep", sep, 1.0)):
        if isinstance(x, bool) or not isinstance(x, numbers.Real) or not (0 < x <= top) or (name == "sep" and x == 1):
            raise ValueError(f"{name} must be a real number in (0, {top}], got {x!r}")
    k = _const(spec)
    L = k.L
    P2 = p2_numerical(spec, version, rtol=1e-5)
    grid = P2 * np.geomspace(lo_f, hi_f, int(n_scan))
    curve = minimum_curve(grid, spec, version)
    share = np.nan_to_num(curve.copy_share, nan=0.0)
    i = int(np.abs(np.diff(share)).argmax())

    def share_of(r):
        return float(copy_share(r.m, r.q, L)) if r.m > 0 else 0.0

    def at(P, hints):
        # the standard starts while the bracket is wide; once it is narrow (below 1e-3 relative) the
        # global minimum at the midpoint is one of the two end minima continued: their hints suffice
        wide = hi_P / lo_P - 1 > 1e-3
        return _minimise_many([P], k, version, [[(h.m, h.q, h.r2) for h in hints if h.m > 0]], standard=wide)[0]

    lo_P, hi_P = float(grid[i]), float(grid[i + 1])
    lo_r, hi_r = _minimise_many([lo_P, hi_P], k, version)
    while hi_P / lo_P - 1 >= rtol:
        mid = math.sqrt(lo_P * hi_P)
        r = at(mid, [lo_r, hi_r])
        s = share_of(r)
        if abs(s - share_of(lo_r)) <= abs(s - share_of(hi_r)):
            lo_P, lo_r = mid, r
        else:
            hi_P, hi_r = mid, r
    P_j = math.sqrt(lo_P * hi_P)
    Pab = [P_j * (1 - delta), P_j * (1 + delta)]
    pool = _minimise_many(Pab, k, version, [[(lo_r.m, lo_r.q, lo_r.r2)]] * 2, standard=False)
    copy = _minimise_many(Pab, k, version, [[(hi_r.m, hi_r.q, hi_r.r2)]] * 2, standard=False)
    obj = _Whitened(k, version)

    def is_min(r):
        lam, newton, _ = _minimum_test(obj, obj.zvec(r.m, r.q, r.r2 if obj.fl else 0.0)[None], np.array([r.P]))
        return r.m > 0 and lam[0] > 0 and newton[0] < 1e-4
    two = all(abs(share_of(c) - share_of(p)) > sep and is_min(c) and is_min(p) for p, c in zip(pool, copy))
    if two:
        dS = (copy[0].action - pool[0].action, copy[1].action - pool[1].action)
        slope = (dS[1] - dS[0]) / math.log(Pab[1] / Pab[0])
    else:
        dS, slope = (float("nan"), float("nan")), float("nan")
    first = bool(two and dS[0] > 0 > dS[1] and slope < 0)
    return CopyJump(L=L, V=k.V, version=version, P2=float(P2), P_jump=float(P_j), rel_width=float(hi_P / lo_P - 1),
                    below=lo_r, above=hi_r, jump=share_of(hi_r) - share_of(lo_r), two_minima=bool(two),
                    delta_action=tuple(float(x) for x in dS), slope=float(slope), first_order=first)
