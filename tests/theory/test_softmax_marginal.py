"""Tests of copylib.theory.softmax_marginal: the row cumulant generating function, the
saddlepoint prior of (alpha_1, gamma_1), the plug-in saddlepoint marginal of the copy
weight, its branches and the first-order point; and softmax_experiments.basin_mean."""

from __future__ import annotations

import math

import numpy as np
import pytest

from copylib import ModelSpec, attention
from copylib.analysis import softmax as sx
from copylib.posterior.order_parameters import invariants, plugin_action
from copylib.theory import softmax_marginal as se

SMALL = ModelSpec(L=8, V=3, kind="softmax")
SPEC = ModelSpec(L=32, V=4, kind="softmax")


@pytest.fixture(scope="module")
def small_cum():
    return se.row_cumulants(SMALL, np.random.default_rng(0), n_draws=4096,
                            lam1=np.linspace(-200, 100, 151), lam2=np.linspace(-150, 150, 101))


@pytest.fixture(scope="module")
def big_cum():
    return se.row_cumulants(SPEC, np.random.default_rng(1), n_draws=2048)


def _prior_rows(spec, n, seed):
    g = spec.sigma_G * np.random.default_rng(seed).normal(size=(n, spec.L, spec.L))
    A = attention(g, "softmax")
    a1, _, g1, _ = invariants(A)
    return A, a1, g1


def test_untilted_row_moments_match_the_prior(small_cum):
    i, j = np.searchsorted(small_cum.lam1, 0.0), np.searchsorted(small_cum.lam2, 0.0)
    assert small_cum.lam1[i] == 0 and small_cum.lam2[j] == 0
    assert abs(small_cum.phi[i, j]) < 1e-6  # ln E[1]
    # E v = 1/L exactly (exchangeable logits); quasi-Monte Carlo error ~1e-4
    assert small_cum.mean[i, j, 1] == pytest.approx(1 / SMALL.L, rel=2e-3)
    A, a1, g1 = _prior_rows(SMALL, 20_000, 3)
    u = (A**2).sum(-1).ravel()
    se_u = u.std() / math.sqrt(u.size)
    assert abs(small_cum.mean[i, j, 0] - u.mean()) < 5 * se_u
    v = np.einsum("nll->nl", np.roll(A, 1, axis=-1)).ravel()  # A[l, l-1]
    assert small_cum.cov[i, j, 1, 1] == pytest.approx(v.var(), rel=0.05)
    assert small_cum.cov[i, j, 0, 0] == pytest.approx(u.var(), rel=0.05)


def test_tilted_means_are_gradients_of_phi():
    # phi is smooth in lam (common random numbers): central differences give the means
    cum = se.row_cumulants(SMALL, np.random.default_rng(2), n_draws=1024, lam1=np.linspace(-30, 10, 161),
                           lam2=np.linspace(-20, 30, 201))
    inner = (slice(2, -2), slice(2, -2))
    d1 = np.gradient(cum.phi, cum.lam1, axis=0, edge_order=2)[inner]
    d2 = np.gradient(cum.phi, cum.lam2, axis=1, edge_order=2)[inner]
    np.testing.assert_allclose(d1, cum.mean[..., 0][inner], rtol=2e-3)
    np.testing.assert_allclose(d2, cum.mean[..., 1][inner], rtol=2e-3)
    dv = np.gradient(cum.mean[..., 1], cum.lam2, axis=1)[inner]
    du = np.gradient(cum.mean[..., 0], cum.lam2, axis=1)[inner]
    np.testing.assert_allclose(dv, cum.cov[..., 1, 1][inner], rtol=1e-2)
    np.testing.assert_allclose(du, cum.cov[..., 0, 1][inner], rtol=1e-2, atol=1e-3 * np.abs(du).max())


def test_deterministic_for_a_seed():
    kw = dict(n_draws=64, lam1=np.linspace(-5, 5, 5), lam2=np.linspace(-5, 5, 7))
    a = se.row_cumulants(SMALL, np.random.default_rng(5), **kw)
    b = se.row_cumulants(SMALL, np.random.default_rng(5), **kw)
    np.testing.assert_array_equal(a.phi, b.phi)
    np.testing.assert_array_equal(a.cov, b.cov)


