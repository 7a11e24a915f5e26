"""Mean-field theory of the softmax copy transition: the reduced action ``S(Delta)``.

For softmax attention in the model M* (:mod:`copylib.model.network`, cyclic copy task)
the cheapest copy state is the one-parameter family
``A(Delta) = copy_attention(Delta, L)`` (:func:`copylib.posterior.order_parameters.copy_attention`):
every row puts the logit gap ``Delta`` on the previous position, so

    A[l, l-1] = c(Delta) = 1 / (1 + (L-1) e^{-Delta}),   A[l, j] = (1 - c)/(L - 1) otherwise.

Its invariants (:func:`copylib.posterior.order_parameters.invariants`) are

    alpha_1 = L [c^2 + (1-c)^2/(L-1)],  alpha_2 = L,  gamma_1 = n_T c,  gamma_2 = n_T,

with ``n_T = tr T^T T`` (``L`` in the cyclic task, ``L - 1`` without the wrap-around).
The reduced action of a version ``v`` is

    S_v(Delta; P) = S_v^data(alpha_1, alpha_2, gamma_1, gamma_2; P) + (L-1) Delta^2 / (2 sigma_G^2)

(data action + the prior of the gap, :func:`copylib.posterior.order_parameters.prior_action_softmax`),
in nats (units of ``-ln`` probability). The versions:

``"mean_field"``
    ``S_v^data`` is the plug-in collapsed action
    :func:`copylib.posterior.order_parameters.plugin_action` (readout ``W`` integrated out;
    contains the Occam log-det terms). Its minima are the saddle points of the
    posterior of ``Delta`` (the mean-field approximation).
``"map"``
    ``W`` minimised instead of integrated (Adam finds the joint MAP over
    ``(g, W)``). For any data, exactly (ridge regression),

    ::

        min_W [SSE/(2 sigma^2) + |W|^2/(2 omega)] = (1/(2 sigma^2)) [y2 - tr B^T (K + kappa I)^{-1} B],

    ``K = Phi^T Phi``, ``B = Phi^T Y``; the evidence is this plus
    ``(V/2) ln det(I + K/kappa)`` plus constants. Replacing ``K, B, y2`` by their
    means (annealing, large ``P``) the trace term becomes
    ``P n_T/(2 sigma^2) - P/(2 sigma^2 V) [(V-1) gamma_1^2/(alpha_1+eps) + gamma_2^2/(alpha_2+eps)]``,
    ``eps = V kappa / P``: the MAP action is the mean-field action minus its two
    log-det terms ``V(V-1)/2 ln(1 + alpha_1/eps) + V/2 ln(1 + alpha_2/eps)``
    (and the ``A``-independent constant). The logit prior is the same: the MAP
    sets the (free) row means of ``g`` to zero, ``g = Delta (T - J/L)``.
``"energy"``
    The large-``P`` limit of ``"map"`` (``eps -> 0``) without its
    ``Delta``-independent ``gamma_2`` term, the softmax chapter's energy action
    ``S = -G0 Gamma(Delta) + (L-1) Delta^2/(2 sigma_G^2)``, ``G0 = P (V-1)/(2 sigma_0^2 V)``,
    ``Gamma = gamma_1^2/(L alpha_1) = 1/(1 + (L-1) e^{-2 Delta})`` (cyclic). This is the
    action that :func:`p3_leading_order` approximates.
``"fluct"``
    The mean-field action with the transverse logit noise integrated at mean-field
    level. Under the prior every logit direction other than the global copy
    mode ``T - J/L`` (whose amplitude is ``Delta``) and the irrelevant row means
    is ``N(0, sigma_G^2)``; if the data do not constrain them they stay there.
    The noise is Gaussian with covariance ``tau^2 (I - T0 T0^T)`` over the ``L^2``
    logits, ``T0 = (T - J/L)/sqrt(L-1)``, ``tau = sigma_G`` (prior level) by
    default. Each row's marginal is ``N(0, tau^2 (I - u u^T / L))`` with ``u``
    the unit vector along ``e_{l-1} - 1/L`` (the global mode takes ``1/L`` of the
    row's gap variance). Approximation ("mean field in the rest"): the data
    action is evaluated at the *expected* invariants,
    ``S_v^data(E[alpha_1], L, E[gamma_1], n_T)`` (rows are row-stochastic, so
    ``alpha_2 = L``, ``gamma_2 = n_T`` stay exact); the invariants are sums over
    ``L`` independent rows, so their relative fluctuations are ``O(L^{-1/2})``.
    The expectations are Monte Carlo averages over a fixed set of noisy rows
    (:class:`RowNoise`, made by :func:`row_noise` from a numpy Generator), so the
    action is a deterministic, smooth function of ``Delta`` (common random
    numbers). What this neglects (the cumulant corrections
    ``-Var(S)/2 + ...`` of ``-ln E[e^{-S}]``, i.e. the data reweighting the
    transverse modes) can be measured with :func:`transverse_average`.

Transition analysis (all versions): :func:`action_minima`, :func:`spinodals`,
:func:`first_order_point`, :func:`order_parameter_curve`, and the leading-order
analytic :func:`p3_leading_order`. The test loss of a state is that of its
attention with the plug-in posterior-mean readout (:func:`plugin_readout`,
:func:`state_loss`).

Reference numbers (L = 32, V = 4, all constants 1; reproduced by the tests where cheap):

* P3: mean_field 341.95 (Delta 0.331 -> 1.805, c 0.043 -> 0.164, loss 0.709 -> 0.357;
  spinodals 323.7, 380.7); map 329.80 (Delta 0.306 -> 1.863, c 0.042 -> 0.172,
  loss 0.711 -> 0.336; spinodals 309.3, 374.6); energy 264.60; fluct 666.6 +- 0.7
  over row-noise seeds (Delta 0.305 -> 2.368, c 0.041 -> 0.216, loss 0.733 -> 0.456;
  spinodals 618.7, 805.6).
* Mean-field P3 at other sizes: 342 (L=32, V=4), 873 (64, 4),
  885 (64, 8), 2180 (128, 4), 4935 (256, 8). Scanning L = 8, 10, ..., 20, 24 at
  V = 4, the first L with a jump is 20 (mean_field), 18 (map), 24 (energy).
* :func:`p3_leading_order` has no solution at L = 32 (its root needs L >= 41.2).

Everything is float64 numpy/scipy and deterministic; Monte Carlo only enters
through :func:`row_noise` and :func:`transverse_average`, which take a
``numpy.random.Generator``.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq
from scipy.optimize.elementwise import find_root
from scipy.special import expit, ndtri
from scipy.stats import qmc

from ..arguments import (
    as_finite_array,
    check_generator,
    check_int,
    check_P,
    check_P_range,
    check_positive,
    check_version,
)
from ..model.network import ModelSpec, check_spec
from ..model.statistics import token_moment
from ..model.task import shift_matrix
from ..posterior.order_parameters import invariants, plugin_action
from .plugin_loss import row_stochastic_plugin_loss
from .reduced_action import downward_crossings, grid_minimum_points, inflection_pair, upward_crossings

__all__ = [
    "VERSIONS",
    "RowNoise",
    "row_noise",
    "reduced_action",
    "reduced_action_derivatives",
    "copy_weight_of_gap",
    "plugin_readout",
    "state_loss",
    "action_minima",
    "Spinodals",
    "spinodals",
    "FirstOrderPoint",
    "first_order_point",
    "barrier_at_p3",
    "copy_minimum_depth",
    "local_minimum_copy_weights",
    "global_minimum_state",
    "OrderParameterCurve",
    "order_parameter_curve",
    "leading_order_gap",
    "p3_leading_order",
    "TransverseAverage",
    "transverse_average",
]

VERSIONS = ("mean_field", "map", "energy", "fluct")

_DEFAULT_DELTA_MAX = 20.0
_DEFAULT_N_GRID = 4001
_CHUNK = 1 << 16  # elements (Delta points x noise draws) per block: 512 kB arrays stay in cache


# --------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------


def _check_spec(spec) -> ModelSpec:
    return check_spec(spec, kind="softmax", theory="the softmax theory")


# --------------------------------------------------------------------------
# noisy rows (for version="fluct")
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class RowNoise:
    """A fixed sample of noisy softmax rows, enough to average any copy-state row.

    A row with logits ``Delta e_c + eta`` (``c`` the copy position) has copy weight
    ``sigmoid(Delta - shift)`` and squared norm ``a_c^2 + Psi (1 - a_c)^2`` with

        shift = ln sum_{j != c} e^{eta_j} - eta_c,
        Psi   = sum_{j != c} e^{2 eta_j} / (sum_{j != c} e^{eta_j})^2,

    so two numbers per draw describe the row for every ``Delta``.

    Attributes
    ----------
    shift, rho : arrays ``(n_draws,)``, ``rho`` the collision sum ``Psi``
    std : float
        Noise scale ``tau`` of the logits (``sigma_G`` = prior level).
    L : int
        Row length.
    """

    shift: np.ndarray
    rho: np.ndarray
    std: float
    L: int

    def __post_init__(self):
        shift = np.asarray(self.shift, dtype=np.float64)
        rho = np.asarray(self.rho, dtype=np.float64)
        if shift.ndim != 1 or shift.shape != rho.shape or shift.size == 0:
            raise ValueError("RowNoise.shift and RowNoise.rho must be non-empty 1-d arrays of equal length")
        if not (np.isfinite(shift).all() and np.isfinite(rho).all()) or (rho <= 0).any() or (rho > 1).any():
            raise ValueError("RowNoise.shift must be finite and RowNoise.rho in (0, 1]")
        object.__setattr__(self, "shift", shift)
        object.__setattr__(self, "rho", rho)
        object.__setattr__(self, "L", check_int("L", self.L, 2))
        object.__setattr__(self, "std", check_positive("std", self.std, allow_zero=True))


def _noiseless_rows(L: int) -> RowNoise:
    """The noise-free copy row: ``shift = ln(L-1)``, ``Psi = 1/(L-1)``."""
    return RowNoise(np.array([math.log(L - 1)]), np.array([1.0 / (L - 1)]), 0.0, L)


def row_noise(spec: ModelSpec, rng: np.random.Generator, *, n_draws: int = 8192, std=None) -> RowNoise:
    """Draw ``n_draws`` noisy rows for the ``"fluct"`` action (deterministic given ``rng``).

    Each row's logit noise is ``eta = tau (xi - beta (xi . u) u)``, ``xi ~ N(0, I_L)``,
    ``u = (e_c - 1/L) / sqrt(1 - 1/L)``, ``beta = 1 - sqrt(1 - 1/L)``: covariance
    ``tau^2 (I - u u^T / L)``, the exact one-row marginal of isotropic logit noise
    with the global copy mode projected out (that mode is ``Delta`` itself).

    The ``xi`` are randomised quasi-Monte Carlo points (scrambled Sobol, seeded
    from ``rng``, mapped through the normal quantile): for the row averages this
    is 10-25 times more accurate than plain Monte Carlo with the same number of
    draws (at ``L = 32`` and the default ``n_draws``, relative errors of the mean
    copy weight and row norm ~1e-3).

    Parameters
    ----------
    spec : ModelSpec (softmax); uses ``L`` and, by default, ``tau = sigma_G``.
    rng : numpy.random.Generator (seeds the scrambling)
    n_draws : int, a power of 2 (Sobol balance)
    std : float >= 0, optional
        ``tau`` (logit units). ``0`` gives the noise-free (mean_field) rows.
    """
    spec = _check_spec(spec)
    check_generator("rng", rng)
    n_draws = check_int("n_draws", n_draws, 1)
    if n_draws & (n_draws - 1):
        raise ValueError(f"n_draws must be a power of 2 (Sobol points), got {n_draws}")
    tau = spec.sigma_G if std is None else check_positive("std", std, allow_zero=True)
    L = spec.L
    u01 = qmc.Sobol(d=L, scramble=True, seed=rng).random_base2(n_draws.bit_length() - 1)
    xi = ndtri(np.clip(u01, 1e-300, 1 - 1e-16))
    # copy position = column 0; u = (e_0 - 1/L) / sqrt(1 - 1/L)
    u = np.full(L, -1.0 / L)
    u[0] += 1.0
    u /= math.sqrt(1.0 - 1.0 / L)
    beta = 1.0 - math.sqrt(1.0 - 1.0 / L)
    eta = tau * (xi - beta * (xi @ u)[:, None] * u[None, :])
    rest = eta[:, 1:]
    mx = rest.max(axis=1, keepdims=True)
    e = np.exp(rest - mx)
    s1 = e.sum(axis=1)
    s2 = (e**2).sum(axis=1)
    shift = np.log(s1) + mx[:, 0] - eta[:, 0]
    rho = s2 / s1**2
    return RowNoise(shift, rho, tau, L)


def _rows_for(version: str, spec: ModelSpec, noise) -> RowNoise:
    if version == "fluct":
        if not isinstance(noise, RowNoise):
            raise TypeError(
                "version='fluct' needs noise=RowNoise (make it with row_noise(spec, rng)), "
                f"got {type(noise).__name__}"
            )
        if noise.L != spec.L:
            raise ValueError(f"noise was drawn for L = {noise.L}, but spec.L = {spec.L}")
        return noise
    if noise is not None:
        raise ValueError(f"noise is only used by version='fluct', got it with version={version!r}")
    return _noiseless_rows(spec.L)


def _row_averages(Delta: np.ndarray, rows: RowNoise, order: int = 0):
    """Mean copy weight ``c`` and squared row norm ``a2`` (and derivatives) at each ``Delta``.

    Returns lists ``[c, c', c'']`` and ``[a2, a2', a2'']`` up to ``order``, each of
    ``Delta``'s shape.
    """
    flat = Delta.reshape(-1)
    n = rows.shift.size
    out_c = [np.empty_like(flat) for _ in range(order + 1)]
    out_a = [np.empty_like(flat) for _ in range(order + 1)]
    step = max(1, _CHUNK // n)
    for i in range(0, flat.size, step):
        d = flat[i:i + step, None]
        x = d - rows.shift[None, :]
        c = expit(x)
        rho = rows.rho[None, :]
        oc = 1.0 - c
        out_c[0][i:i + step] = c.mean(1)
        out_a[0][i:i + step] = (c**2 + rho * oc**2).mean(1)
        if order >= 1:
            c1 = c * oc
            h = c - rho * oc  # (1/2) d a2 / dc
            out_c[1][i:i + step] = c1.mean(1)
            out_a[1][i:i + step] = (2 * h * c1).mean(1)
            if order >= 2:
                c2 = c1 * (1.0 - 2 * c)
                out_c[2][i:i + step] = c2.mean(1)
                out_a[2][i:i + step] = (2 * (1 + rho) * c1**2 + 2 * h * c2).mean(1)
    shape = Delta.shape
    return [t.reshape(shape) for t in out_c], [t.reshape(shape) for t in out_a]


# --------------------------------------------------------------------------
# the reduced action
# --------------------------------------------------------------------------


def _n_targets(spec: ModelSpec) -> int:
    return spec.L if spec.cyclic else spec.L - 1


def _action_parts(Delta, P, spec, version, noise, order):
    """S and its Delta-derivatives up to ``order`` (broadcast over Delta and P)."""
    rows = _rows_for(version, spec, noise)
    Delta = np.asarray(Delta, dtype=np.float64)
    cs, a2s = _row_averages(Delta, rows, order)
    return _action_from_averages(Delta, P, cs, a2s, spec, version, order)


def _action_from_averages(Delta, P, cs, a2s, spec, version, order, value=True):
    """The action from the row averages ``cs = [c, c', c'']``, ``a2s = [a2, a2', a2'']`` at ``Delta``
    (``value=False``: the derivatives only, ``None`` in place of ``S``; the logarithms of ``S``
    dominate the cost of a grid evaluation)."""
    Delta, P, *rest = np.broadcast_arrays(Delta, P, *cs[:order + 1], *a2s[:order + 1])
    cs, a2s = rest[:order + 1], rest[order + 1:]
    L, V, nT = spec.L, spec.V, _n_targets(spec)
    k = (L - 1) / spec.sigma_G**2
    a1 = L * a2s[0]
    g1 = nT * cs[0]
    b = P * (V - 1) / (2 * spec.sigma_sq * V)
    if version == "energy":
        eps = np.zeros_like(P)
        a = 0.0
    else:
        eps = V * spec.kappa / P
        a = V * (V - 1) / 2 if version in ("mean_field", "fluct") else 0.0
    x = a1 + eps
    if not value:
        F = None
    elif version == "energy":
        F = -b * g1**2 / a1
    else:
        # identical term by term to order_parameters.plugin_action (alpha_2 = L, gamma_2 = n_T)
        F = (
            a * np.log1p(a1 / eps)
            + (V / 2 * np.log1p(L / eps) if a else 0.0)
            - P / (2 * spec.sigma_sq * V) * ((V - 1) * g1**2 / x + nT**2 / (L + eps))
        )
    out = [None if F is None else F + k * Delta**2 / 2]
    if order >= 1:
        S_a = a / x + b * g1**2 / x**2
        S_g = -2 * b * g1 / x
        a1p, g1p = L * a2s[1], nT * cs[1]
        out.append(S_a * a1p + S_g * g1p + k * Delta)
        if order >= 2:
            S_aa = -a / x**2 - 2 * b * g1**2 / x**3
            S_ag = 2 * b * g1 / x**2
            S_gg = -2 * b / x
            a1pp, g1pp = L * a2s[2], nT * cs[2]
            out.append(S_aa * a1p**2 + 2 * S_ag * a1p * g1p + S_gg * g1p**2 + S_a * a1pp + S_g * g1pp + k)
    return out


# Row averages on a Delta grid depend only on the rows and the grid, not on P or the
# version's constants, and with the fluct noise (8192 draws x 4001 points) they are
# the dominant cost of every minimisation. They are kept for the last few
# (rows, grid, order) combinations, keyed on the rows' bytes, so that a chapter that
# calls action_minima / order_parameter_curve / first_order_point many times with
# the same noise computes them once.
_GRID_CACHE: dict = {}
_GRID_CACHE_SIZE = 8


def _grid_key(x: np.ndarray, rows: RowNoise) -> tuple:
    return (hashlib.sha1(rows.shift.tobytes() + rows.rho.tobytes()).hexdigest(), rows.shift.size,
            float(x[0]), float(x[-1]), x.size)


def _grid_averages(x: np.ndarray, rows: RowNoise, order: int, key: tuple):
    hit = _GRID_CACHE.get(key)
    if hit is not None and hit[0] >= order:
        _GRID_CACHE[key] = _GRID_CACHE.pop(key)  # most recently used last
        return hit[1], hit[2]
    cs, a2s = _row_averages(x, rows, order)
    for t in (*cs, *a2s):
        t.setflags(write=False)
    _GRID_CACHE.pop(key, None)
    _GRID_CACHE[key] = (order, cs, a2s)
    while len(_GRID_CACHE) > _GRID_CACHE_SIZE:
        _GRID_CACHE.pop(next(iter(_GRID_CACHE)))
    return cs, a2s


class _DeltaGrid:
    """A uniform grid on ``[0, Delta_max]`` with the row averages precomputed (they do not depend on P)."""

    def __init__(self, Delta_max, n_grid, spec, version, noise):
        Delta_max = check_positive("Delta_max", Delta_max)
        n_grid = check_int("n_grid", n_grid, 11)
        self.x = np.linspace(0.0, Delta_max, n_grid)
        self.spec, self.version, self.noise = spec, version, noise
        self.rows = _rows_for(version, spec, noise)
        self.key = _grid_key(self.x, self.rows)

    def __getitem__(self, i):
        return self.x[i]

    def __len__(self):
        return self.x.size

    def parts(self, P, order, value=True):
        """``S`` and its derivatives up to ``order`` on the grid; ``P`` a float, or ``(n_P, 1)``
        for all of them at once (then each part is ``(n_P, n_grid)``); ``value=False``: no ``S``."""
        cs, a2s = _grid_averages(self.x, self.rows, order, self.key)
        return _action_from_averages(self.x, P, cs, a2s, self.spec, self.version, order, value)


def reduced_action(Delta, P, spec: ModelSpec, *, version: str = "mean_field", noise: RowNoise | None = None):
    """The action ``S(Delta; P)`` of the copy-state family, in nats.

    Parameters
    ----------
    Delta : float or array
        Logit gap on the previous position (logit units; any real, finite).
    P : float or array, > 0
        Number of training sequences (may be non-integer). ``Delta`` and ``P``
        broadcast against each other.
    spec : ModelSpec with ``kind="softmax"``.
    version : {"mean_field", "map", "energy", "fluct"}
        See the module docstring. ``"mean_field"`` equals
        ``plugin_action_of_attention(copy_attention(Delta, L), P, spec)
        + prior_action_softmax(Delta, spec)``; ``"map"`` is that minus the two
        log-det terms.
    noise : RowNoise, only for ``version="fluct"`` (:func:`row_noise`).

    Returns
    -------
    ndarray
        The broadcast shape of ``Delta`` and ``P`` (0-d for scalars).
        Constant terms are those of :func:`copylib.posterior.order_parameters.plugin_action`
        (no ``y2`` or normaliser); ``"energy"`` is exactly ``-G0 Gamma(Delta) +
        (L-1) Delta^2/(2 sigma_G^2)``.
    """
    spec = _check_spec(spec)
    version = check_version(version, VERSIONS)
    Delta = as_finite_array("Delta", Delta)
    P = check_P(P)
    return _action_parts(Delta, P, spec, version, noise, 0)[0]


def reduced_action_derivatives(Delta, P, spec: ModelSpec, *, version: str = "mean_field",
                               noise: RowNoise | None = None):
    """``(S, dS/dDelta, d^2S/dDelta^2)`` in closed form (arguments as :func:`reduced_action`)."""
    spec = _check_spec(spec)
    version = check_version(version, VERSIONS)
    Delta = as_finite_array("Delta", Delta)
    P = check_P(P)
    return tuple(_action_parts(Delta, P, spec, version, noise, 2))


def copy_weight_of_gap(Delta, spec: ModelSpec, *, version: str = "mean_field", noise: RowNoise | None = None):
    """Copy weight ``c = mean_l A[l, l-1]`` of the state with gap ``Delta``, shape of ``Delta``.

    ``1/(1 + (L-1) e^{-Delta})`` without noise; for ``version="fluct"`` the mean
    over the noisy rows (what posterior samples would show on average).
    """
    spec = _check_spec(spec)
    version = check_version(version, VERSIONS)
    Delta = as_finite_array("Delta", Delta)
    rows = _rows_for(version, spec, noise)
    return _row_averages(Delta, rows, 0)[0][0]


# --------------------------------------------------------------------------
# readout and loss of a state
# --------------------------------------------------------------------------


def plugin_readout(A, P, spec: ModelSpec):
    """Posterior-mean (= ridge/MAP) readout at large ``P`` for the attention ``A``.

    ``W = (K_bar + kappa I)^{-1} B_bar`` with the plug-in moments
    ``K_bar = P token_moment(A^T A, V)``, ``B_bar = P token_moment(A^T T, V)``.

    A : array ``(..., L, L)``, ``L = spec.L``; P : float or array ``(...)`` > 0
    (broadcast with the batch shape of ``A``). Returns ``(..., V, V)``.
    Equivalently ``W = w_perp (I - J/V) + w_1 J/V`` with
    ``w_perp = gamma_1/(alpha_1 + eps)``, ``w_1 = gamma_2/(alpha_2 + eps)``, ``eps = V kappa/P``.
    """
    spec = _check_spec(spec)
    A = as_finite_array("A", A)
    L, V = spec.L, spec.V
    if A.ndim < 2 or A.shape[-2:] != (L, L):
        raise ValueError(f"A must have shape (..., {L}, {L}), got {A.shape}")
    P = check_P(P)
    At = np.swapaxes(A, -1, -2)
    Kbar = token_moment(At @ A, V)
    Bbar = token_moment(At @ spec.target, V)
    P = P[..., None, None]
    M = P * Kbar + spec.kappa * np.eye(V)
    M, rhs = np.broadcast_arrays(M, P * Bbar)
    return np.linalg.solve(M, rhs)


def state_loss(Delta, P, spec: ModelSpec, *, version: str = "mean_field", noise: RowNoise | None = None):
    """Test loss per position of the state ``Delta`` with its plug-in readout at ``P``.

    For the noise-free versions this is
    ``expected_loss(A, plugin_readout(A, P, spec), T)`` with
    ``A = copy_attention(Delta, L)``, evaluated in closed form from the
    invariants (``O(1)`` per point instead of ``O(L^3)``; equality is tested):
    with ``W = w_perp (I - J/V) + w_1 J/V``,

        loss = (1/L) [ (V-1)/V (w_perp^2 alpha_1 - 2 w_perp gamma_1)
                       + (w_1^2 alpha_2 - 2 w_1 gamma_2)/V + n_T ].

    For ``"fluct"``: the mean over the noisy rows of the loss of ``(A_noisy, W)``,
    with ``W`` the plug-in readout of the mean invariants (given ``W`` the loss is
    linear in ``alpha_1, gamma_1``): the Gibbs loss of a posterior sample whose
    readout sits at its mean. Delta, P broadcast; returns their broadcast shape.
    """
    spec = _check_spec(spec)
    version = check_version(version, VERSIONS)
    Delta = as_finite_array("Delta", Delta)
    P = check_P(P)
    rows = _rows_for(version, spec, noise)
    cs, a2s = _row_averages(Delta, rows, 0)
    return row_stochastic_plugin_loss(spec.L * a2s[0], _n_targets(spec) * cs[0], P, spec)


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
        return _action_parts(d, P_, spec, version, noise, order)[order]

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
    F = _action_parts(D, Ps[who], spec, version, noise, 0)[0]
    return [(D[who == i], F[who == i]) for i in range(Ps.size)]


def action_minima(P, spec: ModelSpec, version: str = "mean_field", *, noise: RowNoise | None = None,
                  Delta_max: float = _DEFAULT_DELTA_MAX, n_grid: int = _DEFAULT_N_GRID):
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
    Delta, S : arrays ``(n_minima,)`` sorted by ``Delta``.
    """
    spec = _check_spec(spec)
    version = check_version(version, VERSIONS)
    P = check_positive("P", P)
    _rows_for(version, spec, noise)
    return _minima(P, spec, version, noise, _DeltaGrid(Delta_max, n_grid, spec, version, noise))


