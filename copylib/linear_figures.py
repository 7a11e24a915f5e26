"""Figures of the linear-attention chapter (matplotlib): each function draws one figure and returns it.

The chapter cell computes what is plotted (or receives it from :mod:`copylib.analysis.linear` and
:mod:`copylib.analysis.linear_thresholds`), calls one of these and then ``plt.show()``.

* :func:`action_grid`: the reduced action of several versions at several ``P`` in the ``(m, (L-1) q)`` plane.
* :func:`minima_along_P`: the global minimum's ``m``, copy part and predicted test loss against ``P``.
* :func:`posterior_moments`: sampled moments against the plug-in integral and the minima, per size.
* :func:`onset_scan`: ``E m^2`` and the Binder cumulant of the plug-in posterior across ``P1``.
* :func:`large_L`: copy shares of the minima and of the posterior means near ``P2``, and the ``Q`` marginals.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
import numpy.typing as npt

from .arguments import check_grid, check_P_values
from .model.network import ModelSpec, check_spec
from .plotting import reference_lines, three_panels
from .theory import linear as linear_theory
from .theory.linear_marginal import plugin_posterior_moments

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from .analysis.linear import GroupSummary
    from .analysis.linear_thresholds import OnsetScan, SwitchScan

__all__ = ["action_grid", "minima_along_P", "posterior_moments", "onset_scan", "large_L"]


def _grid(name: str, x) -> np.ndarray:
    return check_grid(name, x, n_min=2, increasing=True)


def action_grid(spec: ModelSpec, P_values: npt.ArrayLike, versions: Sequence[str], m_grid: npt.ArrayLike,
                Q_grid: npt.ArrayLike, *, figsize: tuple[float, float] = (7.2, 7.4)) -> Figure:
    """The reduced action of each version (rows) at each ``P`` (columns) as ``ln(1 + S - min S)``.

    Parameters
    ----------
    spec : ModelSpec
        A linear-attention spec.
    P_values : sequence of float
        Sample sizes (finite, > 0), one column each with its own colour scale.
    versions : sequence of str
        Versions of ``copylib.theory.linear.VERSIONS``, one row each.
    m_grid, Q_grid : sequences of float
        Increasing grids of the pooling amplitude ``m`` and the copy part ``Q = (L-1) q``.
    figsize : (float, float)
        The figure's size in inches.

    Returns
    -------
    matplotlib.figure.Figure
        With the global minimum (``global_minimum``) marked by a red star in every panel.
    """
    check_spec(spec)
    P_values = check_P_values(P_values)
    versions = tuple(versions)
    if not versions:
        raise ValueError("versions must not be empty")
    M, Qc = np.meshgrid(_grid("m_grid", m_grid), _grid("Q_grid", Q_grid), indexing="ij")
    L, n_v, n_P = spec.L, len(versions), P_values.size
    fig, axes = plt.subplots(n_v, n_P, figsize=figsize, sharex=True, sharey=True, layout="constrained", squeeze=False)
    for j, P in enumerate(P_values.tolist()):
        P = int(P) if float(P).is_integer() else P
        # One colour scale per column (per P), so the versions at the same P compare directly.
        Z = {v: linear_theory.reduced_action(M, Qc / (L - 1), P, spec, version=v) for v in versions}
        Z = {v: np.log1p(S - S.min()) for v, S in Z.items()}
        levels = np.linspace(0, max(z.max() for z in Z.values()), 21)
        for i, version in enumerate(versions):
            ax = axes[i, j]
            filled = ax.contourf(M, Qc, Z[version], levels=levels, cmap="viridis")
            best = linear_theory.global_minimum(P, spec, version)
            ax.plot(best.coordinates["m"], (L - 1) * best.coordinates["q"], "r*", ms=12)
            ax.set_title(f"{version}, $P = {P}$", fontsize=9)
            if i == n_v - 1:
                ax.set_xlabel("pooling $m$")
            if j == 0:
                ax.set_ylabel("copy part $(L-1)\\,q$")
        fig.colorbar(filled, ax=axes[:, j], location="bottom", shrink=0.9, ticks=levels[::5], format="%.1f",
                     label="$\\ln(1 + S - \\min S)$")
    return fig


def minima_along_P(curves: dict, P1: dict, L: int, V: int) -> Figure:
    """The global minimum of each version against ``P``: ``m*``, ``(L-1) q*`` and the predicted test loss.

    Parameters
    ----------
    curves : dict
        ``{version: MinimumCurve}`` (:func:`copylib.theory.linear.minimum_curve`), at most three.
    P1 : dict
        ``{version: P1}``, marked on the left panel (dashed, dotted, dash-dotted in the order of ``curves``).
    L, V : int
        Sequence length and vocabulary size, for the copy part and the reference losses.

    Returns
    -------
    matplotlib.figure.Figure
    """
    if not isinstance(curves, dict) or not 0 < len(curves) <= 3 or set(P1) != set(curves):
        raise ValueError("curves must be a dict of one to three versions, and P1 must have the same keys")
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.3))
    for version, c in curves.items():
        axes[0].plot(c.P, c.coordinates["m"], label=version)
        axes[1].plot(c.P, (L - 1) * c.coordinates["q"], label=version)
        axes[2].plot(c.P, c.test_loss, label=version)
    for ax, name in zip(axes, ("pooling $m^*$", "copy part $(L-1)\\,q^*$", "predicted test loss")):
        ax.set_xscale("log")
        ax.set_xlabel("$P$")
        ax.set_title(name, fontsize=9)
    for version, ls in zip(curves, ("--", ":", "-.")):
        axes[0].axvline(P1[version], color="0.6", ls=ls, lw=0.8)
    reference_lines(axes[2], L, V)
    axes[2].legend(fontsize=8)
    fig.tight_layout()
    return fig


def posterior_moments(rows: Iterable[tuple[ModelSpec, npt.ArrayLike, GroupSummary]], P_line: npt.ArrayLike) -> Figure:
    """Sampled ``sqrt(E m^2)`` and ``E[q sign m]`` against the plug-in integral and the minima, one row per size.

    Parameters
    ----------
    rows : sequence of (ModelSpec, sequence of float, GroupSummary)
        Per size: the spec, the sampled ``P`` and the sampled summary
        (:func:`copylib.analysis.linear.chain_group_summary`).
    P_line : sequence of float
        Increasing ``P`` (> 0) at which the plug-in integral and the ``fluct`` and mean-field minima are drawn.

    Returns
    -------
    matplotlib.figure.Figure
        Error bars two standard errors.
    """
    rows = list(rows)
    if not rows:
        raise ValueError("rows must not be empty")
    P_line = _grid("P_line", P_line)
    if P_line[0] <= 0:
        raise ValueError(f"P_line must be > 0, got {P_line!r}")
    fig, axes = plt.subplots(len(rows), 2, figsize=(7.4, 2.9 * len(rows)), sharex=True, squeeze=False)
    for row, (sp, Ps, summ) in enumerate(rows):
        ann = [plugin_posterior_moments(P, sp) for P in P_line]
        mins = {v: linear_theory.minimum_curve(P_line, sp, v) for v in ("fluct", "mean_field")}
        for col, (key, se, name) in enumerate((("rms_m", "rms_m_se", r"$\sqrt{\mathbb{E}\,m^2}$"),
                                               ("q", "q_se", r"$\mathbb{E}[q\,\mathrm{sign}\,m]$"))):
            ax = axes[row, col]
            ax.plot(P_line, [getattr(a, key) for a in ann], "k-", label="plug-in integral")
            for v, ls in (("fluct", ":"), ("mean_field", "--")):
                ax.plot(P_line, mins[v].coordinates["m" if key == "rms_m" else "q"], ls, label=f"{v} minimum")
            ax.errorbar(Ps, getattr(summ, key), yerr=2 * getattr(summ, se), fmt="o", color="C3", ms=4, label="samples")
            ax.set_xscale("log")
            ax.set_title(f"$L = {sp.L}$, $V = {sp.V}$: {name}", fontsize=9)
    for ax in axes[-1]:
        ax.set_xlabel("$P$")
    axes[0, 0].legend(fontsize=8)
    fig.tight_layout()
    return fig


def onset_scan(scan: OnsetScan) -> Figure:
    """``E m^2 / m*^2`` and the Binder cumulant of ``m`` against ``P / P1``, one curve per size.

    Parameters
    ----------
    scan : OnsetScan
        A :func:`copylib.analysis.linear_thresholds.posterior_onset_scan` result.

    Returns
    -------
    matplotlib.figure.Figure
    """
    if not hasattr(scan, "rows") or not hasattr(scan, "f"):
        raise TypeError(f"scan must be an OnsetScan, got {type(scan).__name__}")
    fig, axes = plt.subplots(1, 2, figsize=(7.6, 3.9))
    for (Ls, Vs), r in scan.rows.items():
        axes[0].plot(scan.f, r.m2 / r.m2_star, "o-", ms=3, label=f"$L = {Ls}$, $V = {Vs}$")
        axes[1].plot(scan.f, r.binder, "o-", ms=3, label=f"$L = {Ls}$, $V = {Vs}$")
    for ax, name in zip(axes, ("$\\mathbb{E}\\,m^2 / m^{*2}(4P_1)$", "Binder cumulant of $m$")):
        ax.set_xscale("log")
        ax.set_xticks([0.25, 0.5, 1, 2, 4], ["1/4", "1/2", "1", "2", "4"])
        ax.minorticks_off()
        ax.axvline(1, color="0.5", ls=":")
        ax.set_xlabel("$P/P_1$")
        ax.set_title(name, fontsize=9)
    axes[1].axhline(2 / 3, color="0.7", lw=0.8)
    axes[1].set_ylim(top=max(0.7, axes[1].get_ylim()[1]))  # the 2/3 of two sharp peaks stays in view
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    # below the panels: inside, seven entries cover the curves
    fig.legend(*axes[0].get_legend_handles_labels(), loc="lower center", ncol=4, fontsize=8, frameon=False)
    return fig


def large_L(rel: npt.ArrayLike, min_share: dict, rel_post: npt.ArrayLike, post_share: dict, switch: SwitchScan,
            versions: Sequence[str]) -> Figure:
    """Copy shares near ``P2`` of the minima and of the posterior means, and the posterior's ``Q`` marginals.

    Parameters
    ----------
    rel : sequence of float
        ``P / P2`` of the minima's curves.
    min_share : dict
        ``{(version, L): copy share of the minimum along rel}``; ``L = 32`` solid, others dashed.
    rel_post : sequence of float
        ``P / P2(fluct)`` of the posterior's curves.
    post_share : dict
        ``{L: copy share of the posterior means along rel_post}``.
    switch : SwitchScan
        A :func:`copylib.analysis.linear_thresholds.posterior_switch_scan` result (its marginals).
    versions : sequence of str
        The versions in colour order.

    Returns
    -------
    matplotlib.figure.Figure
    """
    if not hasattr(switch, "switch") or not hasattr(switch, "P2"):
        raise TypeError(f"switch must be a SwitchScan, got {type(switch).__name__}")
    versions = tuple(versions)
    fig, axes = three_panels(7.4, 6.4)
    for (v, Lb), share in min_share.items():
        axes[0].plot(rel, share, "-" if Lb == 32 else "--", color=f"C{versions.index(v)}", label=f"{v}, $L = {Lb}$")
    for Lb, share in post_share.items():
        axes[1].plot(rel_post, share, "o-", ms=3, label=f"$L = {Lb}$")
    for Lb, sw in switch.switch.items():
        axes[2].plot(sw.marginal.x, sw.marginal.density,
                     label=f"$L = {Lb}$, $P = {sw.marginal.P / switch.P2[Lb]:.4f}\\,P_2$ (fluct)")
    for ax, x, y in ((axes[0], "$P/P_2$ (of each version)", "copy share of the minimum"),
                     (axes[1], "$P/P_2$ (fluct)", "copy share of the posterior means"),
                     (axes[2], "$Q = (L-1)\\,q\\,\\mathrm{sign}\\,m$", "posterior density")):
        ax.set(xlabel=x, ylabel=y)
        # the densities' left flank is empty; their right end holds the tallest peak
        ax.legend(fontsize=8, loc="upper left" if ax is axes[2] else "best")
    axes[0].set_xscale("log")
    axes[1].set_xscale("log")
    axes[2].set_xlim(-0.5, 6)
    return fig
