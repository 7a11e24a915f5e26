"""Tests of copylib.analysis.causal: the bimodality coefficient and the chapter's analyses."""

from __future__ import annotations

import numpy as np
import pytest

import copylib as cl
from copylib.analysis import causal as ca
from copylib.analysis.causal import bimodality_coefficient


def test_bimodality_coefficient_reference_values():
    rng = np.random.default_rng(0)
    n = 400_000
    # Gaussian 1/3 and uniform 5/9 up to sampling error (s.e. of skewness and kurtosis ~ sqrt(6/n), sqrt(24/n))
    assert bimodality_coefficient(rng.normal(size=n)) == pytest.approx(1 / 3, abs=0.01)
    assert bimodality_coefficient(rng.uniform(size=n)) == pytest.approx(5 / 9, abs=0.01)
    # two equal point masses: skewness 0, excess kurtosis -2, coefficient 1 exactly
    assert bimodality_coefficient(np.repeat([0.0, 1.0], 50)) == pytest.approx(1.0, rel=1e-12)
    x = rng.normal(size=(3, 50))
    np.testing.assert_allclose(bimodality_coefficient(x, axis=1), [bimodality_coefficient(r) for r in x], rtol=1e-14)


def test_bimodality_coefficient_rejects_bad_input():
    with pytest.raises(ValueError, match="x"):
        bimodality_coefficient([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="axis"):
        bimodality_coefficient(np.ones((5, 5)), axis=2)


# --------------------------------------------------------------------------
# the chapter's analyses (copylib.analysis.causal)


def _causal(L=8, V=3):
    return cl.ModelSpec(L, V, kind="softmax", cyclic=False, causal=True)


def test_gap_prior_variance_matches_the_stiffness():
    spec = _causal(8)
    r = ca.gap_prior_variance(spec, np.random.default_rng(0), n_draws=4000)
    assert r.stiffness == pytest.approx(8 - sum(1 / n for n in range(1, 9)), rel=1e-14)
    assert r.unit_norm2 == pytest.approx(r.stiffness, rel=1e-12)
    assert abs(r.relative_error) < r.tolerance
    with pytest.raises(ValueError, match="spec"):
        ca.gap_prior_variance(cl.ModelSpec(8, 3, kind="softmax"), np.random.default_rng(0))


def test_plugin_agreement_is_close_at_moderate_P():
    r = ca.plugin_agreement(_causal(6), 200, 8, np.random.default_rng(1))
    assert r.relative_difference < 0.05 and r.exact_sd > 0
    assert r.exact_se == pytest.approx(r.exact_sd / np.sqrt(8))
    assert r.relative_difference == pytest.approx(abs(r.exact_mean / r.plugin - 1))


def test_coexistence_scan_finds_the_first_length_with_two_minima():
    r = ca.coexistence_scan((160, 192), 4, n_scan=200)
    assert (r.first_L, r.last_L_without) == (192, 160)
    assert r.at(160) is None and r.at(192).spinodals.P_lower < r.at(192).P3 < r.at(192).spinodals.P_upper
    none = ca.coexistence_scan((4, 6), 3, P_range=(10.0, 1e4), n_scan=20)
    assert none.first_L is None and none.last_L_without is None
    with pytest.raises(ValueError, match="L_values"):
        ca.coexistence_scan((6, 4), 3)
    with pytest.raises(ValueError, match=r"\bL\b"):
        none.at(5)


def test_start_agreement_reads_the_two_maxima():
    c = np.zeros((2, 3, 2))
    c[0, :, 0] = [0.1, 0.2, 0.3]
    c[1, :, 0] = [0.1, 0.25, 0.3]
    c[..., 1] = c[..., 0]
    c[1, 2, 1] += 0.01
    r = ca.start_agreement(c, [0.1, 0.2, 0.28])
    assert r.start_gap == pytest.approx(0.01)
    assert r.deviation == pytest.approx(0.05)
    with pytest.raises(ValueError, match="c_theory"):
        ca.start_agreement(c, [0.1, 0.2])


def test_sampled_copy_weights_means_errors_and_rows():
    rng = np.random.default_rng(2)
    c_rows = rng.uniform(size=(3, 2, 4, 10, 5))
    r = ca.sampled_copy_weights(c_rows)
    chain_means = c_rows.mean(-1).mean(-1)
    np.testing.assert_allclose(r.mean, chain_means.mean(-1), rtol=1e-14)
    np.testing.assert_allclose(r.se, chain_means.std(-1, ddof=1) / 2, rtol=1e-14)
    np.testing.assert_allclose(r.mean_all, chain_means.reshape(3, -1).mean(-1), rtol=1e-14)
    np.testing.assert_allclose(r.z_starts, np.abs(r.mean[:, 1] - r.mean[:, 0]) / np.hypot(*r.se.T), rtol=1e-14)
    assert r.row_chain_means.shape == (3, 8, 5) and r.bimodality.shape == (3,)
    np.testing.assert_allclose(r.row_chain_means[:, :4], c_rows[:, 0].mean(2), rtol=1e-14)


def test_row_switch_order_orders_rows_that_switch_later():
    P = np.array([100.0, 200.0, 400.0, 800.0, 1600.0])
    P_row = np.array([150.0, 220.0, 300.0, 420.0, 600.0, 900.0])  # each row's half-way point
    y = 1 / (1 + (P_row[None, :] / P[:, None]) ** 3)
    noise = 1e-3 * np.random.default_rng(3).normal(size=(5, 6, 6))
    r = ca.row_switch_order(P, y[:, None, :] + noise, np.random.default_rng(4), n_boot=50)
    assert (np.diff(r.group_half) > 0).all() and r.ordered_fraction == 1.0
    assert r.P_half.shape == (6,) and (np.diff(r.P_half) > 0).all()
    with pytest.raises(ValueError, match="n_groups"):
        ca.row_switch_order(P, y[:, None, :], np.random.default_rng(4), n_groups=7)


def _two_state_draws(rng, n_sets=3, n_P=3, n_chains=4, n_draws=60, split=False):
    """Draws (set, P, start, chain, draw): Gaussian around a mean rising with P; with ``split`` the copy start
    sits at 0.8 and the pooling start at 0.1 (two states, hysteresis)."""
    mean = np.linspace(0.2, 0.6, n_P)[None, :, None, None, None]
    c = mean + 0.02 * rng.normal(size=(n_sets, n_P, 2, n_chains, n_draws))
    if split:
        c[:, :, 0] += 0.1 - mean[:, :, 0]
        c[:, :, 1] += 0.8 - mean[:, :, 0]
    return c


def test_no_jump_tests_pass_for_one_state_and_fail_for_two():
    rng = np.random.default_rng(5)
    P = [100, 200, 400]
    one = ca.no_jump_tests(P, _two_state_draws(rng))
    assert one.verdicts == dict.fromkeys(ca.NO_JUMP_TESTS, True)
    assert one.mixed(1.1, 100) and one.z_starts.shape == one.rhat.shape == (3,)
    assert one.mean.shape == one.bimodality.shape == (3, 3) and (one.bimodality < 5 / 9).all()
    two = ca.no_jump_tests(P, _two_state_draws(rng, split=True))
    assert not two.verdicts["no hysteresis"] and not two.verdicts["unimodal"]
    assert (two.rhat > 1.5).all() and not two.mixed(1.1, 100)
    np.testing.assert_allclose(two.start_difference, 0.7, atol=0.01)


def test_no_jump_tests_reads_a_falling_mean_and_rejects_bad_input():
    c = _two_state_draws(np.random.default_rng(6))[:, ::-1]
    r = ca.no_jump_tests([1, 2, 3], c)
    assert not r.verdicts["monotone mean"] and r.verdicts["unimodal"]
    with pytest.raises(ValueError, match="P"):
        ca.no_jump_tests([3, 2, 1], c)
    with pytest.raises(ValueError, match="bimodality_max"):
        ca.no_jump_tests([1, 2, 3], c, bimodality_max=0.2)
    with pytest.raises(ValueError, match="c must"):
        ca.no_jump_tests([1, 2], c)


def test_sample_two_start_copy_weights_shapes_and_starts():
    for spec in (_causal(6, 3), cl.ModelSpec(6, 3, kind="softmax")):
        kw = dict(n_warmup=4, thin=2, seed=3)
        d = ca.sample_two_start_copy_weights([5, 10], spec, (1, 2), 2, 10, planted_gap=4.0, **kw)
        assert d.c.shape == (2, 2, 2, 2, 5) and d.accept_rate.shape == (2, 2, 2, 2)
        assert ((d.c > 0) & (d.c < 1)).all()
        again = ca.sample_two_start_copy_weights([5, 10], spec, (1, 2), 2, 10, planted_gap=4.0, **kw)
        np.testing.assert_array_equal(d.c, again.c)
    with pytest.raises(ValueError, match="spec"):
        ca.sample_two_start_copy_weights([5], cl.ModelSpec(6, 3, kind="softmax", cyclic=False), (1,), 2, 4,
                                         n_warmup=0, thin=1, seed=0)