def _inflections(P, spec, version, noise, grid):
    """Zeros of S'' on the grid (refined): ``(hump, dip)`` = local max / min of S', or None."""
    _, _, Fpp = grid.parts(P, 2, value=False)

    def fpp(d):
        return float(_action_parts(np.asarray(d), P, spec, version, noise, 2)[2])

    return inflection_pair(grid.x, Fpp, fpp)


def _fprime(d, P, spec, version, noise):
    return float(_action_parts(np.asarray(d), P, spec, version, noise, 1)[1])


def _state(P, spec, version, noise, grid):
    """(-1 no inflection pair, else (S'(hump), S'(dip)))."""
    infl = _inflections(P, spec, version, noise, grid)
    if infl is None:
        return None
    return _fprime(infl[0], P, spec, version, noise), _fprime(infl[1], P, spec, version, noise)


@dataclass(frozen=True)
class Spinodals:
    """Limits of the coexistence of the pooling and copy minima.

    * P_lower : the copy (upper, large-``Delta``) minimum appears for ``P > P_lower``.
    * P_upper : the pooling (lower, small-``Delta``) minimum disappears for ``P > P_upper``.
    * Delta_lower, Delta_upper : the gap where the marginal minimum is born / dies
      (there ``S' = S'' = 0``).
    """

    P_lower: float
    P_upper: float
    Delta_lower: float
    Delta_upper: float


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
    Fp = _action_parts(zeros, P2, spec, version, noise, 1)[1].reshape(2, -1)
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
              P_range=None, n_scan: int = 400, Delta_max: float = _DEFAULT_DELTA_MAX,
              n_grid: int = _DEFAULT_N_GRID) -> Spinodals:
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
    spec = _check_spec(spec)
    version = check_version(version, VERSIONS)
    _rows_for(version, spec, noise)
    grid = _DeltaGrid(Delta_max, n_grid, spec, version, noise)
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


