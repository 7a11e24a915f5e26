"""Property tests: copylib.theory.softmax_marginal_density (the marginal of the copy weight)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from copylib.theory import softmax_marginal_branches as smb
from copylib.theory import softmax_marginal_density as smd

from props_helpers import (
    assert_finite,
    budget,
    covers,
    exact_softmax_specs,
    log_uniform,
    reachable_copy_weights,
    seeds,
    small_row_cumulants,
)


@covers(smd.plugin_marginal, smd.CopyWeightMarginal, smb.marginal_branches, smb.MarginalBranches)
@budget(15)
@given(spec=exact_softmax_specs, seed=seeds, P=st.one_of(st.none(), log_uniform(1e-2, 1e4)), correction=st.booleans())
def test_copy_weight_marginal_valid(spec, seed, P, correction):
    cum = small_row_cumulants(spec, seed)
    c = reachable_copy_weights(cum)
    m = smd.plugin_marginal(P, spec, cum, c_grid=c, correction=correction, check_coverage=False)
    assert isinstance(m, smd.CopyWeightMarginal) and m.log_density.shape == m.alpha_1.shape == c.shape
    assert_finite(m.log_density)
    assert_finite(m.alpha_1)
    assert np.trapezoid(np.exp(m.log_density), c) == pytest.approx(1.0, abs=1e-9)
    # alpha_1 = sum_l |a_l|^2 lies in [1, L] for row-stochastic attention
    assert (m.alpha_1 >= 1 - 1e-9).all() and (m.alpha_1 <= spec.L + 1e-9).all()
    assert m.edge <= 0 and m.potential.min() == 0
    assert c[0] - 1e-12 <= m.mean() <= c[-1] + 1e-12
    # a variance on the grid's range: non-negative and at most (range / 2)^2 (Popoviciu)
    assert 0 <= m.var() <= (c[-1] - c[0]) ** 2 / 4 + 1e-12
    assert np.isnan(m.loss).all() if P is None else np.isfinite(m.loss).all()
    assert m.mass() == pytest.approx(1.0, abs=1e-9)
    b = smb.marginal_branches(m)
    assert isinstance(b, smb.MarginalBranches) and (np.diff(b.minima) > 0).all()
    if b.n_minima >= 2:
        assert b.minima[0] < b.barrier < b.minima[-1] and min(b.barrier_height) >= 0
        assert sum(math.exp(-f) for f in b.free_energy) == pytest.approx(1.0, abs=1e-9)
    else:
        assert math.isnan(b.barrier) and all(math.isnan(f) for f in b.free_energy)


@covers(smd.CopyWeightMarginal.mass)
@given(
    log_density=st.lists(st.floats(-30, 30), min_size=3, max_size=40),
    excess=st.floats(0, 1e-12),
    cut=st.floats(-0.1, 1.1),
)
def test_mass_is_a_probability(log_density, excess, cut):
    """The mass of a sub-range lies in [0, 1] also when the density is normalised only to rounding
    (a grid density whose trapezoid integral is 1 + excess), and the two halves at a cut add to 1."""
    c = np.linspace(0.0, 1.0, len(log_density))
    logd = np.asarray(log_density)
    logd = logd - math.log(np.trapezoid(np.exp(logd), c)) + math.log1p(excess)
    m = smd.CopyWeightMarginal(P=None, c=c, log_density=logd, alpha_1=np.ones_like(c), loss=c * np.nan, edge=0.0)
    below, above = m.mass(hi=cut), m.mass(cut)
    assert 0.0 <= below <= 1.0 and 0.0 <= above <= 1.0
    assert m.mass() == 1.0
    # the trapezoid's cell across the cut gives its left end to one half and its right end to the other
    assert below + above == pytest.approx(1.0, abs=1e-12)
