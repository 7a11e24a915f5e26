"""Property tests of copylib.analysis.transitions: sample-size grids and drops of a curve.

Random valid arguments give output of the documented type and range; each kind of
invalid argument raises ValueError or TypeError naming the parameter.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from copylib.analysis import transitions
from props_helpers import bad_ints, budget, covers, not_array, raises_naming


@covers(transitions.geometric_grid)
@budget(30)
@given(P_min=st.integers(1, 10**6), span=st.integers(1, 10**6), n=st.integers(2, 200))
def test_geometric_grid_valid(P_min, span, n):
    P_max = P_min + span
    grid = transitions.geometric_grid(P_min, P_max, n)
    assert grid.ndim == 1 and 1 <= grid.size <= n and np.issubdtype(grid.dtype, np.integer)
    assert grid[0] == P_min and grid[-1] == P_max and (np.diff(grid) > 0).all()


@covers(transitions.geometric_grid)
@budget(30)
@given(data=st.data())
def test_geometric_grid_invalid(data):
    name = data.draw(st.sampled_from(["P_min", "P_max", "n"]))
    args = {"P_min": 2, "P_max": 50, "n": 5}
    if name == "P_max" and data.draw(st.booleans()):
        args["P_max"] = data.draw(st.integers(1, 2))  # not above P_min
    else:
        args[name] = data.draw(bad_ints(2 if name == "n" else 1))
    with raises_naming(name):
        transitions.geometric_grid(**args)


@covers(transitions.largest_drop, transitions.step_concentration)
@budget(30)
@given(values=st.lists(st.floats(-1e6, 1e6), min_size=2, max_size=20))
def test_drops_valid(values):
    i, drop = transitions.largest_drop(values)
    assert isinstance(i, int) and 0 <= i < len(values) - 1 and math.isfinite(drop)
    assert drop == pytest.approx(values[i] - values[i + 1], abs=0) and drop >= max(
        a - b for a, b in zip(values[:-1], values[1:]))
    if values[0] > values[-1]:
        c = transitions.step_concentration(values)
        assert isinstance(c, float) and 0 < c and math.isfinite(c)
        # the largest step can exceed the net change only when the curve also rises somewhere
        if all(a >= b for a, b in zip(values[:-1], values[1:])):
            assert c <= 1 + 1e-12


@covers(transitions.largest_drop, transitions.step_concentration)
@budget(30)
@given(data=st.data())
def test_drops_invalid(data):
    which = data.draw(st.sampled_from(["largest_drop", "step_concentration"]))
    name = "values" if which == "largest_drop" else "fine_values"
    bad = data.draw(st.sampled_from(["short", "2d", "nonfinite", "kind"] + (["rising"] if name != "values" else [])))
    value = {"short": [1.0], "2d": [[2.0, 1.0], [1.0, 0.0]], "nonfinite": [2.0, math.nan, 0.0],
             "kind": data.draw(not_array()), "rising": [0.0, 1.0, 2.0]}[bad]
    if bad == "kind" and isinstance(value, str) and value == "1.5":
        value = "ab"  # a numeric string would parse; the point here is a non-array
    with raises_naming(name):
        getattr(transitions, which)(value)
