"""Evidence of the linear-attention chapter: error bars, z tables and their calibration, MCMC diagnostics.

* :func:`diagnostics_per_group`, ``_diagnostics_table``, ``_diagnostics_arrays``: the
  per-``P`` MCMC diagnostics of ``m^2``, ``q sign m`` and the energy, as a table and as arrays.
* :func:`z_scores`: sampled summaries against a theory's moments, in standard errors.
* ``_excess_z``: a difference beyond a relative model-error allowance, in standard errors.
* :func:`z_correlation`: the correlation matrix of a table of z's, estimated from the data-set-level values.
* :func:`plugin_z_test`: the sampled moments against the plug-in posterior integral, with a model-error
  allowance at small ``P`` and the calibration of the z's against a null that includes their correlations.
* :func:`diagnostics_frame`, :func:`diagnostics_summary`: the per-``P`` diagnostics as a table, and
  their worst values over the sample sizes where the chains are claimed mixed.
* :func:`combined_excess`: the z's of ``sqrt(E m^2)`` below ``P_split`` of several :func:`plugin_z_test`
  results, combined (Stouffer).
* :func:`family_false_alarm`: the chance of ``|t| > 4`` per comparison and for a family of them.
* :func:`moments_table`, :func:`z_test_table`: the sampled moments against the theories, as tables.

The MCMC diagnostics themselves (R-hat, ESS, half-chain drift) are in
:mod:`copylib.inference.diagnostics`; the sampled summaries these functions take are
:class:`copylib.analysis.linear.GroupSummary`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy import stats

from ..arguments import as_real_array, check_finite, check_instance, check_int, check_positive
from ..inference.diagnostics import DatasetDiagnostics, ZCalibration, dataset_chain_diagnostics, studentized_z_null
from .linear import GroupSummary

if TYPE_CHECKING:
    from ..theory.linear_marginal import IntegratedMoments, PluginMoments

__all__ = [
    "DiagnosticsSummary",
    "PluginZTest",
    "diagnostics_frame",
    "diagnostics_per_group",
    "diagnostics_summary",
    "plugin_z_test",
    "z_correlation",
    "z_scores",
    "CombinedExcess",
    "combined_excess",
    "FalseAlarm",
    "family_false_alarm",
    "moments_table",
    "z_test_table"]


def diagnostics_per_group(m: npt.ArrayLike, q: npt.ArrayLike, energy: npt.ArrayLike) -> list[DatasetDiagnostics]:
    """:func:`~copylib.inference.diagnostics.dataset_chain_diagnostics` of the sign-invariant
    observables ``(m^2, q sign m, energy)``, one entry per group.

    m, q, energy : arrays ``(group, data set, chain, draw)`` (see :func:`~copylib.analysis.linear.by_chain`).
    """
    m, q, energy = (np.asarray(a, dtype=float) for a in (m, q, energy))
    if m.ndim != 4 or q.shape != m.shape or energy.shape != m.shape:
        raise ValueError(f"m, q and energy must share one shape (group, data set, chain, draw), got "
                         f"{m.shape}, {q.shape}, {energy.shape}")
    return [dataset_chain_diagnostics(np.stack([m[i] ** 2, q[i] * np.sign(m[i]), energy[i]], -1))
            for i in range(m.shape[0])]


def _diagnostics_table(rows: Sequence[DatasetDiagnostics], P_values: Sequence[float] | np.ndarray, label: str) -> str:
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


def _diagnostics_arrays(rows: Sequence[DatasetDiagnostics]) -> dict:
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


def z_scores(summary: GroupSummary, moments: Sequence[PluginMoments | IntegratedMoments]
             ) -> tuple[np.ndarray, np.ndarray]:
    """``(z_m, z_q)``: the sampled ``sqrt(E m^2)`` and ``E[q sign m]`` of ``summary`` minus a
    theory's (a sequence of objects with ``rms_m`` and ``q``, one per group), in standard errors."""
    if len(moments) != len(summary.rms_m):
        raise ValueError(f"moments must have one entry per group ({len(summary.rms_m)}), got {len(moments)}")
    t_m = np.array([t.rms_m for t in moments])
    t_q = np.array([t.q for t in moments])
    return (summary.rms_m - t_m) / summary.rms_m_se, (summary.q - t_q) / summary.q_se


