"""Property tests of copylib.analysis.scaling."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import copylib as cl
from copylib.analysis import scaling as sc

from props_helpers import bad_positive, budget, covers, raises_naming

seeds = st.integers(0, 2**32 - 1)


@covers(sc.fit_power_law, sc.PowerLawFit)
@budget(30)
@given(n=st.integers(4, 30), k=st.integers(1, 3), seed=seeds)
def test_fit_power_law_valid(n, k, seed):
    rng = np.random.default_rng(seed)
    xs = {f"x{i}": rng.uniform(0.5, 50, size=n) for i in range(k)}
    if n <= k + 1:
        with raises_naming("y"):
            sc.fit_power_law(rng.uniform(1, 2, size=n), **xs)
        return
    b = rng.normal(size=k)
    y = np.exp(0.3 + sum(bi * np.log(x) for bi, x in zip(b, xs.values())) + 0.01 * rng.normal(size=n))
    f = sc.fit_power_law(y, **xs)
    assert f.coef.shape == f.se.shape == (k + 1,) and f.n == n
    assert np.isfinite(f.coef).all() and (f.se >= 0).all() and f.residual_rms >= 0
    assert f.se_jackknife.shape == (k + 1,) and f.dof == n - k - 1
    for name in xs:
        lo, hi = f.interval(name, 0.9)
        wide_lo, wide_hi = f.interval(name, 0.99)
        assert wide_lo <= lo <= f.exponent(name)[0] <= hi <= wide_hi
        i = f.names.index(name)
        assert f.larger_se(name) == (max(f.se[i], f.se_jackknife[i]) if np.isfinite(f.se_jackknife[i]) else f.se[i])
    # a rescaled y only moves the constant
    g = sc.fit_power_law(7.0 * y, **xs)
    assert np.allclose(g.coef[1:], f.coef[1:], atol=1e-8) and g.coef[0] == pytest.approx(f.coef[0] + math.log(7.0))


@covers(sc.fit_power_law)
@budget(20)
@given(bad=st.sampled_from([[1.0, math.nan, 2.0, 3.0], [1.0, 0.0, 2.0, 3.0], "abc", [[1.0, 2.0]]]))
def test_fit_power_law_invalid(bad):
    with raises_naming("y"):
        sc.fit_power_law(bad, x=[1.0, 2.0, 3.0, 4.0])
    with raises_naming("x"):
        sc.fit_power_law([1.0, 2.0, 3.0, 4.0], x=bad)


@covers(sc.PowerLawFit)
@budget(20)
@given(bad=st.one_of(bad_positive(), st.sampled_from([1.0, 1.5])))
def test_power_law_interval_invalid(bad):
    f = sc.fit_power_law([1.0, 2.1, 3.9, 8.2], x=[1.0, 2.0, 3.0, 4.0])
    with raises_naming("level"):
        f.interval("x", bad)
    with raises_naming("name"):
        f.larger_se("y")


@covers(sc.critical_sample_sizes, sc.ThresholdTable)
@budget(4)
@given(L=st.integers(3, 12), V=st.integers(2, 6))
def test_critical_sample_sizes_valid(L, V):
    names = ["P1_mean_field", "P1_map", "P1_leading", "P2_analytic_mean_field", "P3_leading"]
    if V >= L:
        with raises_naming("V_values"):
            sc.critical_sample_sizes([L], [V], names)
        return
    t = sc.critical_sample_sizes([L], [V], names)
    assert t.L.tolist() == [L] and t.V.tolist() == [V]
    for n in names:
        v = t.values[n]
        assert v.shape == (1,) and (np.isfinite(v) == t.exists[n]).all()
        assert (v[t.exists[n]] > 0).all()
    assert t.exists["P1_mean_field"].all() and t.exists["P2_analytic_mean_field"].all()


@covers(sc.critical_sample_sizes)
@budget(20)
@given(which=st.sampled_from(["L_values", "V_values", "names"]),
       bad=st.sampled_from([[], [2.5], [math.nan], "x", [[3]], [-4], [1]]))
def test_critical_sample_sizes_invalid(which, bad):
    args = dict(L_values=[8], V_values=[2], names=["P1_leading"])
    args[which] = bad if which != "names" else ["P1_nope"]
    with raises_naming(which):
        sc.critical_sample_sizes(**args)


@covers(sc.posterior_crossover)
@budget(15)
@given(which=st.sampled_from(["share", "rtol", "P_bracket"]), data=st.data())
def test_posterior_crossover_invalid(which, data):
    spec = cl.ModelSpec(L=8, V=2, kind="linear")
    args = dict(share=0.5, rtol=1e-2, P_bracket=(5.0, 1e5))
    if which == "P_bracket":
        args[which] = data.draw(st.sampled_from([(10.0, 5.0), (0.0, 5.0), (math.nan, 5.0), (5.0, math.inf)]))
    elif which == "share":
        args[which] = data.draw(st.one_of(bad_positive(), st.sampled_from([1.0, 2.0])))
    else:
        args[which] = data.draw(bad_positive())
    with raises_naming(which):
        sc.posterior_crossover(spec, **args)


@covers(sc.separated_L_exponent)
@budget(10)
@given(V=st.integers(2, 4), min_ratio=st.floats(0.5, 50.0))
def test_separated_L_exponent_valid(V, min_ratio):
    table = sc.critical_sample_sizes([8, 12, 16, 24], [2, 3, 4], ["P1_mean_field", "P2_analytic_fluct"])
    fit = sc.separated_L_exponent(table, "P2_analytic_fluct", V, min_ratio=min_ratio)
    assert fit is None or (fit.n >= 3 and math.isfinite(fit.exponent("L")[0]))


@covers(sc.separated_L_exponent)
@budget(10)
@given(which=st.sampled_from(["name", "min_ratio", "min_points"]), data=st.data())
def test_separated_L_exponent_invalid(which, data):
    table = sc.critical_sample_sizes([8, 12, 16], [2], ["P1_mean_field", "P2_analytic_fluct"])
    args = dict(name="P2_analytic_fluct", min_ratio=10.0, min_points=3)
    args[which] = {"name": "P9", "min_ratio": data.draw(bad_positive()), "min_points": 2}[which]
    with raises_naming(which):
        sc.separated_L_exponent(table, V=2, **args)


@covers(sc.plugin_copy_share, sc.fluct_and_posterior_crossovers)
@budget(5)
@given(L=st.integers(6, 10), P=st.floats(50.0, 5000.0))
def test_plugin_copy_share_and_crossovers_valid(L, P):
    spec = cl.ModelSpec(L=L, V=2, kind="linear")
    grid = dict(n_m=31, n_q=15, n_row=8, n_rest=6)
    s = sc.plugin_copy_share(P, spec, **grid)
    assert 0 <= s <= 1
    fl, post = sc.fluct_and_posterior_crossovers(spec, bracket=(0.3, 3.0), rtol=1e-2, **grid)
    assert 0.3 * fl <= post <= 3.0 * fl


@covers(sc.fluct_and_posterior_crossovers)
@budget(10)
@given(bad=st.sampled_from([(1.4, 0.7), (0.0, 1.0), (math.nan, 1.0), (0.7, math.inf)]))
def test_fluct_and_posterior_crossovers_invalid(bad):
    with raises_naming("bracket"):
        sc.fluct_and_posterior_crossovers(cl.ModelSpec(L=8, V=2, kind="linear"), bracket=bad)


@covers(sc.fixed_variance_thresholds, sc.FixedVarianceThresholds, sc.fixed_variance_identity)
@budget(4)
@given(L=st.integers(4, 10), sigma_sq=st.floats(0.5, 50.0))
def test_fixed_variance_thresholds_valid(L, sigma_sq):
    fixed = sc.fixed_variance_thresholds([L], [2, 3], sigma_sq, V=2, names=["P2_analytic_mean_field", "P3_leading"])
    assert isinstance(fixed, sc.FixedVarianceThresholds) and fixed.L.tolist() == [L]
    assert (fixed.p1.values["P1_mean_field"] > 0).all() and (fixed.p1.values["P1_leading"] > 0).all()
    # closed forms are exactly proportional to sigma0^2 = sigma_sq / L
    ref = sc.critical_sample_sizes([L], [2], ["P2_analytic_mean_field"]).values["P2_analytic_mean_field"][0]
    assert fixed.at_V["P2_analytic_mean_field"][0] == pytest.approx(ref * sigma_sq / L, rel=1e-10)
    rel = sc.fixed_variance_identity(fixed, [L])
    assert rel.shape == (1, 3)
    assert abs(rel[0, 0]) < 1e-3 and abs(rel[0, 1]) < 1e-10


@covers(sc.fixed_variance_thresholds, sc.fixed_variance_identity)
@budget(15)
@given(which=st.sampled_from(["L_values", "V_values", "sigma_sq", "V", "names"]), data=st.data())
def test_fixed_variance_thresholds_invalid(which, data):
    args = {"L_values": [8], "V_values": [2], "sigma_sq": 8.0, "V": 2, "names": ["P3_leading"]}
    args[which] = data.draw({"L_values": st.sampled_from([[], [2], [2.5], "x"]),
                             "V_values": st.sampled_from([[], [1], [2.5]]),
                             "sigma_sq": bad_positive(),
                             "V": st.sampled_from([1, 8, 2.5]),
                             "names": st.sampled_from([["P1_leading"], ["P9"]])}[which])
    with raises_naming(which):
        sc.fixed_variance_thresholds(**args)
    fixed = sc.fixed_variance_thresholds([8], [2], 8.0, V=2, names=["P3_leading"])
    with raises_naming("L_values"):
        sc.fixed_variance_identity(fixed, data.draw(st.sampled_from([[16], [], [2]])))


@covers(sc.shrinking_prior_crossovers, sc.ShrinkingPriorCrossovers)
@budget(2)
@given(scale=st.floats(4.0, 16.0))
def test_shrinking_prior_crossovers_valid(scale):
    grid = {"n_m": 31, "n_q": 15, "n_row": 8, "n_rest": 6}
    out = sc.shrinking_prior_crossovers([6, 8], scale=scale, V=2, rtol=1e-2, **grid)
    assert isinstance(out, sc.ShrinkingPriorCrossovers)
    assert (out.posterior > 0).all() and (out.mean_field > 0).all() and (out.fluct > 0).all()
    assert (0.7 * out.fluct <= out.posterior).all() and (out.posterior <= 1.4 * out.fluct).all()
    assert out.local_posterior.shape == out.local_mean_field.shape == (1,)


@covers(sc.shrinking_prior_crossovers)
@budget(15)
@given(which=st.sampled_from(["L_values", "scale", "V"]), data=st.data())
def test_shrinking_prior_crossovers_invalid(which, data):
    args = {"L_values": [6, 8], "scale": 8.0, "V": 2}
    args[which] = data.draw({"L_values": st.sampled_from([[8], [8, 6], [2, 4], []]),
                             "scale": bad_positive(),
                             "V": st.sampled_from([1, 6, 2.5])}[which])
    with raises_naming(which):
        sc.shrinking_prior_crossovers(**args)


@covers(sc.PowerLawFit)
@budget(20)
@given(n=st.integers(4, 20), level=st.floats(0.5, 0.99), seed=seeds)
def test_power_law_summary_valid(n, level, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(1.0, 100.0, size=n)
    f = sc.fit_power_law(np.exp(rng.normal(size=n)) * x**1.5, x=x)
    row = f.summary("x", level)
    assert set(row) == {"exponent", "se", "se_jackknife", "lo", "hi", "n"} and row["n"] == n
    assert row["lo"] <= row["exponent"] <= row["hi"]
    with raises_naming("level"):
        f.summary("x", 1.5)

