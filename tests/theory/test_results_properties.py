"""Property tests of copylib.theory.results: the result types every attention geometry shares
(issue 39: one verb and one result type per question)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import copylib as cl
from copylib.theory import causal as ct
from copylib.theory import linear as lt
from copylib.theory import linear_minima
from copylib.theory import softmax as stheory
from copylib.theory.results import FirstOrderPoint, Minimum, MinimumCurve, Spinodals

from props_helpers import budget, covers, log_uniform

finite = st.floats(-1e6, 1e6, allow_nan=False)
names = st.text("mqrDeltasu2", min_size=1, max_size=5)


def minima(P=log_uniform(1e-2, 1e6), order=st.floats(0.0, 1.0)):
    return st.builds(Minimum, P=P, version=st.sampled_from(["mean_field", "fluct", "map", "energy"]), action=finite,
                     order_parameter=order, test_loss=st.none() | st.floats(0.0, 10.0),
                     coordinates=st.dictionaries(names, finite, min_size=1, max_size=3),
                     grad_norm=st.none() | st.floats(0.0, 1.0))


@covers(Minimum)
@budget(40)
@given(r=minima())
def test_minimum_fields_are_floats_and_frozen(r):
    for name in ("P", "action", "order_parameter"):
        assert isinstance(getattr(r, name), float)
    assert r.test_loss is None or isinstance(r.test_loss, float)
    assert r.grad_norm is None or isinstance(r.grad_norm, float)
    assert r.coordinates and all(isinstance(k, str) and isinstance(v, float) for k, v in r.coordinates.items())
    assert hash(r) == hash(Minimum(r.P, r.version, r.action, r.order_parameter, r.test_loss, dict(r.coordinates),
                                   r.grad_norm))
    with pytest.raises(AttributeError):
        r.P = 1.0


@covers(Minimum)
@budget(30)
@given(which=st.sampled_from(["P", "action", "test_loss", "grad_norm", "coordinates"]),
       bad=st.sampled_from([math.nan, math.inf, -math.inf]), zero=st.booleans())
def test_minimum_rejects_bad_fields(which, bad, zero):
    args = dict(P=10.0, version="map", action=-1.0, order_parameter=0.5, test_loss=0.3, coordinates={"Delta": 1.0},
                grad_norm=None)
    if which == "coordinates":
        args[which] = {} if zero else [1.0]
    else:
        args[which] = 0.0 if (zero and which == "P") else bad
    with pytest.raises(ValueError, match=which):
        Minimum(**args)


@covers(MinimumCurve)
@budget(30)
@given(n=st.integers(1, 5), coords=st.lists(names, min_size=1, max_size=3, unique=True), with_loss=st.booleans(),
       with_n=st.booleans(), data=st.data())
def test_minimum_curve_holds_float_arrays_of_the_shape_of_P(n, coords, with_loss, with_n, data):
    col = st.lists(finite, min_size=n, max_size=n)
    P = data.draw(st.lists(log_uniform(1e-2, 1e6), min_size=n, max_size=n))
    c = MinimumCurve(P=P, version="map", action=data.draw(col), order_parameter=data.draw(col),
                     test_loss=data.draw(col) if with_loss else None,
                     coordinates={k: data.draw(col) for k in coords}, n_minima=[1] * n if with_n else None)
    arrays = [c.P, c.action, c.order_parameter, *c.coordinates.values()] + ([c.test_loss] if with_loss else [])
    assert all(x.dtype == np.float64 and x.shape == (n,) for x in arrays)
    assert (c.test_loss is None) != with_loss and (c.n_minima is None) != with_n
    np.testing.assert_array_equal(c.P, P)
    with pytest.raises(AttributeError):
        c.P = np.ones(n)


@covers(MinimumCurve)
@budget(30)
@given(which=st.sampled_from(["P", "action", "order_parameter", "test_loss", "coordinates", "n_minima"]),
       how=st.sampled_from(["shape", "value"]))
def test_minimum_curve_rejects_bad_fields(which, how):
    args = dict(P=[10.0, 20.0], version="map", action=[0.0, 1.0], order_parameter=[0.1, 0.2], test_loss=[0.5, 0.4],
                coordinates={"Delta": [1.0, 2.0]}, n_minima=[1, 2])
    if which == "coordinates":
        args[which] = {} if how == "value" else {"Delta": [1.0]}
    elif which == "n_minima":
        args[which] = [0, 1] if how == "value" else [1]
    elif which == "P":
        args[which] = [10.0, -1.0] if how == "value" else [[10.0, 20.0]]
    else:  # any float is allowed (NaN: the linear copy share at the symmetric point); a wrong shape is not
        args[which] = [1.0, 2.0, 3.0] if how == "shape" else [0.5]
    with pytest.raises(ValueError, match=which):
        MinimumCurve(**args)


@covers(Spinodals)
@budget(20)
@given(lo=log_uniform(1.0, 1e4), ratio=st.floats(1.0, 10.0), D=st.tuples(finite, finite))
def test_spinodals_hold_their_fields(lo, ratio, D):
    sp = Spinodals(lo, lo * ratio, *D)
    assert (sp.P_lower, sp.P_upper, sp.Delta_lower, sp.Delta_upper) == (lo, lo * ratio, *D)


@covers(FirstOrderPoint)
@budget(30)
@given(pool=minima(), copy=minima(), first=st.booleans())
def test_first_order_point_jump_is_the_change_of_the_order_parameter(pool, copy, first):
    p = FirstOrderPoint(P3=pool.P, version=pool.version, pooling=pool, copy=copy, first_order=first,
                        two_minima=first)
    assert p.jump == copy.order_parameter - pool.order_parameter
    assert p.spinodals is None and p.P2 is None and p.rel_width is None and p.delta_action is None
    with pytest.raises(TypeError, match="copy"):
        FirstOrderPoint(P3=1.0, version="map", pooling=pool, copy=(0.1, 0.2), first_order=True, two_minima=True)
    with pytest.raises(TypeError, match="spinodals"):
        FirstOrderPoint(P3=1.0, version="map", pooling=pool, copy=copy, first_order=True, two_minima=True,
                        spinodals=(1.0, 2.0))


# --------------------------------------------------------------------------
# every geometry answers with the shared types
# --------------------------------------------------------------------------


@covers(lt.local_minima, lt.global_minimum, stheory.local_minima, stheory.global_minimum, ct.local_minima,
        ct.global_minimum)
@budget(6)
@given(P=log_uniform(5.0, 3000.0), L=st.integers(4, 12), V=st.integers(2, 5))
def test_every_geometry_returns_minimum_tuples_with_the_global_among_them(P, L, V):
    cases = [(lt, cl.ModelSpec(L=L, V=V, kind="linear"), "mean_field", {"m", "q", "r2"}),
             (stheory, cl.ModelSpec(L=L, V=V, kind="softmax"), "mean_field", {"Delta"}),
             (ct, cl.ModelSpec(L=L, V=V, kind="softmax", cyclic=False, causal=True), "mean_field", {"Delta"})]
    for module, spec, version, coords in cases:
        found = module.local_minima(P, spec, version)
        assert isinstance(found, tuple) and all(isinstance(r, Minimum) for r in found), module.__name__
        for r in found:
            assert r.P == P and r.version == version and set(r.coordinates) == coords
            assert 0.0 <= r.order_parameter <= 1.0
        if hasattr(module, "global_minimum"):
            g = module.global_minimum(P, spec, version)
            assert isinstance(g, Minimum) and set(g.coordinates) == coords
            if found and module is not lt:  # the softmax and causal global minimum is the lowest local one
                assert g == min(found, key=lambda r: r.action)
            elif found:  # linear: local_minima reports m > 0 only; none lies below the global minimum
                assert min(r.action for r in found) >= g.action - 1e-9 * max(1.0, abs(g.action))


@covers(lt.minimum_curve, stheory.minimum_curve, ct.minimum_curve, MinimumCurve)
@budget(4)
@given(P=st.lists(log_uniform(5.0, 3000.0), min_size=1, max_size=3), L=st.integers(4, 10), V=st.integers(2, 4))
def test_every_geometry_returns_a_minimum_curve(P, L, V):
    cases = [(lt, cl.ModelSpec(L=L, V=V, kind="linear"), {"m", "q", "r2"}),
             (stheory, cl.ModelSpec(L=L, V=V, kind="softmax"), {"Delta"}),
             (ct, cl.ModelSpec(L=L, V=V, kind="softmax", cyclic=False, causal=True), {"Delta"})]
    for module, spec, coords in cases:
        c = module.minimum_curve(P, spec, "map")
        assert isinstance(c, MinimumCurve) and c.version == "map" and set(c.coordinates) == coords, module.__name__
        assert c.P.tolist() == [float(x) for x in P] and (c.test_loss is None) == (module is ct)
        assert (c.n_minima is None) == (module is lt)
        if module is not lt:  # one grid search per P: the curve is the global minimum at each P
            for j, x in enumerate(P):
                g = module.global_minimum(x, spec, "map")
                assert c.action[j] == pytest.approx(g.action, rel=1e-9, abs=1e-9)
                assert c.order_parameter[j] == pytest.approx(g.order_parameter, rel=1e-9, abs=1e-12)
                assert c.coordinates["Delta"][j] == pytest.approx(g.coordinates["Delta"], rel=1e-9, abs=1e-12)


@covers(linear_minima.mqr2)
@budget(20)
@given(m=st.floats(0.0, 10.0), q=st.floats(-1.0, 10.0), r2=st.floats(0.0, 5.0), L=st.integers(2, 512))
def test_linear_coordinates_and_shares(m, q, r2, L):
    r = Minimum(P=1.0, version="fluct", action=0.0, order_parameter=0.0, test_loss=0.5,
                coordinates={"m": m, "q": q, "r2": r2})
    assert linear_minima.mqr2(r) == (m, q, r2)
    s = float(linear_minima._shares_of(np.array([m]), np.array([q]), np.array([L]))[0])
    if m > 0:
        assert s == float(lt.copy_share(m, q, L)) or (math.isnan(s) and math.isnan(float(lt.copy_share(m, q, L))))
    else:
        assert s == 0.0