def _excess_z(sampled: npt.ArrayLike, se: npt.ArrayLike, theory: npt.ArrayLike, allowance: float) -> np.ndarray:
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


def z_correlation(summary: GroupSummary, exact_m: npt.ArrayLike) -> np.ndarray:
    """The correlation matrix of the z's ``z_m[exact_m]`` then every ``z_q`` (the order of
    ``PluginZTest.z_exact``), estimated from the data-set-level values of ``summary``.

    Within one group (one ``P``) the z's of ``sqrt(E m^2)`` and ``E[q sign m]`` come from the same
    data sets and chains, so they are correlated like the data sets' means of ``m^2`` and
    ``q sign m`` (``z_m`` is linear in the mean of ``m^2`` to first order). Different groups have
    independent data sets and chains: zero. The sample correlation ``r`` of ``n_sets`` values is
    noisy, ``E r^2 ~ rho^2 + (1 - rho^2)^2 / (n_sets - 1)``; that bias of ``r^2`` is removed (the
    law of ``mean(z^2)`` depends on ``rho^2``), keeping the sign of ``r``.

    summary : GroupSummary; exact_m : bool ``(n_groups,)``, the groups whose ``z_m`` is in the table.
    Returns an ``(n, n)`` array, ``n = exact_m.sum() + n_groups``.
    """
    check_instance("summary", summary, GroupSummary)
    exact_m = np.asarray(exact_m)
    G = summary.m2_sets.shape[0]
    if exact_m.dtype != bool or exact_m.shape != (G,):
        raise ValueError(f"exact_m must be a boolean array of shape ({G},), one per group, got {exact_m!r}")
    n_sets = summary.n_sets
    with np.errstate(divide="ignore", invalid="ignore"):
        dm = summary.m2_sets - summary.m2_sets.mean(1, keepdims=True)
        dq = summary.q_sets - summary.q_sets.mean(1, keepdims=True)
        r = (dm * dq).sum(1) / np.sqrt((dm * dm).sum(1) * (dq * dq).sum(1))
    r = np.clip(np.nan_to_num(r), -1, 1)  # a constant observable is uncorrelated with the other
    r = np.sign(r) * np.sqrt(np.clip(r**2 - (1 - r**2) ** 2 / (n_sets - 1), 0, 1))
    i_m = np.flatnonzero(exact_m)
    n = i_m.size + G
    corr = np.eye(n)
    corr[np.arange(i_m.size), i_m.size + i_m] = corr[i_m.size + i_m, np.arange(i_m.size)] = r[i_m]
    return corr


_OBSERVABLES = ("m²", "q sgn m", "energy")


@dataclass(frozen=True)
class PluginZTest:
    """:func:`plugin_z_test` result.

    small : bool ``(n_P,)``, the sample sizes below ``P_split`` (where ``sqrt(E m^2)`` gets the
    allowance); z_m, z_q : ``(n_P,)`` z-scores of ``sqrt(E m^2)`` and ``E[q sign m]``; z_exact : the
    z's without allowance, ``z_m`` at ``P >= P_split`` then every ``z_q``; rel_small : sampled /
    theory - 1 of ``sqrt(E m^2)`` below ``P_split``; excess : the difference there beyond the
    allowance, in standard errors (``_excess_z``); corr : the estimated correlation matrix of
    ``z_exact`` (:func:`z_correlation`); calibration : ``mean(z_exact^2)`` against its simulated law
    for Student-t z's with that correlation (:func:`copylib.inference.diagnostics.studentized_z_null`).
    """

    small: np.ndarray
    z_m: np.ndarray
    z_q: np.ndarray
    z_exact: np.ndarray
    rel_small: np.ndarray
    excess: np.ndarray
    corr: np.ndarray
    calibration: ZCalibration

    @property
    def corr_mq(self) -> np.ndarray:
        """The correlation of ``z_m`` and ``z_q`` at each ``P >= P_split`` (one per ``z_m`` in ``z_exact``):
        the entries of ``corr`` that the null of ``mean(z^2)`` takes from the data sets."""
        groups = np.flatnonzero(~self.small)
        return self.corr[np.arange(groups.size), groups.size + groups]


