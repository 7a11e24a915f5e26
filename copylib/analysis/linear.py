"""Helpers for the linear-attention chapter's main line: sampled summaries, onset fit, MAP sweeps.

The integrated theory (moments and marginals of the plug-in posterior) is in
:mod:`copylib.theory.linear_marginal`; the error-bar calibration, z tables and MCMC diagnostics
summaries are in :mod:`copylib.analysis.linear_evidence`; the threshold tables and bisections
(versions of ``P1`` and ``P2``, local-minimum scans, the smallest ``L`` with a jump) are in
:mod:`copylib.analysis.linear_thresholds`.

* :func:`chain_group_summary`: sign-invariant sampled order parameters per
  group of data sets (one ``P`` each), with the standard error over the data sets, which
  includes the chains' Monte Carlo error.
* :func:`onset_from_squares`: a threshold estimate from ``m^2`` just above it.
* :func:`map_sweep_datasets`: MAP-filtered Adam over ``P`` for several data sets, batched.
* :func:`map_sweep_quenched`: Adam as :func:`map_sweep_datasets` plus the exact (L-BFGS) minimiser on the same data.
* :func:`by_data_set`, :func:`by_chain`: regroup a batched sampling run's ``(chain, draw)`` arrays.
* :func:`map_predictions`: ``m``, ``q`` and the test loss of the MAP action's minimum over ``P``.
* :func:`posterior_copy_share`: the copy share of posterior means.
* :func:`map_agreement`: Adam's order parameters and loss against the MAP minimum, in units of the tolerance.
* :func:`loss_plateau`: the pooling plateau of a predicted loss curve.
* :func:`posterior_loss`: the sampled posterior's test loss (plug-in readout) per ``P``, against the
  plug-in integral, in standard errors over the data sets.
* :func:`optimisation_error`: Adam against the exact (L-BFGS) minimiser on the same data sets.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import torch
from scipy.optimize import minimize

from ..arguments import (
    as_real_array,
    check_finite,
    check_grid,
    check_instance,
    check_int,
    check_int_array,
    check_P_values,
    check_positive,
)
from ..checks import data_set_tolerance
from ..inference.map_training import lowest_objective, nested_cooccurrence, train_map
from ..model.network import ModelSpec
from ..posterior.order_parameters import order_parameters
from ..posterior.targets import JointPosterior
from ..theory.linear import global_minimum
from ..theory.plugin_loss import plugin_loss

if TYPE_CHECKING:
    from ..theory.linear_marginal import IntegratedMoments, PluginMoments
    from ..theory.results import Minimum

__all__ = [
    "GroupSummary",
    "MapSweepSets",
    "QuenchedMap",
    "by_chain",
    "by_data_set",
    "chain_group_summary",
    "map_predictions",
    "map_sweep_datasets",
    "map_sweep_quenched",
    "onset_from_squares",
    "posterior_copy_share",
    "MapAgreement",
    "map_agreement",
    "LossPlateau",
    "loss_plateau",
    "PosteriorLoss",
    "posterior_loss",
    "OptimisationError",
    "optimisation_error",
]


@dataclass(frozen=True)
class GroupSummary:
    """Sampled order parameters per group (arrays of shape ``(n_groups,)``).

    rms_m, rms_m_se : sqrt(E m^2) and its standard error; q, q_se : E[q sign m];
    var_m : E m^2 (the sampled variance of m, mean 0 by symmetry); binder :
    1 - E m^4/(3 (E m^2)^2); m2_sets, q_sets : ``(n_groups, n_sets)``, the data-set-level
    values behind the errors, the mean of ``m^2`` and of ``q sign m`` over each data set's draws.
    """

    rms_m: np.ndarray
    rms_m_se: np.ndarray
    q: np.ndarray
    q_se: np.ndarray
    var_m: np.ndarray
    binder: np.ndarray
    m2_sets: np.ndarray
    q_sets: np.ndarray

    @property
    def n_sets(self) -> int:
        """The number of data sets behind each error (the errors are Student-t with ``n_sets - 1`` degrees of freedom)."""
        return int(self.m2_sets.shape[1])


def chain_group_summary(m: npt.ArrayLike, q: npt.ArrayLike) -> GroupSummary:
    """Summaries of samples ``m, q`` of shape ``(n_groups, n_sets, n_draws)``: per group (one ``P``)
    ``n_sets >= 2`` data sets, each with the pooled draws of its own chains.

    The group mean averages the data-set-level values (each data set's mean of ``m^2`` and of
    ``q sign m``); its standard error is their spread over the data sets, ``std(ddof=1)/sqrt(n_sets)``,
    the one estimator for both observables. The data sets are independent draws and their chains
    independent, so the data-set-level values are independent and identically distributed: their
    variance is the data-set (quenched) variance plus that data set's Monte Carlo variance, whatever
    the chains' autocorrelation, and the spread estimates the variance of the group mean without
    bias. An ESS-based Monte Carlo error (ArviZ) is not added or maximised over: it is already inside
    the spread, and it assumes that all chains sample one target, which chains of different data
    sets do not. For ``sqrt(E m^2)`` the error of ``E m^2`` is propagated (delta method).
    """
    m = as_real_array("m", m)
    q = as_real_array("q", q)
    if m.ndim != 3 or m.shape != q.shape:
        raise ValueError(f"m and q must have equal shape (n_groups, n_sets, n_draws), got {m.shape}, {q.shape}")
    if m.shape[1] < 2 or m.shape[2] < 4:
        raise ValueError(f"m and q need at least 2 data sets and 4 draws per group, got shape {m.shape}")
    check_finite("m", m)
    check_finite("q", q)
    n_sets = m.shape[1]
    m2_sets, q_sets = (m**2).mean(-1), (q * np.sign(m)).mean(-1)
    Em2 = m2_sets.mean(1)
    se_m2, q_se = (x.std(1, ddof=1) / np.sqrt(n_sets) for x in (m2_sets, q_sets))
    return GroupSummary(rms_m=np.sqrt(Em2), rms_m_se=se_m2 / (2 * np.sqrt(Em2)), q=q_sets.mean(1), q_se=q_se,
                        var_m=Em2, binder=1 - (m**4).mean((1, 2)) / (3 * Em2**2), m2_sets=m2_sets, q_sets=q_sets)


def onset_from_squares(P: npt.ArrayLike, m: npt.ArrayLike, *, tol: float = 1e-3) -> float:
    """Threshold from the first two ``P`` where ``|m| > tol``, assuming ``m^2 ∝ (P - P1)`` there.

    ``P`` increasing (1-d), ``m`` of the same shape. Linear extrapolation of
    ``m^2`` from the first two points above ``tol`` to zero; it is clipped to
    the bracket ``[last P with |m| <= tol, first P with |m| > tol]`` when
    there is one. Returns a float (same units as ``P``).
    """
    P = as_real_array("P", P)
    m = np.abs(as_real_array("m", m))
    if P.ndim != 1 or P.shape != m.shape or np.any(np.diff(P) <= 0):
        raise ValueError("P must be 1-d increasing and m of the same shape")
    check_finite("P", P)
    check_finite("m", m)
    tol = check_positive("tol", tol, allow_zero=True)
    on = np.flatnonzero(m > tol)
    if on.size < 2:
        raise ValueError("m needs at least two points with |m| > tol")
    i, j = on[0], on[1]
    y1, y2 = m[i] ** 2, m[j] ** 2
    if y2 <= y1:
        est = P[i]
    else:
        est = P[i] - y1 * (P[j] - P[i]) / (y2 - y1)
    lo = P[i - 1] if i > 0 and m[i - 1] <= tol else -np.inf
    return float(np.clip(est, lo, P[i]))


@dataclass(frozen=True)
class MapSweepSets:
    """:func:`map_sweep_datasets` result, arrays of shape ``(n_sets, n_P)``.

    m, q : order parameters of the kept run, gauge fixed to ``m >= 0``; test_loss :
    exact population loss of the kept run; objective : its final MAP objective.
    """

    P: np.ndarray
    m: np.ndarray
    q: np.ndarray
    test_loss: np.ndarray
    objective: np.ndarray


def map_sweep_datasets(P_values: npt.ArrayLike, spec: ModelSpec, seeds: Sequence[int], *,
                       init_scales: npt.ArrayLike = (0.01, 1.0, 3.0), **train_kwargs: Any) -> MapSweepSets:
    """:func:`copylib.inference.map_training.map_sweep` for several independent data sets in one batched Adam call.

    For each seed ``s`` a nested data set is drawn with ``np.random.default_rng(s)``
    (:func:`copylib.inference.map_training.nested_cooccurrence`); every ``(data set, P)`` pair
    is trained from each of ``init_scales`` and the run with the lowest
    objective is kept (MAP filter). The Adam initialisation uses
    ``torch.Generator().manual_seed(seeds[0])``. ``train_kwargs`` go to
    :func:`copylib.inference.map_training.train_map`.
    """
    return _adam_sweep(P_values, spec, seeds, init_scales, train_kwargs)[0]


def _adam_sweep(P_values, spec, seeds, init_scales, train_kwargs):
    """The batched Adam sweep behind :func:`map_sweep_datasets` and :func:`map_sweep_quenched`.

    Returns the kept runs as a :class:`MapSweepSets`, and the co-occurrences, the
    runs and the ``(data set, P)`` group of every run.
    """
    seeds = check_int_array("seeds", seeds, 0).tolist()
    P_values = np.asarray(P_values)
    scales = check_grid("init_scales", init_scales, positive=True)
    n_sets, n_P, n_r = len(seeds), P_values.size, scales.size
    C = np.concatenate([nested_cooccurrence(P_values, spec, np.random.default_rng(s)) for s in seeds])
    C = np.repeat(C, n_r, axis=0)
    runs = train_map(C, spec, torch.Generator().manual_seed(seeds[0]), init_scale=np.tile(scales, n_sets * n_P),
                     **train_kwargs)
    groups = np.repeat(np.arange(n_sets * n_P), n_r)
    kept = lowest_objective(runs.objective, groups)
    m, q, _ = order_parameters(runs.A[kept])
    sign = np.where(m < 0, -1.0, 1.0)
    shape = (n_sets, n_P)
    sweep = MapSweepSets(P=P_values.copy(), m=(m * sign).reshape(shape), q=(q * sign).reshape(shape),
                         test_loss=runs.test_loss[kept, -1].reshape(shape),
                         objective=runs.objective[kept].reshape(shape))
    return sweep, C, runs, groups


@dataclass(frozen=True)
class QuenchedMap:
    """:func:`map_sweep_quenched` result, arrays of shape ``(n_sets, n_P)``.

    m, q, test_loss, objective : Adam's kept run, exactly as :func:`map_sweep_datasets`
    returns them; m_exact, q_exact, objective_exact : the lowest minimum of the MAP
    objective on the *same* data set found by polishing every Adam run with L-BFGS
    (gauge fixed to ``m >= 0``); grad_exact : the largest gradient component there.
    """

    P: np.ndarray
    m: np.ndarray
    q: np.ndarray
    test_loss: np.ndarray
    objective: np.ndarray
    m_exact: np.ndarray
    q_exact: np.ndarray
    objective_exact: np.ndarray
    grad_exact: np.ndarray


def _polish(obj, x0: np.ndarray, gtol: float, max_iter: int):
    """L-BFGS on one run's MAP objective from the flat state ``x0`` (float64)."""
    def f(x):
        g, b, W = obj.split(torch.as_tensor(x, dtype=torch.float64)[None])
        U, grads = obj.energy_and_grad({"g": g.clone(), "b": b.clone(), "W": W.clone()})
        dg, db, dW = grads["g"], grads["b"], grads["W"]
        return float(U[0]), np.concatenate([dg.numpy().ravel(), db.numpy().ravel(), dW.numpy().ravel()])

    r = minimize(f, x0, jac=True, method="L-BFGS-B", options={"maxiter": max_iter, "gtol": gtol, "ftol": 1e-15})
    U, grad = f(r.x)
    return r.x, U, float(np.abs(grad).max())


