"""Property tests: copylib.theory.reduced_action.

On random slopes the crossings are exactly the sign changes, the minimum points and
brackets of :func:`grid_minimum_points` partition the upward crossings (plus the ends),
and :func:`inflection_pair` returns a hump before a dip where the curvature changes sign;
invalid arguments raise ValueError/TypeError naming the parameter.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from copylib.theory import reduced_action as ra

from props_helpers import budget, covers, raises_naming

slopes = st.lists(st.sampled_from([-2.0, -1.0, -1e-300, 0.0, 1e-300, 1.0, 3.0, math.nan]), min_size=2, max_size=40)


@covers(ra.upward_crossings, ra.downward_crossings)
@budget(40)
@given(s=slopes)
def test_crossings_valid(s):
    a = np.array(s)
    up, down = ra.upward_crossings(s), ra.downward_crossings(s)
    assert up.tolist() == [i for i in range(a.size - 1) if a[i] < 0 <= a[i + 1]]
    assert down.tolist() == [i for i in range(a.size - 1) if a[i] > 0 >= a[i + 1]]
    assert not set(up.tolist()) & set(down.tolist())


@covers(ra.grid_minimum_points)
@budget(40)
@given(s=slopes, right_end=st.booleans())
def test_grid_minimum_points_valid(s, right_end):
    a = np.array(s)
    points, brackets = ra.grid_minimum_points(s, right_end=right_end)
    assert (np.diff(points) > 0).all()
    assert all(a[i] < 0 < a[i + 1] for i in brackets)
    inner = [p for p in points.tolist() if not (p == 0 and a[0] >= 0) and not (right_end and p == a.size - 1)]
    assert sorted(inner + [i + 1 for i in brackets]) == [i + 1 for i in ra.upward_crossings(s)]
    assert (0 in points.tolist()) == bool(a[0] >= 0 or (right_end and a.size == 1))
    assert ((a.size - 1) in points.tolist()) >= bool(right_end and a[-1] < 0)


@covers(ra.inflection_pair)
@budget(30)
@given(roots=st.lists(st.floats(-0.9, 0.9), min_size=1, max_size=3, unique=True), n=st.integers(5, 60))
def test_inflection_pair_valid(roots, n):
    # curvature = prod (x - r): its sign changes at the roots
    x = np.linspace(-1.0, 1.0, n)

    def curvature_at(d):
        return float(np.prod([d - r for r in roots]))

    c = np.array([curvature_at(d) for d in x])
    pair = ra.inflection_pair(x, c, curvature_at)
    down, up = ra.downward_crossings(c), ra.upward_crossings(c)
    if pair is None:
        assert down.size == 0 or not (up > down[0]).any()
        return
    hump, dip = pair
    assert x[0] <= hump < dip <= x[-1]
    assert abs(curvature_at(hump)) < 1e-9 and abs(curvature_at(dip)) < 1e-9


@covers(ra.upward_crossings, ra.downward_crossings, ra.grid_minimum_points, ra.inflection_pair)
@budget(40)
@given(data=st.data())
def test_invalid(data):
    which = data.draw(st.sampled_from(["upward_crossings", "downward_crossings", "grid_minimum_points",
                                       "inflection_pair"]))
    args = {"upward_crossings": {"slope": [1.0, -1.0]}, "downward_crossings": {"slope": [1.0, -1.0]},
            "grid_minimum_points": {"slope": [1.0, -1.0], "right_end": False},
            "inflection_pair": {"x": [0.0, 1.0], "curvature": [1.0, -1.0],
                                "curvature_at": lambda d: 1.0 - 2 * d}}[which]
    name = data.draw(st.sampled_from(sorted(args)))
    args[name] = data.draw({"slope": st.sampled_from([[1.0], "x", None, [[1.0, 2.0]]]),
                            "x": st.sampled_from([[0.0], "x", None]),
                            "curvature": st.sampled_from([[1.0], [1.0, -1.0, 0.0], "x", None]),
                            "right_end": st.sampled_from([1, "yes", None]),
                            "curvature_at": st.sampled_from([None, 2.0, "f"])}[name])
    with raises_naming(name):
        getattr(ra, which)(**args)
