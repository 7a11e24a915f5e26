"""Tests of copylib.analysis.predictability: the power-law forecast of a threshold."""

from __future__ import annotations

import numpy as np
import pytest

from copylib.analysis.predictability import copy_share_of_chains, power_law_forecast, susceptibility_forecast


def test_power_law_forecast_is_exact_for_a_power_law():
    P = np.array([100.0, 150.0, 220.0])
    f = power_law_forecast(P, 0.002 * P**1.3, target=0.5)
    assert f.exponent == pytest.approx(1.3, rel=1e-12) and f.prefactor == pytest.approx(0.002, rel=1e-10)
    assert 0.002 * f.P_forecast**1.3 == pytest.approx(0.5, rel=1e-10)
    # an observable that does not grow gives no forecast
    assert power_law_forecast(P, 1 / P, target=0.5).P_forecast == np.inf


def test_power_law_forecast_rejects_bad_input():
    with pytest.raises(ValueError, match="increasing"):
        power_law_forecast([2.0, 1.0], [1.0, 2.0], 3.0)
    with pytest.raises(ValueError, match="y"):
        power_law_forecast([1.0, 2.0], [0.0, 2.0], 3.0)
    with pytest.raises(ValueError, match="target"):
        power_law_forecast([1.0, 2.0], [1.0, 2.0], -3.0)


def test_susceptibility_forecast_is_exact_for_a_divergence():
    P = np.array([300.0, 400.0, 500.0])
    assert susceptibility_forecast(P, 2.0 / (650.0 - P)) == pytest.approx(650.0, rel=1e-9)  # rounding of a fit
    assert susceptibility_forecast(P, 1 / P) == np.inf  # 1/var grows: nothing announced
    with pytest.raises(ValueError, match="var"):
        susceptibility_forecast(P, [1.0, 0.0, 1.0])


def test_copy_share_of_chains_matches_the_delta_method():
    rng = np.random.default_rng(1)
    Q, M = 0.3 + 0.01 * rng.normal(size=4000), 0.5 + 0.01 * rng.normal(size=4000)
    share, se = copy_share_of_chains(Q, M)
    assert share == pytest.approx(Q.mean() / (Q.mean() + M.mean()), rel=1e-14)
    # independent Q, M with s.d. 0.01: se = 0.01 sqrt(M^2 + Q^2)/(M + Q)^2 / sqrt(n), to sampling error (~5 %)
    assert se == pytest.approx(0.01 * np.hypot(0.5, 0.3) / 0.8**2 / np.sqrt(4000), rel=0.1)
