"""Linear attention at large ``L``: coexisting local minima of the reduced action and the jump
of the copy share where the copying minimum takes over. Re-exported by :mod:`copylib.theory.linear`.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import numpy.typing as npt

from ..arguments import as_finite_array, check_version
from ..model.network import ModelSpec
from . import linear_action as action
from .linear_minima import WhitenedAction, minimise_many, minimum_curve, mqr2, standard_starts
from .linear_thresholds import p2_numerical
from .results import FirstOrderPoint, Minimum
from .trust_region import descend_many

__all__ = [
    "local_minima",
    "first_order_point",
]

# --------------------------------------------------------------------------
# large L: coexisting minima and the jump of the copy share
# --------------------------------------------------------------------------


def _minimum_test(obj: WhitenedAction, z, P):
    """Lowest Hessian eigenvalue, length of the Newton step ``|H^{-1} g|`` and ``|g|`` at points ``z (B, d)``
    (prior-whitened). A local minimum has a positive eigenvalue and a Newton step at rounding level."""
    _, grad, hess = obj.value_grad_hess(z, P)
    lam = np.linalg.eigvalsh(hess)[:, 0]
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        step = np.linalg.norm(np.linalg.solve(hess, grad[..., None])[..., 0], axis=1)
    return lam, np.where(np.isfinite(step), step, np.inf), np.linalg.norm(grad, axis=1)


def _local_minima_many(Ps, k: action.ActionConstants, version: str, n_rays: int, sep: float):
    """All local minima found at each ``P`` of ``Ps`` (tuples of :class:`~copylib.theory.results.Minimum`, by copy share)."""
    obj = WhitenedAction(k, version)
    L = k.L
    Pa = np.asarray(Ps, dtype=np.float64)
    glob = minimise_many(Pa, k, version)
    r2_origin = action.origin_r2(Pa, k) if obj.fl else np.zeros(Pa.size)
    shares = (np.arange(n_rays) + 0.5) / n_rays
    zs, owner = [], []
    H_mm, H_qq, H_mq = np.broadcast_arrays(*action.origin_hessian(Pa, k, version))
    for i, g in enumerate(glob):
        r2_0 = float(r2_origin[i])
        H0 = np.array([[H_mm[i] * k.s_p2, H_mq[i] * obj.sm * obj.sq],
                       [H_mq[i] * obj.sm * obj.sq, H_qq[i] * obj.sq**2]])
        std = standard_starts(obj, r2_0, None, H0)  # the starts of global_minimum
        zs += std
        owner += [i] * len(std)
        gm, gq, gr2 = mqr2(g)
        g1 = gm + (L - 1) * gq if gm > 0 else 1.0
        for scale in (0.5, 1.0, 2.0):
            for s in shares:
                m, Q = scale * g1 * (1 - s), scale * g1 * s
                zs.append(obj.zvec(m, Q / (L - 1), gr2 if (obj.fl and gm > 0) else r2_0))
                owner.append(i)
        if gm > 0:
            zs.append(obj.zvec(gm, gq, gr2 if obj.fl else 0.0))
            owner.append(i)
    owner = np.asarray(owner)
    z, f = descend_many(obj, np.asarray(zs), Pa[owner])
    lam, newton, gn = _minimum_test(obj, z, Pa[owner])
    m_all, q_all, r2_all = obj.phys(z)
    share_all = action.copy_share(m_all, q_all, L)
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
        spec = action.spec_of_constants(k)
        for _, fj, j in found:
            m, q, r2 = float(m_all[j]), float(q_all[j]), float(r2_all[j])
            mins.append(Minimum(P=float(P), version=version, action=float(fj),
                                order_parameter=float(share_all[j]),
                                test_loss=float(action.predicted_test_loss(m, q, float(P), spec, r2=r2)),
                                coordinates={"m": m, "q": q, "r2": r2}, grad_norm=float(gn[j])))
        out.append(tuple(mins))
    return out


def local_minima(P: npt.ArrayLike, spec: ModelSpec, version: str = "fluct", *, n_rays: int = 24,
                 sep: float = 1e-4) -> tuple[Minimum, ...] | list[tuple[Minimum, ...]]:
    """Every local minimum of the reduced action with ``m > 0`` that a dense set of starts finds.

    At each ``P`` the action is descended (the trust-region Newton of
    :func:`global_minimum`, all starts together) from ``3 n_rays`` starts laid
    on rays of fixed copy share ``s = (i + 1/2)/n_rays`` at three amplitudes
    (``0.5, 1, 2`` times the ``gamma_1 = m + (L-1) q`` of the global minimum),
    plus the starts of :func:`global_minimum` and the global minimum itself. An
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
    For scalar ``P`` a tuple of :class:`~copylib.theory.results.Minimum` (coordinates ``{"m", "q", "r2"}``,
    the copy share as order parameter, ``grad_norm``), ordered by increasing copy share; two entries
    mean two coexisting minima (pooling and copying). For an array ``P`` a list of such tuples, one per ``P``.
    """
    spec = action.check_linear_spec(spec)
    version = check_version(version, action.VERSIONS)
    if isinstance(n_rays, bool) or not isinstance(n_rays, numbers.Integral) or n_rays < 2:
        raise ValueError(f"n_rays must be an integer >= 2, got {n_rays!r}")
    if isinstance(sep, bool) or not isinstance(sep, numbers.Real) or not (0 < sep < 1):
        raise ValueError(f"sep must be a real number in (0, 1), got {sep!r}")
    scalar = np.ndim(P) == 0
    Pa = as_finite_array("P", P, positive=True)
    if Pa.ndim > 1 or Pa.size == 0:
        raise ValueError(f"P must be a float or a non-empty 1-d array, got shape {Pa.shape}")
    out = _local_minima_many(Pa.reshape(-1), action.action_constants(spec), version, int(n_rays), float(sep))
    return out[0] if scalar else out


def first_order_point(spec: ModelSpec, version: str = "fluct", *, span: tuple[float, float] = (0.3, 3.0),
                      n_scan: int = 41, rtol: float = 1e-11, delta: float = 1e-8, sep: float = 1e-4) -> FirstOrderPoint:
    """``P3``: the steepest change of the global minimum's copy share around ``P2``, tested for a first-order jump.

    1. :func:`minimum_curve` on ``n_scan`` geometric points of
       ``P in [span[0], span[1]] * p2_numerical``; take the neighbouring pair with
       the largest change of ``copy_share``.
    2. Bisect that interval (geometric midpoints) down to ``P_hi/P_lo - 1 < rtol``,
       assigning each midpoint to the side whose share its global minimum
       (standard starts plus both current end minima; the end minima alone once
       the bracket is below ``1e-3`` relative) is closer to. If the share
       is continuous, the two ends converge to the same share; if the global
       minimum jumps, they keep a finite difference ``jump``.
    3. Branches: at ``P3 (1 -/+ delta)`` descend from each end minimum alone.
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
    :class:`~copylib.theory.results.FirstOrderPoint`: ``P3``; ``pooling``, ``copy``: the global minima at
    the final bracket's ends; ``rel_width``: that bracket ``P_hi/P_lo - 1``; ``P2``: the crossover the
    scan is centred on; ``two_minima``: whether, at ``P3 (1 -/+ delta)``, descents started from the two
    end minima end at two distinct local minima (copy shares more than ``sep`` apart);
    ``delta_action``: ``S_copy - S_pool`` (nats) of those two branches at ``P3 (1 - delta)`` and
    ``P3 (1 + delta)`` (``nan`` without two minima); ``slope``: ``d(S_copy - S_pool)/d ln P`` at
    ``P3`` (``nan`` without two minima); ``first_order``: two minima whose action difference changes
    sign across ``P3`` with a negative slope; ``jump``: the change of the copy share. ``spinodals`` is
    ``None`` (not located for linear attention).
    """
    spec = action.check_linear_spec(spec)
    version = check_version(version, action.VERSIONS)
    span_a = as_finite_array("span", span, positive=True).reshape(-1)
    lo_f, hi_f = (float(span_a[0]), float(span_a[1])) if span_a.size == 2 else (0.0, 0.0)
    if not (0 < lo_f < 1 < hi_f):
        raise ValueError(f"span must be (lo, hi) with 0 < lo < 1 < hi, got {span!r}")
    if isinstance(n_scan, bool) or not isinstance(n_scan, numbers.Integral) or n_scan < 3:
        raise ValueError(f"n_scan must be an integer >= 3, got {n_scan!r}")
    for name, x, top in (("rtol", rtol, 1e-3), ("delta", delta, 1e-2), ("sep", sep, 1.0)):
        if isinstance(x, bool) or not isinstance(x, numbers.Real) or not (0 < x <= top) or (name == "sep" and x == 1):
            raise ValueError(f"{name} must be a real number in (0, {top}], got {x!r}")
    k = action.action_constants(spec)
    P2 = p2_numerical(spec, version, rtol=1e-5)
    grid = P2 * np.geomspace(lo_f, hi_f, int(n_scan))
    curve = minimum_curve(grid, spec, version)
    share = np.nan_to_num(curve.order_parameter, nan=0.0)
    i = int(np.abs(np.diff(share)).argmax())

    def share_of(r):
        return r.order_parameter

    def at(P, hints):
        # the standard starts while the bracket is wide; once it is narrow (below 1e-3 relative) the
        # global minimum at the midpoint is one of the two end minima continued: their hints suffice
        wide = hi_P / lo_P - 1 > 1e-3
        return minimise_many([P], k, version, [[mqr2(h) for h in hints if h.coordinates["m"] > 0]], standard=wide)[0]

    lo_P, hi_P = float(grid[i]), float(grid[i + 1])
    lo_r, hi_r = minimise_many([lo_P, hi_P], k, version)
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
    pool = minimise_many(Pab, k, version, [[mqr2(lo_r)]] * 2, standard=False)
    copy = minimise_many(Pab, k, version, [[mqr2(hi_r)]] * 2, standard=False)
    obj = WhitenedAction(k, version)

    def is_min(r):
        m, q, r2 = mqr2(r)
        lam, newton, _ = _minimum_test(obj, obj.zvec(m, q, r2 if obj.fl else 0.0)[None], np.array([r.P]))
        return m > 0 and lam[0] > 0 and newton[0] < 1e-4
    two = all(abs(share_of(c) - share_of(p)) > sep and is_min(c) and is_min(p) for p, c in zip(pool, copy))
    if two:
        dS = (copy[0].action - pool[0].action, copy[1].action - pool[1].action)
        slope = (dS[1] - dS[0]) / math.log(Pab[1] / Pab[0])
    else:
        dS, slope = (float("nan"), float("nan")), float("nan")
    first = bool(two and dS[0] > 0 > dS[1] and slope < 0)
    return FirstOrderPoint(P3=float(P_j), version=version, pooling=lo_r, copy=hi_r, first_order=first,
                           two_minima=bool(two), spinodals=None, P2=float(P2), rel_width=float(hi_P / lo_P - 1),
                           delta_action=tuple(float(x) for x in dS), slope=float(slope))

