"""The reduced action ``S(Delta; P)`` of softmax attention along the copy family, its derivatives, and
the copy weight and test loss of a state. Re-exported by :mod:`copylib.theory.softmax`, whose
documentation derives the four versions (``"mean_field"``, ``"map"``, ``"energy"``, ``"fluct"``).

The action of every version is a function of two row averages of the copy state, the copy weight
``c`` and the squared row norm ``a2`` (:mod:`copylib.theory.softmax_noise`). What the transition
analysis of :mod:`copylib.theory.softmax_transition` shares with this module: ``action_parts`` (``S``
and its ``Delta``-derivatives in closed form, unchecked arguments) and ``DeltaGrid`` (a ``Delta`` grid
with the row averages tabulated once, cached across calls, and the action at many ``P`` at once), with
its default extent ``DEFAULT_DELTA_MAX`` and size ``DEFAULT_N_GRID``.
"""

from __future__ import annotations

import hashlib

import numpy as np
import numpy.typing as npt

from ..arguments import as_finite_array, check_int, check_P, check_positive, check_version
from ..model.network import ModelSpec
from ..model.statistics import token_moment
from .plugin_loss import row_stochastic_plugin_loss
from .softmax_noise import RowNoise, check_softmax_spec, row_averages, rows_for

__all__ = [
    "VERSIONS",
    "reduced_action",
    "reduced_action_derivatives",
    "copy_weight_of_gap",
    "state_loss",
]

VERSIONS = ("mean_field", "map", "energy", "fluct")

#: The default ``Delta`` range ``[0, DEFAULT_DELTA_MAX]`` and number of points of a ``DeltaGrid``.
DEFAULT_DELTA_MAX = 20.0
DEFAULT_N_GRID = 4001


def _n_targets(spec: ModelSpec) -> int:
    return spec.L if spec.cyclic else spec.L - 1


def action_parts(Delta: npt.ArrayLike, P: npt.ArrayLike, spec: ModelSpec, version: str, noise: RowNoise | None,
                 order: int) -> list[np.ndarray]:
    """``[S, dS/dDelta, d^2S/dDelta^2]`` up to ``order`` (broadcast over ``Delta`` and ``P``), for checked
    arguments: the closed form behind :func:`reduced_action` and :func:`reduced_action_derivatives`."""
    rows = rows_for(version, spec, noise)
    Delta = np.asarray(Delta, dtype=np.float64)
    cs, a2s = row_averages(Delta, rows, order)
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
# calls local_minima / minimum_curve / first_order_point many times with
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
    cs, a2s = row_averages(x, rows, order)
    for t in (*cs, *a2s):
        t.setflags(write=False)
    _GRID_CACHE.pop(key, None)
    _GRID_CACHE[key] = (order, cs, a2s)
    while len(_GRID_CACHE) > _GRID_CACHE_SIZE:
        _GRID_CACHE.pop(next(iter(_GRID_CACHE)))
    return cs, a2s


class DeltaGrid:
    """A uniform grid on ``[0, Delta_max]`` with the row averages precomputed (they do not depend on ``P``).

    ``x`` holds the grid, ``rows`` the rows of the version; :meth:`parts` gives the action and its
    derivatives on the grid at one or many ``P``. Checks ``Delta_max > 0`` and ``n_grid >= 11``.
    """

    def __init__(self, Delta_max: float, n_grid: int, spec: ModelSpec, version: str,
                 noise: RowNoise | None) -> None:
        Delta_max = check_positive("Delta_max", Delta_max)
        n_grid = check_int("n_grid", n_grid, 11)
        self.x = np.linspace(0.0, Delta_max, n_grid)
        self.spec, self.version, self.noise = spec, version, noise
        self.rows = rows_for(version, spec, noise)
        self.key = _grid_key(self.x, self.rows)

    def __getitem__(self, i):
        return self.x[i]

    def __len__(self):
        return self.x.size

    def parts(self, P: float | np.ndarray, order: int, value: bool = True) -> list[np.ndarray | None]:
        """``S`` and its derivatives up to ``order`` on the grid; ``P`` a float, or ``(n_P, 1)``
        for all of them at once (then each part is ``(n_P, n_grid)``); ``value=False``: no ``S``."""
        cs, a2s = _grid_averages(self.x, self.rows, order, self.key)
        return _action_from_averages(self.x, P, cs, a2s, self.spec, self.version, order, value)