def plugin_z_test(summary: GroupSummary, moments: Sequence[PluginMoments | IntegratedMoments],
                  P_values: npt.ArrayLike, rng: np.random.Generator, *,
                  allowance: float = 0.03, P_split: float = 100.0, n_sim: int = 20_000) -> PluginZTest:
    """The sampled moments of ``summary`` against a theory's ``moments``, as the chapter tests them.

    Parameters
    ----------
    summary : GroupSummary
        Sampled moments, one group per entry of ``P_values``.
    moments : sequence
        The theory's moments (objects with ``rms_m`` and ``q``), one per group.
    P_values : sequence of float
        The sample sizes of the groups (finite, > 0).
    rng : numpy.random.Generator
        Source of the simulated law of ``mean(z^2)``.
    allowance : float
        Relative model-error allowance of ``sqrt(E m^2)`` below ``P_split`` (``>= 0``).
    P_split : float
        Sample size from which no allowance is made (``> 0``).
    n_sim : int
        Simulated tables of the law of ``mean(z^2)`` (``>= 100``).

    Each error is the spread of ``summary.n_sets`` (``>= 4``) data-set-level values, so a z is
    Student-t with ``n_sets - 1`` degrees of freedom; the law of ``mean(z^2)`` is simulated with
    the correlations of :func:`z_correlation` (:func:`~copylib.inference.diagnostics.studentized_z_null`).

    Returns
    -------
    PluginZTest
    """
    check_instance("summary", summary, GroupSummary)
    P = as_real_array("P_values", P_values)
    if P.ndim != 1 or P.size != summary.rms_m.size or not np.all(np.isfinite(P) & (P > 0)):
        raise ValueError(f"P_values must be {summary.rms_m.size} finite values > 0, one per group, got {P_values!r}")
    if summary.n_sets < 4:
        raise ValueError(f"summary must have at least 4 data sets per group (E z^2 is finite from four on), "
                         f"got {summary.n_sets}")
    allowance = check_positive("allowance", allowance, allow_zero=True)
    P_split = check_positive("P_split", P_split)
    z_m, z_q = z_scores(summary, moments)
    small = P < P_split
    z_exact = np.concatenate([z_m[~small], z_q])
    theory_m = np.array([t.rms_m for t in moments], dtype=float)[small]
    rel_small = summary.rms_m[small] / theory_m - 1
    excess = _excess_z(summary.rms_m[small], summary.rms_m_se[small], theory_m, allowance)
    corr = z_correlation(summary, ~small)
    # one block: the z's of different P are uncorrelated in corr, so their simulated groups are independent
    calibration = studentized_z_null([corr], summary.n_sets, rng, n_sim=n_sim).calibration(z_exact)
    return PluginZTest(small=small, z_m=z_m, z_q=z_q, z_exact=z_exact, rel_small=rel_small, excess=excess,
                       corr=corr, calibration=calibration)


def diagnostics_frame(rows: Sequence[DatasetDiagnostics], P_values: Sequence[float] | np.ndarray) -> pd.DataFrame:
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
        One row per ``(P, observable)`` (``m²``, ``q sgn m``, the energy; six columns, so that the table
        fits a page): the worst and the median R-hat over the data sets, ``1 + 1/ESS`` of one chain
        (where split R-hat sits for stationary chains), bulk and tail ESS summed over the data sets
        (whole draws) and the half-chain drift z.
    """
    arrays = _diagnostics_arrays(rows)
    if len(P_values) != len(rows):
        raise ValueError(f"rows and P_values must have the same length, got {len(rows)} and {len(P_values)}")
    columns = {"R-hat (worst)": arrays["rhat"], "R-hat (median)": arrays["median_rhat"],
               "1 + 1/ESS per chain": 1 + 1 / arrays["ess_per_chain"], "bulk ESS": arrays["ess_bulk"],
               "tail ESS": arrays["ess_tail"], "drift z": arrays["drift_z"]}
    index = pd.MultiIndex.from_product([[int(p) for p in P_values], list(_OBSERVABLES)], names=["P", "observable"])
    frame = pd.DataFrame({stat: a.ravel() for stat, a in columns.items()}, index=index)
    return frame.round({"bulk ESS": 0, "tail ESS": 0}).astype({"bulk ESS": "Int64", "tail ESS": "Int64"})


@dataclass(frozen=True)
class DiagnosticsSummary:
    """:func:`diagnostics_summary` result.

    P : ``(n_P,)`` sample sizes; mixed : bool ``(n_P,)``, where the chains are claimed mixed;
    rhat, ess_bulk, ess_tail, drift_z, ess_per_chain : ``(n_P, 3)`` arrays for ``(m^2, q sign m,
    energy)`` as ``_diagnostics_arrays`` returns them; worst : the numbers the chapter quotes,
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


