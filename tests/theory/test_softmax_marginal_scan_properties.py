"""Property tests: copylib.theory.softmax_marginal_scan (scans in P, the finite-size row)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from copylib.theory import softmax_marginal_branches as smb
from copylib.theory import softmax_marginal_density as smd
from copylib.theory import softmax_marginal_scan as sms

from props_helpers import (
    budget,
    covers,
    exact_softmax_specs,
    log_uniform,
    reachable_copy_weights,
    seeds,
    small_row_cumulants,
)


@covers(sms.marginal_scan, sms.MarginalScan)
@budget(20)
@given(spec=exact_softmax_specs, seed=seeds, Ps=st.lists(log_uniform(1e-2, 1e4), min_size=1, max_size=5),
       split=st.booleans())
def test_marginal_scan_valid(spec, seed, Ps, split):
    cum = small_row_cumulants(spec, seed)
    c = reachable_copy_weights(cum)
    c_split = float(c[len(c) // 2]) if split else None
    s = sms.marginal_scan(Ps, spec, cum, c_grid=c, check_coverage=False, c_split=c_split)
    assert isinstance(s, sms.MarginalScan) and s.P.shape == s.mean.shape == s.n_minima.shape == (len(Ps),)
    assert s.barrier_height.shape == (len(Ps), 2)
    assert ((s.mean >= c[0] - 1e-12) & (s.mean <= c[-1] + 1e-12)).all()
    assert (s.var >= 0).all() and (s.var <= (c[-1] - c[0]) ** 2 / 4 + 1e-12).all()
    assert (s.depth >= 0).all() and (s.depth == s.barrier_height.min(1)).all()
    two = s.n_minima >= 2
    assert (s.shoulder[two] < 0).all()  # a second minimum needs a slope pointing the wrong way
    assert np.isfinite(s.barrier[two]).all() and np.isnan(s.barrier[~two]).all()
    assert (~np.isnan(s.delta_F)).all() if split else np.isnan(s.delta_F[~two]).all()
    # the same numbers as the one-P marginal
    m = smd.plugin_marginal(float(Ps[0]), spec, cum, c_grid=c, check_coverage=False)
    assert s.mean[0] == pytest.approx(m.mean(), rel=1e-9, abs=1e-12)
    assert s.n_minima[0] == smb.marginal_branches(m).n_minima


@covers(sms.finite_size_row, sms.FiniteSizeRow)
@budget(8)
@given(spec=exact_softmax_specs, seed=seeds)
def test_finite_size_row_valid_or_documented_error(spec, seed):
    cum = small_row_cumulants(spec, seed)
    try:
        row = sms.finite_size_row(spec, cum, P_range=(1.0, 1e4), n_coarse=11, rel_step=0.05)
    except ValueError as err:  # documented: the peak or the window at the end of P_range, coverage
        assert any(w in str(err) for w in ("P_range", "tilt grid", "c_grid", "t grid")), str(err)
        return
    assert isinstance(row, sms.FiniteSizeRow) and row.L == spec.L and row.V == spec.V
    assert row.scanned[0] <= row.P_peak <= row.scanned[1] or row.two_minima
    if row.two_minima:
        assert row.P_lower <= row.P_upper and row.max_depth > 0 and row.shoulder < 0
        if math.isfinite(row.P3):
            assert row.P_lower <= row.P3 <= row.P_upper and row.window >= 0
    else:
        assert math.isnan(row.P3) and row.max_depth == 0 and math.isnan(row.window)
