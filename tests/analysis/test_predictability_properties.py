"""Property tests of copylib.analysis.predictability."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from copylib.analysis import predictability as pr
from props_helpers import bad_positive, budget, covers, raises_naming

seeds = st.integers(0, 2**32 - 1)


@covers(pr.power_law_forecast, pr.Forecast)
@budget(30)
@given(n=st.integers(2, 8), k=st.floats(-2, 3), target=st.floats(1e-3, 1e3), seed=seeds)
def test_power_law_forecast_valid(n, k, target, seed):
    rng = np.random.default_rng(seed)
    P = np.cumsum(rng.uniform(0.5, 5, size=n))
    y = 0.1 * P**k * np.exp(0.01 * rng.normal(size=n))
    f = pr.power_law_forecast(P, y, target)
    assert math.isfinite(f.exponent) and f.prefactor > 0
    if f.exponent > 0 and 1e-300 < f.P_forecast < 1e300:
        # the fitted law reaches the target at the forecast (a nearly flat fit puts it beyond floats)
        assert f.prefactor * f.P_forecast**f.exponent == pytest.approx(target, rel=1e-6)
    elif f.exponent <= 0:
        assert f.P_forecast == math.inf


@covers(pr.power_law_forecast)
@budget(20)
@given(which=st.sampled_from(["P", "y", "target"]), data=st.data())
def test_power_law_forecast_invalid(which, data):
    args = dict(P=[1.0, 2.0, 3.0], y=[0.1, 0.2, 0.3], target=1.0)
    if which == "target":
        args[which] = data.draw(bad_positive())
    else:
        args[which] = data.draw(st.sampled_from([[1.0, math.nan, 3.0], [1.0, -2.0, 3.0], "abc", [1.0], [[1.0, 2.0, 3.0]]]))
    with raises_naming(which):
        pr.power_law_forecast(**args)
