"""Helpers for the linear-attention chapter: sampled summaries, onset fit, MAP sweeps.

The integrated theory (moments and marginals of the plug-in posterior) is in
:mod:`copylib.theory.linear_marginal`.

* :func:`chain_group_summary`: sign-invariant sampled order parameters per
  group of chains (one ``P`` each, one data set per chain), with a standard
  error that includes the data-set spread.
* :func:`onset_from_squares`: a threshold estimate from ``m^2`` just above it.
* :func:`map_sweep_datasets`: MAP-filtered Adam over ``P`` for several data sets, batched.
* :func:`map_sweep_quenched`: Adam as :func:`map_sweep_datasets` plus the exact (L-BFGS) minimiser on the same data.
* :func:`by_data_set`, :func:`by_chain`: regroup a batched sampling run's ``(chain, draw)`` arrays.
* :func:`diagnostics_per_group`, :func:`diagnostics_table`, :func:`diagnostics_arrays`: the
  per-``P`` MCMC diagnostics of ``m^2``, ``q sign m`` and the energy, as a table and as arrays.
* :func:`z_scores`: sampled summaries against a theory's moments, in standard errors.
* :func:`map_predictions`: ``m``, ``q`` and the test loss of the MAP action's minimum over ``P``.
* :func:`posterior_copy_share`: the copy share of posterior means.
* :func:`threshold_versions`: ``P1`` and ``P2`` of the versions of the action, exact, numerical and to leading order.
* :func:`plugin_z_test`: the sampled moments against the plug-in posterior integral, with a model-error
  allowance at small ``P`` and the calibration of the z's.
* :func:`diagnostics_frame`, :func:`diagnostics_summary`: the per-``P`` diagnostics as a table, and
  their worst values over the sample sizes where the chains are claimed mixed.
* :func:`local_minimum_scan`: the number of local minima of the action along ``P``, and at its steepest point.
* :func:`jump_table`: the copy-share jumps of :func:`copylib.theory.linear.copy_share_jump` as a table.
* :func:`smallest_jump_size`: the smallest ``L`` at which a version's minimum jumps, by bisection.
* :func:`map_agreement`: Adam's order parameters and loss against the MAP minimum, in units of the tolerance.
* :func:`loss_plateau`: the pooling plateau of a predicted loss curve.

The MCMC diagnostics the chapter reports (R-hat, ESS, half-chain drift) are in
:mod:`copylib.inference.diagnostics`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from scipy.optimize import minimize

from ..arguments import as_real_array, check_finite, check_int, check_positive
from ..inference.diagnostics import (
    DatasetDiagnostics,
    ZCalibration,
    dataset_chain_diagnostics,
    mcse_mean,
    studentized_z_null,
)
from ..inference.map_training import lowest_objective, nested_cooccurrence, train_map
from ..model.network import ModelSpec
from ..posterior.order_parameters import order_parameters
from ..posterior.targets import JointPosterior
from ..theory import linear as linear_theory
from ..theory.linear import action_minimum

__all__ = [
    "DiagnosticsSummary",
    "GroupSummary",
    "MapSweepSets",
    "PluginZTest",
    "QuenchedMap",
    "ThresholdVersions",
    "by_chain",
    "by_data_set",
    "chain_group_summary",
    "diagnostics_arrays",
    "diagnostics_frame",
    "diagnostics_per_group",
    "diagnostics_summary",
    "diagnostics_table",
    "excess_z",
    "map_predictions",
    "map_sweep_datasets",
    "map_sweep_quenched",
    "onset_from_squares",
    "plugin_z_test",
    "posterior_copy_share",
    "threshold_versions",
    "z_scores",
    "LocalMinimumScan",
    "local_minimum_scan",
    "jump_table",
    "SmallestJump",
    "smallest_jump_size",
    "MapAgreement",
    "map_agreement",
    "LossPlateau",
    "loss_plateau",
]


@dataclass(frozen=True)
class GroupSummary:
    """Sampled order parameters per group (arrays of shape ``(n_groups,)``).

    rms_m, rms_m_se : sqrt(E m^2) and its standard error; q, q_se : E[q sign m];
    var_m : E m^2 (the sampled variance of m, mean 0 by symmetry); binder :
    1 - E m^4/(3 (E m^2)^2); se_source : for each of the two observables, which
    error was the larger ("spread" across chains/data sets or "mcse").
    """

    rms_m: np.ndarray
    rms_m_se: np.ndarray
    q: np.ndarray
    q_se: np.ndarray
    var_m: np.ndarray
    binder: np.ndarray
    se_source: list


def chain_group_summary(m, q) -> GroupSummary:
    """Summaries of samples ``m, q`` of shape ``(n_groups, n_chains, n_draws)``.

    Each chain is assumed to sample the posterior of its *own* data set. The
    standard error of a group mean is the larger of (i) the spread of the
    per-chain means, ``std(ddof=1)/sqrt(n_chains)``, which contains the Monte
    Carlo error and the data-set (quenched) variance, and (ii) the pooled
    Monte Carlo standard error :func:`copylib.inference.diagnostics.mcse_mean` (ArviZ, ESS based).
    For ``sqrt(E m^2)`` the error of ``E m^2`` is propagated (delta method).
    """
    m = as_real_array("m", m)
    q = as_real_array("q", q)
    if m.ndim != 3 or m.shape != q.shape:
        raise ValueError(f"m and q must have equal shape (n_groups, n_chains, n_draws), got {m.shape}, {q.shape}")
    if m.shape[1] < 2 or m.shape[2] < 4:
        raise ValueError(f"m and q need at least 2 chains and 4 draws per group, got shape {m.shape}")
    check_finite("m", m)
    check_finite("q", q)
    G, R, _ = m.shape
    out = {k: np.empty(G) for k in ("rms", "rms_se", "q", "q_se", "var", "binder")}
    src = []
    for i in range(G):
        m2, qs = m[i] ** 2, q[i] * np.sign(m[i])
        pair = []
        for _name, x in (("m2", m2), ("q", qs)):
            spread = x.mean(1).std(ddof=1) / np.sqrt(R)
            mc = float(mcse_mean(x))
            pair.append((x.mean(), max(spread, mc), "spread" if spread >= mc else "mcse"))
        (Em2, se_m2, s1), (Eq, se_q, s2) = pair
        out["rms"][i] = np.sqrt(Em2)
        out["rms_se"][i] = se_m2 / (2 * np.sqrt(Em2))
        out["q"][i], out["q_se"][i] = Eq, se_q
        out["var"][i] = Em2
        out["binder"][i] = 1 - (m[i] ** 4).mean() / (3 * Em2**2)
        src.append((s1, s2))
    return GroupSummary(rms_m=out["rms"], rms_m_se=out["rms_se"], q=out["q"], q_se=out["q_se"], var_m=out["var"],
                        binder=out["binder"], se_source=src)


def onset_from_squares(P, m, *, tol: float = 1e-3) -> float:
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


def map_sweep_datasets(P_values, spec: ModelSpec, seeds, *, init_scales=(0.01, 1.0, 3.0),
                       **train_kwargs) -> MapSweepSets:
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
    if isinstance(seeds, (str, bytes)) or not hasattr(seeds, "__iter__"):
        raise TypeError(f"seeds must be a sequence of integers, got {type(seeds).__name__}")
    seeds = [check_int("seeds entries", s, 0) for s in seeds]
    if not seeds:
        raise ValueError("seeds must be non-empty")
    P_values = np.asarray(P_values)
    scales = as_real_array("init_scales", init_scales)
    if scales.ndim != 1 or scales.size == 0 or not (np.isfinite(scales).all() and (scales > 0).all()):
        raise ValueError(f"init_scales must be a non-empty 1-d sequence of finite values > 0, got {init_scales!r}")
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


def map_sweep_quenched(P_values, spec: ModelSpec, seeds, *, init_scales=(0.01, 1.0, 3.0), gtol: float = 1e-9,
                       max_iter: int = 5000, **train_kwargs) -> QuenchedMap:
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


def by_data_set(x, n_groups: int, n_sets: int) -> np.ndarray:
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


def by_chain(x, n_groups: int, n_sets: int, n_chains: int) -> np.ndarray:
    """``(group, data set, chain, draw)`` from ``(chain, draw)`` (chains ordered as in :func:`by_data_set`)."""
    for name, v in (("n_groups", n_groups), ("n_sets", n_sets), ("n_chains", n_chains)):
        check_int(name, v, 1)
    x = _regroup(x, (n_groups, n_sets, n_chains), "x")
    return x.reshape(n_groups, n_sets, n_chains, -1)


def diagnostics_per_group(m, q, energy) -> list:
    """:func:`~copylib.inference.diagnostics.dataset_chain_diagnostics` of the sign-invariant
    observables ``(m^2, q sign m, energy)``, one entry per group.

    m, q, energy : arrays ``(group, data set, chain, draw)`` (see :func:`by_chain`).
    """
    m, q, energy = (np.asarray(a, dtype=float) for a in (m, q, energy))
    if m.ndim != 4 or q.shape != m.shape or energy.shape != m.shape:
        raise ValueError(f"m, q and energy must share one shape (group, data set, chain, draw), got "
                         f"{m.shape}, {q.shape}, {energy.shape}")
    return [dataset_chain_diagnostics(np.stack([m[i] ** 2, q[i] * np.sign(m[i]), energy[i]], -1))
            for i in range(m.shape[0])]


def diagnostics_table(rows, P_values, label: str) -> str:
    """The text table of :func:`diagnostics_per_group` rows: worst R-hat, summed bulk and tail ESS
    and drift z of ``(m^2, q sign m, energy)``, one line per ``P``."""
    if len(rows) != len(P_values):
        raise ValueError(f"rows and P_values must have the same length, got {len(rows)} and {len(P_values)}")
    lines = [f"{label}: R-hat (worst over data sets) | bulk ESS | tail ESS | drift z   for  m^2, q sgn m, energy"]
    for d, P in zip(rows, P_values):
        lines.append(f"  P = {int(P):5d} | {' '.join(f'{x:.3f}' for x in d.rhat)} |"
                     f" {' '.join(f'{x:5.0f}' for x in d.ess_bulk)} | {' '.join(f'{x:5.0f}' for x in d.ess_tail)} |"
                     f" {' '.join(f'{x:4.1f}' for x in d.drift_z)}")
    return "\n".join(lines)


def diagnostics_arrays(rows) -> dict:
    """The diagnostics of :func:`diagnostics_per_group` rows as arrays ``(n_P, 3)``.

    Keys: ``rhat``, ``ess_bulk``, ``ess_tail``, ``drift_z`` (as in
    :class:`~copylib.inference.diagnostics.DatasetDiagnostics`), ``ess_per_chain`` (the
    summed bulk ESS divided by the number of chains, the effective draws of one chain)
    and ``median_rhat`` (the median R-hat over the data sets).
    """
    if not rows or not all(isinstance(d, DatasetDiagnostics) for d in rows):
        raise ValueError("rows must be a non-empty list of DatasetDiagnostics")
    out = {k: np.array([getattr(d, k) for d in rows]) for k in ("rhat", "ess_bulk", "ess_tail", "drift_z")}
    out["ess_per_chain"] = out["ess_bulk"] / (rows[0].n_sets * rows[0].n_chains)
    out["median_rhat"] = np.array([np.median(d.rhat_sets, axis=0) for d in rows])
    return out


def z_scores(summary: GroupSummary, moments) -> tuple:
    """``(z_m, z_q)``: the sampled ``sqrt(E m^2)`` and ``E[q sign m]`` of ``summary`` minus a
    theory's (a sequence of objects with ``rms_m`` and ``q``, one per group), in standard errors."""
    if len(moments) != len(summary.rms_m):
        raise ValueError(f"moments must have one entry per group ({len(summary.rms_m)}), got {len(moments)}")
    t_m = np.array([t.rms_m for t in moments])
    t_q = np.array([t.q for t in moments])
    return (summary.rms_m - t_m) / summary.rms_m_se, (summary.q - t_q) / summary.q_se


