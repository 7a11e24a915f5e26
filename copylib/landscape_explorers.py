"""Explorers of the reduced-action landscapes: the linear action ``S(m, q)`` and the softmax action
``S(Delta)`` at one ``P``, with their minima along a ``P`` sweep. Re-exported by :mod:`copylib.explorers`,
whose documentation says how an explorer is made (a figure function and its frames).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from . import frames
from .arguments import check_int, check_positive, check_version
from .model.attention import attention_kind
from .model.network import ModelSpec
from .theory import linear as linear_theory
from .theory import softmax as softmax_theory

if TYPE_CHECKING:
    import ipywidgets
    from matplotlib.figure import Figure

__all__ = [
    "linear_landscape_figure",
    "softmax_landscape_figure",
    "landscape_figure",
    "landscape_explorer",
    "LINEAR_SIZE_RATIOS",
    "linear_size_explorer"]

# theory versions an explorer cannot offer: the softmax "fluct" needs sampled row noise (see the chapter)
_NEEDS_SAMPLES = {"softmax": ("fluct",)}


def _versions(kind: str) -> tuple:
    """The versions of the kind's theory module (its ``VERSIONS``) that an explorer offers."""
    entry = attention_kind(kind)
    return tuple(v for v in entry.theory_module().VERSIONS if v not in _NEEDS_SAMPLES.get(entry.name, ()))


def _check_version(kind: str, version: str | None) -> str:
    allowed = _versions(kind)
    if version is None:
        return allowed[0]
    return check_version(version, allowed)


def _check_sizes(P, L, V):
    P = check_positive("P", P)
    L = check_int("L", L, 2)
    V = check_int("V", V, 2)
    return float(P), L, V


def _figure_args(kind, P, L, V, version, n_grid, min_grid, n_P):
    """Checked ``(P, spec, version, n_grid, n_P)`` for the landscape figures."""
    P, L, V = _check_sizes(P, L, V)
    return (P, ModelSpec(L=L, V=V, kind=kind), _check_version(kind, version),
            check_int("n_grid", n_grid, min_grid), check_int("n_P", n_P, 2))


#: How the book names each theory version (the chapters' comparison tables).
_VERSION_NAMES = {"mean_field": "mean field", "fluct": "fluct", "map": "MAP"}


def _version_name(version: str) -> str:
    return _VERSION_NAMES.get(version, version)


