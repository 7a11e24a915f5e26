"""Property tests for copylib.frames."""

from __future__ import annotations

import io
import itertools

import matplotlib

matplotlib.use("Agg")

import ipywidgets  # noqa: F401  (imported once here: its first import raises the recursion limit)
import matplotlib.pyplot as plt
import pytest
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image

from copylib import explorers
from copylib import frames as fr

from props_helpers import budget, covers, raises_naming


def _draw(**params):
    fig, ax = plt.subplots(figsize=(2, 1.5))
    ax.set_title(repr(sorted(params.items())), fontsize=5)
    return fig


grid = st.lists(st.integers(1, 3), min_size=1, max_size=2)


@covers(fr.axis, fr.Axis, fr._frame_label)
@budget(40)
@given(st.lists(st.integers(-1000, 1000), min_size=1, max_size=6, unique=True), st.data())
def test_axis_labels_every_value_and_defaults_to_one_of_them(values, data):
    default = data.draw(st.sampled_from(values))
    a = fr.axis("x", values, default=default)
    assert a.values[a.default] == default and len(a.labels) == len(values)
    for i, v in enumerate(values):
        assert fr._frame_label([a], (i,)) == f"x = {v}"
    with raises_naming("default"):
        fr.axis("x", values, default=max(values) + 1)


@covers(fr.axis, fr.Axis, fr._frame_label)
@budget(20)
@given(st.text(alphabet="PLV/₂ abc", min_size=1, max_size=8).filter(str.strip), st.lists(
    st.integers(0, 50), min_size=1, max_size=4, unique=True))
def test_a_description_names_the_axis_on_the_control_and_in_the_labels(description, values):
    import ipywidgets as w

    a = fr.axis("x", values, description=description)
    assert a.shown_name == description.strip()
    assert fr._frame_label([a], (0,)) == f"{description.strip()} = {values[0]}"
    box = fr._frame_stack([a], {(i,): b"" for i in range(len(values))})
    control = box.children[0].children[0]
    assert isinstance(control, w.SelectionSlider) and control.description == description.strip()
    with raises_naming("description"):
        fr.axis("x", values, description=description + "=")


@covers(fr._render_frames, fr._frame_stack, fr.frame_explorer, fr.png_frame)
@budget(8)
@given(grid)
def test_one_distinct_frame_per_grid_point_behind_linked_controls(sizes):
    axes = [fr.axis(f"a{k}", range(n)) for k, n in enumerate(sizes)]
    frames = fr._render_frames(axes, _draw)
    assert set(frames) == set(itertools.product(*(range(n) for n in sizes)))
    assert len(set(frames.values())) == len(frames)
    assert all(Image.open(io.BytesIO(png)).mode == "P" for png in frames.values())
    box = fr.frame_explorer(axes, _draw)
    # one link per stack, plus one per extra copy of a control
    n_stacks = sum(int(__import__("math").prod(sizes[:k])) for k in range(len(sizes)))
    assert len(box.jslinks) == n_stacks + (n_stacks - len(sizes))


@covers(fr.png_frame)
@budget(5)
@given(st.integers(-5, 1))
def test_png_frame_rejects_a_bad_palette(colors):
    fig = _draw()
    with raises_naming("colors"):
        fr.png_frame(fig, colors=colors)
    plt.close(fig)


@covers(fr.live_only)
@budget(5)
@given(st.text(max_size=20))
def test_live_only_marks_any_widget(note):
    import ipywidgets as w

    box = fr.live_only(w.Label("x"), note)
    assert fr._LIVE_ONLY_CLASS in box._dom_classes


@covers(fr.with_live, fr.show)
@budget(5)
@given(st.text(max_size=20))
def test_live_controls_sit_below_the_frames_and_a_shown_figure_is_closed(title):
    import ipywidgets as w

    explorer, live = w.Label("frames"), w.Label("live")
    box = fr.with_live(explorer, live)
    assert box.children[0] is explorer and fr._LIVE_ONLY_CLASS in box.children[1]._dom_classes
    assert live in box.children[1].children
    fig, ax = plt.subplots(figsize=(1, 1))
    ax.set_title(title)
    fr.show(fig)
    assert not plt.fignum_exists(fig.number)


@covers(fr.sample_size_axis)
@budget(20)
@given(st.lists(st.integers(1, 9999).map(float), min_size=1, max_size=6, unique=True), st.data())  # distinct labels
def test_sample_size_axis_labels_every_P_and_defaults_to_one_of_them(P_values, data):
    default = data.draw(st.one_of(st.none(), st.sampled_from(P_values)))
    ax = fr.sample_size_axis(P_values, default)
    assert ax.name == "P" and list(ax.values) == P_values and len(ax.labels) == len(P_values)
    assert ax.values[ax.default] == (P_values[len(P_values) // 2] if default is None else default)
    outside = max(P_values) * 2
    with raises_naming("default"):
        fr.sample_size_axis(P_values, outside)
    with raises_naming("P_values"):
        fr.sample_size_axis(P_values + [-1.0])
    with raises_naming("P_values"):
        fr.sample_size_axis([])


def test_frame_stack_needs_axes():
    with pytest.raises(ValueError, match="axes"):
        fr._frame_stack(["P"], {})


# copylib.explorers.linear_size_explorer builds a frame explorer over three axes; its property test sits here,
# beside the frames it is made of (the other explorers' property tests are in tests/book/test_site_properties.py).
@covers(explorers.linear_size_explorer)
@budget(20)
@given(st.sampled_from(["L_values", "V", "versions", "P_over_P2", "default"]),
       st.sampled_from([0, -1.0, float("nan"), 1, "x", ()]))
def test_linear_size_explorer_checks_every_argument_before_drawing(name, bad):
    args = {"L_values": (8, 12), "V": 4, "versions": ("map",), "P_over_P2": (0.5, 2.0), "default": None}
    args[name] = bad if name == "V" else (bad,) if name in ("L_values", "versions", "P_over_P2") else bad
    if name == "P_over_P2" and bad == 1:
        return  # a valid ratio (P = P_2)
    with raises_naming("version" if name == "versions" else name):
        explorers.linear_size_explorer(**args)
