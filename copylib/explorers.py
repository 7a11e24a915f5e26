"""Interactive explorers for the chapters (matplotlib figures driven by ipywidgets).

Each explorer comes in two parts: a figure function (plain matplotlib, no
widgets, tested on its own) and an ``*_explorer`` function that shows that
figure once at its default arguments -- so the rendered page reads well without
a kernel -- and returns sliders that redraw it in a live notebook.
"""

from __future__ import annotations

import numpy as np

from .theory import linear as linear_theory
from .theory import softmax as softmax_theory
from .arguments import check_int, check_positive
from .model.attention import attention_kind
from .model.network import ModelSpec
from .posterior.order_parameters import copy_weight, order_parameters

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
    if version not in allowed:
        raise ValueError(f"version must be one of {allowed} for kind={kind!r}, got {version!r}")
    return version


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


def _local_minima_2d(S: np.ndarray) -> np.ndarray:
    """Boolean mask of interior grid points lower than their 8 neighbours."""
    inner = S[1:-1, 1:-1]
    mask = np.ones_like(inner, dtype=bool)
    for di in (-1, 0, 1):
        for dj in (-1, 0, 1):
            if di or dj:
                mask &= inner < S[1 + di:S.shape[0] - 1 + di, 1 + dj:S.shape[1] - 1 + dj]
    out = np.zeros_like(S, dtype=bool)
    out[1:-1, 1:-1] = mask
    return out


def linear_landscape_figure(P: float, L: int = 32, V: int = 4, version: str | None = None,
                            n_grid: int = 81, P_range=(1.0, 3000.0), n_P: int = 40):
    """The linear reduced action ``S(m, q)`` at one ``P`` and its minimiser along a ``P`` sweep.

    Left: ``log(1 + S - min S)`` over the pooling weight ``m`` and the copy part
    ``(L-1) q``, with the global minimum (red star, from
    :func:`copylib.theory.linear.action_minimum`) and any other local minimum of the
    grid (white circles). Right: ``m`` and ``(L-1) q`` at the global minimum over
    ``P_range`` (log axis), the analytic ``P_1`` and ``P_2`` and the current ``P``.

    Returns the matplotlib Figure.
    """
    import matplotlib.pyplot as plt

    P, spec, version, n_grid, n_P = _figure_args("linear", P, L, V, version, n_grid, 5, n_P)
    L, V = spec.L, spec.V
    best = linear_theory.action_minimum(P, spec, version)
    m_max = max(1.5, 1.3 * best.m)
    c_max = max(1.2, 1.3 * (L - 1) * best.q)
    M, Qc = np.meshgrid(np.linspace(0.0, m_max, n_grid), np.linspace(-0.2, c_max, n_grid))
    S = linear_theory.reduced_action(M, Qc / (L - 1), P, spec, version=version)
    curve = linear_theory.minimum_curve(np.geomspace(*P_range, n_P), spec, version)
    P1 = linear_theory.p1_analytic(spec, version)
    P2 = linear_theory.p2_analytic(spec, version)

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 4))
    cs = ax.contourf(M, Qc, np.log1p(S - S.min()), levels=20, cmap="viridis")
    fig.colorbar(cs, ax=ax, label="log(1 + S - min S)")
    local = _local_minima_2d(S)
    ax.plot(M[local], Qc[local], "wo", mfc="none", ms=9, label="grid local minima")
    ax.plot(best.m, (L - 1) * best.q, "r*", ms=14, label="global minimum")
    ax.set_xlabel("pooling weight $m$")
    ax.set_ylabel("copy part $(L-1)\\,q$")
    ax.set_title(f"linear ({version}), L={L}, V={V}, P={P:.4g}", fontsize=9)
    ax.legend(fontsize=7, loc="upper right")
    bx.plot(curve.P, curve.m, "-", label="$m$")
    bx.plot(curve.P, (L - 1) * curve.q, "-", label="$(L-1)\\,q$")
    for x, name, style in ((P1, "$P_1$", ":"), (P2, "$P_2$", "--")):
        if np.isfinite(x):
            bx.axvline(x, color="0.4", ls=style, lw=1, label=f"{name} = {x:.3g}")
    bx.axvline(P, color="r", lw=1, label="current $P$")
    bx.set_xscale("log")
    bx.set_xlabel("number of training sequences $P$")
    bx.set_title("global minimum along the sweep", fontsize=9)
    bx.legend(fontsize=7)
    fig.tight_layout()
    return fig


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

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 4))
    ax.plot(D, S - S0, "k-", lw=1.5)
    for i, (d, f) in enumerate(zip(minima, F_min)):
        is_global = i == int(np.argmin(F_min))
        ax.plot(d, f - S0, "r*" if is_global else "o", ms=14 if is_global else 9,
                mfc=None if is_global else "none", mec="r" if is_global else "C0",
                label="global minimum" if is_global else "local (metastable) minimum")
    ax.set_xlabel("logit gap $\\Delta$")
    ax.set_ylabel("$S(\\Delta) - S(0)$ (nats)")
    ax.set_title(f"softmax ({version}), L={L}, V={V}, P={P:.4g}", fontsize=9)
    ax.legend(fontsize=7)

    Ps, Ds, glob = softmax_branches(np.geomspace(*P_range, n_P), spec, version)
    bx.plot(Ps[glob], Ds[glob], "o", ms=4, color="C0", label="global minimum")
    bx.plot(Ps[~glob], Ds[~glob], "o", ms=4, mfc="none", color="C1", label="metastable minimum")
    try:
        point = softmax_theory.first_order_point(spec, version)
    except ValueError:  # no coexistence: a continuous crossover at these sizes
        point = None
    if point is not None:
        for x, label in ((point.spinodals.P_lower, "spinodals"), (point.spinodals.P_upper, None)):
            bx.axvline(x, color="0.4", ls=":", lw=1, label=label)
        bx.axvline(point.P3, color="0.2", ls="--", lw=1, label=f"$P_3$ = {point.P3:.4g}")
    bx.axvline(P, color="r", lw=1, label="current $P$")
    bx.set_xscale("log")
    bx.set_xlabel("number of training sequences $P$")
    bx.set_ylabel("$\\Delta$ at the minima")
    bx.set_title("branches of minima", fontsize=9)
    bx.legend(fontsize=7)
    fig.tight_layout()
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


