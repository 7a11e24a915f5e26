"""Unit tests of copylib.inference.diagnostics: the ArviZ adapter, its single diagnostics, the drift test
and the grouped R-hat must tell mixed chains from stuck ones; z_calibration, z2_range and
studentized_z_null must tell calibrated error bars from inflated or optimistic ones."""

from __future__ import annotations

import math

import arviz as az
import numpy as np
import pytest

from copylib.inference import diagnostics as dg


def _ar1(rng, R, n, phi, offsets=0.0):
    x = np.empty((R, n))
    x[:, 0] = rng.normal(size=R) / np.sqrt(1 - phi**2)
    for t in range(1, n):
        x[:, t] = phi * x[:, t - 1] + rng.normal(size=R)
    return x + np.asarray(offsets).reshape(-1, 1)


def test_independent_chains_pass_and_ess_matches_ar1_theory():
    rng = np.random.default_rng(0)
    phi, R, n = 0.5, 4, 4000
    d = dg.chain_diagnostics(_ar1(rng, R, n, phi))
    assert d.passes()
    # AR(1): ESS = R n (1 - phi) / (1 + phi); the estimate's relative error is a few percent at this length
    expected = R * n * (1 - phi) / (1 + phi)
    assert abs(d.ess_bulk / expected - 1) < 0.15


def test_chains_stuck_in_separate_modes_fail():
    rng = np.random.default_rng(1)
    x = _ar1(rng, 4, 2000, 0.5, offsets=[0.0, 0.0, 3.0, 3.0])
    d = dg.chain_diagnostics(x)
    assert d.rhat > 1.1 and not d.passes()


def test_drift_flags_a_trend_within_chains():
    rng = np.random.default_rng(2)
    x = _ar1(rng, 8, 2000, 0.3) + np.linspace(0, 1.0, 2000)
    assert dg.chain_diagnostics(x).drift_z > 4


def test_several_observables_at_once():
    rng = np.random.default_rng(3)
    x = np.stack([_ar1(rng, 4, 1000, 0.2), _ar1(rng, 4, 1000, 0.2, offsets=[0, 0, 0, 5])], axis=-1)
    d = dg.chain_diagnostics(x)
    assert d.rhat.shape == (2,) and d.rhat[0] < dg._RHAT_MAX < d.rhat[1]


def test_z_calibration_tells_calibrated_from_inflated_and_optimistic():
    rng = np.random.default_rng(4)
    z = rng.normal(size=200)
    assert dg.z_calibration(z).calibrated
    assert dg.z_calibration(0.6 * z).mean_z2 < dg.z_calibration(0.6 * z).lo   # error bars too large
    assert dg.z_calibration(1.6 * z).mean_z2 > dg.z_calibration(1.6 * z).hi   # error bars too small


def ar1(rho, R, n, rng):
    """Stationary AR(1) chains with unit variance, shape ``(R, n)``."""
    x = np.empty((R, n))
    x[:, 0] = rng.standard_normal(R)
    e = rng.standard_normal((R, n)) * math.sqrt(1 - rho**2)
    for t in range(1, n):
        x[:, t] = rho * x[:, t - 1] + e[:, t]
    return x


def test_split_rhat():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 1000))
    assert abs(dg.split_rhat(x) - 1) < 0.01
    assert dg.split_rhat(x + np.arange(8)[:, None]) > 2
    # a trend inside each chain is caught by the split
    assert dg.split_rhat(x + np.linspace(0, 3, 1000)) > 1.2
    # trailing dimensions are treated separately
    assert dg.split_rhat(rng.standard_normal((4, 200, 3, 2))).shape == (3, 2)


def test_effective_sample_size_iid_and_ar1():
    rng = np.random.default_rng(1)
    R, n = 16, 2000
    ess = dg.effective_sample_size(rng.standard_normal((R, n)))
    assert 0.85 < ess / (R * n) < 1.15
    rho = 0.95
    x = ar1(rho, 32, 5000, rng)
    exact = x.size * (1 - rho) / (1 + rho)
    assert abs(dg.effective_sample_size(x) / exact - 1) < 0.2
    # MCSE of the mean: the exact value for AR(1) is sqrt((1+rho)/(1-rho) / (R n))
    assert abs(dg.mcse_mean(x) / math.sqrt((1 + rho) / (1 - rho) / x.size) - 1) < 0.15
    # different chain means lower the ESS
    assert dg.effective_sample_size(x + 3 * np.arange(32)[:, None]) < 0.1 * exact


def test_half_drift_z_flags_a_trend_and_passes_stationary_chains():
    rng = np.random.default_rng(3)
    noise = rng.normal(size=(2, 10, 200))
    # a chain-specific offset (different data sets) must not count as drift
    offsets = rng.normal(scale=5.0, size=(2, 10, 1))
    z = dg.half_drift_z(noise + offsets)
    assert z.shape == (2,) and (z < 4).all()
    trend = np.linspace(0, 1, 200)  # drift of 0.5 between the half means, s.e. ~ 0.14 / sqrt(10)
    assert (dg.half_drift_z(noise + offsets + trend) > 4).all()
    assert dg.half_drift_z(np.zeros((1, 3, 4)))[0] == 0.0
    assert dg.half_drift_z(np.broadcast_to(trend, (1, 3, 200)))[0] == np.inf
    with pytest.raises(ValueError, match="x"):
        dg.half_drift_z(np.zeros((1, 1, 4)))


