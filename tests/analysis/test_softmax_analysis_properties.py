"""Property tests of copylib.analysis.softmax: the L = 24 double minimum and the finite-size table."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from copylib.analysis import softmax as sx
from copylib.theory.softmax_marginal import FiniteSizeRow

from props_helpers import budget, covers, raises_naming


def _row(L, two, P3, lo=100.0, width=2.0, bar=(0.5, 0.2)):
    nan2 = (math.nan, math.nan)
    return FiniteSizeRow(L=L, V=4, P_peak=lo + 1, scanned=(lo - 50, lo + 50), step=0.1, two_minima=two,
                         max_depth=0.01 if two else 0.0, shoulder=-0.1 if two else 0.1,
                         P_lower=lo if two else math.nan, P_upper=lo + width if two else math.nan,
                         P3=P3 if two else math.nan, barrier_height=bar if two and math.isfinite(P3) else nan2,
                         barrier=0.1, slope=-0.5)


@covers(sx.finite_size_frame)
@budget(30)
@given(Ls=st.lists(st.integers(3, 200), min_size=1, max_size=6, unique=True), data=st.data())
def test_finite_size_frame_one_row_per_L(Ls, data):
    rows, errors = {}, {}
    for L in Ls:
        two = data.draw(st.booleans())
        P3 = data.draw(st.sampled_from([math.nan, 101.0]))
        rows[L] = (_row(L, two, P3), _row(L, two, P3))
        errors[L] = data.draw(st.floats(0, 1))
    frame = sx.finite_size_frame(rows, errors=errors, saddle_points={"mean_field": {Ls[0]: 50.0}})
    assert list(frame.index) == Ls
    for L in Ls:
        a = rows[L][0]
        assert frame.loc[L, "two minima"] == ("yes" if a.two_minima else "no")
        assert (frame.loc[L, "window"] != "") == a.two_minima
        if math.isfinite(a.P3):
            assert frame.loc[L, "window / P3"] == a.window and frame.loc[L, "sharpness"] == a.sharpness
        else:
            assert np.isnan(frame.loc[L, "P3"]) and np.isnan(frame.loc[L, "sharpness"])
    assert frame.loc[Ls[0], "P3 mean_field"] == 50.0


@covers(sx.finite_size_frame)
@budget(10)
@given(bad=st.sampled_from([[1, 2], "rows", 3.0]))
def test_finite_size_frame_refuses_non_mappings(bad):
    with raises_naming("rows", TypeError):
        sx.finite_size_frame(bad)


@covers(sx.weak_double_minimum, sx.DoubleMinimum)
@budget(20)
@given(which=st.sampled_from(["L", "V", "seeds", "n_scan", "n_draws"]), data=st.data())
def test_weak_double_minimum_names_a_bad_argument(which, data):
    bad = {"L": st.sampled_from([2, 0, -5, 2.5, "24"]), "V": st.sampled_from([1, 0, 1.5]),
           "seeds": st.sampled_from([(), "21", (-1,), (1.5,)]), "n_scan": st.sampled_from([2, 0, 3.5]),
           "n_draws": st.sampled_from([0, 100, -8])}[which]
    with raises_naming(which):
        sx.weak_double_minimum(**{which: data.draw(bad)})


@covers(sx.weak_double_minimum, sx.DoubleMinimum)
@budget(2)
@given(seed=st.integers(0, 2**16))
def test_weak_double_minimum_window_and_depth_are_consistent(seed):
    d = sx.weak_double_minimum(24, 4, seeds=(seed,), n_draws=256, n_scan=5)
    (row,) = d.rows
    assert d.has_P3 == math.isfinite(row.P3)
    if row.two_minima:
        assert d.P_lower == row.P_lower and d.P_upper == row.P_upper and d.width == row.P_upper - row.P_lower
        assert d.depth >= row.max_depth >= 0
    else:
        assert d.width == 0.0 and d.depth == 0.0 and math.isnan(d.P_lower) and math.isnan(d.delta_F_max)


@covers(sx.branch_comparison, sx.BranchComparison)
@budget(20)
@given(which=st.sampled_from(["c_div", "min_mass", "draws", "cumulants"]), data=st.data())
def test_branch_comparison_names_a_bad_argument(which, data):
    import copylib as cl
    from copylib.theory import softmax_marginal as se
    spec = cl.ModelSpec(L=8, V=4, kind="softmax")
    cum = se.row_cumulants(spec, np.random.default_rng(1), n_draws=16, lam1=np.linspace(-60, 10, 8),
                           lam2=np.linspace(-30, 60, 10))
    c = np.full((2, 2, 3), 0.1)
    args = {"draws": {20: (c, c, c)}, "spec": spec, "cumulants": (cum, cum), "c_div": 0.2}
    args[which] = data.draw({"c_div": st.sampled_from([0.0, 1.0, -0.5, math.nan, "0.2", True]),
                             "min_mass": st.sampled_from([0.0, 0.5, math.inf, "x"]),
                             "draws": st.sampled_from([{}, [1, 2], None]),
                             "cumulants": st.sampled_from([(cum,), (cum, cum, cum)])}[which])
    with raises_naming(which):
        sx.branch_comparison(**args)


@covers(sx.branch_comparison, sx.BranchComparison)
@budget(5)
@given(seed=st.integers(0, 2**16), n_data=st.integers(2, 5), c_div=st.floats(0.15, 0.4))
def test_branch_comparison_rows_are_consistent(seed, n_data, c_div):
    import copylib as cl
    from copylib.theory import softmax_marginal as se
    spec = cl.ModelSpec(L=8, V=4, kind="softmax")
    cum = se.row_cumulants(spec, np.random.default_rng(1), n_draws=64)
    rng = np.random.default_rng(seed)
    c = rng.uniform(0.05, 0.6, size=(n_data, 2, 7))
    a1 = 8 * (c**2 + (1 - c) ** 2 / 7)
    bc = sx.branch_comparison({50: (c, a1, c)}, spec, (cum, cum), c_div, near=[50])
    for P, _what, basin, mean, err, th, z in bc.rows:
        assert P == 50 and basin in ("all", "pool", "copy") and err >= 0
        assert math.isfinite(th)
        if err > 0:  # identical cumulants: no theory error, z is the plain t statistic
            assert math.isclose(z, (mean - th) / err, rel_tol=1e-12, abs_tol=1e-12)
    assert len(bc.rows) == bc.theory_err.size
    if bc.rows:
        assert bc.corr_blocks[0].shape == (len(bc.rows), len(bc.rows))


@covers(sx.finite_size_summary, sx.FiniteSizeSummary)
@budget(30)
@given(Ls=st.lists(st.integers(3, 200), min_size=1, max_size=6, unique=True), data=st.data())
def test_finite_size_summary_errors_bound_the_set_difference(Ls, data):
    rows = {}
    for L in Ls:
        two = data.draw(st.booleans())
        P3 = data.draw(st.sampled_from([math.nan, 101.0]))
        bars = [tuple(data.draw(st.floats(0, 10)) for _ in range(2)) for _ in range(2)]
        rows[L] = (_row(L, two, P3, bar=bars[0]), _row(L, two, P3, bar=bars[1]))
    jump = sorted(L for L in Ls if math.isfinite(rows[L][0].P3))
    refined = {jump[0]: _row(jump[0], True, 101.0, bar=(0.0, 0.0))} if jump else {}
    fs = sx.finite_size_summary(rows, refined)
    assert list(fs.L) == jump and fs.barrier.shape == fs.barrier_err.shape == (len(jump), 2)
    assert (fs.barrier_err >= np.abs(fs.barrier - fs.barrier_b) - 1e-12).all()
    assert fs.grid_change >= 0 and set(fs.L_two).isdisjoint(fs.L_none)
    assert set(fs.L_two) | set(fs.L_none) == set(Ls)  # both sets of a row agree here


@covers(sx.finite_size_summary)
@budget(10)
@given(bad=st.sampled_from([{}, [1, 2], None, {24: (1, 2)}]))
def test_finite_size_summary_refuses_bad_rows(bad):
    with raises_naming("rows", TypeError):
        sx.finite_size_summary(bad)
