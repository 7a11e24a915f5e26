"""copylib.landscape_explorers: the landscape figures mark the theory's minima and thresholds; the explorers
show precomputed frames, plus live controls."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import ipywidgets as w
import matplotlib.pyplot as plt
import numpy as np
import pytest
from test_explorers import _images, _walk

import copylib as cl
from copylib import frames
from copylib import landscape_explorers as lx
from copylib.theory import linear as linear_theory
from copylib.theory import softmax as softmax_theory


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_softmax_branches_coexist_only_between_the_spinodals():
    spec = cl.ModelSpec(L=32, V=4, kind="softmax")
    sp = softmax_theory.spinodals(spec)
    P_grid = np.array([0.8 * sp.P_lower, 0.5 * (sp.P_lower + sp.P_upper), 1.2 * sp.P_upper])
    Ps, _Ds, glob = lx._softmax_branches(P_grid, spec)
    counts = [int((Ps == P).sum()) for P in P_grid]
    assert counts == [1, 2, 1]
    assert glob.sum() == 3                    # one global minimum per P


def test_softmax_figure_marks_the_action_minima():
    fig = lx.softmax_landscape_figure(342.0, 32, 4, n_P=8)
    ax = fig.axes[0]
    D = [r.coordinates["Delta"] for r in softmax_theory.local_minima(342.0, cl.ModelSpec(L=32, V=4, kind="softmax"))]
    marked = sorted(float(line.get_xdata()[0]) for line in ax.lines[1:])
    np.testing.assert_allclose(marked, sorted(D))


def test_linear_figure_marks_the_global_minimum():
    spec = cl.ModelSpec(L=16, V=4, kind="linear")
    fig = lx.linear_landscape_figure(60.0, 16, 4, n_grid=21, n_P=5)
    best = linear_theory.global_minimum(60.0, spec)
    star = next(line for line in fig.axes[0].lines if line.get_marker() == "*")
    np.testing.assert_allclose([star.get_xdata()[0], star.get_ydata()[0]], [best.coordinates["m"], 15 * best.coordinates["q"]])
    assert not [line for line in fig.axes[0].lines if line.get_marker() == "o"]   # one minimum at L = 16


def _legend(ax) -> list[str]:
    return [t.get_text() for t in ax.get_legend().get_texts()]


@pytest.mark.parametrize("version, name", [("mean_field", "mean field"), ("map", "MAP"), ("fluct", "fluct")])
def test_linear_figure_marks_the_thresholds_the_chapter_defines_and_names_the_version(version, name):
    """P2 is where the copy share of the global minimum reaches 1/2 (p2_numerical, as in the chapter: 372 for the
    mean field at L = 32, V = 4), not the asymptotic formula (418): issue 37, the reader's item 3."""
    spec = cl.ModelSpec(L=32, V=4, kind="linear")
    P1 = linear_theory.p1_analytic(spec, version)
    P2 = linear_theory.p2_numerical(spec, version, rtol=1e-4)
    fig = lx.linear_landscape_figure(200.0, 32, 4, version, n_grid=11, n_P=8)
    legend = _legend(fig.axes[1])
    assert f"$P_2$ ({name}) = {P2:.0f}" in legend
    assert f"$P_1$ ({name}) = {P1:.1f}" in legend
    assert f"{name} action" in fig.axes[0].get_title() and f"{name} action" in fig.axes[1].get_title()
    if version == "mean_field":
        assert f"{P2:.0f}" == "372" and f"{linear_theory.p2_analytic(spec, version):.0f}" == "418"
    lines = [line for line in fig.axes[1].lines if line.get_linestyle() == "--"]
    np.testing.assert_allclose(lines[0].get_xdata()[0], P2)


def test_linear_figure_shows_both_minima_inside_the_jump_window():
    """At L = 128 the MAP minimum jumps at P2: within 0.1 % of it two local minima coexist, both marked."""
    spec = cl.ModelSpec(L=128, V=4, kind="linear")
    P2 = linear_theory.p2_numerical(spec, "map", rtol=1e-4)
    for P in (0.999 * P2, 1.001 * P2):
        fig = lx.linear_landscape_figure(P, 128, 4, "map", n_grid=11, n_P=8)
        star = next(line for line in fig.axes[0].lines if line.get_marker() == "*")
        other = [line for line in fig.axes[0].lines if line.get_marker() == "o"]
        assert len(other) == 1 and len(other[0].get_xdata()) == 1
        shares = [float(linear_theory.copy_share(x, y / 127, 128)) for line in (star, other[0])
                  for x, y in zip(line.get_xdata(), line.get_ydata())]
        assert (shares[0] < 0.5 < shares[1]) if P < P2 else (shares[1] < 0.5 < shares[0])
    # the sweep on the right resolves the jump: the copy part changes by more than 0.1 of its range at one step
    y = next(line for line in fig.axes[1].lines if line.get_label() == "$(L-1)\\,q$").get_ydata()
    assert np.abs(np.diff(y)).max() > 0.1 * np.ptp(y)


def test_linear_size_explorer_frames_every_version_size_and_ratio():
    box = lx.linear_size_explorer(L_values=(16, 24), versions=("mean_field", "map"), P_over_P2=(0.5, 2.0),
                                  default=("map", 24, 2.0))
    frames_box, live = box.children
    images = _images(frames_box)
    assert len(images) == 8 and len({i.value for i in images}) == 8
    labels = [x.value for x in _walk(frames_box) if isinstance(x, w.HTML) and cl.frames._LABEL_CLASS in x._dom_classes]
    assert "<b>version = mean field, L = 16, P/P₂ = 0.5</b>" in labels and len(labels) == 8
    controls = {x.description: x for x in _walk(frames_box) if isinstance(x, (w.SelectionSlider, w.ToggleButtons))}
    assert set(controls) == {"version", "L", "P/P₂"}
    assert controls["version"].value == "MAP" and controls["L"].value == "24" and controls["P/P₂"].value == "2"
    assert cl.frames._LIVE_ONLY_CLASS in live._dom_classes and not _images(live)


def test_landscape_explorer_has_one_frame_per_P_and_hidden_live_controls():
    box = lx.landscape_explorer([30.0, 60.0, 120.0], 16, 4, "linear", default=60.0)
    frames_box, live = box.children
    assert len(_images(frames_box)) == 3 and len({i.value for i in _images(frames_box)}) == 3
    assert cl.frames._LIVE_ONLY_CLASS in live._dom_classes and not _images(live)
    with pytest.raises(ValueError, match="default"):
        lx.landscape_explorer([30.0, 60.0], 16, 4, "linear", default=45.0)


def test_live_controls_recompute_for_any_value(monkeypatch):
    shown = []
    monkeypatch.setattr(frames, "show", lambda fig: shown.append(fig.axes[0].get_title()))
    box = lx.landscape_explorer([30.0, 60.0], 16, 4, "linear")
    live = box.children[1]

    def walk(x):
        yield x
        for c in getattr(x, "children", ()):
            yield from walk(c)
    P_w = next(x for x in walk(live) if isinstance(x, w.FloatLogSlider))
    P_w.value = 123.0                          # not one of the frames
    assert shown and "P = 123" in shown[-1]
    kind_w = next(x for x in walk(live) if isinstance(x, w.Dropdown) and x.description == "kind")
    kind_w.value = "softmax"                   # switches the versions; the next move draws softmax
    P_w.value = 300.0
    assert shown[-1].startswith("softmax") and "P = 300" in shown[-1]