def excess_z(sampled, se, theory, allowance: float) -> np.ndarray:
    """``max(|sampled - theory| - allowance |theory|, 0) / se``: the difference beyond a relative
    model-error allowance, in standard errors (``0`` inside the allowance; ``|z|`` for ``allowance = 0``).

    sampled, se, theory : arrays of one shape (finite; ``se > 0``); allowance : float ``>= 0``.
    """
    arrays = {n: as_real_array(n, x) for n, x in (("sampled", sampled), ("se", se), ("theory", theory))}
    for n, a in arrays.items():
        check_finite(n, a)
    sampled, se, theory = arrays.values()
    if not sampled.shape == se.shape == theory.shape:
        raise ValueError(f"sampled, se and theory must have one shape, got {sampled.shape}, {se.shape}, {theory.shape}")
    if (se <= 0).any():
        raise ValueError(f"se must be > 0, got a minimum of {se.min()}")
    allowance = check_positive("allowance", allowance, allow_zero=True)
    return np.maximum(np.abs(sampled - theory) - allowance * np.abs(theory), 0) / se


def map_predictions(P_values, spec: ModelSpec) -> np.ndarray:
    """``(3, n_P)``: ``m``, ``q`` and the test loss of the global minimum of the MAP action at each ``P``."""
    P_values = as_real_array("P_values", P_values)
    if P_values.size == 0 or not np.all(np.isfinite(P_values) & (P_values > 0)):
        raise ValueError(f"P_values must be a non-empty array of finite numbers > 0, got {P_values}")
    rows = [action_minimum(float(P), spec, "map") for P in P_values.ravel()]
    return np.array([[r.m, r.q, r.test_loss] for r in rows]).T


