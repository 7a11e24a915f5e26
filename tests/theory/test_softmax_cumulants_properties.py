"""Property tests: copylib.theory.softmax_cumulants (the row cumulants of the plug-in marginal)."""

from __future__ import annotations

import re

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import copylib as cl
from copylib.theory import softmax_cumulants as sc
from copylib.theory import softmax_marginal_density as smd

from props_helpers import (
    assert_finite,
    budget,
    covers,
    exact_softmax_specs,
    extreme_specs,
    raises_naming,
    seeds,
    small_row_cumulants,
)


@covers(sc.row_cumulants, sc.RowCumulants)
@budget(15)
@given(spec=exact_softmax_specs, seed=seeds, n_pow=st.integers(4, 6))
def test_row_cumulants_valid(spec, seed, n_pow):
    cum = small_row_cumulants(spec, seed, n_draws=2**n_pow)
    assert isinstance(cum, sc.RowCumulants) and cum.L == spec.L and cum.n_draws == 2**n_pow
    assert cum.phi.shape == cum.correction.shape == cum.t_edge.shape == (5, 7)
    assert cum.mean.shape == (5, 7, 2) and cum.cov.shape == (5, 7, 2, 2)
    for x in (cum.phi, cum.mean, cum.cov, cum.log_prior_density(), cum.log_prior_density(True)):
        assert_finite(x)
    # u = |a|^2 in [1/L, 1], v = a[l-1] in [0, 1]; the tilted covariance is positive definite
    Eu, Ev = cum.mean[..., 0], cum.mean[..., 1]
    assert (Eu >= 1 / spec.L - 1e-12).all() and (Eu <= 1 + 1e-12).all()
    assert (Ev >= 0).all() and (Ev <= 1).all()
    assert (np.linalg.det(cum.cov) > 0).all() and (cum.cov[..., 1, 1] > 0).all()
    np.testing.assert_allclose(cum.cov[..., 0, 1], cum.cov[..., 1, 0])
    # phi(0, 0) = ln E[1] = 0 (the t quadrature holds the prior density to 1e-6)
    assert cum.lam1[3] == 0 and cum.lam2[2] == 0 and abs(cum.phi[3, 2]) < 1e-5


@covers(sc.default_tilts, smd.default_c_grid)
@budget(30)
@given(L=st.integers(3, 400))
def test_default_grids_valid(L):
    l1, l2 = sc.default_tilts(L)
    assert (np.diff(l1) > 0).all() and (np.diff(l2) > 0).all() and l1[0] < 0 < l1[-1] and l2[0] < 0 < l2[-1]
    c = smd.default_c_grid(L)
    # increasing in (0, 1), starting below the prior mean 1/L and resolving it (step <= c_lo / 20)
    assert (np.diff(c) > 0).all() and 0 < c[0] < 1 / L and c[-1] < 1
    assert np.diff(c).max() <= c[0] / 20 * (1 + 1e-9)


@covers(sc.row_cumulants)
@budget(20)
@given(spec=extreme_specs("softmax", L=st.sampled_from([3, 4, 512])), seed=seeds)
def test_row_cumulants_extreme_scales(spec, seed):
    """Finite output, or the documented ValueError naming t_step / t_range (the t grid must resolve
    and hold the logit density: defaults suit sigma_G of order one)."""
    try:
        cum = sc.row_cumulants(spec, np.random.default_rng(seed), n_draws=16, lam1=np.linspace(-4.0, 0.0, 5),
                               lam2=np.linspace(-4.0, 4.0, 5))
    except ValueError as err:
        assert re.search(r"(?<![\w.])(t_step|t_range)(?!\w)", str(err)), str(err)
        return
    for x in (cum.phi, cum.mean, cum.cov):
        assert_finite(x)


@covers(sc.finite_size_cumulants)
@budget(3)
@given(L=st.integers(3, 6), V=st.integers(2, 5), seed=seeds, refine=st.integers(1, 3))
def test_finite_size_cumulants_refine_the_default_grid(L, V, seed, refine):
    spec, cum = sc.finite_size_cumulants(L, V, np.random.default_rng(seed), refine=refine, n_draws=16, t_step=0.2)
    assert spec == cl.ModelSpec(L=L, V=V, kind="softmax") and cum.L == L
    for grid, default in zip((cum.lam1, cum.lam2), sc.default_tilts(L)):
        # every default tilt is a point of the refined grid (1e-9: linspace rounding)
        assert grid.size == refine * (default.size - 1) + 1
        np.testing.assert_allclose(grid[::refine], default, atol=1e-9)
    assert_finite(cum.phi)
    with raises_naming("refine"):
        sc.finite_size_cumulants(L, V, np.random.default_rng(seed), refine=0)
    with raises_naming("L"):
        sc.finite_size_cumulants(2, V, np.random.default_rng(seed))