def map_sweep_quenched(P_values: npt.ArrayLike, spec: ModelSpec, seeds: Sequence[int], *,
                       init_scales: npt.ArrayLike = (0.01, 1.0, 3.0), gtol: float = 1e-9, max_iter: int = 5000,
                       **train_kwargs: Any) -> QuenchedMap:
    """:func:`map_sweep_datasets` plus the exact minimiser of the MAP objective on the same data sets.

    Adam runs exactly as in :func:`map_sweep_datasets` (same data, same
    initialisation); then every run, not only the kept one, is polished with
    L-BFGS (``scipy.optimize.minimize``, exact gradient of
    :func:`copylib.posterior.targets.map_objective`) until the largest gradient component
    is below ``gtol`` or ``max_iter`` iterations, and the lowest polished
    objective per ``(data set, P)`` is the quenched MAP minimum. The difference
    between Adam and it is optimisation error; the difference between it and
    the plug-in MAP action minimum is the finite data set (and the plug-in
    approximation). ``gtol > 0``, ``max_iter >= 1``.
    """
    gtol = check_positive("gtol", gtol)
    max_iter = check_int("max_iter", max_iter, 1)
    sweep, C, runs, groups = _adam_sweep(P_values, spec, seeds, init_scales, train_kwargs)
    n_groups = groups.max() + 1
    Ct = torch.as_tensor(C, dtype=torch.float64)
    best = {}
    for k in range(C.shape[0]):
        obj = JointPosterior(Ct[k:k + 1], spec, 1)
        x0 = np.concatenate([runs.g[k].ravel(), np.atleast_1d(runs.b[k]), runs.W[k].ravel()]).astype(np.float64)
        x, U, gmax = _polish(obj, x0, gtol, max_iter)
        if groups[k] not in best or U < best[groups[k]][1]:
            g, b, _ = obj.split(torch.as_tensor(x)[None])
            best[groups[k]] = (obj.attention(g, b).numpy()[0], U, gmax)
    A_ex = np.stack([best[i][0] for i in range(n_groups)])
    m_ex, q_ex, _ = order_parameters(A_ex)
    s_ex = np.where(m_ex < 0, -1.0, 1.0)
    shape = sweep.m.shape
    return QuenchedMap(P=sweep.P, m=sweep.m, q=sweep.q, test_loss=sweep.test_loss, objective=sweep.objective,
                       m_exact=(m_ex * s_ex).reshape(shape), q_exact=(q_ex * s_ex).reshape(shape),
                       objective_exact=np.array([best[i][1] for i in range(n_groups)]).reshape(shape),
                       grad_exact=np.array([best[i][2] for i in range(n_groups)]).reshape(shape))