def posterior_copy_share(moments, L: int) -> np.ndarray:
    """``(L-1) E[q sign m] / (E|m| + (L-1) E[q sign m])`` for each entry of ``moments``
    (objects with ``q`` and ``abs_m``, e.g. :class:`~copylib.theory.linear_marginal.PluginMoments`)."""
    check_int("L", L, 2)
    Q = (L - 1) * np.array([a.q for a in moments], dtype=float)
    return Q / (np.array([a.abs_m for a in moments], dtype=float) + Q)


_OBSERVABLES = ("m²", "q sgn m", "energy")


@dataclass(frozen=True)
class ThresholdVersions:
    """:func:`threshold_versions` result: dicts keyed by version name.

    p1_exact : the smallest root of ``det H(P) = 0`` (:func:`copylib.theory.linear.p1_analytic`);
    p1_numerical : the same threshold from a finite-difference Hessian and the minimiser
    (:func:`copylib.theory.linear.p1_numerical`); p1_leading : the leading-order formula
    (``nan`` where there is none, ``"fluct"``); p2_numerical : the copy share of the minimum
    reaching ``1/2``; p2_asymptotic : the asymptotic formula
    (:func:`copylib.theory.linear.p2_analytic`).
    """

    p1_exact: dict
    p1_numerical: dict
    p1_leading: dict
    p2_numerical: dict
    p2_asymptotic: dict

    def table(self) -> pd.DataFrame:
        """Relative differences, one row per version: numerical ``P1`` against the exact one, the
        leading-order ``P1`` against the exact one, and the numerical ``P2`` against the asymptotic one."""
        rows = {v: {"P1 numerical / exact - 1": self.p1_numerical[v] / self.p1_exact[v] - 1,
                    "P1 leading order / exact - 1": self.p1_leading[v] / self.p1_exact[v] - 1,
                    "P2 numerical / asymptotic - 1": self.p2_numerical[v] / self.p2_asymptotic[v] - 1}
                for v in self.p1_exact}
        return pd.DataFrame(rows).T


