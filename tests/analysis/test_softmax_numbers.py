"""Tests of copylib.analysis.softmax_numbers (the finite-size and z-table numbers the softmax chapter quotes)."""

import math

import numpy as np
import pytest
from scipy import stats

from copylib.analysis import softmax as sx
from copylib.analysis import softmax_evidence as sxe
from copylib.analysis import softmax_numbers as sxn
from copylib.inference.diagnostics import studentized_z_null, z_calibration
from copylib.theory.softmax_marginal import FiniteSizeRow


def _row(L, two, P3, bar=(0.5, 0.2), step=0.1, shoulder=None, depth=0.0):
    nan2 = (math.nan, math.nan)
    return FiniteSizeRow(L=L, V=4, P_peak=101.0, scanned=(50.0, 150.0), step=step, two_minima=two,
                         max_depth=depth, shoulder=(-0.1 if two else 0.1) if shoulder is None else shoulder,
                         P_lower=100.0 if two else math.nan, P_upper=102.0 if two else math.nan,
                         P3=P3 if two else math.nan, barrier_height=bar if two and math.isfinite(P3) else nan2,
                         barrier=0.1, slope=-0.5)


def _finite_size_rows():
    """16 and 20 without two minima, 24 with two but no P3, a first-order point from 28 on (P3 ~ L^1.5)."""
    rows = {16: (_row(16, False, 0, step=0.2, shoulder=0.03), _row(16, False, 0, step=0.2, shoulder=0.05)),
            20: (_row(20, False, 0, step=0.3, shoulder=0.02), _row(20, False, 0, step=0.3, shoulder=0.01)),
            24: (_row(24, True, math.nan, depth=0.002), _row(24, True, math.nan, depth=0.003))}
    for n in (28, 32, 48, 96):
        rows[n] = (_row(n, True, 3.0 * n**1.5, bar=(n / 20, n / 40)), _row(n, True, 3.0 * n**1.5, bar=(n / 21, n / 40)))
    return rows


def test_finite_size_numbers_are_the_rows_numbers():
    rows = _finite_size_rows()
    refined = {28: _row(28, True, 3.0 * 28**1.5, bar=(28 / 20 + 0.01, 28 / 40))}
    fs = sxe.finite_size_summary(rows, refined)
    weak = sx.DoubleMinimum(L=24, V=4, n_draws=512, seeds=(1, 2), rows=rows[24], P_lower=99.0, P_upper=103.0,
                            width=2.0, depth=0.004, delta_F_max=-0.1, cumulants=())
    corrected = {24: _row(24, True, math.nan, depth=0.005), 32: _row(32, True, 3.0 * 32**1.5, bar=(1.7, 0.8))}
    mean_field = {n: 2.0 * n**1.2 for n in rows}
    v = sxn.finite_size_numbers(fs, rows, weak=weak, corrected=corrected, saddle_P3={"mean_field": mean_field}).values
    assert v["bar_32"] == 32 / 20 and v["barc_32"] == 32 / 40 and v["P3_96"] == 3.0 * 96**1.5
    assert "bar_40" not in v and "bar_24" not in v  # not a size of the rows / no first-order point
    assert (v["L_two"], v["L_none"], v["L_jump"], v["L_min"], v["L_max"]) == (24, 20, 28, 16, 96)
    assert (v["step_16"], v["step_20"], v["shoulder"]) == (0.2, 0.3, 0.05)
    assert v["grid_abs"] == pytest.approx(0.01) and v["sobol_max"] == pytest.approx(96 / 20 - 96 / 21)
    assert (v["24_lo"], v["24_hi"], v["24_width"], v["24_depth"]) == (99.0, 103.0, 2.0, 0.004)
    assert v["24_depth_A"] == 0.002 and v["24_depth_corr"] == 0.005
    assert v["corr_32"] == pytest.approx(abs(1.7 - 32 / 20)) and "corr_24" not in v
    assert v["mean_field_96"] == mean_field[96] and v["ratio_32"] == pytest.approx(3.0 * 32**1.5 / mean_field[32])
    # P3 ~ L^1.5 and mean_field ~ L^1.2 exactly: the two-point slopes are the exponents
    assert v["k_plug_lo"] == pytest.approx(1.5) and v["k_plug_hi"] == pytest.approx(1.5)
    assert v["k_mean_field_lo"] == pytest.approx(1.2) and v["k_mean_field_hi"] == pytest.approx(1.2)
    with pytest.raises(TypeError):
        v["bar_32"] = 0.0  # read-only


