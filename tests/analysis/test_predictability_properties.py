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


@covers(pr._copy_share_of_chains)
@budget(30)
@given(n=st.integers(2, 20), seed=seeds)
def test_copy_share_of_chains_valid(n, seed):
    rng = np.random.default_rng(seed)
    Q, M = rng.uniform(0.0, 1.0, size=n), rng.uniform(0.1, 1.0, size=n)
    share, se = pr._copy_share_of_chains(Q, M)
    assert 0 <= share <= 1 and math.isfinite(se) and se >= 0


@covers(pr._copy_share_of_chains)
@budget(20)
@given(which=st.sampled_from(["Q", "M"]), bad=st.sampled_from([math.nan, math.inf]))
def test_copy_share_of_chains_invalid(which, bad):
    args = dict(Q=np.array([0.2, 0.3, 0.4]), M=np.array([0.5, 0.5, 0.6]))
    args[which][0] = bad
    with raises_naming(which):
        pr._copy_share_of_chains(**args)


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


@covers(pr.window_forecasts, pr.WindowForecasts)
@budget(30)
@given(k=st.floats(0.2, 3.0), beyond=st.floats(1.05, 3.0), start=st.floats(-1.0, 1.0), seed=seeds)
def test_window_forecasts_valid(k, beyond, start, seed):
    # an observable growing as a power law reaches y_star at P_star: the power-law forecast is P_star
    rng = np.random.default_rng(seed)
    P_star = float(rng.uniform(10.0, 1e4))
    windows = [np.sort(rng.uniform(0.1, 0.9, size=3)) + np.array([0.0, 1e-3, 2e-3]) for _ in range(2)]
    fc = pr.window_forecasts(lambda P: (start + (P / P_star) ** k, 1.0 / (beyond * P_star - P)), P_star,
                             windows, start, start + 1.0)
    assert len(fc.ratio_mean) == len(fc.ratio_var) == 2
    np.testing.assert_allclose(fc.ratio_mean, 1.0, rtol=1e-6)
    np.testing.assert_allclose(fc.ratio_var, beyond, rtol=1e-6)


@covers(pr.window_forecasts)
@budget(20)
@given(which=st.sampled_from(["P_star", "start", "y_star", "windows"]), data=st.data())
def test_window_forecasts_invalid(which, data):
    args = dict(observables=lambda P: (P, 1.0), P_star=10.0, windows=([0.2, 0.5],), start=0.0, y_star=10.0)
    args[which] = data.draw({"P_star": bad_positive(), "start": st.sampled_from([math.nan, math.inf]),
                             "y_star": st.sampled_from([math.nan, 0.0, -1.0]), "windows": st.just(())}[which])
    with raises_naming(which):
        pr.window_forecasts(**args)


@covers(pr.finite_size_forecast, pr.FiniteSizeForecast)
@budget(20)
@given(which=st.sampled_from(["rng", "window", "rel_step"]), data=st.data())
def test_finite_size_forecast_invalid(which, data):
    # bad input is refused before any cumulants are drawn (a valid call is in test_predictability.py)
    args = dict(L=16, V=4, window=[0.3, 0.45, 0.6], rng=np.random.default_rng(0), rel_step=1e-3)
    args[which] = data.draw({"rng": st.sampled_from([None, 11, "rng"]),
                             "window": st.sampled_from([[0.3], [0.5, 0.3], [-0.1, 0.2], [0.2, math.nan]]),
                             "rel_step": bad_positive()}[which])
    with raises_naming(which):
        pr.finite_size_forecast(**args)


@covers(pr.sampled_copy_observable, pr.SampledObservable)
@budget(30)
@given(n_chains=st.integers(2, 6), n_P=st.integers(1, 3), observable=st.sampled_from(["copy_share", "copy_weight"]), seed=seeds)
def test_sampled_copy_observable_valid(n_chains, n_P, observable, seed):
    rng = np.random.default_rng(seed)
    shape = (n_chains * n_P, 20)
    samples = {"m": rng.normal(0.5, 0.2, size=shape), "q": rng.normal(0.05, 0.02, size=shape),
               "c": rng.uniform(0.0, 1.0, size=shape)}
    s = pr.sampled_copy_observable(observable, samples, list(range(100, 100 + n_P)), n_chains, 6, lambda P: (0.3, 0.0))
    assert len(s.z) == len(s.lines(observable)) == n_P and all(e > 0 for e in s.se)
    np.testing.assert_allclose(np.array(s.z) * s.se, np.array(s.sampled) - 0.3, rtol=1e-9, atol=1e-12)


@covers(pr.sampled_copy_observable)
@budget(20)
@given(which=st.sampled_from(["observable", "n_chains", "L", "theory"]), data=st.data())
def test_sampled_copy_observable_invalid(which, data):
    args = dict(observable="copy_weight", samples={"c": np.full((4, 5), 0.5)}, P_values=[100, 200], n_chains=2, L=6,
                theory=lambda P: (0.5,))
    args[which] = data.draw({"observable": st.sampled_from(["linear", "", None]), "n_chains": st.sampled_from([1, 0, 2.5]),
                             "L": st.sampled_from([1, -3, 4.0]), "theory": st.sampled_from([None, 0.5])}[which])
    with raises_naming(which):
        pr.sampled_copy_observable(**args)


@covers(pr.sampled_variance, pr.SampledVariance)
@budget(30)
@given(n_chains=st.integers(2, 6), n_P=st.integers(2, 4), n_draws=st.integers(2, 30), seed=seeds)
def test_sampled_variance_valid(n_chains, n_P, n_draws, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(0.0, rng.uniform(0.1, 2.0), size=(n_chains * n_P, n_draws))
    P = list(range(100, 100 + n_P))
    s = pr.sampled_variance(x, P, n_chains, lambda P: (0.0, P / 100))
    assert len(s.z) == len(s.ratio) == len(s.lines("c")) == n_P and s.replicates.shape == (n_chains, n_P)
    assert all(v > 0 for v in s.sampled) and all(e >= 0 for e in s.se) and all(0 <= b <= 1 for b in s.between)
    np.testing.assert_allclose(np.array(s.ratio) * s.theory, s.sampled, rtol=1e-12)
    if all(e > 0 for e in s.se):
        np.testing.assert_allclose(np.array(s.z) * s.se, np.array(s.sampled) - s.theory, rtol=1e-9, atol=1e-15)
        assert s.worst_z() == pytest.approx(max(abs(z) for z in s.z), rel=1e-12)
    value, err = s.forecast(P)
    assert value == pr.susceptibility_forecast([float(p) for p in P], s.sampled) and err >= 0


@covers(pr.sampled_variance)
@budget(20)
@given(which=st.sampled_from(["x", "n_chains", "theory", "P_values"]), data=st.data())
def test_sampled_variance_invalid(which, data):
    args = dict(x=np.random.default_rng(0).normal(size=(4, 5)), P_values=[100, 200], n_chains=2,
                theory=lambda P: (0.0, 1.0))
    args[which] = data.draw({"x": st.sampled_from([np.ones((4, 5)), np.zeros((4,)), np.full((4, 5), np.nan),
                                                    np.ones((3, 5)), np.ones((4, 1))]),
                             "n_chains": st.sampled_from([1, 0, 2.5, 4]), "theory": st.sampled_from([None, 0.5]),
                             "P_values": st.sampled_from([[], [100], [100, 200, 300]])}[which])
    with raises_naming("x" if which in ("P_values",) or (which == "n_chains" and args["n_chains"] == 4) else which):
        pr.sampled_variance(**args)
