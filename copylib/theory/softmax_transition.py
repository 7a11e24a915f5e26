"""The first-order copy transition of softmax attention: minima of the reduced action, spinodals,
the first-order point ``P3``, the barrier between the branches, the global minimum along ``P``, and
the leading-order analytic ``P3``. Re-exported by :mod:`copylib.theory.softmax`.

The action and its derivatives are those of :mod:`copylib.theory.softmax_action`, evaluated on a
``Delta`` grid (sign changes bracket every extremum) and refined by root finding to machine precision.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
from scipy.optimize import brentq
from scipy.optimize.elementwise import find_root

from ..arguments import check_int, check_P, check_P_range, check_positive, check_version
from ..model.network import ModelSpec
from .reduced_action import downward_crossings, grid_minimum_points, inflection_pair, upward_crossings
from .results import FirstOrderPoint, Minimum, MinimumCurve, Spinodals
from .softmax_action import (
    DEFAULT_DELTA_MAX,
    DEFAULT_N_GRID,
    VERSIONS,
    DeltaGrid,
    action_parts,
    copy_weight_of_gap,
    reduced_action,
    reduced_action_derivatives,
    state_loss,
)
from .softmax_noise import RowNoise, check_softmax_spec, rows_for

__all__ = [
    "local_minima",
    "spinodals",
    "first_order_point",
    "barrier_at_p3",
    "copy_minimum_depth",
    "local_minimum_copy_weights",
    "global_minimum",
    "minimum_curve",
    "leading_order_gap",
    "p3_leading_order",
]

# --------------------------------------------------------------------------
# minima, spinodals, first-order point
# --------------------------------------------------------------------------


def _minima(P, spec, version, noise, grid):
    """Local minima of S on [0, grid[-1]]: sign changes of S' (- to +) refined by brentq."""
    return _minima_many(np.array([P], dtype=np.float64), spec, version, noise, grid)[0]


_P_BLOCK = 64  # sample sizes per block of grid evaluations (n_P x n_grid arrays)


def _refine_zeros(order, lo, hi, P, spec, version, noise, what):
    """Zeros of the ``order``-th derivative of ``S`` in the brackets ``[lo, hi]`` (one ``P`` each), all at once,
    by Chandrupatla's method to brentq's tolerance (``1e-14`` absolute, ``4 eps`` relative in ``Delta``)."""
    def derivative(d, P_):
        return action_parts(d, P_, spec, version, noise, order)[order]

    res = find_root(derivative, (lo, hi), args=(P,),
                    tolerances=dict(xatol=1e-14, xrtol=4 * np.finfo(float).eps, fatol=0.0, frtol=0.0))
    if not np.all(res.success):  # pragma: no cover - a valid bracket always converges
        raise RuntimeError(f"root refinement of {what} did not converge")
    return res.x


def _minima_many(Ps, spec, version, noise, grid):
    """:func:`_minima` at every ``P`` of ``Ps``, with one vectorised root search for all of them.

    The brackets are the sign changes of ``S'`` on the grid (exactly as for one
    ``P``); all of them are refined together by Chandrupatla's method
    (``scipy.optimize.elementwise.find_root``), to the same tolerance as brentq
    (``1e-14`` absolute, ``4 eps`` relative in ``Delta``).
    """
    x = grid.x
    lo, P_of, owner, fixed = [], [], [], []  # brackets to refine; roots known exactly
    for start in range(0, Ps.size, _P_BLOCK):
        block = Ps[start:start + _P_BLOCK]
        _, Fp = grid.parts(block[:, None], 1, value=False)
        for j, row in enumerate(Fp):
            i_P = start + j
            # a minimum at Delta_max means S still decreases there (raise Delta_max)
            points, brackets = grid_minimum_points(row, right_end=True)
            fixed += [(i_P, float(x[k])) for k in points]
            lo += brackets.tolist()
            P_of += [block[j]] * brackets.size
            owner += [i_P] * brackets.size
    roots = [(i_P, d) for i_P, d in fixed]
    if lo:
        lo = np.asarray(lo)
        P_of = np.asarray(P_of)

        found = _refine_zeros(1, x[lo], x[lo + 1], P_of, spec, version, noise, "the action's minima")
        roots += list(zip(owner, found.tolist()))
    if not roots:
        return [(np.empty(0), np.empty(0)) for _ in Ps]
    roots.sort()  # by P index, then by Delta
    who = np.array([k for k, _ in roots])
    D = np.array([d for _, d in roots], dtype=np.float64)
    F = action_parts(D, Ps[who], spec, version, noise, 0)[0]
    return [(D[who == i], F[who == i]) for i in range(Ps.size)]


