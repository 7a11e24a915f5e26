"""Property tests: copylib.theory.softmax_transition (minima, spinodals, P3, the leading order).

p3_leading_order returns NaN only in its documented case (no root for L < 2 e^3 + 1)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import copylib as cl
from copylib.theory import softmax_action as sa
from copylib.theory import softmax_noise as sn
from copylib.theory import softmax_transition as stt
from copylib.theory.results import FirstOrderPoint, Minimum, MinimumCurve, Spinodals

from props_helpers import (
    assert_finite,
    bad_ints,
    bad_spec,
    budget,
    covers,
    extreme_specs,
    log_uniform,
    raises_naming,
    specs,
)

versions = st.sampled_from(sa.VERSIONS)


softmax_specs = specs("softmax", L=st.integers(2, 16), V=st.integers(2, 5))


seeds = st.integers(0, 2**32 - 1)


def _DF(minima):
    """Gaps and actions of a tuple of Minimum (local_minima) as two arrays."""
    assert isinstance(minima, tuple) and all(isinstance(r, Minimum) for r in minima)
    return np.array([r.coordinates["Delta"] for r in minima]), np.array([r.action for r in minima])


def _noise(spec, version, seed, n_draws=64):
    return sn.row_noise(spec, np.random.default_rng(seed), n_draws=n_draws) if version == "fluct" else None


@covers(stt.local_minima)
@budget(20)
@given(spec=softmax_specs, version=versions, P=log_uniform(1e-1, 1e5), seed=seeds)
def test_action_minima_valid(spec, version, P, seed):
    noise = _noise(spec, version, seed)
    D, F = _DF(stt.local_minima(P, spec, version, noise=noise, Delta_max=20.0, n_grid=401))
    assert D.ndim == 1 and D.shape == F.shape and D.size >= 1
    assert_finite(D)
    assert_finite(F)
    assert (np.diff(D) > 0).all() and (D >= 0).all() and (D <= 20.0).all()
    F0, F1, F2 = sa.reduced_action_derivatives(D, P, spec, version=version, noise=noise)
    interior = (D > 0) & (D < 20.0)
    # interior minima: F' = 0 (to brentq precision, relative to the curvature) and F'' >= 0
    assert (np.abs(F1[interior]) <= 1e-8 * (1 + np.abs(F2[interior]) * (1 + D[interior]))).all()
    assert (F2[interior] >= -1e-8 * (1 + np.abs(F0[interior]))).all()


@covers(stt.spinodals, stt.first_order_point)
@budget(4)
@given(L=st.integers(32, 48), V=st.integers(2, 5), version=st.sampled_from(["mean_field", "map", "energy"]))
def test_first_order_point_valid(L, V, version):
    # L >= 32 has a first-order jump for these versions and V (module docstring: first L with a
    # jump <= 24 at V = 4). n_scan = 200 steps by 8 % in P: finer than the coexistence window
    # (323.7 to 380.7 at L = 32, V = 4; 80 steps of 22 % can miss it)
    spec = cl.ModelSpec(L=L, V=V)
    r = stt.first_order_point(spec, version, n_scan=200, n_grid=801)
    sp = r.spinodals
    assert isinstance(r, FirstOrderPoint) and isinstance(sp, Spinodals) and r.version == version
    assert 0 < sp.P_lower < r.P3 < sp.P_upper < math.inf
    gaps = np.array([r.pooling.coordinates["Delta"], r.copy.coordinates["Delta"]])
    assert gaps[0] < gaps[1] and r.pooling.order_parameter < r.copy.order_parameter
    for x in (r.pooling.action, r.copy.action, *gaps, r.pooling.test_loss, r.copy.test_loss, sp.Delta_lower,
              sp.Delta_upper):
        assert math.isfinite(x)
    assert r.jump > 0 and r.pooling.P == r.copy.P == r.P3
    # the two branches have equal action at P3
    F = sa.reduced_action(gaps, r.P3, spec, version=version)
    assert F[0] == pytest.approx(F[1], rel=1e-9, abs=1e-9)


@covers(stt.minimum_curve, MinimumCurve)
@budget(10)
@given(spec=softmax_specs, version=versions, P=st.lists(log_uniform(1e-1, 1e5), min_size=1, max_size=4), seed=seeds)
def test_minimum_curve_valid(spec, version, P, seed):
    noise = _noise(spec, version, seed)
    c = stt.minimum_curve(P, spec, version, noise=noise, n_grid=201)
    assert isinstance(c, MinimumCurve) and c.version == version and set(c.coordinates) == {"Delta"}
    for name, x in (("P", c.P), ("Delta", c.coordinates["Delta"]), ("order_parameter", c.order_parameter),
                    ("test_loss", c.test_loss), ("action", c.action), ("n_minima", c.n_minima)):
        assert x.shape == (len(P),), name
        assert_finite(x, name)
    assert (c.n_minima >= 1).all()
    # the copy weight of the curve is that of its gap
    np.testing.assert_allclose(c.order_parameter, sa.copy_weight_of_gap(c.coordinates["Delta"], spec, version=version,
                                                                        noise=noise), rtol=1e-12)


@covers(stt.leading_order_gap, stt.p3_leading_order)
@budget(30)
@given(L=st.integers(2, 10**7), V=st.integers(2, 50), with_spec=st.booleans())
def test_leading_order_nan_only_without_root(L, V, with_spec):
    """Documented NaN: no root of D = (1/2) ln[(L-1)(D-1)] for L < 2 e^3 + 1 = 41.17; finite otherwise."""
    spec = cl.ModelSpec(L=min(L, 64), V=V, sigma_G=0.5, sigma0_sq=2.0) if with_spec else None
    D = stt.leading_order_gap(L)
    P3 = stt.p3_leading_order(L, V, spec)
    has_root = L >= 2 * math.e**3 + 1
    assert math.isnan(D) == (not has_root) and math.isnan(P3) == (not has_root)
    if has_root:
        assert D > 1.5 and D == pytest.approx(0.5 * math.log((L - 1) * (D - 1)), rel=1e-12)
        assert 0 < P3 < math.inf


@covers(stt.leading_order_gap, stt.p3_leading_order)
@budget(20)
@given(data=st.data())
def test_leading_order_invalid(data):
    which = data.draw(st.sampled_from(["leading_order_gap", "p3_leading_order"]))
    args = {"L": 64} if which == "leading_order_gap" else {"L": 64, "V": 4, "spec": None}
    name = data.draw(st.sampled_from(sorted(args)))
    args[name] = data.draw(bad_spec().filter(lambda v: v is not None) if name == "spec" else bad_ints(2))
    with raises_naming(name):
        getattr(stt, which)(**args)


@covers(stt.local_minima)
@budget(20)
@given(spec=extreme_specs("softmax"), version=versions, P=log_uniform(1e-3, 1e6), seed=seeds)
def test_softmax_minima_extreme_scales(spec, version, P, seed):
    noise = _noise(spec, version, seed, n_draws=16)
    D, F = _DF(stt.local_minima(P, spec, version, noise=noise, n_grid=201))
    assert D.size >= 1
    assert_finite(D)
    assert_finite(F)
    # the global minimum is not above F on the grid it was found from (rounding of |F|)
    grid = np.linspace(0, 20.0, 201)
    Fg = sa.reduced_action(grid, P, spec, version=version, noise=noise)
    assert F.min() <= Fg.min() + 1e-9 * (1 + abs(Fg.min()))


@covers(stt.first_order_point)
@budget(8)
@given(scale=st.sampled_from(["sigma0_sq", "sigma_G"]), exponent=st.integers(-8, 8))
def test_first_order_point_follows_its_scale(scale, exponent):
    """P3 of the energy action scales like sigma0_sq / sigma_G^2 exactly; the default scan range
    must follow it (it used to be empty, (1, 0.06), at sigma0_sq = 1e-8)."""
    value = 10.0**exponent if scale == "sigma0_sq" else 10.0 ** (exponent / 2)
    spec = cl.ModelSpec(L=32, V=4, **{scale: value})
    ref = stt.first_order_point(cl.ModelSpec(L=32, V=4), "energy", n_scan=200, n_grid=801).P3
    P3 = stt.first_order_point(spec, "energy", n_scan=200, n_grid=801).P3
    x = spec.sigma0_sq / spec.sigma_G**2
    # brentq to 1e-13, spinodal brackets differ with the scan: agreement to ~1e-9
    assert P3 == pytest.approx(ref * x, rel=1e-9)


CHAPTER = cl.ModelSpec(L=32, V=4, kind="softmax")


@covers(stt.barrier_at_p3, stt.local_minimum_copy_weights, stt.global_minimum)
@budget(6)
@given(P=log_uniform(100.0, 2000.0), n_grid=st.integers(3, 5000), version=st.sampled_from(["mean_field", "map"]))
def test_chapter_minima_and_barrier_valid(P, n_grid, version):
    point = _chapter_point(version)
    bar = stt.barrier_at_p3(point, CHAPTER, version, n_grid=n_grid)
    # equal minima at the two ends of the grid: the maximum between them is at least zero, and finite
    assert math.isfinite(bar) and bar >= -1e-8
    c = stt.local_minimum_copy_weights(P, CHAPTER, version)
    assert c.ndim == 1 and 1 <= c.size <= 2 and ((c > 0) & (c < 1)).all() and (np.diff(c) > 0).all()
    g = stt.global_minimum(P, CHAPTER, version)
    c_glob, loss = g.order_parameter, g.test_loss
    assert isinstance(g, Minimum) and c_glob in c and math.isfinite(loss) and loss > 0
    with raises_naming("n_grid"):
        stt.barrier_at_p3(point, CHAPTER, version, n_grid=2)
    with raises_naming("point"):
        stt.barrier_at_p3(None, CHAPTER, version)


_POINTS = {}


def _chapter_point(version):
    if version not in _POINTS:
        _POINTS[version] = stt.first_order_point(CHAPTER, version)
    return _POINTS[version]


@covers(stt.copy_minimum_depth)
@budget(6)
@given(frac=st.floats(0.001, 0.999), version=st.sampled_from(["mean_field", "map"]))
def test_copy_minimum_depth_inside_the_coexistence_window(frac, version):
    sp = _chapter_point(version).spinodals
    P = sp.P_lower + frac * (sp.P_upper - sp.P_lower)
    B, s = stt.copy_minimum_depth(P, CHAPTER, version)
    D, F = _DF(stt.local_minima(P, CHAPTER, version))
    # the top lies between the two minima and above both (1e-12: rounding of F)
    assert 0 < s < D[-1] - D[0] and B > 0 and B + F[-1] >= F[0] - 1e-12
    with raises_naming("n_grid"):
        stt.copy_minimum_depth(P, CHAPTER, version, n_grid=2)
    with pytest.raises(ValueError, match="single minimum"):
        stt.copy_minimum_depth(0.5 * sp.P_lower, CHAPTER, version)