def test_finite_size_summary_grid_error_from_sizes_with_a_barrier_only():
    """Refined rows at every size (as at paper scale): those without a first-order point add nothing."""
    rows = _finite_size_rows()
    refined = {n: rows[n][0] for n in (16, 20, 24)}
    refined[28] = _row(28, True, 3.0 * 28**1.5, bar=(28 / 20 + 0.02, 28 / 40 - 0.01))
    refined[32] = _row(32, True, 3.0 * 32**1.5, bar=(32 / 20 - 0.03, 32 / 40))
    fs = sxe.finite_size_summary(rows, refined)
    assert fs.grid_change == pytest.approx(0.03)
    assert fs.barrier_err[list(fs.L).index(96), 0] == pytest.approx(96 / 20 - 96 / 21 + 0.03)
    assert np.isfinite(fs.barrier_err).all()
    lost = {28: _row(28, True, math.nan)}  # refinement removes the first-order point at L = 28
    with pytest.raises(ValueError, match="refined.*L = 28"):
        sxe.finite_size_summary(rows, lost)


def test_finite_size_numbers_refuse_what_they_cannot_read():
    rows = _finite_size_rows()
    fs = sxe.finite_size_summary(rows)
    with pytest.raises(TypeError, match="summary"):
        sxn.finite_size_numbers(rows, rows)
    with pytest.raises(TypeError, match="weak"):
        sxn.finite_size_numbers(fs, rows, weak=rows[24])
    with pytest.raises(ValueError, match="slopes"):
        sxn.finite_size_numbers(fs, rows, slopes=((24, 48), (48, 96)))  # no first-order point at 24
    with pytest.raises(TypeError, match="saddle_P3"):
        sxn.finite_size_numbers(fs, rows, saddle_P3={"a": {}, "b": {}})


def _comparison(z, groups, res=(1.0, 2.0)):
    rows = tuple((450, "c", "all", 0.1, 0.01, 0.1, float(x)) for x in z)
    blocks = tuple(np.eye(len(z)) for _ in range(1))
    return sxe.BranchComparison(rows=rows, corr_blocks=blocks, n_groups=(groups,), theory_err=np.full(len(z), 0.2),
                                res_c_near=np.array(res), res_theory_near=np.array([0.1, 0.2]), marginals={})


def test_z_table_numbers_against_their_formulas():
    z = np.array([0.5, -1.0, 2.0, 0.1, -0.3])
    bc = _comparison(z, 10)
    null = studentized_z_null(bc.corr_blocks, bc.n_groups, np.random.default_rng(0), n_sim=2000)
    r = sxn.z_table_numbers(bc, null, 10, limit=3.5)
    assert (r.n, r.dof, r.maxz, r.theory_err) == (5, 9, 2.0, 0.2)
    assert r.fail_one == pytest.approx(200 * stats.t.sf(3.5, 9)) and r.fail_one > r.fail_one_normal
    assert r.fail_normal == pytest.approx(100 * (1 - (1 - 2 * stats.norm.sf(3.5)) ** 5))
    assert r.fail == 100 * null.false_alarm(3.5) and (r.res_c_min, r.res_c_max) == (1.0, 2.0)
    cal, naive = null.calibration(z), z_calibration(z)
    assert (r.mean_z2, r.lo, r.hi, r.naive_lo, r.naive_hi) == (cal.mean_z2, cal.lo, cal.hi, naive.lo, naive.hi)
    assert r.n_sim == 2000 and r.null_mean == pytest.approx(null.mean_z2.mean())
    # errors inflated by fac_lo bring the typical mean of z^2 down to the lower end of the range
    assert r.null_mean / r.fac_lo**2 == pytest.approx(r.lo) and r.null_mean * r.fac_hi**2 == pytest.approx(r.hi)
    with pytest.raises(ValueError, match="n_sets"):
        sxn.z_table_numbers(bc, null, 3)
    with pytest.raises(TypeError, match="null"):
        sxn.z_table_numbers(bc, cal, 10)