def _states(D, F, P, spec, version, noise) -> tuple[Minimum, ...]:
    """The minima at gaps ``D`` (array) with actions ``F`` at one ``P`` as :class:`~copylib.theory.results.Minimum` s (one vectorised
    evaluation of the copy weights and the test losses)."""
    D = np.asarray(D, dtype=np.float64)
    c = np.atleast_1d(copy_weight_of_gap(D, spec, version=version, noise=noise))
    loss = np.atleast_1d(state_loss(D, P, spec, version=version, noise=noise))
    return tuple(Minimum(P=P, version=version, action=float(f), order_parameter=float(ci), test_loss=float(li),
                         coordinates={"Delta": float(d)})
                 for d, f, ci, li in zip(D.tolist(), np.atleast_1d(F).tolist(), c.tolist(), loss.tolist()))


def _checked_minima(P, spec, version, noise, Delta_max=DEFAULT_DELTA_MAX, n_grid=DEFAULT_N_GRID):
    """``(P, version, Delta (n,), S (n,))`` of the local minima, the arguments checked."""
    spec = check_softmax_spec(spec)
    version = check_version(version, VERSIONS)
    P = check_positive("P", P)
    rows_for(version, spec, noise)
    D, F = _minima(P, spec, version, noise, DeltaGrid(Delta_max, n_grid, spec, version, noise))
    return spec, P, version, D, F


def local_minima(P: float, spec: ModelSpec, version: str = "mean_field", *, noise: RowNoise | None = None,
                 Delta_max: float = DEFAULT_DELTA_MAX, n_grid: int = DEFAULT_N_GRID) -> tuple[Minimum, ...]:
    """All local minima of ``S(Delta; P)`` over ``Delta in [0, Delta_max]``.

    ``S'`` is evaluated on a uniform grid of ``n_grid`` points; each sign change
    from ``-`` to ``+`` is refined with brentq to machine precision. A
    boundary point counts as a minimum if ``S`` decreases into it. Two minima
    closer than the grid spacing (only within ~grid^2 of a spinodal in ``P``)
    are not resolved.

    Parameters
    ----------
    P : float > 0; spec : ModelSpec (softmax); version : see :func:`reduced_action`
    noise : RowNoise for ``version="fluct"``
    Delta_max : float > 0; n_grid : int >= 11

    Returns
    -------
    tuple of :class:`~copylib.theory.results.Minimum`, sorted by ``Delta``: coordinates ``{"Delta"}``,
    the copy weight ``c`` (:func:`copy_weight_of_gap`) as order parameter, the test loss of the state
    (:func:`state_loss`); ``grad_norm`` is ``None`` (each minimum is a root of ``S'`` refined to
    machine precision).
    """
    spec, P, version, D, F = _checked_minima(P, spec, version, noise, Delta_max, n_grid)
    return _states(D, F, P, spec, version, noise)


def _inflections(P, spec, version, noise, grid):
    """Zeros of S'' on the grid (refined): ``(hump, dip)`` = local max / min of S', or None."""
    _, _, Fpp = grid.parts(P, 2, value=False)

    def fpp(d):
        return float(action_parts(np.asarray(d), P, spec, version, noise, 2)[2])

    return inflection_pair(grid.x, Fpp, fpp)


def _fprime(d, P, spec, version, noise):
    return float(action_parts(np.asarray(d), P, spec, version, noise, 1)[1])


def _state(P, spec, version, noise, grid):
    """(-1 no inflection pair, else (S'(hump), S'(dip)))."""
    infl = _inflections(P, spec, version, noise, grid)
    if infl is None:
        return None
    return _fprime(infl[0], P, spec, version, noise), _fprime(infl[1], P, spec, version, noise)


def _coexists(st):
    return st is not None and st[0] > 0 and st[1] < 0