def test_prior_marginal_matches_brute_monte_carlo(small_cum):
    m = se.copy_weight_marginal(None, SMALL, small_cum, c_grid=np.linspace(0.02, 0.6, 1161))
    assert np.trapezoid(np.exp(m.log_density), m.c) == pytest.approx(1.0, abs=1e-12)
    _, a1, g1 = _prior_rows(SMALL, 40_000, 4)
    c = g1 / SMALL.L
    # E c = 1/L exactly; the leading saddlepoint density is off by O(L^-3/2) in the mean:
    # 0.9 % at L = 8 (0.3 % at L = 16, 0.1 % at L = 32)
    assert m.mean() == pytest.approx(1 / SMALL.L, rel=0.015)
    assert m.mean("alpha_1") == pytest.approx(a1.mean(), rel=0.015)
    assert abs(c.mean() - 1 / SMALL.L) < 4 * c.std() / math.sqrt(c.size)  # the draws themselves
    # the variance (the susceptibility the predictability chapter extrapolates): the same 1.5 % saddlepoint
    # allowance plus 4 standard errors of a sample variance, sqrt(2/n) relative
    assert m.var() == pytest.approx(c.var(ddof=1), rel=0.015 + 4 * math.sqrt(2 / c.size))
    # tail probabilities (a large deviation for 8 rows) within 5 % of the draws
    for q in (0.2, 0.25):
        frac = (c > q).mean()
        assert m.mass(q) == pytest.approx(frac, rel=0.05 + 4 / math.sqrt(frac * c.size))


def test_posterior_marginal_matches_reweighted_prior_draws(small_cum):
    """p(s | P) = p0(s) e^{-S(s)}: importance-reweight exact prior draws by e^{-S}."""
    P = 60.0
    m = se.copy_weight_marginal(P, SMALL, small_cum, c_grid=np.linspace(0.02, 0.6, 1161))
    _, a1, g1 = _prior_rows(SMALL, 40_000, 6)
    logw = -plugin_action(a1, SMALL.L, g1, SMALL.L, P, SMALL)
    w = np.exp(logw - logw.max())
    ess = w.sum() ** 2 / (w**2).sum()
    assert ess > 2000  # the reweighting is reliable at this P
    c = g1 / SMALL.L
    mean_w = (w * c).sum() / w.sum()
    sd = math.sqrt((w * (c - mean_w) ** 2).sum() / w.sum())
    # 4 standard errors of the reweighted mean plus the saddlepoint error at L = 8 (2 % here, in the tail)
    assert m.mean() == pytest.approx(mean_w, abs=4 * sd / math.sqrt(ess) + 0.03 * mean_w)
    assert m.mean() > c.mean() + 0.01  # the data really moved the posterior


def test_marginal_is_normalised_and_moves_up_with_P(big_cum):
    means = []
    for P in (300.0, 600.0, 1000.0):
        m = se.copy_weight_marginal(P, SPEC, big_cum)
        assert np.trapezoid(np.exp(m.log_density), m.c) == pytest.approx(1.0, abs=1e-12)
        assert np.isfinite(m.alpha_1).all() and np.isfinite(m.loss).all()
        means.append(m.mean())
    assert means[0] < means[1] < means[2]
    assert m.potential.min() == 0.0


def test_coverage_is_checked(big_cum):
    narrow = se.row_cumulants(SPEC, np.random.default_rng(0), n_draws=64, lam1=np.linspace(-20, 5, 6),
                              lam2=np.linspace(-10, 10, 11))
    with pytest.raises(ValueError, match="widen lam1/lam2"):
        se.copy_weight_marginal(1000.0, SPEC, narrow, c_grid=np.linspace(0.02, 0.05, 31))
    with pytest.raises(ValueError, match="c_grid"):
        se.copy_weight_marginal(1000.0, SPEC, narrow, c_grid=np.linspace(0.02, 0.9, 31), check_coverage=False)
    with pytest.raises(ValueError, match="cumulants"):
        se.copy_weight_marginal(100.0, SMALL, big_cum)


