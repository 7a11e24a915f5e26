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

import functools

import numpy as np

from . import frames
from .arguments import check_int, check_positive, check_version
from .model.attention import attention_kind
from .model.network import ModelSpec
from .posterior.order_parameters import copy_weight
from .theory import linear as linear_theory
from .theory import softmax as softmax_theory
from .theory import softmax_marginal

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
                            n_grid: int = 81, P_range=None, n_P: int = 40):
    """The linear reduced action ``S(m, q)`` at one ``P`` and its minimiser along a ``P`` sweep.

    Left: ``log(1 + S - min S)`` over the pooling weight ``m`` and the copy part
    ``(L-1) q``, with the global minimum (red star, from
    :func:`copylib.theory.linear.action_minimum`) and every other local minimum
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
    best = linear_theory.action_minimum(P, spec, version)
    others = [r for r in linear_theory.local_minima([P], spec, version)[0]
              if abs(float(linear_theory.copy_share(r.m, r.q, L) - linear_theory.copy_share(best.m, best.q, L)))
              > 1e-3]
    m_max = max(1.5, 1.3 * max([best.m] + [r.m for r in others]))
    c_max = max(1.2, 1.3 * (L - 1) * max([best.q] + [r.q for r in others]))
    M, Qc = np.meshgrid(np.linspace(0.0, m_max, n_grid), np.linspace(-0.2, c_max, n_grid))
    S = linear_theory.reduced_action(M, Qc / (L - 1), P, spec, version=version)
    curve = _linear_sweep(L, V, version, P_range, n_P)
    name = _version_name(version)

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 4), layout="tight")
    cs = ax.contourf(M, Qc, np.log1p(S - S.min()), levels=20, cmap="viridis")
    fig.colorbar(cs, ax=ax, label=r"$\log(1 + S - \min S)$")
    if others:
        ax.plot([r.m for r in others], [(L - 1) * r.q for r in others], "wo", mfc="none", ms=10, mew=1.5,
                label="other local minimum")
    ax.plot(best.m, (L - 1) * best.q, "r*", ms=14, label="global minimum")
    ax.set_xlabel("pooling weight $m$")
    ax.set_ylabel("copy part $(L-1)\\,q$")
    ax.set_title(f"linear attention, {name} action, L = {L}, V = {V}, P = {P:.4g}", fontsize=9)
    ax.legend(fontsize=7, loc="upper right")
    bx.plot(curve.P, curve.m, ".-", ms=3, label="$m$")
    bx.plot(curve.P, (L - 1) * curve.q, ".-", ms=3, label="$(L-1)\\,q$")
    for x, label, style in ((P1, f"$P_1$ ({name}) = {P1:.1f}", ":"),
                            (P2, f"$P_2$ ({name}, copy share 1/2) = {P2:.0f}", "--")):
        if P_range[0] <= x <= P_range[1]:
            bx.axvline(x, color="0.4", ls=style, lw=1, label=label)
    bx.axvline(P, color="r", lw=1, label="current $P$")
    bx.set_xscale("log")
    bx.set_xlabel("number of training sequences $P$")
    bx.set_ylabel("at the global minimum")
    bx.set_title(f"global minimum of the {name} action along $P$", fontsize=9)
    bx.legend(fontsize=7)
    return fig


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
    branches = softmax_branches(np.geomspace(*P_range, n_P), spec, version)
    try:
        point = softmax_theory.first_order_point(spec, version)
    except ValueError:  # no coexistence: a continuous crossover at these sizes
        point = None
    return branches, point


def softmax_branches(P_grid, spec: ModelSpec, version: str = "mean_field"):
    """Every local minimum ``Delta`` of the softmax action at each ``P`` of ``P_grid``.

    Returns ``(P, Delta, is_global)``: three flat arrays, one entry per
    (``P``, minimum) pair, for a scatter plot of the branches.
    """
    P_grid = np.asarray(P_grid, dtype=float)
    Ps, Ds, glob = [], [], []
    for P in P_grid:
        D, F = softmax_theory.action_minima(float(P), spec, version)
        Ps.extend([P] * len(D))
        Ds.extend(D)
        glob.extend(np.arange(len(D)) == np.argmin(F))
    return np.asarray(Ps), np.asarray(Ds), np.asarray(glob, dtype=bool)


def softmax_landscape_figure(P: float, L: int = 32, V: int = 4, version: str | None = None,
                             Delta_max: float | None = None, n_grid: int = 400,
                             P_range=(50.0, 2000.0), n_P: int = 60):
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
    minima, F_min = softmax_theory.action_minima(P, spec, version)
    if Delta_max is None:
        Delta_max = max(2.5, 1.5 * float(minima.max()))
    Delta_max = check_positive("Delta_max", Delta_max)
    D = np.linspace(0.0, Delta_max, n_grid)
    S = softmax_theory.reduced_action(D, P, spec, version=version)
    S0 = S[0]

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 4), layout="tight")
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
    ax.legend(fontsize=7)

    (Ps, Ds, glob), point = _softmax_sweep(L, V, version, _range(P_range), n_P)
    bx.plot(Ps[glob], Ds[glob], "o", ms=4, color="C0", label="global minimum")
    bx.plot(Ps[~glob], Ds[~glob], "o", ms=4, mfc="none", color="C1", label="metastable minimum")
    if point is not None:
        for x, label in ((point.spinodals.P_lower, "spinodals"), (point.spinodals.P_upper, None)):
            bx.axvline(x, color="0.4", ls=":", lw=1, label=label)
        bx.axvline(point.P3, color="0.2", ls="--", lw=1, label=f"$P_3$ ({name}) = {point.P3:.0f}")
    bx.axvline(P, color="r", lw=1, label="current $P$")
    bx.set_xscale("log")
    bx.set_xlabel("number of training sequences $P$")
    bx.set_ylabel("$\\Delta$ at the minima")
    bx.set_title(f"branches of minima of the {name} action", fontsize=9)
    bx.legend(fontsize=7)
    return fig


_LANDSCAPE_FIGURES = {"linear": linear_landscape_figure, "softmax": softmax_landscape_figure}


def _landscape_kind(kind: str) -> str:
    """``kind`` if it is registered (:func:`copylib.model.attention.attention_kind`) and has a landscape figure."""
    name = attention_kind(kind).name
    if name not in _LANDSCAPE_FIGURES:
        raise ValueError(f"kind={kind!r} has no landscape figure; kinds with one: {tuple(_LANDSCAPE_FIGURES)}")
    return name


def landscape_figure(P: float, L: int = 32, V: int = 4, kind: str = "softmax", version: str | None = None):
    """:func:`linear_landscape_figure` or :func:`softmax_landscape_figure` by ``kind``."""
    return _LANDSCAPE_FIGURES[_landscape_kind(kind)](P, L, V, version)


def _show(fig):
    import matplotlib.pyplot as plt
    from IPython.display import display

    display(fig)
    plt.close(fig)


def _with_live(explorer, live):
    import ipywidgets as w

    return w.VBox([explorer, frames.live_only(live)])


def _p_axis(P_values, default):
    P_values = [check_positive("P_values", P) for P in np.atleast_1d(np.asarray(P_values, dtype=object))]
    if not P_values:
        raise ValueError("P_values must be non-empty")
    default = P_values[len(P_values) // 2] if default is None else check_positive("default", default)
    if default not in P_values:
        raise ValueError(f"default must be one of P_values {P_values}, got {default}")
    return frames.axis("P", P_values, "{:.4g}", default=default)


def landscape_explorer(P_values, L: int = 32, V: int = 4, kind: str = "softmax",
                       version: str | None = None, default: float | None = None):
    """:func:`landscape_figure` at each ``P`` of ``P_values``, behind a slider that works on the website.

    The slider's frames are drawn once (``default``, one of ``P_values``, is shown
    first; the middle one if ``None``). Below them, controls for any ``P``, ``L``,
    ``V``, attention kind and theory version redraw the figure in a running
    notebook (hidden on the website, where they could not work).
    """
    P_axis = _p_axis(P_values, default)
    L = check_int("L", L, 2)
    V = check_int("V", V, 2)
    kind = _landscape_kind(kind)
    version = _check_version(kind, version)
    title = f"<b>{kind} attention, {_version_name(version)} action, L = {L}, V = {V}</b>"
    explorer = frames.frame_explorer([P_axis], lambda P: landscape_figure(P, L, V, kind, version), title=title)
    live = _landscape_live(P_axis.values[P_axis.default], L, V, kind, version)
    return _with_live(explorer, live)


#: The default ``P / P_2`` frames of :func:`linear_size_explorer`: one below ``P_1`` of the mean-field action
#: at ``L = 32`` (``P_1/P_2 = 0.05``), then dense near ``P_2``, where a first-order jump's two minima coexist
#: (within 0.3 % of ``P_2`` for the MAP action at ``L = 128``, ``V = 4``).
LINEAR_SIZE_RATIOS = (0.03, 0.3, 0.6, 0.9, 0.95, 0.99, 0.999, 1.001, 1.01, 1.05, 1.1, 1.5, 3.0)


def linear_size_explorer(L_values=(32, 128), V: int = 4, versions=("mean_field", "map"),
                         P_over_P2=LINEAR_SIZE_RATIOS, default: tuple | None = None):
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
    return _with_live(explorer, live)


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
            _show(landscape_figure(P_w.value, L_w.value, V_w.value, kind_w.value, version_w.value))

    kind_w.observe(sync_versions, names="value")
    for control in (P_w, L_w, V_w, version_w):
        control.observe(redraw, names="value")
    return w.VBox([w.HBox([P_w, L_w, V_w]), w.HBox([kind_w, version_w]), out])


def attention_figure(A, title: str = ""):
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

    A = _check_attention(A)
    fig, ax = plt.subplots(figsize=(4.8, 4.2), layout="tight")
    _draw_attention(fig, ax, A, title)
    return fig


def _check_attention(A) -> np.ndarray:
    A = np.asarray(A, dtype=float)
    if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] < 2:
        raise ValueError(f"A must be a square L x L matrix with L >= 2, got shape {A.shape}")
    if not np.all(np.isfinite(A)):
        raise ValueError("A must be finite")
    return A


#: The colour scale of every attention heat map: the whole range of an attention weight.
_ATTENTION_SCALE = (0.0, 1.0)


def _draw_attention(fig, ax, A, title):
    from matplotlib.ticker import MaxNLocator

    c = float(copy_weight(A))
    im = ax.imshow(A, cmap="viridis", vmin=_ATTENTION_SCALE[0], vmax=_ATTENTION_SCALE[1], interpolation="nearest")
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="attention weight (fixed scale 0 to 1)")
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
            _check_attention(a)
        out[name] = (P, A, loss)
    return out


def training_figure(sweeps: dict, kind: str, P: float):
    """The attention matrix Adam learned at one ``P``, and the test loss of every kind along ``P``.

    ``sweeps`` maps an attention kind to a sweep with ``P`` (sample sizes),
    ``A`` (the kept attention matrix per ``P``) and ``test_loss`` (per ``P``), e.g.
    :class:`copylib.inference.map_training.SweepResult`. Left: the attention matrix of
    ``kind`` at ``P`` (one of the sweep's sample sizes) with its copy weight (on the fixed colour scale 0 to 1).
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
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 4.2), gridspec_kw={"width_ratios": [1, 1.15]}, layout="tight")
    _draw_attention(fig, ax, A_k[i], f"{kind} attention, P = {P:.4g}")
    for name, (P_n, _, loss) in data.items():
        bx.plot(P_n, loss, "o-", lw=2.5 if name == kind else 1, ms=4, label=f"{name} attention")
    bx.plot([P], [loss_k[i]], "r*", ms=14, label="shown on the left")
    bx.set_xscale("log")
    bx.set_xlabel("number of training sequences $P$")
    bx.set_ylabel("test loss per position")
    bx.set_title("test loss after training (Adam, kept run)", fontsize=9)
    bx.legend(fontsize=7)
    return fig