def _states_many(Ps, spec, version, noise, grid):
    """:func:`_state` at every ``P`` of ``Ps``: the same grid brackets of the inflection pair
    (:func:`inflection_pair`), all refined together by Chandrupatla's method to brentq's tolerance."""
    x = grid.x
    brackets, P_of, owner = [], [], []  # (hump index, dip index) per P that has a pair
    for start in range(0, Ps.size, _P_BLOCK):
        block = Ps[start:start + _P_BLOCK]
        _, _, Fpp = grid.parts(block[:, None], 2, value=False)
        for j, row in enumerate(Fpp):
            down, up = downward_crossings(row), upward_crossings(row)
            later = up[up > down[0]] if down.size else up[:0]
            if later.size:
                brackets.append((down[0], later[0]))
                P_of.append(block[j])
                owner.append(start + j)
    states = [None] * Ps.size
    if not brackets:
        return states
    idx = np.asarray(brackets).T.ravel()  # humps, then dips
    P2 = np.tile(np.asarray(P_of), 2)

    zeros = _refine_zeros(2, x[idx], x[idx + 1], P2, spec, version, noise, "the inflection points")
    Fp = action_parts(zeros, P2, spec, version, noise, 1)[1].reshape(2, -1)
    for n, i_P in enumerate(owner):
        states[i_P] = (float(Fp[0, n]), float(Fp[1, n]))
    return states


def _scan(spec, version, noise, grid, P_range, n_scan):
    Ps = np.geomspace(P_range[0], P_range[1], n_scan)
    states = _states_many(Ps, spec, version, noise, grid)
    co = np.array([_coexists(s) for s in states])
    if not co.any():
        raise ValueError(
            f"no coexistence of two minima found for P in [{P_range[0]:g}, {P_range[1]:g}] "
            "(no first-order transition in this range; widen P_range or refine n_scan)"
        )
    i0, i1 = np.flatnonzero(co)[[0, -1]]
    if i0 == 0 or i1 == n_scan - 1:
        raise ValueError(f"the coexistence region touches the end of P_range = {P_range}; widen it")
    if not co[i0:i1 + 1].all():
        raise ValueError("the coexistence region in P is not an interval; refine n_scan")
    return Ps, states, i0, i1


def _spinodal_root(which, Pa, Pb, spec, version, noise, grid):
    """brentq for S'(extremum) = 0 between Pa (one minimum) and Pb (two minima)."""
    k = 1 if which == "lower" else 0  # lower spinodal: dip crosses 0; upper: hump

    def h(P):
        st = _state(P, spec, version, noise, grid)
        return None if st is None else st[k]

    # the inflection pair must exist at both ends: move the one-minimum end inwards if not
    for _ in range(200):
        if h(Pa) is not None:
            break
        Pm = 0.5 * (Pa + Pb)
        if _coexists(_state(Pm, spec, version, noise, grid)):
            Pb = Pm
        else:
            Pa = Pm
    else:  # pragma: no cover
        raise RuntimeError("could not bracket the spinodal")
    P = brentq(lambda P: h(P), Pa, Pb, xtol=1e-12 * Pb, rtol=1e-14)
    infl = _inflections(P, spec, version, noise, grid)
    return P, infl[k]


def spinodals(spec: ModelSpec, version: str = "mean_field", *, noise: RowNoise | None = None,
              P_range: tuple[float, float] | None = None, n_scan: int = 400, Delta_max: float = DEFAULT_DELTA_MAX,
              n_grid: int = DEFAULT_N_GRID) -> Spinodals:
    """The spinodals of the first-order copy transition.

    Method: for each ``P`` the zeros of ``S''`` give the local max ("hump") and
    local min ("dip") of ``S'``. Two minima coexist exactly when
    ``S'(hump) > 0 > S'(dip)``. A geometric scan of ``n_scan`` values in
    ``P_range`` brackets the coexistence interval; brentq then solves
    ``S'(dip(P); P) = 0`` (copy minimum born, ``S' = S'' = 0``) and
    ``S'(hump(P); P) = 0`` (pooling minimum dies).

    Raises ``ValueError`` if no coexistence is found in ``P_range`` (e.g. a
    continuous crossover, as for small ``L``).
    """
    spec = check_softmax_spec(spec)
    version = check_version(version, VERSIONS)
    rows_for(version, spec, noise)
    grid = DeltaGrid(Delta_max, n_grid, spec, version, noise)
    P_range = _default_range(spec) if P_range is None else check_P_range(P_range)
    n_scan = check_int("n_scan", n_scan, 3)
    Ps, _, i0, i1 = _scan(spec, version, noise, grid, P_range, n_scan)
    P_lo, D_lo = _spinodal_root("lower", Ps[i0 - 1], Ps[i0], spec, version, noise, grid)
    P_up, D_up = _spinodal_root("upper", Ps[i1 + 1], Ps[i1], spec, version, noise, grid)
    return Spinodals(P_lower=P_lo, P_upper=P_up, Delta_lower=D_lo, Delta_upper=D_up)


