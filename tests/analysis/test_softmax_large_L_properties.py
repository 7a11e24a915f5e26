"""Property tests of copylib.analysis.softmax_large_L: basin weights, log-odds slope, binned barrier."""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from copylib.analysis import softmax_large_L as sl

from props_helpers import budget, covers, raises_naming


@st.composite
def paired_draws(draw):
    n_data, n = draw(st.integers(2, 6)), draw(st.integers(2, 30))
    seed = draw(st.integers(0, 2**32 - 1))
    return np.random.default_rng(seed).uniform(0.0, 0.4, size=(n_data, 2, n))


@covers(sl._basin_weights, sl.BasinWeights)
@budget(40)
@given(c=paired_draws(), c_div=st.floats(0.05, 0.35))
def test_basin_weights_are_consistent(c, c_div):
    bw = sl._basin_weights({7: c, 3: (c[:, ::-1], None)}, c_div)
    assert list(bw.P) == [3.0, 7.0]
    share = (c >= c_div).mean()
    assert np.allclose(bw.share, share) and ((bw.share >= 0) & (bw.share <= 1)).all()
    assert (bw.share_err >= 0).all() and (bw.spread_data <= bw.spread_total + 1e-12).all()
    assert np.isfinite(bw.log_odds).all() and np.isfinite(bw.data_log_odds).all()
    assert np.allclose(bw.paired_d[0], -bw.paired_d[1])  # swapping the starts flips the paired difference
    assert (bw.min_crossings >= 0).all() and bw.min_crossings.shape == (2,)
    for k in range(2):
        if np.isfinite(bw.jump[k]):
            assert bw.pool_mean[k] < c_div <= bw.copy_mean[k]


@covers(sl._basin_weights)
@budget(10)
@given(bad=st.sampled_from([0.0, 1.0, math.nan, -0.2, 2.0]))
def test_basin_weights_names_c_div(bad):
    with raises_naming("c_div"):
        sl._basin_weights({1: np.full((2, 2, 3), 0.1)}, bad)


@covers(sl._log_odds_slope)
@budget(40)
@given(slope=st.floats(-300, 300), icpt=st.floats(-5, 5), n=st.integers(2, 6), err=st.floats(0.01, 3))
def test_log_odds_slope_recovers_a_line(slope, icpt, n, err):
    P = np.geomspace(500, 1500, n)
    got, got_err = sl._log_odds_slope(P, icpt + slope * np.log(P), np.full(n, err))
    assert math.isclose(got, slope, rel_tol=1e-9, abs_tol=1e-8)
    assert got_err > 0 and math.isclose(got_err * np.sqrt(((np.log(P) - np.log(P).mean()) ** 2).sum()), err,
                                        rel_tol=1e-9)


@covers(sl._bin_barrier)
@budget(40)
@given(omega=st.lists(st.floats(0, 10), min_size=5, max_size=12), data=st.data())
def test_bin_barrier_is_the_potential_difference(omega, data):
    omega = np.array(omega)
    edges = np.arange(omega.size + 1, dtype=float) / (omega.size + 1)
    k = data.draw(st.integers(1, omega.size - 2))
    c_div = 0.5 * (edges[k] + edges[k + 1])
    pool, copy = sl._bin_barrier(np.exp(-omega) * np.diff(edges), edges, c_div)
    assert math.isclose(pool, omega[k] - omega[:k].min(), abs_tol=1e-9)
    assert math.isclose(copy, omega[k] - omega[k + 1:].min(), abs_tol=1e-9)
    scaled = sl._bin_barrier(3.0 * np.exp(-omega) * np.diff(edges), edges, c_div)  # normalisation drops out
    assert np.allclose(scaled, (pool, copy))


@covers(sl._sampled_bin_barrier)
@budget(30)
@given(c=paired_draws())
def test_sampled_bin_barrier_agrees_with_bin_barrier_of_the_histogram(c):
    edges = np.linspace(0, 0.4, 5)
    counts = np.histogram(c, bins=edges)[0]
    (pool, copy), errs = sl._sampled_bin_barrier(c, edges, 0.15)
    with np.errstate(divide="ignore"):
        assert np.allclose((pool, copy), sl._bin_barrier(counts, edges, 0.15), equal_nan=True)
    assert all(math.isnan(e) or e >= 0 for e in errs)


@covers(sl._sampled_bin_barrier)
@budget(10)
@given(bad=st.sampled_from([np.zeros((1, 2, 3)), np.zeros((3, 3, 3)), np.zeros((3, 2))]))
def test_sampled_bin_barrier_names_c(bad):
    with raises_naming("c"):
        sl._sampled_bin_barrier(bad, np.linspace(0, 0.4, 5), 0.15)


@functools.cache
def _tiny_cumulants():
    import copylib as cl
    from copylib.theory import softmax_marginal as se
    spec = cl.ModelSpec(L=8, V=4, kind="softmax")
    return spec, se.row_cumulants(spec, np.random.default_rng(1), n_draws=32)


@covers(sl.compare_with_plugin, sl.PluginComparison)
@budget(15)
@given(c=paired_draws(), shift=st.floats(-0.02, 0.02))
def test_compare_with_plugin_rows_are_consistent(c, shift):
    spec, cum = _tiny_cumulants()
    draws = {40: c, 50: np.clip(c + shift, 0, 1)}
    cmp = sl.compare_with_plugin(draws, spec, (cum, cum), 0.15, at=50)
    assert cmp.at == 50.0 and cmp.L == 8 and len(cmp.rows) == 6  # two shares, slope, two barriers, jump
    assert all(r[5] == 0 for r in cmp.rows)  # one Sobol set twice: no plug-in error
    assert np.allclose(cmp.weights.share, [(draws[P] >= 0.15).mean() for P in (40, 50)])
    for r in cmp.rows:
        assert cmp.value(r[0], "P") == r[1] or r[0] == "copy-basin mass"
    assert list(cmp.frame().columns) == ["quantity", "P", "sampled", "s.e.", "plug-in", "plug-in error", "z"]


