"""copylib.explorers: figures mark the theory's minima; explorers show a static figure first."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import ipywidgets as w
import matplotlib.pyplot as plt
import numpy as np
import pytest

import copylib as cl
from copylib import explorers as ex
from copylib.theory import linear as linear_theory
from copylib.theory import softmax as softmax_theory


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_local_minima_2d_finds_both_wells():
    x, y = np.meshgrid(np.linspace(-2, 2, 41), np.linspace(-1, 1, 21))
    S = (x**2 - 1) ** 2 + y**2
    found = np.column_stack([x[ex._local_minima_2d(S)], y[ex._local_minima_2d(S)]])
    assert sorted(map(tuple, found.round(6))) == [(-1.0, 0.0), (1.0, 0.0)]


def test_softmax_branches_coexist_only_between_the_spinodals():
    spec = cl.ModelSpec(L=32, V=4, kind="softmax")
    sp = softmax_theory.spinodals(spec)
    P_grid = np.array([0.8 * sp.P_lower, 0.5 * (sp.P_lower + sp.P_upper), 1.2 * sp.P_upper])
    Ps, Ds, glob = ex.softmax_branches(P_grid, spec)
    counts = [int((Ps == P).sum()) for P in P_grid]
    assert counts == [1, 2, 1]
    assert glob.sum() == 3                    # one global minimum per P


def test_softmax_figure_marks_the_action_minima():
    fig = ex.softmax_landscape_figure(342.0, 32, 4, n_P=8)
    ax = fig.axes[0]
    D, F = softmax_theory.action_minima(342.0, cl.ModelSpec(L=32, V=4, kind="softmax"))
    marked = sorted(float(line.get_xdata()[0]) for line in ax.lines[1:])
    np.testing.assert_allclose(marked, sorted(D))


def test_linear_figure_marks_the_global_minimum():
    spec = cl.ModelSpec(L=16, V=4, kind="linear")
    fig = ex.linear_landscape_figure(60.0, 16, 4, n_grid=21, n_P=5)
    best = linear_theory.action_minimum(60.0, spec)
    star = [line for line in fig.axes[0].lines if line.get_marker() == "*"][0]
    np.testing.assert_allclose([star.get_xdata()[0], star.get_ydata()[0]], [best.m, 15 * best.q])


def test_attention_figure_reports_order_parameters():
    A = cl.copy_attention(1.5, 8)
    fig = ex.attention_figure(np.asarray(A), "planted")
    title = fig.axes[0].get_title()
    assert f"copy weight = {float(cl.copy_weight(A)):.3f}" in title


def test_explorers_return_widgets_and_show_a_static_figure(monkeypatch):
    shown = []
    monkeypatch.setattr(ex, "_show", lambda fig: shown.append(fig))
    box = ex.landscape_explorer(200.0, 16, 4, "linear")
    assert isinstance(box, w.VBox) and len(shown) == 1
    box2 = ex.attention_explorer({"a": np.eye(4), "b": np.full((4, 4), 0.25)}, default="b")
    assert isinstance(box2, w.VBox) and len(shown) == 2
    assert "0.25" in shown[-1].axes[0].get_title() or "b" in shown[-1].axes[0].get_title()


@pytest.mark.parametrize("call, match", [
    (lambda: ex.landscape_figure(-1.0, 32, 4), "P"),
    (lambda: ex.landscape_figure(100.0, 1, 4), "L"),
    (lambda: ex.landscape_figure(100.0, 32, 1), "V"),
    (lambda: ex.landscape_figure(100.0, 32, 4, "relu"), "kind"),
    (lambda: ex.landscape_figure(100.0, 32, 4, "linear", "bayes"), "version"),
    (lambda: ex.attention_figure(np.ones((3, 4))), "A must be"),
    (lambda: ex.attention_figure(np.full((3, 3), np.nan)), "finite"),
    (lambda: ex.attention_explorer({}), "attentions"),
    (lambda: ex.attention_explorer({"a": np.eye(3)}, default="z"), "default"),
])
def test_bad_input_names_the_parameter(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()
