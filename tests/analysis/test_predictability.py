"""Tests of copylib.analysis.predictability: the power-law forecast of a threshold."""

from __future__ import annotations

import math

import numpy as np
import pytest

import copylib as cl
from copylib.analysis import predictability as pr
from copylib.analysis.predictability import copy_share_of_chains, power_law_forecast, susceptibility_forecast
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
    share, se = copy_share_of_chains(Q, M)
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
        share, err = pr.copy_share_of_chains((L - 1) * (q[sl] * np.sign(m[sl])).mean(-1), np.abs(m[sl]).mean(-1))
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
