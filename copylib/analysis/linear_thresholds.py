"""Thresholds of the linear-attention chapter: ``P1`` and ``P2`` by every route, local-minimum scans, bisections.

* :func:`threshold_versions`: ``P1`` and ``P2`` of the versions of the action, exact, numerical and to leading order.
* :func:`local_minimum_scan`: the number of local minima of the action along ``P``, and at its steepest point.
* :func:`jump_table`: the copy-share jumps of :func:`copylib.theory.linear.first_order_point` as a table.
* :func:`smallest_jump_size`: the smallest ``L`` at which a version's minimum jumps, by bisection.
* :func:`posterior_onset_scan`: the plug-in posterior across ``P1`` at several sizes (contrast, Binder
  cumulant, precursor).
* :func:`posterior_switch_scan`: the switch of the plug-in posterior near ``P2`` at several ``L``, by bisection.
* :func:`copy_share_curves`: the copy share of the minima and of the posterior means across ``P2``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from ..arguments import check_grid, check_int, check_positive
from ..model.network import ModelSpec, check_spec
from ..theory import linear as linear_theory
from ..theory.linear_marginal import PluginSwitch, plugin_posterior_moments, plugin_posterior_switch
from .linear import posterior_copy_share

__all__ = [
    "ThresholdVersions",
    "threshold_versions",
    "LocalMinimumScan",
    "local_minimum_scan",
    "jump_table",
    "SmallestJump",
    "smallest_jump_size",
    "OnsetRow",
    "OnsetScan",
    "posterior_onset_scan",
    "SwitchScan",
    "posterior_switch_scan",
    "CopyShareCurves",
    "copy_share_curves",
]


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


def threshold_versions(spec: ModelSpec, versions: Sequence[str] = ("mean_field", "fluct", "map"), *,
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
    check_spec(spec)
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
class LocalMinimumScan:
    """:func:`local_minimum_scan` result.

    P : the scanned sample sizes (a geometric grid, then the steepest point and its two neighbours
    at relative distance ``1e-6``); n_minima : the number of local minima with ``m > 0`` at each;
    steepest : :func:`copylib.theory.linear.first_order_point` at this size.
    """

    P: np.ndarray
    n_minima: np.ndarray
    steepest: object

    def row(self, L: int) -> dict:
        """One table row: the scan's size, the fewest and most minima, the steepest point and the
        copy shares of the global minimum on its two sides (``L`` is the spec's sequence length)."""
        j = self.steepest
        return {"P values scanned": self.P.size, "fewest minima": int(self.n_minima.min()),
                "most minima": int(self.n_minima.max()), "steepest at P": j.P3,
                "share below": j.pooling.order_parameter, "share above": j.copy.order_parameter,
                "bracket dP/P": j.rel_width}


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
    steepest = linear_theory.first_order_point(spec, version)
    P = np.concatenate([np.geomspace(P_from, P_to, n_P), steepest.P3 * np.array([1 - 1e-6, 1.0, 1 + 1e-6])])
    n_minima = np.array([len(found) for found in linear_theory.local_minima(P, spec, version)])
    return LocalMinimumScan(P=P, n_minima=n_minima, steepest=steepest)


def jump_table(jumps: dict, V: int) -> pd.DataFrame:
    """The copy-share jumps ``{version: {L: FirstOrderPoint}}`` as a table, one row per ``(version, L)``.

    Parameters
    ----------
    jumps : dict
        ``{version: {L: FirstOrderPoint}}`` from :func:`copylib.theory.linear.first_order_point`.
    V : int
        The vocabulary size of the specs (``>= 2``), for the asymptotic ``P2``.

    Returns
    -------
    pandas.DataFrame
        Columns: ``P2``, its ratio to the asymptotic formula, ``P3 / P2``, the copy shares on
        the two sides, the jump, whether there are two minima and the slope of their action difference.
    """
    V = check_int("V", V, 2)
    if not isinstance(jumps, dict) or not jumps or not all(isinstance(d, dict) and d for d in jumps.values()):
        raise ValueError("jumps must be a non-empty dict {version: {L: FirstOrderPoint}} with non-empty inner dicts")
    rows = []
    for v, by_L in jumps.items():
        for Lb, j in by_L.items():
            asym = linear_theory.p2_analytic(ModelSpec(L=Lb, V=V, kind="linear"), v)
            rows.append({"version": v, "L": Lb, "P2": j.P2, "P2 / asymptotic": j.P2 / asym,
                         "P3 / P2": j.P3 / j.P2,
                         "share below": j.pooling.order_parameter, "share above": j.copy.order_parameter,
                         "jump": j.jump,
                         "two minima": j.two_minima, "slope (nats)": j.slope})
    return pd.DataFrame(rows).set_index(["version", "L"])


@dataclass(frozen=True)
class SmallestJump:
    """:func:`smallest_jump_size` result.

    lo, hi : the final bracket, ``hi = lo + 1`` (continuous at ``lo``, first order at ``hi`` if the
    start bracket was valid); start : the start bracket; start_lo, start_hi : the
    :func:`copylib.theory.linear.first_order_point` results at its ends; start_valid : continuous (one
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
    (``first_order`` of :func:`copylib.theory.linear.first_order_point`); the ends of the start bracket are
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
        return linear_theory.first_order_point(ModelSpec(L=Lb, V=V, kind="linear"), version)

    start_lo, start_hi = at(lo), at(hi)
    a, b, j_b = lo, hi, start_hi
    while b - a > 1:
        mid = (a + b) // 2
        j_mid = at(mid)
        a, b, j_b = (a, mid, j_mid) if j_mid.first_order else (mid, b, j_b)
    return SmallestJump(lo=a, hi=b, start=(lo, hi), start_lo=start_lo, start_hi=start_hi,
                        start_valid=bool(not start_lo.two_minima and start_hi.first_order), at_hi=j_b)


class _RowPerKey:
    """A scan holding one row per key in its dict field ``_ROWS``: ``scan[key]`` is that row."""

    _ROWS = "rows"

    def __getitem__(self, key):
        return getattr(self, self._ROWS)[key]


@dataclass(frozen=True)
class OnsetRow:
    """One size of :func:`posterior_onset_scan`.

    P1 : the exact ``P1`` of the ``fluct`` action; m2, binder, share : ``E m^2``, the Binder cumulant
    of ``m`` and the posterior copy share at each ``P / P1`` of the scan; m2_star : ``m*^2`` of the
    ``fluct`` minimum at the largest ``P / P1``; K : the contrast ``m2[-1] / m2[0]``; rise : the
    relative change of ``E m^2`` from ``P1 / 2`` to ``P1`` (the scan points nearest to them).
    """

    P1: float
    m2: np.ndarray
    binder: np.ndarray
    share: np.ndarray
    m2_star: float
    K: float
    rise: float


@dataclass(frozen=True)
class OnsetScan(_RowPerKey):
    """:func:`posterior_onset_scan` result: the ratios ``f = P / P1`` and one :class:`OnsetRow`
    per size ``(L, V)`` in ``rows``; ``scan[L, V]`` is ``scan.rows[L, V]``. ``i_half``, ``i_one``:
    the indices of ``f`` nearest to ``1/2`` and ``1``."""

    f: np.ndarray
    rows: dict[tuple[int, int], OnsetRow]
    i_half: int
    i_one: int

    def table(self) -> pd.DataFrame:
        """``P1``, ``E m^2`` at ``P1/4``, ``P1/2``, ``P1`` and ``4 P1`` (first, half, one, last ratio),
        the contrast, the Binder cumulant at the first, ``P1`` and last ratio and the copy share at
        ``P1``, one row per size."""
        a, b = self.i_half, self.i_one
        return pd.DataFrame({size: {"P1": r.P1, "E m² at P1/4": r.m2[0], "at P1/2": r.m2[a], "at P1": r.m2[b],
                                    "at 4 P1": r.m2[-1], "contrast K": r.K, "Binder at P1/4": r.binder[0],
                                    "at P1 ": r.binder[b], "at 4 P1 ": r.binder[-1], "copy share at P1": r.share[b]}
                             for size, r in self.rows.items()}).T.rename_axis(["L", "V"])


def posterior_onset_scan(sizes: Sequence[tuple[int, int]], f: npt.ArrayLike, **grid: int) -> OnsetScan:
    """The plug-in posterior integral across ``P1`` (of the ``fluct`` action) at several sizes.

    At each size ``(L, V)`` and each ``P = f P1``: ``E m^2``, the Binder cumulant and the copy
    share of the posterior means (:func:`copylib.theory.linear_marginal.plugin_posterior_moments`,
    :func:`copylib.analysis.linear.posterior_copy_share`), and ``m*^2`` of the ``fluct`` minimum
    at the largest ``f``.

    Parameters
    ----------
    sizes : sequence of (int, int)
        ``(L, V)`` pairs (``L >= 4``, ``V >= 2``), without repeats.
    f : sequence of float
        Increasing ratios ``P / P1`` (finite, > 0, at least two).
    **grid
        Grid sizes passed to ``plugin_posterior_moments`` (``n_m``, ``n_q``, ``n_row``, ``n_rest``).

    Returns
    -------
    OnsetScan
    """
    sizes = [tuple(s) for s in sizes]
    if not sizes or len(set(sizes)) != len(sizes) or any(len(s) != 2 for s in sizes):
        raise ValueError(f"sizes must be a non-empty sequence of distinct (L, V) pairs, got {sizes!r}")
    for Ls, Vs in sizes:
        check_int("L", Ls, 4)
        check_int("V", Vs, 2)
    f = check_grid("f", f, n_min=2, positive=True, increasing=True)
    i_half, i_one = (int(np.argmin(np.abs(np.log(f / x)))) for x in (0.5, 1.0))
    rows = {}
    for Ls, Vs in sizes:
        sp = ModelSpec(L=Ls, V=Vs, kind="linear")
        p1 = linear_theory.p1_analytic(sp, "fluct")
        mo = [plugin_posterior_moments(x * p1, sp, **grid) for x in f]
        m2 = np.array([a.var_m for a in mo])
        rows[Ls, Vs] = OnsetRow(P1=p1, m2=m2, binder=np.array([a.binder for a in mo]),
                                share=posterior_copy_share(mo, Ls),
                                m2_star=linear_theory.global_minimum(f[-1] * p1, sp, "fluct").coordinates["m"] ** 2,
                                K=m2[-1] / m2[0], rise=m2[i_one] / m2[i_half] - 1)
    return OnsetScan(f=f, rows=rows, i_half=i_half, i_one=i_one)


@dataclass(frozen=True)
class SwitchScan(_RowPerKey):
    """:func:`posterior_switch_scan` result.

    switch : ``{L: PluginSwitch}``; P2 : ``{L: P2}`` of the ``fluct`` action; L_lo, L_hi : the
    largest ``L`` with a one-mode switch below the smallest ``L`` with a two-mode one, and that
    smallest ``L`` (``-1`` where there is none).
    """

    switch: dict[int, PluginSwitch]
    P2: dict
    L_lo: int
    L_hi: int

    _ROWS = "switch"

    def table(self) -> pd.DataFrame:
        """The bracket, the marginal's ``P`` (in units of ``P2``), its modes, barrier and weight
        ratio and the number of marginals computed, one row per ``L``."""
        rows = {}
        for Lb, sw in self.switch.items():
            P2f = self.P2[Lb]
            rows[Lb] = {"bracket from P/P2(fluct)": sw.P_lo / P2f, "to": sw.P_hi / P2f, "two modes": sw.bimodal,
                        "marginal at P/P2(fluct)": sw.marginal.P / P2f, "modes Q": np.round(sw.marginal.modes, 2),
                        "barrier (nats)": sw.marginal.barrier, "ln(w_copy / w_pool)": sw.marginal.log_weight_ratio,
                        "marginals computed": sw.n_eval}
        return pd.DataFrame.from_dict(rows, orient="index")  # each column keeps its type


def posterior_switch_scan(L_values: Sequence[int], V: int, *, known_P2: Mapping[int, float] | None = None,
                          n_bisect: int = 12, n_m: Mapping[int, int] | None = None,
                          span: tuple[float, float] = (0.9, 1.05)) -> SwitchScan:
    """The switch of the plug-in posterior from pooling to copying near ``P2`` (``fluct``), per ``L``.

    For each ``L``, :func:`copylib.theory.linear_marginal.plugin_posterior_switch` bisects
    ``[span[0], span[1]] * P2`` with a starting box ``q_max = 6 / (L - 1)``, ``m_max = 3``.

    Parameters
    ----------
    L_values : sequence of int
        Sequence lengths (``>= 4``, distinct).
    V : int
        Vocabulary size (``>= 2``).
    known_P2 : dict, optional
        ``{L: P2}`` of the ``fluct`` action where already known; the others are computed with
        :func:`copylib.theory.linear.p2_numerical` (``rtol = 1e-6``).
    n_bisect : int
        Bisection steps (``>= 1``).
    n_m : dict, optional
        ``{L: points of the m grid}`` (default: the marginal's default).
    span : (float, float)
        The bracket in units of ``P2``, ``0 < span[0] < span[1]``.

    Returns
    -------
    SwitchScan
    """
    L_values = [check_int("L_values", Lb, 4) for Lb in L_values]
    if not L_values or len(set(L_values)) != len(L_values):
        raise ValueError(f"L_values must be a non-empty sequence of distinct lengths, got {L_values!r}")
    V = check_int("V", V, 2)
    n_bisect = check_int("n_bisect", n_bisect, 1)
    lo, hi = (check_positive("span", x) for x in span)
    if not lo < hi:
        raise ValueError(f"span must be increasing, got {span!r}")
    known_P2, n_m = dict(known_P2 or {}), dict(n_m or {})
    switch, P2 = {}, {}
    for Lb in L_values:
        sp = ModelSpec(L=Lb, V=V, kind="linear")
        P2[Lb] = P2f = known_P2[Lb] if Lb in known_P2 else linear_theory.p2_numerical(sp, "fluct", rtol=1e-6)
        grid = {"n_m": n_m[Lb]} if Lb in n_m else {}
        switch[Lb] = plugin_posterior_switch(sp, lo * P2f, hi * P2f, n_bisect=n_bisect, q_max=6 / (Lb - 1),
                                             m_max=3.0, **grid)
    bimodal = [Lb for Lb, sw in switch.items() if sw.bimodal]
    below = [Lb for Lb, sw in switch.items() if not sw.bimodal and bimodal and Lb < min(bimodal)]
    return SwitchScan(switch=switch, P2=P2, L_lo=max(below) if below else -1, L_hi=min(bimodal) if bimodal else -1)


@dataclass(frozen=True)
class CopyShareCurves:
    """:func:`copy_share_curves` result.

    rel : ``P / P2`` of the minima's curves; minimum : ``{(version, L): copy share of the global
    minimum}`` along ``rel``; rel_post : ``P / P2(fluct)`` of the posterior's curves; posterior :
    ``{L: copy share of the plug-in posterior means}`` along ``rel_post``.
    """

    rel: np.ndarray
    minimum: dict
    rel_post: np.ndarray
    posterior: dict


def copy_share_curves(P2: dict, V: int, rel: npt.ArrayLike, rel_post: npt.ArrayLike, *,
                      L_minimum: Sequence[int] = (32, 256), L_posterior: Sequence[int] = (32, 128)) -> CopyShareCurves:
    """The copy share of each version's global minimum and of the plug-in posterior means across ``P2``.

    Parameters
    ----------
    P2 : dict
        ``{version: {L: P2}}`` of the versions to draw (each must have the lengths ``L_minimum``); the
        ``"fluct"`` entry is also used for the posterior where it has the length, else
        :func:`copylib.theory.linear.p2_numerical` (``rtol = 1e-6``) computes it.
    V : int
        Vocabulary size (``>= 2``).
    rel, rel_post : sequences of float
        Increasing ratios ``P / P2`` (> 0) for the minima and for the posterior.
    L_minimum, L_posterior : sequences of int
        The lengths of the minima's and of the posterior's curves (``>= 4``).

    Returns
    -------
    CopyShareCurves
    """
    V = check_int("V", V, 2)
    arrays = {}
    for name, x in (("rel", rel), ("rel_post", rel_post)):
        arrays[name] = check_grid(name, x, positive=True, increasing=True)
    if not isinstance(P2, dict) or not P2 or any(not isinstance(d, dict) for d in P2.values()):
        raise ValueError("P2 must be a non-empty dict {version: {L: P2}}")
    L_minimum = [check_int("L_minimum", Lb, 4) for Lb in L_minimum]
    L_posterior = [check_int("L_posterior", Lb, 4) for Lb in L_posterior]
    missing = [(v, Lb) for Lb in L_minimum for v in P2 if Lb not in P2[v]]
    if missing:
        raise ValueError(f"P2 has no entry for (version, L) = {missing}")
    rel, rel_post = arrays["rel"], arrays["rel_post"]
    minimum = {(v, Lb): linear_theory.minimum_curve(rel * P2[v][Lb], ModelSpec(L=Lb, V=V, kind="linear"), v).order_parameter
               for Lb in L_minimum for v in P2}
    known, posterior = P2.get("fluct", {}), {}
    for Lb in L_posterior:
        sp = ModelSpec(L=Lb, V=V, kind="linear")
        P2f = known[Lb] if Lb in known else linear_theory.p2_numerical(sp, "fluct", rtol=1e-6)
        posterior[Lb] = posterior_copy_share([plugin_posterior_moments(f * P2f, sp, q_max=6 / (Lb - 1), m_max=3.0)
                                              for f in rel_post], Lb)
    return CopyShareCurves(rel=rel, minimum=minimum, rel_post=rel_post, posterior=posterior)
