"""Evidence for the softmax-attention chapter: sampled branches, chains and the plug-in marginal's errors.

The softmax chapter's evidence sections and deeper sections call these functions and
glue or check their fields:

* :func:`finite_size_frame` -- the finite-size rows of the plug-in marginal as a table;
* :func:`finite_size_summary` -- barriers, their numerical errors, windows and sharpness across ``L``;
* :func:`finite_size_figure` -- those barriers, windows and ``P3`` against ``L`` in three panels;
* :func:`branch_comparison` -- sampled posterior means against the plug-in marginal, basin by
  basin, with jackknife errors, z-scores and the correlations of the z-scores;
* :func:`chain_convergence` -- R-hat within each data set, effective sample sizes, half-chain
  drift and crossings of the dividing copy weight, for chains run two per data set;
* :func:`plugin_evidence_error` -- the plug-in action's error on differences of the exact
  evidence between uniform-copy states, over independent data sets.

The samplers and the planted starts are in :mod:`copylib.analysis.softmax`.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
import numpy.typing as npt
import pandas as pd
from matplotlib.ticker import LogLocator

from ..arguments import as_real_array, check_generator, check_instance, check_int
from ..inference.diagnostics import chain_diagnostics, grouped_rhat
from ..model.network import ModelSpec, check_spec
from ..model.statistics import cooccurrence
from ..model.task import copy_task
from ..plotting import three_panels
from ..posterior.evidence import negative_log_evidence
from ..posterior.order_parameters import plugin_action_of_attention
from ..theory.plugin_loss import row_stochastic_plugin_loss
from ..theory.softmax_marginal import FiniteSizeRow, RowCumulants, plugin_marginal
from .softmax import basin_mean, uniform_copy_attention

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "BranchComparison",
    "ChainConvergence",
    "FiniteSizeSummary",
    "PluginEvidenceError",
    "branch_comparison",
    "chain_convergence",
    "finite_size_figure",
    "finite_size_frame",
    "finite_size_summary",
    "plugin_evidence_error",
]


def finite_size_frame(rows: Mapping[int, tuple[FiniteSizeRow, FiniteSizeRow]],
                      errors: Mapping[int, float] | None = None,
                      saddle_points: Mapping[str, Mapping[int, float]] | None = None) -> pd.DataFrame:
    """The finite-size rows of the plug-in marginal as a table, one row per ``L``.

    Parameters
    ----------
    rows : mapping ``L -> (FiniteSizeRow, FiniteSizeRow)``
        Two independent Sobol sets per ``L`` (A, B).
    errors : mapping ``L -> float``, optional
        The numerical error of the barrier above the pooling minimum (nats); without it
        the table has no ``error`` column.
    saddle_points : mapping ``version -> (mapping L -> P3)``, optional
        ``P3`` of saddle-point versions (columns ``"P3 <version>"``, ``nan`` without a jump).

    Returns
    -------
    pandas.DataFrame
        Indexed by ``L``: ``two minima`` (both sets), ``P3`` (set A; ``nan`` without a
        first-order point), ``window`` (the coexistence window of set A, ``lower – upper``,
        or empty), ``barrier pool``, ``barrier copy`` (nats, at ``P3``), ``error``,
        ``window / P3``, ``sharpness`` and the saddle-point columns.
    """
    if not hasattr(rows, "items"):
        raise TypeError(f"rows must be a mapping L -> (FiniteSizeRow, FiniteSizeRow), got {type(rows).__name__}")
    saddle_points = {} if saddle_points is None else saddle_points
    records = []
    for n_pos, pair in rows.items():
        if len(pair) != 2 or not all(isinstance(r, FiniteSizeRow) for r in pair):
            raise TypeError(f"rows must map L to two FiniteSizeRow (Sobol sets A, B); got {pair!r} at L = {n_pos}")
        a, b = pair
        rec = {"L": int(n_pos), "two minima": "yes" if a.two_minima and b.two_minima else
               ("one set" if a.two_minima or b.two_minima else "no"),
               "P3": a.P3,
               "window": f"{a.P_lower:.1f} – {a.P_upper:.1f}" if a.two_minima else "",  # breaks at a space
               "barrier pool": a.barrier_height[0], "barrier copy": a.barrier_height[1],
               **({"error": float(errors.get(n_pos, math.nan))} if errors else {}),
               "window / P3": a.window if math.isfinite(a.P3) else math.nan,
               "sharpness": a.sharpness if math.isfinite(a.P3) else math.nan}
        for version, P3_of in saddle_points.items():
            rec[f"P3 {version}"] = float(P3_of.get(n_pos, math.nan))
        records.append(rec)
    return pd.DataFrame.from_records(records).set_index("L")


@dataclass(frozen=True)
class BranchComparison:
    """Sampled posterior means against the plug-in marginal: see :func:`branch_comparison`.

    Attributes
    ----------
    rows : tuple
        One ``(P, quantity, basin, sampled mean, s.e., theory, z)`` per comparison.
    corr_blocks : tuple of arrays ``(n, n)``
        Per ``P``, the estimated correlation matrix of that size's z-scores.
    n_groups : tuple of int
        Per ``P``, the number of data sets with a jackknife replicate of every compared mean.
    theory_err : array ``(n_rows,)``
        ``|theory - theory_b| / s.e.`` of every comparison (the Sobol error against the sampling error).
    res_c_near : array ``(len(near),)``
        For the copy weight at the sizes ``near``: 3.5 error bars over the theory's value (%).
    res_theory_near : array ``(len(near),)``
        For the copy weight at the sizes ``near``: ``|theory - theory_b| / s.e.``.
    marginals : dict
        ``P -> (marginal, marginal_b)`` of the two sets of cumulants.
    """

    rows: tuple
    corr_blocks: tuple
    n_groups: tuple
    theory_err: np.ndarray
    res_c_near: np.ndarray
    res_theory_near: np.ndarray
    marginals: dict = field(repr=False)

    @property
    def z(self) -> np.ndarray:
        """The z-scores of all comparisons, in the order of ``rows``."""
        return np.array([row[-1] for row in self.rows])

    def frame(self) -> pd.DataFrame:
        """The comparisons as a table (one row each)."""
        return pd.DataFrame(list(self.rows), columns=["P", "quantity", "basin", "sampled", "s.e.", "theory", "z"])


def branch_comparison(draws: Mapping[int, tuple[npt.ArrayLike, npt.ArrayLike, npt.ArrayLike]], spec: ModelSpec,
                      cumulants: tuple[RowCumulants, RowCumulants], c_div: float, *, near: Iterable[float] = (),
                      min_mass: float = 0.05) -> BranchComparison:
    """Compare sampled posterior means with the plug-in marginal, over all draws and basin by basin.

    At every ``P`` of ``draws`` the means of the copy weight ``c``, of ``alpha_1`` and of the
    test loss (:func:`~copylib.theory.plugin_loss.row_stochastic_plugin_loss`) are compared over
    all draws and within each basin (``c < c_div``, ``c >= c_div``), and the copy-basin mass
    ``Pr(c >= c_div)`` where the theory puts between 2 % and 98 % of the mass there. A basin
    enters when the theory gives it at least ``min_mass`` (and not all but ``min_mass``) and at
    least two data sets visit it. The error of a sampled mean is the leave-one-data-set-out
    jackknife (:func:`~copylib.analysis.softmax.basin_mean`, the two chains of a data set as one group), combined with the
    theory's numerical error, the difference between two sets of cumulants: ``z = (sampled -
    theory) / hypot(s.e., theory - theory_b)``. The correlations of the z-scores of one ``P``
    are estimated from the jackknife replicates, their magnitudes shrunk by the noise bias
    ``(1 - r^2)^2 / (G - 1)`` of a correlation from ``G`` groups.

    Parameters
    ----------
    draws : mapping ``P -> (c, alpha_1, energy)``
        Each of shape ``(n_data, 2, n)`` (data set, chain, draw), as :func:`~copylib.analysis.softmax.sample_two_starts` returns.
    spec : ModelSpec
        Softmax, cyclic.
    cumulants : pair of RowCumulants
        Two independent sets (:func:`~copylib.theory.softmax_marginal.row_cumulants`).
    c_div : float in ``(0, 1)``
        The dividing copy weight between the basins.
    near : sequence of P
        Sizes whose copy-weight comparisons enter ``res_c_near`` and ``res_theory_near``.
    min_mass : float in ``(0, 0.5)``

    Returns
    -------
    BranchComparison
    """
    spec = check_spec(spec, kind="softmax", theory="branch_comparison")
    if not hasattr(draws, "items") or len(draws) == 0:
        raise TypeError(f"draws must be a non-empty mapping P -> (c, alpha_1, energy), got {type(draws).__name__}")
    if len(cumulants) != 2:
        raise ValueError(f"cumulants must be a pair of RowCumulants (two Sobol sets), got {len(cumulants)} items")
    c_div = _finite_scalar("c_div", c_div)
    if not 0 < c_div < 1:
        raise ValueError(f"c_div must lie in (0, 1), got {c_div}")
    min_mass = _finite_scalar("min_mass", min_mass)
    if not 0 < min_mass < 0.5:
        raise ValueError(f"min_mass must lie in (0, 0.5), got {min_mass}")
    near = {float(P) for P in near}
    L = spec.L
    basins = {"all": (-np.inf, np.inf), "pool": (-np.inf, c_div), "copy": (c_div, np.inf)}
    marginals = {P: tuple(plugin_marginal(float(P), spec, cu) for cu in cumulants) for P in draws}
    rows, corr_blocks, n_groups, theory_err, res_c, res_th = [], [], [], [], [], []
    for P, (c3, a13, _) in draws.items():
        c3, a13 = as_real_array("draws", c3), as_real_array("draws", a13)
        if c3.ndim != 3 or c3.shape != a13.shape or c3.shape[1] != 2:
            raise ValueError(f"draws[{P}] must hold arrays of shape (n_data, 2, n), got {c3.shape}, {a13.shape}")
        n_data = c3.shape[0]
        groups = np.repeat(np.arange(n_data), 2)  # chain -> data set
        c, a1 = c3.reshape(2 * n_data, -1), a13.reshape(2 * n_data, -1)
        values = {"c": c, "alpha_1": a1, "loss": row_stochastic_plugin_loss(a1, L * c, float(P), spec)}
        m, m_b = marginals[P]
        todo = []
        if 0.02 < m.mass(c_div) < 0.98:
            todo.append(("copy-basin mass", (c >= c_div).astype(float), "all", m.mass(c_div), m_b.mass(c_div)))
        for basin, (lo, hi) in basins.items():
            mass = m.mass(lo, hi)
            visits = np.bincount(groups, ((c >= lo) & (c < hi)).sum(1))
            if mass < min_mass or (basin != "all" and mass > 1 - min_mass) or (visits > 0).sum() < 2:
                continue  # little mass, the same as "all", or fewer than two data sets visit the basin
            for what, x in values.items():
                todo.append((what, x, basin, m.mean(what, lo, hi), m_b.mean(what, lo, hi)))
        reps, scale = [], []
        for what, x, basin, th, th_b in todo:
            mean, err, loo = basin_mean(x, c, *basins[basin], groups=groups, return_replicates=True)
            s_ = float(np.hypot(err, th - th_b))
            rows.append((P, what, basin, mean, err, th, (mean - th) / s_))
            if what == "c" and float(P) in near:
                res_c.append(100 * 3.5 * s_ / abs(th))
                res_th.append(abs(th - th_b) / err)
            theory_err.append(abs(th - th_b) / err)
            reps.append(loo)
            scale.append(s_)
        if not todo:
            continue
        reps, scale = np.array(reps), np.array(scale)
        ok = np.isfinite(reps).all(0)  # a data set holding every draw of a basin has no replicate
        G = int(ok.sum())
        dev = reps[:, ok] - reps[:, ok].mean(1, keepdims=True)
        cov = (G - 1) / G * dev @ dev.T  # jackknife covariance of the compared means
        r = cov / np.outer(scale, scale)
        np.fill_diagonal(r, 1.0)  # z has unit variance: se^2 + delta^2 over itself
        r = np.clip(r, -1, 1)
        r2 = np.clip(r**2 - (1 - r**2) ** 2 / (G - 1), 0, 1)  # remove the noise bias of Xi-hat^2
        np.fill_diagonal(r2, 1.0)
        corr_blocks.append(np.sign(r) * np.sqrt(r2))
        n_groups.append(G)
    return BranchComparison(rows=tuple(rows), corr_blocks=tuple(corr_blocks), n_groups=tuple(n_groups),
                            theory_err=np.array(theory_err), res_c_near=np.array(res_c),
                            res_theory_near=np.array(res_th), marginals=marginals)


def _finite_scalar(name: str, value) -> float:
    """``value`` as a finite float, else ``TypeError``/``ValueError`` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    return value