def landscape_explorer(P: float = 342.0, L: int = 32, V: int = 4, kind: str = "softmax",
                       version: str | None = None):
    """Show :func:`landscape_figure` at the given values, then return sliders that redraw it.

    Sliders: ``P`` (log scale), ``L``, ``V``, the attention kind and the theory
    version. The returned widget holds a figure that a running kernel redraws
    whenever a control changes; on a static page only the figure shown here
    (at the defaults) is visible.
    """
    import ipywidgets as w

    P, L, V = _check_sizes(P, L, V)
    kind = _landscape_kind(kind)
    version = _check_version(kind, version)
    _show(landscape_figure(P, L, V, kind, version))

    P_w = w.FloatLogSlider(value=P, base=10, min=0, max=4, step=0.01, description="P")
    L_w = w.IntSlider(value=L, min=4, max=64, description="L")
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
    note = w.HTML("<i>Live figure: move a control in a running notebook to redraw.</i>")
    return w.VBox([w.HBox([P_w, L_w, V_w]), w.HBox([kind_w, version_w]), note, out])


def attention_figure(A, title: str = ""):
    """Heat map of one attention matrix ``A`` (``L x L``) with its order parameters.

    The title line reports the pooling weight ``m``, the copy weight ``q``, the
    residual ``r^2`` (:func:`copylib.posterior.order_parameters.order_parameters`) and the
    weight on the previous token (:func:`copylib.posterior.order_parameters.copy_weight`).
    Returns the matplotlib Figure.
    """
    import matplotlib.pyplot as plt

    A = np.asarray(A, dtype=float)
    if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] < 2:
        raise ValueError(f"A must be a square L x L matrix with L >= 2, got shape {A.shape}")
    if not np.all(np.isfinite(A)):
        raise ValueError("A must be finite")
    m, q, r2 = (float(x) for x in order_parameters(A))
    c = float(copy_weight(A))
    fig, ax = plt.subplots(figsize=(4.8, 4.2))
    im = ax.imshow(A, cmap="viridis", interpolation="nearest")
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    ax.set_xlabel("key position")
    ax.set_ylabel("query position")
    ax.set_title(f"{title}\nm = {m:.3f}, q = {q:.3f}, r$^2$ = {r2:.3g}, copy weight = {c:.3f}",
                 fontsize=9)
    fig.tight_layout()
    return fig


def attention_explorer(attentions: dict, default=None):
    """Show one attention matrix, then return a selector over the others.

    ``attentions`` maps a label (e.g. ``"softmax, P = 400"``) to an ``L x L``
    array. The figure at ``default`` (the first label if ``None``) is shown
    at once; the returned dropdown redraws it in a live notebook.
    """
    import ipywidgets as w

    if not isinstance(attentions, dict) or not attentions:
        raise ValueError("attentions must be a non-empty dict of label -> L x L array")
    labels = list(attentions)
    default = labels[0] if default is None else default
    if default not in attentions:
        raise ValueError(f"default must be one of the labels {labels}, got {default!r}")
    _show(attention_figure(attentions[default], default))
    pick = w.Dropdown(options=labels, value=default, description="network")
    out = w.Output()

    def redraw(change):
        out.clear_output(wait=True)
        with out:
            _show(attention_figure(attentions[change["new"]], change["new"]))

    pick.observe(redraw, names="value")
    note = w.HTML("<i>Live figure: pick another network in a running notebook to redraw.</i>")
    return w.VBox([pick, note, out])
