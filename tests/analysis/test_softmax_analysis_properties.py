"""Property tests of copylib.analysis.softmax: the L = 24 double minimum and the map action's data gain."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from copylib.analysis import softmax as sx

from props_helpers import budget, covers, raises_naming


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


@covers(sx.map_data_gain)
@budget(20)
@given(L=st.integers(3, 40), V=st.integers(2, 6), P=st.floats(1.0, 1e4),
       Delta=st.lists(st.floats(-5, 8), min_size=1, max_size=5))
def test_map_data_gain_is_G0_times_copy_weight_times_ratio(L, V, P, Delta):
    import copylib as cl
    spec = cl.ModelSpec(L=L, V=V, kind="softmax")
    Delta = np.array(Delta)
    gain, ratio = sx.map_data_gain(Delta, P, spec)
    c = 1 / (1 + (L - 1) * np.exp(-Delta))
    G0 = P * (V - 1) / (2 * spec.sigma0_sq * V)
    # gamma_1^2 / L = gamma_1 c: the gain is G0 c gamma_1 / (alpha_1 + eps)
    np.testing.assert_allclose(gain, G0 * c * ratio, rtol=1e-12)
    # alpha_1 >= L c^2 = gamma_1 c (Cauchy-Schwarz over a row) and eps > 0: 0 < ratio < 1 / c
    assert (ratio > 0).all() and (ratio * c < 1 + 1e-12).all()


@covers(sx.map_data_gain)
@budget(10)
@given(which=st.sampled_from(["P", "Delta"]), data=st.data())
def test_map_data_gain_names_a_bad_argument(which, data):
    import copylib as cl
    spec = cl.ModelSpec(L=8, V=4, kind="softmax")
    args = {"Delta": 1.0, "P": 100.0}
    args[which] = data.draw({"P": st.sampled_from([0.0, -3.0, math.inf, "100"]),
                             "Delta": st.sampled_from([math.nan, [1.0, math.inf]])}[which])
    with raises_naming(which):
        sx.map_data_gain(args["Delta"], args["P"], spec)


def _spec32():
    import copylib as cl
    return cl.ModelSpec(L=32, V=4, kind="softmax")


@covers(sx.spinodal_expansion, sx.SpinodalExpansion)
@budget(5)
@given(r0=st.floats(1e-4, 5e-4), ratio=st.floats(2.0, 10.0), h=st.floats(1e-5, 1e-3))
def test_spinodal_expansion_exponents_are_two_point_slopes(r0, ratio, h):
    from copylib.theory import softmax as theory
    spec = _spec32()
    ex = sx.spinodal_expansion(theory.spinodals(spec), spec, rel_P=(r0, r0 * ratio), h=h)
    slopes = np.log([ex.depth[1] / ex.depth[0], ex.width[1] / ex.width[0]]) / np.log(ratio)
    np.testing.assert_allclose(ex.exponents, slopes, rtol=1e-9)
    assert (ex.depth > 0).all() and (ex.width > 0).all() and ex.depth[1] > ex.depth[0]
    assert abs(ex.exponents[0] - 1.5) < 0.05 and abs(ex.exponents[1] - 0.5) < 0.05


@covers(sx.spinodal_expansion)
@budget(10)
@given(which=st.sampled_from(["spinodals", "rel_P", "h", "dP"]), data=st.data())
def test_spinodal_expansion_names_a_bad_argument(which, data):
    from copylib.theory.results import Spinodals
    spec = _spec32()
    args = {"spinodals": Spinodals(300.0, 350.0, 1.5, 0.6)}
    args[which] = data.draw({"spinodals": st.sampled_from([None, (300.0, 350.0), 3.0]),
                             "rel_P": st.sampled_from([(1e-3, 1e-4), (0.0, 1e-3), (1e-4,), (1e-4, 2.0)]),
                             "h": st.sampled_from([0.0, -1e-4, math.nan]),
                             "dP": st.sampled_from([(5.0,), (5.0, -1.0), "55"])}[which])
    with raises_naming(which):
        sx.spinodal_expansion(args.pop("spinodals"), spec, **args)


@covers(sx.planted_starts, sx.PlantedStarts)
@budget(3)
@given(fracs=st.lists(st.sampled_from([-1.0, -0.5, -0.25, 0.25, 0.5, 1.0]), min_size=1, max_size=4, unique=True))
def test_planted_starts_plant_between_the_minima_on_the_side_of_their_sign(fracs):
    import copylib as cl
    from copylib.theory import softmax as theory
    spec = _spec32()
    sp = theory.spinodals(spec, "map")
    P = 0.5 * (sp.P_lower + sp.P_upper)
    C = cl.nested_cooccurrence([int(P)], spec, np.random.default_rng(0))
    ps = sx.planted_starts(C, P, spec, fracs=fracs, n_steps=1, n_records=1)
    f = np.array(fracs)
    assert ps.c_end.shape == (1, f.size)
    side = np.where(f < 0, ps.Delta_min[0], ps.Delta_min[-1])
    # planted a fraction |f| of the way from the top to the minimum of its side
    np.testing.assert_allclose(ps.Delta_planted - ps.Delta_top, np.abs(f) * (side - ps.Delta_top), atol=1e-12)
    np.testing.assert_allclose(ps.c_predicted, theory.copy_weight_of_gap(side, spec, version="map"))


@covers(sx.planted_starts)
@budget(10)
@given(which=st.sampled_from(["fracs", "C", "P"]), data=st.data())
def test_planted_starts_names_a_bad_argument(which, data):
    spec = _spec32()
    args = {"C": np.zeros((1, 32, 32, 4, 4)), "P": 340.0, "fracs": (-0.5, 0.5)}
    args[which] = data.draw({"fracs": st.sampled_from([(0.0,), (), (1.5,), ((0.5,),)]),
                             "C": st.sampled_from([np.zeros((32, 32, 4, 4)), np.zeros((1, 8, 8, 4, 4))]),
                             "P": st.sampled_from([0.0, -1.0, 20.0])}[which])
    with raises_naming(which):
        sx.planted_starts(args["C"], args["P"], spec, fracs=args["fracs"], n_steps=1)
