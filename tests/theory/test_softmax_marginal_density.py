"""Tests of copylib.theory.softmax_marginal_density: the plug-in saddlepoint marginal of the copy
weight against brute Monte Carlo, its normalisation and its coverage checks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_softmax_cumulants import _prior_rows

from copylib import ModelSpec
from copylib.posterior.order_parameters import plugin_action
from copylib.theory import softmax_cumulants as sc
from copylib.theory import softmax_marginal_density as smd

SMALL = ModelSpec(L=8, V=3, kind="softmax")
SPEC = ModelSpec(L=32, V=4, kind="softmax")


def test_prior_marginal_matches_brute_monte_carlo(cumulants_L8):
    m = smd.plugin_marginal(None, SMALL, cumulants_L8, c_grid=np.linspace(0.02, 0.6, 1161))
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


def test_posterior_marginal_matches_reweighted_prior_draws(cumulants_L8):
    """p(s | P) = p0(s) e^{-S(s)}: importance-reweight exact prior draws by e^{-S}."""
    P = 60.0
    m = smd.plugin_marginal(P, SMALL, cumulants_L8, c_grid=np.linspace(0.02, 0.6, 1161))
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


def test_marginal_is_normalised_and_moves_up_with_P(cumulants_L32):
    means = []
    for P in (300.0, 600.0, 1000.0):
        m = smd.plugin_marginal(P, SPEC, cumulants_L32)
        assert np.trapezoid(np.exp(m.log_density), m.c) == pytest.approx(1.0, abs=1e-12)
        assert np.isfinite(m.alpha_1).all() and np.isfinite(m.loss).all()
        means.append(m.mean())
    assert means[0] < means[1] < means[2]
    assert m.potential.min() == 0.0


def test_coverage_is_checked(cumulants_L32):
    narrow = sc.row_cumulants(SPEC, np.random.default_rng(0), n_draws=64, lam1=np.linspace(-20, 5, 6),
                              lam2=np.linspace(-10, 10, 11))
    with pytest.raises(ValueError, match="widen lam1/lam2"):
        smd.plugin_marginal(1000.0, SPEC, narrow, c_grid=np.linspace(0.02, 0.05, 31))
    with pytest.raises(ValueError, match="c_grid"):
        smd.plugin_marginal(1000.0, SPEC, narrow, c_grid=np.linspace(0.02, 0.9, 31), check_coverage=False)
    with pytest.raises(ValueError, match="cumulants"):
        smd.plugin_marginal(100.0, SMALL, cumulants_L32)