def _near_p3(L=48, n_data=6, seed=0):
    """A NearP3 from synthetic two-basin chains at three sizes (no sampling): pooling c ~ 0.03, copy c ~ 0.2."""
    from copylib.analysis import softmax_large_L as sl

    rng = np.random.default_rng(seed)
    Ps = (980, 1000, 1020)
    draws = {}
    for P, p in zip(Ps, (0.2, 0.5, 0.8)):
        copy = rng.random((n_data, 2, 400)) < p
        c = np.where(copy, 0.2 + 0.01 * rng.standard_normal(copy.shape), 0.03 + 0.005 * rng.standard_normal(copy.shape))
        draws[P] = (c, c, c)
    weights = sl._basin_weights(draws, 0.1)
    rows = tuple((q, 1000.0, x, 0.1 * x, x, 0.0, 0.0) for q, x in (
        ("log-odds slope", 60.0), ("barrier from pooling", 2.0), ("barrier from copy", 1.5), ("jump of c", 0.17)))
    cmp = sl.PluginComparison(L=L, at=1000.0, weights=weights, rows=rows)
    conv = sxe.chain_convergence(draws, 0.1, {P: 100 for P in Ps}, [1000])
    plugin = _row(L, True, 1000.0, bar=(2.5, 1.8))
    return sl.NearP3(L=L, plugin=plugin, P=Ps, comparison=cmp, convergence=conv, accept=(0.5, 0.6), draws=draws)


def test_large_L_numbers_read_the_chains_and_the_plugin_jumps():
    from copylib.analysis import softmax_large_L as sl

    near = _near_p3()
    ref = sl.PluginComparison(L=32, at=590.0, weights=near.comparison.weights,
                              rows=tuple((q, 590.0, x / 2, 0.05 * x, x, 0.0, 0.0) for q, _, x, *_ in near.comparison.rows))
    v = sxn.large_L_numbers(near, ref, reference_sharpness=12.0, plugin_jumps={28: 0.05, 96: 0.3, 48: 0.2},
                            n_steps=(400, 450)).values
    assert (v["P3"], v["bar_pool"], v["bar_copy"], v["sharp_32"]) == (1000.0, 2.5, 1.8, 12.0)
    assert v["sharp"] == pytest.approx(500.0) and v["window"] == pytest.approx(0.2)  # slope -0.5, window 2/1000
    assert (v["n_data"], v["P_lo"], v["P_hi"], v["steps_side"], v["steps_mid"]) == (6, 980, 1020, 400, 450)
    assert all(isinstance(v[k], int) for k in ("n_data", "P_lo", "P_hi", "cross_min", "jump_L_min", "jump_L_max"))
    bw, conv = near.comparison.weights, near.convergence
    assert v["cross_min"] == conv.crossings[1000].min() and v["rhat_expected"] == 1 + 1 / conv.ess_chain_mid
    assert v["spread_hi"] == pytest.approx(bw.spread_total[1] * math.sqrt(5 / stats.chi2.ppf(0.05, 5)))
    assert v["spread_hi"] > v["spread_total"] and v["spread_P"] == pytest.approx(100 * v["spread_hi"] / 500.0)
    assert (v["bar_48"], v["bar_se_48"], v["slope_32"], v["slope_se_32"]) == (2.0, 0.2, 30.0, 3.0)
    assert v["jump_32"] == pytest.approx(0.085) and v["jump_se_48"] == pytest.approx(0.017)
    assert (v["jump_L_min"], v["jump_plug_min"], v["jump_L_max"], v["jump_plug_max"]) == (28, 0.05, 96, 0.3)
    with pytest.raises(ValueError, match="reference"):
        sxn.large_L_numbers(near, near.comparison, reference_sharpness=1.0, plugin_jumps={28: 0.1}, n_steps=(1, 1))
    with pytest.raises(ValueError, match="n_steps"):
        sxn.large_L_numbers(near, ref, reference_sharpness=1.0, plugin_jumps={28: 0.1}, n_steps=(1, 2, 3))
    with pytest.raises(ValueError, match="finite"):
        sxn.large_L_numbers(near, ref, reference_sharpness=1.0, plugin_jumps={28: math.nan}, n_steps=(1, 1))