@dataclass(frozen=True)
class FiniteSizeSummary:
    """The finite-size rows of the plug-in marginal in arrays: see :func:`finite_size_summary`.

    Attributes
    ----------
    L : int array ``(n,)``
        The sizes with a first-order point (in Sobol set A), increasing.
    barrier, barrier_b : arrays ``(n, 2)``
        Barrier at ``P3`` above the pooling and the copy minimum (nats), Sobol sets A and B.
    barrier_err : array ``(n, 2)``
        Numerical error of ``barrier``: ``|A - B|`` plus the change under grid refinement
        (at a refined ``L``; elsewhere the largest change measured, ``grid_change``).
    window, sharpness, slope : arrays ``(n, 2)``
        Of sets A and B (:class:`~copylib.theory.softmax_marginal.FiniteSizeRow`).
    L_two, L_none : tuple of int
        The sizes where both sets find two minima, and where neither does.
    grid_change : float
        The largest change of a barrier under grid refinement (nats; ``0`` without refined rows).
    P3 : array ``(n,)``
        The first-order point of set A at each ``L``.
    """

    L: np.ndarray
    barrier: np.ndarray
    barrier_b: np.ndarray
    barrier_err: np.ndarray
    window: np.ndarray
    sharpness: np.ndarray
    slope: np.ndarray
    L_two: tuple
    L_none: tuple
    grid_change: float
    P3: np.ndarray


