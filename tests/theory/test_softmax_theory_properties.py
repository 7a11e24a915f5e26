"""Property tests: copylib.theory.softmax and copylib.analysis.softmax.

Valid random arguments give finite output of the documented shape; invalid ones
raise ValueError/TypeError naming the parameter; the reduced action F(Delta; P)
and its derivatives stay finite for P up to 1e6, L up to 512 and every variance
in [1e-8, 1e8]; and the two functions that return NaN on purpose do so only in
their documented case (p3_leading_order: no root for L < 2 e^3 + 1;
interpolate_crossing: no sign change).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import copylib as cl
from copylib.analysis import softmax as sx
from copylib.theory import softmax as st_

from props_helpers import (
    assert_finite,
    bad_ints,
    bad_positive,
    bad_spec,
    budget,
    cooccurrence_of,
    covers,
    extreme_specs,
    log_uniform,
    not_array,
    not_bool,
    raises_naming,
    specs,
    with_nonfinite,
)

versions = st.sampled_from(st_.VERSIONS)
softmax_specs = specs("softmax", L=st.integers(2, 16), V=st.integers(2, 5))
seeds = st.integers(0, 2**32 - 1)


pytestmark = pytest.mark.usefixtures("one_thread")  # tiny tensors: torch on one thread (tests/conftest.py)


def _noise(spec, version, seed, n_draws=64):
    return st_.row_noise(spec, np.random.default_rng(seed), n_draws=n_draws) if version == "fluct" else None


# --------------------------------------------------------------------------
# valid input
# --------------------------------------------------------------------------


@covers(st_.row_noise, st_.RowNoise)
@budget(20)
@given(spec=softmax_specs, n_pow=st.integers(0, 8), std=st.one_of(st.none(), st.floats(0, 5)), seed=seeds)
def test_row_noise_valid(spec, n_pow, std, seed):
    rows = st_.row_noise(spec, np.random.default_rng(seed), n_draws=2**n_pow, std=std)
    assert isinstance(rows, st_.RowNoise) and rows.L == spec.L
    assert rows.shift.shape == rows.rho.shape == (2**n_pow,)
    assert_finite(rows.shift)
    # rho = sum e^{2 eta} / (sum e^eta)^2 over the L - 1 other positions: in [1/(L-1), 1]
    assert (rows.rho > 0).all() and (rows.rho <= 1 + 1e-15).all()
    assert (rows.rho >= 1 / (spec.L - 1) * (1 - 1e-12)).all()
    assert rows.std == (spec.sigma_G if std is None else std)


@covers(st_.reduced_action, st_.reduced_action_derivatives, st_.copy_weight_of_gap, st_.state_loss)
@budget(30)
@given(spec=softmax_specs, version=versions, P=log_uniform(1e-2, 1e5), seed=seeds,
       Delta=st.lists(st.floats(-30, 30), min_size=1, max_size=4))
def test_reduced_action_valid(spec, version, P, seed, Delta):
    noise = _noise(spec, version, seed)
    D = np.asarray(Delta)
    F = st_.reduced_action(D, P, spec, version=version, noise=noise)
    F0, F1, F2 = st_.reduced_action_derivatives(D, P, spec, version=version, noise=noise)
    c = st_.copy_weight_of_gap(D, spec, version=version, noise=noise)
    loss = st_.state_loss(D, P, spec, version=version, noise=noise)
    for out in (F, F0, F1, F2, c, loss):
        assert isinstance(out, np.ndarray) and out.shape == D.shape
        assert_finite(out)
    np.testing.assert_array_equal(F, F0)
    assert ((c > 0) & (c < 1)).all() if (np.abs(D) < 30).all() else ((c >= 0) & (c <= 1)).all()
    assert (loss >= -1e-12).all()  # a population loss is a mean of squares
    # closed-form derivatives = central differences (O(h^2) + rounding |F| eps / h)
    h = 1e-5
    Fp = st_.reduced_action(D + h, P, spec, version=version, noise=noise)
    Fm = st_.reduced_action(D - h, P, spec, version=version, noise=noise)
    scale = np.abs(F).max() + 1
    np.testing.assert_allclose(F1, (Fp - Fm) / (2 * h), rtol=1e-5, atol=1e-9 * scale / h)
    np.testing.assert_allclose(F2, (Fp - 2 * F + Fm) / h**2, rtol=1e-3, atol=1e-8 * scale / h**2)
    if version == "mean_field":
        # documented identity with the plug-in action of the copy-state attention
        from copylib.posterior.order_parameters import copy_attention, plugin_action_of_attention, prior_action_softmax

        want = plugin_action_of_attention(copy_attention(D, spec.L), P, spec) + prior_action_softmax(D, spec)
        np.testing.assert_allclose(F, want, rtol=1e-10, atol=1e-10)


@covers(st_.plugin_readout)
@budget(20)
@given(spec=softmax_specs, P=log_uniform(1e-2, 1e5), batch=st.sampled_from([(), (3,)]), seed=seeds)
def test_plugin_readout_valid(spec, P, batch, seed):
    A = cl.attention(2 * np.random.default_rng(seed).normal(size=batch + (spec.L, spec.L)), "softmax")
    W = st_.plugin_readout(A, P, spec)
    assert W.shape == batch + (spec.V, spec.V)
    assert_finite(W)


@covers(st_.action_minima)
@budget(20)
@given(spec=softmax_specs, version=versions, P=log_uniform(1e-1, 1e5), seed=seeds)
def test_action_minima_valid(spec, version, P, seed):
    noise = _noise(spec, version, seed)
    D, F = st_.action_minima(P, spec, version, noise=noise, Delta_max=20.0, n_grid=401)
    assert D.ndim == 1 and D.shape == F.shape and D.size >= 1
    assert_finite(D)
    assert_finite(F)
    assert (np.diff(D) > 0).all() and (D >= 0).all() and (D <= 20.0).all()
    F0, F1, F2 = st_.reduced_action_derivatives(D, P, spec, version=version, noise=noise)
    interior = (D > 0) & (D < 20.0)
    # interior minima: F' = 0 (to brentq precision, relative to the curvature) and F'' >= 0
    assert (np.abs(F1[interior]) <= 1e-8 * (1 + np.abs(F2[interior]) * (1 + D[interior]))).all()
    assert (F2[interior] >= -1e-8 * (1 + np.abs(F0[interior]))).all()


@covers(st_.spinodals, st_.first_order_point, st_.Spinodals, st_.FirstOrderPoint)
@budget(4)
@given(L=st.integers(32, 48), V=st.integers(2, 5), version=st.sampled_from(["mean_field", "map", "energy"]))
def test_first_order_point_valid(L, V, version):
    # L >= 32 has a first-order jump for these versions and V (module docstring: first L with a
    # jump <= 24 at V = 4). n_scan = 200 steps by 8 % in P: finer than the coexistence window
    # (323.7 to 380.7 at L = 32, V = 4; 80 steps of 22 % can miss it)
    spec = cl.ModelSpec(L=L, V=V)
    r = st_.first_order_point(spec, version, n_scan=200, n_grid=801)
    sp = r.spinodals
    assert isinstance(r, st_.FirstOrderPoint) and isinstance(sp, st_.Spinodals)
    assert 0 < sp.P_lower < r.P3 < sp.P_upper < math.inf
    assert r.Delta[0] < r.Delta[1] and r.copy_weight[0] < r.copy_weight[1]
    for x in (r.action, *r.Delta, *r.copy_weight, *r.loss, sp.Delta_lower, sp.Delta_upper):
        assert math.isfinite(x)
    assert r.jump["copy_weight"] > 0
    # the two branches have equal action at P3
    F = st_.reduced_action(np.array(r.Delta), r.P3, spec, version=version)
    assert F[0] == pytest.approx(F[1], rel=1e-9, abs=1e-9)


@covers(st_.order_parameter_curve, st_.OrderParameterCurve)
@budget(10)
@given(spec=softmax_specs, version=versions, P=st.lists(log_uniform(1e-1, 1e5), min_size=1, max_size=4), seed=seeds)
def test_order_parameter_curve_valid(spec, version, P, seed):
    noise = _noise(spec, version, seed)
    c = st_.order_parameter_curve(P, spec, version, noise=noise, n_grid=201)
    for name in ("P", "Delta", "copy_weight", "loss", "action", "n_minima"):
        assert getattr(c, name).shape == (len(P),), name
    for name in ("Delta", "copy_weight", "loss", "action"):
        assert_finite(getattr(c, name), name)
    assert (c.n_minima >= 1).all()


@covers(st_.leading_order_gap, st_.p3_leading_order)
@budget(30)
@given(L=st.integers(2, 10**7), V=st.integers(2, 50), with_spec=st.booleans())
def test_leading_order_nan_only_without_root(L, V, with_spec):
    """Documented NaN: no root of D = (1/2) ln[(L-1)(D-1)] for L < 2 e^3 + 1 = 41.17; finite otherwise."""
    spec = cl.ModelSpec(L=min(L, 64), V=V, sigma_G=0.5, sigma0_sq=2.0) if with_spec else None
    D = st_.leading_order_gap(L)
    P3 = st_.p3_leading_order(L, V, spec)
    has_root = L >= 2 * math.e**3 + 1
    assert math.isnan(D) == (not has_root) and math.isnan(P3) == (not has_root)
    if has_root:
        assert D > 1.5 and D == pytest.approx(0.5 * math.log((L - 1) * (D - 1)), rel=1e-12)
        assert 0 < P3 < math.inf


@covers(st_.transverse_average, st_.TransverseAverage)
@budget(10)
@given(spec=specs("softmax", L=st.integers(2, 8), V=st.integers(2, 4)), Delta=st.floats(-5, 10),
       P=log_uniform(1e-1, 1e4), std=st.one_of(st.none(), st.floats(0, 3)), seed=seeds)
def test_transverse_average_valid(spec, Delta, P, std, seed):
    r = st_.transverse_average(Delta, P, spec, np.random.default_rng(seed), n_samples=16, std=std)
    assert isinstance(r, st_.TransverseAverage)
    for name in ("mean_field", "mean", "free_energy", "variance", "copy_weight", "alpha_1"):
        assert isinstance(getattr(r, name), float) and math.isfinite(getattr(r, name)), name
    assert r.variance >= 0 and 0 < r.copy_weight < 1
    # Jensen: -ln E e^{-S} <= E S (up to the rounding of the log-sum-exp)
    assert r.free_energy <= r.mean + 1e-9 * (1 + abs(r.mean))


# --------------------------------------------------------------------------
# softmax_experiments
# --------------------------------------------------------------------------


@covers(sx.planted_logits, sx.planted_init)
@budget(15)
@given(spec=specs("softmax", L=st.integers(2, 8), V=st.integers(2, 4)), R=st.integers(1, 3),
       Delta=st.floats(-20, 20), per_run=st.booleans(), seed=seeds)
def test_planted_valid(spec, R, Delta, per_run, seed):
    g = sx.planted_logits(np.full(R, Delta), spec.L)
    assert g.shape == (R, spec.L, spec.L) and g.dtype == np.float64
    # row-softmax of the planted logits is the copy attention with that gap
    from copylib.posterior.order_parameters import copy_attention

    np.testing.assert_allclose(cl.attention(g, "softmax"), copy_attention(np.full(R, Delta), spec.L), atol=1e-12)
    C = np.stack([cooccurrence_of(3, spec, seed + r) for r in range(R)])
    init = sx.planted_init(np.full(R, Delta) if per_run else Delta, C, spec)
    assert set(init) == {"g", "b", "W"}
    assert init["g"].shape == (R, spec.L, spec.L) and init["b"].shape == (R,) and init["W"].shape == (R, spec.V, spec.V)
    for v in init.values():
        assert_finite(v)


@covers(sx.interpolate_crossing)
@budget(40)
@given(data=st.data(), n=st.integers(2, 12))
def test_interpolate_crossing_nan_only_without_crossing(data, n):
    x = np.cumsum(data.draw(st.lists(st.floats(1e-3, 10), min_size=n, max_size=n)))
    y = np.asarray(data.draw(st.lists(st.floats(-1e6, 1e6), min_size=n, max_size=n)))
    out = sx.interpolate_crossing(x, y)
    assert isinstance(out, float)
    crossing = (np.sign(y[:-1]) * np.sign(y[1:]) < 0).any() or (y == 0).any()
    # documented: NaN exactly when y has no sign change and no zero; otherwise inside [x0, x_end]
    assert math.isnan(out) == (not crossing)
    if crossing:
        assert x[0] <= out <= x[-1]


@covers(sx.state_fraction)
@budget(20)
@given(R=st.integers(1, 4), n=st.integers(1, 10), threshold=st.floats(-2, 2), seed=seeds)
def test_state_fraction_valid(R, n, threshold, seed):
    x = np.random.default_rng(seed).normal(size=(R, n))
    f = sx.state_fraction(x, threshold)
    assert f.shape == (R,) and ((f >= 0) & (f <= 1)).all()
    np.testing.assert_array_equal(f, (x > threshold).sum(1) / n)


# --------------------------------------------------------------------------
# invalid input
# --------------------------------------------------------------------------

_SPEC = cl.ModelSpec(L=4, V=3)
_NOISE = st_.row_noise(_SPEC, np.random.default_rng(0), n_draws=8)


def _call(which, name, data):
    """Valid arguments of ``which`` with ``name`` replaced by an invalid value drawn from ``data``."""
    arrays = {"Delta": np.array([0.0, 1.0]), "P": np.array([10.0, 20.0]), "A": np.full((4, 4), 0.25),
              "P_grid": np.array([1.0, 10.0])}
    calls = {
        "reduced_action": (["Delta", "P"], {"version": "mean_field", "noise": None}),
        "reduced_action_derivatives": (["Delta", "P"], {"version": "fluct", "noise": _NOISE}),
        "copy_weight_of_gap": (["Delta"], {"version": "mean_field", "noise": None}),
        "state_loss": (["Delta", "P"], {"version": "mean_field", "noise": None}),
        "plugin_readout": (["A", "P"], {}),
        "action_minima": ([], {"P": 10.0, "version": "mean_field", "noise": None, "Delta_max": 5.0, "n_grid": 21}),
        "spinodals": ([], {"version": "mean_field", "noise": None, "P_range": (1.0, 10.0), "n_scan": 5,
                           "Delta_max": 5.0, "n_grid": 21}),
        "first_order_point": ([], {"version": "mean_field", "noise": None, "P_range": (1.0, 10.0), "n_scan": 5,
                                   "Delta_max": 5.0, "n_grid": 21}),
        "order_parameter_curve": (["P_grid"], {"version": "mean_field", "noise": None, "Delta_max": 5.0, "n_grid": 21}),
        "row_noise": ([], {"rng": np.random.default_rng(0), "n_draws": 8, "std": None}),
        "transverse_average": ([], {"Delta": 1.0, "P": 10.0, "rng": np.random.default_rng(0), "n_samples": 4,
                                    "std": None}),
    }
    arr_names, extra = calls[which]
    args = {n: arrays[n].copy() for n in arr_names}
    args.update(extra)
    args["spec"] = _SPEC
    if which == "row_noise":
        args["rng"] = np.random.default_rng(0)
    if name not in args:
        return None
    if name == "spec":
        args[name] = data.draw(st.one_of(bad_spec(), st.just(cl.ModelSpec(L=4, V=3, kind="linear"))))
    elif name == "version":
        args[name] = data.draw(st.sampled_from(["Bayes", "bayes", None, 2]))
    elif name == "noise":
        # fluct needs a RowNoise of the spec's L; the other versions take none
        if args.get("version") == "fluct":
            args[name] = data.draw(st.sampled_from([None, "noise", st_.row_noise(cl.ModelSpec(L=5, V=3),
                                                                                   np.random.default_rng(0), n_draws=4)]))
        else:
            args[name] = _NOISE
    elif name in ("n_grid", "n_scan", "n_draws", "n_samples"):
        minimum = {"n_grid": 11, "n_scan": 3, "n_draws": 1, "n_samples": 2}[name]
        args[name] = data.draw(st.one_of(bad_ints(minimum), st.just(6) if name == "n_draws" else bad_ints(minimum)))
    elif name in ("Delta_max",):
        args[name] = data.draw(bad_positive())
    elif name == "std":
        args[name] = data.draw(st.sampled_from([-1.0, math.nan, math.inf, "1", True]))
    elif name == "rng":
        args[name] = data.draw(st.sampled_from([None, 0, torch.Generator()]))
    elif name == "P_range":
        args[name] = data.draw(st.sampled_from([(10.0, 1.0), (0.0, 5.0), (1.0, math.inf), 5.0, "ab", (1.0,)]))
    elif name == "P" and which in ("action_minima", "transverse_average"):
        args[name] = data.draw(st.sampled_from([0.0, -1.0, math.nan, math.inf, True, None, "10"]))
    elif name == "Delta" and which == "transverse_average":
        args[name] = data.draw(st.sampled_from([math.nan, np.zeros(2), None, "x"]))
    else:
        case = data.draw(st.sampled_from(["nonfinite", "kind", "range"]))
        value = args[name]
        if case == "range" and name in ("P", "P_grid"):
            value = np.array([1.0, 0.0])
        elif case == "range" and name == "A":
            value = np.full((3, 3), 1 / 3)
        elif case == "kind":
            value = data.draw(not_array())
        else:
            value = with_nonfinite(value, data)
        args[name] = value
    return args


_FUNCTIONS = ["reduced_action", "reduced_action_derivatives", "copy_weight_of_gap", "state_loss", "plugin_readout",
              "action_minima", "spinodals", "first_order_point", "order_parameter_curve", "row_noise",
              "transverse_average"]
_PARAMS = ["Delta", "P", "A", "P_grid", "spec", "version", "noise", "n_grid", "n_scan", "n_draws", "n_samples",
           "Delta_max", "std", "rng", "P_range"]


@covers(*(getattr(st_, f) for f in _FUNCTIONS))
@budget(200)
@given(data=st.data())
def test_softmax_theory_invalid(data):
    which = data.draw(st.sampled_from(_FUNCTIONS))
    name = data.draw(st.sampled_from(_PARAMS))
    args = _call(which, name, data)
    if args is None:
        return
    with raises_naming(name):
        getattr(st_, which)(**args)


@covers(st_.RowNoise)
@budget(20)
@given(data=st.data())
def test_row_noise_class_invalid(data):
    args = {"shift": np.zeros(3), "rho": np.full(3, 0.5), "std": 1.0, "L": 4}
    name = data.draw(st.sampled_from(sorted(args)))
    if name == "L":
        args[name] = data.draw(bad_ints(2))
    elif name == "std":
        args[name] = data.draw(st.sampled_from([-1.0, math.nan, "1", None]))
    elif name == "rho":
        args[name] = data.draw(st.sampled_from([np.zeros(3), np.full(3, 1.5), np.full(2, 0.5), np.full(3, math.nan)]))
    else:
        args[name] = data.draw(st.sampled_from([np.zeros(2), np.zeros(0), np.full(3, math.inf)]))
    with raises_naming(name if name in ("L", "std") else f"RowNoise.{name}"):
        st_.RowNoise(**args)


@covers(st_.leading_order_gap, st_.p3_leading_order)
@budget(20)
@given(data=st.data())
def test_leading_order_invalid(data):
    which = data.draw(st.sampled_from(["leading_order_gap", "p3_leading_order"]))
    args = {"L": 64} if which == "leading_order_gap" else {"L": 64, "V": 4, "spec": None}
    name = data.draw(st.sampled_from(sorted(args)))
    args[name] = data.draw(bad_spec().filter(lambda v: v is not None) if name == "spec" else bad_ints(2))
    with raises_naming(name):
        getattr(st_, which)(**args)


@covers(sx.planted_logits, sx.planted_init, sx.interpolate_crossing, sx.state_fraction)
@budget(60)
@given(data=st.data())
def test_softmax_experiments_invalid(data):
    spec = cl.ModelSpec(L=3, V=2)
    C = np.stack([cooccurrence_of(2, spec, 0)] * 2)
    which = data.draw(st.sampled_from(["planted_logits", "planted_init", "interpolate_crossing", "state_fraction"]))
    args = {
        "planted_logits": {"Delta": np.zeros(2), "L": 3},
        "planted_init": {"Delta": np.zeros(2), "C": C, "spec": spec},
        "interpolate_crossing": {"x": np.arange(3.0), "y": np.array([-1.0, 0.5, 1.0])},
        "state_fraction": {"x": np.zeros((2, 3)), "threshold": 0.5},
    }[which]
    name = data.draw(st.sampled_from(sorted(args)))
    if name == "L":
        args[name] = data.draw(bad_ints(2))
    elif name == "spec":
        args[name] = data.draw(bad_spec())
    else:
        case = data.draw(st.sampled_from(["nonfinite", "kind", "shape"]))
        if case == "shape":
            args[name] = {"Delta": np.zeros(3), "C": C[:, :2], "x": np.arange(2.0)[::-1] if which != "state_fraction"
                          else np.zeros(3), "y": np.zeros(4), "threshold": np.zeros(2)}[name]
            if name == "Delta" and which == "planted_logits":
                return  # any shape of Delta is valid there
        elif case == "nonfinite":
            args[name] = with_nonfinite(np.asarray(args[name], dtype=float), data)
        else:
            args[name] = data.draw(not_array())
    with raises_naming(name):
        getattr(sx, which)(**args)


# --------------------------------------------------------------------------
# extreme but valid input
# --------------------------------------------------------------------------


@covers(st_.reduced_action, st_.reduced_action_derivatives, st_.state_loss, st_.copy_weight_of_gap,
        st_.plugin_readout, st_.row_noise)
@budget(40)
@given(spec=extreme_specs("softmax"), version=versions, P=log_uniform(1e-3, 1e6),
       Delta=st.lists(st.floats(-50, 50), min_size=1, max_size=3), seed=seeds)
def test_softmax_action_extreme_scales(spec, version, P, Delta, seed):
    noise = _noise(spec, version, seed, n_draws=16)
    D = np.asarray(Delta)
    for out in (st_.reduced_action(D, P, spec, version=version, noise=noise),
                *st_.reduced_action_derivatives(D, P, spec, version=version, noise=noise),
                st_.state_loss(D, P, spec, version=version, noise=noise),
                st_.copy_weight_of_gap(D, spec, version=version, noise=noise)):
        assert out.shape == D.shape
        assert_finite(out)
    from copylib.posterior.order_parameters import copy_attention

    assert_finite(st_.plugin_readout(copy_attention(D, spec.L), P, spec))


@covers(st_.action_minima)
@budget(20)
@given(spec=extreme_specs("softmax"), version=versions, P=log_uniform(1e-3, 1e6), seed=seeds)
def test_softmax_minima_extreme_scales(spec, version, P, seed):
    noise = _noise(spec, version, seed, n_draws=16)
    D, F = st_.action_minima(P, spec, version, noise=noise, n_grid=201)
    assert D.size >= 1
    assert_finite(D)
    assert_finite(F)
    # the global minimum is not above F on the grid it was found from (rounding of |F|)
    grid = np.linspace(0, 20.0, 201)
    Fg = st_.reduced_action(grid, P, spec, version=version, noise=noise)
    assert F.min() <= Fg.min() + 1e-9 * (1 + abs(Fg.min()))


@covers(st_.first_order_point)
@budget(8)
@given(scale=st.sampled_from(["sigma0_sq", "sigma_G"]), exponent=st.integers(-8, 8))
def test_first_order_point_follows_its_scale(scale, exponent):
    """P3 of the energy action scales like sigma0_sq / sigma_G^2 exactly; the default scan range
    must follow it (it used to be empty, (1, 0.06), at sigma0_sq = 1e-8)."""
    value = 10.0**exponent if scale == "sigma0_sq" else 10.0 ** (exponent / 2)
    spec = cl.ModelSpec(L=32, V=4, **{scale: value})
    ref = st_.first_order_point(cl.ModelSpec(L=32, V=4), "energy", n_scan=200, n_grid=801).P3
    P3 = st_.first_order_point(spec, "energy", n_scan=200, n_grid=801).P3
    x = spec.sigma0_sq / spec.sigma_G**2
    # brentq to 1e-13, spinodal brackets differ with the scan: agreement to ~1e-9
    assert P3 == pytest.approx(ref * x, rel=1e-9)


# --------------------------------------------------------------------------
# copylib.theory.softmax_marginal and softmax_experiments.basin_mean
# --------------------------------------------------------------------------

from copylib.theory import softmax_marginal as se  # noqa: E402

exact_specs = specs("softmax", L=st.integers(3, 8), V=st.integers(2, 5), scales=log_uniform(0.5, 2.0),
                    cyclic=st.just(True))


def _small_cumulants(spec, seed, n1=5, n2=7, n_draws=32):
    """Cheap cumulants: a few tilts around 0, a t grid wide enough for the prior of t."""
    s = spec.sigma_G
    return se.row_cumulants(spec, np.random.default_rng(seed), n_draws=n_draws,
                            lam1=np.linspace(-12.0, 4.0, n1), lam2=np.linspace(-6.0, 12.0, n2),
                            t_step=s / 4, t_range=(-12 * s - 2 * math.log(spec.L) - 4, 10 * s + 4))


@covers(se.row_cumulants, se.RowCumulants)
@budget(15)
@given(spec=exact_specs, seed=seeds, n_pow=st.integers(4, 6))
def test_row_cumulants_valid(spec, seed, n_pow):
    cum = _small_cumulants(spec, seed, n_draws=2**n_pow)
    assert isinstance(cum, se.RowCumulants) and cum.L == spec.L and cum.n_draws == 2**n_pow
    assert cum.phi.shape == cum.correction.shape == cum.t_edge.shape == (5, 7)
    assert cum.mean.shape == (5, 7, 2) and cum.cov.shape == (5, 7, 2, 2)
    for x in (cum.phi, cum.mean, cum.cov, cum.log_prior_density(), cum.log_prior_density(True)):
        assert_finite(x)
    # u = |a|^2 in [1/L, 1], v = a[l-1] in [0, 1]; the tilted covariance is positive definite
    Eu, Ev = cum.mean[..., 0], cum.mean[..., 1]
    assert (Eu >= 1 / spec.L - 1e-12).all() and (Eu <= 1 + 1e-12).all()
    assert (Ev >= 0).all() and (Ev <= 1).all()
    assert (np.linalg.det(cum.cov) > 0).all() and (cum.cov[..., 1, 1] > 0).all()
    np.testing.assert_allclose(cum.cov[..., 0, 1], cum.cov[..., 1, 0])
    # phi(0, 0) = ln E[1] = 0 (the t quadrature holds the prior density to 1e-6)
    assert cum.lam1[3] == 0 and cum.lam2[2] == 0 and abs(cum.phi[3, 2]) < 1e-5


def _reachable_c(cum, n=40):
    """A c grid that every line of the tilt grid spans (the intersection of their ranges)."""
    v = cum.mean[..., 1]
    lo, hi = v.min(axis=1).max(), v.max(axis=1).min()
    return np.linspace(lo + 0.05 * (hi - lo), hi - 0.05 * (hi - lo), n)


@covers(se.copy_weight_marginal, se.CopyWeightMarginal, se.marginal_branches, se.MarginalBranches)
@budget(15)
@given(spec=exact_specs, seed=seeds, P=st.one_of(st.none(), log_uniform(1e-2, 1e4)), correction=st.booleans())
def test_copy_weight_marginal_valid(spec, seed, P, correction):
    cum = _small_cumulants(spec, seed)
    c = _reachable_c(cum)
    m = se.copy_weight_marginal(P, spec, cum, c_grid=c, correction=correction, check_coverage=False)
    assert isinstance(m, se.CopyWeightMarginal) and m.log_density.shape == m.alpha_1.shape == c.shape
    assert_finite(m.log_density)
    assert_finite(m.alpha_1)
    assert np.trapezoid(np.exp(m.log_density), c) == pytest.approx(1.0, abs=1e-9)
    # alpha_1 = sum_l |a_l|^2 lies in [1, L] for row-stochastic attention
    assert (m.alpha_1 >= 1 - 1e-9).all() and (m.alpha_1 <= spec.L + 1e-9).all()
    assert m.edge <= 0 and m.potential.min() == 0
    assert c[0] - 1e-12 <= m.mean() <= c[-1] + 1e-12
    # a variance on the grid's range: non-negative and at most (range / 2)^2 (Popoviciu)
    assert 0 <= m.var() <= (c[-1] - c[0]) ** 2 / 4 + 1e-12
    assert np.isnan(m.loss).all() if P is None else np.isfinite(m.loss).all()
    assert m.mass() == pytest.approx(1.0, abs=1e-9)
    b = se.marginal_branches(m)
    assert isinstance(b, se.MarginalBranches) and (np.diff(b.minima) > 0).all()
    if b.n_minima >= 2:
        assert b.minima[0] < b.barrier < b.minima[-1] and min(b.barrier_height) >= 0
        assert sum(math.exp(-f) for f in b.free_energy) == pytest.approx(1.0, abs=1e-9)
    else:
        assert math.isnan(b.barrier) and all(math.isnan(f) for f in b.free_energy)


@covers(se.marginal_branches, se.MarginalBranches, se.CopyWeightMarginal)
@budget(30)
@given(tilt=st.floats(-3, 3), barrier=st.floats(0.05, 20), c1=st.floats(0.03, 0.2), gap=st.floats(0.05, 0.4))
def test_marginal_branches_of_double_wells(tilt, barrier, c1, gap):
    c = np.linspace(0.01, 0.9, 3000)
    c2 = c1 + gap
    U = barrier * ((c - c1) * (c - c2) / (gap / 2) ** 2) ** 2 + tilt * (c - c1) / gap
    logd = -U - math.log(np.trapezoid(np.exp(-U), c))
    m = se.CopyWeightMarginal(P=10.0, c=c, log_density=logd, alpha_1=c, loss=c, edge=-30.0)
    b = se.marginal_branches(m)
    if b.n_minima >= 2:
        assert c1 - 0.02 < b.minima[0] < b.barrier < b.minima[-1] < c2 + 0.02
        p_pool, p_copy = (math.exp(-f) for f in b.free_energy)
        assert p_pool + p_copy == pytest.approx(1.0, abs=1e-9)
        # the basin means lie in their basins; alpha_1 = loss = c here
        assert b.copy_weight[0] < b.barrier <= b.copy_weight[1]
        assert b.alpha_1 == pytest.approx(b.copy_weight) and b.loss == pytest.approx(b.copy_weight)
    # a strong tilt (|tilt| > 8 barrier, roughly) removes one minimum; a weak one never does
    if abs(tilt) < barrier:
        assert b.n_minima == 2


@covers(se.marginal_transition, se.MarginalTransition)
@budget(8)
@given(spec=exact_specs, seed=seeds)
def test_exact_transition_valid_or_documented_error(spec, seed):
    cum = _small_cumulants(spec, seed)
    try:
        tr = se.marginal_transition(spec, cum, P_range=(1.0, 1e4), n_scan=9, xtol=1.0)
    except ValueError as err:  # documented: no coexistence / no crossing / grid too small
        assert any(w in str(err) for w in ("two minima", "P_range", "cross", "tilt grid", "c_grid", "t grid"))
        return
    assert isinstance(tr, se.MarginalTransition) and tr.P_lower <= tr.P3 <= tr.P_upper


@covers(se.default_tilts, se.default_c_grid)
@budget(30)
@given(L=st.integers(3, 400))
def test_default_grids_valid(L):
    l1, l2 = se.default_tilts(L)
    assert (np.diff(l1) > 0).all() and (np.diff(l2) > 0).all() and l1[0] < 0 < l1[-1] and l2[0] < 0 < l2[-1]
    c = se.default_c_grid(L)
    # increasing in (0, 1), starting below the prior mean 1/L and resolving it (step <= c_lo / 20)
    assert (np.diff(c) > 0).all() and 0 < c[0] < 1 / L and c[-1] < 1
    assert np.diff(c).max() <= c[0] / 20 * (1 + 1e-9)


@covers(se.marginal_scan, se.MarginalScan)
@budget(20)
@given(spec=exact_specs, seed=seeds, Ps=st.lists(log_uniform(1e-2, 1e4), min_size=1, max_size=5),
       split=st.booleans())
def test_marginal_scan_valid(spec, seed, Ps, split):
    cum = _small_cumulants(spec, seed)
    c = _reachable_c(cum)
    c_split = float(c[len(c) // 2]) if split else None
    s = se.marginal_scan(Ps, spec, cum, c_grid=c, check_coverage=False, c_split=c_split)
    assert isinstance(s, se.MarginalScan) and s.P.shape == s.mean.shape == s.n_minima.shape == (len(Ps),)
    assert s.barrier_height.shape == (len(Ps), 2)
    assert ((s.mean >= c[0] - 1e-12) & (s.mean <= c[-1] + 1e-12)).all()
    assert (s.var >= 0).all() and (s.var <= (c[-1] - c[0]) ** 2 / 4 + 1e-12).all()
    assert (s.depth >= 0).all() and (s.depth == s.barrier_height.min(1)).all()
    two = s.n_minima >= 2
    assert (s.shoulder[two] < 0).all()  # a second minimum needs a slope pointing the wrong way
    assert np.isfinite(s.barrier[two]).all() and np.isnan(s.barrier[~two]).all()
    assert (~np.isnan(s.delta_F)).all() if split else np.isnan(s.delta_F[~two]).all()
    # the same numbers as the one-P marginal
    m = se.copy_weight_marginal(float(Ps[0]), spec, cum, c_grid=c, check_coverage=False)
    assert s.mean[0] == pytest.approx(m.mean(), rel=1e-9, abs=1e-12)
    assert s.n_minima[0] == se.marginal_branches(m).n_minima


@covers(se.finite_size_row, se.FiniteSizeRow)
@budget(8)
@given(spec=exact_specs, seed=seeds)
def test_finite_size_row_valid_or_documented_error(spec, seed):
    cum = _small_cumulants(spec, seed)
    try:
        row = se.finite_size_row(spec, cum, P_range=(1.0, 1e4), n_coarse=11, rel_step=0.05)
    except ValueError as err:  # documented: the peak or the window at the end of P_range, coverage
        assert any(w in str(err) for w in ("P_range", "tilt grid", "c_grid", "t grid")), str(err)
        return
    assert isinstance(row, se.FiniteSizeRow) and row.L == spec.L and row.V == spec.V
    assert row.scanned[0] <= row.P_peak <= row.scanned[1] or row.two_minima
    if row.two_minima:
        assert row.P_lower <= row.P_upper and row.max_depth > 0 and row.shoulder < 0
        if math.isfinite(row.P3):
            assert row.P_lower <= row.P3 <= row.P_upper and row.window >= 0
    else:
        assert math.isnan(row.P3) and row.max_depth == 0 and math.isnan(row.window)


@covers(sx.basin_mean)
@budget(30)
@given(R=st.integers(2, 5), n=st.integers(1, 12), lo=st.floats(-1, 0.5), width=st.floats(0.01, 2), seed=seeds)
def test_basin_mean_valid(R, n, lo, width, seed):
    rng = np.random.default_rng(seed)
    c = rng.uniform(-1, 1.5, size=(R, n))
    x = rng.normal(size=(R, n))
    hi = lo + width
    inside = (c >= lo) & (c < hi)
    if not inside.any():
        with pytest.raises(ValueError, match="no draw"):
            sx.basin_mean(x, c, lo, hi)
        return
    mean, err = sx.basin_mean(x, c, lo, hi)
    assert mean == pytest.approx(x[inside].mean())
    assert math.isnan(err) == ((inside.sum(1) > 0).sum() < 2)
    assert math.isnan(err) or err >= 0


@covers(sx.basin_mean)
@budget(30)
@given(G=st.integers(2, 4), per=st.integers(1, 3), n=st.integers(1, 8), seed=seeds)
def test_basin_mean_grouped_valid(G, per, n, seed):
    rng = np.random.default_rng(seed)
    groups = np.repeat(rng.permutation(G) * 7, per)  # arbitrary integer labels
    c = rng.uniform(0, 1, size=(G * per, n))
    x = rng.normal(size=c.shape)
    mean, err, loo = sx.basin_mean(x, c, groups=groups, return_replicates=True)
    assert mean == pytest.approx(x.mean()) and loo.shape == (G,) and np.isfinite(loo).all()
    assert err >= 0 and min(loo) - 1e-12 <= mean <= max(loo) + 1e-12
    bad = groups.astype(float)
    with raises_naming("groups"):
        sx.basin_mean(x, c, groups=bad)
    with raises_naming("groups"):
        sx.basin_mean(x, c, groups=groups[:-1])


_SMALL_EXACT = cl.ModelSpec(L=4, V=3, kind="softmax")
_CUM = se.row_cumulants(_SMALL_EXACT, np.random.default_rng(0), n_draws=16, lam1=np.linspace(-12.0, 4.0, 5),
                        lam2=np.linspace(-6.0, 12.0, 7), t_step=0.25, t_range=(-20.0, 14.0))
_C = _reachable_c(_CUM, 20)
_MARG = se.copy_weight_marginal(5.0, _SMALL_EXACT, _CUM, c_grid=_C, check_coverage=False)


def _exact_call(which, name, data):
    calls = {
        "row_cumulants": {"spec": _SMALL_EXACT, "rng": np.random.default_rng(0), "n_draws": 16,
                          "lam1": np.linspace(-12.0, 4.0, 5), "lam2": np.linspace(-6.0, 12.0, 7),
                          "t_step": 0.25, "t_range": (-20.0, 14.0)},
        "copy_weight_marginal": {"P": 5.0, "spec": _SMALL_EXACT, "cumulants": _CUM, "c_grid": _C,
                                 "correction": False, "check_coverage": False},
        "marginal_branches": {"marginal": _MARG, "tol": 1e-6, "max_nats": 30.0},
        "marginal_transition": {"spec": _SMALL_EXACT, "cumulants": _CUM, "P_range": (1.0, 10.0), "n_scan": 5,
                             "xtol": 1.0, "correction": False},
        "marginal_scan": {"P_values": [5.0, 6.0], "spec": _SMALL_EXACT, "cumulants": _CUM, "c_grid": _C,
                          "correction": False, "check_coverage": False, "tol": 1e-6, "max_nats": 30.0},
        "finite_size_row": {"spec": _SMALL_EXACT, "cumulants": _CUM, "P_range": (1.0, 10.0), "n_coarse": 11,
                            "rel_step": 0.05, "xtol": 1.0, "correction": False},
        "default_tilts": {"L": 8},
        "default_c_grid": {"L": 8},
    }
    args = dict(calls[which])
    if name not in args:
        return None
    if name == "spec":
        wrong = [cl.ModelSpec(L=4, V=3, kind="linear"), cl.ModelSpec(L=4, V=3, kind="softmax", cyclic=False)]
        if which == "row_cumulants":
            wrong.append(cl.ModelSpec(L=2, V=3, kind="softmax"))  # L >= 3 needed
        args[name] = data.draw(st.one_of(bad_spec(), st.sampled_from(wrong)))
    elif name == "rng":
        args[name] = data.draw(st.sampled_from([None, 0, torch.Generator()]))
    elif name == "n_draws":
        args[name] = data.draw(st.one_of(bad_ints(16), st.sampled_from([24, 100])))
    elif name == "n_scan":
        args[name] = data.draw(bad_ints(5))
    elif name == "n_coarse":
        args[name] = data.draw(bad_ints(11))
    elif name == "L":
        args[name] = data.draw(bad_ints(3))
    elif name == "rel_step":
        args[name] = data.draw(st.one_of(bad_positive(), st.sampled_from([0.2, 5.0])))
    elif name == "P_values":
        args[name] = data.draw(st.sampled_from([[], [0.0], [-1.0, 2.0], [math.nan], [math.inf], "x", [[1.0]]]))
    elif name in ("lam1", "lam2", "c_grid"):
        good = args[name]
        args[name] = data.draw(st.sampled_from([good[::-1], good[:2], np.zeros(len(good)), "x"])
                               | st.just(with_nonfinite(good, data)))
        if name == "c_grid" and data.draw(st.booleans()):
            args[name] = np.linspace(0.5, 1.5, 10)
    elif name in ("t_step", "xtol", "max_nats"):
        args[name] = data.draw(bad_positive())
        if args[name] is None and which == "finite_size_row":
            args[name] = -1.0  # None is finite_size_row's documented default
    elif name == "tol":
        args[name] = data.draw(st.sampled_from([-1.0, math.nan, math.inf, "1", None]))
    elif name in ("t_range", "P_range"):
        args[name] = data.draw(st.sampled_from([(10.0, 1.0), (1.0, math.inf), 5.0, "ab", (1.0,)]
                                               + ([(0.0, 5.0)] if name == "P_range" else [])))
    elif name in ("correction", "check_coverage"):
        args[name] = data.draw(not_bool())
    elif name == "P":
        args[name] = data.draw(st.sampled_from([0.0, -1.0, math.nan, math.inf, True, "10", np.ones(2)]))
    elif name == "cumulants":
        args[name] = data.draw(st.sampled_from([None, "cum", se.row_cumulants(
            cl.ModelSpec(L=5, V=3, kind="softmax"), np.random.default_rng(0), n_draws=16,
            lam1=np.linspace(-12.0, 4.0, 5), lam2=np.linspace(-6.0, 12.0, 7), t_step=0.25, t_range=(-20.0, 14.0))]))
    elif name == "marginal":
        args[name] = data.draw(st.sampled_from([None, "m", _CUM]))
    return args


_EXACT = ["row_cumulants", "copy_weight_marginal", "marginal_branches", "marginal_transition", "marginal_scan",
          "finite_size_row", "default_tilts", "default_c_grid"]
_EXACT_PARAMS = ["spec", "rng", "n_draws", "lam1", "lam2", "t_step", "t_range", "P", "cumulants", "c_grid",
                 "correction", "check_coverage", "marginal", "tol", "max_nats", "P_range", "n_scan", "xtol",
                 "P_values", "n_coarse", "rel_step", "L"]


@covers(*(getattr(se, f) for f in _EXACT))
@budget(150)
@given(data=st.data())
def test_softmax_exact_invalid(data):
    which = data.draw(st.sampled_from(_EXACT))
    name = data.draw(st.sampled_from(_EXACT_PARAMS))
    args = _exact_call(which, name, data)
    if args is None:
        return
    with raises_naming(name):
        getattr(se, which)(**args)


@covers(sx.basin_mean)
@budget(40)
@given(data=st.data())
def test_basin_mean_invalid(data):
    args = {"x": np.zeros((2, 3)), "c": np.full((2, 3), 0.5), "lo": 0.0, "hi": 1.0}
    name = data.draw(st.sampled_from(sorted(args)))
    if name in ("lo", "hi"):
        args[name] = data.draw(st.sampled_from([math.nan, "1", None, True, 5.0 if name == "lo" else -5.0]))
    else:
        case = data.draw(st.sampled_from(["nonfinite", "kind", "shape"]))
        if case == "shape":
            args[name] = data.draw(st.sampled_from([np.zeros((1, 3)), np.zeros((2, 4)), np.zeros(3)]))
        elif case == "nonfinite":
            args[name] = with_nonfinite(args[name], data)
        else:
            args[name] = data.draw(not_array())
    with raises_naming(name):
        sx.basin_mean(**args)


@covers(se.row_cumulants)
@budget(20)
@given(spec=extreme_specs("softmax", L=st.sampled_from([3, 4, 512])), seed=seeds)
def test_row_cumulants_extreme_scales(spec, seed):
    """Finite output, or the documented ValueError naming t_step / t_range (the t grid must resolve
    and hold the logit density: defaults suit sigma_G of order one)."""
    try:
        cum = se.row_cumulants(spec, np.random.default_rng(seed), n_draws=16, lam1=np.linspace(-4.0, 0.0, 5),
                               lam2=np.linspace(-4.0, 4.0, 5))
    except ValueError as err:
        assert re.search(r"(?<![\w.])(t_step|t_range)(?!\w)", str(err)), str(err)
        return
    for x in (cum.phi, cum.mean, cum.cov):
        assert_finite(x)


# --------------------------------------------------------------------------
# helpers of the softmax chapter
# --------------------------------------------------------------------------

CHAPTER = cl.ModelSpec(L=32, V=4, kind="softmax")


@covers(st_.barrier_at_p3, st_.local_minimum_copy_weights, st_.global_minimum_state)
@budget(6)
@given(P=log_uniform(100.0, 2000.0), n_grid=st.integers(3, 5000), version=st.sampled_from(["mean_field", "map"]))
def test_chapter_minima_and_barrier_valid(P, n_grid, version):
    point = _chapter_point(version)
    bar = st_.barrier_at_p3(point, CHAPTER, version, n_grid=n_grid)
    # equal minima at the two ends of the grid: the maximum between them is at least zero, and finite
    assert math.isfinite(bar) and bar >= -1e-8
    c = st_.local_minimum_copy_weights(P, CHAPTER, version)
    assert c.ndim == 1 and 1 <= c.size <= 2 and ((c > 0) & (c < 1)).all() and (np.diff(c) > 0).all()
    c_glob, loss = st_.global_minimum_state(P, CHAPTER, version)
    assert c_glob in c and math.isfinite(loss) and loss > 0
    with raises_naming("n_grid"):
        st_.barrier_at_p3(point, CHAPTER, version, n_grid=2)
    with raises_naming("point"):
        st_.barrier_at_p3(None, CHAPTER, version)


_POINTS = {}


def _chapter_point(version):
    if version not in _POINTS:
        _POINTS[version] = st_.first_order_point(CHAPTER, version)
    return _POINTS[version]


@covers(st_.copy_minimum_depth)
@budget(6)
@given(frac=st.floats(0.001, 0.999), version=st.sampled_from(["mean_field", "map"]))
def test_copy_minimum_depth_inside_the_coexistence_window(frac, version):
    sp = _chapter_point(version).spinodals
    P = sp.P_lower + frac * (sp.P_upper - sp.P_lower)
    B, s = st_.copy_minimum_depth(P, CHAPTER, version)
    D, F = st_.action_minima(P, CHAPTER, version)
    # the top lies between the two minima and above both (1e-12: rounding of F)
    assert 0 < s < D[-1] - D[0] and B > 0 and B + F[-1] >= F[0] - 1e-12
    with raises_naming("n_grid"):
        st_.copy_minimum_depth(P, CHAPTER, version, n_grid=2)
    with pytest.raises(ValueError, match="single minimum"):
        st_.copy_minimum_depth(0.5 * sp.P_lower, CHAPTER, version)


@covers(se.finite_size_cumulants)
@budget(3)
@given(L=st.integers(3, 6), V=st.integers(2, 5), seed=seeds, refine=st.integers(1, 3))
def test_finite_size_cumulants_refine_the_default_grid(L, V, seed, refine):
    spec, cum = se.finite_size_cumulants(L, V, np.random.default_rng(seed), refine=refine, n_draws=16, t_step=0.2)
    assert spec == cl.ModelSpec(L=L, V=V, kind="softmax") and cum.L == L
    for grid, default in zip((cum.lam1, cum.lam2), se.default_tilts(L)):
        # every default tilt is a point of the refined grid (1e-9: linspace rounding)
        assert grid.size == refine * (default.size - 1) + 1
        np.testing.assert_allclose(grid[::refine], default, atol=1e-9)
    assert_finite(cum.phi)
    with raises_naming("refine"):
        se.finite_size_cumulants(L, V, np.random.default_rng(seed), refine=0)
    with raises_naming("L"):
        se.finite_size_cumulants(2, V, np.random.default_rng(seed))


@covers(sx.p3_from_hopping)
@budget(30)
@given(shares=st.lists(st.floats(0, 1), min_size=2, max_size=6), n=st.integers(1, 50))
def test_p3_from_hopping_nan_or_inside_the_range(shares, n):
    P = np.arange(1.0, len(shares) + 1) * 100
    c_by_P = [np.r_[np.ones(round(f * n)), np.zeros(n - round(f * n))] for f in shares]
    out = sx.p3_from_hopping(c_by_P, P, 0.5)
    assert isinstance(out, float)
    assert math.isnan(out) or P[0] <= out <= P[-1]
    with raises_naming("threshold"):
        sx.p3_from_hopping(c_by_P, P, [0.1, 0.2])


@covers(sx.p3_from_shares)
@budget(30)
@given(shares=st.lists(st.floats(0, 1), min_size=2, max_size=6), n=st.integers(1, 50))
def test_p3_from_shares_is_the_hopping_estimate_of_the_same_shares(shares, n):
    P = np.arange(1.0, len(shares) + 1) * 100
    counts = [round(f * n) for f in shares]
    c_by_P = [np.r_[np.ones(k), np.zeros(n - k)] for k in counts]
    out = sx.p3_from_shares(P, [k / n for k in counts])
    assert out == sx.p3_from_hopping(c_by_P, P, 0.5) or (math.isnan(out) and math.isnan(sx.p3_from_hopping(c_by_P, P, 0.5)))
    with raises_naming("shares"):
        sx.p3_from_shares(P, np.r_[shares[:-1], 1.5])
    with raises_naming("shares"):
        sx.p3_from_shares(P, shares[:-1])


@covers(sx.uniform_copy_attention)
@budget(30)
@given(c=st.floats(1e-6, 1 - 1e-6), L=st.integers(2, 64))
def test_uniform_copy_attention_valid(c, L):
    A = sx.uniform_copy_attention(c, L)
    assert A.shape == (L, L)
    np.testing.assert_allclose(A.sum(1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(A[np.arange(L), np.arange(L) - 1], c, rtol=1e-9, atol=1e-12)
    with raises_naming("c_row"):
        sx.uniform_copy_attention(1.0 + c, L)


@covers(sx.sample_two_starts)
@budget(3)
@given(spec=specs("softmax", L=st.integers(2, 5), V=st.integers(2, 3)), n_data=st.integers(1, 2),
       n_steps=st.integers(1, 3), seed=st.integers(0, 1000))
def test_sample_two_starts_valid(spec, n_data, n_steps, seed):
    out, draws = sx.sample_two_starts([20, 40], spec, n_data, n_steps, n_warmup=0, thin=1, seed=seed)
    for c, a1, energy in draws.values():
        assert c.shape == a1.shape == energy.shape == (n_data, 2, n_steps)
        assert ((c >= 0) & (c <= 1)).all() and (a1 >= 1 - 1e-9).all() and (a1 <= spec.L + 1e-9).all()
        assert_finite(energy)
    with raises_naming("n_data"):
        sx.sample_two_starts([20], spec, 0, 1, n_warmup=0, thin=1, seed=seed)


@covers(se.log_odds_branches)
@budget(20)
@given(tilt=st.floats(-3, 3), barrier=st.floats(0.05, 20), c1=st.floats(0.03, 0.2), gap=st.floats(0.05, 0.4))
def test_log_odds_branches_of_double_wells(tilt, barrier, c1, gap):
    c = np.linspace(0.01, 0.9, 3000)
    U = barrier * ((c - c1) * (c - c1 - gap) / (gap / 2) ** 2) ** 2 + tilt * (c - c1) / gap
    logd = -U - math.log(np.trapezoid(np.exp(-U), c))
    b = se.log_odds_branches(se.CopyWeightMarginal(P=10.0, c=c, log_density=logd, alpha_1=c, loss=c, edge=-30.0))
    assert isinstance(b, se.MarginalBranches) and (np.diff(b.minima) > 0).all()
    assert ((b.minima > c[0]) & (b.minima < c[-1])).all()
    with raises_naming("marginal"):
        se.log_odds_branches(c)


@covers(se.half_mass_P)
@budget(4)
@given(spec=exact_specs, seed=seeds, threshold=st.floats(0.05, 0.6))
def test_half_mass_P_splits_the_mass_or_names_the_range(spec, seed, threshold):
    cum = _small_cumulants(spec, seed)
    try:
        P = se.half_mass_P(threshold, spec, cum, P_range=(1.0, 1e4), xtol=1e-3, c_grid=_reachable_c(cum),
                           check_coverage=False)
    except ValueError as err:  # documented: the range does not bracket the crossing
        assert "P_range" in str(err)
        return
    assert 1.0 <= P <= 1e4
    m = se.copy_weight_marginal(P, spec, cum, c_grid=_reachable_c(cum), check_coverage=False)
    assert m.mass(threshold) == pytest.approx(0.5, abs=0.05)
    with raises_naming("threshold"):
        se.half_mass_P(1.5, spec, cum)
