"""Tests of copylib.theory.softmax_marginal_scan: the vectorised scan against the marginal and its
branches, and the finite-size row."""

from __future__ import annotations

import math

import numpy as np
import pytest

from copylib import ModelSpec
from copylib.theory import softmax_cumulants as sc
from copylib.theory import softmax_marginal_branches as smb
from copylib.theory import softmax_marginal_density as smd
from copylib.theory import softmax_marginal_scan as sms

SPEC = ModelSpec(L=32, V=4, kind="softmax")


@pytest.mark.parametrize("P", [450.0, 600.0, 610.0, 900.0])
def test_marginal_scan_agrees_with_marginal_and_branches(cumulants_L32, P):
    scan = sms.marginal_scan([P, 500.0], SPEC, cumulants_L32)
    m = smd.plugin_marginal(P, SPEC, cumulants_L32)
    b = smb.marginal_branches(m)
    assert scan.P[0] == P and scan.mean[0] == pytest.approx(m.mean(), rel=1e-9)
    assert scan.var[0] == pytest.approx(m.var(), rel=1e-9)
    assert scan.n_minima[0] == b.n_minima
    assert (scan.shoulder[0] < 0) == (b.n_minima >= 2)
    if b.n_minima >= 2:
        assert scan.barrier[0] == b.barrier
        np.testing.assert_allclose(scan.barrier_height[0], b.barrier_height, rtol=1e-9)
        assert scan.depth[0] == pytest.approx(min(b.barrier_height), rel=1e-9)
        assert scan.delta_F[0] == pytest.approx(b.free_energy[1] - b.free_energy[0], abs=1e-9)
    else:
        assert scan.depth[0] == 0 and math.isnan(scan.delta_F[0]) and math.isnan(scan.barrier[0])
    fixed = sms.marginal_scan([P], SPEC, cumulants_L32, c_split=0.11)
    assert fixed.delta_F[0] == pytest.approx(math.log(m.mass(hi=0.11)) - math.log(m.mass(0.11)), abs=1e-9)


def test_marginal_scan_checks_coverage_like_the_marginal(cumulants_L32):
    with pytest.raises(ValueError, match="widen lam1/lam2"):
        sms.marginal_scan([600.0, 5000.0], SPEC, cumulants_L32)
    with pytest.raises(ValueError, match="c_split"):
        sms.marginal_scan([600.0], SPEC, cumulants_L32, c_split=0.9)


def test_finite_size_row_at_L32(cumulants_L32):
    row = sms.finite_size_row(SPEC, cumulants_L32, P_range=(300.0, 1200.0), n_coarse=41)
    tr = smb.marginal_transition(SPEC, cumulants_L32, P_range=(500.0, 700.0), n_scan=41, xtol=0.05)
    assert row.two_minima and row.P_lower < row.P3 < row.P_upper
    # the same definitions as marginal_transition: P3 and spinodals agree to the bisection tolerances
    assert row.P3 == pytest.approx(tr.P3, abs=0.2)
    assert row.P_lower == pytest.approx(tr.P_lower, abs=0.2) and row.P_upper == pytest.approx(tr.P_upper, abs=0.2)
    b = smb.marginal_branches(smd.plugin_marginal(row.P3, SPEC, cumulants_L32))
    np.testing.assert_allclose(row.barrier_height, b.barrier_height, atol=0.01)
    assert row.window == pytest.approx((row.P_upper - row.P_lower) / row.P3)
    # the free-energy difference falls through zero at P3 (the copy basin gains mass with P)
    assert row.slope < 0 and row.sharpness > 0
    assert row.max_depth >= min(row.barrier_height) > 0 and row.shoulder < 0


def test_finite_size_row_finds_a_narrow_window_a_brute_scan_finds():
    """L = 24: a coexistence window of about two units of P (on the default tilt grid); the fine scan
    of finite_size_row must find it, with spinodals where a brute scan at 0.1 puts them."""
    spec = ModelSpec(L=24, V=4, kind="softmax")
    cum = sc.row_cumulants(spec, np.random.default_rng(11), n_draws=1024, t_step=0.2)
    brute = sms.marginal_scan(np.arange(385.0, 410.0, 0.1), spec, cum)
    two = brute.n_minima >= 2
    row = sms.finite_size_row(spec, cum, P_range=(200.0, 800.0), n_coarse=41)
    assert row.two_minima == two.any()
    if two.any():
        assert 0 < (brute.P[two].max() - brute.P[two].min()) < 0.05 * row.P_peak  # a narrow window
        assert row.P_lower == pytest.approx(brute.P[two].min(), abs=0.2)
        assert row.P_upper == pytest.approx(brute.P[two].max(), abs=0.2)
        assert row.step < 0.5


def test_finite_size_row_rejects_a_range_without_the_peak(cumulants_L32):
    with pytest.raises(ValueError, match="P_range"):
        sms.finite_size_row(SPEC, cumulants_L32, P_range=(100.0, 300.0), n_coarse=11)
    with pytest.raises(ValueError, match="rel_step"):
        sms.finite_size_row(SPEC, cumulants_L32, rel_step=0.5)
