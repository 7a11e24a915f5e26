"""Property tests of copylib.linear_figures: the linear-attention chapter's figures.

Valid arguments return a figure with one panel per requested combination; invalid arguments raise
ValueError or TypeError naming the parameter.
"""

from __future__ import annotations

from types import SimpleNamespace

import matplotlib
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from copylib import ModelSpec, linear_figures
from copylib.theory import linear as lt

from props_helpers import bad_spec, budget, covers, raises_naming

matplotlib.use("Agg")

VERSIONS = ("mean_field", "fluct", "map")


@covers(linear_figures.action_grid, linear_figures.minima_along_P)
@budget(3)
@given(L=st.integers(4, 6), n_P=st.integers(1, 3), versions=st.sampled_from([VERSIONS, ("map",), ("fluct", "map")]))
def test_action_grid_and_minima_valid(L, n_P, versions):
    import matplotlib.pyplot as plt

    spec = ModelSpec(L=L, V=2, kind="linear")
    try:
        fig = linear_figures.action_grid(spec, np.geomspace(5, 500, n_P), versions, np.linspace(-0.3, 1, 5),
                                         np.linspace(-0.5, 2, 5))
        assert len([ax for ax in fig.axes if ax.get_title()]) == n_P * len(versions)
        P = np.geomspace(1, 1e3, 4)
        curves = {v: lt.minimum_curve(P, spec, v) for v in versions}
        fig = linear_figures.minima_along_P(curves, {v: 1.0 for v in versions}, L, 2)
        assert len(fig.axes[1].lines) == len(versions)
    finally:
        plt.close("all")


@covers(linear_figures.action_grid, linear_figures.minima_along_P)
@budget(15)
@given(data=st.data())
def test_action_grid_and_minima_invalid(data):
    import matplotlib.pyplot as plt

    args = {"spec": ModelSpec(L=4, V=2, kind="linear"), "P_values": [5.0], "versions": ("map",),
            "m_grid": [0.0, 1.0], "Q_grid": [0.0, 1.0]}
    name = data.draw(st.sampled_from(sorted(args)))
    args[name] = data.draw({"spec": bad_spec(), "P_values": st.sampled_from([[], [0.0], [np.nan]]),
                            "versions": st.just(()), "m_grid": st.sampled_from([[0.0], [1.0, 0.0], [0.0, np.inf]]),
                            "Q_grid": st.sampled_from([[0.0], [1.0, 1.0]])}[name])
    try:
        with raises_naming(name):
            linear_figures.action_grid(**args)
        with raises_naming("curves"):
            linear_figures.minima_along_P(data.draw(st.sampled_from([{}, [], {v: None for v in "abcd"}])), {}, 4, 2)
    finally:
        plt.close("all")


def _summary(rng, n):
    return SimpleNamespace(rms_m=rng.uniform(0.1, 1, n), rms_m_se=rng.uniform(0, 0.1, n), q=rng.uniform(0, 0.1, n),
                           q_se=rng.uniform(0, 0.01, n))


@covers(linear_figures.posterior_moments, linear_figures.onset_scan, linear_figures.large_L)
@budget(3)
@given(seed=st.integers(0, 2**32 - 1), n_rows=st.integers(1, 2), n=st.integers(1, 4))
def test_posterior_moments_onset_and_large_L_valid(seed, n_rows, n):
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(seed)
    try:
        rows = [(ModelSpec(L=4 + k, V=2, kind="linear"), np.geomspace(5, 500, n), _summary(rng, n))
                for k in range(n_rows)]
        fig = linear_figures.posterior_moments(rows, np.geomspace(3, 300, 3))
        assert len(fig.axes) == 2 * n_rows
        f = np.geomspace(0.25, 4, n + 1)
        scan = SimpleNamespace(f=f, rows={(4, 2): SimpleNamespace(m2=rng.uniform(0.1, 1, n + 1), m2_star=1.0,
                                                                  binder=rng.uniform(0, 0.6, n + 1))})
        assert len(linear_figures.onset_scan(scan).axes[1].lines) == 1 + 1 + 1  # curve, P1 line, 2/3 line
        marginal = SimpleNamespace(x=np.linspace(0, 1, 5), density=rng.uniform(size=5), P=1.0)
        switch = SimpleNamespace(switch={L: SimpleNamespace(marginal=marginal) for L in range(n_rows)},
                                 P2={L: 1.0 for L in range(n_rows)})
        fig = linear_figures.large_L(f, {("map", 32): f}, f, {32: f}, switch, VERSIONS)
        assert len(fig.axes[2].lines) == n_rows
    finally:
        plt.close("all")


@covers(linear_figures.posterior_moments, linear_figures.onset_scan, linear_figures.large_L)
@budget(10)
@given(bad=st.sampled_from([None, 3, "scan", {}]))
def test_posterior_moments_onset_and_large_L_invalid(bad):
    import matplotlib.pyplot as plt

    try:
        with raises_naming("rows"):
            linear_figures.posterior_moments([], [1.0, 2.0])
        with raises_naming("P_line"):
            linear_figures.posterior_moments([(None, [1.0], None)], [0.0, 1.0])
        with raises_naming("scan"):
            linear_figures.onset_scan(bad)
        with raises_naming("switch"):
            linear_figures.large_L([1.0], {}, [1.0], {}, bad, VERSIONS)
    finally:
        plt.close("all")