def threshold_versions(spec: ModelSpec, versions=("mean_field", "fluct", "map"), *,
                       rtol: float = 1e-4) -> ThresholdVersions:
    """``P1`` and ``P2`` of each version of the linear reduced action, by every route the chapter compares.

    Parameters
    ----------
    spec : ModelSpec
        A linear-attention spec.
    versions : sequence of str
        Versions of ``copylib.theory.linear.VERSIONS`` (non-empty, no repeats).
    rtol : float
        Relative tolerance of the numerical ``P2`` (``0 < rtol < 1``).

    Returns
    -------
    ThresholdVersions
    """
    if not isinstance(spec, ModelSpec):
        raise TypeError(f"spec must be a ModelSpec, got {type(spec).__name__}")
    if isinstance(versions, str):
        raise TypeError("versions must be a sequence of version names, got a single string")
    versions = tuple(versions)
    if not versions or len(set(versions)) != len(versions):
        raise ValueError(f"versions must be a non-empty sequence without repeats, got {versions!r}")
    rtol = check_positive("rtol", rtol)
    if rtol >= 1:
        raise ValueError(f"rtol must be in (0, 1), got {rtol}")
    out = {k: {} for k in ("p1_exact", "p1_numerical", "p1_leading", "p2_numerical", "p2_asymptotic")}
    for v in versions:
        out["p1_exact"][v] = linear_theory.p1_analytic(spec, v)
        out["p1_numerical"][v] = linear_theory.p1_numerical(spec, v)
        out["p1_leading"][v] = linear_theory.p1_analytic(spec, v, "leading") if v != "fluct" else float("nan")
        out["p2_numerical"][v] = linear_theory.p2_numerical(spec, v, rtol=rtol)
        out["p2_asymptotic"][v] = linear_theory.p2_analytic(spec, v)
    return ThresholdVersions(**out)