def finite_size_summary(rows: Mapping[int, tuple[FiniteSizeRow, FiniteSizeRow]],
                        refined: Mapping[int, FiniteSizeRow] | None = None) -> FiniteSizeSummary:
    """Collect the finite-size rows of two Sobol sets into arrays, with the barriers' numerical errors.

    Parameters
    ----------
    rows : mapping ``L -> (FiniteSizeRow, FiniteSizeRow)``
        Sobol sets A and B per ``L``.
    refined : mapping ``L -> FiniteSizeRow``, optional
        Set A recomputed on a refined tilt grid at some ``L``: the change of its barriers is
        the grid error there, and the largest such change stands for it at the other ``L``.
        A size without a first-order point on either grid adds nothing (it has no barrier);
        one where refining the grid makes or removes the first-order point raises ``ValueError``.

    Returns
    -------
    FiniteSizeSummary
    """
    if not hasattr(rows, "items") or len(rows) == 0:
        raise TypeError(f"rows must be a non-empty mapping L -> (FiniteSizeRow, FiniteSizeRow), got {rows!r}")
    for n_pos, pair in rows.items():
        if len(pair) != 2 or not all(isinstance(r, FiniteSizeRow) for r in pair):
            raise TypeError(f"rows must map L to two FiniteSizeRow (Sobol sets A, B); got {pair!r} at L = {n_pos}")
    refined = {} if refined is None else refined
    if not hasattr(refined, "items") or not all(isinstance(r, FiniteSizeRow) and n in rows for n, r in refined.items()):
        raise TypeError("refined must map some L of rows to a FiniteSizeRow")
    sizes = sorted(rows)
    L_jump = np.array([n for n in sizes if math.isfinite(rows[n][0].P3)], dtype=int)

    def per_set(attr):
        return np.array([[getattr(rows[n][k], attr) for k in (0, 1)] for n in L_jump], dtype=float).reshape(-1, 2)

    bar = np.array([rows[n][0].barrier_height for n in L_jump], dtype=float).reshape(-1, 2)
    bar_b = np.array([rows[n][1].barrier_height for n in L_jump], dtype=float).reshape(-1, 2)
    change = {}
    for n, r in refined.items():
        default = rows[n][0]
        if math.isfinite(r.P3) != math.isfinite(default.P3):
            raise ValueError(f"refined: the refined tilt grid changes whether L = {n} has a first-order point "
                             f"(P3 {default.P3} on the default grid, {r.P3} on the refined one)")
        if math.isfinite(r.P3):  # without a first-order point there is no barrier whose error to measure
            change[n] = np.abs(np.array(r.barrier_height) - np.array(default.barrier_height))
    grid = float(max((float(np.max(x)) for x in change.values()), default=0.0))
    err = np.abs(bar - bar_b) + np.array([change.get(n, [grid, grid]) for n in L_jump], dtype=float).reshape(-1, 2)
    return FiniteSizeSummary(
        L=L_jump, barrier=bar, barrier_b=bar_b, barrier_err=err, window=per_set("window"),
        sharpness=per_set("sharpness"), slope=per_set("slope"),
        L_two=tuple(n for n in sizes if rows[n][0].two_minima and rows[n][1].two_minima),
        L_none=tuple(n for n in sizes if not (rows[n][0].two_minima or rows[n][1].two_minima)),
        grid_change=grid, P3=np.array([rows[n][0].P3 for n in L_jump], dtype=float))