@covers(sl.compare_with_plugin, sl.PluginComparison)
@budget(10)
@given(which=st.sampled_from(["cumulants", "at", "column"]))
def test_compare_with_plugin_names_a_bad_argument(which):
    spec, cum = _tiny_cumulants()
    draws = {40: np.full((2, 2, 3), 0.1)}
    args = dict(draws=draws, spec=spec, cumulants=(cum, cum), c_div=0.15, at=40)
    if which == "column":
        with raises_naming("column"):
            sl.compare_with_plugin(**args).value("copy-basin mass", "nope")
        return
    args[which] = {"cumulants": (cum,), "at": 41}[which]
    with raises_naming(which):
        sl.compare_with_plugin(**args)


@covers(sl.sample_near_p3, sl.NearP3)
@budget(10)
@given(which=st.sampled_from(["n_data", "n_steps", "log_odds_step", "L", "V"]), data=st.data())
def test_sample_near_p3_names_a_bad_argument(which, data):
    args = dict(L=48, V=4, n_data=2, n_steps=10, n_warmup=2, thin=1, seed=0)
    args[which] = data.draw({"n_data": st.sampled_from([1, 0, 2.5]), "n_steps": st.sampled_from([(1, 2, 3), 0]),
                             "log_odds_step": st.sampled_from([0.0, -1.0, math.nan]),
                             "L": st.sampled_from([2, 1.5]), "V": st.sampled_from([1, "4"])}[which])
    with raises_naming(which):
        sl.sample_near_p3(**args)


@covers(sl.plugin_jump)
@budget(15)
@given(P3=st.floats(1.0, 60.0), barrier=st.floats(0.1, 0.4))
def test_plugin_jump_is_a_positive_difference_of_basin_means(P3, barrier):
    from copylib.theory.softmax_marginal import FiniteSizeRow

    spec, cum = _tiny_cumulants()
    row = FiniteSizeRow(L=8, V=4, P_peak=P3, scanned=(P3 / 2, 2 * P3), step=0.1, two_minima=True, max_depth=0.01,
                        shoulder=-0.1, P_lower=P3 - 1, P_upper=P3 + 1, P3=P3, barrier_height=(1.0, 1.0),
                        barrier=barrier, slope=-0.5)
    jump = sl.plugin_jump(row, spec, cum)
    # the copy basin's mean lies above the split, the pooling basin's below it
    assert 0 < jump < 1


@covers(sl.plugin_jump)
@budget(10)
@given(bad=st.sampled_from(["P3", "barrier", "type"]))
def test_plugin_jump_names_row(bad):
    from copylib.theory.softmax_marginal import FiniteSizeRow

    spec, cum = _tiny_cumulants()
    row = FiniteSizeRow(L=8, V=4, P_peak=100.0, scanned=(50.0, 200.0), step=0.1, two_minima=True, max_depth=0.01,
                        shoulder=-0.1, P_lower=99.0, P_upper=101.0, P3=100.0, barrier_height=(1.0, 1.0), barrier=0.2,
                        slope=-0.5)
    bad_row = {"P3": dataclasses.replace(row, P3=math.nan), "barrier": dataclasses.replace(row, barrier=1.5),
               "type": 100.0}[bad]
    with raises_naming("row"):
        sl.plugin_jump(bad_row, spec, cum)


@covers(sl.plugin_error_by_L)
@budget(10)
@given(which=st.sampled_from(["points", "n_data", "rng"]), data=st.data())
def test_plugin_error_by_L_names_a_bad_argument(which, data):
    spec, cum = _tiny_cumulants()
    args = dict(points={8: (spec, cum, 40.0)}, n_data=2, rng=np.random.default_rng(0))
    args[which] = data.draw({"points": st.sampled_from([{}, [], {8: (spec, cum)}]),
                             "n_data": st.sampled_from([1, 0, 2.5]), "rng": st.sampled_from([0, None])}[which])
    with raises_naming(which):
        sl.plugin_error_by_L(**args)


@covers(sl.PluginErrorByL)
@budget(40)
@given(ratios=st.lists(st.floats(0.01, 5.0), min_size=1, max_size=8))
def test_plugin_error_by_L_clear_from_is_where_the_spread_stays_below_the_barrier(ratios):
    n = len(ratios)
    barrier = np.linspace(1.0, 2.0, n)
    spread = np.column_stack([np.zeros(n), np.array(ratios) * barrier])
    L = 16 + 8 * np.arange(n)
    t = sl.PluginErrorByL(L=L, P=100 * np.arange(1, n + 1), barrier=barrier, errors=(), bias=np.zeros((n, 2)),
                          exact_se=np.zeros((n, 2)), spread=spread, bound=np.zeros(n))
    np.testing.assert_allclose(t.spread_ratio, ratios, rtol=1e-12)
    assert all(t.index(n_pos) == k for k, n_pos in enumerate(L))
    if math.isnan(t.clear_from):
        assert t.spread_ratio[-1] >= 1
    else:
        k = t.index(int(t.clear_from))
        assert (t.spread_ratio[k:] < 1).all() and (k == 0 or t.spread_ratio[k - 1] >= 1)
