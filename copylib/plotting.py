"""Plotting helpers used by the chapters (matplotlib, one axis in, the same axis out)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy.typing as npt

from .arguments import check_positive
from .model.losses import constant_predictor_loss, perfect_copy_loss, uniform_pooling_loss

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["loss_vs_sample_size", "reference_lines", "three_panels"]


def three_panels(width: float = 7.2, height: float = 5.8) -> tuple[Figure, list[Axes]]:
    """A figure with three panels, two side by side and the third centred below them.

    Three panels in a row are too wide for the book's column (about 6.7 inches at the
    100 dpi of the chapters' figures): shrunk to fit, their labels would print at half
    size. This layout keeps each panel about half the column wide. ``width`` and ``height`` are the
    figure's size in inches (finite, > 0).
    """
    import matplotlib.pyplot as plt

    width, height = check_positive("width", width), check_positive("height", height)

    fig, axd = plt.subplot_mosaic([["a", "a", "b", "b"], [".", "c", "c", "."]], figsize=(width, height),
                                  layout="constrained")
    return fig, [axd["a"], axd["b"], axd["c"]]


def reference_lines(ax: Axes, L: int, V: int) -> Axes:
    """Horizontal lines at the test losses of the constant, pooling and copy predictors."""
    for value, label, style in [
        (constant_predictor_loss(V), "constant $1/V$", ":"),
        (uniform_pooling_loss(L, V), "uniform pooling", "--"),
        (perfect_copy_loss(), "perfect copy", "-."),
    ]:
        ax.axhline(value, color="0.5", ls=style, lw=1, label=label)
    return ax


def loss_vs_sample_size(ax: Axes, P: npt.ArrayLike, losses: Mapping[str, npt.ArrayLike], L: int, V: int) -> Axes:
    """Test loss against ``P`` (log axis) for several labelled curves, with reference lines."""
    for label, loss in losses.items():
        ax.plot(P, loss, "o-", ms=4, label=label)
    reference_lines(ax, L, V)
    ax.set_xscale("log")
    ax.set_xlabel("number of training sequences $P$")
    ax.set_ylabel("test loss per position")
    ax.legend(fontsize=9)
    return ax
