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

from props_helpers import bad_ints, budget, covers, not_array, raises_naming, with_nonfinite

seeds = st.integers(0, 2**32 - 1)


@covers(transitions.steepest_rise)
@budget(30)
@given(n=st.integers(2, 30), k=st.sampled_from([None, 1, 3]), seed=seeds)
def test_steepest_rise_valid(n, k, seed):
    rng = np.random.default_rng(seed)
    P = np.cumsum(rng.uniform(0.1, 5.0, size=n)) + rng.uniform(1e-3, 10.0)
    y = rng.normal(size=(n,) if k is None else (n, k))
    at = transitions.steepest_rise(P, y)
    assert np.shape(at) == (() if k is None else (k,))
    assert np.isin(at, P).all()
    # invariant under a constant offset and a positive rescaling of y, and under a common rescaling of P
    assert np.array_equal(transitions.steepest_rise(P, 4.0 * y + 7.0), at)
    assert np.allclose(transitions.steepest_rise(8.0 * P, y), 8.0 * np.asarray(at))


@covers(transitions.steepest_rise)
@budget(30)
@given(data=st.data())
def test_steepest_rise_invalid(data):
    args = dict(P=np.array([1.0, 2.0, 4.0]), y=np.array([0.0, 1.0, 3.0]))
    name = data.draw(st.sampled_from(["P", "y"]))
    bad = {"P": [np.array([1.0]), np.array([1.0, 1.0, 2.0]), np.array([-1.0, 1.0, 2.0]), np.zeros((3, 1))],
           "y": [np.zeros(2), np.zeros((3, 1, 1)), np.zeros((4, 2))]}[name]
    args[name] = data.draw(st.one_of(st.sampled_from(bad), not_array(),
                                     st.builds(lambda d: with_nonfinite(args[name].copy(), d), st.data())))
    with raises_naming(name):
        transitions.steepest_rise(**args)


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


@covers(transitions.refine_largest_drop)
@budget(30)
@given(jump=st.floats(12.0, 900.0), levels=st.integers(1, 3), k=st.integers(2, 6))
def test_refine_largest_drop_valid(jump, levels, k):
    P = np.array([10, 100, 1000])

    def step(grid):
        return np.where(np.asarray(grid) < jump, 1.0, 0.0)

    try:
        ladder = transitions.refine_largest_drop(step, P, step(P), levels=levels, k=k)
    except ValueError as err:  # zoomed down to two neighbouring integers: nothing left to refine
        assert "no integer inside" in str(err)
        return
    assert len(ladder) == levels
    for grid, values, rho in ladder:
        assert grid[0] < jump <= grid[-1] and rho == 1.0 and values.shape == grid.shape


@covers(transitions.refine_largest_drop)
@budget(30)
@given(data=st.data())
def test_refine_largest_drop_invalid(data):
    name = data.draw(st.sampled_from(["values_on", "P", "values", "levels", "k"]))
    args = {"values_on": lambda grid: -np.log(grid), "P": np.array([10, 100, 1000]),
            "values": np.array([2.0, 1.0, 0.0]), "levels": 2, "k": 5}
    if name in ("levels", "k"):
        args[name] = data.draw(bad_ints(1 if name == "levels" else 2))
    elif name == "values_on":
        args[name] = data.draw(st.sampled_from([None, 1.5, "f"]))
    else:
        args[name] = data.draw(st.sampled_from([[1.0], [[2.0, 1.0], [1.0, 0.0]], [2.0, math.nan, 0.0]]))
    with raises_naming(name):
        transitions.refine_largest_drop(**args)


@covers(transitions.half_way_point)
@budget(30)
@given(n=st.integers(2, 12), k=st.sampled_from([None, 1, 4]), seed=seeds)
def test_half_way_point_valid(n, k, seed):
    rng = np.random.default_rng(seed)
    P = np.cumsum(rng.uniform(0.5, 50.0, size=n))
    y = rng.normal(size=(n,) if k is None else (n, k))
    y[-1] += np.where(y[-1] == y[0], 1.0, 0.0)  # every column changes
    h = transitions.half_way_point(P, y)
    assert np.shape(h) == (() if k is None else (k,)) and np.isfinite(h).all()
    assert (np.asarray(h) >= P[0] * (1 - 1e-12)).all() and (np.asarray(h) <= P[-1] * (1 + 1e-12)).all()


@covers(transitions.half_way_point)
@budget(20)
@given(jump=st.integers(1, 5), n=st.integers(6, 10))
def test_half_way_point_of_a_step_lies_in_the_step_interval(jump, n):
    P = np.geomspace(10, 1000, n)
    y = (np.arange(n) >= jump).astype(float)
    assert P[jump - 1] <= transitions.half_way_point(P, y) <= P[jump]


@covers(transitions.half_way_point)
@budget(20)
@given(which=st.sampled_from(["P", "y"]), bad=st.sampled_from([np.nan, np.inf, -np.inf]))
def test_half_way_point_invalid(which, bad):
    args = dict(P=np.array([1.0, 2.0, 4.0]), y=np.array([[0.0], [0.5], [1.0]]))
    args[which] = args[which].copy()
    args[which][1] = bad
    with raises_naming(which):
        transitions.half_way_point(**args)


@covers(transitions.summarise_refinement, transitions.RefinementSummary)
@budget(30)
@given(levels=st.lists(st.lists(st.floats(-10, 10), min_size=2, max_size=8), min_size=1, max_size=3))
def test_summarise_refinement_valid(levels):
    ladder = []
    for values in levels:
        values = np.sort(np.array(values))[::-1].copy()  # non-increasing
        values[-1] = values.min() - 1.0  # still non-increasing, with a net decrease: psi in (0, 1]
        grid = 10 * np.arange(1, values.size + 1)
        ladder.append((grid, values, transitions.step_concentration(values)))
    out = transitions.summarise_refinement(ladder)
    assert isinstance(out, transitions.RefinementSummary)
    assert out.psi == tuple(r for _, _, r in ladder)
    assert all(0 < r <= 1 for r in out.psi)
    assert out.abrupt == all(r > 0.5 for r in out.psi)
    lo, hi = out.interval
    grid = ladder[-1][0]
    assert lo < hi and lo in grid and hi in grid and np.searchsorted(grid, hi) == np.searchsorted(grid, lo) + 1


@covers(transitions.summarise_refinement)
@budget(20)
@given(data=st.data())
def test_summarise_refinement_invalid(data):
    grid, values = np.array([10, 20, 40]), np.array([1.0, 0.2, 0.0])
    case = data.draw(st.sampled_from(["ladder", "psi", "grid", "values"]))
    if case == "ladder":
        bad = data.draw(st.sampled_from([[], "ladder", 3, [(grid, values)]]))
    elif case == "psi":
        bad = [(grid, values, data.draw(st.sampled_from([0.0, -0.5, 1.5])))]
    elif case == "grid":
        bad = [(data.draw(st.sampled_from([np.array([10]), np.array([[10, 20]])])), values, 0.8)]
    else:
        bad = [(grid, data.draw(st.sampled_from([np.array([1.0, np.nan, 0.0]), np.array([1.0, 0.0])])), 0.8)]
    with raises_naming(case):
        transitions.summarise_refinement(bad)