def _regroup(x, shape: tuple, name: str) -> np.ndarray:
    x = np.asarray(x)
    if x.ndim != 2 or x.shape[0] != int(np.prod(shape)):
        raise ValueError(f"{name} must have shape (chain, draw) with {int(np.prod(shape))} chains "
                         f"(= {' x '.join(map(str, shape))}), got {x.shape}")
    return x


def by_data_set(x: npt.ArrayLike, n_groups: int, n_sets: int) -> np.ndarray:
    """``(group, data set, draws)`` from ``(chain, draw)``: the draws of a data set's chains pooled.

    The chains must be ordered group by group, and within a group data set by data set
    (``np.repeat`` of the data sets, as the chapter batches them).
    """
    check_int("n_groups", n_groups, 1)
    check_int("n_sets", n_sets, 1)
    x = np.asarray(x)
    if x.ndim != 2 or x.shape[0] % (n_groups * n_sets):
        raise ValueError(f"x must have shape (chain, draw) with a multiple of n_groups * n_sets = "
                         f"{n_groups * n_sets} chains, got {x.shape}")
    return x.reshape(n_groups, n_sets, -1)


def by_chain(x: npt.ArrayLike, n_groups: int, n_sets: int, n_chains: int) -> np.ndarray:
    """``(group, data set, chain, draw)`` from ``(chain, draw)`` (chains ordered as in :func:`by_data_set`)."""
    for name, v in (("n_groups", n_groups), ("n_sets", n_sets), ("n_chains", n_chains)):
        check_int(name, v, 1)
    x = _regroup(x, (n_groups, n_sets, n_chains), "x")
    return x.reshape(n_groups, n_sets, n_chains, -1)