@dataclass(frozen=True)
class FirstOrderPoint:
    """The first-order point ``P3`` where the pooling and copy minima have equal action.

    * P3 : float
    * Delta, copy_weight, loss : tuples ``(pooling, copy)``: the two coexisting
      states at ``P3`` (gap, copy weight ``c``, test loss with the plug-in readout).
    * action : float, the common value of ``S`` at ``P3``.
    * spinodals : :class:`Spinodals`.
    """

    P3: float
    Delta: tuple
    copy_weight: tuple
    loss: tuple
    action: float
    spinodals: Spinodals

    @property
    def jump(self) -> dict:
        """Changes copy - pooling of ``Delta``, ``copy_weight`` and ``loss`` across ``P3``."""
        return {k: getattr(self, k)[1] - getattr(self, k)[0] for k in ("Delta", "copy_weight", "loss")}


def _branches(P, spec, version, noise, grid):
    mins, F = _minima(P, spec, version, noise, grid)
    if mins.size < 2:
        raise RuntimeError(f"expected two minima at P = {P}, found {mins.size}")
    return (mins[0], F[0]), (mins[-1], F[-1])


def first_order_point(spec: ModelSpec, version: str = "mean_field", *, noise: RowNoise | None = None,
                      P_range=None, n_scan: int = 400, Delta_max: float = _DEFAULT_DELTA_MAX,
                      n_grid: int = _DEFAULT_N_GRID) -> FirstOrderPoint:
    """``P3``: brentq on ``S_copy(P) - S_pool(P)`` between the spinodals.

    The branches are the smallest-``Delta`` (pooling) and largest-``Delta`` (copy)
    local minima (:func:`action_minima`). Their action difference is positive at
    the lower spinodal and negative at the upper one (``d(S_copy - S_pool)/dP <
    0``: more data favour copying), so the root is unique. Arguments as
    :func:`spinodals`.
    """
    spec = _check_spec(spec)
    version = check_version(version, VERSIONS)
    _rows_for(version, spec, noise)
    sp = spinodals(spec, version, noise=noise, P_range=P_range, n_scan=n_scan, Delta_max=Delta_max,
                   n_grid=n_grid)
    grid = _DeltaGrid(Delta_max, n_grid, spec, version, noise)

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
    Ds = np.array([Dp, Dc])
    c = copy_weight_of_gap(Ds, spec, version=version, noise=noise)
    loss = state_loss(Ds, P3, spec, version=version, noise=noise)
    return FirstOrderPoint(
        P3=P3, Delta=(Dp, Dc), copy_weight=(float(c[0]), float(c[1])),
        loss=(float(loss[0]), float(loss[1])), action=0.5 * (Fp + Fc), spinodals=sp,
    )


