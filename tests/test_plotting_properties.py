"""Property tests of copylib.plotting: the chapters' plotting helpers.

Valid arguments draw on and return the given axes; invalid sizes or attention
matrices raise ValueError or TypeError naming the parameter.
"""

from __future__ import annotations

import matplotlib
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from copylib import plotting

from props_helpers import bad_ints, budget, covers, raises_naming

matplotlib.use("Agg")


@covers(plotting.reference_lines, plotting.loss_vs_sample_size, plotting.attention_heatmap)
@budget(3)
@given(L=st.integers(2, 8), V=st.integers(2, 8), n=st.integers(1, 5))
def test_plotting_valid(L, V, n):
    import matplotlib.pyplot as plt

    fig, (ax, ax2, ax3) = plt.subplots(1, 3)  # the heat map needs a linear axis
    try:
        assert plotting.reference_lines(ax, L, V) is ax
        P = np.geomspace(1, 100, n)
        assert plotting.loss_vs_sample_size(ax2, P, {"a": np.linspace(1, 0, n)}, L, V) is ax2
        A = np.full((L, L), 1 / L)               # uniform attention: dark, not stretched to the colour map's top
        assert plotting.attention_heatmap(ax3, A, "t") is ax3
        assert ax3.images[0].get_clim() == (0.0, 1.0) and "$k$" in ax3.get_xlabel()
    finally:
        plt.close(fig)


@covers(plotting.reference_lines, plotting.loss_vs_sample_size, plotting.attention_heatmap)
@budget(10)
@given(data=st.data())
def test_plotting_invalid(data):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    try:
        which = data.draw(st.sampled_from(["reference_lines", "loss_vs_sample_size", "attention_heatmap"]))
        if which == "attention_heatmap":
            A = data.draw(st.sampled_from([np.zeros(3), np.zeros((2, 3, 3)), np.full((2, 2), np.nan), None]))
            with raises_naming("A"):
                plotting.attention_heatmap(ax, A)
            return
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
