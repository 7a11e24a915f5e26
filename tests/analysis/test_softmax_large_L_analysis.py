"""Tests of copylib.analysis.softmax_large_L (basin weights of paired chains, log-odds slope, binned barrier)."""

import dataclasses
import math

import numpy as np
import pytest

import copylib as cl
from copylib.analysis import softmax_large_L as sl
from copylib.theory import softmax_marginal as se


def _two_basin_draws(rng, n_data, n, p_of_data, spread_noise=0.0):
    """Independent draws: copy basin (c ~ 0.2) with probability p of the data set, pooling (c ~ 0.03) otherwise."""
    p = np.asarray(p_of_data, dtype=float)[:, None, None]
    copy = rng.random((n_data, 2, n)) < p
    return np.where(copy, 0.2 + 0.01 * rng.standard_normal(copy.shape), 0.03 + 0.005 * rng.standard_normal(copy.shape))


def test_basin_weights_recovers_shares_spread_and_jump():
    rng = np.random.default_rng(0)
    n_data, n = 40, 4000
    logits = np.array([-1.0, 1.0] * (n_data // 2))  # a data-set spread of exactly 1 nat (sd with ddof=1 ~ 1.01)
    p = 1 / (1 + np.exp(-logits))
    bw = sl._basin_weights({500: _two_basin_draws(rng, n_data, n, p), 400: _two_basin_draws(rng, n_data, n, 0.1 + 0 * p)},
                          0.1)
    assert list(bw.P) == [400.0, 500.0]
    assert bw.share[0] == pytest.approx(0.1, abs=4 * bw.share_err[0])
    assert bw.share[1] == pytest.approx(0.5, abs=4 * bw.share_err[1])
    assert bw.log_odds[1] == pytest.approx(0.0, abs=4 * bw.log_odds_err[1])
    # independent draws: the sampling part of the spread is ~ 1/sqrt(n p (1-p)) per chain, halved for a pair
    assert bw.spread_sampling[1] == pytest.approx(1 / math.sqrt(2 * n * p[0] * (1 - p[0])), rel=0.3)
    assert bw.spread_data[1] == pytest.approx(np.std(logits, ddof=1), rel=0.05)
    assert bw.spread_data[0] < 0.1  # no data-set spread at P = 400
    assert bw.jump[1] == pytest.approx(0.17, abs=4 * bw.jump_err[1]) and bw.jump_err[1] < 0.002
    assert abs(bw.paired_d[1]) < 4 * bw.paired_err[1]
    assert bw.crossings.shape == (2, n_data, 2) and (bw.min_crossings > 100).all()


def test_basin_weights_sees_hysteresis_and_a_single_basin():
    rng = np.random.default_rng(1)
    n_data, n = 10, 200
    stuck = _two_basin_draws(rng, n_data, n, np.full(n_data, 0.5))
    stuck[:, 0] = 0.03  # the pooling start never leaves pooling
    stuck[:, 1] = 0.2  # the copy start never leaves copy
    bw = sl._basin_weights({100: (stuck, None)}, 0.1)
    assert bw.paired_d[0] == -1.0 and bw.min_crossings[0] == 0
    assert bw.spread_sampling[0] > 3  # the two chains of a data set disagree completely
    single = sl._basin_weights({100: np.full((3, 2, 5), 0.03)}, 0.1)
    assert single.share[0] == 0 and np.isnan(single.jump[0]) and np.isnan(single.copy_mean[0])


def test_basin_weights_refuses_bad_input():
    c = np.full((3, 2, 5), 0.1)
    with pytest.raises(ValueError, match="c_div"):
        sl._basin_weights({1: c}, 1.0)
    with pytest.raises(ValueError, match="draws"):
        sl._basin_weights({1: c[:1]}, 0.1)
    with pytest.raises(ValueError, match="draws"):
        sl._basin_weights({1: c, 2: c[:2]}, 0.1)
    with pytest.raises(TypeError, match="draws"):
        sl._basin_weights([c], 0.1)


def test_log_odds_slope_is_exact_on_a_line_and_propagates_errors():
    P = np.array([900.0, 1000.0, 1100.0])
    y = 2.0 + 120.0 * np.log(P / 1000.0)
    slope, err = sl._log_odds_slope(P, y, [0.3, 0.3, 0.3])
    assert slope == pytest.approx(120.0, rel=1e-12)
    t = np.log(P)
    assert err == pytest.approx(0.3 / np.sqrt(((t - t.mean()) ** 2).sum()), rel=1e-12)
    assert math.isnan(sl._log_odds_slope(P, y)[1])
    with pytest.raises(ValueError, match="err"):
        sl._log_odds_slope(P, y, [0.3, 0.0, 0.3])
    with pytest.raises(ValueError, match="P_values"):
        sl._log_odds_slope([1000.0, 1000.0], [0.0, 1.0])


def test_bin_barrier_of_a_double_well_and_of_one_well():
    edges = np.linspace(0, 1, 11)
    mass = np.exp(-np.array([1.0, 0.0, 1.0, 2.5, 1.5, 0.5, 1.0, 3.0, 4.0, 5.0]))
    assert sl._bin_barrier(mass, edges, 0.35) == pytest.approx((2.5, 2.0))
    one_well = np.exp(-np.array([1.0, 0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0]))
    assert sl._bin_barrier(one_well, edges, 0.35)[1] < 0  # no dip: the copy side is lower than the "barrier"
    with pytest.raises(ValueError, match="c_div"):
        sl._bin_barrier(mass, edges, 0.05)
    with pytest.raises(ValueError, match="mass"):
        sl._bin_barrier(mass[:-1], edges, 0.35)


def test_sampled_bin_barrier_matches_the_plugin_marginal_it_was_drawn_from():
    """Draws of c from a plug-in marginal with two basins give that marginal's binned barrier."""
    spec = cl.ModelSpec(L=48, V=4, kind="softmax")
    cum = se.row_cumulants(spec, np.random.default_rng(3), n_draws=256, t_step=0.2)
    row = se.finite_size_row(spec, cum, rel_step=2e-3)
    m = se.plugin_marginal(row.P3, spec, cum)
    edges = np.linspace(0.0, 0.3, 31)
    mass = np.array([m.mass(a, b) for a, b in zip(edges[:-1], edges[1:])])
    theory = sl._bin_barrier(mass, edges, row.barrier)
    rng = np.random.default_rng(4)
    c = rng.choice(edges[:-1] + 0.005, p=mass / mass.sum(), size=(8, 2, 20_000))
    (pool, copy), (e_pool, e_copy) = sl._sampled_bin_barrier(c, edges, row.barrier)
    assert theory[0] > 1 and theory[1] > 0.5  # the plug-in marginal at L = 48 has two basins
    assert pool == pytest.approx(theory[0], abs=4 * e_pool) and copy == pytest.approx(theory[1], abs=4 * e_copy)
    assert 0 < e_pool < 0.3 and 0 < e_copy < 0.3


def _plugin_draws(m, rng, n_data, n, shift=0.0):
    """Independent draws of c from a plug-in marginal (on its grid), shape (n_data, 2, n)."""
    w = np.exp(m.log_density)
    return rng.choice(m.c, p=w / w.sum(), size=(n_data, 2, n)) + shift


def test_compare_with_plugin_accepts_its_own_draws_and_rejects_shifted_ones():
    spec = cl.ModelSpec(L=48, V=4, kind="softmax")
    cums = [se.row_cumulants(spec, np.random.default_rng(s), n_draws=512, t_step=0.2) for s in (5, 6)]
    row = se.finite_size_row(spec, cums[0], rel_step=2e-3)
    Ps = [round(row.P3 * np.exp(k * 1.8 / row.sharpness)) for k in (-1, 0, 1)]
    rng = np.random.default_rng(7)
    draws = {P: _plugin_draws(se.plugin_marginal(float(P), spec, cums[0]), rng, 8, 3000) for P in Ps}
    cmp = sl.compare_with_plugin(draws, spec, cums, row.barrier, at=Ps[1])
    assert [r[0] for r in cmp.rows] == ["copy-basin mass"] * 3 + ["log-odds slope", "barrier from pooling",
                                                               "barrier from copy", "jump of c"]
    assert (np.abs(cmp.z) < 4).all()
    assert cmp.value("log-odds slope", "plug-in") == pytest.approx(row.sharpness, rel=0.1)
    assert cmp.frame().index.unique().tolist() == [48] and len(cmp.frame()) == 7
    # the posterior of 3 % more data labelled with the wrong P: the copy-basin masses are far off
    wrong = {P: _plugin_draws(se.plugin_marginal(1.03 * P, spec, cums[0]), rng, 8, 3000) for P in Ps}
    assert np.abs(sl.compare_with_plugin(wrong, spec, cums, row.barrier, at=Ps[1]).z).max() > 5
    one = sl.compare_with_plugin({Ps[1]: draws[Ps[1]]}, spec, cums, row.barrier, at=Ps[1])
    assert "log-odds slope" not in [r[0] for r in one.rows]  # one size: no slope
    with pytest.raises(ValueError, match="at"):
        sl.compare_with_plugin(draws, spec, cums, row.barrier, at=1)
    with pytest.raises(ValueError, match="quantity"):
        cmp.value("nothing")


def test_sample_near_p3_samples_three_sizes_around_the_plugin_p3():
    near = sl.sample_near_p3(48, 4, 2, (16, 20), n_warmup=4, thin=2, seed=3, n_draws=512)
    assert near.P[1] == round(near.plugin.P3) and near.P[0] < near.P[1] < near.P[2]
    assert set(near.draws) == set(near.P)
    assert near.draws[near.P[0]][0].shape == (2, 2, 8) and near.draws[near.P[1]][0].shape == (2, 2, 10)
    assert near.comparison.L == 48 and near.comparison.at == near.P[1]
    assert len(near.comparison.rows) == 7 and 0 < near.accept[0] <= near.accept[1] <= 1
    assert set(near.convergence.crossings) == set(near.P)
    with pytest.raises(ValueError, match="no P3 at L = 16"):  # no two basins at L = 16
        sl.sample_near_p3(16, 4, 2, 10, n_warmup=2, thin=1, seed=0, n_draws=256)


def test_plugin_jump_is_the_difference_of_the_basin_means_at_p3():
    spec = cl.ModelSpec(L=48, V=4, kind="softmax")
    cum = se.row_cumulants(spec, np.random.default_rng(5), n_draws=512, t_step=0.2)
    row = se.finite_size_row(spec, cum, rel_step=2e-3)
    m = se.plugin_marginal(float(row.P3), spec, cum)
    jump = sl.plugin_jump(row, spec, cum)
    assert jump == pytest.approx(m.mean("c", row.barrier, 1.0) - m.mean("c", 0.0, row.barrier), rel=1e-12)
    assert 0.05 < jump < 0.5  # pooling near 1/L, copying at c ~ 0.2: a jump of a tenth or more
    with pytest.raises(ValueError, match="row"):
        sl.plugin_jump(dataclasses.replace(row, P3=math.nan), spec, cum)
    with pytest.raises(TypeError, match="row"):
        sl.plugin_jump(row.P3, spec, cum)


def _point(L, seed=5):
    spec = cl.ModelSpec(L=L, V=4, kind="softmax")
    cum = se.row_cumulants(spec, np.random.default_rng(seed), n_draws=512, t_step=0.2)
    return spec, cum, se.finite_size_row(spec, cum, rel_step=2e-3).P3


def test_plugin_error_by_L_is_plugin_evidence_error_between_the_branches_of_each_L():
    from copylib.analysis.softmax_evidence import plugin_evidence_error

    points = {48: _point(48), 40: _point(40)}  # given in descending L: the sizes run (and draw data) ascending
    by_L = sl.plugin_error_by_L(points, 3, np.random.default_rng(7))
    assert list(by_L.L) == [40, 48] and list(by_L.P) == [round(points[40][2]), round(points[48][2])]
    rng = np.random.default_rng(7)
    for k, n_pos in enumerate(by_L.L):
        spec, cum, P3 = points[n_pos]
        br = se.marginal_branches(se.plugin_marginal(float(round(P3)), spec, cum))
        direct = plugin_evidence_error(spec, round(P3), br.minima[0],
                                       {"barrier c*": br.barrier, "copy minimum": br.minima[-1]}, 3, rng)
        np.testing.assert_array_equal(by_L.bias[k], direct.bias)
        np.testing.assert_array_equal(by_L.spread[k], direct.spread)
        assert by_L.bound[k] == direct.bound and by_L.barrier[k] == br.barrier_height[0]
    assert by_L.frame().shape == (2, 9) and (by_L.barrier > 0).all()


def test_plugin_error_by_L_refuses_bad_input():
    spec, cum, P3 = _point(48)
    with pytest.raises(TypeError, match="points"):
        sl.plugin_error_by_L({}, 3, np.random.default_rng(0))
    with pytest.raises(ValueError, match="differs from its spec"):
        sl.plugin_error_by_L({40: (spec, cum, P3)}, 3, np.random.default_rng(0))
    with pytest.raises(ValueError, match="n_data"):
        sl.plugin_error_by_L({48: (spec, cum, P3)}, 1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="P"):
        sl.plugin_error_by_L({48: (spec, cum, -3.0)}, 3, np.random.default_rng(0))
    with pytest.raises(ValueError, match="L = 48, P = 100 has one minimum"):  # far below the window: pooling only
        sl.plugin_error_by_L({48: (spec, cum, 100.0)}, 3, np.random.default_rng(0))
    with pytest.raises(TypeError, match="rng"):
        sl.plugin_error_by_L({48: (spec, cum, P3)}, 3, 0)


def test_plugin_error_by_L_spread_ratio_and_where_the_spread_drops_below_the_barrier():
    def table(spread_copy):
        n = len(spread_copy)
        spread = np.column_stack([np.zeros(n), spread_copy])
        return sl.PluginErrorByL(L=np.array([24, 32, 48, 96][:n]), P=np.arange(n) + 100, barrier=np.full(n, 2.0),
                                 bias=np.zeros((n, 2)), exact_se=np.zeros((n, 2)), spread=spread,
                                 bound=np.zeros(n), errors=())
    t = table([5.0, 1.0, 3.0, 1.0])  # the ratio dips below 1 at L = 32, rises above it again at 48
    np.testing.assert_allclose(t.spread_ratio, [2.5, 0.5, 1.5, 0.5])
    assert t.clear_from == 96 and t.index(48) == 2
    assert table([1.0, 1.0]).clear_from == 24 and math.isnan(table([1.0, 4.0]).clear_from)
    with pytest.raises(ValueError, match="L = 40 is not among"):
        t.index(40)
