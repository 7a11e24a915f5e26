"""Property tests: copylib.theory.softmax_marginal_branches (branches, barrier, spinodals, P3)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from copylib.theory import softmax_marginal_branches as smb
from copylib.theory import softmax_marginal_density as smd

from props_helpers import (
    budget,
    covers,
    exact_softmax_specs,
    raises_naming,
    reachable_copy_weights,
    seeds,
    small_row_cumulants,
)


@covers(smb.marginal_branches, smb.MarginalBranches, smd.CopyWeightMarginal)
@budget(30)
@given(tilt=st.floats(-3, 3), barrier=st.floats(0.05, 20), c1=st.floats(0.03, 0.2), gap=st.floats(0.05, 0.4))
def test_marginal_branches_of_double_wells(tilt, barrier, c1, gap):
    c = np.linspace(0.01, 0.9, 3000)
    c2 = c1 + gap
    U = barrier * ((c - c1) * (c - c2) / (gap / 2) ** 2) ** 2 + tilt * (c - c1) / gap
    logd = -U - math.log(np.trapezoid(np.exp(-U), c))
    m = smd.CopyWeightMarginal(P=10.0, c=c, log_density=logd, alpha_1=c, loss=c, edge=-30.0)
    b = smb.marginal_branches(m)
    if b.n_minima >= 2:
        assert c1 - 0.02 < b.minima[0] < b.barrier < b.minima[-1] < c2 + 0.02
        p_pool, p_copy = (math.exp(-f) for f in b.free_energy)
        assert p_pool + p_copy == pytest.approx(1.0, abs=1e-9)
        # the basin means lie in their basins; alpha_1 = loss = c here
        assert b.copy_weight[0] < b.barrier <= b.copy_weight[1]
        assert b.alpha_1 == pytest.approx(b.copy_weight) and b.loss == pytest.approx(b.copy_weight)
    # a strong tilt (|tilt| > 8 barrier, roughly) removes one minimum; a weak one never does
    if abs(tilt) < barrier:
        assert b.n_minima == 2


@covers(smb.marginal_transition, smb.MarginalTransition)
@budget(8)
@given(spec=exact_softmax_specs, seed=seeds)
def test_exact_transition_valid_or_documented_error(spec, seed):
    cum = small_row_cumulants(spec, seed)
    try:
        tr = smb.marginal_transition(spec, cum, P_range=(1.0, 1e4), n_scan=9, xtol=1.0)
    except ValueError as err:  # documented: no coexistence / no crossing / grid too small
        assert any(w in str(err) for w in ("two minima", "P_range", "cross", "tilt grid", "c_grid", "t grid"))
        return
    assert isinstance(tr, smb.MarginalTransition) and tr.P_lower <= tr.P3 <= tr.P_upper


@covers(smb.log_odds_branches)
@budget(20)
@given(tilt=st.floats(-3, 3), barrier=st.floats(0.05, 20), c1=st.floats(0.03, 0.2), gap=st.floats(0.05, 0.4))
def test_log_odds_branches_of_double_wells(tilt, barrier, c1, gap):
    c = np.linspace(0.01, 0.9, 3000)
    U = barrier * ((c - c1) * (c - c1 - gap) / (gap / 2) ** 2) ** 2 + tilt * (c - c1) / gap
    logd = -U - math.log(np.trapezoid(np.exp(-U), c))
    b = smb.log_odds_branches(smd.CopyWeightMarginal(P=10.0, c=c, log_density=logd, alpha_1=c, loss=c, edge=-30.0))
    assert isinstance(b, smb.MarginalBranches) and (np.diff(b.minima) > 0).all()
    assert ((b.minima > c[0]) & (b.minima < c[-1])).all()
    with raises_naming("marginal"):
        smb.log_odds_branches(c)


@covers(smb.half_mass_P)
@budget(4)
@given(spec=exact_softmax_specs, seed=seeds, threshold=st.floats(0.05, 0.6))
def test_half_mass_P_splits_the_mass_or_names_the_range(spec, seed, threshold):
    cum = small_row_cumulants(spec, seed)
    try:
        P = smb.half_mass_P(threshold, spec, cum, P_range=(1.0, 1e4), xtol=1e-3, c_grid=reachable_copy_weights(cum),
                           check_coverage=False)
    except ValueError as err:  # documented: the range does not bracket the crossing
        assert "P_range" in str(err)
        return
    assert 1.0 <= P <= 1e4
    m = smd.plugin_marginal(P, spec, cum, c_grid=reachable_copy_weights(cum), check_coverage=False)
    assert m.mass(threshold) == pytest.approx(0.5, abs=0.05)
    with raises_naming("threshold"):
        smb.half_mass_P(1.5, spec, cum)
