"""copylib.frames: every grid point gets its own picture, and every control is linked to its stack."""

from __future__ import annotations

import itertools

import matplotlib

matplotlib.use("Agg")

import ipywidgets as w
import matplotlib.pyplot as plt
import pytest
from PIL import Image

from copylib import frames as fr


def _draw(kind, P):
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([0, 1], [0, P if kind == "a" else -P])
    ax.set_title(f"{kind}, {P}")
    return fig


AXES = [fr.axis("kind", ["a", "b"]), fr.axis("P", [1.0, 2.0, 3.0, 4.0, 5.0], "{:g}", default=3.0)]


def _walk(widget):
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _walk(child)


def test_axis_labels_default_and_bad_input():
    a = fr.axis("P", [10.0, 20.0], "{:.0f}", default=20.0)
    assert a.labels == ("10", "20") and a.default == 1
    with pytest.raises(ValueError, match="default"):
        fr.axis("P", [1.0], default=2.0)
    with pytest.raises(ValueError, match="distinct labels"):
        fr.axis("P", [1.01, 1.02], "{:.1f}")
    with pytest.raises(ValueError, match="name"):
        fr.axis("not a name", [1])
    with pytest.raises(ValueError, match="values"):
        fr.axis("P", [])


def test_frames_are_distinct_palette_pngs_one_per_grid_point():
    frames = fr._render_frames(AXES, _draw)
    assert set(frames) == set(itertools.product(range(2), range(5)))
    assert len(set(frames.values())) == 10             # every picture differs
    for png in frames.values():
        image = Image.open(__import__("io").BytesIO(png))
        assert image.format == "PNG" and image.mode == "P"
        assert len(image.getcolors(256)) <= 64


def test_stack_shows_the_default_frame_with_its_label():
    frames = fr._render_frames(AXES, _draw)
    box = fr._frame_stack(AXES, frames, title="t")
    assert fr._EXPLORER_CLASS in box._dom_classes
    outer = next(x for x in _walk(box) if isinstance(x, w.Stack))
    assert outer.selected_index == 0
    inner = outer.children[0].children[1]
    assert isinstance(inner, w.Stack) and inner.selected_index == 2
    label, image = inner.children[2].children
    assert "kind = a, P = 3" in label.value and image.value == frames[(0, 2)]
    # every leaf: the label names the grid point whose picture it holds
    for i, j in itertools.product(range(2), range(5)):
        label, image = outer.children[i].children[1].children[j].children
        assert fr._frame_label(AXES, (i, j)) in label.value and image.value == frames[(i, j)]


def test_every_control_is_linked_to_its_stack_and_copies_to_each_other():
    box = fr._frame_stack(AXES, fr._render_frames(AXES, _draw))
    pairs = {(id(x.source[0]), x.source[1], id(x.target[0]), x.target[1]) for x in box.jslinks}
    stacks = [x for x in _walk(box) if isinstance(x, w.Stack)]
    controls = [x for x in _walk(box) if isinstance(x, (w.SelectionSlider, w.ToggleButtons))]
    assert len(stacks) == 3 and len(controls) == 3     # outer + one inner per kind
    for stack in stacks:  # the control just above each stack drives it
        parent = next(x for x in _walk(box) if stack in getattr(x, "children", ()))
        control = parent.children[0]
        assert (id(control), "index", id(stack), "selected_index") in pairs
    sliders = [c for c in controls if isinstance(c, w.SelectionSlider)]
    assert (id(sliders[0]), "index", id(sliders[1]), "index") in pairs
    assert isinstance(controls[0], w.ToggleButtons)    # two string values: buttons


def test_frame_stack_rejects_missing_frames():
    frames = fr._render_frames(AXES, _draw)
    frames.pop((1, 4))
    with pytest.raises(ValueError, match="frames"):
        fr._frame_stack(AXES, frames)
    with pytest.raises(ValueError, match="axes"):
        fr._frame_stack([], {})
    with pytest.raises(ValueError, match="distinct names"):
        fr._frame_stack([AXES[0], AXES[0]], {})


def test_live_only_is_marked_for_the_website_to_hide():
    box = fr.live_only(w.IntSlider())
    assert fr._LIVE_ONLY_CLASS in box._dom_classes


def test_the_site_stylesheet_hides_live_only_controls():
    from pathlib import Path

    css = (Path(__file__).resolve().parents[1] / "_static" / "copyhead.css").read_text(encoding="utf-8")
    rule = css[css.index(f".{fr._LIVE_ONLY_CLASS}"):]
    assert "display: none" in rule[:rule.index("}")]


