"""Property tests of copylib.plotting: the chapters' plotting helpers.

Valid arguments draw on and return the given axes; invalid sizes raise ValueError
or TypeError naming the parameter.
"""

from __future__ import annotations

import math

import matplotlib
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from copylib import plotting

from props_helpers import bad_ints, budget, covers, raises_naming

matplotlib.use("Agg")


@covers(plotting.reference_lines, plotting.loss_vs_sample_size)
@budget(3)
@given(L=st.integers(2, 8), V=st.integers(2, 8), n=st.integers(1, 5))
def test_plotting_valid(L, V, n):
    import matplotlib.pyplot as plt

    fig, (ax, ax2) = plt.subplots(1, 2)
    try:
        assert plotting.reference_lines(ax, L, V) is ax
        P = np.geomspace(1, 100, n)
        assert plotting.loss_vs_sample_size(ax2, P, {"a": np.linspace(1, 0, n)}, L, V) is ax2
    finally:
        plt.close(fig)


@covers(plotting.reference_lines, plotting.loss_vs_sample_size)
@budget(10)
@given(data=st.data())
def test_plotting_invalid(data):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    try:
        which = data.draw(st.sampled_from(["reference_lines", "loss_vs_sample_size"]))
        name = data.draw(st.sampled_from(["L", "V"]))
        args = {"L": 4, "V": 3}
        args[name] = data.draw(bad_ints(2))
        with raises_naming(name):
            if which == "reference_lines":
                plotting.reference_lines(ax, **args)
            else:
                plotting.loss_vs_sample_size(ax, [1, 2], {"a": [1.0, 0.5]}, **args)
    finally:
        plt.close(fig)


@covers(plotting.three_panels)
@budget(3)
@given(width=st.floats(4.0, 8.0), height=st.floats(3.0, 7.0))
def test_three_panels_two_above_one_centred_below(width, height):
    import matplotlib.pyplot as plt

    fig, axes = plotting.three_panels(width, height)
    try:
        assert len(axes) == 3 and tuple(fig.get_size_inches()) == (width, height)
        fig.canvas.draw()
        a, b, c = (ax.get_position() for ax in axes)
        assert a.x1 <= b.x0 and abs(a.y0 - b.y0) < 1e-9, "the first two side by side"
        assert c.y1 <= min(a.y0, b.y0), "the third below them"
        centre = (a.x0 + b.x1) / 2
        assert abs((c.x0 + c.x1) / 2 - centre) < 0.05, "the third centred under the pair"
    finally:
        plt.close(fig)


@covers(plotting.three_panels)
@budget(10)
@given(data=st.data())
def test_three_panels_invalid_size(data):
    name = data.draw(st.sampled_from(["width", "height"]))
    args = {"width": 6.0, "height": 4.0}
    args[name] = data.draw(st.sampled_from([0.0, -1.0, math.inf, math.nan]))
    with raises_naming(name):
        plotting.three_panels(**args)
