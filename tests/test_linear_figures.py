"""Tests of copylib.linear_figures: each figure of the linear-attention chapter, drawn from small inputs."""

from __future__ import annotations

from types import SimpleNamespace

import matplotlib
import numpy as np
import pytest

from copylib import ModelSpec, linear_figures
from copylib.theory import linear as lt

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SPEC = ModelSpec(L=4, V=2, kind="linear")


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_action_grid_marks_the_global_minimum_in_every_panel():
    fig = linear_figures.action_grid(SPEC, [5, 50], ("mean_field", "map"), np.linspace(-0.3, 1.0, 9),
                                     np.linspace(-0.5, 2.0, 7))
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert len(panels) == 4 and panels[0].get_title() == "mean_field, $P = 5$"
    best = lt.global_minimum(50, SPEC, "map")
    star = panels[3].lines[0]  # row map, column P = 50
    assert star.get_xdata()[0] == best.coordinates["m"] and star.get_ydata()[0] == pytest.approx(3 * best.coordinates["q"])
    with pytest.raises(ValueError, match="m_grid"):
        linear_figures.action_grid(SPEC, [5], ("map",), [1.0, 0.0], [0.0, 1.0])


def test_minima_along_P_draws_one_curve_per_version_and_the_P1_lines():
    P = np.geomspace(1, 100, 5)
    curves = {v: lt.minimum_curve(P, SPEC, v) for v in ("mean_field", "map")}
    P1 = {v: lt.p1_analytic(SPEC, v) for v in curves}
    fig = linear_figures.minima_along_P(curves, P1, 4, 2)
    assert [len(ax.lines) for ax in fig.axes][:2] == [2 + 2, 2]  # two curves and two P1 lines on the left
    assert np.allclose(fig.axes[1].lines[1].get_ydata(), 3 * curves["map"].coordinates["q"])
    with pytest.raises(ValueError, match="P1"):
        linear_figures.minima_along_P(curves, {"map": 1.0}, 4, 2)


def test_posterior_moments_plots_the_samples_with_two_standard_errors():
    summary = SimpleNamespace(rms_m=np.array([0.5, 0.6]), rms_m_se=np.array([0.01, 0.02]), q=np.array([0.0, 0.1]),
                              q_se=np.array([0.01, 0.01]))
    fig = linear_figures.posterior_moments([(SPEC, [10, 100], summary)], np.geomspace(3, 300, 3))
    assert len(fig.axes) == 2 and fig.axes[0].get_title().startswith("$L = 4$, $V = 2$")
    bars = fig.axes[0].containers[0]
    assert np.allclose(bars.lines[0].get_ydata(), summary.rms_m)
    with pytest.raises(ValueError, match="P_line"):
        linear_figures.posterior_moments([(SPEC, [10], summary)], [3.0])


def test_onset_scan_and_large_L_draw_one_curve_per_size():
    rows = {(4, 2): SimpleNamespace(m2=np.array([1.0, 2.0]), m2_star=2.0, binder=np.array([0.1, 0.5]))}
    fig = linear_figures.onset_scan(SimpleNamespace(f=np.array([0.5, 2.0]), rows=rows))
    assert np.allclose(fig.axes[0].lines[0].get_ydata(), [0.5, 1.0])
    marginal = SimpleNamespace(x=np.linspace(0, 1, 5), density=np.ones(5), P=90.0)
    switch = SimpleNamespace(switch={64: SimpleNamespace(marginal=marginal)}, P2={64: 100.0})
    fig = linear_figures.large_L([0.5, 2.0], {("map", 32): [0.1, 0.9]}, [0.8, 1.2], {32: [0.2, 0.3]}, switch,
                                 ("mean_field", "map"))
    assert fig.axes[0].lines[0].get_color() == "C1" and "0.9000" in fig.axes[2].lines[0].get_label()
    with pytest.raises(TypeError, match="switch"):
        linear_figures.large_L([1.0], {}, [1.0], {}, None, ("map",))
    with pytest.raises(TypeError, match="scan"):
        linear_figures.onset_scan(None)