def test_dataset_chain_diagnostics_ignores_data_set_spread_and_flags_a_stuck_chain():
    rng = np.random.default_rng(3)
    S, R, n = 6, 4, 400
    x = rng.normal(size=(S, R, n)) + 5.0 * rng.normal(size=(S, 1, 1))  # large data-set offsets
    d = dg.dataset_chain_diagnostics(x)
    assert d.rhat < 1.01 and d.drift_z < 4 and d.passes()
    assert abs(d.ess_bulk / (S * R * n) - 1) < 0.25  # iid draws: ESS close to the number of draws
    # pooled across data sets, plain R-hat mistakes the offsets for non-convergence
    assert dg.chain_diagnostics(x.reshape(S * R, n)).rhat > 1.5
    # one chain of one data set stuck elsewhere: the per-set R-hat catches it
    y = x.copy()
    y[2, 0] += 3.0
    assert dg.dataset_chain_diagnostics(y).rhat > 1.1 and not dg.dataset_chain_diagnostics(y).passes()
    # a common drift in every chain: the drift test catches it
    z = x + np.linspace(0, 1, n)
    assert dg.dataset_chain_diagnostics(z).drift_z > 4
    # several observables at once: per observable, identical to separate calls
    both = dg.dataset_chain_diagnostics(np.stack([x, z], -1))
    assert np.isclose(both.rhat[0], d.rhat) and np.isclose(both.drift_z[1], dg.dataset_chain_diagnostics(z).drift_z)


def test_grouped_rhat_is_arviz_rank_rhat_for_one_group_and_ignores_group_offsets():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(4, 3, 101))
    x[1, 2] += 0.4
    for d in range(4):
        assert dg.grouped_rhat(x[d:d + 1]) == pytest.approx(float(az.rhat(x[d], method="rank")), rel=1e-12)
    # different targets per group: shifting or rescaling a group changes nothing (ranks within groups)
    y = x * np.array([1.0, 5.0, 0.1, 2.0])[:, None, None] + np.array([0.0, 100.0, -3.0, 7.0])[:, None, None]
    assert dg.grouped_rhat(y) == pytest.approx(dg.grouped_rhat(x), rel=1e-12)
    # pooling over identical groups gives the one-group value
    assert dg.grouped_rhat(np.stack([x[0]] * 3)) == pytest.approx(dg.grouped_rhat(x[:1]), rel=1e-12)
    # whereas ArviZ over all chains of different targets flags the offsets
    assert float(az.rhat(y.reshape(12, -1), method="rank")) > 1.5


def test_grouped_rhat_flags_a_stuck_chain_and_passes_mixed_ones():
    rng = np.random.default_rng(8)
    mixed = rng.normal(size=(8, 2, 2000)) + rng.normal(size=(8, 1, 1)) * 3  # independent draws, group offsets
    assert dg.grouped_rhat(mixed) < 1.01
    stuck = mixed.copy()
    stuck[3, 1] = 4.0 + 0.3 * rng.normal(size=2000)  # one chain of one data set in another mode
    assert dg.grouped_rhat(stuck[3:4]) > 1.3  # that data set on its own
    # pooled over 8 data sets the one stuck pair is diluted (B and W are averages over groups)
    assert dg.grouped_rhat(mixed) + 0.02 < dg.grouped_rhat(stuck) < 1.1
    with pytest.raises(ValueError, match="x"):
        dg.grouped_rhat(mixed[0])


def test_z2_range_matches_chi2_and_covers_correlated_z():
    nu, lo, hi = dg.z2_range(np.eye(12))
    cal = dg.z_calibration(np.ones(12))
    assert nu == 12 and (lo, hi) == pytest.approx((cal.lo, cal.hi), rel=1e-12)
    assert dg.z2_range(np.ones((5, 5)))[0] == pytest.approx(1.0)
    # blocks of three strongly correlated z (like c, alpha_1 and the loss of one basin): coverage of the range
    block = np.full((3, 3), 0.9) + 0.1 * np.eye(3)
    corr = np.kron(np.eye(6), block)
    nu, lo, hi = dg.z2_range(corr)
    assert 6 < nu < 8
    z = np.random.default_rng(9).multivariate_normal(np.zeros(18), corr, size=40_000)
    m = (z**2).mean(1)
    inside = ((m >= lo) & (m <= hi)).mean()
    assert abs(inside - 0.95) < 0.02  # Satterthwaite is an approximation; 0.95 for chi2 blocks exactly
    naive = dg.z_calibration(np.ones(18))
    assert ((m >= naive.lo) & (m <= naive.hi)).mean() < 0.85  # the independent-z range is far too narrow
    for bad in (np.ones((2, 3)), np.array([[1.0, 2.0], [2.0, 1.0]]), np.array([[2.0, 0.0], [0.0, 1.0]])):
        with pytest.raises(ValueError, match="corr"):
            dg.z2_range(bad)
    with pytest.raises(ValueError, match="level"):
        dg.z2_range(np.eye(2), level=1.0)


