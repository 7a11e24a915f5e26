"""Tests of copylib.analysis.predictability: the power-law forecast of a threshold."""

from __future__ import annotations

import math

import numpy as np
import pytest

import copylib as cl
from copylib.analysis import predictability as pr
from copylib.analysis.predictability import _copy_share_of_chains, power_law_forecast, susceptibility_forecast
from copylib.analysis.softmax import basin_mean
from copylib.theory import softmax_marginal as se


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
    share, se = _copy_share_of_chains(Q, M)
    assert share == pytest.approx(Q.mean() / (Q.mean() + M.mean()), rel=1e-14)
    # independent Q, M with s.d. 0.01: se = 0.01 sqrt(M^2 + Q^2)/(M + Q)^2 / sqrt(n), to sampling error (~5 %)
    assert se == pytest.approx(0.01 * np.hypot(0.5, 0.3) / 0.8**2 / np.sqrt(4000), rel=0.1)


def test_window_forecasts_are_exact_for_a_power_law_and_a_divergence():
    # y - start = 0.01 P^1.5 reaches y_star - start at P_star; the variance diverges at 1.3 P_star
    P_star, start = 400.0, 0.25
    y_star = start + 0.01 * P_star**1.5
    fc = pr.window_forecasts(lambda P: (start + 0.01 * P**1.5, 2.0 / (1.3 * P_star - P)), P_star,
                             ([0.2, 0.35, 0.5], [0.4, 0.55, 0.7]), start, y_star)
    np.testing.assert_allclose(fc.ratio_mean, 1.0, rtol=1e-9)
    np.testing.assert_allclose(fc.ratio_var, 1.3, rtol=1e-9)
    assert fc.observations.shape == (2, 3, 2)
    assert fc.observations[0, 1, 0] == pytest.approx(start + 0.01 * (0.35 * P_star) ** 1.5)
    with pytest.raises(ValueError, match="y_star"):
        pr.window_forecasts(lambda P: (P, 1.0), P_star, ([0.2, 0.5],), 1.0, 0.5)


def test_finite_size_forecast_reads_the_row_and_the_variance():
    kw = dict(n_draws=1024, t_step=0.2, n_coarse=41, rel_step=1e-2)
    at32 = pr.finite_size_forecast(32, 4, [0.3, 0.45, 0.6], np.random.default_rng(11), P_range=(300.0, 1200.0), **kw)
    assert at32.row.L == 32 and at32.row.P_lower < at32.row.P3 < at32.row.P_upper
    # the forecast is the susceptibility forecast on the window, from the same cumulants
    spec = cl.ModelSpec(L=32, V=4, kind="softmax")
    cum = se.row_cumulants(spec, np.random.default_rng(11), n_draws=1024, t_step=0.2)
    P_obs = np.array([0.3, 0.45, 0.6]) * at32.row.P3
    var = [pr.softmax_copy_observables(P, spec, cum)[1] for P in P_obs]
    assert at32.forecast == pytest.approx(pr.susceptibility_forecast(P_obs, var) / at32.row.P3, rel=1e-12)
    assert at32.summary.startswith(f"P3 = {at32.row.P3:.0f}")
    # L = 16: no first-order point, no forecast
    at16 = pr.finite_size_forecast(16, 4, [0.3, 0.45, 0.6], np.random.default_rng(11), **kw)
    assert math.isnan(at16.row.P3) and math.isnan(at16.forecast)
    assert at16.summary.startswith("no first-order point")
    with pytest.raises(TypeError, match="rng"):
        pr.finite_size_forecast(16, 4, [0.3, 0.45], 11)


def test_sampled_copy_observable_matches_the_estimators():
    rng = np.random.default_rng(3)
    n_chains, L = 4, 8
    m = rng.normal(0.5, 0.1, size=(2 * n_chains, 50))
    q = rng.normal(0.05, 0.01, size=(2 * n_chains, 50))
    lin = pr.sampled_copy_observable("copy_share", {"m": m, "q": q}, [100, 200], n_chains, L, lambda P: (0.4, 1.0))
    for i in range(2):
        sl = slice(i * n_chains, (i + 1) * n_chains)
        share, err = pr._copy_share_of_chains((L - 1) * (q[sl] * np.sign(m[sl])).mean(-1), np.abs(m[sl]).mean(-1))
        assert lin.sampled[i] == share and lin.se[i] == err and lin.z[i] == (share - 0.4) / err
    c = rng.uniform(0.0, 1.0, size=(2 * n_chains, 50))
    soft = pr.sampled_copy_observable("copy_weight", {"c": c}, [100, 200], n_chains, L, lambda P: (P / 1000, 1.0))
    mean, err = basin_mean(c[n_chains:], c[n_chains:])
    assert soft.sampled[1] == mean and soft.se[1] == err and soft.theory == (0.1, 0.2)
    assert soft.lines("softmax")[0].startswith("softmax  P =   100: sampled")
    with pytest.raises(ValueError, match="observable"):
        pr.sampled_copy_observable("other", {"c": c}, [100], n_chains, L, lambda P: (0.1,))
    with pytest.raises(ValueError, match="samples"):
        pr.sampled_copy_observable("copy_weight", {"c": c}, [100, 200, 300], n_chains, L, lambda P: (0.1,))


