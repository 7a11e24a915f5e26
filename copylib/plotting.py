"""Plotting helpers used by the chapters (matplotlib, one axis in, the same axis out)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy.typing as npt

from .model.losses import constant_predictor_loss, perfect_copy_loss, uniform_pooling_loss

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["loss_vs_sample_size", "reference_lines"]


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
    ax.legend(fontsize=8)
    return ax