def linear_landscape_figure(P: float, L: int = 32, V: int = 4, version: str | None = None,
                            n_grid: int = 81, P_range: tuple[float, float] | None = None, n_P: int = 40) -> Figure:
    """The linear reduced action ``S(m, q)`` at one ``P`` and its minimiser along a ``P`` sweep.

    Left: ``log(1 + S - min S)`` over the pooling weight ``m`` and the copy part
    ``(L-1) q``, with the global minimum (red star, from
    :func:`copylib.theory.linear.global_minimum`) and every other local minimum
    (white circle, from :func:`copylib.theory.linear.local_minima`: two coexist
    only near a first-order jump). Right: ``m`` and ``(L-1) q`` at the global
    minimum over ``P_range`` (log axis; default ``(P_1/4, 4 P_2)``, refined
    around ``P_2``), the thresholds as the chapter defines them, ``P_1``
    (:func:`~copylib.theory.linear.p1_analytic`) and ``P_2``, where the global
    minimum's copy share reaches 1/2 (:func:`~copylib.theory.linear.p2_numerical`),
    each labelled with the version it belongs to, and the current ``P``.

    Returns the matplotlib Figure.
    """
    import matplotlib.pyplot as plt

    P, spec, version, n_grid, n_P = _figure_args("linear", P, L, V, version, n_grid, 5, n_P)
    L, V = spec.L, spec.V
    P1, P2 = _linear_thresholds(L, V, version)
    P_range = (P1 / 4, 4 * P2) if P_range is None else _range(P_range)
    best = linear_theory.global_minimum(P, spec, version)
    # the copy share of the global minimum is nan at the symmetric point: then no other minimum is marked
    best_share = linear_theory.copy_share(best.coordinates["m"], best.coordinates["q"], L)
    others = [r.coordinates for r in linear_theory.local_minima(P, spec, version)
              if abs(float(r.order_parameter - best_share)) > 1e-3]
    best = best.coordinates
    m_max = max(1.5, 1.3 * max([best["m"]] + [r["m"] for r in others]))
    c_max = max(1.2, 1.3 * (L - 1) * max([best["q"]] + [r["q"] for r in others]))
    M, Qc = np.meshgrid(np.linspace(0.0, m_max, n_grid), np.linspace(-0.2, c_max, n_grid))
    S = linear_theory.reduced_action(M, Qc / (L - 1), P, spec, version=version)
    curve = _linear_sweep(L, V, version, P_range, n_P)
    name = _version_name(version)

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(7.6, 3.4), layout="tight")
    cs = ax.contourf(M, Qc, np.log1p(S - S.min()), levels=20, cmap="viridis")
    fig.colorbar(cs, ax=ax, label=r"$\log(1 + S - \min S)$")
    if others:
        ax.plot([r["m"] for r in others], [(L - 1) * r["q"] for r in others], "wo", mfc="none", ms=10, mew=1.5,
                label="other local minimum")
    ax.plot(best["m"], (L - 1) * best["q"], "r*", ms=14, label="global minimum")
    ax.set_xlabel("pooling weight $m$")
    ax.set_ylabel("copy part $(L-1)\\,q$")
    ax.set_title(f"linear attention, {name} action, L = {L}, V = {V}, P = {P:.4g}", fontsize=9)
    ax.legend(fontsize=8, loc="upper right")
    bx.plot(curve.P, curve.coordinates["m"], ".-", ms=3, label="$m$")
    bx.plot(curve.P, (L - 1) * curve.coordinates["q"], ".-", ms=3, label="$(L-1)\\,q$")
    for x, label, style in ((P1, f"$P_1$ ({name}) = {P1:.1f}", ":"),
                            (P2, f"$P_2$ ({name}) = {P2:.0f}", "--")):
        if P_range[0] <= x <= P_range[1]:
            bx.axvline(x, color="0.4", ls=style, lw=1, label=label)
    _finish_sweep_panel(bx, P, "at the global minimum", f"global minimum of the {name} action along $P$")
    return fig


def _finish_sweep_panel(bx, P, ylabel, title):
    """The right panel of a landscape figure: the current ``P`` marked on a log axis of sample sizes."""
    bx.axvline(P, color="r", lw=1, label="current $P$")
    bx.set_xscale("log")
    bx.set_xlabel("number of training sequences $P$")
    bx.set_ylabel(ylabel)
    bx.set_title(title, fontsize=9)
    bx.legend(fontsize=8)


def _range(P_range) -> tuple:
    lo, hi = (check_positive("P_range", x) for x in P_range)
    if not lo < hi:
        raise ValueError(f"P_range must be (low, high) with 0 < low < high, got {tuple(P_range)}")
    return float(lo), float(hi)


@functools.lru_cache(maxsize=32)
def _linear_thresholds(L, V, version):
    """``(P_1, P_2)`` as the chapter computes them: the exact ``P_1`` and the numerical ``P_2`` (copy share 1/2)."""
    spec = ModelSpec(L=L, V=V, kind="linear")
    return linear_theory.p1_analytic(spec, version), linear_theory.p2_numerical(spec, version, rtol=1e-4)


@functools.lru_cache(maxsize=32)
def _linear_sweep(L, V, version, P_range, n_P):
    """The minimiser along the ``P`` sweep (the same for every frame, so computed once), with 21 more points
    within 5 % of ``P_2``, where the copy share changes fastest (and jumps, at large ``L``)."""
    spec = ModelSpec(L=L, V=V, kind="linear")
    P2 = _linear_thresholds(L, V, version)[1]
    near = P2 * np.geomspace(0.95, 1.05, 21)
    grid = np.union1d(np.geomspace(*P_range, n_P), near[(near > P_range[0]) & (near < P_range[1])])
    return linear_theory.minimum_curve(grid, spec, version)


