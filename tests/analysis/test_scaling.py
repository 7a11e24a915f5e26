"""Tests of copylib.analysis.scaling (threshold grids, power-law fits, the posterior crossover)."""

from __future__ import annotations

import numpy as np
import pytest

from copylib import ModelSpec
from copylib.analysis.scaling import (
    THRESHOLDS,
    critical_sample_sizes,
    fit_power_law,
    fixed_variance_identity,
    fixed_variance_thresholds,
    fluct_and_posterior_crossovers,
    plugin_copy_share,
    posterior_crossover,
    separated_L_exponent,
    shrinking_prior_crossovers,
)
from copylib.theory import linear as lt
from copylib.theory import softmax as st
from copylib.theory.linear_marginal import plugin_posterior_moments


def test_fit_power_law_recovers_exact_exponents():
    rng = np.random.default_rng(0)
    L = rng.uniform(10, 1000, size=30)
    V = rng.uniform(2, 20, size=30)
    y = 3.0 * L**1.5 * V**-0.25
    f = fit_power_law(y, L=L, V=V)
    assert f.names == ("const", "L", "V") and f.n == 30
    assert f.exponent("L")[0] == pytest.approx(1.5, abs=1e-12)
    assert f.exponent("V")[0] == pytest.approx(-0.25, abs=1e-12)
    assert f.coef[0] == pytest.approx(np.log(3.0), abs=1e-10)
    assert f.residual_rms < 1e-12 and np.all(f.se < 1e-10)


def test_fit_power_law_standard_errors_are_calibrated():
    # log-normal noise of known size: the OLS standard error must match the spread of the
    # estimated exponent over independent repetitions (within 15 %: 400 repetitions give
    # the spread to about 3.5 %, the mean s.e. to better)
    rng = np.random.default_rng(1)
    x = np.geomspace(1, 100, 12)
    est, se = [], []
    for _ in range(400):
        f = fit_power_law(x**2 * np.exp(0.1 * rng.normal(size=x.size)), x=x)
        b, s = f.exponent("x")
        est.append(b)
        se.append(s)
    assert np.mean(est) == pytest.approx(2.0, abs=3 * np.std(est) / 20)
    assert np.std(est, ddof=1) == pytest.approx(np.mean(se), rel=0.15)


def test_fit_power_law_interval_covers_the_true_exponent_at_its_level():
    # synthetic power laws with a known exponent and Gaussian scatter of ln y: the Student-t
    # interval must cover the true exponent in 95 % of repetitions. 1000 repetitions give the
    # coverage to a binomial s.e. of 0.7 %, so [0.93, 0.97] is a 3-s.e. band; a z-interval
    # (no t quantile) at n = 5 would cover only about 88 %, the bare s.e. about 61 %.
    rng = np.random.default_rng(2)
    x = np.array([16.0, 24.0, 32.0, 48.0, 64.0])
    hits = hits_se = 0
    for _ in range(1000):
        f = fit_power_law(5.0 * x**1.7 * np.exp(0.05 * rng.normal(size=x.size)), L=x)
        lo, hi = f.interval("L", 0.95)
        hits += lo <= 1.7 <= hi
        b, s = f.exponent("L")
        hits_se += abs(b - 1.7) <= s
    assert 0.93 <= hits / 1000 <= 0.97
    assert hits_se / 1000 < 0.75  # one bare s.e. with 3 degrees of freedom is not a 95 % interval
    assert f.dof == 3


def test_fit_power_law_jackknife():
    # an exact power law: every leave-one-out fit is the same, jackknife s.e. 0
    x = np.array([2.0, 4.0, 8.0, 16.0])
    f = fit_power_law(3 * x**2.5, x=x)
    assert np.all(f.se_jackknife < 1e-10)
    # a curved law (local exponent 1 + 2/ln x, like L ln^2 L): the jackknife s.e. equals the
    # formula sqrt((n-1)/n sum (b_(i) - mean)^2) over the explicit leave-one-out fits
    x = np.array([32.0, 64.0, 128.0, 256.0, 512.0])
    y = x * np.log(x) ** 2
    f = fit_power_law(y, L=x)
    loo = [np.polyfit(np.log(np.delete(x, i)), np.log(np.delete(y, i)), 1)[0] for i in range(x.size)]
    assert f.se_jackknife[1] == pytest.approx(np.sqrt(4 / 5 * np.sum((loo - np.mean(loo)) ** 2)), rel=1e-10)
    assert f.exponent("L")[0] == pytest.approx(np.polyfit(np.log(x), np.log(y), 1)[0], rel=1e-12)
    # three points, two coefficients: each leave-one-out fit is exact, still defined
    f3 = fit_power_law(y[:3], L=x[:3])
    assert np.isfinite(f3.se_jackknife).all() and f3.dof == 1
    lo, hi = f3.interval("L", 0.95)  # t_1 = 12.71: honestly wide
    assert (hi - lo) / 2 == pytest.approx(12.706 * f3.se[1], rel=1e-3)