def map_predictions(P_values: npt.ArrayLike, spec: ModelSpec) -> np.ndarray:
    """``(3, n_P)``: ``m``, ``q`` and the test loss of the global minimum of the MAP action at each ``P``."""
    P_values = as_real_array("P_values", P_values)
    if P_values.size == 0 or not np.all(np.isfinite(P_values) & (P_values > 0)):
        raise ValueError(f"P_values must be a non-empty array of finite numbers > 0, got {P_values}")
    rows = [global_minimum(float(P), spec, "map") for P in P_values.ravel()]
    return np.array([[r.coordinates["m"], r.coordinates["q"], r.test_loss] for r in rows]).T


def posterior_copy_share(moments: Sequence[PluginMoments | IntegratedMoments], L: int) -> np.ndarray:
    """``(L-1) E[q sign m] / (E|m| + (L-1) E[q sign m])`` for each entry of ``moments``
    (objects with ``q`` and ``abs_m``, e.g. :class:`~copylib.theory.linear_marginal.PluginMoments`)."""
    check_int("L", L, 2)
    Q = (L - 1) * np.array([a.q for a in moments], dtype=float)
    return Q / (np.array([a.abs_m for a in moments], dtype=float) + Q)


_MAP_OBSERVABLES = ("m", "q", "loss")