def reduced_action(Delta: npt.ArrayLike, P: npt.ArrayLike, spec: ModelSpec, *, version: str = "mean_field",
                   noise: RowNoise | None = None) -> np.ndarray:
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
    spec = check_softmax_spec(spec)
    version = check_version(version, VERSIONS)
    Delta = as_finite_array("Delta", Delta)
    P = check_P(P)
    return action_parts(Delta, P, spec, version, noise, 0)[0]


def reduced_action_derivatives(Delta: npt.ArrayLike, P: npt.ArrayLike, spec: ModelSpec, *, version: str = "mean_field",
                               noise: RowNoise | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(S, dS/dDelta, d^2S/dDelta^2)`` in closed form (arguments as :func:`reduced_action`)."""
    spec = check_softmax_spec(spec)
    version = check_version(version, VERSIONS)
    Delta = as_finite_array("Delta", Delta)
    P = check_P(P)
    return tuple(action_parts(Delta, P, spec, version, noise, 2))


def copy_weight_of_gap(Delta: npt.ArrayLike, spec: ModelSpec, *, version: str = "mean_field",
                       noise: RowNoise | None = None) -> np.ndarray:
    """Copy weight ``c = mean_l A[l, l-1]`` of the state with gap ``Delta``, shape of ``Delta``.

    ``1/(1 + (L-1) e^{-Delta})`` without noise; for ``version="fluct"`` the mean
    over the noisy rows (what posterior samples would show on average).
    """
    spec = check_softmax_spec(spec)
    version = check_version(version, VERSIONS)
    Delta = as_finite_array("Delta", Delta)
    rows = rows_for(version, spec, noise)
    return row_averages(Delta, rows, 0)[0][0]


# --------------------------------------------------------------------------
# readout and loss of a state
# --------------------------------------------------------------------------


def _plugin_readout(A: npt.ArrayLike, P: npt.ArrayLike, spec: ModelSpec) -> np.ndarray:
    """Posterior-mean (= ridge/MAP) readout at large ``P`` for the attention ``A``.

    ``W = (K_bar + kappa I)^{-1} B_bar`` with the plug-in moments
    ``K_bar = P token_moment(A^T A, V)``, ``B_bar = P token_moment(A^T T, V)``.

    A : array ``(..., L, L)``, ``L = spec.L``; P : float or array ``(...)`` > 0
    (broadcast with the batch shape of ``A``). Returns ``(..., V, V)``.
    Equivalently ``W = w_perp (I - J/V) + w_1 J/V`` with
    ``w_perp = gamma_1/(alpha_1 + eps)``, ``w_1 = gamma_2/(alpha_2 + eps)``, ``eps = V kappa/P``.
    """
    spec = check_softmax_spec(spec)
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


def state_loss(Delta: npt.ArrayLike, P: npt.ArrayLike, spec: ModelSpec, *, version: str = "mean_field",
               noise: RowNoise | None = None) -> np.ndarray:
    """Test loss per position of the state ``Delta`` with its plug-in readout at ``P``.

    For the noise-free versions this is
    ``expected_loss(A, _plugin_readout(A, P, spec), T)`` with
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
    spec = check_softmax_spec(spec)
    version = check_version(version, VERSIONS)
    Delta = as_finite_array("Delta", Delta)
    P = check_P(P)
    rows = rows_for(version, spec, noise)
    cs, a2s = row_averages(Delta, rows, 0)
    return row_stochastic_plugin_loss(spec.L * a2s[0], _n_targets(spec) * cs[0], P, spec)
