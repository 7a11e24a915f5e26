"""Property tests: copylib.theory.softmax (invalid arguments of every function) and
copylib.analysis.softmax.

Invalid arguments raise ValueError/TypeError naming the parameter; interpolate_crossing returns
NaN only in its documented case (no sign change). The themes of the theory are tested beside
their modules (test_softmax_noise_properties, test_softmax_action_properties,
test_softmax_transition_properties)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import copylib as cl
from copylib.analysis import softmax as sx
from copylib.theory import softmax as st_
from copylib.theory import softmax_action as sa
from copylib.theory import softmax_noise as sn

from props_helpers import (
    assert_finite,
    bad_ints,
    bad_positive,
    bad_spec,
    budget,
    cooccurrence_of,
    covers,
    not_array,
    raises_naming,
    specs,
    with_nonfinite,
)

seeds = st.integers(0, 2**32 - 1)


pytestmark = pytest.mark.usefixtures("one_thread")  # tiny tensors: torch on one thread (tests/conftest.py)


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


_SPEC = cl.ModelSpec(L=4, V=3)
_NOISE = st_.row_noise(_SPEC, np.random.default_rng(0), n_draws=8)


def _call(which, name, data):
    """Valid arguments of ``which`` with ``name`` replaced by an invalid value drawn from ``data``."""
    arrays = {"Delta": np.array([0.0, 1.0]), "P": np.array([10.0, 20.0]), "A": np.full((4, 4), 0.25),
              "P_values": np.array([1.0, 10.0])}
    calls = {
        "reduced_action": (["Delta", "P"], {"version": "mean_field", "noise": None}),
        "reduced_action_derivatives": (["Delta", "P"], {"version": "fluct", "noise": _NOISE}),
        "copy_weight_of_gap": (["Delta"], {"version": "mean_field", "noise": None}),
        "state_loss": (["Delta", "P"], {"version": "mean_field", "noise": None}),
        "_plugin_readout": (["A", "P"], {}),
        "local_minima": ([], {"P": 10.0, "version": "mean_field", "noise": None, "Delta_max": 5.0, "n_grid": 21}),
        "spinodals": ([], {"version": "mean_field", "noise": None, "P_range": (1.0, 10.0), "n_scan": 5,
                           "Delta_max": 5.0, "n_grid": 21}),
        "first_order_point": ([], {"version": "mean_field", "noise": None, "P_range": (1.0, 10.0), "n_scan": 5,
                                   "Delta_max": 5.0, "n_grid": 21}),
        "minimum_curve": (["P_values"], {"version": "mean_field", "noise": None, "Delta_max": 5.0, "n_grid": 21}),
        "row_noise": ([], {"rng": np.random.default_rng(0), "n_draws": 8, "std": None}),
        "_transverse_average": ([], {"Delta": 1.0, "P": 10.0, "rng": np.random.default_rng(0), "n_samples": 4,
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
    elif name == "P" and which in ("local_minima", "_transverse_average"):
        args[name] = data.draw(st.sampled_from([0.0, -1.0, math.nan, math.inf, True, None, "10"]))
    elif name == "Delta" and which == "_transverse_average":
        args[name] = data.draw(st.sampled_from([math.nan, np.zeros(2), None, "x"]))
    else:
        case = data.draw(st.sampled_from(["nonfinite", "kind", "range"]))
        value = args[name]
        if case == "range" and name in ("P", "P_values"):
            value = np.array([1.0, 0.0])
        elif case == "range" and name == "A":
            value = np.full((3, 3), 1 / 3)
        elif case == "kind":
            value = data.draw(not_array())
        else:
            value = with_nonfinite(value, data)
        args[name] = value
    return args


_FUNCTIONS = ["reduced_action", "reduced_action_derivatives", "copy_weight_of_gap", "state_loss", "_plugin_readout",
              "local_minima", "spinodals", "first_order_point", "minimum_curve", "row_noise",
              "_transverse_average"]


def _function(name):
    """A public name of copylib.theory.softmax, or a private one of the theme module that defines it."""
    return getattr(st_, name) if not name.startswith("_") else getattr(sa if name == "_plugin_readout" else sn, name)


_PARAMS = ["Delta", "P", "A", "P_values", "spec", "version", "noise", "n_grid", "n_scan", "n_draws", "n_samples",
           "Delta_max", "std", "rng", "P_range"]


@covers(*(_function(f) for f in _FUNCTIONS))
@budget(200)
@given(data=st.data())
def test_softmax_theory_invalid(data):
    which = data.draw(st.sampled_from(_FUNCTIONS))
    name = data.draw(st.sampled_from(_PARAMS))
    args = _call(which, name, data)
    if args is None:
        return
    with raises_naming(name):
        _function(which)(**args)


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
