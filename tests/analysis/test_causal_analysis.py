"""Tests of copylib.analysis.causal: half-way points of switching rows, the bimodality coefficient."""

from __future__ import annotations

import numpy as np
import pytest

from copylib.analysis.causal import bimodality_coefficient, half_way_points


def test_half_way_points_of_ramps_in_ln_P():
    # rows whose progress rises linearly in ln P from grid point a to grid point b: linear interpolation in
    # ln P is exact, and the half-way point is the geometric mean of P_a and P_b
    P = np.geomspace(10.0, 1e4, 61)
    ramps = [(5, 15), (20, 40), (30, 58)]
    ln_P = np.log(P)
    profile = np.stack([np.clip((ln_P - ln_P[a]) / (ln_P[b] - ln_P[a]), 0, 1) for a, b in ramps], axis=1)
    np.testing.assert_allclose(half_way_points(P, profile), [np.sqrt(P[a] * P[b]) for a, b in ramps], rtol=1e-12)


def test_half_way_points_orders_rows_and_ignores_scale():
    P = np.array([100.0, 200.0, 400.0, 800.0])
    early = np.array([0.0, 0.8, 0.9, 1.0])
    late = np.array([0.0, 0.1, 0.3, 1.0])
    h = half_way_points(P, np.stack([early, 5 * late + 2], axis=1))  # affine changes of a column do not matter
    assert h[0] < 200.0 < 400.0 < h[1]
    # interpolation in ln P: early reaches 1/2 at 5/8 of the way from 100 to 200 in ln P
    assert h[0] == pytest.approx(100 * 2 ** (0.5 / 0.8), rel=1e-12)


def test_half_way_points_rejects_bad_input():
    P = np.array([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="P"):
        half_way_points([3.0, 2.0, 1.0], np.ones((3, 1)))
    with pytest.raises(ValueError, match="profile"):
        half_way_points(P, np.ones((2, 1)))
    with pytest.raises(ValueError, match="profile"):
        half_way_points(P, np.ones((3, 2)))  # no change


def test_bimodality_coefficient_reference_values():
    rng = np.random.default_rng(0)
    n = 400_000
    # Gaussian 1/3 and uniform 5/9 up to sampling error (s.e. of skewness and kurtosis ~ sqrt(6/n), sqrt(24/n))
    assert bimodality_coefficient(rng.normal(size=n)) == pytest.approx(1 / 3, abs=0.01)
    assert bimodality_coefficient(rng.uniform(size=n)) == pytest.approx(5 / 9, abs=0.01)
    # two equal point masses: skewness 0, excess kurtosis -2, coefficient 1 exactly
    assert bimodality_coefficient(np.repeat([0.0, 1.0], 50)) == pytest.approx(1.0, rel=1e-12)
    x = rng.normal(size=(3, 50))
    np.testing.assert_allclose(bimodality_coefficient(x, axis=1), [bimodality_coefficient(r) for r in x], rtol=1e-14)


def test_bimodality_coefficient_rejects_bad_input():
    with pytest.raises(ValueError, match="x"):
        bimodality_coefficient([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="axis"):
        bimodality_coefficient(np.ones((5, 5)), axis=2)
