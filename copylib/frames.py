"""Explorers that work without a kernel: precomputed frames behind linked controls.

A frame explorer is a grid of parameter values, one :class:`Axis` per control,
and one picture per point of the grid. Each picture is drawn once, when the
chapter runs, and stored as a small palette PNG in an ``ipywidgets.Stack``;
each control is linked to its stack in the browser (``ipywidgets.jslink``), so
moving a control needs no kernel. The static website, JupyterLab and Colab
all show the frame that the controls name, and every frame carries a label
with its parameter values.

With two or more axes the stacks nest: the first control picks a child of
the outer stack, and every child holds its own copy of the next control and
stack. The copies of one control are linked to each other, so they always
agree, and only the copy in the visible child is shown.

Controls that need a running kernel (recomputing for any value) are wrapped
by :func:`live_only`: the website's style sheet hides them, a notebook shows them.
"""

from __future__ import annotations

import functools
import io
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    import ipywidgets
    from matplotlib.figure import Figure

import numpy as np
import numpy.typing as npt

from .arguments import check_positive

__all__ = ["Axis", "axis", "frame_explorer", "live_only", "png_frame", "sample_size_axis", "show", "with_live"]

# The explorers' figures are about 7.6 inches wide: at 90 dpi a frame is about as wide as the book's
# column (684 px at 1280 px), so it is shown near its drawn size and 8 pt text prints at 10 px.
_FRAME_DPI = 90

#: CSS classes the website's style sheet (``_static/copyhead.css``) and the browser test use.
_EXPLORER_CLASS = "copyhead-explorer"
_FRAME_CLASS = "copyhead-frame"
_LABEL_CLASS = "copyhead-frame-label"
_LIVE_ONLY_CLASS = "copyhead-live-only"

_MAX_TOGGLES = 4  # an axis with this few values gets buttons; more get a slider


@dataclass(frozen=True)
class Axis:
    """One control of a frame explorer: a parameter's name, its values and their labels.

    ``labels[i]`` is what the control shows for ``values[i]``; ``default`` is the
    index shown first; ``description`` is the name the control and the frame labels
    show (``name``, the frame function's keyword, if empty). Make one with :func:`axis`,
    which checks it.
    """

    name: str
    values: tuple
    labels: tuple
    default: int
    description: str = ""

    @property
    def shown_name(self) -> str:
        """The name that the control and the frame labels show (``description``, else ``name``)."""
        return self.description or self.name