@dataclass(frozen=True)
class PluginZTest:
    """:func:`plugin_z_test` result.

    small : bool ``(n_P,)``, the sample sizes below ``P_split`` (where ``sqrt(E m^2)`` gets the
    allowance); z_m, z_q : ``(n_P,)`` z-scores of ``sqrt(E m^2)`` and ``E[q sign m]``; z_exact : the
    z's without allowance, ``z_m`` at ``P >= P_split`` then every ``z_q``; rel_small : sampled /
    theory - 1 of ``sqrt(E m^2)`` below ``P_split``; excess : the difference there beyond the
    allowance, in standard errors (:func:`excess_z`); calibration : ``mean(z_exact^2)`` against
    its law for independent Student-t z's (:func:`copylib.inference.diagnostics.studentized_z_null`).
    """

    small: np.ndarray
    z_m: np.ndarray
    z_q: np.ndarray
    z_exact: np.ndarray
    rel_small: np.ndarray
    excess: np.ndarray
    calibration: ZCalibration


def plugin_z_test(summary: GroupSummary, moments, P_values, n_sets: int, generator: np.random.Generator, *,
                  allowance: float = 0.03, P_split: float = 100.0) -> PluginZTest:
    """The sampled moments of ``summary`` against a theory's ``moments``, as the chapter tests them.

    Parameters
    ----------
    summary : GroupSummary
        Sampled moments, one group per entry of ``P_values``.
    moments : sequence
        The theory's moments (objects with ``rms_m`` and ``q``), one per group.
    P_values : sequence of float
        The sample sizes of the groups (finite, > 0).
    n_sets : int
        Data sets per group (``>= 4``): each error is estimated from them.
    generator : numpy.random.Generator
        Source of the simulated law of ``mean(z^2)``.
    allowance : float
        Relative model-error allowance of ``sqrt(E m^2)`` below ``P_split`` (``>= 0``).
    P_split : float
        Sample size from which no allowance is made (``> 0``).

    Returns
    -------
    PluginZTest
    """
    if not isinstance(summary, GroupSummary):
        raise TypeError(f"summary must be a GroupSummary, got {type(summary).__name__}")
    P = as_real_array("P_values", P_values)
    if P.ndim != 1 or P.size != summary.rms_m.size or not np.all(np.isfinite(P) & (P > 0)):
        raise ValueError(f"P_values must be {summary.rms_m.size} finite values > 0, one per group, got {P_values!r}")
    n_sets = check_int("n_sets", n_sets, 4)
    allowance = check_positive("allowance", allowance, allow_zero=True)
    P_split = check_positive("P_split", P_split)
    z_m, z_q = z_scores(summary, moments)
    small = P < P_split
    z_exact = np.concatenate([z_m[~small], z_q])
    theory_m = np.array([t.rms_m for t in moments], dtype=float)[small]
    rel_small = summary.rms_m[small] / theory_m - 1
    excess = excess_z(summary.rms_m[small], summary.rms_m_se[small], theory_m, allowance)
    calibration = studentized_z_null([np.eye(z_exact.size)], n_sets, generator).calibration(z_exact)
    return PluginZTest(small=small, z_m=z_m, z_q=z_q, z_exact=z_exact, rel_small=rel_small, excess=excess,
                       calibration=calibration)


def diagnostics_frame(rows, P_values) -> pd.DataFrame:
    """The diagnostics of :func:`diagnostics_per_group` rows as a table, one row per ``P``.

    Parameters
    ----------
    rows : list of DatasetDiagnostics
        One per sample size.
    P_values : sequence of float
        The sample sizes, one per row.

    Returns
    -------
    pandas.DataFrame
        Columns ``(statistic, observable)``: the worst and the median R-hat over the data sets,
        ``1 + 1/ESS`` of one chain (where split R-hat sits for stationary chains), bulk and tail ESS
        summed over the data sets and the half-chain drift z, for ``m²``, ``q sgn m`` and the energy.
    """
    arrays = diagnostics_arrays(rows)
    if len(P_values) != len(rows):
        raise ValueError(f"rows and P_values must have the same length, got {len(rows)} and {len(P_values)}")
    columns = {"R-hat (worst)": arrays["rhat"], "R-hat (median)": arrays["median_rhat"],
               "1 + 1/ESS per chain": 1 + 1 / arrays["ess_per_chain"], "bulk ESS": arrays["ess_bulk"],
               "tail ESS": arrays["ess_tail"], "drift z": arrays["drift_z"]}
    data = {(stat, obs): a[:, k] for stat, a in columns.items() for k, obs in enumerate(_OBSERVABLES)}
    return pd.DataFrame(data, index=pd.Index([int(p) for p in P_values], name="P"))


