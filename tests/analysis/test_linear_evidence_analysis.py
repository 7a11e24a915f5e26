"""Tests of copylib.analysis.linear_evidence (z scores and their calibration, MCMC diagnostics summaries)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from copylib.analysis.linear import chain_group_summary, posterior_copy_share
from copylib.analysis.linear_evidence import (
    _diagnostics_arrays,
    _diagnostics_table,
    _excess_z,
    diagnostics_per_group,
    plugin_z_test,
    z_correlation,
    z_scores,
)


def test_diagnostics_of_independent_draws_pass_and_a_shifted_chain_fails():
    rng = np.random.default_rng(1)
    m, q, E = (rng.normal(size=(2, 3, 2, 400)) for _ in range(3))
    q[1, 0, 1] += 3.0  # one chain of one data set in another state: R-hat of q sgn m must flag it
    rows = diagnostics_per_group(m, q * np.sign(m), E)
    arrays = _diagnostics_arrays(rows)
    assert arrays["rhat"].shape == (2, 3) and arrays["median_rhat"].shape == (2, 3)
    assert np.all(arrays["rhat"][0] < 1.02)
    assert arrays["rhat"][1, 1] > 1.5
    # independent draws: the summed ESS is near the number of draws (3 sets x 2 chains x 400)
    assert np.all(np.abs(arrays["ess_bulk"][0] / 2400 - 1) < 0.3)
    assert np.allclose(arrays["ess_per_chain"], arrays["ess_bulk"] / 6)
    text = _diagnostics_table(rows, [10, 40], "test")
    assert text.splitlines()[0].startswith("test:") and len(text.splitlines()) == 3
    with pytest.raises(ValueError, match="same length"):
        _diagnostics_table(rows, [10], "test")
    with pytest.raises(ValueError, match="one shape"):
        diagnostics_per_group(m, q[..., :10], E)


def test_z_scores_and_posterior_copy_share():
    rng = np.random.default_rng(2)
    s = chain_group_summary(rng.normal(size=(2, 4, 50)), rng.normal(size=(2, 4, 50)))
    theory = [SimpleNamespace(rms_m=t, q=u, abs_m=1.0)
              for t, u in zip(s.rms_m + s.rms_m_se * np.array([2.0, -1.0]), s.q + s.q_se)]
    z_m, z_q = z_scores(s, theory)
    assert np.allclose(z_m, [-2.0, 1.0]) and np.allclose(z_q, [-1.0, -1.0])
    with pytest.raises(ValueError, match="one entry per group"):
        z_scores(s, theory[:1])
    # (L-1) q = 1 against E|m| = 1: share 1/2; no copying: share 0
    share = posterior_copy_share([SimpleNamespace(q=0.1, abs_m=1.0), SimpleNamespace(q=0.0, abs_m=1.0)], L=11)
    assert np.allclose(share, [0.5, 0.0])


def test_excess_z_example_and_bad_input():
    # 3 % of 1.0 allowed: 1.05 is 0.02 beyond it, 2 standard errors of 0.01; 1.02 is inside
    np.testing.assert_allclose(_excess_z([1.05, 1.02], [0.01, 0.01], [1.0, 1.0], 0.03), [2.0, 0.0], atol=1e-12)
    with pytest.raises(ValueError, match="se must be > 0"):
        _excess_z([1.0], [0.0], [1.0], 0.03)
    with pytest.raises(ValueError, match="one shape"):
        _excess_z([1.0, 2.0], [0.1], [1.0, 2.0], 0.03)
    with pytest.raises(ValueError, match="allowance"):
        _excess_z([1.0], [0.1], [1.0], -0.01)
    with pytest.raises(ValueError, match="theory must contain only finite"):
        _excess_z([1.0], [0.1], [np.nan], 0.03)


def test_plugin_z_test_splits_at_P_split_and_applies_the_allowance_below():
    from copylib.analysis.linear_evidence import plugin_z_test

    rng = np.random.default_rng(3)
    s = chain_group_summary(rng.normal(size=(3, 6, 40)), rng.normal(size=(3, 6, 40)))
    # theory 2 % below the sampled rms at every P: inside a 3 % allowance, a z of 0.02 rms / se without one
    theory = [SimpleNamespace(rms_m=r / 1.02, q=u) for r, u in zip(s.rms_m, s.q)]
    r = plugin_z_test(s, theory, [10, 50, 200], np.random.default_rng(4), allowance=0.03, P_split=100)
    assert r.small.tolist() == [True, True, False]
    assert np.allclose(r.rel_small, 0.02) and np.all(r.excess == 0)
    assert r.z_exact.size == 1 + 3 and np.allclose(r.z_exact[3:], 0)
    assert np.allclose(r.z_exact[0], (s.rms_m[2] - theory[2].rms_m) / s.rms_m_se[2])


def test_diagnostics_summary_and_frame_of_a_shifted_chain():
    from copylib.analysis.linear_evidence import diagnostics_frame, diagnostics_summary

    rng = np.random.default_rng(1)
    m, q, E = (rng.normal(size=(2, 3, 2, 400)) for _ in range(3))
    q[1, 0, 1] += 3.0  # unmixed at the second P
    rows = diagnostics_per_group(m, q * np.sign(m), E)
    s = diagnostics_summary(rows, [10, 40], mixed_P=[10])
    assert s.mixed.tolist() == [True, False]
    assert s.worst["rhat_q"] < 1.02
    assert s.worst["rhat_q_bad"] > 1.5
    frame = diagnostics_frame(rows, [10, 40])
    assert frame.loc[(40, "q sgn m"), "R-hat (worst)"] == pytest.approx(s.worst["rhat_q_bad"])
    with pytest.raises(ValueError, match="mixed_P"):
        diagnostics_summary(rows, [10, 40], mixed_P=[20])


def _z_test(z_m, small, rel_small):
    from copylib.analysis.linear_evidence import PluginZTest

    z_m = np.asarray(z_m, dtype=float)
    return PluginZTest(small=np.asarray(small), z_m=z_m, z_q=np.zeros_like(z_m), z_exact=z_m[~np.asarray(small)],
                       rel_small=np.asarray(rel_small, dtype=float), excess=np.zeros(int(np.sum(small))),
                       corr=np.eye(int(np.sum(~np.asarray(small)))), calibration=None)


def test_combined_excess_is_stouffers_sum_over_the_small_P():
    from copylib.analysis.linear_evidence import combined_excess

    a = _z_test([1.0, 1.0, 9.0], [True, True, False], [0.01, 0.03])
    b = _z_test([1.0, -1.0, 2.0], [True, False, False], [0.02])
    r = combined_excess([a, b])
    assert r.n == 3 and r.n_pos == 3 and r.z.tolist() == [1.0, 1.0, 1.0]  # the z at P >= P_split are left out
    assert r.z_combined == pytest.approx(3 / np.sqrt(3))
    assert (r.rel_min, r.rel_max) == (0.01, 0.03) and r.rel_mean == pytest.approx(0.02)
    with pytest.raises(TypeError, match="tests"):
        combined_excess([])
    with pytest.raises(ValueError, match="tests"):
        combined_excess([_z_test([1.0], [False], [])])


def test_family_false_alarm_is_the_student_t_tail_and_its_union_bound():
    from scipy import stats

    from copylib.analysis.linear_evidence import family_false_alarm

    r = family_false_alarm(10, 5)
    assert r.df == 9 and r.per_test == pytest.approx(2 * stats.t.sf(4, 9)) and r.family == pytest.approx(5 * r.per_test)
    assert family_false_alarm(10, 10**9).family == 1.0
    # more data sets per error: thinner tails, fewer false alarms
    assert family_false_alarm(40, 5).per_test < r.per_test
    with pytest.raises(ValueError, match="n_sets"):
        family_false_alarm(1, 5)
    with pytest.raises(ValueError, match="threshold"):
        family_false_alarm(10, 5, threshold=0.0)


def test_moments_and_z_test_tables_put_samples_next_to_the_theory():
    from copylib.analysis.linear_evidence import moments_table, plugin_z_test, z_test_table

    rng = np.random.default_rng(5)
    s = chain_group_summary(rng.normal(size=(2, 6, 30)), rng.normal(size=(2, 6, 30)))
    th = [SimpleNamespace(rms_m=1.0, q=0.1), SimpleNamespace(rms_m=0.5, q=0.2)]
    mins = [SimpleNamespace(coordinates={"m": 0.0}), SimpleNamespace(coordinates={"m": 0.3})]
    table = moments_table([10, 100], s, {"plug-in": th, "fluct": th, "mean_field": th}, {"fluct": mins, "mean_field": mins})
    assert list(table.index) == [10, 100] and table.loc[100, "mean-field m*"] == 0.3
    assert table.loc[10, "sampled √E m²"] == s.rms_m[0] and table.loc[100, "plug-in (q)"] == 0.2
    zt = plugin_z_test(s, th, [10, 100], np.random.default_rng(6))
    zt_table = z_test_table([10, 100], s, th, zt)
    np.testing.assert_allclose(zt_table["z(√E m²)"], (s.rms_m - [1.0, 0.5]) / s.rms_m_se)
    with pytest.raises(ValueError, match="theories"):
        moments_table([10, 100], s, {"plug-in": th}, {"fluct": mins, "mean_field": mins})
    with pytest.raises(ValueError, match="P_values"):
        z_test_table([10], s, th, zt)
    with pytest.raises(TypeError, match="test"):
        z_test_table([10, 100], s, th, None)


def _correlated_sets(rng, n_groups, n_sets, rho, scale=0.1):
    """Draws ``(n_groups, n_sets, 4)`` of ``m, q`` whose data-set means of ``m^2`` and ``q sign m``
    are jointly normal with correlation ``rho`` (the same at every group), means ``1`` and ``0.5``,
    standard deviation ``scale``, and no Monte Carlo noise: the spread over data sets is the true error."""
    x = rng.multivariate_normal([0.0, 0.0], [[1.0, rho], [rho, 1.0]], size=(n_groups, n_sets))
    a, b = 1 + scale * x[..., 0], 0.5 + scale * x[..., 1]
    sign = np.array([1.0, -1.0, 1.0, -1.0])
    m = np.sqrt(a)[..., None] * sign
    return m, b[..., None] * sign


def _true_moments(n_groups):
    return [SimpleNamespace(rms_m=1.0, q=0.5)] * n_groups


def test_z_correlation_recovers_the_data_sets_correlation_and_is_zero_across_P():
    m, q = _correlated_sets(np.random.default_rng(0), 3, 2000, 0.6)
    s = chain_group_summary(m, q)
    corr = z_correlation(s, np.array([False, True, True]))
    # order: z_m of groups 1, 2, then z_q of groups 0, 1, 2
    assert corr.shape == (5, 5)
    assert corr[0, 3] == pytest.approx(0.6, abs=0.05) and corr[1, 4] == pytest.approx(0.6, abs=0.05)
    assert corr[0, 1] == 0 and corr[0, 2] == 0 and corr[0, 4] == 0 and corr[2, 3] == 0
    r = plugin_z_test(s, _true_moments(3), [10, 200, 300], np.random.default_rng(0), n_sim=200)
    np.testing.assert_array_equal(r.corr_mq, [corr[0, 3], corr[1, 4]])
    # independent values: the noise bias of r^2 is removed, so the estimate is mostly exactly 0
    m, q = _correlated_sets(np.random.default_rng(1), 40, 10, 0.0)
    r = np.diag(z_correlation(chain_group_summary(m, q), np.ones(40, dtype=bool))[:40, 40:])
    assert np.mean(r == 0) > 0.5 and np.abs(r).max() < 0.9


def test_calibrated_range_covers_mean_z2_of_correlated_z_with_true_errors():
    # strongly correlated z_m, z_q at each P: an independent-z null would be too narrow, this one must cover
    rng = np.random.default_rng(2)
    inside = []
    for _ in range(200):
        m, q = _correlated_sets(rng, 6, 10, 0.9)
        s = chain_group_summary(m, q)
        r = plugin_z_test(s, _true_moments(6), [5, 17, 40, 100, 300, 1000], rng, n_sim=2000)
        inside.append(r.calibration.calibrated)
    # the 95 % range: at most 5 % outside, give or take the binomial noise of 200 tables (sd 1.5 %)
    assert 0.90 <= np.mean(inside) <= 0.995


def test_calibration_detects_error_bars_off_by_a_factor_of_two():
    from dataclasses import replace

    rng = np.random.default_rng(3)
    too_wide, too_narrow = [], []
    for _ in range(50):
        m, q = _correlated_sets(rng, 20, 10, 0.5)
        s = chain_group_summary(m, q)
        for factor, out in ((2.0, too_wide), (0.5, too_narrow)):
            wrong = replace(s, rms_m_se=factor * s.rms_m_se, q_se=factor * s.q_se)
            c = plugin_z_test(wrong, _true_moments(20), np.arange(1.0, 21.0) * 10, rng, n_sim=2000).calibration
            out.append(c.mean_z2 < c.lo if factor > 1 else c.mean_z2 > c.hi)
    assert np.mean(too_wide) >= 0.9 and np.mean(too_narrow) >= 0.9


def test_chain_group_summary_error_is_the_spread_of_the_data_set_means():
    rng = np.random.default_rng(4)
    m, q = rng.normal(size=(2, 7, 30)), rng.normal(size=(2, 7, 30))
    s = chain_group_summary(m, q)
    m2, qs = (m**2).mean(-1), (q * np.sign(m)).mean(-1)
    np.testing.assert_allclose(s.q_se, qs.std(1, ddof=1) / np.sqrt(7), rtol=1e-12)
    np.testing.assert_allclose(s.rms_m_se, m2.std(1, ddof=1) / np.sqrt(7) / (2 * np.sqrt(m2.mean(1))), rtol=1e-12)
    assert s.n_sets == 7 and np.array_equal(s.m2_sets, m2) and np.array_equal(s.q_sets, qs)