@functools.lru_cache(maxsize=16)
def _softmax_sweep(L, V, version, P_range, n_P):
    """The branches along the ``P`` sweep and the first-order point (``None`` without coexistence)."""
    spec = ModelSpec(L=L, V=V, kind="softmax")
    branches = _softmax_branches(np.geomspace(*P_range, n_P), spec, version)
    try:
        point = softmax_theory.first_order_point(spec, version)
    except ValueError:  # no coexistence: a continuous crossover at these sizes
        point = None
    return branches, point


def _softmax_branches(P_values: npt.ArrayLike, spec: ModelSpec,
                     version: str = "mean_field") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every local minimum ``Delta`` of the softmax action at each ``P`` of ``P_values``.

    Returns ``(P, Delta, is_global)``: three flat arrays, one entry per
    (``P``, minimum) pair, for a scatter plot of the branches.
    """
    P_values = np.asarray(P_values, dtype=float)
    Ps, Ds, glob = [], [], []
    for P in P_values:
        mins = softmax_theory.local_minima(float(P), spec, version)
        D = [r.coordinates["Delta"] for r in mins]
        F = [r.action for r in mins]
        Ps.extend([P] * len(D))
        Ds.extend(D)
        glob.extend(np.arange(len(D)) == np.argmin(F))
    return np.asarray(Ps), np.asarray(Ds), np.asarray(glob, dtype=bool)


def softmax_landscape_figure(P: float, L: int = 32, V: int = 4, version: str | None = None,
                             Delta_max: float | None = None, n_grid: int = 400,
                             P_range: tuple[float, float] = (50.0, 2000.0), n_P: int = 60) -> Figure:
    """The softmax reduced action ``S(Delta)`` at one ``P`` and its branches along a ``P`` sweep.

    Left: ``S(Delta) - S(0)`` with the global minimum (red star) and the other
    local minimum (open circle) when two coexist. Right: every local minimum
    ``Delta`` against ``P`` (filled: global, open: metastable), the spinodals
    (dotted) and the first-order point ``P_3`` (dashed) when the transition is
    first order at these sizes, and the current ``P``. ``Delta_max`` (default:
    1.5 times the largest minimum, at least 2.5) bounds the left panel.

    Returns the matplotlib Figure.
    """
    import matplotlib.pyplot as plt

    P, spec, version, n_grid, n_P = _figure_args("softmax", P, L, V, version, n_grid, 11, n_P)
    L, V = spec.L, spec.V
    found = softmax_theory.local_minima(P, spec, version)
    minima = np.array([r.coordinates["Delta"] for r in found])
    F_min = np.array([r.action for r in found])
    if Delta_max is None:
        Delta_max = max(2.5, 1.5 * float(minima.max()))
    Delta_max = check_positive("Delta_max", Delta_max)
    D = np.linspace(0.0, Delta_max, n_grid)
    S = softmax_theory.reduced_action(D, P, spec, version=version)
    S0 = S[0]

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(7.6, 3.4), layout="tight")
    ax.plot(D, S - S0, "k-", lw=1.5)
    for i, (d, f) in enumerate(zip(minima, F_min)):
        is_global = i == int(np.argmin(F_min))
        ax.plot(d, f - S0, "r*" if is_global else "o", ms=14 if is_global else 9,
                mfc=None if is_global else "none", mec="r" if is_global else "C0",
                label="global minimum" if is_global else "local (metastable) minimum")
    ax.set_xlabel("logit gap $\\Delta$")
    ax.set_ylabel("$S(\\Delta) - S(0)$ (nats)")
    name = _version_name(version)
    ax.set_title(f"softmax attention, {name} action, L = {L}, V = {V}, P = {P:.4g}", fontsize=9)
    ax.legend(fontsize=8)

    (Ps, Ds, glob), point = _softmax_sweep(L, V, version, _range(P_range), n_P)
    bx.plot(Ps[glob], Ds[glob], "o", ms=4, color="C0", label="global minimum")
    bx.plot(Ps[~glob], Ds[~glob], "o", ms=4, mfc="none", color="C1", label="metastable minimum")
    if point is not None:
        for x, label in ((point.spinodals.P_lower, "spinodals"), (point.spinodals.P_upper, None)):
            bx.axvline(x, color="0.4", ls=":", lw=1, label=label)
        bx.axvline(point.P3, color="0.2", ls="--", lw=1, label=f"$P_3$ ({name}) = {point.P3:.0f}")
    _finish_sweep_panel(bx, P, "$\\Delta$ at the minima", f"branches of minima of the {name} action")
    return fig


_LANDSCAPE_FIGURES = {"linear": linear_landscape_figure, "softmax": softmax_landscape_figure}


def _landscape_kind(kind: str) -> str:
    """``kind`` if it is registered (:func:`copylib.model.attention.attention_kind`) and has a landscape figure."""
    name = attention_kind(kind).name
    if name not in _LANDSCAPE_FIGURES:
        raise ValueError(f"kind={kind!r} has no landscape figure; kinds with one: {tuple(_LANDSCAPE_FIGURES)}")
    return name


def landscape_figure(P: float, L: int = 32, V: int = 4, kind: str = "softmax",
                     version: str | None = None) -> Figure:
    """:func:`linear_landscape_figure` or :func:`softmax_landscape_figure` by ``kind``."""
    return _LANDSCAPE_FIGURES[_landscape_kind(kind)](P, L, V, version)


def landscape_explorer(P_values: Sequence[float] | npt.ArrayLike, L: int = 32, V: int = 4, kind: str = "softmax",
                       version: str | None = None, default: float | None = None) -> ipywidgets.VBox:
    """:func:`landscape_figure` at each ``P`` of ``P_values``, behind a slider that works on the website.

    The slider's frames are drawn once (``default``, one of ``P_values``, is shown
    first; the middle one if ``None``). Below them, controls for any ``P``, ``L``,
    ``V``, attention kind and theory version redraw the figure in a running
    notebook (hidden on the website, where they could not work).
    """
    P_axis = frames.sample_size_axis(P_values, default)
    L = check_int("L", L, 2)
    V = check_int("V", V, 2)
    kind = _landscape_kind(kind)
    version = _check_version(kind, version)
    title = f"<b>{kind} attention, {_version_name(version)} action, L = {L}, V = {V}</b>"
    explorer = frames.frame_explorer([P_axis], lambda P: landscape_figure(P, L, V, kind, version), title=title)
    live = _landscape_live(P_axis.values[P_axis.default], L, V, kind, version)
    return frames.with_live(explorer, live)


#: The default ``P / P_2`` frames of :func:`linear_size_explorer`: one below ``P_1`` of the mean-field action
#: at ``L = 32`` (``P_1/P_2 = 0.05``), then dense near ``P_2``, where a first-order jump's two minima coexist
#: (within 0.3 % of ``P_2`` for the MAP action at ``L = 128``, ``V = 4``).
LINEAR_SIZE_RATIOS = (0.03, 0.3, 0.6, 0.9, 0.95, 0.99, 0.999, 1.001, 1.01, 1.05, 1.1, 1.5, 3.0)


def linear_size_explorer(L_values: int | Sequence[int] = (32, 128), V: int = 4,
                         versions: str | Sequence[str] = ("mean_field", "map"),
                         P_over_P2: float | Sequence[float] = LINEAR_SIZE_RATIOS,
                         default: tuple | None = None) -> ipywidgets.VBox:
    """:func:`linear_landscape_figure` for each version, sequence length ``L`` and ``P / P_2``, on the website.

    Three controls: the version of the action (``versions``), ``L`` (``L_values``:
    e.g. the chapter's ``L = 32``, where the copy share rises continuously, and a
    size where the global minimum of the MAP and ``fluct`` actions jumps, such as
    ``L = 128``) and ``P`` in units of that version's ``P_2`` at that ``L``
    (:func:`~copylib.theory.linear.p2_numerical`, where the copy share reaches 1/2),
    so that one slider position means the same stage of the transition in every
    frame; each frame names its ``P``. Near a jump two local minima coexist in a
    narrow window around ``P_2``, hence the default frames at ``0.999`` and ``1.001``.
    ``default = (version, L, ratio)`` is shown first (the last version, the largest
    ``L``, the ratio closest below 1 if ``None``). Below the frames, controls for any
    ``P``, ``L``, ``V`` and version redraw the figure in a running notebook (hidden on
    the website). Frames: ``len(versions) * len(L_values) * len(P_over_P2)``, about
    12 kB each: keep them under 80 for the 1 MB budget of an explorer.
    """
    versions = tuple(versions) if not isinstance(versions, str) else (versions,)
    if not versions:
        raise ValueError("versions must be non-empty")
    versions = tuple(_check_version("linear", v) for v in versions)
    if len(set(versions)) != len(versions):
        raise ValueError(f"versions must be distinct, got {versions}")
    L_list = [check_int("L_values", Lv, 2) for Lv in np.atleast_1d(np.asarray(L_values, dtype=object))]
    if not L_list or len(set(L_list)) != len(L_list):
        raise ValueError(f"L_values must be non-empty and distinct, got {L_values}")
    V = check_int("V", V, 2)
    ratios = [float(check_positive("P_over_P2", r)) for r in np.atleast_1d(np.asarray(P_over_P2, dtype=object))]
    if not ratios or len(set(ratios)) != len(ratios):
        raise ValueError(f"P_over_P2 must be non-empty and distinct, got {P_over_P2}")
    names = {_version_name(v): v for v in versions}
    if default is None:
        below = [r for r in ratios if r < 1]
        default = (versions[-1], L_list[-1], max(below) if below else ratios[0])
    if not isinstance(default, tuple) or len(default) != 3:
        raise ValueError(f"default must be (version, L, ratio), got {default!r}")
    v0, L0, r0 = default
    if v0 not in versions or L0 not in L_list or r0 not in ratios:
        raise ValueError(f"default must be (one of {versions}, one of {L_list}, one of {ratios}), got {default!r}")
    axes = [frames.axis("version", list(names), default=_version_name(v0)),
            frames.axis("L", L_list, default=L0),
            frames.axis("ratio", ratios, "{:.4g}", default=r0, description="P/P₂")]

    def draw(version, L, ratio):
        v = names[version]
        return linear_landscape_figure(ratio * _linear_thresholds(L, V, v)[1], L, V, v)

    title = f"<b>linear attention, V = {V}: the crossover at P₂ for L = {', '.join(map(str, L_list))}</b>"
    explorer = frames.frame_explorer(axes, draw, title=title)
    live = _landscape_live(r0 * _linear_thresholds(L0, V, v0)[1], L0, V, "linear", v0)
    return frames.with_live(explorer, live)


def _landscape_live(P, L, V, kind, version):
    import ipywidgets as w

    P_w = w.FloatLogSlider(value=P, base=10, min=0, max=5, step=0.01, description="P")
    L_w = w.IntSlider(value=L, min=4, max=256, description="L")
    V_w = w.IntSlider(value=V, min=2, max=16, description="V")
    kind_w = w.Dropdown(options=list(_LANDSCAPE_FIGURES), value=kind, description="kind")
    version_w = w.Dropdown(options=list(_versions(kind)), value=version, description="version")
    out = w.Output()

    def sync_versions(change):
        version_w.options = list(_versions(change["new"]))
        version_w.value = version_w.options[0]

    def redraw(_=None):
        out.clear_output(wait=True)
        with out:
            frames.show(landscape_figure(P_w.value, L_w.value, V_w.value, kind_w.value, version_w.value))

    kind_w.observe(sync_versions, names="value")
    for control in (P_w, L_w, V_w, version_w):
        control.observe(redraw, names="value")
    return w.VBox([w.HBox([P_w, L_w, V_w]), w.HBox([kind_w, version_w]), out])