def barrier_at_p3(point: FirstOrderPoint, spec: ModelSpec, version: str = "mean_field", *,
                  noise: RowNoise | None = None, n_grid: int = _DEFAULT_N_GRID) -> float:
    """Barrier of ``S(Delta; P3)`` between the two branches of ``point``, in nats.

    ``point`` is the :func:`first_order_point` of the same ``spec``, ``version``
    and ``noise``. The action is maximised on ``n_grid`` points between the
    pooling and the copy gap; at ``P3`` the two minima have equal action, so
    the height is the same above either.
    """
    spec = _check_spec(spec)
    version = check_version(version, VERSIONS)
    _rows_for(version, spec, noise)
    if not isinstance(point, FirstOrderPoint):
        raise ValueError(f"point must be a FirstOrderPoint (from first_order_point), got {type(point).__name__}")
    n_grid = check_int("n_grid", n_grid, minimum=3)
    D = np.linspace(point.Delta[0], point.Delta[1], n_grid)
    F = reduced_action(D, point.P3, spec, version=version, noise=noise)
    return float(F.max() - F[0])


def copy_minimum_depth(P, spec: ModelSpec, version: str = "mean_field", *, noise: RowNoise | None = None,
                       n_grid: int = 20001) -> tuple[float, float]:
    """Depth ``S_b`` (nats) and distance ``x_+ - x_-`` of the copy minimum of ``S(Delta; P)`` below the barrier top.

    ``S_b = S(Delta_top) - S(Delta_copy)`` and ``x_+ - x_- = Delta_copy - Delta_top``, where
    ``Delta_copy`` is the largest-gap minimum (:func:`action_minima`) and ``Delta_top``
    the barrier top (the first ``+`` to ``-`` sign change of ``S'`` on ``n_grid`` points
    between the outer minima, refined with brentq to ``1e-14``; with two minima the only
    maximum between them). Near the lower spinodal ``S_b ~ delta^(3/2)`` and ``x_+ - x_- ~ delta^(1/2)`` in
    ``delta = P - P_lower``. Raises ``ValueError`` if ``S`` has a single minimum at ``P``.
    """
    spec = _check_spec(spec)
    version = check_version(version, VERSIONS)
    n_grid = check_int("n_grid", n_grid, minimum=3)
    D, F = action_minima(P, spec, version, noise=noise)
    if D.size < 2:
        raise ValueError(f"P = {P!r}: F has a single minimum (P outside the coexistence window), no barrier")
    x = np.linspace(D[0], D[-1], n_grid)[1:-1]
    dF = reduced_action_derivatives(x, P, spec, version=version, noise=noise)[1]
    k = np.flatnonzero((dF[:-1] > 0) & (dF[1:] <= 0))[0]  # F' from + to -: the barrier top

    def slope(d):
        return float(reduced_action_derivatives(d, P, spec, version=version, noise=noise)[1])

    D_top = brentq(slope, x[k], x[k + 1], xtol=1e-14)
    return float(reduced_action(D_top, P, spec, version=version, noise=noise)) - float(F[-1]), float(D[-1] - D_top)


