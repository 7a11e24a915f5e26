"""Interactive explorers for the chapters: figures, shown as frames that work on the website.

Each explorer has two parts: a figure function (plain matplotlib, no widgets,
tested on its own) and an ``*_explorer`` function that draws that figure at a
grid of parameter values and shows the pictures behind linked controls
(:mod:`copylib.frames`), so moving a control works on the static website,
without a kernel. Where recomputing for any value makes sense, the explorer
adds controls that redraw the figure in a running notebook; they are marked
with :func:`copylib.frames.live_only`, and the website hides them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from . import frames, landscape_explorers
from .arguments import as_paired_arrays, check_attention, check_int, check_positive
from .landscape_explorers import *  # noqa: F403 (the landscapes, re-exported)
from .model.attention import attention_kind
from .model.network import ModelSpec
from .posterior.order_parameters import copy_weight
from .theory import softmax_marginal

if TYPE_CHECKING:
    import ipywidgets
    from matplotlib.figure import Figure

    from .analysis.scaling import ThresholdTable

__all__ = [
    *landscape_explorers.__all__,
    "attention_figure",
    "training_figure",
    "training_explorer",
    "marginal_figure",
    "marginal_explorer",
    "threshold_figure",
    "threshold_explorer",
    "induction_figure",
    "induction_explorer",
]

#: The default ``P / P_2`` frames of :func:`linear_size_explorer`: one below ``P_1`` of the mean-field action
#: at ``L = 32`` (``P_1/P_2 = 0.05``), then dense near ``P_2``, where a first-order jump's two minima coexist
#: (within 0.3 % of ``P_2`` for the MAP action at ``L = 128``, ``V = 4``). Bound here too, so that this page
#: documents it (it is defined in :mod:`copylib.landscape_explorers`).
LINEAR_SIZE_RATIOS = landscape_explorers.LINEAR_SIZE_RATIOS


def attention_figure(A: npt.ArrayLike, title: str = "") -> Figure:
    """Heat map of one attention matrix ``A`` (``L x L``) with its copy weight.

    The colours span one fixed scale, attention weight 0 to 1 (stated on the colour
    bar), whatever ``A`` holds: frames of an explorer are comparable, and almost
    uniform attention stays dark instead of being stretched to look like a copy
    head. The title line reports, in words (the book's readers meet this figure
    before the order parameters are defined), the copy weight, the average weight
    on the previous token (:func:`copylib.posterior.order_parameters.copy_weight`),
    next to ``1/L``, that of uniform attention. Returns the matplotlib Figure.
    """
    import matplotlib.pyplot as plt

    A = _as_attention("A", A)
    fig, ax = plt.subplots(figsize=(4.8, 4.2), layout="tight")
    _draw_attention(fig, ax, A, title)
    return fig


def _as_attention(name, A) -> np.ndarray:
    A = np.asarray(A, dtype=float)
    check_attention(name, A, batched=False)
    return A


#: The colour scale of every attention heat map: the whole range of an attention weight.
_ATTENTION_SCALE = (0.0, 1.0)


def _shown_sign(A: np.ndarray) -> np.ndarray:
    """``A`` with a positive pooling amplitude ``m = 1^T A 1 / L`` (the order parameters' convention).

    Linear attention: ``(G, b, W) -> (-G, -b, -W)`` maps ``A`` to ``-A`` and predicts the same, so a run
    may end at either sign; softmax rows sum to 1, so they are never flipped."""
    return -A if A.sum() < 0 else A


def _sweep_scale(A: np.ndarray) -> tuple[float, float]:
    """The colour scale of every frame of one sweep ``A (n, L, L)``: rows that are probability vectors
    (softmax attention) span the whole range of a weight, 0 to 1; other weights (linear attention's are
    not bounded, and stay near 0.1 on the copy task) span 0 (or their lowest value) to their highest, over
    all ``P`` of the sweep, so that its frames stay comparable with each other and its copy pattern is not
    lost at the bottom of the 0-to-1 scale."""
    shown = np.stack([_shown_sign(a) for a in A])
    lo, hi = min(0.0, float(shown.min())), float(shown.max())
    if (shown.min() >= 0 and np.allclose(shown.sum(-1), 1)) or not hi > lo:  # softmax, or no range (all zero)
        return _ATTENTION_SCALE
    return lo, hi


def _draw_attention(fig, ax, A, title, scale: tuple[float, float] = _ATTENTION_SCALE):
    from matplotlib.ticker import MaxNLocator

    if A.sum() < 0:  # shown with m > 0, so that the copy pattern is on the colour scale instead of below it
        A, title = _shown_sign(A), f"{title} (shown as -A, the same network)"
    c = float(copy_weight(A))
    im = ax.imshow(A, cmap="viridis", vmin=scale[0], vmax=scale[1], interpolation="nearest")
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04,
                 label=f"attention weight (fixed scale {scale[0]:.2g} to {scale[1]:.2g})")
    ax.set_xlabel("key position")
    ax.set_ylabel("query position")
    for axis in (ax.xaxis, ax.yaxis):  # positions are whole numbers
        axis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title(f"{title}\ncopy weight = {c:.3f} (previous token; uniform: {1 / A.shape[0]:.3f})", fontsize=9)


def _check_sweeps(sweeps) -> dict:
    """``{kind: (P, A, test_loss)}`` as arrays, checked: one attention matrix and one loss per ``P``."""
    if not isinstance(sweeps, dict) or not sweeps:
        raise ValueError("sweeps must be a non-empty dict of attention kind -> sweep (with P, A, test_loss)")
    out = {}
    for kind, sweep in sweeps.items():
        name = attention_kind(kind).name
        P = np.asarray(sweep.P, dtype=float)
        A = np.asarray(sweep.A, dtype=float)
        loss = np.asarray(sweep.test_loss, dtype=float)
        if P.ndim != 1 or P.size == 0 or A.shape[:1] != P.shape or loss.shape != P.shape:
            raise ValueError(f"sweeps[{kind!r}] must hold P (n,), A (n, L, L) and test_loss (n,), got shapes "
                             f"{P.shape}, {A.shape}, {loss.shape}")
        for a in A:
            check_attention(f"sweeps[{kind!r}].A", a, batched=False)
        out[name] = (P, A, loss)
    return out


def training_figure(sweeps: dict, kind: str, P: float) -> Figure:
    """The attention matrix Adam learned at one ``P``, and the test loss of every kind along ``P``.

    ``sweeps`` maps an attention kind to a sweep with ``P`` (sample sizes),
    ``A`` (the kept attention matrix per ``P``) and ``test_loss`` (per ``P``), e.g.
    :class:`copylib.inference.map_training.SweepResult`. Left: the attention matrix of
    ``kind`` at ``P`` (one of the sweep's sample sizes) with its copy weight, on one colour scale for all
    ``P`` (softmax: 0 to 1; linear attention: its sweep's range, stated on the colour bar).
    Right: the test loss against ``P`` for every kind, ``kind`` in a thick line, the
    current ``P`` marked. Returns the matplotlib Figure.
    """
    import matplotlib.pyplot as plt

    data = _check_sweeps(sweeps)
    kind = attention_kind(kind).name
    if kind not in data:
        raise ValueError(f"kind must be one of the sweeps' kinds {tuple(data)}, got {kind!r}")
    P_k, A_k, loss_k = data[kind]
    P = check_positive("P", P)
    hits = np.flatnonzero(P_k == P)
    if hits.size == 0:
        raise ValueError(f"P must be one of the sample sizes of the {kind} sweep {P_k.tolist()}, got {P}")
    i = int(hits[0])
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(7.6, 3.6), gridspec_kw={"width_ratios": [1, 1.15]}, layout="tight")
    _draw_attention(fig, ax, A_k[i], f"{kind} attention, P = {P:.4g}", _sweep_scale(A_k))
    for name, (P_n, _, loss) in data.items():
        bx.plot(P_n, loss, "o-", lw=2.5 if name == kind else 1, ms=4, label=f"{name} attention")
    bx.plot([P], [loss_k[i]], "r*", ms=14, label="shown on the left")
    bx.set_xscale("log")
    bx.set_xlabel("number of training sequences $P$")
    bx.set_ylabel("test loss per position")
    bx.set_title("test loss after training (Adam, kept run)", fontsize=9)
    bx.legend(fontsize=9)
    return fig


def training_explorer(sweeps: dict, default: tuple | None = None) -> ipywidgets.VBox:
    """:func:`training_figure` for every kind and ``P`` of ``sweeps``, behind controls that work on the website.

    One control picks the attention kind, one the sample size (the sweeps share
    their sample sizes); ``default = (kind, P)`` is shown first (the last kind at
    its largest ``P`` if ``None``). All frames are precomputed: nothing needs a kernel.
    """
    data = _check_sweeps(sweeps)
    kinds = list(data)
    P_values = {tuple(data[k][0].tolist()) for k in kinds}
    if len(P_values) != 1:
        raise ValueError("sweeps must share their sample sizes P (one slider serves every kind)")
    P_list = list(P_values.pop())
    kind0, P0 = (kinds[-1], P_list[-1]) if default is None else default
    kind0 = attention_kind(kind0).name
    if kind0 not in data:
        raise ValueError(f"default kind must be one of {tuple(kinds)}, got {kind0!r}")
    axes = [frames.axis("kind", kinds, default=kind0), frames.sample_size_axis(P_list, P0)]
    return frames.frame_explorer(axes, lambda kind, P: training_figure(sweeps, kind, P))


def marginal_figure(marginal: softmax_marginal.CopyWeightMarginal, P_line: npt.ArrayLike, mean_line: npt.ArrayLike,
                    c_max: float = 0.35, Omega_max: float = 8.0) -> Figure:
    """The plug-in posterior of the copy weight at one ``P``, and its mean along ``P``.

    Left: the effective potential ``Omega(c) = -ln p(c)`` of ``marginal`` (a
    :class:`copylib.theory.softmax_marginal.CopyWeightMarginal`) with its local
    minima (red) and, where two coexist, the barrier between them (dotted) with
    the posterior mass on each side. Right: the posterior mean copy weight
    along ``P_line`` (``mean_line``, precomputed), the current ``P`` marked.
    Returns the matplotlib Figure.
    """
    import matplotlib.pyplot as plt

    if not isinstance(marginal, softmax_marginal.CopyWeightMarginal) or marginal.P is None:
        raise ValueError("marginal must be a CopyWeightMarginal at some P (not the prior)")
    P_line, mean_line = as_paired_arrays("P_line", P_line, "mean_line", mean_line)
    c_max = check_positive("c_max", c_max)
    Omega_max = check_positive("Omega_max", Omega_max)
    branches = softmax_marginal.marginal_branches(marginal)
    Omega = marginal.potential
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(7.6, 3.3), layout="tight")
    ax.plot(marginal.c, Omega, "k-", lw=1.5)
    ax.plot(branches.minima, np.interp(branches.minima, marginal.c, Omega), "r*", ms=12, label="local minima")
    if branches.n_minima >= 2:
        copy_mass = marginal.mass(branches.barrier)
        ax.axvline(branches.barrier, color="0.5", ls=":", lw=1,
                   label=f"barrier; posterior mass {1 - copy_mass:.2f} left, {copy_mass:.2f} right")
    ax.set_xlim(0.0, c_max)
    ax.set_ylim(0.0, Omega_max)
    ax.set_xlabel("copy weight $c$")
    ax.set_ylabel(r"$\Omega(c) = -\ln p(c)$ + const (nats)")
    ax.set_title(f"plug-in posterior of the copy weight, P = {marginal.P:.4g}", fontsize=9)
    ax.legend(fontsize=8, loc="upper right")
    bx.plot(P_line, mean_line, "k-", label="posterior mean of $c$")
    bx.axvline(marginal.P, color="r", lw=1, label="current $P$")
    bx.set_xlabel("number of training sequences $P$")
    bx.set_ylabel("copy weight $c$")
    bx.legend(fontsize=8)
    return fig


def marginal_explorer(P_values: Sequence[float] | npt.ArrayLike, spec: ModelSpec,
                      cumulants: softmax_marginal.RowCumulants, P_line: npt.ArrayLike,
                      default: float | None = None) -> ipywidgets.VBox:
    """:func:`marginal_figure` at each ``P`` of ``P_values``, behind a slider that works on the website.

    ``cumulants`` are the row cumulants of
    :func:`copylib.theory.softmax_marginal.row_cumulants` for ``spec``; the right
    panel's line is the posterior mean at every ``P`` of ``P_line``. Below the
    frames, a slider for any ``P`` in the range of ``P_line`` recomputes the
    figure in a running notebook (hidden on the website).
    """
    import ipywidgets as w

    P_axis = frames.sample_size_axis(P_values, default)
    P_line = np.asarray([check_positive("P_line", P) for P in np.atleast_1d(np.asarray(P_line, dtype=object))])
    mean_line = np.array([softmax_marginal.plugin_marginal(P, spec, cumulants).mean() for P in P_line])

    def draw(P):
        return marginal_figure(softmax_marginal.plugin_marginal(P, spec, cumulants), P_line, mean_line)

    title = f"<b>softmax attention, L = {spec.L}, V = {spec.V}</b>"
    explorer = frames.frame_explorer([P_axis], draw, title=title)
    P_w = w.FloatSlider(value=P_axis.values[P_axis.default], min=float(P_line.min()), max=float(P_line.max()),
                        step=1.0, description="P")
    out = w.Output()

    def redraw(change):
        out.clear_output(wait=True)
        with out:
            frames.show(draw(change["new"]))

    P_w.observe(redraw, names="value")
    return frames.with_live(explorer, w.VBox([P_w, out]))


_THRESHOLD_LINES = (("P1_mean_field", "$P_1$ (mean field)", "C0", "o-"),
                    ("P2_mean_field", "$P_2$ (mean field)", "C1", "o-"),
                    ("P2_fluct", "$P_2$ (fluct)", "C1", "s:"),
                    ("P3_mean_field", "$P_3$ (mean field)", "C3", "o-"))


def _check_table(table):
    missing = [key for key, *_ in _THRESHOLD_LINES if key not in getattr(table, "values", {})]
    if missing:
        raise ValueError(f"table must be a ThresholdTable with the entries {missing}")
    return np.asarray(table.L), np.asarray(table.V)


def threshold_figure(table: ThresholdTable, L: int, V: int) -> Figure:
    """The thresholds against ``L`` at fixed ``V`` and against ``V`` at fixed ``L``, from a threshold table.

    ``table`` is a :class:`copylib.analysis.scaling.ThresholdTable` holding the
    entries ``P1_mean_field``, ``P2_mean_field``, ``P2_fluct`` and ``P3_mean_field``.
    Left: every threshold against ``L`` at this ``V``, the current ``L`` marked;
    right: against ``V`` at this ``L``, the current ``V`` marked. Returns the Figure.
    """
    import matplotlib.pyplot as plt

    Lt, Vt = _check_table(table)
    L = check_int("L", L, 2)
    V = check_int("V", V, 2)
    if not np.any((Lt == L) & (Vt == V)):
        raise ValueError(f"(L, V) must be a pair of the table, got ({L}, {V})")
    fig, axes = plt.subplots(1, 2, figsize=(7.6, 3.6), sharey=True, layout="constrained")
    for ax, sel, x, now, name in ((axes[0], Vt == V, Lt, L, "L"), (axes[1], Lt == L, Vt, V, "V")):
        order = np.argsort(x[sel])
        for key, label, color, style in _THRESHOLD_LINES:
            ax.plot(x[sel][order], np.asarray(table.values[key])[sel][order], style, color=color, ms=4, label=label)
        ax.axvline(now, color="r", lw=1, label="current L or V")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ticks = sorted(set(x[sel].tolist()))
        ax.set_xticks(ticks, [str(t) for t in ticks])
        ax.minorticks_off()
        ax.set_xlabel(name)
    axes[0].set_ylabel("threshold $P$")
    axes[0].set_title(f"against L at V = {V}", fontsize=9)
    axes[1].set_title(f"against V at L = {L}", fontsize=9)
    # below the panels: inside, the legend covers a line at some (L, V) of the grid
    fig.legend(*axes[1].get_legend_handles_labels(), loc="outside lower center", ncol=5, fontsize=8, frameon=False)
    return fig


def threshold_explorer(table: ThresholdTable, default: tuple | None = None) -> ipywidgets.VBox:
    """:func:`threshold_figure` for every ``(L, V)`` of ``table``, behind two sliders that work on the website.

    ``default = (L, V)`` is shown first (the middle of each axis if ``None``).
    A pair missing from the table (``V >= L``) shows a note instead of a figure.
    """
    import matplotlib.pyplot as plt

    Lt, Vt = _check_table(table)
    L_values, V_values = sorted(set(Lt.tolist())), sorted(set(Vt.tolist()))
    L0, V0 = (L_values[len(L_values) // 2], V_values[len(V_values) // 2]) if default is None else default
    axes = [frames.axis("L", L_values, default=L0), frames.axis("V", V_values, default=V0)]

    def draw(L, V):
        if np.any((Lt == L) & (Vt == V)):
            return threshold_figure(table, L, V)
        fig, ax = plt.subplots(figsize=(7.6, 3.6))  # the size of threshold_figure
        ax.text(0.5, 0.5, f"no thresholds at L = {L}, V = {V}: the table has V < L only",
                ha="center", va="center")
        ax.set_axis_off()
        return fig

    return frames.frame_explorer(axes, draw)


def induction_figure(A1: npt.ArrayLike, K: npt.ArrayLike, tokens: npt.ArrayLike, A2: npt.ArrayLike, P: float,
                     title: str = "") -> Figure:
    """The two heads of a trained induction network at one ``P``.

    A1 : ``(L, L)`` layer-1 (positional) attention; K : ``(V, V)`` layer-2 key matrix
    (query token x key token); tokens : ``(L,)`` one example sequence; A2 : ``(L, L)`` layer-2
    attention on that sequence, with its induction keys (``x_{j-1} = x_l``) ringed; its key
    axis is labelled by the tokens of the sequence, in position order. Both attention maps
    use the fixed colour scale 0 to 1. Returns the matplotlib Figure.
    """
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    A1, A2 = _as_attention("A1", A1), _as_attention("A2", A2)
    K = np.asarray(K, dtype=float)
    tokens = np.asarray(tokens)
    L = A1.shape[0]
    if A2.shape != A1.shape or tokens.shape != (L,) or K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"need A1, A2 (L, L), tokens (L,) and K (V, V); got {A1.shape}, {A2.shape}, "
                         f"{tokens.shape}, {K.shape}")
    P = check_positive("P", P)
    fig, axs = plt.subplots(1, 3, figsize=(9.0, 3.5), layout="tight")
    c1 = float(np.diagonal(A1, -1).mean())
    for ax, M, name in ((axs[0], A1, f"layer 1 (positional head)\ncopy weight {c1:.2f}"),
                        (axs[2], A2, "layer 2 on the sequence\nbelow the axis")):
        im = ax.imshow(M, cmap="viridis", vmin=_ATTENTION_SCALE[0], vmax=_ATTENTION_SCALE[1],
                       interpolation="nearest")
        ax.set_xlabel("key position")
        ax.set_ylabel("query position")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_title(name, fontsize=9)
    fig.colorbar(im, ax=axs[2], fraction=0.046, pad=0.04, label="attention weight (0 to 1)")
    keys = np.argwhere((tokens[:, None] == np.r_[-1, tokens[:-1]][None, :]) & np.tri(L, dtype=bool))
    axs[2].plot(keys[:, 1], keys[:, 0], "o", mfc="none", mec="r", ms=9, label="induction key")
    # the keys are labelled by their tokens (the sequence), so the axis says so; positions run left to right
    axs[2].set_xticks(range(L), [str(t) for t in tokens], fontsize=8)
    axs[2].set_xlabel("token at each key position")
    axs[2].legend(fontsize=8, loc="upper right")
    lim = max(np.abs(K).max(), 1e-12)
    im = axs[1].imshow(K, cmap="RdBu_r", vmin=-lim, vmax=lim, interpolation="nearest")
    fig.colorbar(im, ax=axs[1], fraction=0.046, pad=0.04, label="K entry")
    axs[1].set_xlabel("key token")
    axs[1].set_ylabel("query token")
    axs[1].set_title(f"layer 2: key matrix K\ndiagonal mean {np.diag(K).mean():.2f}", fontsize=9)
    fig.suptitle(f"{title} P = {P:.4g}", fontsize=10)
    return fig


def induction_explorer(P_values: npt.ArrayLike, A1: npt.ArrayLike, K: npt.ArrayLike, tokens: npt.ArrayLike,
                       A2: npt.ArrayLike, default: float | None = None) -> ipywidgets.VBox:
    """:func:`induction_figure` at each ``P`` of ``P_values`` (``A1, A2 (n_P, L, L)``, ``K (n_P, V, V)``,
    one example sequence ``tokens (L,)``), behind a slider that works on the website."""
    P_list = [float(p) for p in np.asarray(P_values, dtype=float)]
    A1, K, A2 = (np.asarray(a, dtype=float) for a in (A1, K, A2))
    if not (A1.shape[0] == K.shape[0] == A2.shape[0] == len(P_list)):
        raise ValueError("A1, K and A2 need one entry per P of P_values")
    index = {p: i for i, p in enumerate(P_list)}
    axes = [frames.sample_size_axis(P_list, default)]
    return frames.frame_explorer(axes, lambda P: induction_figure(A1[index[P]], K[index[P]], tokens,
                                                                   A2[index[P]], P, "two-layer network,"))
