"""Global minima of the reduced action of linear attention (:mod:`copylib.theory.linear_action`).

The action is minimised in prior-whitened coordinates (``WhitenedAction``) by the batched
trust-region Newton of :mod:`copylib.theory.trust_region` from pooling-like, copy-like and mixed
starts; the lowest end point wins. Public results: :func:`~copylib.theory.linear.global_minimum` at
one ``P`` and :func:`~copylib.theory.linear.minimum_curve` along a grid. ``minimise_many`` and
``scan_minima`` are the batched searches the threshold and jump modules share.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import fields

import numpy as np
import numpy.typing as npt

from ..arguments import as_finite_array, check_positive, check_version
from ..model.network import ModelSpec
from .linear_action import (
    VERSIONS,
    ActionConstants,
    action_constants,
    action_grad,
    action_hessian,
    check_linear_spec,
    copy_share,
    origin_hessian,
    origin_r2,
    predicted_test_loss,
    spec_of_constants,
)
from .results import Minimum, MinimumCurve
from .trust_region import descend_many

__all__ = [
    "global_minimum",
    "minimum_curve",
]

# --------------------------------------------------------------------------
# minimisation
# --------------------------------------------------------------------------


class WhitenedAction:
    """The action in prior-whitened coordinates ``z = (m/s_p, q sqrt(L-1)/s_c[, ln Lambda])``,
    for a batch of points ``z (B, d)`` at sample sizes ``P (B,)``.

    ``value_grad_hess(z, P)`` returns the action ``(B,)``, its gradient ``(B, d)``
    and its analytic Hessian ``(B, d, d)`` (chain rule through the four invariants).
    """

    def __init__(self, k: ActionConstants, version: str) -> None:
        self.k, self.version = k, version
        self.fl = version == "fluct"
        self.d = 3 if self.fl else 2
        self.sm = np.sqrt(k.s_p2)
        self.sq = np.sqrt(k.s_c2 / (k.L - 1))
        self.rs = k.n * k.s_c2

    def at(self, idx: np.ndarray | int) -> WhitenedAction:
        """The action of rows ``idx`` of the batch (itself when the constants are shared)."""
        if not isinstance(self.k.L, np.ndarray):
            return self
        return WhitenedAction(ActionConstants(**{f.name: getattr(self.k, f.name)[idx] for f in fields(ActionConstants)}), self.version)

    def phys(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        m, q = z[:, 0] * self.sm, z[:, 1] * self.sq
        r2 = self.rs * np.exp(z[:, 2]) if self.fl else np.zeros_like(m)
        return m, q, r2

    def zvec(self, m: npt.ArrayLike, q: npt.ArrayLike, r2: npt.ArrayLike) -> np.ndarray:
        cols = [np.asarray(m, dtype=np.float64) / self.sm, np.asarray(q, dtype=np.float64) / self.sq]
        if self.fl:
            cols.append(np.log(np.asarray(r2, dtype=np.float64) / self.rs))
        return np.stack(np.broadcast_arrays(*cols), axis=-1)

    def value_grad_hess(self, z: np.ndarray, P: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        m, q, r2 = self.phys(z)
        S, g, H = action_hessian(m, q, r2, P, self.k, self.version)
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



def standard_starts(obj: WhitenedAction, r2_0: float, hint: Sequence[float] | None, H0: np.ndarray,
                    eig: tuple[np.ndarray, np.ndarray] | None = None) -> list[np.ndarray]:
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


def _hint_start(obj: WhitenedAction, r2_0: float, hint):
    """The start at a hint ``(m, q, r2)`` (``m > 0``); without its own ``r2`` at the origin's."""
    m, q, r2 = hint
    return obj.zvec(m, q, r2 if (obj.fl and r2 > 0) else r2_0)


def _stack(ks: list) -> ActionConstants:
    """One :class:`ActionConstants` for a batch: ``ks[0]`` if all are the same, else float arrays row by row."""
    if all(k is ks[0] for k in ks):
        return ks[0]
    return ActionConstants(**{f.name: np.array([getattr(k, f.name) for k in ks], dtype=np.float64) for f in fields(ActionConstants)})