def training_explorer(sweeps: dict, default: tuple | None = None):
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
    axes = [frames.axis("kind", kinds, default=kind0), _p_axis(P_list, P0)]
    return frames.frame_explorer(axes, lambda kind, P: training_figure(sweeps, kind, P))


def marginal_figure(marginal, P_line, mean_line, c_max: float = 0.35, Omega_max: float = 8.0):
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
    P_line = np.asarray(P_line, dtype=float)
    mean_line = np.asarray(mean_line, dtype=float)
    if P_line.ndim != 1 or P_line.shape != mean_line.shape or P_line.size < 2:
        raise ValueError(f"P_line and mean_line must be 1-d of equal length >= 2, got {P_line.shape}, "
                         f"{mean_line.shape}")
    c_max = check_positive("c_max", c_max)
    Omega_max = check_positive("Omega_max", Omega_max)
    branches = softmax_marginal.marginal_branches(marginal)
    Omega = marginal.potential
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 3.8), layout="tight")
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
    ax.legend(fontsize=7, loc="upper right")
    bx.plot(P_line, mean_line, "k-", label="posterior mean of $c$")
    bx.axvline(marginal.P, color="r", lw=1, label="current $P$")
    bx.set_xlabel("number of training sequences $P$")
    bx.set_ylabel("copy weight $c$")
    bx.legend(fontsize=7)
    return fig