@dataclass(frozen=True)
class DiagnosticsSummary:
    """:func:`diagnostics_summary` result.

    P : ``(n_P,)`` sample sizes; mixed : bool ``(n_P,)``, where the chains are claimed mixed;
    rhat, ess_bulk, ess_tail, drift_z, ess_per_chain : ``(n_P, 3)`` arrays for ``(m^2, q sign m,
    energy)`` as :func:`diagnostics_arrays` returns them; worst : the numbers the chapter quotes,
    as floats: ``rhat_m2``, ``rhat_q``, ``rhat_E`` (worst R-hat where mixed), ``drift`` (largest
    drift z), ``ess`` (fewest bulk or tail ESS where mixed), ``ess_chain_q``, ``ess_chain_E``
    (fewest effective draws per chain where mixed), ``rhat_q_bad`` and ``ess_q_bad`` (worst R-hat
    and fewest bulk ESS of ``q sign m`` at any ``P``).
    """

    P: np.ndarray
    mixed: np.ndarray
    rhat: np.ndarray
    ess_bulk: np.ndarray
    ess_tail: np.ndarray
    drift_z: np.ndarray
    ess_per_chain: np.ndarray
    worst: dict


def diagnostics_summary(rows, P_values, mixed_P) -> DiagnosticsSummary:
    """The diagnostics of :func:`diagnostics_per_group` rows and their worst values.

    Parameters
    ----------
    rows : list of DatasetDiagnostics
        One per sample size.
    P_values : sequence of float
        The sample sizes, one per row.
    mixed_P : sequence of float
        The sample sizes (a non-empty subset of ``P_values``) where the chains are claimed mixed.

    Returns
    -------
    DiagnosticsSummary
    """
    d = diagnostics_arrays(rows)
    P = as_real_array("P_values", P_values)
    if P.ndim != 1 or P.size != len(rows):
        raise ValueError(f"P_values must be 1-d with one value per row ({len(rows)}), got {P_values!r}")
    mixed_values = as_real_array("mixed_P", mixed_P)
    if mixed_values.size == 0 or not np.isin(mixed_values, P).all():
        raise ValueError(f"mixed_P must be a non-empty subset of P_values {P.tolist()}, got {mixed_P!r}")
    mixed = np.isin(P, mixed_values)
    rh, eb, et, pc = d["rhat"], d["ess_bulk"], d["ess_tail"], d["ess_per_chain"]
    worst = {"rhat_m2": rh[mixed, 0].max(), "rhat_q": rh[mixed, 1].max(), "rhat_E": rh[mixed, 2].max(),
             "drift": d["drift_z"].max(), "ess": min(eb[mixed].min(), et[mixed].min()),
             "ess_chain_q": pc[mixed, 1].min(), "ess_chain_E": pc[mixed, 2].min(),
             "rhat_q_bad": rh[:, 1].max(), "ess_q_bad": eb[:, 1].min()}
    return DiagnosticsSummary(P=P, mixed=mixed, rhat=rh, ess_bulk=eb, ess_tail=et, drift_z=d["drift_z"],
                              ess_per_chain=pc, worst={k: float(v) for k, v in worst.items()})


@dataclass(frozen=True)
class LocalMinimumScan:
    """:func:`local_minimum_scan` result.

    P : the scanned sample sizes (a geometric grid, then the steepest point and its two neighbours
    at relative distance ``1e-6``); n_minima : the number of local minima with ``m > 0`` at each;
    steepest : :func:`copylib.theory.linear.copy_share_jump` at this size.
    """

    P: np.ndarray
    n_minima: np.ndarray
    steepest: object

    def row(self, L: int) -> dict:
        """One table row: the scan's size, the fewest and most minima, the steepest point and the
        copy shares of the global minimum on its two sides (``L`` is the spec's sequence length)."""
        j = self.steepest
        return {"P values scanned": self.P.size, "fewest minima": int(self.n_minima.min()),
                "most minima": int(self.n_minima.max()), "steepest at P": j.P_jump,
                "share below": float(linear_theory.copy_share(j.below.m, j.below.q, L)),
                "share above": float(linear_theory.copy_share(j.above.m, j.above.q, L)), "bracket dP/P": j.rel_width}