def axis(name: str, values: Sequence, fmt: str = "{}", default: object = None, description: str = "") -> Axis:
    """An :class:`Axis` over ``values``, labelled ``fmt.format(value)``.

    ``default`` is one of ``values`` (the first if ``None``). The labels must be
    distinct, since the control shows them and the frames are named by them.
    ``description`` (e.g. ``"P/P₂"``) is the name shown on the control and in the
    frame labels in place of ``name``, which must be a Python identifier.
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"name must be a Python identifier (the frame function's keyword), got {name!r}")
    if not isinstance(description, str) or "=" in description or "," in description:
        raise ValueError(f"description must be a str without '=' or ',' (frame labels are 'name = value, ...'), "
                         f"got {description!r}")
    values = tuple(values)
    if not values:
        raise ValueError(f"values of axis {name!r} must be non-empty")
    labels = tuple(fmt.format(v) for v in values)
    if len(set(labels)) != len(labels):
        raise ValueError(f"values of axis {name!r} must have distinct labels under fmt={fmt!r}, got {labels}")
    if default is None:
        index = 0
    elif default in values:
        index = values.index(default)
    else:
        raise ValueError(f"default of axis {name!r} must be one of {values}, got {default!r}")
    return Axis(name, values, labels, index, description.strip())


def _frame_label(axes: Sequence[Axis], index: tuple) -> str:
    """The label of the frame at grid ``index``: ``"name = label"`` per axis (its description if it has
    one), comma-separated."""
    return ", ".join(f"{a.shown_name} = {a.labels[i]}" for a, i in zip(axes, index))


def png_frame(fig: Figure, dpi: int = _FRAME_DPI, colors: int = 64) -> bytes:
    """``fig`` as a palette PNG of at most ``colors`` colours (a few kB); closes ``fig``.

    The figure is rendered by Agg at ``dpi`` (the pixels ``savefig`` would write) and its RGB
    buffer quantised directly: no intermediate PNG. Fast octree quantisation and zlib's default
    level, because an explorer renders dozens of frames per build: they cost a tenth of median
    cut with maximal compression, for frames a few per cent larger.
    """
    return _draw_frame(fig, dpi, colors)[0]


def _draw_frame(fig: Figure, dpi: int = _FRAME_DPI, colors: int = 64,
                boxes: Sequence[tuple] | None = None) -> tuple[bytes, list[tuple]]:
    """``(png_frame of fig, the axes boxes it was drawn with)``.

    With ``boxes`` (one ``(left, bottom, width, height)`` per axes of ``fig``, in figure
    coordinates) the figure's layout engine is switched off and its axes take those boxes,
    unless something drawn (a tick label, a title) would then reach beyond the canvas: then the
    engine lays it out as usual.
    """
    import matplotlib.pyplot as plt
    from PIL import Image

    if not 2 <= colors <= 256:
        raise ValueError(f"colors must be in [2, 256], got {colors}")
    try:
        canvas = _frame_canvas_class()(fig)  # whatever the backend, the pixels come from Agg
        fig.set_dpi(dpi)
        engine = fig.get_layout_engine()
        if boxes is not None and len(boxes) == len(fig.axes):
            own = [ax.get_position(original=True) for ax in fig.axes]
            fig.set_layout_engine("none")
            for ax, box in zip(fig.axes, boxes):
                ax.set_position(box)
            canvas.draw()
            if _drawn_beyond_canvas(fig, canvas.get_renderer()):
                for ax, box in zip(fig.axes, own):
                    ax.set_position(box)
                fig.set_layout_engine(engine)
                canvas.draw()
        else:
            canvas.draw()
        drawn = [ax.get_position().bounds for ax in fig.axes]
        size = canvas.get_width_height(physical=True)
        image = Image.frombuffer("RGBA", size, canvas.buffer_rgba(), "raw", "RGBA", 0, 1).convert("RGB")
    finally:
        plt.close(fig)
    out = io.BytesIO()
    image.quantize(colors=colors, method=Image.Quantize.FASTOCTREE).save(out, format="png")
    return out.getvalue(), drawn


def _drawn_beyond_canvas(fig: Figure, renderer) -> bool:
    """Whether anything ``fig`` draws reaches more than a pixel beyond the canvas (its tight box, one
    pass over the artists: a fraction of the tight layout, which lays the ticks out several times)."""
    box, (width, height), pixel = fig.get_tightbbox(renderer), fig.get_size_inches(), 1 / fig.dpi  # inches
    return bool(box.x0 < -pixel or box.y0 < -pixel or box.x1 > width + pixel or box.y1 > height + pixel)


@functools.cache
def _frame_canvas_class():
    """An Agg canvas class whose figures share one renderer while their size and dpi stay the same.

    matplotlib caches text extents and parsed mathtext per renderer. The frames of an explorer are
    new figures of one size, each with the same tick labels, legends and axis labels; with a
    renderer of their own, every frame would lay all that text out again (up to a third of the time
    of a frame: benchmarks/bench_frame_renderer.py). The renderer is cleared before each draw, as for
    a canvas drawn twice.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg

    class FrameCanvas(FigureCanvasAgg):
        shared: ClassVar[dict] = {}  # (width, height, dpi) -> RendererAgg; one entry, that of the last frame

        def get_renderer(self):
            w, h = self.get_width_height(physical=True)
            key = (w, h, self.figure.dpi)
            if key not in self.shared:
                self.shared.clear()
                self.shared[key] = RendererAgg(w, h, self.figure.dpi)
            self.renderer, self._lastKey = self.shared[key], key
            return self.renderer

    return FrameCanvas


def _render_frames(axes: Sequence[Axis], draw: Callable, dpi: int = _FRAME_DPI) -> dict:
    """``{grid index: PNG bytes}`` with ``draw(**{axis.name: value})`` at every point of the grid.

    ``draw`` returns a matplotlib Figure, which is rendered and closed. The first frame is laid
    out by its figure's layout engine and every later one takes its axes boxes: the axes stay
    put while a control moves, and the layout, a third of a frame's time, runs once per explorer
    (again for a frame whose axes differ in number or that would then reach beyond the canvas).
    """
    axes = _checked_axes(axes)
    frames, boxes = {}, None
    for index in itertools.product(*(range(len(a.values)) for a in axes)):
        params = {a.name: a.values[i] for a, i in zip(axes, index)}
        frames[index], drawn = _draw_frame(draw(**params), dpi, boxes=boxes)
        boxes = drawn if boxes is None else boxes
    return frames


def frame_explorer(axes: Sequence[Axis], draw: Callable[..., Figure], dpi: int = _FRAME_DPI,
                   title: str = "") -> ipywidgets.VBox:
    """A widget showing ``_render_frames`` of ``draw``, one control per axis, linked in the browser."""
    axes = _checked_axes(axes)
    return _frame_stack(axes, _render_frames(axes, draw, dpi), title)