@dataclass(frozen=True)
class ChainConvergence:
    """Convergence of chains run two per data set: see :func:`chain_convergence`.

    Attributes
    ----------
    table : DataFrame ``(n_rows, columns)``
        One row per ``(P, observable)``: ``R-hat`` (within data sets, pooled), ``worst data set``,
        ``ESS bulk``, ``ESS tail`` (summed over data sets), ``drift z`` and, for ``c``, the fewest
        crossings of the dividing copy weight by one chain.
    rhat, rhat_worst, ess_bulk, ess_tail, drift_z : arrays ``(n_rows,)``
        The columns of ``table``, in its order.
    crossings : dict
        ``P -> (2 n_data,)`` crossings of the dividing copy weight by each chain, over its kept draws.
    steps_per_ess : dict
        ``P -> `` MALA steps per effective draw of ``c`` (steps x chains / summed bulk ESS).
    rhat_max, rhat_data_max, ess_min, drift_max : float
        The largest pooled R-hat, the largest R-hat of one data set, the smallest bulk or tail
        ESS, the largest ``|drift z|``, over all rows.
    cross_min : int
        The fewest crossings of one chain at the sizes ``mid``.
    tau_mid, tau_edge : float
        The most MALA steps per effective draw of ``c`` at the sizes ``mid`` and at the others
        (``nan`` without such sizes).
    ess_chain_mid : float
        The fewest effective draws of ``c`` per chain at the sizes ``mid`` (summed bulk ESS / chains).
    sigma_c : float
        The spread of ``c`` within one data set (both chains pooled), averaged in variance over
        the data sets and the sizes ``mid``.
    rhat_flags : float
        The hysteresis ``d`` shared by all data sets that alone lifts the pooled R-hat to
        ``rhat_bound``: ``sqrt(3 (rhat_bound^2 - 1)) sigma_c``.
    """

    table: pd.DataFrame = field(repr=False)
    rhat: np.ndarray
    rhat_worst: np.ndarray
    ess_bulk: np.ndarray
    ess_tail: np.ndarray
    drift_z: np.ndarray
    crossings: dict = field(repr=False)
    steps_per_ess: dict
    rhat_max: float
    rhat_data_max: float
    ess_min: float
    drift_max: float
    cross_min: int
    tau_mid: float
    tau_edge: float
    ess_chain_mid: float
    sigma_c: float
    rhat_flags: float