def test_row_cumulants_rejects_a_short_t_range():
    with pytest.raises(ValueError, match="t_range"):
        se.row_cumulants(SMALL, np.random.default_rng(0), n_draws=16, t_range=(-3.0, 3.0))
    with pytest.raises(ValueError, match="t_step"):
        se.row_cumulants(SMALL, np.random.default_rng(0), n_draws=16, t_step=0.5)


def _double_well(tilt=0.5, barrier=2.0):
    """A quartic double well in c, minima near 0.05 and 0.3, the copy one raised by ``tilt`` nats."""
    c = np.linspace(0.01, 0.6, 2000)
    U = barrier * ((c - 0.05) * (c - 0.3) / 0.125**2) ** 2 + tilt * (c - 0.05) / 0.25
    logd = -U - math.log(np.trapezoid(np.exp(-U), c))
    return se.CopyWeightMarginal(P=1.0, c=c, log_density=logd, alpha_1=10 * c, loss=1 - c, edge=-50.0)


def test_branches_of_a_double_well():
    m = _double_well()
    b = se.marginal_branches(m)
    assert b.n_minima == 2
    assert b.minima[0] == pytest.approx(0.05, abs=0.01) and b.minima[1] == pytest.approx(0.3, abs=0.01)
    assert 0.1 < b.barrier < 0.2
    assert math.exp(-b.free_energy[0]) + math.exp(-b.free_energy[1]) == pytest.approx(1.0, abs=1e-9)
    assert b.barrier_height[0] > 0 and b.barrier_height[1] > 0
    assert b.barrier_height[0] - b.barrier_height[1] == pytest.approx(0.5, abs=0.05)
    assert b.copy_weight[0] < b.barrier < b.copy_weight[1]
    np.testing.assert_allclose(b.alpha_1, 10 * np.array(b.copy_weight), rtol=1e-9)
    np.testing.assert_allclose(b.loss, 1 - np.array(b.copy_weight), rtol=1e-9)
    one = se.marginal_branches(_double_well(tilt=-20.0))
    assert one.n_minima < 2 and all(math.isnan(x) for x in one.free_energy)


def test_exact_transition_at_L32(big_cum):
    tr = se.marginal_transition(SPEC, big_cum)
    assert tr.P_lower < tr.P3 < tr.P_upper
    assert tr.at_P3.free_energy[0] == pytest.approx(tr.at_P3.free_energy[1], abs=0.01)
    # the exact posterior's jump is well above the mean-field P3 = 342 and below fluct's 667
    assert 450 < tr.P3 < 660
    assert max(tr.at_P3.barrier_height) < 3  # a weak barrier (nats)


def test_basin_mean():
    c = np.array([[0.0, 0.2, 0.3, 0.05], [0.01, 0.02, 0.4, 0.5], [0.3, 0.3, 0.3, 0.01]])
    x = 2 * c
    mean, err = sx.basin_mean(x, c, 0.1)
    sel = c >= 0.1
    assert mean == pytest.approx(x[sel].mean())
    loo = [np.concatenate([x[k][sel[k]] for k in range(3) if k != i]).mean() for i in range(3)]
    assert err == pytest.approx(math.sqrt(2 / 3 * ((np.array(loo) - np.mean(loo)) ** 2).sum()))
    m_all, _ = sx.basin_mean(x, c)
    assert m_all == pytest.approx(x.mean())
    with pytest.raises(ValueError, match="no draw"):
        sx.basin_mean(x, c, 0.9, 1.0)
    with pytest.raises(ValueError, match="lo"):
        sx.basin_mean(x, c, 0.5, 0.1)
    one_chain = np.array([[0.0, 0.2], [0.0, 0.0]])
    assert math.isnan(sx.basin_mean(one_chain, one_chain, 0.1)[1])