def local_minimum_scan(spec: ModelSpec, version: str, P_from: float, n_P: int, *, P_to: float = 1e4) -> LocalMinimumScan:
    """Count the local minima of a version's action on a grid of ``P`` and at its steepest point.

    A first-order jump of the global minimum needs two coexisting local minima; a count of one
    everywhere, including at the steepest change of the copy share (where a coexistence window
    narrower than a grid step would be), rules it out.

    Parameters
    ----------
    spec : ModelSpec
        A linear-attention spec.
    version : str
        A version of ``copylib.theory.linear.VERSIONS``.
    P_from, P_to : float
        The geometric grid's ends (``0 < P_from < P_to``).
    n_P : int
        Grid points (``>= 2``).

    Returns
    -------
    LocalMinimumScan
    """
    P_from = check_positive("P_from", P_from)
    P_to = check_positive("P_to", P_to)
    if not P_from < P_to:
        raise ValueError(f"P_from must be below P_to = {P_to}, got {P_from}")
    n_P = check_int("n_P", n_P, 2)
    steepest = linear_theory.copy_share_jump(spec, version)
    P = np.concatenate([np.geomspace(P_from, P_to, n_P), steepest.P_jump * np.array([1 - 1e-6, 1.0, 1 + 1e-6])])
    n_minima = np.array([len(found) for found in linear_theory.local_minima(P, spec, version)])
    return LocalMinimumScan(P=P, n_minima=n_minima, steepest=steepest)


def jump_table(jumps: dict, V: int) -> pd.DataFrame:
    """The copy-share jumps ``{version: {L: CopyJump}}`` as a table, one row per ``(version, L)``.

    Parameters
    ----------
    jumps : dict
        ``{version: {L: CopyJump}}`` from :func:`copylib.theory.linear.copy_share_jump`.
    V : int
        The vocabulary size of the specs (``>= 2``), for the asymptotic ``P2``.

    Returns
    -------
    pandas.DataFrame
        Columns: ``P2``, its ratio to the asymptotic formula, ``P_jump / P2``, the copy shares on
        the two sides, the jump, whether there are two minima and the slope of their action difference.
    """
    V = check_int("V", V, 2)
    if not isinstance(jumps, dict) or not jumps or not all(isinstance(d, dict) and d for d in jumps.values()):
        raise ValueError("jumps must be a non-empty dict {version: {L: CopyJump}} with non-empty inner dicts")
    rows = []
    for v, by_L in jumps.items():
        for Lb, j in by_L.items():
            asym = linear_theory.p2_analytic(ModelSpec(L=Lb, V=V, kind="linear"), v)
            rows.append({"version": v, "L": Lb, "P2": j.P2, "P2 / asymptotic": j.P2 / asym,
                         "P_jump / P2": j.P_jump / j.P2,
                         "share below": float(linear_theory.copy_share(j.below.m, j.below.q, Lb)),
                         "share above": float(linear_theory.copy_share(j.above.m, j.above.q, Lb)), "jump": j.jump,
                         "two minima": j.two_minima, "slope (nats)": j.slope})
    return pd.DataFrame(rows).set_index(["version", "L"])


@dataclass(frozen=True)
class SmallestJump:
    """:func:`smallest_jump_size` result.

    lo, hi : the final bracket, ``hi = lo + 1`` (continuous at ``lo``, first order at ``hi`` if the
    start bracket was valid); start : the start bracket; start_lo, start_hi : the
    :func:`copylib.theory.linear.copy_share_jump` results at its ends; start_valid : continuous (one
    minimum) at the start's low end and first order at its high end; at_hi : the result at ``hi``.
    """

    lo: int
    hi: int
    start: tuple
    start_lo: object
    start_hi: object
    start_valid: bool
    at_hi: object


def smallest_jump_size(version: str, lo: int, hi: int, *, V: int = 4) -> SmallestJump:
    """The smallest sequence length ``L`` at which a version's global minimum jumps at ``P2``.

    Bisection on integer ``L`` in ``[lo, hi]`` at fixed ``V`` and default scales, assuming one
    switch from continuous (a single minimum at the steepest point) to first order
    (``first_order`` of :func:`copylib.theory.linear.copy_share_jump`); the ends of the start bracket are
    computed and reported so that the assumption can be checked.

    Parameters
    ----------
    version : str
        A version of ``copylib.theory.linear.VERSIONS``.
    lo, hi : int
        The start bracket, ``2 <= lo < hi``.
    V : int
        Vocabulary size (``>= 2``).

    Returns
    -------
    SmallestJump
    """
    lo = check_int("lo", lo, 2)
    hi = check_int("hi", hi, 3)
    if not lo < hi:
        raise ValueError(f"lo must be below hi = {hi}, got {lo}")
    V = check_int("V", V, 2)

    def at(Lb):
        return linear_theory.copy_share_jump(ModelSpec(L=Lb, V=V, kind="linear"), version)

    start_lo, start_hi = at(lo), at(hi)
    a, b, j_b = lo, hi, start_hi
    while b - a > 1:
        mid = (a + b) // 2
        j_mid = at(mid)
        a, b, j_b = (a, mid, j_mid) if j_mid.first_order else (mid, b, j_b)
    return SmallestJump(lo=a, hi=b, start=(lo, hi), start_lo=start_lo, start_hi=start_hi,
                        start_valid=bool(not start_lo.two_minima and start_hi.first_order), at_hi=j_b)