def chain_convergence(draws: Mapping[int, tuple[npt.ArrayLike, npt.ArrayLike, npt.ArrayLike]], c_div: float,
                      n_steps: Mapping[int, int], mid: Iterable[int] = (), *, rhat_bound: float = 1.1
                      ) -> ChainConvergence:
    """R-hat within data sets, ESS, half-chain drift and basin crossings of chains run two per data set.

    For the copy weight ``c`` and the action ``S`` at every ``P`` of ``draws``: R-hat of the two chains
    of each data set split into halves, pooled over the data sets
    (:func:`~copylib.inference.diagnostics.grouped_rhat`) and for the worst single data set; bulk and
    tail ESS (:func:`~copylib.inference.diagnostics.chain_diagnostics`) summed over the data sets (the
    effective size of a data-set average); the half-chain drift z of all chains together. For ``c``
    also the number of times each chain crosses ``c_div`` between consecutive kept draws.

    Parameters
    ----------
    draws : mapping ``P -> (c, alpha_1, S)``
        Each of shape ``(n_data, 2, n)`` (data set, chain, draw), ``n_data >= 1``, as
        :func:`~copylib.analysis.softmax.sample_two_starts` returns.
    c_div : float in ``(0, 1)``
        The dividing copy weight between the basins.
    n_steps : mapping ``P -> int``
        MALA steps of each chain at ``P`` (for ``steps_per_ess``).
    mid : sequence of P
        The sizes near the transition, a non-empty subset of ``draws``.
    rhat_bound : float > 1

    Returns
    -------
    ChainConvergence
    """
    if not hasattr(draws, "items") or len(draws) == 0:
        raise TypeError(f"draws must be a non-empty mapping P -> (c, alpha_1, S), got {type(draws).__name__}")
    c_div = _finite_scalar("c_div", c_div)
    if not 0 < c_div < 1:
        raise ValueError(f"c_div must lie in (0, 1), got {c_div}")
    if not hasattr(n_steps, "keys") or set(n_steps) != set(draws):
        raise ValueError("n_steps must map every P of draws to its number of MALA steps")
    n_steps = {P: check_int("n_steps", n, 1) for P, n in n_steps.items()}
    mid = list(mid)
    if not mid or not set(mid) <= set(draws):
        raise ValueError(f"mid must be a non-empty subset of the P of draws, got {mid!r}")
    rhat_bound = _finite_scalar("rhat_bound", rhat_bound)
    if not rhat_bound > 1:
        raise ValueError(f"rhat_bound must be > 1, got {rhat_bound}")
    rows, crossings, steps_per_ess, var_mid = [], {}, {}, []
    for P, (c, _, S) in draws.items():
        c, S = as_real_array("draws", c), as_real_array("draws", S)
        if c.ndim != 3 or c.shape != S.shape or c.shape[1] != 2 or c.shape[2] < 4:
            raise ValueError(f"draws[{P}] must hold arrays of shape (n_data, 2, n >= 4), got {c.shape}, {S.shape}")
        n_data = c.shape[0]
        for name, x in (("c", c), ("S", S)):
            per_data = [chain_diagnostics(x[d]) for d in range(n_data)]
            rows.append((P, name, grouped_rhat(x), max(grouped_rhat(x[d:d + 1]) for d in range(n_data)),
                         sum(float(g.ess_bulk) for g in per_data), sum(float(g.ess_tail) for g in per_data),
                         float(chain_diagnostics(x.reshape(2 * n_data, -1)).drift_z)))
        crossings[P] = np.abs(np.diff((c.reshape(2 * n_data, -1) >= c_div).astype(int), axis=1)).sum(1)
        steps_per_ess[P] = n_steps[P] * 2 * n_data / rows[-2][4]
        if P in mid:
            var_mid.extend(c[d].var() for d in range(n_data))
    table = pd.DataFrame(rows, columns=["P", "observable", "R-hat", "worst data set", "ESS bulk", "ESS tail",
                                        "drift z"])
    table["crossings of c* (fewest)"] = [int(crossings[P].min()) if o == "c" else None
                                        for P, o in zip(table.P, table.observable)]
    arr = np.array([r[2:] for r in rows])
    sigma_c = float(np.sqrt(np.mean(var_mid)))
    edge = [steps_per_ess[P] for P in draws if P not in mid]
    return ChainConvergence(
        table=table, rhat=arr[:, 0], rhat_worst=arr[:, 1], ess_bulk=arr[:, 2], ess_tail=arr[:, 3], drift_z=arr[:, 4],
        crossings=crossings, steps_per_ess=steps_per_ess, rhat_max=float(arr[:, 0].max()),
        rhat_data_max=float(arr[:, 1].max()), ess_min=float(min(arr[:, 2].min(), arr[:, 3].min())),
        drift_max=float(arr[:, 4].max()), cross_min=int(min(crossings[P].min() for P in mid)),
        tau_mid=float(max(steps_per_ess[P] for P in mid)), tau_edge=float(max(edge)) if edge else math.nan,
        ess_chain_mid=float(min(n_steps[P] / steps_per_ess[P] for P in mid)), sigma_c=sigma_c,
        rhat_flags=float(np.sqrt(3 * (rhat_bound**2 - 1)) * sigma_c))


