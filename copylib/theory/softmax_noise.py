"""Transverse logit noise of softmax attention: the noisy rows behind the ``"fluct"`` action and the
full transverse average that measures what it neglects. Re-exported by :mod:`copylib.theory.softmax`.

Around the copy state every logit direction other than the global copy mode (whose amplitude is the
gap ``Delta``) stays at its prior scale if the data do not constrain it.
:class:`~copylib.theory.softmax.RowNoise` is a fixed sample of such noisy rows, two numbers per draw
(:func:`~copylib.theory.softmax.row_noise`, quasi-Monte Carlo), from which
``row_averages`` gives the mean copy weight and squared row norm of the copy state at any ``Delta``
(with their ``Delta``-derivatives): the inputs of the action of :mod:`copylib.theory.softmax_action`.
``rows_for`` picks the rows a version uses (the noise-free row for every version but ``"fluct"``) and
``check_softmax_spec`` is the domain check all the softmax theory modules share.
``_transverse_average`` (for the tests) averages the plug-in data action over full noisy attention matrices.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import expit, ndtri
from scipy.stats import qmc

from ..arguments import as_finite_array, check_generator, check_int, check_positive
from ..model.network import ModelSpec, check_spec
from ..model.task import shift_matrix
from ..posterior.order_parameters import invariants, plugin_action

__all__ = [
    "RowNoise",
    "row_noise",
]

_CHUNK = 1 << 16  # elements (Delta points x noise draws) per block: 512 kB arrays stay in cache


def check_softmax_spec(spec: object) -> ModelSpec:
    """``spec`` if it is a softmax-attention ``ModelSpec`` (the softmax theory's domain), else an error."""
    return check_spec(spec, kind="softmax", theory="the softmax theory")


def set_shift_and_rho(noise: object, ndim: int) -> None:
    """Check a frozen noise dataclass's ``shift`` (finite) and ``rho`` (in (0, 1]), non-empty arrays of one
    shape with ``ndim`` dimensions, and store them as float64 arrays (its ``__post_init__``)."""
    name = type(noise).__name__
    shift = np.asarray(noise.shift, dtype=np.float64)
    rho = np.asarray(noise.rho, dtype=np.float64)
    if shift.ndim != ndim or shift.shape != rho.shape or shift.size == 0:
        raise ValueError(f"{name}.shift and {name}.rho must be non-empty {ndim}-d arrays of equal shape")
    if not (np.isfinite(shift).all() and np.isfinite(rho).all()) or (rho <= 0).any() or (rho > 1).any():
        raise ValueError(f"{name}.shift must be finite and {name}.rho in (0, 1]")
    object.__setattr__(noise, "shift", shift)
    object.__setattr__(noise, "rho", rho)


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
        set_shift_and_rho(self, 1)
        object.__setattr__(self, "L", check_int("L", self.L, 2))
        object.__setattr__(self, "std", check_positive("std", self.std, allow_zero=True))


def _noiseless_rows(L: int) -> RowNoise:
    """The noise-free copy row: ``shift = ln(L-1)``, ``Psi = 1/(L-1)``."""
    return RowNoise(np.array([math.log(L - 1)]), np.array([1.0 / (L - 1)]), 0.0, L)


def row_noise(spec: ModelSpec, rng: np.random.Generator, *, n_draws: int = 8192, std: float | None = None) -> RowNoise:
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
    spec = check_softmax_spec(spec)
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


def rows_for(version: str, spec: ModelSpec, noise: RowNoise | None) -> RowNoise:
    """The rows a (checked) ``version`` averages over: ``noise`` for ``"fluct"`` (checked against ``spec``),
    the single noise-free copy row otherwise (then ``noise`` must be ``None``)."""
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


def row_averages(Delta: np.ndarray, rows: RowNoise, order: int = 0) -> tuple[list[np.ndarray], list[np.ndarray]]:
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
# diagnostic: beyond mean field in the transverse modes
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class _TransverseAverage:
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


def _transverse_average(Delta: float, P: float, spec: ModelSpec, rng: np.random.Generator, *,
                       n_samples: int = 2000, std: float | None = None) -> _TransverseAverage:
    """Average the plug-in data action over full noisy attention matrices.

    Logits ``g = Delta T + tau (Z - <Z, T0> T0)``, ``Z`` i.i.d. ``N(0, 1)`` (``L x L``),
    ``T0 = (T - J/L)/sqrt(L-1)`` (the global copy mode, removed), ``tau = sigma_G``
    by default; ``A = row-softmax(g)``. Returns a ``_TransverseAverage``. The gap
    between ``mean_field`` and ``free_energy`` is what the ``"fluct"`` action
    neglects. Memory ``O(n_samples L^2)``.
    """
    spec = check_softmax_spec(spec)
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
    return _TransverseAverage(
        mean_field=smf, mean=float(s.mean()), free_energy=float(fe), variance=float(s.var()),
        copy_weight=float(np.mean(np.sum(A * S, axis=(-1, -2)) / L)), alpha_1=float(a1.mean()),
    )
