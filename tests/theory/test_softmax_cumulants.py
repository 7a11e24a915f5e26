"""Tests of copylib.theory.softmax_cumulants: the row cumulant generating function and its grids."""

from __future__ import annotations

import math

import numpy as np
import pytest

from copylib import ModelSpec, attention
from copylib.posterior.order_parameters import invariants
from copylib.theory import softmax_cumulants as sc
from copylib.theory import softmax_marginal_density as smd

SMALL = ModelSpec(L=8, V=3, kind="softmax")


def _prior_rows(spec, n, seed):
    g = spec.sigma_G * np.random.default_rng(seed).normal(size=(n, spec.L, spec.L))
    A = attention(g, "softmax")
    a1, _, g1, _ = invariants(A)
    return A, a1, g1


def test_untilted_row_moments_match_the_prior(cumulants_L8):
    i, j = np.searchsorted(cumulants_L8.lam1, 0.0), np.searchsorted(cumulants_L8.lam2, 0.0)
    assert cumulants_L8.lam1[i] == 0 and cumulants_L8.lam2[j] == 0
    assert abs(cumulants_L8.phi[i, j]) < 1e-6  # ln E[1]
    # E v = 1/L exactly (exchangeable logits); quasi-Monte Carlo error ~1e-4
    assert cumulants_L8.mean[i, j, 1] == pytest.approx(1 / SMALL.L, rel=2e-3)
    A, a1, g1 = _prior_rows(SMALL, 20_000, 3)
    u = (A**2).sum(-1).ravel()
    se_u = u.std() / math.sqrt(u.size)
    assert abs(cumulants_L8.mean[i, j, 0] - u.mean()) < 5 * se_u
    v = np.einsum("nll->nl", np.roll(A, 1, axis=-1)).ravel()  # A[l, l-1]
    assert cumulants_L8.cov[i, j, 1, 1] == pytest.approx(v.var(), rel=0.05)
    assert cumulants_L8.cov[i, j, 0, 0] == pytest.approx(u.var(), rel=0.05)


def test_tilted_means_are_gradients_of_phi():
    # phi is smooth in lam (common random numbers): central differences give the means
    cum = sc.row_cumulants(SMALL, np.random.default_rng(2), n_draws=1024, lam1=np.linspace(-30, 10, 161),
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
    a = sc.row_cumulants(SMALL, np.random.default_rng(5), **kw)
    b = sc.row_cumulants(SMALL, np.random.default_rng(5), **kw)
    np.testing.assert_array_equal(a.phi, b.phi)
    np.testing.assert_array_equal(a.cov, b.cov)


def test_row_cumulants_rejects_a_short_t_range():
    with pytest.raises(ValueError, match="t_range"):
        sc.row_cumulants(SMALL, np.random.default_rng(0), n_draws=16, t_range=(-3.0, 3.0))
    with pytest.raises(ValueError, match="t_step"):
        sc.row_cumulants(SMALL, np.random.default_rng(0), n_draws=16, t_step=0.5)


def test_default_grids_up_to_L48_and_wider_beyond():
    for L in (8, 32, 48):
        l1, l2 = sc.default_tilts(L)
        np.testing.assert_allclose(l1, np.linspace(-420.0, 40.0, 93))
        np.testing.assert_allclose(l2, np.linspace(-240.0, 320.0, 281))
    assert sc.default_tilts(96)[0][-1] == 70.0 and sc.default_tilts(64)[0][-1] == 50.0
    np.testing.assert_allclose(np.diff(sc.default_tilts(96)[0]), 5.0)
    for L in (8, 32, 40):
        np.testing.assert_allclose(smd.default_c_grid(L), np.linspace(0.01, 0.7, 1381))
    for L in (48, 64, 96, 200):
        c = smd.default_c_grid(L)
        assert c[0] <= 0.4 / L + 1e-15 and c[-1] == 0.7 and np.diff(c).max() <= 0.02 / L + 1e-12


def test_finite_size_cumulants_match_row_cumulants_on_the_default_range():
    rng = np.random.default_rng
    spec, cum = sc.finite_size_cumulants(8, 3, rng(5), n_draws=64, t_step=0.2)
    ref = sc.row_cumulants(SMALL, rng(5), n_draws=64, t_step=0.2)
    assert spec == SMALL
    # the same tilts (linspace instead of arange: equal to rounding) give the same cumulants
    np.testing.assert_allclose(cum.phi, ref.phi, rtol=1e-12, atol=1e-12)
    _, fine = sc.finite_size_cumulants(8, 3, rng(5), refine=2, n_draws=64, t_step=0.2)
    # the tilts are computed pointwise: the refined grid holds the coarse one exactly
    np.testing.assert_array_equal(fine.phi[::2, ::2], cum.phi)
    with pytest.raises(TypeError, match="lam1"):
        sc.finite_size_cumulants(8, 3, rng(5), lam1=np.linspace(-1.0, 1.0, 5))