def _default_range(spec):
    """``(x, 1e4 L (1 + ln L)^2 x)``, ``x = sigma0^2 / sigma_G^2``: wide enough for every P3 seen so far.

    ``P3`` scales like ``x`` (exactly so for ``"energy"``), so both ends do: with a fixed lower
    end ``1`` the range was empty (upper end below 1) once ``sigma0_sq / sigma_G^2 < 1e-7``.
    """
    x = spec.sigma0_sq / spec.sigma_G**2
    return x, 1e4 * spec.L * (1 + math.log(spec.L)) ** 2 * x


def _branches(P, spec, version, noise, grid):
    mins, F = _minima(P, spec, version, noise, grid)
    if mins.size < 2:
        raise RuntimeError(f"expected two minima at P = {P}, found {mins.size}")
    return (mins[0], F[0]), (mins[-1], F[-1])


def first_order_point(spec: ModelSpec, version: str = "mean_field", *, noise: RowNoise | None = None,
                      P_range: tuple[float, float] | None = None, n_scan: int = 400,
                      Delta_max: float = DEFAULT_DELTA_MAX, n_grid: int = DEFAULT_N_GRID) -> FirstOrderPoint:
    """``P3``: brentq on ``S_copy(P) - S_pool(P)`` between the spinodals.

    The branches are the smallest-``Delta`` (pooling) and largest-``Delta`` (copy)
    local minima (:func:`local_minima`). Their action difference is positive at
    the lower spinodal and negative at the upper one (``d(S_copy - S_pool)/dP <
    0``: more data favour copying), so the root is unique. Arguments as
    :func:`spinodals`.

    Returns a :class:`~copylib.theory.results.FirstOrderPoint`: ``pooling`` and ``copy`` the two minima at
    ``P3`` (as :func:`local_minima` reports them), ``spinodals``, ``jump`` the change of the copy weight;
    ``first_order`` and ``two_minima`` are True (both minima exist between the spinodals); ``P2``,
    ``rel_width``, ``delta_action`` and ``slope`` are ``None`` (linear attention's bisection diagnostics).
    """
    spec = check_softmax_spec(spec)
    version = check_version(version, VERSIONS)
    rows_for(version, spec, noise)
    sp = spinodals(spec, version, noise=noise, P_range=P_range, n_scan=n_scan, Delta_max=Delta_max,
                   n_grid=n_grid)
    grid = DeltaGrid(Delta_max, n_grid, spec, version, noise)

    def diff(P):
        (_, Fp), (_, Fc) = _branches(P, spec, version, noise, grid)
        return Fc - Fp

    # shrink inwards until both branches are resolved on the grid
    lo, hi = sp.P_lower, sp.P_upper
    width = hi - lo
    for frac in (1e-6, 1e-4, 1e-3, 1e-2, 5e-2):
        a, b = lo + frac * width, hi - frac * width
        try:
            fa, fb = diff(a), diff(b)
        except RuntimeError:
            continue
        if fa > 0 > fb:
            break
    else:  # pragma: no cover
        raise RuntimeError("could not bracket P3 between the spinodals")
    P3 = brentq(diff, a, b, xtol=1e-13 * b, rtol=1e-15)
    (Dp, Fp), (Dc, Fc) = _branches(P3, spec, version, noise, grid)
    pooling, copy = _states(np.array([Dp, Dc]), np.array([Fp, Fc]), P3, spec, version, noise)
    return FirstOrderPoint(P3=P3, version=version, pooling=pooling, copy=copy, first_order=True, two_minima=True,
                           spinodals=sp)


def barrier_at_p3(point: FirstOrderPoint, spec: ModelSpec, version: str = "mean_field", *,
                  noise: RowNoise | None = None, n_grid: int = DEFAULT_N_GRID) -> float:
    """Barrier of ``S(Delta; P3)`` between the two branches of ``point``, in nats.

    ``point`` is the :func:`first_order_point` of the same ``spec``, ``version``
    and ``noise``. The action is maximised on ``n_grid`` points between the
    pooling and the copy gap; at ``P3`` the two minima have equal action, so
    the height is the same above either.
    """
    spec = check_softmax_spec(spec)
    version = check_version(version, VERSIONS)
    rows_for(version, spec, noise)
    if not isinstance(point, FirstOrderPoint):
        raise ValueError(f"point must be a FirstOrderPoint (from first_order_point), got {type(point).__name__}")
    if "Delta" not in point.pooling.coordinates:
        raise ValueError("point must be the first_order_point of a softmax spec (coordinates with a gap 'Delta')")
    n_grid = check_int("n_grid", n_grid, minimum=3)
    D = np.linspace(point.pooling.coordinates["Delta"], point.copy.coordinates["Delta"], n_grid)
    F = reduced_action(D, point.P3, spec, version=version, noise=noise)
    return float(F.max() - F[0])


