"""Tests of copylib.theory.reduced_action (minima and inflections of an action sampled on a grid)."""

from __future__ import annotations

import numpy as np
import pytest

from copylib.theory.reduced_action import downward_crossings, grid_minimum_points, inflection_pair, upward_crossings


def test_crossings_of_a_known_slope():
    s = np.array([1.0, -1.0, -2.0, 0.0, 3.0, 2.0, -1.0, 1.0])
    assert upward_crossings(s).tolist() == [2, 6]  # -2 -> 0 (exact root at index 3), -1 -> 1
    assert downward_crossings(s).tolist() == [0, 5]
    assert upward_crossings([np.nan, 1.0]).size == 0 and downward_crossings([1.0, np.nan]).size == 0


def test_grid_minimum_points_of_a_double_well():
    # F = (x^2 - 1)^2 on [-2, 2]: minima at -1 and 1, the grid holds -1 exactly but not 1
    x = np.array([-2.0, -1.5, -1.0, -0.5, 0.25, 0.75, 1.25, 2.0])
    slope = 4 * x * (x * x - 1)
    points, brackets = grid_minimum_points(slope)
    assert x[points].tolist() == [-1.0]
    assert brackets.tolist() == [5]  # 1 lies in (0.75, 1.25)
    # F increasing from the left end, decreasing at the right end
    points, _ = grid_minimum_points(np.array([1.0, 2.0, -1.0]), right_end=True)
    assert points.tolist() == [0, 2]
    assert grid_minimum_points(np.array([1.0, 2.0, -1.0]))[0].tolist() == [0]


def test_inflection_pair_of_a_cubic_slope():
    # F' = x^3 - x + 0.1: F'' = 3 x^2 - 1, hump at -1/sqrt(3), dip at 1/sqrt(3); two minima of F
    x = np.linspace(-2, 2, 41)
    hump, dip = inflection_pair(x, 3 * x**2 - 1, lambda d: 3 * d * d - 1)
    assert hump == pytest.approx(-1 / np.sqrt(3), abs=1e-13) and dip == pytest.approx(1 / np.sqrt(3), abs=1e-13)
    assert hump**3 - hump + 0.1 > 0 > dip**3 - dip + 0.1
    assert inflection_pair(x, 3 * x**2 + 1, lambda d: 3 * d * d + 1) is None  # convex: no pair
    assert inflection_pair(x, x, lambda d: d) is None  # a dip without a hump before it


def test_bad_input():
    with pytest.raises(ValueError, match="slope"):
        upward_crossings([1.0])
    with pytest.raises(TypeError, match="slope"):
        downward_crossings("up")
    with pytest.raises(TypeError, match="right_end"):
        grid_minimum_points([1.0, -1.0], right_end=1)
    with pytest.raises(ValueError, match="curvature"):
        inflection_pair([0.0, 1.0, 2.0], [1.0, -1.0], lambda d: d)
    with pytest.raises(TypeError, match="curvature_at"):
        inflection_pair([0.0, 1.0], [1.0, -1.0], 3.0)