def diagnostics_summary(rows: Sequence[DatasetDiagnostics], P_values: npt.ArrayLike, mixed_P: npt.ArrayLike
                        ) -> DiagnosticsSummary:
    """The diagnostics of :func:`diagnostics_per_group` rows and their worst values.

    Parameters
    ----------
    rows, P_values :
        As in :func:`diagnostics_frame`.
    mixed_P : sequence of float
        The sample sizes (a non-empty subset of ``P_values``) where the chains are claimed mixed.

    Returns
    -------
    DiagnosticsSummary
    """
    d = _diagnostics_arrays(rows)
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
class CombinedExcess:
    """:func:`combined_excess` result.

    z, rel : the z's and relative differences (sampled / theory - 1) of ``sqrt(E m^2)`` below
    ``P_split``, concatenated over the tests; n, n_pos : their number and how many are positive;
    z_combined : Stouffer's ``sum(z) / sqrt(n)``; rel_mean, rel_min, rel_max : of ``rel``.
    """

    z: np.ndarray
    rel: np.ndarray
    n: int
    n_pos: int
    z_combined: float
    rel_mean: float
    rel_min: float
    rel_max: float


def combined_excess(tests: Iterable[PluginZTest]) -> CombinedExcess:
    """Combine the small-``P`` z's of ``sqrt(E m^2)`` of several :func:`plugin_z_test` results.

    Parameters
    ----------
    tests : sequence of PluginZTest
        At least one, with at least one sample size below its ``P_split`` in total.

    Returns
    -------
    CombinedExcess
    """
    tests = list(tests)
    if not tests or not all(isinstance(t, PluginZTest) for t in tests):
        raise TypeError("tests must be a non-empty sequence of PluginZTest")
    z = np.concatenate([t.z_m[t.small] for t in tests])
    rel = np.concatenate([t.rel_small for t in tests])
    if z.size == 0:
        raise ValueError("tests must have at least one sample size below P_split")
    return CombinedExcess(z=z, rel=rel, n=int(z.size), n_pos=int((z > 0).sum()), z_combined=float(z.sum() / np.sqrt(z.size)),
                          rel_mean=float(rel.mean()), rel_min=float(rel.min()), rel_max=float(rel.max()))


@dataclass(frozen=True)
class FalseAlarm:
    """:func:`family_false_alarm` result: ``per_test``, ``P(|t| > threshold)`` for Student-t with
    ``df`` degrees of freedom; ``family``, the union bound ``min(1, n_tests * per_test)``."""

    df: int
    per_test: float
    family: float


def family_false_alarm(n_sets: int, n_tests: int, *, threshold: float = 4.0) -> FalseAlarm:
    """The false-alarm chance of ``|z| > threshold`` when each error is estimated from ``n_sets`` data sets.

    Parameters
    ----------
    n_sets : int
        Data sets behind each error (``>= 2``): Student-t with ``n_sets - 1`` degrees of freedom.
    n_tests : int
        Comparisons in the family (``>= 1``).
    threshold : float
        The test's bound on ``|z|`` (``> 0``).

    Returns
    -------
    FalseAlarm
    """
    n_sets = check_int("n_sets", n_sets, 2)
    n_tests = check_int("n_tests", n_tests, 1)
    threshold = check_positive("threshold", threshold)
    p = 2 * stats.t.sf(threshold, df=n_sets - 1)
    return FalseAlarm(df=n_sets - 1, per_test=float(p), family=float(min(1.0, n_tests * p)))


