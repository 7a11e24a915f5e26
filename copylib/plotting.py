"""Plotting helpers used by the chapters (matplotlib, one axis in, the same axis out)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy.typing as npt

from .arguments import as_real_array, check_finite
from .model.losses import constant_predictor_loss, perfect_copy_loss, uniform_pooling_loss

if TYPE_CHECKING:
    from matplotlib.axes import Axes


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


def attention_heatmap(ax: Axes, A: npt.ArrayLike, title: str = "") -> Axes:
    """The attention matrix ``A`` (``L x L``) as a heat map, rows = query positions ``l``, columns = key
    positions ``k`` (the book's ``A_{lk}``), on the fixed colour scale 0 to 1 that the colour bar states
    (as the explorers' attention maps: matrices drawn apart stay comparable)."""
    from matplotlib.ticker import MaxNLocator

    A = as_real_array("A", A)
    if A.ndim != 2:
        raise ValueError(f"A must be a matrix (L, L), got shape {A.shape}")
    check_finite("A", A)
    im = ax.imshow(A, cmap="viridis", vmin=0.0, vmax=1.0, interpolation="nearest")
    ax.set_xlabel("key position $k$")
    ax.set_ylabel("query position $l$")
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title(title, fontsize=9)
    ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="attention weight (fixed scale 0 to 1)")
    return ax
