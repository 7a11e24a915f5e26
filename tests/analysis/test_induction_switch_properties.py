"""Property tests of the dip ratio, the ladders' mixing and the posterior's switch in copylib.analysis.induction_switch.

Random valid arguments give results of the documented shape and range; invalid ones raise an
error naming the parameter.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from copylib.analysis import induction as ia
from copylib.analysis import induction_switch as isw
from copylib.model.induction import InductionSpec

from props_helpers import budget, covers, raises_naming

pytestmark = pytest.mark.usefixtures("one_thread")

seeds = st.integers(0, 2**16)


@covers(isw._dip_ratio)
@budget(30)
@given(d=st.lists(st.floats(0.01, 10), min_size=4, max_size=12), split=st.floats(0.2, 0.8))
def test_dip_ratio_lies_in_0_1(d, split):
    edges = np.linspace(0, 1, len(d) + 1)
    centre = (edges[:-1] + edges[1:]) / 2
    if (centre <= split).any() and (centre > split).any():
        r = float(isw._dip_ratio(np.array(d), edges, split))
        assert 0 < r <= 1


@covers(isw.tempering_mixing, isw.TemperingMixing)
@budget(3)
@given(seed=seeds, rhat_max=st.floats(1.01, 2.0))
def test_tempering_mixing_flags_are_the_stated_criteria(seed, rhat_max):
    spec = InductionSpec(4, 3)
    runs = {s: ia.sample_induction_tempering([4, 8], spec, np.random.default_rng(seed), betas=[0.0, 1.0], n_chains=2,
                                             n_steps=8, n_warmup=0, thin=1, n_test=4) for s in ("one", "two")}
    m = isw.tempering_mixing(runs, rhat_max=rhat_max, min_trips=1)
    assert m.rhat.shape == m.fewest_trips.shape == m.mixed.shape == (2,) and m.c1.shape == (2, 2)
    assert np.array_equal(m.mixed, (m.rhat < rhat_max) & (m.fewest_trips >= 1))
    assert 0 <= m.swap_min <= 1 and m.swap_bottom.shape == (2,)
    assert np.isnan(m.P_copy) or m.P_copy in (4, 8)
    assert list(m.table().index) == [4, 8] and m.summary()["P_hi"] == 8.0
    with raises_naming("rhat_max"):
        isw.tempering_mixing(runs, rhat_max=1.0)
    with raises_naming("runs"):
        isw.tempering_mixing({"one": runs["one"]})


@covers(isw.induction_switch, isw.InductionSwitch)
@budget(2)
@given(seed=seeds)
def test_switch_quartiles_are_ordered_and_masses_are_probabilities(seed):
    s = ia.sample_induction_states(40, InductionSpec(4, 3), np.random.default_rng(seed), betas=[0.0, 0.1, 0.5, 1.0],
                                   c_split=0.5, n_chains=2, n_steps=6, n_warmup=0, thin=1, n_prior=2000, n_test=4)
    sw = isw.induction_switch(s, n_grid=11, n_bins=10)
    assert sw.copy_mass.shape == sw.log_odds.shape == (2, 11) and ((sw.copy_mass > 0) & (sw.copy_mass < 1)).all()
    assert sw.P_eff[0] == pytest.approx(4.0) and sw.P_eff[-1] == pytest.approx(40.0)
    ok = np.isfinite(sw.P25) & np.isfinite(sw.P75)
    assert (sw.P25[ok] <= sw.P75[ok]).all() and set(sw.summary()) >= {"P_sw", "P_sw_se", "width", "dip"}
    assert sw.table().shape == (8, 2)
    with raises_naming("n_grid"):
        isw.induction_switch(s, n_grid=1)
    with raises_naming("states"):
        isw.induction_switch(None)


@covers(isw.ladder_diagnostics, isw.LadderDiagnostics)
@budget(2)
@given(seed=seeds, alpha=st.floats(0.001, 0.5))
def test_ladder_diagnostics_have_one_entry_per_region_rung_and_observable(seed, alpha):
    s = ia.sample_induction_states(20, InductionSpec(4, 3), np.random.default_rng(seed), betas=[0.0, 0.5, 1.0],
                                   c_split=0.5, n_chains=3, n_steps=10, n_warmup=0, thin=1, n_prior=2000, n_test=4)
    d = isw.ladder_diagnostics(s)
    assert d.rhat.shape == d.ess_bulk.shape == d.drift_z.shape == (2, 3, 2) and d.n_chains == 3 and d.n_draws == 10
    assert (d.ess_bulk > 0).all() and (d.drift_z >= 0).all() and d.table().shape == (4, 4)
    # a smaller probability of a false alarm needs a higher level
    assert d.drift_limit(alpha) > d.drift_limit(min(0.9, 2 * alpha)) > 0
    with raises_naming("alpha"):
        d.drift_limit(1.5)
    with raises_naming("states"):
        isw.ladder_diagnostics(None)


@covers(isw.one_layer_switch, isw.OneLayerSwitch)
@budget(2)
@given(seed=seeds)
def test_one_layer_switch_shares_are_probabilities(seed):
    spec = InductionSpec(4, 3)
    s = ia.sample_induction_states(20, spec, np.random.default_rng(seed), betas=[0.0, 1.0], c_split=0.5, n_chains=2,
                                   n_steps=2, n_warmup=0, thin=1, n_prior=2000, n_test=4)
    one = isw.one_layer_switch(s, spec, [2.0, 5.0, 20.0], n_chains=2, n_steps=6, n_warmup=0, thin=1, seed=seed)
    assert one.c1.shape == (3, 2) and one.copy_share.shape == (2, 3) and one.P_sw.shape == (2,)
    assert ((0 <= one.copy_share) & (one.copy_share <= 1)).all() and ((0 <= one.c1) & (one.c1 <= 1)).all()
    ok = np.isfinite(one.P_sw)
    assert ((one.P_sw[ok] >= 2.0) & (one.P_sw[ok] <= 20.0)).all()
    with raises_naming("P_eff"):
        isw.one_layer_switch(s, spec, [5.0, 40.0])
    with raises_naming("n_chains"):
        isw.one_layer_switch(s, spec, [2.0, 5.0], n_chains=1)