def test_fit_power_law_rejects_bad_input():
    with pytest.raises(ValueError, match="y"):
        fit_power_law([1.0, -2.0, 3.0], x=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="x"):
        fit_power_law([1.0, 2.0, 3.0], x=[1.0, 0.0, 3.0])
    with pytest.raises(ValueError, match="regressor"):
        fit_power_law([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="more points"):
        fit_power_law([1.0, 2.0], x=[1.0, 2.0])
    with pytest.raises(ValueError, match="name"):
        fit_power_law([1.0, 2.0, 4.0], x=[1.0, 2.0, 3.0]).exponent("z")
    with pytest.raises(ValueError, match="level"):
        fit_power_law([1.0, 2.0, 4.0], x=[1.0, 2.0, 3.0]).interval("x", 1.0)


def test_critical_sample_sizes_equal_the_theory_functions():
    t = critical_sample_sizes([8, 48], [2, 4, 8], names=["P1_mean_field", "P2_analytic_fluct", "P3_mean_field",
                                                          "P3_leading"])
    # all pairs with V < L, in order
    assert list(zip(t.L, t.V)) == [(8, 2), (8, 4), (48, 2), (48, 4), (48, 8)]
    for i, (L, V) in enumerate(zip(t.L, t.V)):
        lin = ModelSpec(L=int(L), V=int(V), kind="linear")
        assert t.values["P1_mean_field"][i] == lt.p1_analytic(lin, "mean_field")
        assert t.values["P2_analytic_fluct"][i] == lt.p2_analytic(lin, "fluct")
    # at L = 8 there is no first-order point and the leading-order formula has no root (L < 2 e^3 + 1)
    assert not t.exists["P3_mean_field"][:2].any() and np.isnan(t.values["P3_mean_field"][:2]).all()
    assert not t.exists["P3_leading"][:2].any()
    soft = ModelSpec(L=48, V=4, kind="softmax")
    assert t.values["P3_mean_field"][3] == st.first_order_point(soft, "mean_field").P3
    assert t.values["P3_leading"][3] == st.p3_leading_order(48, 4, soft)


def test_critical_sample_sizes_rejects_bad_input():
    with pytest.raises(ValueError, match="L_values"):
        critical_sample_sizes([2, 8], [2])
    with pytest.raises(ValueError, match="V_values"):
        critical_sample_sizes([8], [1.5])
    with pytest.raises(ValueError, match="names"):
        critical_sample_sizes([8], [2], names=["P9"])
    with pytest.raises(ValueError, match="V_values"):
        critical_sample_sizes([4], [4, 8])
    assert set(THRESHOLDS) >= {"P1_mean_field", "P2_fluct", "P3_mean_field"}


def test_posterior_crossover_is_where_the_share_is_one_half():
    spec = ModelSpec(L=8, V=2, kind="linear")
    P2 = posterior_crossover(spec, P_bracket=(5.0, 1e5), rtol=1e-4)
    for P, sign in ((P2 * 0.98, -1), (P2 * 1.02, 1)):
        mom = plugin_posterior_moments(P, spec)
        Q = (spec.L - 1) * mom.q
        assert np.sign(Q / (mom.abs_m + Q) - 0.5) == sign
    with pytest.raises(ArithmeticError, match="P_bracket"):
        posterior_crossover(spec, P_bracket=(2 * P2, 4 * P2))
    with pytest.raises(ValueError, match="share"):
        posterior_crossover(spec, share=1.0)


def test_critical_sample_sizes_marks_a_missing_crossover():
    # at L = 16, V = 12 the mean-field copy share is above 1/2 right at P1: no crossover to locate
    t = critical_sample_sizes([16], [12], names=["P2_mean_field", "P1_mean_field"])
    assert not t.exists["P2_mean_field"][0] and np.isnan(t.values["P2_mean_field"][0])
    assert t.exists["P1_mean_field"][0]


def test_separated_L_exponent_uses_only_sizes_far_above_P1():
    table = critical_sample_sizes([16, 32, 64, 128], [4], ["P1_mean_field", "P2_analytic_mean_field"])
    fit = separated_L_exponent(table, "P2_analytic_mean_field", 4, min_ratio=1.0)
    assert fit.n == 4 and fit.exponent("L")[0] == pytest.approx(1.5, abs=1e-9)  # the closed form is exactly L^{3/2}
    assert separated_L_exponent(table, "P2_analytic_mean_field", 4, min_ratio=1e9) is None


def test_plugin_copy_share_is_one_half_at_the_posterior_crossover():
    spec = ModelSpec(L=8, V=2, kind="linear")
    grid = dict(n_m=41, n_q=17, n_row=10, n_rest=8)
    fl, post = fluct_and_posterior_crossovers(spec, bracket=(0.3, 3.0), rtol=1e-4, **grid)
    assert fl == pytest.approx(lt.p2_numerical(spec, "fluct", rtol=1e-4), rel=1e-12)
    # the root is located to 1e-4 in P; the share's slope in ln P is O(1), so 1e-3 covers it
    assert plugin_copy_share(post, spec, **grid) == pytest.approx(0.5, abs=1e-3)


def test_fixed_variance_thresholds_are_mstar_thresholds_rescaled():
    fixed = fixed_variance_thresholds([8, 16], [2, 3], 8.0, V=2, names=["P2_mean_field", "P2_fluct"])
    assert fixed.L.tolist() == [8, 16] and fixed.V == 2 and fixed.sigma_sq == 8.0
    assert fixed.p1.L.tolist() == [8, 8, 16, 16] and fixed.p1.V.tolist() == [2, 3, 2, 3]
    # at L = sigma^2 the two conventions coincide
    mstar = critical_sample_sizes([8], [2, 3], ["P1_mean_field", "P1_leading", "P2_mean_field", "P2_fluct"])
    for n in ("P1_mean_field", "P1_leading"):
        np.testing.assert_allclose(fixed.p1.values[n][:2], mstar.values[n], rtol=1e-12)
    for n in ("P2_mean_field", "P2_fluct"):
        assert fixed.at_V[n][0] == pytest.approx(mstar.values[n][0], rel=1e-12)
    # at L = 16 every threshold is M*'s times sigma^2 / L = 1/2 (up to the root finders' tolerances)
    rel = fixed_variance_identity(fixed, [16])
    assert rel.shape == (1, 3) and np.abs(rel).max() < 1e-3
    # the leading-order P1 is exactly proportional to sigma0^2
    lead16 = critical_sample_sizes([16], [2, 3], ["P1_leading"]).values["P1_leading"]
    np.testing.assert_allclose(fixed.p1.values["P1_leading"][2:], lead16 * 8.0 / 16, rtol=1e-12)


def test_fixed_variance_rejects_bad_input():
    with pytest.raises(ValueError, match="sigma_sq"):
        fixed_variance_thresholds([8], [2], -1.0)
    with pytest.raises(ValueError, match="V"):
        fixed_variance_thresholds([8], [2], 8.0, V=8)
    with pytest.raises(ValueError, match="names"):
        fixed_variance_thresholds([8], [2], 8.0, V=2, names=["P1_mean_field"])
    fixed = fixed_variance_thresholds([8], [2], 8.0, V=2, names=[])
    with pytest.raises(ValueError, match="L_values"):
        fixed_variance_identity(fixed, [16])
    with pytest.raises(TypeError, match="fixed"):
        fixed_variance_identity("table", [8])


def test_shrinking_prior_crossovers_match_the_single_computations():
    grid = dict(n_m=31, n_q=15, n_row=8, n_rest=6)
    out = shrinking_prior_crossovers([8, 12], scale=8.0, V=2, rtol=1e-2, **grid)
    assert out.L.tolist() == [8, 12] and out.local_posterior.shape == (1,)
    sp = ModelSpec(L=12, V=2, kind="linear", sigma_G=float(np.sqrt(8.0 / 12)))
    fl, post = fluct_and_posterior_crossovers(sp, rtol=1e-2, **grid)
    assert out.fluct[1] == pytest.approx(fl, rel=1e-12) and out.posterior[1] == pytest.approx(post, rel=1e-12)
    assert out.mean_field[1] == pytest.approx(lt.p2_numerical(sp, "mean_field", rtol=1e-4), rel=1e-12)
    assert out.local_mean_field[0] == pytest.approx(np.log(out.mean_field[1] / out.mean_field[0]) / np.log(1.5))
    with pytest.raises(ValueError, match="L_values"):
        shrinking_prior_crossovers([8])
    with pytest.raises(ValueError, match="scale"):
        shrinking_prior_crossovers([8, 12], scale=0.0)


def test_power_law_summary_is_the_exponent_with_its_errors():
    rng = np.random.default_rng(3)
    L = np.geomspace(16, 256, 6)
    f = fit_power_law(2.0 * L**2 * np.exp(0.01 * rng.normal(size=L.size)), L=L)
    row = f.summary("L", 0.9)
    assert row["exponent"] == f.exponent("L")[0] and row["se"] == f.exponent("L")[1]
    assert row["se_jackknife"] == f.se_jackknife[1] and row["n"] == 6
    assert (row["lo"], row["hi"]) == f.interval("L", 0.9)
    with pytest.raises(ValueError, match="name"):
        f.summary("V")

