"""Unit tests of copylib.analysis.transitions: steepest_rise (the crossover of a smooth rise on a grid),
half_way_point (where a curve first has made half of its change) and refine_largest_drop (the refinement
test of the copy-task chapter)."""

from __future__ import annotations

import numpy as np
import pytest

from copylib.analysis.transitions import (
    RefinementSummary,
    half_way_point,
    refine_largest_drop,
    steepest_rise,
    summarise_refinement,
)


def test_steepest_rise_finds_the_centre_of_a_logistic_rise_in_ln_P():
    P = np.geomspace(10, 1e4, 301)
    centres = np.array([80.0, 300.0, 2500.0])
    y = 1 / (1 + (centres[None, :] / P[:, None]) ** 3)  # logistic in ln P, steepest at its centre
    at = steepest_rise(P, y)
    assert at.shape == (3,)
    step = P[1] / P[0]
    assert (np.abs(np.log(at / centres)) <= np.log(step)).all()  # resolved to the grid
    assert steepest_rise(P, y[:, 1]) == at[1]
    # a fall is not a rise: the steepest increase of a decreasing curve is where it falls least
    assert steepest_rise(P, -y[:, 1]) in (P[0], P[-1])


def test_steepest_rise_rejects_bad_grids():
    with pytest.raises(ValueError, match="P"):
        steepest_rise([1.0, 3.0, 2.0], [0.0, 1.0, 2.0])
    with pytest.raises(ValueError, match="P"):
        steepest_rise([0.0, 1.0, 2.0], [0.0, 1.0, 2.0])
    with pytest.raises(ValueError, match="y"):
        steepest_rise([1.0, 2.0, 3.0], [0.0, 1.0])


def test_refine_largest_drop_keeps_a_jump_and_spreads_a_smooth_descent():
    P = np.array([4, 10, 25, 63, 158, 398, 1000])
    jump_at = 300.0

    def step(grid):
        return np.where(np.asarray(grid) < jump_at, 1.0, 0.0)

    def smooth(grid):  # linear in ln P: equal sub-intervals in ln P carry equal drops
        return -np.log(np.asarray(grid, dtype=float))

    ladder = refine_largest_drop(step, P, step(P), levels=2, k=5)
    assert len(ladder) == 2
    for grid, values, rho in ladder:
        assert grid[0] < jump_at <= grid[-1]  # every level brackets the jump
        assert rho == 1.0  # the whole drop in one sub-interval
        assert np.array_equal(values, step(grid))
    assert ladder[1][0][0] >= ladder[0][0][0] and ladder[1][0][-1] <= ladder[0][0][-1]  # nested
    grid, _, rho = refine_largest_drop(smooth, P, smooth(P), levels=1, k=5)[0]
    # rounding the geometric grid to integers makes the sub-intervals unequal by up to ~1/P of ln P;
    # at P >= 4 that keeps rho within 0.1 of the 1/k of a smooth change
    assert abs(rho - 1 / 5) < 0.1


def test_refine_largest_drop_rejects_bad_input():
    P, values = np.array([10, 100, 1000]), np.array([1.0, 0.5, 0.0])
    ok = lambda grid: -np.log(grid)  # noqa: E731
    with pytest.raises(TypeError, match="values_on"):
        refine_largest_drop(None, P, values)
    with pytest.raises(ValueError, match="values"):
        refine_largest_drop(ok, P, values[:2])
    with pytest.raises(ValueError, match="P"):
        refine_largest_drop(ok, np.array([10, 5, 1000]), values)
    with pytest.raises(ValueError, match="levels"):
        refine_largest_drop(ok, P, values, levels=0)
    with pytest.raises(ValueError, match="k"):
        refine_largest_drop(ok, P, values, k=1)
    with pytest.raises(ValueError, match="values_on"):
        refine_largest_drop(lambda grid: np.ones(2), P, values)
    with pytest.raises(ValueError, match="no integer inside"):
        refine_largest_drop(ok, np.array([1, 2, 3]), values)