@dataclass(frozen=True)
class MapAgreement:
    """:func:`map_agreement` result, arrays of shape ``(3, n_P)`` for ``m``, ``q`` and the test loss.

    theory : the MAP prediction; mean : the mean over the data sets; spread : the standard deviation
    of one data set's value, ``s |theory| / sqrt(P)`` with ``s`` pooled per observable over every data set
    and ``P`` (:func:`copylib.checks.data_set_tolerance`); shift : the change of the prediction under the
    allowed shift of ``P``; tol : the tolerance, the Student-t multiple of ``spread / sqrt(n_sets)`` (false
    alarms at most ``level`` per observable over the ``P`` grid) ``+ shift``; ratio : ``|mean - theory| / tol``;
    ratio_without_shift : the same with ``tol - shift``.
    """

    theory: np.ndarray
    mean: np.ndarray
    spread: np.ndarray
    shift: np.ndarray
    tol: np.ndarray
    ratio: np.ndarray
    ratio_without_shift: np.ndarray

    def table(self, P_values: npt.ArrayLike) -> pd.DataFrame:
        """MAP, Adam and the two ratios, one row per observable and ``P`` (four columns: it fits a page)."""
        cols = {what: x.ravel() for what, x in (("MAP", self.theory), ("Adam", self.mean), ("ratio", self.ratio),
                                                ("ratio without shift", self.ratio_without_shift))}
        index = pd.MultiIndex.from_product([list(_MAP_OBSERVABLES), list(P_values)], names=["observable", "P"])
        return pd.DataFrame(cols, index=index)


def map_agreement(P_values: npt.ArrayLike, spec: ModelSpec, observed: npt.ArrayLike, theory: npt.ArrayLike, *,
                  level: float = 0.01, P_shift: float = 0.03) -> MapAgreement:
    """Adam's ``m``, ``q`` and test loss against the MAP minimum, with a data-set tolerance and a shift in ``P``.

    The data-set spread of each observable is taken of relative order ``1/sqrt(P)`` and pooled over
    every data set and ``P`` (not read from two draws at one ``P``); the tolerance on the mean over data
    sets is its Student-t multiple for a false-alarm rate ``level`` over the ``P`` grid
    (:func:`copylib.checks.data_set_tolerance`), plus the change of the prediction
    (:func:`map_predictions`) when ``P`` is multiplied by ``1 - P_shift`` or divided by it (a finite
    data set can shift features along ``P``).

    Parameters
    ----------
    P_values : sequence of float
        The sample sizes (finite, > 0).
    spec : ModelSpec
        The linear-attention spec of the MAP action.
    observed : array ``(n_sets, 3, n_P)``
        Adam's ``m``, ``q`` and test loss per data set (``n_sets >= 2``).
    theory : array ``(3, n_P)``
        The MAP prediction (:func:`map_predictions`), nonzero (the spread is relative to it).
    level : float
        The false-alarm rate per observable, ``0 < level < 1``.
    P_shift : float
        Allowed relative shift of ``P``, ``0 <= P_shift < 1``.

    Returns
    -------
    MapAgreement
    """
    P = check_P_values(P_values)
    obs = as_real_array("observed", observed)
    if obs.ndim != 3 or obs.shape[0] < 2 or obs.shape[1:] != (3, P.size):
        raise ValueError(f"observed must have shape (n_sets >= 2, 3, {P.size}), got {obs.shape}")
    check_finite("observed", obs)
    th = as_real_array("theory", theory)
    if th.shape != (3, P.size):
        raise ValueError(f"theory must have shape (3, {P.size}), got {th.shape}")
    check_finite("theory", th)
    if np.any(th == 0):
        raise ValueError("theory must be nonzero at every P (the data-set spread is relative to it): pass the P "
                         "above the MAP threshold P1")
    level = check_positive("level", level)
    if level >= 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    P_shift = check_positive("P_shift", P_shift, allow_zero=True)
    if P_shift >= 1:
        raise ValueError(f"P_shift must be in [0, 1), got {P_shift}")
    shift = np.max([np.abs(map_predictions(P * f, spec) - th) for f in (1 - P_shift, 1 / (1 - P_shift))], axis=0)
    pooled = [data_set_tolerance(obs[:, k], scale=np.abs(th[k]) / np.sqrt(P), level=level) for k in range(3)]
    mean, spread = obs.mean(0), np.array([r.sd for r in pooled])
    tol = np.array([r.tol for r in pooled]) + shift
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio, ratio_ws = np.abs(mean - th) / tol, np.abs(mean - th) / (tol - shift)
    return MapAgreement(theory=th, mean=mean, spread=spread, shift=shift, tol=tol, ratio=ratio,
                        ratio_without_shift=ratio_ws)


