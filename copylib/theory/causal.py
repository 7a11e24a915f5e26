"""Mean-field theory of the softmax copy transition under a causal mask.

With the causal mask (``ModelSpec(kind="softmax", causal=True, cyclic=False)``)
row ``l`` of the attention (``l = 1, ..., L``, as in the book; array index ``l - 1``)
sees the ``l`` positions ``j <= l``. Row 1 sees only itself (``A_1 = e_1``) and has
no copy target; row ``l >= 2`` has ``n_l = l - 1`` competitors next to its copy
position ``l - 1``. The copy family puts a logit gap ``Delta_l`` on the previous
position of row ``l``::

    c_l = A_{l,l-1} = 1 / (1 + (l-1) e^{-Delta_l}),     |A_l|^2 = c_l^2 + (1 - c_l)^2 / (l - 1).

Vocabulary permutation symmetry is untouched by the mask, so the plug-in data
action :func:`copylib.posterior.order_parameters.plugin_action` still applies, with the
invariants (:func:`copylib.posterior.order_parameters.invariants`, non-cyclic target)::

    alpha_1 = 1 + sum_{l>=2} |A_l|^2,   alpha_2 = L,   gamma_1 = sum_{l>=2} c_l,   gamma_2 = L - 1

(the ``1`` is row 1; ``alpha_2 = L`` since every row sums to 1; ``gamma_2`` is the
grand sum of ``A^T T``, ``T 1 = 1 - e_1``). The cheapest logits of a row with gap
``Delta_l`` are ``Delta_l (e_{l-1} - 1/l)`` on its visible entries (the visible
row mean drops out of the softmax), of squared norm ``Delta_l^2 (1 - 1/l)``,
so the logit prior costs::

    sum_{l>=2} (1 - 1/l) Delta_l^2 / (2 sigma_G^2)  =  (L - H_L) Delta^2 / (2 sigma_G^2)

for a uniform gap (``H_L`` the harmonic number), against ``(L - 1) Delta^2 /
(2 sigma_G^2)`` in the cyclic case. The module treats both geometries with one
description of the rows (competitors per row, extra rows
without a target, number of targets), so that the cyclic case of
:mod:`copylib.theory.softmax` is a built-in reference.

Versions (as in :mod:`copylib.theory.softmax`): ``"mean_field"`` (readout integrated
out, the Occam log-determinants kept) and ``"map"`` (readout minimised: the same
action without the two log-determinant terms).

Functions:

* :func:`row_copy_weights`, :func:`copy_state_invariants` -- the copy state;
* :func:`gain_criterion`, :func:`gain_criterion_is_monotone` -- the large-``P``
  criterion for a single minimum of the uniform-gap family;
* :func:`gap_action` -- ``S`` of the uniform-gap family and its first two derivatives;
* :func:`row_gap_action` -- ``S`` of the per-row family and its gradient;
* :func:`local_minima`, :func:`first_order_point` -- minima,
  spinodals and the first-order point ``P3`` of the uniform family;
* :func:`row_gap_noise` -- logit noise of the rows, for the per-row family
  averaged over it (the ``"fluct"`` idea of :mod:`copylib.theory.softmax`);
* :func:`row_gap_minimum` -- a local minimum of the per-row family (L-BFGS-B);
* :func:`row_gap_branches` -- both branches of the per-row family along ``P``
  by continuation (hysteresis), their spinodals and ``P3``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.optimize import brentq, minimize
from scipy.special import expit

from ..arguments import (
    as_finite_array,
    as_real_array,
    check_generator,
    check_grid,
    check_instance,
    check_int,
    check_P,
    check_P_values,
    check_positive,
    check_version,
)
from ..model.network import ModelSpec, check_spec
from .reduced_action import grid_minimum_points, inflection_pair
from .results import FirstOrderPoint, Minimum, MinimumCurve, Spinodals
from .softmax_noise import set_shift_and_rho

__all__ = [
    "VERSIONS",
    "row_copy_weights",
    "copy_state_invariants",
    "gain_criterion",
    "gain_criterion_is_monotone",
    "gap_action",
    "row_gap_action",
    "local_minima",
    "global_minimum",
    "minimum_curve",
    "first_order_point",
    "RowGapNoise",
    "row_gap_noise",
    "row_gap_minimum",
    "RowGapBranches",
    "row_gap_branches",
]

VERSIONS = ("mean_field", "map")


@dataclass(frozen=True)
class _CopyRows:
    """The rows of a softmax copy state, as the plug-in action sees them.

    Attributes
    ----------
    competitors : int array ``(n_rows,)``
        For every row with a copy target, the number of visible positions other
        than the copy position (``L - 1`` in every cyclic row; ``l - 1`` in causal row ``l = 2, ..., L``).
    fixed_alpha : float
        Contribution to ``alpha_1`` of the rows without a target (causal row 1: ``1``).
    n_targets : int
        ``tr T^T T`` (``L`` cyclic, ``L - 1`` otherwise) = ``gamma_2``.
    L : int
        Sequence length (``alpha_2 = L``: every softmax row sums to 1).
    """

    competitors: np.ndarray
    fixed_alpha: float
    n_targets: int
    L: int

    @property
    def stiffness(self) -> np.ndarray:
        """Per-row prior stiffness ``1 - 1/(n + 1)`` (times ``1/sigma_G^2``), shape ``(n_rows,)``."""
        return 1.0 - 1.0 / (self.competitors + 1.0)


def _check_spec(spec) -> ModelSpec:
    check_spec(spec, kind="softmax", theory="the copy-state theory")
    if not spec.cyclic and not spec.causal:
        raise ValueError("spec must be cyclic or causal: the non-cyclic task without a mask has no "
                         "position-independent copy family (row 1 attends to all of a target-less row)")
    return spec


def _copy_rows(spec: ModelSpec) -> _CopyRows:
    """:class:`_CopyRows` of a softmax spec: cyclic (``L`` equal rows) or causal.

    Raises ``ValueError`` for a non-cyclic spec without the causal mask.
    """
    spec = _check_spec(spec)
    L = spec.L
    if spec.causal:
        return _CopyRows(np.arange(1, L), 1.0, L - 1, L)
    return _CopyRows(np.full(L, L - 1), 0.0, L, L)


def row_copy_weights(Delta: npt.ArrayLike, spec: ModelSpec) -> np.ndarray:
    """Copy weights ``c_l = 1/(1 + n_l e^{-Delta_l})`` of the rows with a target.

    Delta : float, array ``(...)`` (one gap for all rows) or ``(..., n_rows)``
    (one gap per row; ``n_rows = L`` cyclic, ``L - 1`` causal) -- a trailing axis
    of length ``n_rows`` is read as per-row gaps. Returns ``(..., n_rows)``.
    """
    rows = _copy_rows(spec)
    D = _per_row(as_finite_array("Delta", Delta), rows)
    return expit(D - np.log(rows.competitors))


def _per_row(D: np.ndarray, rows: _CopyRows) -> np.ndarray:
    n = rows.competitors.size
    if D.ndim and D.shape[-1] == n:
        return D
    return D[..., None] * np.ones(n)


def copy_state_invariants(Delta: npt.ArrayLike, spec: ModelSpec) -> tuple[float | np.ndarray, ...]:
    """``alpha_1, alpha_2, gamma_1, gamma_2`` of the copy state (gaps as :func:`row_copy_weights`).

    Returns four arrays of the batch shape ``(...)``. They equal
    ``invariants(A, spec.cyclic)`` of the attention ``softmax`` of the planted
    logits (tested).
    """
    rows = _copy_rows(spec)
    c = row_copy_weights(Delta, spec)
    a = c**2 + (1 - c) ** 2 / rows.competitors
    alpha_1 = rows.fixed_alpha + a.sum(-1)
    gamma_1 = c.sum(-1)
    ones = np.ones_like(alpha_1)
    return alpha_1, rows.L * ones, gamma_1, rows.n_targets * ones


def gain_criterion(Delta: npt.ArrayLike, spec: ModelSpec) -> np.ndarray:
    """Left side of the large-``P`` stationarity condition of the uniform-gap family,
    ``Delta^{-1} d(gamma_1^2/alpha_1)/dDelta``, on a grid of gaps.

    At large ``P`` the data term is the gain ``-G_0 gamma_1^2/alpha_1`` and the
    prior ``k Delta^2/2``, so a stationary point has this expression equal to
    ``k/G_0``, which falls from ``inf`` to 0 as ``P`` grows: if it decreases
    monotonically in ``Delta``, every ``P`` has one stationary point (no jump).
    Delta : ``(n,)``, ``n >= 3``, finite, ``> 0`` and strictly increasing; the
    derivative is ``numpy.gradient`` on that grid (second order inside, first
    order at the ends). Returns ``(n,)``.
    """
    Delta = as_real_array("Delta", Delta)
    if Delta.ndim != 1 or Delta.size < 3:
        raise ValueError(f"Delta must be 1-d with at least 3 points, got shape {Delta.shape}")
    as_finite_array("Delta", Delta)
    if not (Delta > 0).all() or not (np.diff(Delta) > 0).all():
        raise ValueError("Delta must be > 0 and strictly increasing")
    # a column: a grid as long as the number of rows must not be read as one gap per row
    a1, _, g1, _ = copy_state_invariants(Delta[:, None], spec)
    return np.gradient((g1**2 / a1).ravel(), Delta) / Delta


def gain_criterion_is_monotone(Delta: npt.ArrayLike, spec: ModelSpec) -> bool:
    """True when :func:`gain_criterion` decreases strictly at every step of the grid ``Delta``
    (a single minimum of the uniform-gap family at every large ``P``)."""
    return bool((np.diff(gain_criterion(Delta, spec)) < 0).all())


def _data_coefficients(P, spec, version):
    V = spec.V
    eps = V * spec.kappa / P
    a = V * (V - 1) / 2 if version == "mean_field" else 0.0
    b = P * (V - 1) / (2 * spec.sigma_sq * V)
    return eps, a, b


def _data_action(a1, g1, P, spec, rows, version):
    """Plug-in data action of a row-stochastic copy state (``alpha_2 = L``, ``gamma_2 = n_T``)."""
    V, L, nT = spec.V, rows.L, rows.n_targets
    eps, a, b = _data_coefficients(P, spec, version)
    occam = a * np.log1p(a1 / eps) + (V / 2 * np.log1p(L / eps) if a else 0.0)
    return occam - P / (2 * spec.sigma_sq * V) * ((V - 1) * g1**2 / (a1 + eps) + nT**2 / (L + eps))


def gap_action(Delta: npt.ArrayLike, P: npt.ArrayLike, spec: ModelSpec, *, version: str = "mean_field",
               order: int = 0) -> float | np.ndarray | list[float | np.ndarray]:
    """Reduced action ``S(Delta; P)`` of the uniform-gap copy family, in nats.

    ``S = S_v^data(alpha_1(Delta), L, gamma_1(Delta), n_T; P) + k Delta^2 / 2`` with
    ``k = sum_l (1 - 1/(n_l + 1)) / sigma_G^2`` (``(L-1)/sigma_G^2`` cyclic,
    ``(L - H_L)/sigma_G^2`` causal) and ``S_v^data`` the plug-in data action
    (``"mean_field"``) or that without its log-determinants (``"map"``). For a cyclic
    spec this is :func:`copylib.theory.softmax.reduced_action` (tested).

    Delta, P : broadcastable arrays (``P > 0``); order : 0, 1 or 2.
    Returns ``S`` (order 0) or the list ``[S, S', S'']`` up to ``order``.
    """
    spec = _check_spec(spec)
    version = check_version(version, VERSIONS)
    if order not in (0, 1, 2):
        raise ValueError(f"order must be 0, 1 or 2, got {order!r}")
    Delta = as_finite_array("Delta", Delta)
    P = check_P(P)
    out = _gap_parts(Delta, P, spec, _copy_rows(spec), version, order)
    return out[0] if order == 0 else out


def _row_sums(Delta, rows, order):
    """``alpha_1, gamma_1`` of the uniform family and their Delta-derivatives up to ``order``
    (they do not depend on ``P``): two lists ``[a1, a1', a1'']``, ``[g1, g1', g1'']``."""
    n = rows.competitors
    c = expit(np.asarray(Delta, float)[..., None] - np.log(n))
    oc = 1 - c
    a1s = [rows.fixed_alpha + (c**2 + oc**2 / n).sum(-1)]
    g1s = [c.sum(-1)]
    if order >= 1:
        c1 = c * oc
        h = c - oc / n
        a1s.append((2 * h * c1).sum(-1))
        g1s.append(c1.sum(-1))
        if order >= 2:
            c2 = c1 * (1 - 2 * c)
            a1s.append((2 * (1 + 1 / n) * c1**2 + 2 * h * c2).sum(-1))
            g1s.append(c2.sum(-1))
    return a1s, g1s


def _gap_parts(Delta, P, spec, rows, version, order, sums=None):
    """``[S, S', S'']`` up to ``order``; ``sums`` = :func:`_row_sums` at ``Delta`` if precomputed."""
    Delta, P = np.broadcast_arrays(np.asarray(Delta, float), np.asarray(P, float))
    a1s, g1s = _row_sums(Delta, rows, order) if sums is None else sums
    a1, g1 = a1s[0], g1s[0]
    k = rows.stiffness.sum() / spec.sigma_G**2
    out = [_data_action(a1, g1, P, spec, rows, version) + k * Delta**2 / 2]
    if order >= 1:
        eps, a, b = _data_coefficients(P, spec, version)
        x = a1 + eps
        a1p, g1p = a1s[1], g1s[1]
        S_a = a / x + b * g1**2 / x**2
        S_g = -2 * b * g1 / x
        out.append(S_a * a1p + S_g * g1p + k * Delta)
        if order >= 2:
            a1pp, g1pp = a1s[2], g1s[2]
            S_aa = -a / x**2 - 2 * b * g1**2 / x**3
            S_ag = 2 * b * g1 / x**2
            S_gg = -2 * b / x
            out.append(S_aa * a1p**2 + 2 * S_ag * a1p * g1p + S_gg * g1p**2 + S_a * a1pp + S_g * g1pp + k)
    return out


@dataclass(frozen=True)
class RowGapNoise:
    """Fixed draws of logit noise for every row with a target (see :func:`row_gap_noise`).

    A row with gap ``Delta`` on its copy position and noise ``eta`` on its visible
    logits has copy weight ``sigmoid(Delta - shift)`` and squared norm
    ``c^2 + Psi (1 - c)^2``, with ``shift = ln sum_{j != copy} e^{eta_j} - eta_copy`` and
    ``Psi = sum_{j != copy} e^{2 eta_j} / (sum_{j != copy} e^{eta_j})^2``: two numbers per
    draw describe the row at every ``Delta``. Without noise ``shift = ln n`` and
    ``Psi = 1/n`` (``n`` competitors).

    Attributes
    ----------
    shift, rho : arrays ``(n_rows, n_draws)``, ``rho`` the collision sum ``Psi``
    std : float
        The noise scale ``tau`` of the logits.
    """

    shift: np.ndarray
    rho: np.ndarray
    std: float

    def __post_init__(self):
        set_shift_and_rho(self, 2)
        object.__setattr__(self, "std", check_positive("std", self.std, allow_zero=True))


def row_gap_noise(spec: ModelSpec, rng: np.random.Generator, *, n_draws: int = 1024,
                  std: float | None = None) -> RowGapNoise:
    """Draw the logit noise of the rows (the ``"fluct"`` idea of :mod:`copylib.theory.softmax`, per row).

    Under the prior every logit direction other than the copy mode ``U``
    (:func:`copylib.analysis.softmax.planted_logits` with ``Delta = 1``), whose
    amplitude is the gap, is ``N(0, tau^2)``. Row ``l``'s visible logits get
    ``eta = tau (xi - beta_l (xi . u_l) u_l)``, ``xi ~ N(0, I)``, with ``u_l`` the
    unit vector along the row's part of ``U`` and ``beta_l = 1 - sqrt(1 - w_l)``,
    ``w_l = |U_l|^2 / |U|^2`` the row's share of the mode: covariance
    ``tau^2 (I - w_l u_l u_l^T)``, the exact one-row marginal with the mode
    projected out. ``tau = sigma_G`` (prior level) by default; the hidden logits
    do not matter.

    spec : softmax ModelSpec (cyclic or causal); rng : numpy Generator;
    n_draws : int >= 1; std : float >= 0, optional.
    """
    rows = _copy_rows(spec)
    rng = check_generator("rng", rng)
    n_draws = check_int("n_draws", n_draws, 1)
    tau = spec.sigma_G if std is None else check_positive("std", std, allow_zero=True)
    share = rows.stiffness / rows.stiffness.sum()
    shift = np.empty((rows.competitors.size, n_draws))
    rho = np.empty_like(shift)
    for i, (n, w) in enumerate(zip(rows.competitors.tolist(), share.tolist())):
        xi = rng.standard_normal((n_draws, n + 1))  # column 0: the copy position
        u = np.full(n + 1, -1.0 / (n + 1))
        u[0] += 1.0
        u /= np.linalg.norm(u)
        eta = tau * (xi - (1 - math.sqrt(1 - w)) * (xi @ u)[:, None] * u)
        rest = eta[:, 1:]
        top = rest.max(axis=1, keepdims=True)
        e = np.exp(rest - top)
        shift[i] = np.log(e.sum(1)) + top[:, 0] - eta[:, 0]
        rho[i] = (e**2).sum(1) / e.sum(1) ** 2
    return RowGapNoise(shift, rho, tau)


def _noise_for(noise, rows) -> tuple:
    """``(shift, rho)`` of shape ``(n_rows, n_draws)``: the given noise, or the noise-free rows."""
    if noise is None:
        n = rows.competitors.astype(float)
        return np.log(n)[:, None], (1.0 / n)[:, None]
    noise = check_instance("noise", noise, RowGapNoise)
    if noise.shift.shape[0] != rows.competitors.size:
        raise ValueError(f"noise was drawn for {noise.shift.shape[0]} rows, the spec has {rows.competitors.size}")
    return noise.shift, noise.rho


def row_gap_action(Delta: npt.ArrayLike, P: float, spec: ModelSpec, *, version: str = "mean_field",
                   noise: RowGapNoise | None = None) -> tuple[float | np.ndarray, np.ndarray]:
    """Reduced action of the per-row copy family and its gradient.

    ``S(Delta_1, ..., Delta_n) = S_v^data(alpha_1, L, gamma_1, n_T; P)
    + sum_l (1 - 1/(n_l + 1)) Delta_l^2 / (2 sigma_G^2)``: each row with a target
    has its own gap. The rows couple only through ``alpha_1`` and ``gamma_1``.
    With ``noise`` (:func:`row_gap_noise`) the invariants are averaged over the
    noisy rows first ("mean field in the rest", as ``version="fluct"`` of
    :mod:`copylib.theory.softmax`).

    Delta : ``(..., n_rows)``; P : float > 0. Returns ``(S (...), dS/dDelta (..., n_rows))``.
    """
    spec = _check_spec(spec)
    version = check_version(version, VERSIONS)
    rows = _copy_rows(spec)
    D = as_finite_array("Delta", Delta)
    if D.ndim == 0 or D.shape[-1] != rows.competitors.size:
        raise ValueError(f"Delta must have shape (..., {rows.competitors.size}) (one gap per row with a target), "
                         f"got {D.shape}")
    P = float(check_P(P))
    return _row_parts(D, P, spec, rows, version, _noise_for(noise, rows))


def _row_weights(D, shift, rho):
    """Noise-averaged ``c_l``, ``|A_l|^2`` and their derivatives in ``Delta_l``, each ``(..., n_rows)``."""
    c = expit(D[..., None] - shift)
    oc = 1 - c
    c1 = c * oc
    return c.mean(-1), (c**2 + rho * oc**2).mean(-1), c1.mean(-1), (2 * (c - rho * oc) * c1).mean(-1)


def _row_parts(D, P, spec, rows, version, shift_rho):
    c, a, dc, da = _row_weights(D, *shift_rho)
    a1 = rows.fixed_alpha + a.sum(-1)
    g1 = c.sum(-1)
    kl = rows.stiffness / spec.sigma_G**2
    F = _data_action(a1, g1, P, spec, rows, version) + (kl * D**2).sum(-1) / 2
    eps, a_, b = _data_coefficients(P, spec, version)
    x = a1 + eps
    S_a = a_ / x + b * g1**2 / x**2
    S_g = -2 * b * g1 / x
    grad = S_a[..., None] * da + S_g[..., None] * dc + kl * D
    return F, grad


# --------------------------------------------------------------------------
# the uniform family: minima, spinodals, P3
# --------------------------------------------------------------------------

_DELTA_MAX = 20.0
_N_GRID = 4001


class _Grid:
    """A uniform Delta grid on ``[0, 20]`` with the P-independent row sums precomputed."""

    def __init__(self, rows):
        self.x = np.linspace(0, _DELTA_MAX, _N_GRID)
        self.sums = _row_sums(self.x, rows, 2)

    def parts(self, P, spec, rows, version, order):
        sums = ([t for t in self.sums[0][:order + 1]], [t for t in self.sums[1][:order + 1]])
        return _gap_parts(self.x, P, spec, rows, version, order, sums)


def _minima(P, spec, rows, version, grid):
    x = grid.x
    _, Fp = grid.parts(P, spec, rows, version, 1)
    points, brackets = grid_minimum_points(Fp)
    out = [float(x[k]) for k in points]
    for i in brackets:
        out.append(brentq(lambda d: float(_gap_parts(d, P, spec, rows, version, 1)[1]), x[i], x[i + 1],
                          xtol=1e-13))
    D = np.sort(np.asarray(out))
    F = _gap_parts(D, P, spec, rows, version, 0)[0] if D.size else np.empty(0)
    return D, np.atleast_1d(F)


def _states(D, F, P, spec, version) -> tuple[Minimum, ...]:
    """The uniform-gap minima at gaps ``D`` with actions ``F`` as :class:`~copylib.theory.results.Minimum` s (order parameter: the
    mean copy weight of the rows with a target; no test loss)."""
    D = np.asarray(D, dtype=np.float64)
    c = expit(D[:, None] - np.log(_copy_rows(spec).competitors)).mean(-1)  # row_copy_weights, per gap
    return tuple(Minimum(P=P, version=version, action=float(f), order_parameter=float(ci), test_loss=None,
                         coordinates={"Delta": float(d)})
                 for d, f, ci in zip(D.tolist(), np.asarray(F).tolist(), c.tolist()))


def local_minima(P: float, spec: ModelSpec, version: str = "mean_field") -> tuple[Minimum, ...]:
    """All local minima of the uniform-gap action :func:`gap_action` over ``Delta in [0, 20]``.

    Sign changes of ``S'`` on a grid of 4001 points, refined by brentq. Returns a tuple of
    :class:`~copylib.theory.results.Minimum` sorted by ``Delta``: coordinates ``{"Delta"}``, the mean copy
    weight of the rows with a target (:func:`row_copy_weights`) as order parameter; ``test_loss`` and
    ``grad_norm`` are ``None`` (the causal theory has no loss of a state; the minima are refined roots of ``S'``).
    """
    spec = _check_spec(spec)
    version = check_version(version, VERSIONS)
    P = float(check_P(P))
    rows = _copy_rows(spec)
    D, F = _minima(P, spec, rows, version, _Grid(rows))
    return _states(D, F, P, spec, version)


def global_minimum(P: float, spec: ModelSpec, version: str = "mean_field") -> Minimum:
    """The global minimum of the uniform-gap action: the lowest of :func:`local_minima` (the first of equal
    actions), a :class:`~copylib.theory.results.Minimum` as there (no test loss)."""
    return min(local_minima(P, spec, version), key=lambda r: r.action)


def minimum_curve(P_values: npt.ArrayLike, spec: ModelSpec, version: str = "mean_field") -> MinimumCurve:
    """:func:`global_minimum` at each ``P`` of ``P_values`` (1-d array of ``P > 0``).

    Returns a :class:`~copylib.theory.results.MinimumCurve`: coordinates ``{"Delta"}``, the mean copy weight
    of the rows with a target as order parameter, the action, ``n_minima``; ``test_loss`` is ``None``.
    """
    spec = _check_spec(spec)
    version = check_version(version, VERSIONS)
    P_values = check_P_values(P_values)
    rows = _copy_rows(spec)
    grid = _Grid(rows)
    best, n = [], []
    for P in P_values.tolist():
        D, F = _minima(P, spec, rows, version, grid)
        j = int(np.argmin(F))
        best.append(_states(D[j:j + 1], F[j:j + 1], P, spec, version)[0])
        n.append(D.size)
    return MinimumCurve(P=P_values.copy(), version=version, action=[r.action for r in best],
                        order_parameter=[r.order_parameter for r in best], test_loss=None,
                        coordinates={"Delta": [r.coordinates["Delta"] for r in best]}, n_minima=np.asarray(n))


def first_order_point(spec: ModelSpec, version: str = "mean_field", *, P_range: tuple[float, float] = (10.0, 1e5),
                      n_scan: int = 300) -> FirstOrderPoint:
    """``P3`` (equal action of the two minima) and the spinodals of the uniform-gap family.

    Two minima coexist exactly when ``S'`` has a local maximum above zero followed
    by a local minimum below zero (the zeros of ``S''``, refined by brentq). A
    geometric scan of ``n_scan`` sample sizes in ``P_range`` brackets the
    interval where this holds; its ends (the spinodals) are refined by bisection (relative
    ``1e-9``), the gap of the marginal minimum there is the inflection point of ``S`` it sits on,
    and ``P3`` is found by brentq on
    ``S_copy - S_pool`` between them. Raises ``ValueError`` if no coexistence is
    found (a continuous crossover).

    Returns a :class:`~copylib.theory.results.FirstOrderPoint`: ``pooling`` and ``copy`` the two minima at
    ``P3`` (as :func:`local_minima`: no test loss), ``spinodals``, ``jump`` the change of the mean copy
    weight; ``first_order`` and ``two_minima`` are True; ``P2``, ``rel_width``, ``delta_action`` and
    ``slope`` are ``None``.
    """
    spec = _check_spec(spec)
    version = check_version(version, VERSIONS)
    lo, hi = (float(x) for x in P_range)
    if not (0 < lo < hi and math.isfinite(hi)):
        raise ValueError(f"P_range must satisfy 0 < P_min < P_max, got {P_range!r}")
    n_scan = check_int("n_scan", n_scan, 3)
    rows = _copy_rows(spec)
    grid = _Grid(rows)
    x = grid.x

    def inflections(P):
        """The local max and the following local min of S' (None without such a pair)."""
        F2 = grid.parts(P, spec, rows, version, 2)[2]

        return inflection_pair(x, F2, lambda d: float(_gap_parts(d, P, spec, rows, version, 2)[2]))

    def slope(d, P):
        return float(_gap_parts(d, P, spec, rows, version, 1)[1])

    def coexist(P):
        """Two minima exactly when S' has a local max above 0 followed by a local min below 0."""
        pair = inflections(P)
        return pair is not None and slope(pair[0], P) > 0 > slope(pair[1], P)

    Ps = np.geomspace(lo, hi, n_scan)
    two = np.array([coexist(P) for P in Ps])
    if not two.any():
        raise ValueError(f"no coexistence of two minima for P in {P_range}: no first-order jump of the uniform gap")
    i0, i1 = np.flatnonzero(two)[[0, -1]]
    if i0 == 0 or i1 == n_scan - 1:
        raise ValueError(f"the coexistence region touches the end of P_range = {P_range}; widen it")

    def bisect(a, b, inside_at_b):
        while b - a > 1e-9 * b:
            m = 0.5 * (a + b)
            if coexist(m) == inside_at_b:
                b = m
            else:
                a = m
        return 0.5 * (a + b)

    P_lower = bisect(Ps[i0 - 1], Ps[i0], True)
    P_upper = bisect(Ps[i1], Ps[i1 + 1], False)

    def diff(P):
        _, F = _minima(P, spec, rows, version, grid)
        return F[-1] - F[0]

    w = P_upper - P_lower
    P3 = brentq(diff, P_lower + 1e-3 * w, P_upper - 1e-3 * w, xtol=1e-10 * P_upper)
    D, F = _minima(P3, spec, rows, version, grid)
    # at a spinodal the marginal minimum sits on an inflection point (S' = S'' = 0): the copy minimum is
    # born on the dip of S', the pooling minimum dies on its hump
    born, dies = inflections(P_lower), inflections(P_upper)
    sp = Spinodals(P_lower=P_lower, P_upper=P_upper, Delta_lower=float("nan") if born is None else born[1],
                   Delta_upper=float("nan") if dies is None else dies[0])
    pooling, copy = _states(D[[0, -1]], F[[0, -1]], P3, spec, version)
    return FirstOrderPoint(P3=P3, version=version, pooling=pooling, copy=copy, first_order=True, two_minima=True,
                           spinodals=sp)


# --------------------------------------------------------------------------
# the per-row family
# --------------------------------------------------------------------------


def row_gap_minimum(P: float, spec: ModelSpec, start: npt.ArrayLike, *, version: str = "mean_field",
                    noise: RowGapNoise | None = None) -> tuple[np.ndarray, float]:
    """A local minimum of :func:`row_gap_action` reached from ``start`` (L-BFGS-B, gaps in ``[0, 30]``).

    start : float (one gap for all rows) or ``(n_rows,)``; noise : see :func:`row_gap_action`.
    Returns ``(Delta (n_rows,), S)``.
    """
    spec = _check_spec(spec)
    version = check_version(version, VERSIONS)
    rows = _copy_rows(spec)
    P = float(check_P(P))
    x0 = _per_row(as_finite_array("start", start), rows).astype(float)
    if x0.shape != rows.competitors.shape:
        raise ValueError(f"start must be a float or have shape ({rows.competitors.size},), got {x0.shape}")
    return _row_min(P, spec, rows, version, x0, _noise_for(noise, rows))


def _row_min(P, spec, rows, version, x0, shift_rho):
    res = minimize(lambda d: _row_parts(d, P, spec, rows, version, shift_rho), np.clip(x0, 0, 30), jac=True,
                   method="L-BFGS-B", bounds=[(0.0, 30.0)] * x0.size,
                   options=dict(ftol=1e-15, gtol=1e-10, maxiter=20000, maxcor=30))
    return res.x, float(res.fun)


@dataclass(frozen=True)
class RowGapBranches:
    """Both branches of the per-row family along a grid of ``P`` (see :func:`row_gap_branches`).

    * P : ``(n_P,)``
    * Delta_pool, Delta_copy : ``(n_P, n_rows)`` gaps of the branch followed upwards
      from pooling and downwards from the copy state.
    * F_pool, F_copy : ``(n_P,)`` their actions ``S_pool``, ``S_copy``.
    * c_pool, c_copy : ``(n_P, n_rows)`` their per-row copy weights.
    * coexist : ``(n_P,)`` the two branches are distinct minima (their mean copy
      weights differ by more than ``tol``).
    * P3 : where ``S_copy - S_pool`` changes sign on the coexistence grid
      (linear interpolation), ``nan`` if they never coexist.
    """

    P: np.ndarray
    Delta_pool: np.ndarray
    Delta_copy: np.ndarray
    F_pool: np.ndarray
    F_copy: np.ndarray
    c_pool: np.ndarray
    c_copy: np.ndarray
    coexist: np.ndarray
    P3: float


def row_gap_branches(P_values: npt.ArrayLike, spec: ModelSpec, *, version: str = "mean_field", copy_start: float = 5.0,
                     tol: float = 1e-3, noise: RowGapNoise | None = None) -> RowGapBranches:
    """Follow the minima of the per-row family up and down a grid of ``P`` (continuation).

    The pooling branch starts at ``Delta = 0`` at the smallest ``P`` and each
    later minimisation starts from the previous minimum; the copy branch starts at
    ``Delta = copy_start`` in every row at the largest ``P`` and is followed
    downwards. Where a branch's minimum disappears (a spinodal) the continuation
    falls onto the other branch; ``coexist`` marks the sizes where they differ.

    P_values : increasing 1-d array of ``P > 0``. With ``noise`` (:func:`row_gap_noise`)
    the action is that of :func:`row_gap_action` with noise, and ``c_pool``, ``c_copy``
    are the noise-averaged copy weights.
    """
    spec = _check_spec(spec)
    version = check_version(version, VERSIONS)
    P_values = check_grid("P_values", P_values, n_min=2, positive=True, increasing=True)
    rows = _copy_rows(spec)
    shift_rho = _noise_for(noise, rows)
    n = rows.competitors.size
    Dp, Dc = np.empty((P_values.size, n)), np.empty((P_values.size, n))
    Fp, Fc = np.empty(P_values.size), np.empty(P_values.size)
    x = np.zeros(n)
    for i, P in enumerate(P_values):
        x, Fp[i] = _row_min(float(P), spec, rows, version, x, shift_rho)
        Dp[i] = x
    x = np.full(n, float(copy_start))
    for i in range(P_values.size - 1, -1, -1):
        x, Fc[i] = _row_min(float(P_values[i]), spec, rows, version, x, shift_rho)
        Dc[i] = x
    cp = _row_weights(Dp, *shift_rho)[0]
    cc = _row_weights(Dc, *shift_rho)[0]
    coexist = np.abs(cc.mean(-1) - cp.mean(-1)) > tol
    P3 = math.nan
    idx = np.flatnonzero(coexist)
    if idx.size >= 2:
        d = (Fc - Fp)[idx]
        s = np.flatnonzero(np.sign(d[:-1]) * np.sign(d[1:]) < 0)
        if s.size:
            i, j = idx[s[0]], idx[s[0] + 1]
            P3 = float(P_values[i] - d[s[0]] * (P_values[j] - P_values[i]) / (d[s[0] + 1] - d[s[0]]))
    return RowGapBranches(P=P_values.copy(), Delta_pool=Dp, Delta_copy=Dc, F_pool=Fp, F_copy=Fc, c_pool=cp,
                          c_copy=cc, coexist=coexist, P3=P3)
