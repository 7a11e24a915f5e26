"""Property tests of copylib.analysis.predictability."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import copylib as cl
from copylib.analysis import predictability as pr
from copylib.theory import softmax_marginal as se

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


@covers(pr.susceptibility_forecast)
@budget(30)
@given(n=st.integers(2, 8), seed=seeds)
def test_susceptibility_forecast_valid(n, seed):
    rng = np.random.default_rng(seed)
    P = np.cumsum(rng.uniform(1.0, 100.0, size=n))
    f = pr.susceptibility_forecast(P, rng.uniform(0.01, 10.0, size=n))
    assert f == math.inf or math.isfinite(f)


@covers(pr.susceptibility_forecast)
@budget(20)
@given(which=st.sampled_from(["P", "var"]), bad=st.sampled_from([math.nan, math.inf, -1.0, 0.0]))
def test_susceptibility_forecast_invalid(which, bad):
    args = dict(P=np.array([1.0, 2.0, 3.0]), var=np.array([1.0, 2.0, 4.0]))
    args[which][1] = bad if which == "var" or not math.isfinite(bad) else 5.0  # 5.0: P not increasing
    with raises_naming(which):
        pr.susceptibility_forecast(**args)


@covers(pr.copy_share_of_chains)
@budget(30)
@given(n=st.integers(2, 20), seed=seeds)
def test_copy_share_of_chains_valid(n, seed):
    rng = np.random.default_rng(seed)
    Q, M = rng.uniform(0.0, 1.0, size=n), rng.uniform(0.1, 1.0, size=n)
    share, se = pr.copy_share_of_chains(Q, M)
    assert 0 <= share <= 1 and math.isfinite(se) and se >= 0


@covers(pr.copy_share_of_chains)
@budget(20)
@given(which=st.sampled_from(["Q", "M"]), bad=st.sampled_from([math.nan, math.inf]))
def test_copy_share_of_chains_invalid(which, bad):
    args = dict(Q=np.array([0.2, 0.3, 0.4]), M=np.array([0.5, 0.5, 0.6]))
    args[which][0] = bad
    with raises_naming(which):
        pr.copy_share_of_chains(**args)


@covers(pr.linear_copy_observables, pr.softmax_copy_observables)
def test_copy_observables_valid():
    # one example: each evaluation is a quadrature or a tabulated marginal (too slow for many examples)
    lin = cl.ModelSpec(L=6, V=2, kind="linear")
    share, var_q = pr.linear_copy_observables(300.0, lin, n_m=31, n_q=15, n_row=8, n_rest=6)
    assert 0 <= share <= 1 and var_q > 0
    soft = cl.ModelSpec(L=8, V=4, kind="softmax")
    cum = se.row_cumulants(soft, np.random.default_rng(0))
    mean, var = pr.softmax_copy_observables(100.0, soft, cum)
    assert 0 < mean < 1 and var > 0