def _standardised(rng, shape, var):
    """Draws with exactly mean 0 and variance ``var`` over the whole array."""
    z = rng.normal(size=shape)
    return np.sqrt(var) * (z - z.mean()) / z.std()


def test_sampled_variance_pools_the_chains_and_jackknifes_them():
    rng = np.random.default_rng(5)
    n_chains, P = 5, [100, 200]
    x = np.concatenate([_standardised(rng, (n_chains, 400), v) for v in (2.0, 3.0)])
    s = pr.sampled_variance(x, P, n_chains, lambda P: (0.0, P / 100))
    assert s.sampled == pytest.approx((2.0, 3.0), rel=1e-12) and s.theory == (1.0, 2.0)
    assert s.ratio == pytest.approx((2.0, 1.5), rel=1e-12)
    # the replicates leave chain j of every size out; the error is the jackknife over them
    assert s.replicates[2, 1] == pytest.approx(np.delete(x[n_chains:], 2, axis=0).var(), rel=1e-12)
    r = s.replicates[:, 0]
    assert s.se[0] == pytest.approx(np.sqrt((n_chains - 1) / n_chains * np.sum((r - r.mean()) ** 2)), rel=1e-12)
    assert s.z[0] == pytest.approx((2.0 - 1.0) / s.se[0], rel=1e-12) and s.worst_z() == max(abs(z) for z in s.z)
    assert s.worst_z(2.0) == pytest.approx(max(abs(2.0 - 2.0) / s.se[0], abs(3.0 - 4.0) / s.se[1]), rel=1e-12)
    assert s.lines("softmax")[1].startswith("softmax  P =   200: sampled Var 3.000e+00")


def test_sampled_variance_error_covers_the_sampling_spread():
    # independent chains of known variance: the jackknife error is the spread of the estimate over repeats
    rng = np.random.default_rng(8)
    est, se = [], []
    for _ in range(200):
        s = pr.sampled_variance(rng.normal(0.0, 1.0, size=(8, 30)), [50], 8, lambda P: (0.0, 1.0))
        est.append(s.sampled[0])
        se.append(s.se[0])
    assert np.mean(se) == pytest.approx(np.std(est), rel=0.2)  # 200 repeats: the spread is known to ~5 %
    assert abs(np.mean(est) - 1.0) < 4 * np.std(est) / np.sqrt(200)


def test_sampled_variance_between_sees_the_data_set_spread():
    rng = np.random.default_rng(6)
    same = pr.sampled_variance(rng.normal(size=(6, 200)), [100], 6, lambda P: (0.0, 1.0))
    shifted = pr.sampled_variance(rng.normal(size=(6, 200)) + 3.0 * np.arange(6)[:, None], [100], 6,
                                  lambda P: (0.0, 1.0))
    assert same.between[0] < 0.05 < 0.9 < shifted.between[0]


def test_sampled_variance_forecast_of_a_divergence():
    rng = np.random.default_rng(7)
    n_chains, P = 6, [300.0, 400.0, 500.0]
    x = np.concatenate([_standardised(rng, (n_chains, 300), 2.0 / (650.0 - p)) for p in P])
    s = pr.sampled_variance(x, P, n_chains, lambda P: (0.0, 2.0 / (650.0 - P)))
    value, err = s.forecast(P)
    assert value == pytest.approx(650.0, rel=1e-9)  # the pooled variances are exact: the forecaster is exact
    reps = [susceptibility_forecast(P, r) for r in s.replicates]
    assert err == pytest.approx(np.sqrt((n_chains - 1) / n_chains * np.sum((reps - np.mean(reps)) ** 2)), rel=1e-12)
    assert 0 < err < 0.2 * 650.0
    assert s.forecast([300, 500])[0] == susceptibility_forecast([300.0, 500.0], [s.sampled[0], s.sampled[2]])
    with pytest.raises(ValueError, match="P_obs"):
        s.forecast([300.0, 450.0])
    with pytest.raises(ValueError, match="scale"):
        s.worst_z(0.0)


def test_sampled_variance_rejects_bad_input():
    x = np.random.default_rng(0).normal(size=(4, 10))
    with pytest.raises(ValueError, match="x must have shape"):
        pr.sampled_variance(x, [100, 200, 300], 2, lambda P: (0.0, 1.0))
    with pytest.raises(ValueError, match="n_chains"):
        pr.sampled_variance(x, [100, 200, 300, 400], 1, lambda P: (0.0, 1.0))
    with pytest.raises(TypeError, match="theory"):
        pr.sampled_variance(x, [100, 200], 2, 1.0)
    with pytest.raises(ValueError, match="vary"):
        pr.sampled_variance(np.ones((4, 10)), [100, 200], 2, lambda P: (0.0, 1.0))