def _frame_stack(axes: Sequence[Axis], frames: dict, title: str = "") -> ipywidgets.VBox:
    """The nested stacks and linked controls over ``frames`` (as returned by ``_render_frames``).

    Returns a ``VBox``; its attribute ``jslinks`` lists the browser-side links
    (control to stack, and between the copies of one control).
    """
    import ipywidgets as w

    axes = _checked_axes(axes)
    expected = set(itertools.product(*(range(len(a.values)) for a in axes)))
    if set(frames) != expected:
        raise ValueError(f"frames must have one PNG per grid point of the axes: {len(expected)} expected, "
                         f"got {len(frames)} with other keys")
    image_layout = w.Layout(max_width="100%", height="auto")
    controls: list[list] = [[] for _ in axes]
    links = []

    def level(depth: int, prefix: tuple):
        ax = axes[depth]
        children = []
        for i in range(len(ax.values)):
            index = prefix + (i,)
            if depth + 1 < len(axes):
                children.append(level(depth + 1, index))
            else:
                label = w.HTML(f"<b>{_frame_label(axes, index)}</b>").add_class(_LABEL_CLASS)
                image = w.Image(value=frames[index], format="png", layout=image_layout).add_class(_FRAME_CLASS)
                children.append(w.VBox([label, image]))
        stack = w.Stack(children, selected_index=ax.default)
        control = _control(ax)
        links.append(w.jslink((control, "index"), (stack, "selected_index")))
        controls[depth].append(control)
        return w.VBox([control, stack])

    tree = level(0, ())
    for copies in controls:  # the copies of one control move together
        for other in copies[1:]:
            links.append(w.jslink((copies[0], "index"), (other, "index")))
    parts = ([w.HTML(title)] if title else []) + [tree]
    box = w.VBox(parts).add_class(_EXPLORER_CLASS)
    box.jslinks = tuple(links)
    return box


def live_only(widget: ipywidgets.Widget,
              note: str = "Any value: these controls recompute the figure in a running notebook.") -> ipywidgets.VBox:
    """``widget`` under a note, marked so that the website hides it (it needs a kernel)."""
    import ipywidgets as w

    return w.VBox([w.HTML(f"<i>{note}</i>"), widget]).add_class(_LIVE_ONLY_CLASS)


def with_live(explorer: ipywidgets.Widget, live: ipywidgets.Widget) -> ipywidgets.VBox:
    """``explorer`` (its frames) above ``live``, controls that need a kernel, marked by :func:`live_only`."""
    import ipywidgets as w

    return w.VBox([explorer, live_only(live)])


def show(fig: Figure) -> None:
    """Display the matplotlib Figure ``fig`` in the notebook's output and close it (a live control's redraw)."""
    import matplotlib.pyplot as plt
    from IPython.display import display

    display(fig)
    plt.close(fig)


def sample_size_axis(P_values: Sequence[float] | npt.ArrayLike, default: float | None = None) -> Axis:
    """An axis named ``P`` over the sample sizes ``P_values`` (each ``> 0``), labelled to four digits.

    ``default`` must be one of ``P_values``; ``None`` picks the middle one.
    """
    P_values = [check_positive("P_values", P) for P in np.atleast_1d(np.asarray(P_values, dtype=object))]
    if not P_values:
        raise ValueError("P_values must be non-empty")
    default = P_values[len(P_values) // 2] if default is None else check_positive("default", default)
    if default not in P_values:
        raise ValueError(f"default must be one of P_values {P_values}, got {default}")
    return axis("P", P_values, "{:.4g}", default=default)


def _control(ax: Axis):
    import ipywidgets as w

    style = {"description_width": "initial"}
    if len(ax.values) <= _MAX_TOGGLES and all(isinstance(v, str) for v in ax.values):
        return w.ToggleButtons(options=list(ax.labels), index=ax.default, description=ax.shown_name, style=style)
    return w.SelectionSlider(options=list(ax.labels), index=ax.default, description=ax.shown_name,
                             continuous_update=True, style=style, layout=w.Layout(width="32em"))


def _checked_axes(axes) -> tuple:
    axes = tuple(axes)
    if not axes or not all(isinstance(a, Axis) for a in axes):
        raise ValueError("axes must be a non-empty sequence of Axis (see copylib.frames.axis)")
    names = [a.name for a in axes]
    if len(set(names)) != len(names):
        raise ValueError(f"axes must have distinct names, got {names}")
    return axes
