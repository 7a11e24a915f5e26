"""Tests of copylib.analysis.predictability: the power-law forecast of a threshold."""

from __future__ import annotations

import numpy as np
import pytest

from copylib.analysis.predictability import power_law_forecast


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
