"""copylib.explorers: the attention, training, marginal, threshold and induction figures and their
explorers; every explorer (the landscapes of copylib.landscape_explorers too) names a bad parameter."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import ipywidgets as w
import matplotlib.pyplot as plt
import numpy as np
import pytest

import copylib as cl
from copylib import explorers as ex


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_attention_figure_reports_the_copy_weight_in_words():
    A = cl.copy_attention(1.5, 8)
    fig = ex.attention_figure(np.asarray(A), "planted")
    title = fig.axes[0].get_title()
    assert f"copy weight = {float(cl.copy_weight(A)):.3f}" in title and "uniform: 0.125" in title
    # no order-parameter symbols: the copy task's readers meet m, q and r^2 two chapters later (issue 37)
    assert not any(sym in title for sym in ("m =", "q =", "r$^2$"))


@pytest.mark.parametrize("A", [np.full((6, 6), 1 / 6) + np.eye(6) * 1e-3, np.asarray(cl.copy_attention(4.0, 6)),
                               np.eye(6)[np.r_[5, 0:5]]])
def test_attention_colours_have_one_scale_zero_to_one_whatever_the_matrix(A):
    """Almost uniform attention stays dark: the colours are not stretched to each frame's range (issue 37)."""
    A = A / A.sum(1, keepdims=True)
    fig = ex.attention_figure(A)
    image = fig.axes[0].images[0]
    assert image.get_clim() == (0.0, 1.0)
    assert "0 to 1" in fig.axes[1].get_ylabel()            # the colour bar states the scale
    # the largest weight gets the colour of its value, not the top of the map (uniform rows stay dark)
    np.testing.assert_allclose(image.to_rgba(np.array([A.max()]))[0], image.cmap(A.max()))


class _Sweep:
    def __init__(self, P, A, test_loss):
        self.P, self.A, self.test_loss = P, A, test_loss


def _sweeps():
    P = np.array([10.0, 100.0, 1000.0])
    soft = np.stack([np.asarray(cl.copy_attention(d, 6)) for d in (0.0, 1.0, 3.0)])
    lin = np.stack([np.full((6, 6), 1 / 6) + 0.05 * k * np.eye(6)[np.r_[5, 0:5]] for k in range(3)])  # copies more
    return {"linear": _Sweep(P, lin, np.array([0.9, 0.8, 0.7])),
            "softmax": _Sweep(P, soft, np.array([0.95, 0.6, 0.3]))}


def _walk(x):
    yield x
    for c in getattr(x, "children", ()):
        yield from _walk(c)


def _images(box):
    return [x for x in _walk(box) if isinstance(x, w.Image)]


def test_training_figure_shows_the_chosen_kind_and_P():
    fig = ex.training_figure(_sweeps(), "softmax", 100.0)
    title = fig.axes[0].get_title()
    A = np.asarray(cl.copy_attention(1.0, 6))
    assert "softmax attention, P = 100" in title and f"copy weight = {float(cl.copy_weight(A)):.3f}" in title
    star = next(line for line in fig.axes[1].lines if line.get_marker() == "*")
    assert (star.get_xdata()[0], star.get_ydata()[0]) == (100.0, 0.6)
    assert fig.axes[0].images[0].get_clim() == (0.0, 1.0)  # softmax: the whole range of a weight
    # linear attention (weights near 0.1 on the copy task): its sweep's range, the same for every P, on the colour bar
    linear = [ex.training_figure(_sweeps(), "linear", P) for P in (10.0, 1000.0)]
    top = 1 / 6 + 0.1
    for f in linear:
        assert f.axes[0].images[0].get_clim() == pytest.approx((0.0, top))
        assert f"fixed scale 0 to {top:.2g}" in f.axes[-1].get_ylabel()  # the colour bar
    with pytest.raises(ValueError, match="P must be one of"):
        ex.training_figure(_sweeps(), "softmax", 50.0)


