"""Property tests: copylib.theory.linear (reduced action of linear attention, minima, thresholds).

Valid random arguments give finite output of the documented shape; invalid ones
raise ValueError/TypeError naming the parameter; and the extreme-but-valid
regime of issue 8 (P up to 1e6, L up to 512, every variance in [1e-8, 1e8])
keeps the action, its gradient, the transverse saddle and the minimiser finite,
with the minimiser not beaten by probes around it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import copylib as cl
from copylib.theory import linear as lt
from copylib.theory import linear_action
from copylib.theory.results import FirstOrderPoint, Minimum, MinimumCurve

from props_helpers import (
    assert_finite,
    bad_ints,
    bad_spec,
    budget,
    covers,
    extreme_specs,
    log_uniform,
    not_array,
    raises_naming,
    specs,
    with_nonfinite,
)

versions = st.sampled_from(lt.VERSIONS)
linear_specs = specs("linear", L=st.integers(2, 16), V=st.integers(2, 5), cyclic=st.just(True))
Ps = log_uniform(1e-2, 1e4)
seeds = st.integers(0, 2**32 - 1)


def _grid(seed, shape=(5,), scale=1.0):
    rng = np.random.default_rng(seed)
    return scale * rng.normal(size=shape), 0.3 * scale * rng.normal(size=shape)


# --------------------------------------------------------------------------
# valid input
# --------------------------------------------------------------------------


@covers(lt.transverse_row_sum_factor)
@budget(20)
@given(L=st.integers(2, 10**6))
def test_transverse_row_sum_factor_valid(L):
    c = lt.transverse_row_sum_factor(L)
    # a ratio |A_perp 1|^2 / |A_perp|^2 averaged over the sphere: in (0, 1], -> 1 as L grows
    assert isinstance(c, float) and 0 < c <= 1


@covers(lt.reduced_action, linear_action._reduced_action_gradient, linear_action._transverse_saddle)
@budget(30)
@given(spec=linear_specs, version=versions, P=Ps, seed=seeds, given_r2=st.booleans())
def test_reduced_action_valid(spec, version, P, seed, given_r2):
    m, q = _grid(seed)
    k = linear_action.action_constants(spec)
    r2 = np.random.default_rng(seed).uniform(0.01, 2.0, size=5) * k.n * k.s_c2 if given_r2 else None
    S = lt.reduced_action(m, q, P, spec, version=version, r2=r2)
    dm, dq = linear_action._reduced_action_gradient(m, q, P, spec, version=version, r2=r2)
    for out in (S, dm, dq):
        assert isinstance(out, np.ndarray) and out.shape == (5,)
        assert_finite(out)
    # gradient = central differences; step and tolerance relative to the scale of m and q
    h = 1e-6
    for i, (d, name) in enumerate(((dm, "m"), (dq, "q"))):
        e = np.array([h, 0.0]) if i == 0 else np.array([0.0, h])
        Sp = lt.reduced_action(m + e[0], q + e[1], P, spec, version=version, r2=r2)
        Sm = lt.reduced_action(m - e[0], q - e[1], P, spec, version=version, r2=r2)
        fd = (Sp - Sm) / (2 * h)
        # O(h^2) truncation plus rounding |S| eps / h
        np.testing.assert_allclose(d, fd, rtol=1e-4, atol=1e-4 + 1e-9 * np.abs(S).max() / h, err_msg=name)
    if version == "fluct":
        r2s = linear_action._transverse_saddle(m, q, P, spec)
        # 0 < r2* < n s_c^2 exactly; rounding may reach the upper end when the data barely act
        assert r2s.shape == (5,) and (r2s > 0).all() and (r2s <= k.n * k.s_c2 * (1 + 1e-12)).all()
        # the saddle minimises over r2: any other r2 gives at least the same action
        S_saddle = lt.reduced_action(m, q, P, spec, version="fluct")
        for factor in (0.5, 0.99, 1.01, 2.0):
            other = lt.reduced_action(m, q, P, spec, version="fluct", r2=factor * r2s)
            assert (other >= S_saddle - 1e-12 * (1 + np.abs(S_saddle))).all()


@covers(lt.hessian_at_origin, lt.susceptibility_m)
@budget(20)
@given(spec=linear_specs, version=versions, P=st.lists(Ps, min_size=1, max_size=4))
def test_hessian_and_susceptibility_valid(spec, version, P):
    P = np.asarray(P)
    H = lt.hessian_at_origin(P, spec, version)
    assert H.shape == P.shape + (2, 2)
    assert_finite(H)
    assert np.array_equal(H[..., 0, 1], H[..., 1, 0])
    chi = lt.susceptibility_m(P, spec, version)
    assert chi.shape == P.shape
    stable = (np.linalg.det(H) > 0) & (H[..., 1, 1] > 0)
    # documented: NaN exactly where the origin is not a minimum, a positive variance elsewhere
    assert np.array_equal(np.isnan(chi), ~stable)
    assert (chi[stable] > 0).all()


@covers(lt.global_minimum)
@budget(20)
@given(spec=linear_specs, version=versions, P=log_uniform(1e-1, 1e4), seed=seeds)
def test_action_minimum_valid(spec, version, P, seed):
    r = lt.global_minimum(P, spec, version)
    _check_minimum(r, P, spec, version, seed)


def _check_minimum(r, P, spec, version, seed):
    assert isinstance(r, Minimum) and r.P == P and r.version == version
    assert set(r.coordinates) == {"m", "q", "r2"}
    for name, x in [*r.coordinates.items(), *((n, getattr(r, n)) for n in ("action", "test_loss", "grad_norm"))]:
        assert isinstance(x, float) and math.isfinite(x), name
    # the order parameter is the copy share, 0 at the symmetric point
    m, q = r.coordinates["m"], r.coordinates["q"]
    assert r.order_parameter == (float(lt.copy_share(m, q, spec.L)) if m > 0 else 0.0)
    assert r.coordinates["m"] >= 0 and r.coordinates["r2"] >= 0
    # global minimum: never above the symmetric point, nor above random probes around both,
    # in prior-whitened units and at the scale of the minimiser (relative rounding 1e-9)
    k = linear_action.action_constants(spec)
    sm, sq = math.sqrt(k.s_p2), math.sqrt(k.s_c2 / (k.L - 1))
    rng = np.random.default_rng(seed)
    zm, zq = r.coordinates["m"] / sm, r.coordinates["q"] / sq
    radius = max(abs(zm), abs(zq), 1e-3)
    probes = [(0.0, 0.0)]
    for s in (1e-3, 1e-1, 1.0):
        d = rng.normal(size=(8, 2)) * s * radius
        probes += [(zm + a, zq + b) for a, b in d] + [(a, b) for a, b in d]
    probes = np.asarray(probes)
    S = lt.reduced_action(probes[:, 0] * sm, probes[:, 1] * sq, P, spec, version=version)
    tol = 1e-9 * max(1.0, abs(r.action))
    assert r.action <= S.min() + tol, (r, probes[np.argmin(S)], S.min())


@covers(lt.minimum_curve, MinimumCurve, lt.copy_share)
@budget(5)
@given(spec=linear_specs, version=versions, P=st.lists(log_uniform(1e-1, 1e4), min_size=1, max_size=3))
def test_minimum_curve_valid(spec, version, P):
    c = lt.minimum_curve(P, spec, version)
    assert isinstance(c, MinimumCurve) and c.version == version and c.n_minima is None
    assert set(c.coordinates) == {"m", "q", "r2"}
    for name, x in (("P", c.P), ("action", c.action), ("test_loss", c.test_loss),
                    ("order_parameter", c.order_parameter), *c.coordinates.items()):
        assert x.shape == (len(P),), name
        if name != "order_parameter":
            assert_finite(x, name)
    m, q = c.coordinates["m"], c.coordinates["q"]
    assert (m >= 0).all()
    # the copy share is NaN only at m = q = 0 (documented: where m + (L-1) q = 0)
    g1 = m + (spec.L - 1) * q
    assert np.array_equal(np.isnan(c.order_parameter), g1 == 0)


@covers(lt.copy_share)
@budget(20)
@given(L=st.integers(2, 100), m=st.floats(-1e6, 1e6), q=st.floats(-1e6, 1e6), zero=st.booleans())
def test_copy_share_valid(L, m, q, zero):
    if zero:
        m = -(L - 1) * q
    s = lt.copy_share(m, q, L)
    assert s.shape == ()
    g1 = m + (L - 1) * q
    assert np.isnan(s) == (g1 == 0)


@covers(linear_action._plugin_readout, lt.predicted_test_loss)
@budget(20)
@given(spec=linear_specs, P=Ps, seed=seeds, r2=st.floats(0, 2), batch=st.sampled_from([(), (3,)]))
def test_readout_and_predicted_loss_valid(spec, P, seed, r2, batch):
    m, q = _grid(seed, batch)
    A = cl.attention_from_order_parameters(m, q, spec.L)
    W = linear_action._plugin_readout(A, P, spec, r2=r2)
    assert W.shape == batch + (spec.V, spec.V)
    assert_finite(W)
    loss = lt.predicted_test_loss(m, q, P, spec, r2=r2)
    assert loss.shape == batch
    assert_finite(loss)
    # the population loss of a real predictor is a mean of squares
    assert (loss >= -1e-12).all()
    if r2 == 0:
        # closed form = expected_loss of (A, plug-in readout) (documented)
        np.testing.assert_allclose(loss, cl.expected_loss(A, W, spec.target), rtol=1e-10, atol=1e-12)


@covers(lt.p1_analytic, lt.p2_analytic)
@budget(30)
@given(spec=linear_specs, version=versions, form=st.sampled_from(["exact", "m_only", "leading"]))
def test_thresholds_analytic_valid(spec, version, form):
    if version == "fluct" and form == "leading":
        with raises_naming("form", ValueError):
            lt.p1_analytic(spec, version, form)
        return
    P1 = lt.p1_analytic(spec, version, form)
    P2 = lt.p2_analytic(spec, version)
    assert isinstance(P1, float) and isinstance(P2, float) and 0 < P1 < math.inf and 0 < P2 < math.inf
    if form == "exact":
        # the origin Hessian is singular at P1, positive definite just below
        H = lt.hessian_at_origin(np.array([P1 * (1 - 1e-6), P1]), spec, version)
        assert (np.linalg.eigvalsh(H[0]) > 0).all()
        lam = np.linalg.eigvalsh(H[1])
        assert abs(lam[0]) <= 1e-6 * abs(lam).max()


@covers(lt.p1_numerical, lt.p2_numerical)
@budget(3)
@given(spec=specs("linear", L=st.integers(4, 10), V=st.integers(2, 4), cyclic=st.just(True)),
       version=st.sampled_from(["mean_field", "fluct"]))
def test_thresholds_numerical_valid(spec, version):
    P1 = lt.p1_numerical(spec, version)
    # finite differences with h = 1e-3 and Richardson extrapolation: ~1e-5 relative (tests/test_linear_theory)
    assert P1 == pytest.approx(lt.p1_analytic(spec, version), rel=1e-4)
    try:
        P2 = lt.p2_numerical(spec, version, rtol=1e-4)
    except ArithmeticError:
        # documented: no crossover to find when copying dominates from the onset on
        r = lt.global_minimum(1.01 * lt.p1_analytic(spec, version), spec, version)
        assert lt.copy_share(r.coordinates["m"], r.coordinates["q"], spec.L) >= 0.5
        return
    assert math.isfinite(P2) and P2 > P1


@covers(lt.p2_numerical_many)
@budget(3)
@given(spec_list=st.lists(specs("linear", L=st.integers(4, 10), V=st.integers(2, 4), cyclic=st.just(True)),
                          min_size=1, max_size=3),
       version=st.sampled_from(["mean_field", "fluct"]))
def test_p2_numerical_many_valid(spec_list, version):
    got = lt.p2_numerical_many(spec_list, version, rtol=1e-4)
    assert got.shape == (len(spec_list),)
    for spec, P2 in zip(spec_list, got):  # one spec at a time gives the same number (or the same NaN)
        try:
            alone = lt.p2_numerical(spec, version, rtol=1e-4)
        except ArithmeticError:
            alone = math.nan
        # both are midpoints of brackets of relative width <= 1e-4 around the same crossing
        assert (math.isnan(P2) and math.isnan(alone)) or P2 == pytest.approx(alone, rel=1e-4)


# --------------------------------------------------------------------------
# invalid input
# --------------------------------------------------------------------------

_SPEC = cl.ModelSpec(L=4, V=3, kind="linear")
_ARRAYS = {"m": np.zeros(2), "q": np.zeros(2), "P": np.full(2, 10.0), "r2": np.full(2, 0.1),
           "A": np.full((4, 4), 0.25), "P_values": np.array([1.0, 10.0])}
_CALLS = {
    "reduced_action": (("m", "q", "P", "spec"), {"version": "mean_field", "r2": "r2"}),
    "_reduced_action_gradient": (("m", "q", "P", "spec"), {"version": "fluct", "r2": "r2"}),
    "_transverse_saddle": (("m", "q", "P", "spec"), {}),
    "hessian_at_origin": (("P", "spec"), {"version": "map"}),
    "susceptibility_m": (("P", "spec"), {"version": "mean_field"}),
    "global_minimum": (("P", "spec"), {"version": "mean_field", "hint": None}),
    "minimum_curve": (("P_values", "spec"), {"version": "mean_field"}),
    "_plugin_readout": (("A", "P", "spec"), {"r2": "r2"}),
    "predicted_test_loss": (("m", "q", "P", "spec"), {"r2": "r2"}),
    "p1_analytic": (("spec",), {"version": "mean_field", "form": "exact"}),
    "p2_analytic": (("spec",), {"version": "mean_field"}),
    "p1_numerical": (("spec",), {"version": "mean_field"}),
    "p2_numerical": (("spec",), {"version": "mean_field"}),
}


def _arguments(which):
    positional, keywords = _CALLS[which]
    args = {}
    for name in positional:
        args[name] = _SPEC if name == "spec" else _ARRAYS[name].copy()
    for name, value in keywords.items():
        args[name] = _ARRAYS[value].copy() if value in _ARRAYS else value
    if which == "global_minimum":
        args["P"] = 10.0
    return args


@covers(*(getattr(linear_action if f.startswith("_") else lt, f) for f in _CALLS))
@budget(150)
@given(data=st.data())
def test_linear_theory_invalid(data):
    which = data.draw(st.sampled_from(sorted(_CALLS)))
    args = _arguments(which)
    name = data.draw(st.sampled_from(sorted(args)))
    if name == "spec":
        args["spec"] = data.draw(st.one_of(
            bad_spec(), st.just(cl.ModelSpec(L=4, V=3, kind="softmax")),
            st.just(cl.ModelSpec(L=4, V=3, kind="linear", cyclic=False))))
    elif name in ("version", "form"):
        args[name] = data.draw(st.sampled_from(["Mean_field", "exact " if name == "form" else "bayes", None, 1]))
    elif name == "hint":
        args[name] = data.draw(st.sampled_from([(1.0, 2.0), np.zeros(4), (math.nan, 0.0, 0.0), "abc"]))
    else:
        case = data.draw(st.sampled_from(["nonfinite", "kind", "range", "shape"]))
        value = args[name]
        if case == "range" and name in ("P", "P_values", "r2"):
            value = np.array([1.0, -1.0 if name == "r2" else 0.0])
        elif case == "shape" and name in ("A", "P_values"):
            value = np.zeros((3, 3)) if name == "A" else np.ones((2, 2))
        elif case == "kind":
            none_ok = name == "r2" and which in ("reduced_action", "_reduced_action_gradient")  # None: the saddle
            value = data.draw(not_array().filter(lambda v: not (none_ok and v is None)))
        else:
            value = with_nonfinite(np.atleast_1d(value), data) if np.ndim(value) else math.nan
        args[name] = value
    with raises_naming(name):
        getattr(linear_action if which.startswith("_") else lt, which)(**args)


@covers(lt.transverse_row_sum_factor, lt.copy_share)
@budget(20)
@given(L=bad_ints(2), which=st.sampled_from(["transverse_row_sum_factor", "copy_share"]))
def test_L_invalid(L, which):
    with raises_naming("L"):
        if which == "copy_share":
            lt.copy_share(0.1, 0.1, L)
        else:
            lt.transverse_row_sum_factor(L)


@covers(lt.reduced_action)
@budget(10)
@given(r2=st.sampled_from([0.0, -1e-3]))
def test_fluct_needs_positive_r2(r2):
    # the transverse entropy -(n/2) ln r2 is infinite at r2 = 0
    with raises_naming("r2", ValueError):
        lt.reduced_action(0.1, 0.0, 10.0, _SPEC, version="fluct", r2=r2)


# --------------------------------------------------------------------------
# extreme but valid input
# --------------------------------------------------------------------------


@covers(lt.reduced_action, linear_action._reduced_action_gradient, linear_action._transverse_saddle, lt.hessian_at_origin,
        lt.predicted_test_loss, linear_action._plugin_readout, lt.susceptibility_m)
@budget(40)
@given(spec=extreme_specs("linear"), version=versions, P=log_uniform(1e-3, 1e6),
       amp=log_uniform(1e-6, 1e3), seed=seeds)
def test_linear_action_extreme_scales(spec, version, P, amp, seed):
    m, q = _grid(seed, (4,), amp)
    m[0] = q[0] = 0.0  # the symmetric point, where the transverse saddle is the cubic root
    S = lt.reduced_action(m, q, P, spec, version=version)
    grads = linear_action._reduced_action_gradient(m, q, P, spec, version=version)
    for out in (S, *grads, lt.hessian_at_origin(P, spec, version), lt.predicted_test_loss(m, q, P, spec),
                linear_action._plugin_readout(cl.attention_from_order_parameters(m, q, spec.L), P, spec)):
        assert_finite(out)
    chi = lt.susceptibility_m(P, spec, version)
    assert chi.shape == () and (np.isnan(chi) or (math.isfinite(chi) and chi > 0))
    if version == "fluct":
        k = linear_action.action_constants(spec)
        r2 = linear_action._transverse_saddle(m, q, P, spec)
        # 0 < r2* < n s_c^2 exactly; without data (P -> 0) r2* -> n s_c^2 and may round to it
        assert (r2 > 0).all() and (r2 <= k.n * k.s_c2 * (1 + 1e-12)).all()
        # a true minimum in r2 (its grid used to stop at ln rho = -40: too high at extreme scales)
        for factor in (0.9, 1.1):
            other = lt.reduced_action(m, q, P, spec, version="fluct", r2=factor * r2)
            assert (other >= S - 1e-9 * np.maximum(1, np.abs(S))).all()


@covers(lt.global_minimum)
@budget(30)
@given(spec=extreme_specs("linear", L=st.sampled_from([2, 3, 32, 512])), version=versions,
       P=log_uniform(1e-3, 1e6), seed=seeds)
def test_action_minimum_extreme_scales(spec, version, P, seed):
    _check_minimum(lt.global_minimum(P, spec, version), P, spec, version, seed)


@covers(lt.p1_analytic, lt.p2_analytic)
@budget(40)
@given(spec=extreme_specs("linear"), version=versions, form=st.sampled_from(["exact", "m_only"]))
def test_thresholds_extreme_scales(spec, version, form):
    P1 = lt.p1_analytic(spec, version, form)
    assert 0 < P1 < math.inf
    assert 0 < lt.p2_analytic(spec, version) < math.inf
    if form == "exact":
        # instability of the origin: positive definite a little below P1, not above
        H = lt.hessian_at_origin(np.array([P1 * (1 - 1e-6), P1 * (1 + 1e-3)]), spec, version)
        assert (np.linalg.eigvalsh(H[0]) > 0).all()
        assert np.linalg.eigvalsh(H[1])[0] < 0


# --------------------------------------------------------------------------
# large L: local minima, the jump of the copy share, the posterior marginal and switch
# --------------------------------------------------------------------------

from copylib.theory import linear_marginal as lm  # noqa: E402


@covers(lt.local_minima)
@budget(8)
@given(spec=specs("linear", L=st.integers(4, 16), V=st.integers(2, 5), cyclic=st.just(True)), version=versions,
       P=st.lists(log_uniform(1e-1, 1e4), min_size=1, max_size=3))
def test_local_minima_valid(spec, version, P):
    found = lt.local_minima(P, spec, version)
    assert isinstance(found, list) and len(found) == len(P)
    for Pi, mins in zip(P, found):
        shares = [float(lt.copy_share(r.coordinates["m"], r.coordinates["q"], spec.L)) for r in mins]
        # documented: m > 0, q >= 0, ordered by share, distinct by more than sep
        assert all(r.coordinates["m"] > 0 and r.coordinates["q"] >= 0 and r.P == Pi for r in mins)
        assert all(b - a > 1e-4 for a, b in zip(shares, shares[1:]))
        # the global minimum, when it is not the origin, is one of them (not beaten by any)
        g = lt.global_minimum(Pi, spec, version)
        if mins and g.coordinates["m"] > 0:
            assert min(r.action for r in mins) >= g.action - 1e-9 * max(1.0, abs(g.action))


@covers(lt.first_order_point)
@budget(3)
@given(spec=specs("linear", L=st.integers(8, 24), V=st.integers(3, 5), cyclic=st.just(True)), version=versions)
def test_copy_share_jump_valid(spec, version):
    try:
        j = lt.first_order_point(spec, version, n_scan=9, rtol=1e-8)
    except ArithmeticError:  # documented by p2_numerical: no crossover to locate
        return
    assert isinstance(j, FirstOrderPoint) and j.version == version and j.spinodals is None
    assert j.rel_width < 1e-8 and math.isfinite(j.jump)
    assert j.jump == j.copy.order_parameter - j.pooling.order_parameter
    # the bracket ends carry the global minima on each side
    assert j.pooling.P < j.P3 < j.copy.P
    if j.first_order:
        assert j.two_minima and j.delta_action[0] > 0 > j.delta_action[1] and j.slope < 0
    if not j.two_minima:
        assert math.isnan(j.slope)


@covers(lm.plugin_marginal, lm.PluginMarginal)
@budget(4)
@given(spec=specs("linear", L=st.integers(4, 8), V=st.integers(2, 4), cyclic=st.just(True)),
       P=st.floats(0.5, 200), coordinate=st.sampled_from(["Q", "m"]))
def test_plugin_posterior_marginal_valid(spec, P, coordinate):
    mg = lm.plugin_marginal(P, spec, coordinate, n_m=41, n_q=41, n_row=9, n_rest=9, edge_tol=1e-5)
    assert isinstance(mg, lm.PluginMarginal) and mg.coordinate == coordinate
    assert mg.x.shape == mg.density.shape and (mg.density >= 0).all()
    assert np.trapezoid(mg.density, mg.x) == pytest.approx(1.0, abs=1e-4)
    assert mg.modes.size >= 1 and mg.barrier >= 0
    assert (mg.modes.size >= 2) == math.isfinite(mg.log_weight_ratio)


@covers(lm.plugin_posterior_switch, lm.PluginSwitch)
@budget(3)
@given(spec=specs("linear", L=st.integers(4, 8), V=st.integers(2, 4), cyclic=st.just(True)),
       P=st.floats(1.0, 100.0), ratio=st.floats(1.5, 4.0))
def test_plugin_posterior_switch_valid(spec, P, ratio):
    kw = dict(n_m=41, n_q=41, n_row=9, n_rest=9, edge_tol=1e-5)
    try:
        sw = lm.plugin_posterior_switch(spec, P, P * ratio, n_bisect=2, **kw)
    except ValueError as e:  # documented: the ends must be unimodal
        assert "unimodal" in str(e)
        return
    assert isinstance(sw, lm.PluginSwitch) and P <= sw.P_lo < sw.P_hi <= P * ratio * (1 + 1e-12)
    assert sw.n_eval == 4 and math.isfinite(sw.gap)