# --------------------------------------------------------------------------
# scans in P, finite-size rows
# --------------------------------------------------------------------------


def test_default_grids_up_to_L48_and_wider_beyond():
    for L in (8, 32, 48):
        l1, l2 = se.default_tilts(L)
        np.testing.assert_allclose(l1, np.linspace(-420.0, 40.0, 93))
        np.testing.assert_allclose(l2, np.linspace(-240.0, 320.0, 281))
    assert se.default_tilts(96)[0][-1] == 70.0 and se.default_tilts(64)[0][-1] == 50.0
    np.testing.assert_allclose(np.diff(se.default_tilts(96)[0]), 5.0)
    for L in (8, 32, 40):
        np.testing.assert_allclose(se.default_c_grid(L), np.linspace(0.01, 0.7, 1381))
    for L in (48, 64, 96, 200):
        c = se.default_c_grid(L)
        assert c[0] <= 0.4 / L + 1e-15 and c[-1] == 0.7 and np.diff(c).max() <= 0.02 / L + 1e-12


def test_finite_size_cumulants_match_row_cumulants_on_the_default_range():
    rng = np.random.default_rng
    spec, cum = se.finite_size_cumulants(8, 3, rng(5), n_draws=64, t_step=0.2)
    ref = se.row_cumulants(SMALL, rng(5), n_draws=64, t_step=0.2)
    assert spec == SMALL
    # the same tilts (linspace instead of arange: equal to rounding) give the same cumulants
    np.testing.assert_allclose(cum.phi, ref.phi, rtol=1e-12, atol=1e-12)
    _, fine = se.finite_size_cumulants(8, 3, rng(5), refine=2, n_draws=64, t_step=0.2)
    # the tilts are computed pointwise: the refined grid holds the coarse one exactly
    np.testing.assert_array_equal(fine.phi[::2, ::2], cum.phi)
    with pytest.raises(TypeError, match="lam1"):
        se.finite_size_cumulants(8, 3, rng(5), lam1=np.linspace(-1.0, 1.0, 5))


@pytest.mark.parametrize("P", [450.0, 600.0, 610.0, 900.0])
def test_marginal_scan_agrees_with_marginal_and_branches(big_cum, P):
    scan = se.marginal_scan([P, 500.0], SPEC, big_cum)
    m = se.copy_weight_marginal(P, SPEC, big_cum)
    b = se.marginal_branches(m)
    assert scan.P[0] == P and scan.mean[0] == pytest.approx(m.mean(), rel=1e-9)
    assert scan.var[0] == pytest.approx(m.var(), rel=1e-9)
    assert scan.n_minima[0] == b.n_minima
    assert (scan.shoulder[0] < 0) == (b.n_minima >= 2)
    if b.n_minima >= 2:
        assert scan.barrier[0] == b.barrier
        np.testing.assert_allclose(scan.barrier_height[0], b.barrier_height, rtol=1e-9)
        assert scan.depth[0] == pytest.approx(min(b.barrier_height), rel=1e-9)
        assert scan.delta_F[0] == pytest.approx(b.free_energy[1] - b.free_energy[0], abs=1e-9)
    else:
        assert scan.depth[0] == 0 and math.isnan(scan.delta_F[0]) and math.isnan(scan.barrier[0])
    fixed = se.marginal_scan([P], SPEC, big_cum, c_split=0.11)
    assert fixed.delta_F[0] == pytest.approx(math.log(m.mass(hi=0.11)) - math.log(m.mass(0.11)), abs=1e-9)


def test_marginal_scan_checks_coverage_like_the_marginal(big_cum):
    with pytest.raises(ValueError, match="widen lam1/lam2"):
        se.marginal_scan([600.0, 5000.0], SPEC, big_cum)
    with pytest.raises(ValueError, match="c_split"):
        se.marginal_scan([600.0], SPEC, big_cum, c_split=0.9)