def marginal_explorer(P_values, spec: ModelSpec, cumulants, P_line, default: float | None = None):
    """:func:`marginal_figure` at each ``P`` of ``P_values``, behind a slider that works on the website.

    ``cumulants`` are the row cumulants of
    :func:`copylib.theory.softmax_marginal.row_cumulants` for ``spec``; the right
    panel's line is the posterior mean at every ``P`` of ``P_line``. Below the
    frames, a slider for any ``P`` in the range of ``P_line`` recomputes the
    figure in a running notebook (hidden on the website).
    """
    import ipywidgets as w

    P_axis = _p_axis(P_values, default)
    P_line = np.asarray([check_positive("P_line", P) for P in np.atleast_1d(np.asarray(P_line, dtype=object))])
    mean_line = np.array([softmax_marginal.copy_weight_marginal(P, spec, cumulants).mean() for P in P_line])

    def draw(P):
        return marginal_figure(softmax_marginal.copy_weight_marginal(P, spec, cumulants), P_line, mean_line)

    title = f"<b>softmax attention, L = {spec.L}, V = {spec.V}</b>"
    explorer = frames.frame_explorer([P_axis], draw, title=title)
    P_w = w.FloatSlider(value=P_axis.values[P_axis.default], min=float(P_line.min()), max=float(P_line.max()),
                        step=1.0, description="P")
    out = w.Output()

    def redraw(change):
        out.clear_output(wait=True)
        with out:
            _show(draw(change["new"]))

    P_w.observe(redraw, names="value")
    return _with_live(explorer, w.VBox([P_w, out]))