def local_minimum_copy_weights(P, spec: ModelSpec, version: str = "mean_field", *,
                               noise: RowNoise | None = None) -> np.ndarray:
    """Copy weights of all local minima of ``S(Delta; P)`` (the branches at ``P``), ascending in ``Delta``."""
    D, _ = action_minima(P, spec, version, noise=noise)
    return np.asarray(copy_weight_of_gap(D, spec, version=version, noise=noise), dtype=float)


def global_minimum_state(P, spec: ModelSpec, version: str = "mean_field", *,
                         noise: RowNoise | None = None) -> tuple[float, float]:
    """``(copy weight, test loss per position)`` of the global minimum of ``S(Delta; P)``."""
    P = check_positive("P", P)
    D, F = action_minima(P, spec, version, noise=noise)
    D = D[np.argmin(F)]
    return (float(copy_weight_of_gap(D, spec, version=version, noise=noise)),
            float(state_loss(D, P, spec, version=version, noise=noise)))


@dataclass(frozen=True)
class OrderParameterCurve:
    """Global-minimum state along a grid of sample sizes (arrays ``(n_P,)``).

    P, Delta, copy_weight, loss, action; n_minima: number of local minima at each ``P``.
    """

    P: np.ndarray
    Delta: np.ndarray
    copy_weight: np.ndarray
    loss: np.ndarray
    action: np.ndarray
    n_minima: np.ndarray