@dataclass(frozen=True)
class LossPlateau:
    """:func:`loss_plateau` result.

    P_from, P_to : the smallest and largest ``P`` with the loss within ``width`` of the pooling
    loss (``nan`` if there is none); factor : ``P_to / P_from``; largest_step_up : the largest
    increase of the loss between neighbouring ``P``; loss_last : the loss at the largest ``P``.
    """

    P_from: float
    P_to: float
    factor: float
    largest_step_up: float
    loss_last: float

    def row(self) -> dict:
        """One table row."""
        return {"plateau from P": self.P_from, "to P": self.P_to, "factor": self.factor,
                "loss at the last P": self.loss_last}


def loss_plateau(P_values: npt.ArrayLike, loss: npt.ArrayLike, pool: float, *, width: float = 0.05) -> LossPlateau:
    """The pooling plateau of a predicted test-loss curve.

    Parameters
    ----------
    P_values : sequence of float
        Increasing sample sizes (finite, > 0, at least two).
    loss : sequence of float
        The loss at each ``P`` (finite).
    pool : float
        The uniform-pooling loss (``>= 0``).
    width : float
        How close to ``pool`` counts as on the plateau (``> 0``).

    Returns
    -------
    LossPlateau
    """
    P = check_grid("P_values", P_values, n_min=2, positive=True, increasing=True)
    y = as_real_array("loss", loss)
    if y.shape != P.shape:
        raise ValueError(f"loss must have the shape of P_values {P.shape}, got {y.shape}")
    check_finite("loss", y)
    pool = check_positive("pool", pool, allow_zero=True)
    width = check_positive("width", width)
    on = np.abs(y - pool) < width
    lo, hi = (float(P[on].min()), float(P[on].max())) if on.any() else (float("nan"), float("nan"))
    return LossPlateau(P_from=lo, P_to=hi, factor=hi / lo, largest_step_up=float(np.diff(y).max()),
                       loss_last=float(y[-1]))


@dataclass(frozen=True)
class PosteriorLoss:
    """:func:`posterior_loss` result, arrays ``(n_P,)``.

    P : the sample sizes; mean, se : the posterior test loss averaged over each data set's draws,
    then its mean and standard error over the data sets; plugin : the plug-in integral's loss;
    minimum : the loss of a minimiser of the action; z : ``|mean - plugin| / se``.
    """

    P: np.ndarray
    mean: np.ndarray
    se: np.ndarray
    plugin: np.ndarray
    minimum: np.ndarray
    z: np.ndarray

    def table(self) -> pd.DataFrame:
        """The sampled loss and its standard error, the plug-in integral and the minimiser, one row per ``P``."""
        return pd.DataFrame({"sampled posterior loss": self.mean, "s.e.": self.se, "plug-in integral": self.plugin,
                             "fluct minimum": self.minimum}, index=pd.Index(self.P.tolist(), name="P"))