def test_half_way_point_of_ramps_in_ln_P():
    # columns whose progress rises linearly in ln P from grid point a to grid point b: linear interpolation in
    # ln P is exact, and the half-way point is the geometric mean of P_a and P_b
    P = np.geomspace(10.0, 1e4, 61)
    ramps = [(5, 15), (20, 40), (30, 58)]
    ln_P = np.log(P)
    y = np.stack([np.clip((ln_P - ln_P[a]) / (ln_P[b] - ln_P[a]), 0, 1) for a, b in ramps], axis=1)
    np.testing.assert_allclose(half_way_point(P, y), [np.sqrt(P[a] * P[b]) for a, b in ramps], rtol=1e-12)
    assert half_way_point(P, y[:, 1]) == pytest.approx(np.sqrt(P[20] * P[40]), rel=1e-12)


def test_half_way_point_orders_curves_ignores_scale_and_takes_the_first_crossing():
    P = np.array([100.0, 200.0, 400.0, 800.0])
    early = np.array([0.0, 0.8, 0.9, 1.0])
    late = np.array([0.0, 0.1, 0.3, 1.0])
    h = half_way_point(P, np.stack([early, 5 * late + 2, 1 - early], axis=1))  # affine changes do not matter
    assert h[0] < 200.0 < 400.0 < h[1] and h[2] == h[0]  # nor does the sign of the change
    # interpolation in ln P: early reaches 1/2 at 5/8 of the way from 100 to 200 in ln P
    assert h[0] == pytest.approx(100 * 2 ** (0.5 / 0.8), rel=1e-12)
    # an overshoot that comes back: the first crossing (between 100 and 200), not a later one
    assert half_way_point(P, np.array([0.0, 1.5, 0.2, 1.0])) == pytest.approx(100 * 2 ** (1 / 3), rel=1e-12)
    assert half_way_point([10.0, 100.0, 1000.0], [0.0, 0.0, 1.0]) == pytest.approx(np.sqrt(1e5))


def test_half_way_point_rejects_bad_input():
    P = np.array([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="P"):
        half_way_point([3.0, 2.0, 1.0], np.ones((3, 1)))
    with pytest.raises(ValueError, match="y"):
        half_way_point(P, np.ones((2, 1)))
    with pytest.raises(ValueError, match="y"):
        half_way_point(P, np.ones((3, 2)))  # no change


def test_summarise_refinement_reads_psi_interval_and_verdict():
    P = np.array([4, 10, 25, 63, 158, 398, 1000])
    def step(grid):
        return np.where(np.asarray(grid) < 300.0, 1.0, 0.0)

    def smooth(grid):
        return -np.log(np.asarray(grid, dtype=float))

    jump = summarise_refinement(refine_largest_drop(step, P, step(P), levels=2, k=5))
    assert isinstance(jump, RefinementSummary)
    assert jump.psi == (1.0, 1.0) and jump.abrupt
    assert jump.interval[0] < 300 <= jump.interval[1]
    ladder = refine_largest_drop(smooth, P, smooth(P), levels=2, k=5)
    spread = summarise_refinement(ladder)
    assert not spread.abrupt and len(spread.psi) == 2
    assert spread.psi == tuple(r for _, _, r in ladder)
    grid = ladder[-1][0]
    assert spread.interval[0] in grid and spread.interval[1] in grid and spread.interval[0] < spread.interval[1]


def test_summarise_refinement_rejects_bad_input():
    good = (np.array([10, 20, 40]), np.array([1.0, 0.2, 0.0]), 0.8)
    for bad in ([], "ladder", None):
        with pytest.raises(TypeError, match="ladder"):
            summarise_refinement(bad)
    with pytest.raises(TypeError, match="ladder"):
        summarise_refinement([good[:2]])
    with pytest.raises(ValueError, match="psi"):
        summarise_refinement([(good[0], good[1], 1.5)])
    with pytest.raises(ValueError, match="values"):
        summarise_refinement([(good[0], np.array([1.0, 0.0]), 0.8)])