_MAP_OBSERVABLES = ("m", "q", "loss")


@dataclass(frozen=True)
class MapAgreement:
    """:func:`map_agreement` result, arrays of shape ``(3, n_P)`` for ``m``, ``q`` and the test loss.

    theory : the MAP prediction; mean : the mean over the data sets; spread : their standard
    deviation (``ddof=1``); shift : the change of the prediction under the allowed shift of ``P``;
    tol : the tolerance, ``factor * max(spread, floor * |theory|) + shift``; ratio :
    ``|mean - theory| / tol``; ratio_without_shift : the same with ``tol - shift``.
    """

    theory: np.ndarray
    mean: np.ndarray
    spread: np.ndarray
    shift: np.ndarray
    tol: np.ndarray
    ratio: np.ndarray
    ratio_without_shift: np.ndarray

    def table(self, P_values) -> pd.DataFrame:
        """MAP, Adam and the two ratios of each observable, one row per ``P``."""
        cols = {f"{name}: {what}": x[i] for i, name in enumerate(_MAP_OBSERVABLES)
                for what, x in (("MAP", self.theory), ("Adam", self.mean), ("ratio", self.ratio),
                                ("ratio without shift", self.ratio_without_shift))}
        return pd.DataFrame(cols, index=pd.Index(list(P_values), name="P"))


def map_agreement(P_values, spec: ModelSpec, observed, theory, *, factor: float = 3.0, floor: float = 0.015,
                  P_shift: float = 0.03) -> MapAgreement:
    """Adam's ``m``, ``q`` and test loss against the MAP minimum, with a data-set tolerance and a shift in ``P``.

    The tolerance is ``factor`` times the larger of the data-set spread and ``floor`` times the
    prediction, plus the change of the prediction (:func:`map_predictions`) when ``P`` is multiplied
    by ``1 - P_shift`` or divided by it (a finite data set can shift features along ``P``).

    Parameters
    ----------
    P_values : sequence of float
        The sample sizes (finite, > 0).
    spec : ModelSpec
        The linear-attention spec of the MAP action.
    observed : array ``(n_sets, 3, n_P)``
        Adam's ``m``, ``q`` and test loss per data set (``n_sets >= 2``).
    theory : array ``(3, n_P)``
        The MAP prediction (:func:`map_predictions`).
    factor, floor : float
        Multiple of the spread (``> 0``) and relative floor of the spread (``>= 0``).
    P_shift : float
        Allowed relative shift of ``P``, ``0 <= P_shift < 1``.

    Returns
    -------
    MapAgreement
    """
    P = as_real_array("P_values", P_values)
    if P.ndim != 1 or P.size == 0 or not np.all(np.isfinite(P) & (P > 0)):
        raise ValueError(f"P_values must be a non-empty 1-d array of finite values > 0, got {P_values!r}")
    obs = as_real_array("observed", observed)
    if obs.ndim != 3 or obs.shape[0] < 2 or obs.shape[1:] != (3, P.size):
        raise ValueError(f"observed must have shape (n_sets >= 2, 3, {P.size}), got {obs.shape}")
    check_finite("observed", obs)
    th = as_real_array("theory", theory)
    if th.shape != (3, P.size):
        raise ValueError(f"theory must have shape (3, {P.size}), got {th.shape}")
    check_finite("theory", th)
    factor = check_positive("factor", factor)
    floor = check_positive("floor", floor, allow_zero=True)
    P_shift = check_positive("P_shift", P_shift, allow_zero=True)
    if P_shift >= 1:
        raise ValueError(f"P_shift must be in [0, 1), got {P_shift}")
    shift = np.max([np.abs(map_predictions(P * f, spec) - th) for f in (1 - P_shift, 1 / (1 - P_shift))], axis=0)
    mean, spread = obs.mean(0), obs.std(0, ddof=1)
    tol = factor * np.maximum(spread, floor * np.abs(th)) + shift
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


def loss_plateau(P_values, loss, pool: float, *, width: float = 0.05) -> LossPlateau:
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
    P = as_real_array("P_values", P_values)
    if P.ndim != 1 or P.size < 2 or not np.all(np.isfinite(P) & (P > 0)) or np.any(np.diff(P) <= 0):
        raise ValueError(f"P_values must be 1-d, increasing, finite and > 0 with at least two values, got {P_values!r}")
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