def _P_index(P_values, summary) -> pd.Index:
    """The rows of a table of ``summary``: its sample sizes, one per group (both arguments checked)."""
    check_instance("summary", summary, GroupSummary)
    n = summary.rms_m.size
    P = as_real_array("P_values", P_values)
    if P.ndim != 1 or P.size != n:
        raise ValueError(f"P_values must be 1-d with one value per group ({n}), got {P_values!r}")
    return pd.Index(list(P_values), name="P")


def moments_table(P_values: npt.ArrayLike, summary: GroupSummary, theories: dict, minima: dict) -> pd.DataFrame:
    """The sampled ``sqrt(E m^2)`` and ``E[q sign m]`` next to the theories' and the minima's, one row per ``P``.

    Parameters
    ----------
    P_values : sequence of float
        The sample sizes, one per group of ``summary``.
    summary : GroupSummary
        The sampled moments.
    theories : dict
        ``{"plug-in": moments, "fluct": ..., "mean_field": ...}``: one sequence of objects with ``rms_m``
        and ``q`` each (the plug-in integral's ``q`` is shown too).
    minima : dict
        ``{"fluct": ..., "mean_field": ...}``: sequences of :class:`~copylib.theory.results.Minimum`
        (:func:`copylib.theory.linear.global_minimum`), read for their coordinate ``m``.

    Returns
    -------
    pandas.DataFrame
    """
    index = _P_index(P_values, summary)
    need = ("plug-in", "fluct", "mean_field")
    if not isinstance(theories, dict) or any(len(theories.get(k, ())) != index.size for k in need):
        raise ValueError(f"theories must map {need} to one entry per P ({index.size})")
    if not isinstance(minima, dict) or any(len(minima.get(k, ())) != index.size for k in need[1:]):
        raise ValueError(f"minima must map {need[1:]} to one entry per P ({index.size})")
    plugin = theories["plug-in"]
    return pd.DataFrame({"sampled √E m²": summary.rms_m, "s.e.": summary.rms_m_se,
                         "plug-in": [t.rms_m for t in plugin], "fluct integral": [t.rms_m for t in theories["fluct"]],
                         "mean-field integral": [t.rms_m for t in theories["mean_field"]],
                         "fluct m*": [s.coordinates["m"] for s in minima["fluct"]],
                         "mean-field m*": [s.coordinates["m"] for s in minima["mean_field"]],
                         "sampled E[q sgn m]": summary.q, "s.e. (q)": summary.q_se,
                         "plug-in (q)": [t.q for t in plugin]}, index=index)


def z_test_table(P_values: npt.ArrayLike, summary: GroupSummary, moments: Sequence[PluginMoments | IntegratedMoments],
                 test: PluginZTest) -> pd.DataFrame:
    """The sampled moments, the plug-in integral's and the z's of :func:`plugin_z_test`, one row per ``P``.

    Parameters
    ----------
    P_values, summary :
        As in :func:`moments_table`.
    moments : sequence
        The theory's moments (objects with ``rms_m`` and ``q``), one per group.
    test : PluginZTest
        The z test of ``summary`` against ``moments``.

    Returns
    -------
    pandas.DataFrame
    """
    index = _P_index(P_values, summary)
    check_instance("test", test, PluginZTest)
    if len(moments) != index.size or test.z_m.size != index.size:
        raise ValueError(f"moments and test must have one entry per P ({index.size})")
    return pd.DataFrame({"sampled √E m²": summary.rms_m, "s.e.": summary.rms_m_se, "plug-in": [t.rms_m for t in moments],
                         "z(√E m²)": test.z_m, "sampled E[q sgn m]": summary.q, "s.e. (q)": summary.q_se,
                         "plug-in (q)": [t.q for t in moments], "z(E[q sgn m])": test.z_q}, index=index)