def test_single_diagnostics_are_arviz_and_constant_observables_are_defined():
    rng = np.random.default_rng(10)
    x = ar1(0.8, 4, 500, rng)
    assert dg.split_rhat(x) == float(az.rhat(x, method="rank"))
    for method in dg._ESS_METHODS:
        assert dg.effective_sample_size(x, method) == float(az.ess(x, method=method))
    assert dg.mcse_mean(x) == float(az.mcse(x, method="mean"))
    # ArviZ returns nan for a constant observable; it is perfectly mixed and known exactly
    const = np.full((3, 10), 2.0)
    assert (dg.split_rhat(const), dg.effective_sample_size(const), dg.mcse_mean(const)) == (1.0, 30.0, 0.0)
    with pytest.raises(ValueError, match="method"):
        dg.effective_sample_size(x, "identity")


def test_studentized_null_of_one_comparison_is_student_t():
    # a mean of G normal groups over its standard error is t with G - 1 degrees of freedom
    G, n_sim = 10, 100_000
    null = dg.studentized_z_null([np.eye(1)], G, np.random.default_rng(3), n_sim=n_sim)
    from scipy import stats

    for x in (1.0, 2.0, 3.5):
        p = 2 * stats.t.sf(x, G - 1)
        assert abs(null.false_alarm(x) - p) < 4.5 * math.sqrt(p * (1 - p) / n_sim)
    # E z^2 = (G - 1) / (G - 3); t_9^2 has finite variance, so the mean has a standard error
    expected = (G - 1) / (G - 3)
    assert abs(null.mean_z2.mean() - expected) < 4.5 * null.mean_z2.std() / math.sqrt(n_sim)


def test_studentized_null_of_equal_comparisons_is_one_squared_t():
    # n perfectly correlated comparisons: mean z^2 is one z^2, an F(1, G - 1) variable
    G, n_sim = 6, 100_000
    null = dg.studentized_z_null([np.ones((4, 4))], G, np.random.default_rng(4), n_sim=n_sim)
    from scipy import stats

    for q in (0.05, 0.5, 0.95):
        share = np.mean(null.mean_z2 <= stats.f.ppf(q, 1, G - 1))
        assert abs(share - q) < 4.5 * math.sqrt(q * (1 - q) / n_sim)


def test_studentized_null_tends_to_chi2_with_many_groups_and_is_wider_with_few():
    n = 12
    many = dg.studentized_z_null([np.eye(n)], 400, np.random.default_rng(5), n_sim=10_000)
    _, lo, hi = dg.z2_range(np.eye(n))
    # quantiles of 10 000 draws: about 0.01; the t tails at 399 degrees of freedom widen the range by ~0.01
    assert many.z2_range() == pytest.approx((lo, hi), abs=0.04)
    few = dg.studentized_z_null([np.eye(n)], 10, np.random.default_rng(5), n_sim=40_000)
    f_lo, f_hi = few.z2_range()
    assert f_lo > lo and f_hi > hi + 0.3  # heavier tails: E z^2 = 9/7 and a longer upper tail


def test_studentized_null_tells_calibrated_errors_from_wrong_ones():
    # z tables made the way a chapter makes them: means of G data-set values over their standard error
    rng = np.random.default_rng(6)
    G, n = 10, 30
    null = dg.studentized_z_null([np.eye(n)], G, np.random.default_rng(7))
    x = rng.normal(size=(G, n))
    z = x.mean(0) / (x.std(0, ddof=1) / np.sqrt(G))
    cal = null.calibration(z)
    assert cal.calibrated and cal.n == n and cal.mean_z2 == pytest.approx(np.mean(z**2))
    assert (cal.lo, cal.hi) == null.z2_range() and 0.05 < cal.p_value <= 1
    too_large, too_small = null.calibration(0.5 * z), null.calibration(2.0 * z)  # error bars x2, x0.5
    assert not too_large.calibrated and too_large.mean_z2 < cal.lo and too_large.p_value < 0.05
    assert not too_small.calibrated and too_small.mean_z2 > cal.hi and too_small.p_value < 0.05
    with pytest.raises(ValueError, match="z"):
        null.calibration(z[:-1])


def test_studentized_null_projects_an_estimated_correlation_matrix():
    # a symmetric unit-diagonal estimate with a negative eigenvalue is not a correlation matrix
    corr = np.array([[1.0, 0.9, -0.9], [0.9, 1.0, 0.9], [-0.9, 0.9, 1.0]])
    assert np.linalg.eigvalsh(corr).min() < 0
    null = dg.studentized_z_null([corr], 8, np.random.default_rng(8), n_sim=2000)
    assert np.isfinite(null.mean_z2).all() and null.n == 3