def minimise_many(P_values: Iterable[float], k: ActionConstants | Sequence[ActionConstants], version: str,
                  hints: Sequence[Sequence[Sequence[float]]] | None = None, standard: bool = True) -> list:
    """Global minimum (:class:`~copylib.theory.results.Minimum`) at each ``P`` of ``P_values``: the multi-start search of
    :func:`global_minimum`, with the starts of all ``P`` descended together.

    k : one :class:`ActionConstants`, or a list of them (one per ``P``: several specs in one batch);
    hints : optional list (one per ``P``) of lists of extra ``(m, q, r2)`` starts;
    standard : whether to use the standard starts too (False: the hints only).
    """
    P_values = [float(P) for P in P_values]
    ks = list(k) if isinstance(k, (list, tuple)) else [k] * len(P_values)
    objs = {id(kk): WhitenedAction(kk, version) for kk in ks}
    kP = _stack(ks)
    fl = version == "fluct"
    Pa = np.asarray(P_values)
    r2_origin = origin_r2(Pa, kP) if fl else np.zeros(Pa.size)
    S_origin = action_grad(0.0, 0.0, r2_origin, Pa, kP, version)[0]
    H_mm, H_qq, H_mq = np.broadcast_arrays(*origin_hessian(Pa, kP, version))
    objP = WhitenedAction(kP, version)
    H0s = np.zeros((Pa.size, 2, 2))
    H0s[:, 0, 0] = H_mm * kP.s_p2
    H0s[:, 0, 1] = H0s[:, 1, 0] = H_mq * objP.sm * objP.sq
    H0s[:, 1, 1] = H_qq * objP.sq**2
    w, U = np.linalg.eigh(H0s)
    origin_stable = np.linalg.eigvalsh(H0s)[:, 0] > 0
    zs, owner = [], []
    for i in range(Pa.size):
        obj, r2_0 = objs[id(ks[i])], float(r2_origin[i])
        starts = standard_starts(obj, r2_0, None, H0s[i], (w[i], U[i])) if standard else []
        for hint in (hints[i] if hints is not None else []):
            starts = [_hint_start(obj, r2_0, hint)] + starts if hint[0] > 0 else starts
        zs += starts
        owner += [i] * len(starts)
    owner = np.asarray(owner)
    obj_rows = WhitenedAction(_stack([ks[o] for o in owner]), version)
    z, f = descend_many(obj_rows, np.asarray(zs), Pa[owner])
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
        loss[mine] = predicted_test_loss(m[mine], q[mine], Pa[mine], spec_of_constants(kk), r2=r2[mine])
    share = _shares_of(m, q, np.broadcast_to(kP.L, Pa.shape))
    return [Minimum(P=P_values[i], version=version, action=float(S[i]), order_parameter=float(share[i]),
                    test_loss=float(loss[i]), coordinates={"m": float(m[i]), "q": float(q[i]), "r2": float(r2[i])},
                    grad_norm=float(gn[i]))
            for i in range(Pa.size)]


def _shares_of(m: np.ndarray, q: np.ndarray, L: np.ndarray) -> np.ndarray:
    """Copy shares ``(L-1) q/(m + (L-1) q)`` of minima ``(m, q)`` (arrays), 0 at the symmetric point ``m = 0``
    (elsewhere :func:`~copylib.theory.linear.copy_share`: ``nan`` where ``m + (L-1) q = 0``)."""
    m, q, L = np.broadcast_arrays(np.asarray(m, dtype=np.float64), np.asarray(q, dtype=np.float64),
                                  np.asarray(L, dtype=np.float64))
    g1 = m + (L - 1) * q
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(m > 0, np.where(g1 != 0, (L - 1) * q / np.where(g1 != 0, g1, 1.0), np.nan), 0.0)


def mqr2(r: Minimum) -> tuple[float, float, float]:
    """The coordinates ``(m, q, r2)`` of a linear :class:`~copylib.theory.results.Minimum`."""
    c = r.coordinates
    return c["m"], c["q"], c["r2"]