@dataclass(frozen=True)
class PluginEvidenceError:
    """The plug-in action's error on differences of the exact evidence: see :func:`plugin_evidence_error`.

    Attributes
    ----------
    states : tuple of str
        The compared states, in the order of the arrays.
    P, n_data : int
        The sample size and the number of data sets.
    exact, exact_se, spread : arrays ``(n_states,)``
        The exact evidence difference (state minus reference) averaged over the data sets, its
        standard error, and its standard deviation over the data sets (nats).
    plugin : array ``(n_states,)``
        The same difference of the plug-in action (nats).
    bias : array ``(n_states,)``
        ``exact - plugin``: the plug-in error.
    bound : float
        The largest ``|bias| + 2 exact_se``: what the data sets allow the plug-in error to be (nats).
    """

    states: tuple
    P: int
    n_data: int
    exact: np.ndarray
    exact_se: np.ndarray
    spread: np.ndarray
    plugin: np.ndarray
    bias: np.ndarray
    bound: float

    def frame(self) -> pd.DataFrame:
        """The comparison as a table, one row per state (nats)."""
        return pd.DataFrame({"exact": self.exact, "s.e.": self.exact_se, "spread over data sets": self.spread,
                             "plug-in": self.plugin, "plug-in error": self.bias},
                            index=pd.Index(self.states, name=f"minus reference, P = {self.P}"))