def order_parameter_curve(P_grid, spec: ModelSpec, version: str = "mean_field", *, noise: RowNoise | None = None,
                          Delta_max: float = _DEFAULT_DELTA_MAX, n_grid: int = _DEFAULT_N_GRID
                          ) -> OrderParameterCurve:
    """Global minimum of ``S`` (gap, copy weight, test loss, action) at each ``P`` of ``P_grid``.

    P_grid : 1-d array of ``P > 0``. The copy weight and loss jump at ``P3``.
    """
    spec = _check_spec(spec)
    version = check_version(version, VERSIONS)
    _rows_for(version, spec, noise)
    P_grid = check_P(P_grid, "P_grid")
    if P_grid.ndim != 1 or P_grid.size == 0:
        raise ValueError(f"P_grid must be a non-empty 1-d array, got shape {P_grid.shape}")
    grid = _DeltaGrid(Delta_max, n_grid, spec, version, noise)
    D, F, n = [], [], []
    for mins, vals in _minima_many(P_grid.astype(np.float64), spec, version, noise, grid):
        j = int(np.argmin(vals))
        D.append(mins[j])
        F.append(vals[j])
        n.append(mins.size)
    D = np.asarray(D)
    return OrderParameterCurve(
        P=P_grid.copy(), Delta=D, copy_weight=copy_weight_of_gap(D, spec, version=version, noise=noise),
        loss=state_loss(D, P_grid, spec, version=version, noise=noise), action=np.asarray(F),
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


# --------------------------------------------------------------------------
# diagnostic: beyond mean field in the transverse modes
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class TransverseAverage:
    """Transverse-noise averages of the plug-in data action at fixed ``Delta`` and ``P``.

    * mean_field : ``S(E[inv])`` (what ``version="fluct"`` uses, up to Monte Carlo error)
    * mean : ``E[S(inv)]``
    * free_energy : ``-ln E[exp(-S)]`` (exact transverse integral of the plug-in
      action; its Monte Carlo estimate is biased upwards and unreliable once
      ``variance >~ 10``)
    * variance : ``Var[S]``; copy_weight : ``E[c]``; alpha_1 : ``E[alpha_1]``.
    """

    mean_field: float
    mean: float
    free_energy: float
    variance: float
    copy_weight: float
    alpha_1: float


def transverse_average(Delta: float, P: float, spec: ModelSpec, rng: np.random.Generator, *,
                       n_samples: int = 2000, std=None) -> TransverseAverage:
    """Average the plug-in data action over full noisy attention matrices.

    Logits ``g = Delta T + tau (Z - <Z, T0> T0)``, ``Z`` i.i.d. ``N(0, 1)`` (``L x L``),
    ``T0 = (T - J/L)/sqrt(L-1)`` (the global copy mode, removed), ``tau = sigma_G``
    by default; ``A = row-softmax(g)``. Returns :class:`TransverseAverage`. The gap
    between ``mean_field`` and ``free_energy`` is what the ``"fluct"`` action
    neglects. Memory ``O(n_samples L^2)``.
    """
    spec = _check_spec(spec)
    check_generator("rng", rng)
    Delta = as_finite_array("Delta", Delta)
    if Delta.ndim:
        raise ValueError(f"Delta must be a single number, got shape {Delta.shape}")
    Delta = float(Delta)
    P = check_positive("P", P)
    n_samples = check_int("n_samples", n_samples, 2)
    tau = spec.sigma_G if std is None else check_positive("std", std, allow_zero=True)
    L = spec.L
    S = shift_matrix(L, True)
    U = (S - 1.0 / L) / math.sqrt(L - 1)
    Z = rng.standard_normal((n_samples, L, L))
    Z -= np.einsum("nij,ij->n", Z, U)[:, None, None] * U
    g = Delta * S + tau * Z
    g -= g.max(-1, keepdims=True)
    A = np.exp(g)
    A /= A.sum(-1, keepdims=True)
    a1, a2, g1, g2 = invariants(A, spec.cyclic)
    s = np.asarray(plugin_action(a1, a2, g1, g2, P, spec))
    smf = float(plugin_action(a1.mean(), a2.mean(), g1.mean(), g2.mean(), P, spec))
    m = s.min()
    fe = m - math.log(np.mean(np.exp(-(s - m))))
    return TransverseAverage(
        mean_field=smf, mean=float(s.mean()), free_energy=float(fe), variance=float(s.var()),
        copy_weight=float(np.mean(np.sum(A * S, axis=(-1, -2)) / L)), alpha_1=float(a1.mean()),
    )
