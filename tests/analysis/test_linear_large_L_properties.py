"""Property tests of copylib.analysis.linear_large_L: start logits, the paired comparison of two starts."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from copylib.analysis import linear_large_L as ll
from copylib.posterior.order_parameters import order_parameters

from props_helpers import budget, covers, raises_naming


@covers(ll._state_logits)
@budget(30)
@given(m=st.floats(-3, 3), Q=st.floats(-10, 10), L=st.integers(3, 12))
def test_state_logits_round_trip(m, Q, L):
    g, b = ll._state_logits(m, Q, L)
    m2, q2, r2 = order_parameters((g + b) / L)
    assert math.isclose(m2, m, abs_tol=1e-9) and math.isclose((L - 1) * q2, Q, abs_tol=1e-8) and r2 < 1e-12


@covers(ll._state_logits)
@budget(10)
@given(bad=st.sampled_from([math.nan, math.inf]))
def test_state_logits_names_Q(bad):
    with raises_naming("Q"):
        ll._state_logits(1.0, bad, 5)


@covers(ll._compare_starts, ll.StartComparison)
@budget(30)
@given(seed=st.integers(0, 2**32 - 1), n_data=st.integers(2, 5), shift=st.floats(-5, 5))
def test_compare_starts_is_consistent(seed, n_data, shift):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, n_data, 2, 12))
    acc = rng.uniform(0, 1, (2, n_data, 2))
    a = ll._compare_starts(x, [0.0, 0.0], acc, [10, 20])
    b = ll._compare_starts(x + shift, [shift, shift], acc, [10, 20])  # a common shift moves means, not differences
    assert np.allclose(a.paired_d, b.paired_d) and np.allclose(a.plugin_z, b.plugin_z)
    assert np.allclose(a.mean, (a.mean_pool + a.mean_copy) / 2)
    s = ll._compare_starts(x[:, :, ::-1], [0.0, 0.0], acc[:, :, ::-1], [10, 20])  # swapping starts flips the sign
    assert np.allclose(s.paired_d, -a.paired_d) and np.array_equal(s.meet, a.meet)
    assert (a.accept_min <= a.accept_max).all() and (a.paired_err >= 0).all()


@covers(ll._compare_starts)
@budget(10)
@given(bad=st.sampled_from([math.nan, math.inf]))
def test_compare_starts_names_plugin(bad):
    with raises_naming("plugin"):
        ll._compare_starts(np.zeros((1, 2, 2, 8)), [bad], np.zeros((1, 2, 2)), [1])


@covers(ll.sample_near_switch, ll.NearSwitch, ll._sample_paired_starts, ll.PairedChains)
@budget(10)
@given(which=st.sampled_from(["n_data", "n_steps", "P_over_P2", "L", "V"]), data=st.data())
def test_sample_near_switch_names_a_bad_argument(which, data):
    args = dict(L=8, V=2, n_data=2, n_steps=10, n_warmup=160, thin=1, seed=0)
    args[which] = data.draw({"n_data": st.sampled_from([1, 0, 2.5]), "n_steps": st.sampled_from([0, 1.5]),
                             "P_over_P2": st.sampled_from([(1.0, 1.0), (-1.0,), (math.nan,)]),
                             "L": st.sampled_from([2, 1.5]), "V": st.sampled_from([1, "4"])}[which])
    with raises_naming(which):
        ll.sample_near_switch(**args)


@covers(ll.barrier_grid_error, ll.BarrierGridError)
@budget(10)
@given(which=st.sampled_from(["factor", "coordinate"]), data=st.data())
def test_barrier_grid_error_names_a_bad_argument(which, data):
    args = dict(n_m=11)
    args[which] = data.draw({"factor": st.sampled_from([1, 0, 2.5]), "coordinate": st.just("m")}[which])
    with raises_naming(which):
        ll.barrier_grid_error(50.0, None, **args)