def copy_minimum_depth(P: float, spec: ModelSpec, version: str = "mean_field", *, noise: RowNoise | None = None,
                       n_grid: int = 20001) -> tuple[float, float]:
    """Depth ``S_b`` (nats) and distance ``x_+ - x_-`` of the copy minimum of ``S(Delta; P)`` below the barrier top.

    ``S_b = S(Delta_top) - S(Delta_copy)`` and ``x_+ - x_- = Delta_copy - Delta_top``, where
    ``Delta_copy`` is the largest-gap minimum (:func:`local_minima`) and ``Delta_top``
    the barrier top (the first ``+`` to ``-`` sign change of ``S'`` on ``n_grid`` points
    between the outer minima, refined with brentq to ``1e-14``; with two minima the only
    maximum between them). Near the lower spinodal ``S_b ~ delta^(3/2)`` and ``x_+ - x_- ~ delta^(1/2)`` in
    ``delta = P - P_lower``. Raises ``ValueError`` if ``S`` has a single minimum at ``P``.
    """
    n_grid = check_int("n_grid", n_grid, minimum=3)
    spec, P, version, D, F = _checked_minima(P, spec, version, noise)
    if D.size < 2:
        raise ValueError(f"P = {P!r}: F has a single minimum (P outside the coexistence window), no barrier")
    x = np.linspace(D[0], D[-1], n_grid)[1:-1]
    dF = reduced_action_derivatives(x, P, spec, version=version, noise=noise)[1]
    k = np.flatnonzero((dF[:-1] > 0) & (dF[1:] <= 0))[0]  # F' from + to -: the barrier top

    def slope(d):
        return float(reduced_action_derivatives(d, P, spec, version=version, noise=noise)[1])

    D_top = brentq(slope, x[k], x[k + 1], xtol=1e-14)
    return float(reduced_action(D_top, P, spec, version=version, noise=noise)) - float(F[-1]), float(D[-1] - D_top)


def local_minimum_copy_weights(P: float, spec: ModelSpec, version: str = "mean_field", *,
                               noise: RowNoise | None = None) -> np.ndarray:
    """Copy weights of all local minima of ``S(Delta; P)`` (the branches at ``P``), ascending in ``Delta``."""
    spec, P, version, D, _ = _checked_minima(P, spec, version, noise)
    return np.asarray(copy_weight_of_gap(D, spec, version=version, noise=noise), dtype=float)


def global_minimum(P: float, spec: ModelSpec, version: str = "mean_field", *,
                   noise: RowNoise | None = None) -> Minimum:
    """The global minimum of ``S(Delta; P)``: the lowest of :func:`local_minima` (the first of equal actions),
    a :class:`~copylib.theory.results.Minimum` with the copy weight as order parameter and the test loss
    per position."""
    spec, P, version, D, F = _checked_minima(P, spec, version, noise)
    j = int(np.argmin(F))
    return _states(D[j:j + 1], F[j:j + 1], P, spec, version, noise)[0]


def minimum_curve(P_values: npt.ArrayLike, spec: ModelSpec, version: str = "mean_field", *,
                  noise: RowNoise | None = None,
                  Delta_max: float = DEFAULT_DELTA_MAX, n_grid: int = DEFAULT_N_GRID
                  ) -> MinimumCurve:
    """The global minimum of ``S`` at each ``P`` of ``P_values`` (1-d array of ``P > 0``).

    Returns a :class:`~copylib.theory.results.MinimumCurve`: coordinates ``{"Delta"}``, the copy weight as
    order parameter (it jumps at ``P3``, and so does the test loss), the action, and ``n_minima``.
    """
    spec = check_softmax_spec(spec)
    version = check_version(version, VERSIONS)
    rows_for(version, spec, noise)
    P_values = check_P(P_values, "P_values")
    if P_values.ndim != 1 or P_values.size == 0:
        raise ValueError(f"P_values must be a non-empty 1-d array, got shape {P_values.shape}")
    grid = DeltaGrid(Delta_max, n_grid, spec, version, noise)
    D, F, n = [], [], []
    for mins, vals in _minima_many(P_values.astype(np.float64), spec, version, noise, grid):
        j = int(np.argmin(vals))
        D.append(mins[j])
        F.append(vals[j])
        n.append(mins.size)
    D = np.asarray(D)
    return MinimumCurve(
        P=P_values.copy(), version=version, action=np.asarray(F),
        order_parameter=copy_weight_of_gap(D, spec, version=version, noise=noise),
        test_loss=state_loss(D, P_values, spec, version=version, noise=noise), coordinates={"Delta": D},
        n_minima=np.asarray(n),
    )