_THRESHOLD_LINES = (("P1_mean_field", "$P_1$ (mean field)", "C0", "o-"),
                    ("P2_mean_field", "$P_2$ (mean field)", "C1", "o-"),
                    ("P2_fluct", "$P_2$ (fluct)", "C1", "s:"),
                    ("P3_mean_field", "$P_3$ (mean field)", "C3", "o-"))


def _check_table(table):
    missing = [key for key, *_ in _THRESHOLD_LINES if key not in getattr(table, "values", {})]
    if missing:
        raise ValueError(f"table must be a ThresholdTable with the entries {missing}")
    return np.asarray(table.L), np.asarray(table.V)


def threshold_figure(table, L: int, V: int):
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
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True, layout="tight")
    for ax, sel, x, now, name in ((axes[0], Vt == V, Lt, L, "L"), (axes[1], Lt == L, Vt, V, "V")):
        order = np.argsort(x[sel])
        for key, label, color, style in _THRESHOLD_LINES:
            ax.plot(x[sel][order], np.asarray(table.values[key])[sel][order], style, color=color, ms=4, label=label)
        ax.axvline(now, color="r", lw=1, label=f"current {name}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ticks = sorted(set(x[sel].tolist()))
        ax.set_xticks(ticks, [str(t) for t in ticks])
        ax.minorticks_off()
        ax.set_xlabel(name)
    axes[0].set_ylabel("threshold $P$")
    axes[0].set_title(f"against L at V = {V}", fontsize=9)
    axes[1].set_title(f"against V at L = {L}", fontsize=9)
    axes[1].legend(fontsize=7)
    return fig


def threshold_explorer(table, default: tuple | None = None):
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
        fig, ax = plt.subplots(figsize=(10, 3.8))
        ax.text(0.5, 0.5, f"no thresholds at L = {L}, V = {V}: the table has V < L only",
                ha="center", va="center")
        ax.set_axis_off()
        return fig

    return frames.frame_explorer(axes, draw)


def induction_figure(A1, K, tokens, A2, P: float, title: str = ""):
    """The two heads of a trained induction network at one ``P``.

    A1 : ``(L, L)`` layer-1 (positional) attention; K : ``(V, V)`` layer-2 key matrix
    (query token x key token); tokens : ``(L,)`` one example sequence; A2 : ``(L, L)`` layer-2
    attention on that sequence, with its induction keys (``x_{j-1} = x_l``) ringed; its key
    axis is labelled by the tokens of the sequence, in position order. Both attention maps
    use the fixed colour scale 0 to 1. Returns the matplotlib Figure.
    """
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    A1, A2 = _check_attention(A1), _check_attention(A2)
    K = np.asarray(K, dtype=float)
    tokens = np.asarray(tokens)
    L = A1.shape[0]
    if A2.shape != A1.shape or tokens.shape != (L,) or K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"need A1, A2 (L, L), tokens (L,) and K (V, V); got {A1.shape}, {A2.shape}, "
                         f"{tokens.shape}, {K.shape}")
    P = check_positive("P", P)
    fig, axs = plt.subplots(1, 3, figsize=(11, 3.6), layout="tight")
    c1 = float(np.diagonal(A1, -1).mean())
    for ax, M, name in ((axs[0], A1, f"layer 1: positional head, copy weight {c1:.2f}"),
                        (axs[2], A2, "layer 2 on the sequence below the axis")):
        im = ax.imshow(M, cmap="viridis", vmin=_ATTENTION_SCALE[0], vmax=_ATTENTION_SCALE[1],
                       interpolation="nearest")
        ax.set_xlabel("key position")
        ax.set_ylabel("query position")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_title(name, fontsize=9)
    fig.colorbar(im, ax=axs[2], fraction=0.046, pad=0.04, label="attention weight (fixed scale 0 to 1)")
    keys = np.argwhere((tokens[:, None] == np.r_[-1, tokens[:-1]][None, :]) & np.tri(L, dtype=bool))
    axs[2].plot(keys[:, 1], keys[:, 0], "o", mfc="none", mec="r", ms=9, label="induction key")
    # the keys are labelled by their tokens (the sequence), so the axis says so; positions run left to right
    axs[2].set_xticks(range(L), [str(t) for t in tokens], fontsize=7)
    axs[2].set_xlabel("token at each key position (the sequence)")
    axs[2].legend(fontsize=7, loc="upper right")
    lim = max(np.abs(K).max(), 1e-12)
    im = axs[1].imshow(K, cmap="RdBu_r", vmin=-lim, vmax=lim, interpolation="nearest")
    fig.colorbar(im, ax=axs[1], fraction=0.046, pad=0.04, label="K entry")
    axs[1].set_xlabel("key token")
    axs[1].set_ylabel("query token")
    axs[1].set_title(f"layer 2: key matrix K (diagonal mean {np.diag(K).mean():.2f})", fontsize=9)
    fig.suptitle(f"{title} P = {P:.4g}", fontsize=10)
    return fig


def induction_explorer(P_values, A1, K, tokens, A2, default: float | None = None):
    """:func:`induction_figure` at each ``P`` of ``P_values`` (``A1, A2 (n_P, L, L)``, ``K (n_P, V, V)``,
    one example sequence ``tokens (L,)``), behind a slider that works on the website."""
    P_list = [float(p) for p in np.asarray(P_values, dtype=float)]
    A1, K, A2 = (np.asarray(a, dtype=float) for a in (A1, K, A2))
    if not (A1.shape[0] == K.shape[0] == A2.shape[0] == len(P_list)):
        raise ValueError("A1, K and A2 need one entry per P of P_values")
    index = {p: i for i, p in enumerate(P_list)}
    axes = [_p_axis(P_list, default)]
    return frames.frame_explorer(axes, lambda P: induction_figure(A1[index[P]], K[index[P]], tokens,
                                                                   A2[index[P]], P, "two-layer network,"))