def plugin_evidence_error(spec: ModelSpec, P: int, c_ref: float, states: Mapping[str, float], n_data: int,
                          rng: np.random.Generator) -> PluginEvidenceError:
    """Compare the plug-in action with the exact evidence on differences between uniform-copy states.

    ``n_data`` data sets of ``P`` sequences are drawn with ``rng``
    (:func:`~copylib.model.task.copy_task`, one after the other); for each state (a copy weight
    ``c``, attention :func:`~copylib.analysis.softmax.uniform_copy_attention`) the exact
    ``-ln p(Y | A)`` (:func:`~copylib.posterior.evidence.negative_log_evidence`, readout
    integrated out) minus that of the reference state ``c_ref`` is averaged over the data sets and
    set against the same difference of the plug-in action
    (:func:`~copylib.posterior.order_parameters.plugin_action_of_attention`).

    Parameters
    ----------
    spec : ModelSpec
        Softmax.
    P : int >= 1
    c_ref : float in ``(0, 1)``
        The reference copy weight.
    states : mapping ``name -> c``
        The compared states, each ``c`` in ``(0, 1)``; at least one.
    n_data : int >= 2
    rng : numpy.random.Generator

    Returns
    -------
    PluginEvidenceError
    """
    spec = check_spec(spec, kind="softmax", theory="plugin_evidence_error")
    P = check_int("P", P, 1)
    n_data = check_int("n_data", n_data, 2)
    check_generator("rng", rng)
    if not hasattr(states, "items") or len(states) == 0:
        raise TypeError(f"states must be a non-empty mapping name -> copy weight, got {states!r}")
    for name, c in (("c_ref", c_ref), *(("states", c) for c in states.values())):
        if not 0 < _finite_scalar(name, c) < 1:
            raise ValueError(f"{name}: a copy weight must lie in (0, 1), got {c}")
    L, V = spec.L, spec.V
    A_ref = uniform_copy_attention(c_ref, L)
    A_states = [uniform_copy_attention(c, L) for c in states.values()]
    C = np.stack([cooccurrence(copy_task(P, L, V, rng)[0]) for _ in range(n_data)])
    ev_ref = np.asarray(negative_log_evidence(A_ref, C, spec))
    plug_ref = plugin_action_of_attention(A_ref, P, spec)
    exact, se, spread, plugin = [], [], [], []
    for A in A_states:
        d_exact = np.asarray(negative_log_evidence(A, C, spec)) - ev_ref
        exact.append(d_exact.mean())
        se.append(d_exact.std(ddof=1) / np.sqrt(n_data))
        spread.append(d_exact.std(ddof=1))
        plugin.append(plugin_action_of_attention(A, P, spec) - plug_ref)
    exact, se, spread, plugin = (np.array(v, dtype=float) for v in (exact, se, spread, plugin))
    bias = exact - plugin
    return PluginEvidenceError(states=tuple(states), P=P, n_data=n_data, exact=exact, exact_se=se, spread=spread,
                               plugin=plugin, bias=bias, bound=float((np.abs(bias) + 2 * se).max()))