# --------------------------------------------------------------------------
# leading-order analytic P3
# --------------------------------------------------------------------------


def leading_order_gap(L: int) -> float:
    """The root ``D > 3/2`` of ``D = (1/2) ln[(L-1)(D-1)]`` (fixed-point iteration), or ``nan``.

    The map ``D -> (1/2) ln[(L-1)(D-1)]`` has slope ``1/(2(D-1))``: it contracts
    for ``D > 3/2``, where the copy root lies, so iteration from ``D_0 = (1/2) ln(L-1) + 1``
    converges to it. A root exists only if ``(1/2) ln[(L-1)/2] >= 3/2``, i.e.
    ``L >= 2 e^3 + 1 = 41.17``; below that (e.g. ``L = 32``) returns ``nan``.
    """
    L = check_int("L", L, 2)
    if 0.5 * math.log((L - 1) / 2) < 1.5:
        return math.nan
    D = 0.5 * math.log(L - 1) + 1.0
    for _ in range(10000):
        D_new = 0.5 * math.log((L - 1) * (D - 1))
        if abs(D_new - D) <= 1e-15 * D:
            return D_new
        D = D_new
    return D  # pragma: no cover (contraction: converges geometrically)


def p3_leading_order(L: int, V: int, spec: ModelSpec | None = None) -> float:
    """Analytic ``P3 = (sigma_0^2/sigma_G^2) V/(V-1) (L-1) D^3/(D-1)`` (the softmax chapter's leading order).

    ``D = leading_order_gap(L)``; ``sigma0_sq`` and ``sigma_G`` from ``spec``
    (default 1). Returns ``nan`` for ``L < 2 e^3 + 1`` (no root).

    Derivation (exact for the ``"energy"`` action with the pooling branch set to
    ``S = 0``): with ``u = (L-1) e^{-2 Delta}``, ``Gamma = 1/(1+u)``,
    ``k = (L-1)/sigma_G^2``, the copy minimum satisfies
    ``S' = 0: 2 G0 u/(1+u)^2 = k Delta`` and equal action with ``S_pool = 0``:
    ``G0/(1+u) = k Delta^2/2``. Their ratio gives ``u = 1/(Delta - 1)``, i.e.
    ``e^{2 Delta} = (L-1)(Delta-1)``, and then ``G0 = k D^3/(2(D-1))``. No
    large-``Delta`` expansion of ``Gamma`` is used: it is the exact saddle point of
    the energy action, not of an expansion. The only approximation is
    ``S_pool = 0`` instead of ``-G0 Gamma(Delta_p) + k Delta_p^2/2 = -(G0/L)(1 + O(D^2/L))``.
    Since ``d/dG0 max_copy[G0 Gamma - k Delta^2/2] = Gamma = (D-1)/D``, this shifts the
    root by

        P3_energy = P3_lo [1 + D/((D-1) L) + O(D^4/L^2)],

    i.e. the formula is accurate to relative ``O(1/L)`` (checked numerically:
    -6.8 % at L = 42, -1.4 % at L = 128, -1.2e-4 at L = 1e4, each matching
    ``-D/((D-1)L)``). It says nothing about the ``eps = V kappa/P`` and Occam
    corrections that separate ``"energy"`` from ``"mean_field"`` (relative
    ``O(V/ln^2 L)``: +29 % at L = 32, V = 4). At large ``L``: ``D -> (1/2) ln L``
    and ``P3 -> V/(V-1) (L/4) ln^2 L``, approached only through ``ln ln L``
    corrections (the ratio is 0.49 at L = 42 and 0.64 at L = 1e5).
    """
    L = check_int("L", L, 2)
    V = check_int("V", V, 2)
    if spec is not None and not isinstance(spec, ModelSpec):
        raise TypeError(f"spec must be a copylib.ModelSpec or None, got {type(spec).__name__}")
    s0, sG = (1.0, 1.0) if spec is None else (spec.sigma0_sq, spec.sigma_G)
    D = leading_order_gap(L)
    return (s0 / sG**2) * V / (V - 1) * (L - 1) * D**3 / (D - 1)