def test_png_frame_shows_what_savefig_writes_in_at_most_the_palette():
    import io

    import numpy as np

    def picture():
        fig, ax = plt.subplots(figsize=(4, 3))
        ax.imshow(np.linspace(0, 1, 400).reshape(20, 20), cmap="viridis")
        ax.plot([0, 19], [0, 19], "r-")
        ax.set_title("P = 3")
        return fig

    fig = picture()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=72)
    plt.close(fig)
    reference = np.asarray(Image.open(buffer).convert("RGB"), dtype=float)
    frame = Image.open(io.BytesIO(fr.png_frame(picture(), dpi=72, colors=64)))
    assert frame.mode == "P" and len(frame.getcolors()) <= 64
    pixels = np.asarray(frame.convert("RGB"), dtype=float)
    assert pixels.shape == reference.shape  # the same size as savefig at that dpi
    # 64 colours for a smooth colormap: each channel off by a few levels of 255 on average
    assert np.abs(pixels - reference).mean() < 4


def _labelled(title, size=(4, 3)):
    """A figure with the text an explorer frame carries: mathtext tick labels on a log axis, a legend, a title."""
    fig, ax = plt.subplots(figsize=size, layout="tight")
    ax.plot([1, 10, 100, 1000], [1, 2, 3, 4], label="$m$")
    ax.axvline(30, ls=":", label="$P_1$ = 30")
    ax.set_xscale("log")
    ax.set_xlabel("number of training sequences $P$")
    ax.set_title(title)
    ax.legend()
    return fig


def test_a_frame_is_the_same_whichever_frames_were_drawn_before_it():
    # Frames share one renderer (and its text caches) while the size and dpi stay the same:
    # a frame must not depend on what the shared renderer drew before.
    figures = [("P = 3", (4, 3)), ("another title, other text $\\alpha_1$", (4, 3)), ("a wider figure", (6, 2)),
               ("P = 3", (4, 3)), ("a wider figure", (6, 2))]
    alone = []
    for title, size in figures:
        fr._frame_canvas_class().shared.clear()  # a renderer of its own
        alone.append(fr.png_frame(_labelled(title, size)))
    in_sequence = [fr.png_frame(_labelled(title, size)) for title, size in figures]
    assert in_sequence == alone


def test_frames_of_one_size_share_a_renderer_and_a_new_size_gets_its_own():
    canvas = fr._frame_canvas_class()
    canvas.shared.clear()
    fr.png_frame(_labelled("one"))
    (first,) = canvas.shared.values()
    fr.png_frame(_labelled("two"))
    assert list(canvas.shared.values()) == [first]
    fr.png_frame(_labelled("three", size=(6, 2)))
    (other,) = canvas.shared.values()  # only the last size is kept
    assert other is not first


def _ticks(width, layout="tight"):
    """A figure whose longest y tick label is ``width`` characters wide; the title is the same in every one."""
    fig, ax = plt.subplots(figsize=(4, 3), layout=layout)
    ax.plot([0, 1], [0, 1])
    ax.set_yticks([0, 1], ["0", "9" * width])
    ax.set_ylabel("y")
    ax.set_title("one title")
    return fig


def test_later_frames_take_the_first_frames_axes_boxes():
    # the axes stay put while a control moves: the boxes of the first frame, laid out by its engine
    _, first = fr._draw_frame(_ticks(3))
    _, again = fr._draw_frame(_ticks(2), boxes=first)
    _, own = fr._draw_frame(_ticks(2))  # laid out by itself, the narrower labels get a narrower margin
    assert again == first and own != first


def test_a_frame_whose_text_would_leave_the_canvas_is_laid_out_by_its_engine():
    _, narrow = fr._draw_frame(_ticks(1))
    _, wide = fr._draw_frame(_ticks(12), boxes=narrow)  # the long labels need a wider left margin
    _, alone = fr._draw_frame(_ticks(12))
    assert wide == alone and wide != narrow
    _, other = fr._draw_frame(_ticks(1), boxes=narrow * 2)  # boxes for two axes, the figure has one
    assert other == narrow
    with pytest.raises(ValueError, match="colors"):
        fr._draw_frame(_ticks(1), colors=1)


def test_drawn_beyond_canvas_sees_a_title_beyond_the_canvas():
    fig = _ticks(1, layout=None)
    fig.subplots_adjust(left=0.3, right=0.9, bottom=0.2, top=0.8)
    fig.canvas.draw()
    assert not fr._drawn_beyond_canvas(fig, fig.canvas.get_renderer())
    fig.axes[0].set_title("x" * 400)
    fig.canvas.draw()
    assert fr._drawn_beyond_canvas(fig, fig.canvas.get_renderer())
    plt.close(fig)
