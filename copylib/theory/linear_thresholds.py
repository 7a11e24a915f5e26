"""Thresholds of linear attention: where the symmetric point turns unstable (``P1``) and where
the global minimum crosses over to copying (``P2``), analytically and numerically, and the
susceptibility of ``m`` below ``P1``. Re-exported by :mod:`copylib.theory.linear`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt
from scipy import optimize

from ..arguments import as_finite_array, check_positive, check_version
from ..model.network import ModelSpec
from .linear_action import (
    VERSIONS,
    ActionConstants,
    action_constants,
    check_linear_spec,
    origin_hessian,
    reduced_action,
)
from .linear_minima import global_minimum, minimise_many, mqr2, scan_minima

__all__ = [
    "p1_analytic",
    "p1_numerical",
    "p2_analytic",
    "p2_numerical",
    "p2_numerical_many",
    "susceptibility_m",
]

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


def _p1_fluct(k: ActionConstants, which: str) -> float:
    def f(P):
        """``H_mm`` ("m_only") or the lowest eigenvalue of ``H`` (zero exactly where ``det H`` is).

        Not ``det H`` itself: at extreme scales both eigenvalues turn negative within one
        grid step, ``det H > 0`` again, and a scan on its sign misses the instability.
        """
        with np.errstate(over="ignore", invalid="ignore"):  # far past P1 the entries overflow
            H_mm, H_qq, H_mq = origin_hessian(np.asarray(P, dtype=np.float64), k, "fluct")
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
    spec = check_linear_spec(spec)
    version = check_version(version, VERSIONS)
    if not isinstance(form, str) or form not in ("exact", "m_only", "leading"):
        raise ValueError(f"form must be 'exact', 'm_only' or 'leading', got {form!r}")
    k = action_constants(spec)
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
    k = action_constants(spec)
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
    2. Check with :func:`global_minimum` that ``m* = 0`` just below (``P1 (1 - 1e-3)``)
       and ``m* > 0`` just above (``P1 (1 + 1e-3)``), i.e. that no first-order jump
       preempts the instability. If ``m* > 0`` already below, ``P1`` is instead
       located by bisection on ``m*(P) > 0`` (first-order case) to ``1e-6`` relative.

    Returns a float (sequences).
    """
    spec = check_linear_spec(spec)
    version = check_version(version, VERSIONS)

    def f(P):
        return _numerical_origin_eigmin(P, spec, version)

    a, b = _first_instability(f, 8, version, vectorised=False)
    P1 = optimize.brentq(f, a, b, xtol=1e-13 * b, rtol=1e-14)
    below = global_minimum(P1 * (1 - 1e-3), spec, version)
    if below.coordinates["m"] == 0.0:
        return float(P1)
    # first-order case: the minimum jumps before the spinodal
    lo, hi = P1 / 100, P1 * (1 - 1e-3)
    if global_minimum(lo, spec, version).coordinates["m"] > 0:
        raise ArithmeticError("m* > 0 already at P1/100: cannot bracket the jump")
    while hi / lo - 1 > 1e-6:
        mid = math.sqrt(lo * hi)
        if global_minimum(mid, spec, version).coordinates["m"] > 0:
            hi = mid
        else:
            lo = mid
    return float(math.sqrt(lo * hi))


def susceptibility_m(P: npt.ArrayLike, spec: ModelSpec, version: str = "mean_field") -> np.ndarray:
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
    spec = check_linear_spec(spec)
    version = check_version(version, VERSIONS)
    P = as_finite_array("P", P, positive=True)
    H_mm, H_qq, H_mq = origin_hessian(P, action_constants(spec), version)
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
    ``L = 512``: see :func:`first_order_point`). Numerically (``V = 4``, all scales 1) the
    ratio ``p2_numerical/p2_analytic`` for ``L = 16, 32, 64, 128, 256`` is
    0.88, 0.89, 0.92, 0.96, 1.00 (mean field), 1.21, 1.16, 1.13, 1.12, 1.10 (MAP)
    and 0.94, 1.05, 1.14, 1.18, 1.17 (fluct); the local exponents of ``L`` of
    ``p2_numerical`` are 1.51-1.56 (mean field), 1.44-1.48 (MAP) and 1.97-2.08 (fluct).
    """
    spec = check_linear_spec(spec)
    version = check_version(version, VERSIONS)
    k = action_constants(spec)
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
    spec = check_linear_spec(spec)
    version = check_version(version, VERSIONS)
    rtol = check_positive("rtol", rtol)
    out = _p2_many([action_constants(spec)], [p1_analytic(spec, version)], version, rtol)[0]
    if isinstance(out, ArithmeticError):
        raise out
    return out


def p2_numerical_many(specs: Iterable[ModelSpec], version: str = "mean_field", *, rtol: float = 1e-6) -> np.ndarray:
    """:func:`p2_numerical` for several specs at once (their minimisations batched together).

    specs : sequence of linear ModelSpec; returns a float array with one ``P2`` per spec,
    NaN where :func:`p2_numerical` raises ``ArithmeticError`` (no crossover to locate).
    The numbers are those of :func:`p2_numerical` (the same scan and multisection).
    """
    specs = [check_linear_spec(sp) for sp in specs]
    if not specs:
        raise ValueError("specs must contain at least one linear ModelSpec")
    version = check_version(version, VERSIONS)
    rtol = check_positive("rtol", rtol)
    out = _p2_many([action_constants(sp) for sp in specs], [p1_analytic(sp, version) for sp in specs], version, rtol)
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
        mins = scan_minima([(grids[i][start:start + _P2_CHUNK], ks[i], before[i]) for i in todo], version)
        for i, mi in zip(todo, mins):
            above = np.flatnonzero(np.array([r.order_parameter for r in mi]) >= 0.5)
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
    hint = {i: mqr2(r) if r.coordinates["m"] > 0 else None for i in todo for r in [brackets[i][2]]}
    while todo := [i for i in todo if hi[i] - lo[i] > rtol * lo[i]]:
        Ps = {i: np.geomspace(lo[i], hi[i], _P2_SPLIT + 2)[1:-1] for i in todo}
        mins = minimise_many(np.concatenate([Ps[i] for i in todo]), [ks[i] for i in todo for _ in range(_P2_SPLIT)],
                              version, [[hint[i]] if hint[i] else [] for i in todo for _ in range(_P2_SPLIT)])
        for n, i in enumerate(todo):
            mi = mins[n * _P2_SPLIT:(n + 1) * _P2_SPLIT]
            up = np.flatnonzero(np.array([r.order_parameter for r in mi]) >= 0.5)
            j = up[0] if up.size else _P2_SPLIT
            lo[i], hi[i] = (float(Ps[i][j - 1]) if j else lo[i]), (float(Ps[i][j]) if j < _P2_SPLIT else hi[i])
    return [b if isinstance(b, ArithmeticError) else 0.5 * (lo[i] + hi[i]) for i, b in enumerate(brackets)]


_P2_CHUNK = 16  # scan points of P2 minimised together (two decades)
_P2_SPLIT = 15  # interior points per multisection step of P2 (the bracket shrinks 16-fold)