def posterior_loss(samples: dict, P_values: npt.ArrayLike, n_sets: int, spec: ModelSpec,
                   moments: Sequence[PluginMoments], minima: Sequence[Minimum]) -> PosteriorLoss:
    """The test loss of posterior draws of ``A`` with their plug-in readout, against the plug-in integral.

    Parameters
    ----------
    samples : dict
        The sampler's draws ``(chain, draw)`` with keys ``alpha_1``, ``alpha_2``, ``gamma_1``, ``gamma_2``
        (the invariants of :func:`copylib.theory.plugin_loss.plugin_loss`), chains ordered as in
        :func:`by_data_set`.
    P_values : sequence of float
        The sample size of each group (finite, > 0).
    n_sets : int
        Data sets per group (``>= 2``).
    spec : ModelSpec
        The linear-attention spec.
    moments, minima : sequences
        One entry per ``P``: objects with ``loss`` (the plug-in integral,
        :class:`~copylib.theory.linear_marginal.PluginMoments`) and with ``test_loss`` (a minimiser).

    Returns
    -------
    PosteriorLoss
    """
    P = check_P_values(P_values)
    n_sets = check_int("n_sets", n_sets, 2)
    if len(moments) != P.size or len(minima) != P.size:
        raise ValueError(f"moments and minima must have one entry per P ({P.size}), got {len(moments)} and "
                         f"{len(minima)}")
    inv = [by_data_set(samples[k], P.size, n_sets) for k in ("alpha_1", "alpha_2", "gamma_1", "gamma_2")]
    set_loss = plugin_loss(*inv, P[:, None, None], spec).mean(-1)  # (P, data set)
    mean, se = set_loss.mean(-1), set_loss.std(-1, ddof=1) / np.sqrt(n_sets)
    plugin = np.array([a.loss for a in moments])
    return PosteriorLoss(P=P, mean=mean, se=se, plugin=plugin, minimum=np.array([r.test_loss for r in minima]),
                         z=np.abs(mean - plugin) / se)


@dataclass(frozen=True)
class OptimisationError:
    """:func:`optimisation_error` result.

    rel : ``(2, n_sets, n_P)``, ``|Adam - exact| / (|exact| + floor)`` for ``m`` and ``q``;
    objective_gap : ``(n_sets, n_P)``, Adam's objective minus the exact minimum's; grad_max : the
    largest gradient norm at the exact minima; largest : ``rel.max()``.
    """

    rel: np.ndarray
    objective_gap: np.ndarray
    grad_max: float
    largest: float

    def table(self) -> pd.DataFrame:
        """The largest relative differences of ``m`` and ``q``, the largest objective gap and gradient."""
        return pd.DataFrame({"largest relative difference, m": [self.rel[0].max()],
                             "largest relative difference, q": [self.rel[1].max()],
                             "objective above the exact minimum (nats)": [np.max(self.objective_gap)],
                             "largest gradient at the exact minimum": [self.grad_max]}).T.rename(columns={0: "value"})


def optimisation_error(adam: QuenchedMap, *, floor_m: float = 1e-3, floor_q: float = 1e-6) -> OptimisationError:
    """Adam's ``m`` and ``q`` against the exact minimiser of the MAP objective on the same data sets.

    Parameters
    ----------
    adam : QuenchedMap
        A :func:`map_sweep_quenched` result.
    floor_m, floor_q : float
        Added to ``|exact|`` in the denominators (``> 0``), so that a vanishing amplitude is compared absolutely.

    Returns
    -------
    OptimisationError
    """
    check_instance("adam", adam, QuenchedMap)
    floor_m = check_positive("floor_m", floor_m)
    floor_q = check_positive("floor_q", floor_q)
    rel = np.stack([np.abs(adam.m - adam.m_exact) / (np.abs(adam.m_exact) + floor_m),
                    np.abs(adam.q - adam.q_exact) / (np.abs(adam.q_exact) + floor_q)])
    return OptimisationError(rel=rel, objective_gap=adam.objective - adam.objective_exact,
                             grad_max=float(adam.grad_exact.max()), largest=float(rel.max()))
