"""copylib.explorers: figures mark the theory's minima; explorers show precomputed frames, plus live controls."""

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


class _Sweep:
    def __init__(self, P, A, test_loss):
        self.P, self.A, self.test_loss = P, A, test_loss


def _sweeps():
    P = np.array([10.0, 100.0, 1000.0])
    soft = np.stack([np.asarray(cl.copy_attention(d, 6)) for d in (0.0, 1.0, 3.0)])
    lin = np.stack([np.full((6, 6), 1 / 6)] * 3)
    return {"linear": _Sweep(P, lin, np.array([0.9, 0.8, 0.7])),
            "softmax": _Sweep(P, soft, np.array([0.95, 0.6, 0.3]))}


def _images(box):
    def walk(x):
        yield x
        for c in getattr(x, "children", ()):
            yield from walk(c)
    return [x for x in walk(box) if isinstance(x, w.Image)]


def test_landscape_explorer_has_one_frame_per_P_and_hidden_live_controls():
    box = ex.landscape_explorer([30.0, 60.0, 120.0], 16, 4, "linear", default=60.0)
    frames_box, live = box.children
    assert len(_images(frames_box)) == 3 and len({i.value for i in _images(frames_box)}) == 3
    assert cl.frames.LIVE_ONLY_CLASS in live._dom_classes and not _images(live)
    with pytest.raises(ValueError, match="default"):
        ex.landscape_explorer([30.0, 60.0], 16, 4, "linear", default=45.0)


def test_training_figure_shows_the_chosen_kind_and_P():
    fig = ex.training_figure(_sweeps(), "softmax", 100.0)
    title = fig.axes[0].get_title()
    A = np.asarray(cl.copy_attention(1.0, 6))
    assert "softmax attention, P = 100" in title and f"copy weight = {float(cl.copy_weight(A)):.3f}" in title
    star = [line for line in fig.axes[1].lines if line.get_marker() == "*"][0]
    assert (star.get_xdata()[0], star.get_ydata()[0]) == (100.0, 0.6)
    with pytest.raises(ValueError, match="P must be one of"):
        ex.training_figure(_sweeps(), "softmax", 50.0)


def test_training_explorer_frames_every_kind_and_P():
    box = ex.training_explorer(_sweeps(), default=("linear", 10.0))
    assert len(_images(box)) == 6 and len({i.value for i in _images(box)}) == 6


def test_marginal_figure_marks_both_minima_inside_the_window():
    from copylib.theory import softmax_marginal as se

    spec = cl.ModelSpec(L=32, V=4, kind="softmax")
    cum = se.row_cumulants(spec, np.random.default_rng(11))
    exact = se.marginal_transition(spec, cum, P_range=(500.0, 700.0), n_scan=11)
    m = se.copy_weight_marginal(exact.P3, spec, cum)
    fig = ex.marginal_figure(m, [500.0, 700.0], [0.1, 0.2])
    star = [line for line in fig.axes[0].lines if line.get_marker() == "*"][0]
    np.testing.assert_allclose(star.get_xdata(), se.marginal_branches(m).minima)
    assert len(star.get_xdata()) == 2
    with pytest.raises(ValueError, match="marginal"):
        ex.marginal_figure(se.copy_weight_marginal(None, spec, cum), [1.0, 2.0], [0.1, 0.2])


def test_threshold_figure_marks_the_pair_and_explorer_notes_missing_pairs():
    from copylib.analysis.scaling import critical_sample_sizes

    names = ["P1_mean_field", "P2_mean_field", "P2_fluct", "P3_mean_field"]
    table = critical_sample_sizes([8, 12], [4, 8], names)
    fig = ex.threshold_figure(table, 12, 4)
    assert "V = 4" in fig.axes[0].get_title() and "L = 12" in fig.axes[1].get_title()
    with pytest.raises(ValueError, match="pair"):
        ex.threshold_figure(table, 8, 8)
    box = ex.threshold_explorer(table, default=(12, 8))
    assert len(_images(box)) == 4          # (8, 8) is a note, not missing


@pytest.mark.parametrize("call, match", [
    (lambda: ex.landscape_figure(-1.0, 32, 4), "P"),
    (lambda: ex.landscape_figure(100.0, 1, 4), "L"),
    (lambda: ex.landscape_figure(100.0, 32, 1), "V"),
    (lambda: ex.landscape_figure(100.0, 32, 4, "relu"), "kind"),
    (lambda: ex.landscape_figure(100.0, 32, 4, "linear", "bayes"), "version"),
    (lambda: ex.attention_figure(np.ones((3, 4))), "A must be"),
    (lambda: ex.attention_figure(np.full((3, 3), np.nan)), "finite"),
    (lambda: ex.training_explorer({}), "sweeps"),
    (lambda: ex.training_explorer(_sweeps(), default=("causal", 10.0)), "kind"),
    (lambda: ex.training_explorer(_sweeps(), default=("linear", 11.0)), "default"),
    (lambda: ex.threshold_figure(object(), 8, 4), "table"),
    (lambda: ex.landscape_explorer([], 8, 4), "P_values"),
])
def test_bad_input_names_the_parameter(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def test_live_controls_recompute_for_any_value(monkeypatch):
    shown = []
    monkeypatch.setattr(ex, "_show", lambda fig: shown.append(fig.axes[0].get_title()))
    box = ex.landscape_explorer([30.0, 60.0], 16, 4, "linear")
    live = box.children[1]

    def walk(x):
        yield x
        for c in getattr(x, "children", ()):
            yield from walk(c)
    P_w = next(x for x in walk(live) if isinstance(x, w.FloatLogSlider))
    P_w.value = 123.0                          # not one of the frames
    assert shown and "P=123" in shown[-1]
    kind_w = next(x for x in walk(live) if isinstance(x, w.Dropdown) and x.description == "kind")
    kind_w.value = "softmax"                   # switches the versions; the next move draws softmax
    P_w.value = 300.0
    assert shown[-1].startswith("softmax") and "P=300" in shown[-1]