def test_sweep_colour_scale_is_the_range_of_unbounded_weights_only():
    soft = np.stack([np.asarray(cl.copy_attention(d, 5)) for d in (0.0, 2.0)])
    assert ex._sweep_scale(soft) == (0.0, 1.0)
    lin = np.stack([0.02 * np.eye(5), -0.1 * np.eye(5)[np.r_[4, 0:4]] + 0.01])  # the second shown as -A
    assert ex._sweep_scale(lin) == pytest.approx((-0.01, 0.09))  # -A: 0.1 on the copy entries, -0.01 elsewhere
    assert ex._sweep_scale(np.zeros((2, 5, 5))) == (0.0, 1.0)  # no range to span


def test_linear_attention_of_either_sign_shows_one_picture():
    """A linear run that ended at -A (the gauge (G, b, W) -> (-G, -b, -W)) is shown as A: its copy pattern is
    on the colour scale and its copy weight positive, not a dark map with a negative copy weight (issue 37)."""
    A = np.eye(6)[np.r_[5, 0:5]] * 0.8 + 0.2 / 6  # copying, pooling amplitude m > 0
    P = np.array([10.0])
    shown = [ex.training_figure({"linear": _Sweep(P, a[None], np.array([0.5]))}, "linear", 10.0) for a in (A, -A)]
    plus, minus = (f.axes[0] for f in shown)
    np.testing.assert_array_equal(plus.images[0].get_array(), minus.images[0].get_array())
    assert f"copy weight = {float(cl.copy_weight(A)):.3f}" in minus.get_title() and "-A" in minus.get_title()
    assert "-A" not in plus.get_title()


def test_training_explorer_frames_every_kind_and_P():
    box = ex.training_explorer(_sweeps(), default=("linear", 10.0))
    assert len(_images(box)) == 6 and len({i.value for i in _images(box)}) == 6


def test_marginal_figure_marks_both_minima_inside_the_window():
    from copylib.theory import softmax_marginal as sm

    spec = cl.ModelSpec(L=32, V=4, kind="softmax")
    cum = sm.row_cumulants(spec, np.random.default_rng(11))
    exact = sm.marginal_transition(spec, cum, P_range=(500.0, 700.0), n_scan=11)
    m = sm.plugin_marginal(exact.P3, spec, cum)
    fig = ex.marginal_figure(m, [500.0, 700.0], [0.1, 0.2])
    star = next(line for line in fig.axes[0].lines if line.get_marker() == "*")
    np.testing.assert_allclose(star.get_xdata(), sm.marginal_branches(m).minima)
    assert len(star.get_xdata()) == 2
    with pytest.raises(ValueError, match="marginal"):
        ex.marginal_figure(sm.plugin_marginal(None, spec, cum), [1.0, 2.0], [0.1, 0.2])


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
    (lambda: ex.linear_size_explorer(L_values=(1, 32)), "L_values"),
    (lambda: ex.linear_size_explorer(L_values=()), "L_values"),
    (lambda: ex.linear_size_explorer(versions=("bayes",)), "version"),
    (lambda: ex.linear_size_explorer(P_over_P2=(0.5, -1.0)), "P_over_P2"),
    (lambda: ex.linear_size_explorer(default=("map", 64, 0.999)), "default"),
    (lambda: ex.linear_size_explorer(V=1), "V"),
])
def test_bad_input_names_the_parameter(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def test_induction_figure_key_axis_names_what_its_ticks_show():
    """Layer 2's key axis has the sequence's tokens as ticks, so its label says tokens (issue 37, item 4 of the
    second reader); both attention maps share the fixed colour scale 0 to 1."""
    L, V = 6, 3
    tokens = np.array([2, 0, 1, 2, 0, 1])
    A = np.tril(np.ones((L, L)))
    A /= A.sum(1, keepdims=True)
    fig = ex.induction_figure(A, np.eye(V), tokens, A, 10.0)
    layer2 = fig.axes[2]
    assert [t.get_text() for t in layer2.get_xticklabels()] == [str(t) for t in tokens]
    assert "token" in layer2.get_xlabel() and "position" in fig.axes[0].get_xlabel()
    assert fig.axes[0].images[0].get_clim() == layer2.images[0].get_clim() == (0.0, 1.0)