def finite_size_figure(summary: FiniteSizeSummary, saddle_points: Mapping[str, Mapping[int, float]],
                       weak: tuple[int, float] | None = None) -> Figure:
    """Three panels against ``L``: the barriers at ``P3``, the coexistence window over ``P3``, and ``P3``.

    Parameters
    ----------
    summary : FiniteSizeSummary
        From :func:`finite_size_summary`: barriers with their errors (left), the windows of both Sobol
        sets (middle), set A's ``P3`` (right, log-log).
    saddle_points : mapping ``version -> (mapping L -> P3)``
        Saddle-point versions drawn as dashed lines on the right panel (at most two; colours C0, C1),
        at the sizes of the first one, every other size labelled on the axis.
    weak : pair ``(L, depth)``, optional
        A size without ``P3`` whose double-minimum depth is marked on the left panel.

    Returns
    -------
    matplotlib.figure.Figure
    """
    check_instance("summary", summary, FiniteSizeSummary)
    if not hasattr(saddle_points, "items") or not 1 <= len(saddle_points) <= 2:
        raise TypeError(f"saddle_points must map one or two versions to mappings L -> P3, got {saddle_points!r}")
    L_jump, bar, err, win = summary.L, summary.barrier, summary.barrier_err, summary.window
    fig, axes = three_panels(7.2, 6.2)
    axes[0].errorbar(L_jump, bar[:, 0], yerr=err[:, 0], fmt="o-", color="C0", label="above pooling")
    axes[0].errorbar(L_jump, bar[:, 1], yerr=err[:, 1], fmt="s--", color="C1", label="above copying")
    if weak is not None:
        axes[0].plot([weak[0]], [weak[1]], "kv", label=f"$L = {weak[0]}$: depth")
    axes[0].set(yscale="log", ylabel="barrier at $P_3$ (nats)")
    axes[1].plot(L_jump, win[:, 0], "o-", color="C0", label="Sobol set A")
    axes[1].plot(L_jump, win[:, 1], "x", color="C3", label="Sobol set B")
    axes[1].set_ylabel(r"coexistence window / $P_3$")
    axes[2].plot(L_jump, summary.P3, "ko-", label="plug-in")
    sizes = list(next(iter(saddle_points.values())))
    for (v, P3_of), color in zip(saddle_points.items(), ("C0", "C1")):
        axes[2].plot(sizes, [P3_of[n] for n in sizes], "--", color=color, label=v.replace("_", " "))
    axes[2].set(xscale="log", yscale="log", ylabel="$P_3$")
    axes[2].set_xticks(sizes[::2], [str(n) for n in sizes[::2]])
    axes[2].yaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))  # P3 spans less than a decade: ticks at 1-2-5
    axes[2].yaxis.set_major_formatter(plt.FuncFormatter(lambda y, _: f"{y:g}"))
    for ax in axes:
        ax.minorticks_off()
        ax.set_xlabel("sequence length $L$")
        ax.legend(fontsize=8, loc="best")
    return fig