def test_finite_size_row_at_L32(big_cum):
    row = se.finite_size_row(SPEC, big_cum, P_range=(300.0, 1200.0), n_coarse=41)
    tr = se.marginal_transition(SPEC, big_cum, P_range=(500.0, 700.0), n_scan=41, xtol=0.05)
    assert row.two_minima and row.P_lower < row.P3 < row.P_upper
    # the same definitions as marginal_transition: P3 and spinodals agree to the bisection tolerances
    assert row.P3 == pytest.approx(tr.P3, abs=0.2)
    assert row.P_lower == pytest.approx(tr.P_lower, abs=0.2) and row.P_upper == pytest.approx(tr.P_upper, abs=0.2)
    b = se.marginal_branches(se.copy_weight_marginal(row.P3, SPEC, big_cum))
    np.testing.assert_allclose(row.barrier_height, b.barrier_height, atol=0.01)
    assert row.window == pytest.approx((row.P_upper - row.P_lower) / row.P3)
    # the free-energy difference falls through zero at P3 (the copy basin gains mass with P)
    assert row.slope < 0 and row.sharpness > 0
    assert row.max_depth >= min(row.barrier_height) > 0 and row.shoulder < 0


def test_finite_size_row_finds_a_narrow_window_a_brute_scan_finds():
    """L = 24: a coexistence window of about two units of P (on the default tilt grid); the fine scan
    of finite_size_row must find it, with spinodals where a brute scan at 0.1 puts them."""
    spec = ModelSpec(L=24, V=4, kind="softmax")
    cum = se.row_cumulants(spec, np.random.default_rng(11), n_draws=1024, t_step=0.2)
    brute = se.marginal_scan(np.arange(385.0, 410.0, 0.1), spec, cum)
    two = brute.n_minima >= 2
    row = se.finite_size_row(spec, cum, P_range=(200.0, 800.0), n_coarse=41)
    assert row.two_minima == two.any()
    if two.any():
        assert 0 < (brute.P[two].max() - brute.P[two].min()) < 0.05 * row.P_peak  # a narrow window
        assert row.P_lower == pytest.approx(brute.P[two].min(), abs=0.2)
        assert row.P_upper == pytest.approx(brute.P[two].max(), abs=0.2)
        assert row.step < 0.5


def test_finite_size_row_rejects_a_range_without_the_peak(big_cum):
    with pytest.raises(ValueError, match="P_range"):
        se.finite_size_row(SPEC, big_cum, P_range=(100.0, 300.0), n_coarse=11)
    with pytest.raises(ValueError, match="rel_step"):
        se.finite_size_row(SPEC, big_cum, rel_step=0.5)


def test_log_odds_branches_use_the_density_of_the_log_odds():
    m = _double_well()
    in_y = se.log_odds_branches(m)
    # the Jacobian c(1-c) tilts the potential towards the copy side: its minimum moves up in c
    direct = se.marginal_branches(se.CopyWeightMarginal(
        P=m.P, c=m.c, log_density=m.log_density + np.log(m.c * (1 - m.c)), alpha_1=m.alpha_1, loss=m.loss,
        edge=m.edge))
    assert in_y.n_minima == direct.n_minima == 2
    np.testing.assert_allclose(in_y.minima, direct.minima, rtol=1e-12)
    assert in_y.minima[0] > se.marginal_branches(m).minima[0]
    with pytest.raises(ValueError, match="marginal"):
        se.log_odds_branches(m.c)


def test_half_mass_P_splits_the_mass_at_the_threshold(big_cum):
    tr = se.marginal_transition(SPEC, big_cum)
    P_half = se.half_mass_P(tr.at_P3.barrier, SPEC, big_cum)
    assert se.copy_weight_marginal(P_half, SPEC, big_cum).mass(tr.at_P3.barrier) == pytest.approx(0.5, abs=1e-3)
    # more data put more mass on the copy side: a higher threshold needs a larger P
    assert se.half_mass_P(tr.at_P3.barrier + 0.03, SPEC, big_cum) > P_half
    with pytest.raises(ValueError, match="threshold"):
        se.half_mass_P(1.5, SPEC, big_cum)