def _minimise(P: float, k: ActionConstants, version: str, hint=None) -> Minimum:
    return minimise_many([P], k, version, None if hint is None else [[hint]])[0]


def global_minimum(P: float, spec: ModelSpec, version: str = "mean_field", *,
                   hint: npt.ArrayLike | None = None) -> Minimum:
    """Global minimiser ``(m*, q*)`` (and ``r2*`` for "fluct") of the reduced action at one ``P``, a
    :class:`~copylib.theory.results.Minimum` with coordinates ``{"m", "q", "r2"}`` (``r2 = 0`` unless
    "fluct"), the copy share as order parameter (0 at the symmetric point) and ``grad_norm``.

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
    spec = check_linear_spec(spec)
    version = check_version(version, VERSIONS)
    P = check_positive("P", P)
    if hint is not None:
        h = as_finite_array("hint", hint)
        if h.shape != (3,):
            raise ValueError(f"hint must be None or (m, q, r2), got shape {h.shape}")
        hint = tuple(float(x) for x in h)
    return _minimise(P, action_constants(spec), version, hint)


def scan_minima(segments: Sequence[tuple[npt.ArrayLike, ActionConstants, Minimum | None]],
                version: str) -> list:
    """Global minima along increasing sample sizes, for several segments ``(Ps, k, before)`` at once.

    All points are descended together, then each ``P`` is restarted from its neighbours'
    minima (the warm start of a sequential scan, from both sides; ``before``: the minimum
    just below ``Ps[0]``, or None); the lower end point wins. Returns one list per segment.
    """
    Ps = np.concatenate([np.asarray(seg[0], dtype=np.float64) for seg in segments])
    ks = [seg[1] for seg in segments for _ in seg[0]]
    flat = minimise_many(Ps, ks, version)
    bounds = np.cumsum([0] + [len(seg[0]) for seg in segments])
    hints = []
    for (_, _, before), lo, hi in zip(segments, bounds[:-1], bounds[1:]):
        first = flat[lo:hi]
        for a, b in zip([before] + first[:-1], first[1:] + [None]):
            hints.append([mqr2(r) for r in (a, b) if r is not None and r.coordinates["m"] > 0])
    redo = [j for j, h in enumerate(hints) if h]
    out = list(flat)
    if redo:
        second = minimise_many(Ps[redo], [ks[j] for j in redo], version, [hints[j] for j in redo], standard=False)
        for j, r in zip(redo, second):
            if r.action < flat[j].action:
                out[j] = r
    return [out[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:])]


def minimum_curve(P_values: npt.ArrayLike, spec: ModelSpec, version: str = "mean_field") -> MinimumCurve:
    """:func:`global_minimum` over a grid of ``P`` (each warm-started from its neighbour).

    P_values : 1-d array_like of ``P > 0`` (any order; results in the given order).
    Returns a :class:`~copylib.theory.results.MinimumCurve`: coordinates ``{"m", "q", "r2"}``, the copy share as
    order parameter (``nan`` at the symmetric point), the test loss; ``n_minima`` is ``None``.
    """
    spec = check_linear_spec(spec)
    version = check_version(version, VERSIONS)
    Pg = as_finite_array("P_values", P_values, positive=True)
    if Pg.ndim != 1 or Pg.size == 0:
        raise ValueError(f"P_values must be a non-empty 1-d array, got shape {Pg.shape}")
    k = action_constants(spec)
    order = np.argsort(Pg, kind="stable")
    out = [None] * Pg.size
    for j, r in enumerate(scan_minima([(Pg[order], k, None)], version)[0]):
        out[order[j]] = r
    m, q, r2 = np.array([mqr2(r) for r in out]).T
    return MinimumCurve(
        P=Pg.copy(), version=version, action=np.array([r.action for r in out]),
        order_parameter=copy_share(m, q, k.L), test_loss=np.array([r.test_loss for r in out]),
        coordinates={"m": m, "q": q, "r2": r2},
    )


