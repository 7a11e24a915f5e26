"""Property tests of copylib.analysis.softmax: the L = 24 double minimum and the finite-size table."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from props_helpers import budget, covers, raises_naming

from copylib.analysis import softmax as sx
from copylib.theory.softmax_marginal import FiniteSizeRow


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
