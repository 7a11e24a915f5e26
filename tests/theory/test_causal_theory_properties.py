"""Property tests: copylib.theory.causal, copylib.analysis.causal, and the causal options of
copylib.model.network and copylib.analysis.softmax.

Valid random arguments give finite output of the documented shape; invalid ones
raise ValueError/TypeError naming the parameter.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import copylib as cl
from copylib.analysis import causal as ca
from copylib.analysis import softmax as sx
from copylib.theory import causal as ct
from copylib.theory.results import FirstOrderPoint, Minimum

from props_helpers import (
    assert_finite,
    bad_spec,
    budget,
    covers,
    log_uniform,
    nonfinite,
    not_array,
    not_bool,
    raises_naming,
)

seeds = st.integers(0, 2**32 - 1)


def copy_specs(L=st.integers(2, 12), V=st.integers(2, 5)):
    """Softmax specs with a copy family: cyclic, or causal (non-cyclic)."""
    scales = log_uniform(0.3, 3.0)
    return st.one_of(
        st.builds(cl.ModelSpec, L=L, V=V, kind=st.just("softmax"), sigma_G=scales, sigma_b=scales, omega=scales,
                  sigma0_sq=scales, cyclic=st.just(True)),
        st.builds(cl.ModelSpec, L=L, V=V, kind=st.just("softmax"), sigma_G=scales, sigma_b=scales, omega=scales,
                  sigma0_sq=scales, cyclic=st.just(False), causal=st.just(True)),
    )


def _n_rows(spec):
    return spec.L - 1 if spec.causal else spec.L


@covers(ct.row_copy_weights, ct.copy_state_invariants)
@budget(30)
@given(spec=copy_specs(), per_row=st.booleans(), seed=seeds, scale=st.floats(0.0, 20.0))
def test_copy_state_valid(spec, per_row, seed, scale):
    rows = ct._copy_rows(spec)
    n = _n_rows(spec)
    assert rows.competitors.shape == (n,) and rows.n_targets == n and rows.L == spec.L
    assert (rows.stiffness > 0).all() and (rows.stiffness < 1).all()
    rng = np.random.default_rng(seed)
    b = n + 1  # a batch of one-gap states: its length must differ from n_rows, which would read as per-row gaps
    D = rng.uniform(-scale, scale, size=(b, n) if per_row else (b,))
    c = ct.row_copy_weights(D, spec)
    assert c.shape == (b, n) and ((c >= 0) & (c <= 1)).all()
    inv = ct.copy_state_invariants(D, spec)
    for x in inv:
        assert x.shape == (b,)
        assert_finite(x)
    # alpha_1 is a sum of squared row norms of row-stochastic rows: between L/L and L
    assert (inv[0] <= spec.L + 1e-9).all() and (inv[0] > 0).all()


@covers(ct.gap_action, ct.row_gap_action)
@budget(30)
@given(spec=copy_specs(), version=st.sampled_from(ct.VERSIONS), P=log_uniform(1e-2, 1e6), seed=seeds)
def test_actions_valid(spec, version, P, seed):
    rng = np.random.default_rng(seed)
    D = rng.uniform(-5, 25, size=4)
    parts = ct.gap_action(D, P, spec, version=version, order=2)
    for x in parts:
        assert x.shape == (4,)
        assert_finite(x)
    n = _n_rows(spec)
    Dr = rng.uniform(0, 10, size=(2, n))
    F, grad = ct.row_gap_action(Dr, P, spec, version=version)
    assert F.shape == (2,) and grad.shape == (2, n)
    assert_finite(F)
    assert_finite(grad)
    # uniform per-row gaps are the uniform family
    np.testing.assert_allclose(ct.row_gap_action(np.full(n, D[0]), P, spec, version=version)[0], parts[0][0],
                               rtol=1e-10, atol=1e-8 * abs(parts[0][0]))


@covers(ct.local_minima, ct.row_gap_minimum)
@budget(15)
@given(spec=copy_specs(L=st.integers(2, 10)), version=st.sampled_from(ct.VERSIONS), P=log_uniform(1.0, 1e4),
       start=st.floats(0.0, 8.0))
def test_minima_valid(spec, version, P, start):
    found = ct.local_minima(P, spec, version=version)
    assert isinstance(found, tuple) and all(isinstance(r, Minimum) and r.test_loss is None for r in found)
    D, F = np.array([r.coordinates["Delta"] for r in found]), np.array([r.action for r in found])
    # the order parameter is the mean copy weight of the rows with a target
    np.testing.assert_allclose([r.order_parameter for r in found],
                               [ct.row_copy_weights(d, spec).mean() for d in D], rtol=1e-12)
    assert D.ndim == 1 and D.shape == F.shape and D.size >= 1 and (np.diff(D) > 0).all()
    assert_finite(F)
    Dr, Fr = ct.row_gap_minimum(P, spec, start, version=version)
    assert Dr.shape == (_n_rows(spec),) and math.isfinite(Fr)
    # the per-row family contains the uniform one: its minimum from the uniform minimum is not higher
    _, Fu = ct.row_gap_minimum(P, spec, D[np.argmin(F)], version=version)
    assert Fu <= F.min() + 1e-9 * max(1.0, abs(F.min()))


@covers(ct.first_order_point)
@budget(5)
@given(spec=copy_specs(L=st.integers(2, 24), V=st.integers(2, 4)), version=st.sampled_from(ct.VERSIONS))
def test_uniform_transition_valid(spec, version):
    try:
        t = ct.first_order_point(spec, version=version, P_range=(1e-2, 1e6), n_scan=80)
    except ValueError as exc:
        assert "coexist" in str(exc)
        return
    assert isinstance(t, FirstOrderPoint) and t.version == version
    assert t.spinodals.P_lower < t.P3 < t.spinodals.P_upper and t.jump > 0
    assert t.pooling.coordinates["Delta"] < t.copy.coordinates["Delta"]


@covers(ct.row_gap_branches, ct.RowGapBranches)
@budget(8)
@given(spec=copy_specs(L=st.integers(2, 8)), version=st.sampled_from(ct.VERSIONS), P0=log_uniform(1.0, 1e3))
def test_row_gap_branches_valid(spec, version, P0):
    P = P0 * np.array([1.0, 2.0, 4.0])
    br = ct.row_gap_branches(P, spec, version=version)
    n = _n_rows(spec)
    for name in ("Delta_pool", "Delta_copy", "c_pool", "c_copy"):
        assert getattr(br, name).shape == (3, n)
        assert_finite(getattr(br, name))
    assert br.F_pool.shape == br.F_copy.shape == br.coexist.shape == (3,)
    assert math.isnan(br.P3) or P[0] <= br.P3 <= P[-1]


@covers(ct.row_gap_noise, ct.RowGapNoise, ct.row_gap_action, ct.row_gap_minimum, ct.row_gap_branches)
@budget(10)
@given(spec=copy_specs(L=st.integers(2, 8)), n_pow=st.integers(0, 6), std=st.floats(0.0, 3.0), seed=seeds,
       P=log_uniform(1.0, 1e4))
def test_row_gap_noise_valid(spec, n_pow, std, seed, P):
    noise = ct.row_gap_noise(spec, np.random.default_rng(seed), n_draws=2**n_pow, std=std)
    n = _n_rows(spec)
    assert noise.shift.shape == noise.rho.shape == (n, 2**n_pow)
    assert_finite(noise.shift)
    assert ((noise.rho > 0) & (noise.rho <= 1)).all()
    F, grad = ct.row_gap_action(np.ones(n), P, spec, noise=noise)
    assert_finite(F)
    assert_finite(grad)
    D, Fm = ct.row_gap_minimum(P, spec, 1.0, noise=noise)
    assert D.shape == (n,) and math.isfinite(Fm)
    br = ct.row_gap_branches(np.array([P, 2 * P]), spec, noise=noise)
    assert br.c_pool.shape == (2, n)
    assert_finite(br.c_pool)


@covers(ct.RowGapNoise, ct.row_gap_noise)
@budget(20)
@given(data=st.data())
def test_row_gap_noise_invalid(data):
    spec = cl.ModelSpec(4, 2, kind="softmax", cyclic=False, causal=True)
    which = data.draw(st.sampled_from(["cls", "fn", "noise"]))
    if which == "cls":
        bad = data.draw(st.sampled_from([(np.zeros(3), np.ones(3)), (np.zeros((2, 2)), np.full((2, 2), 2.0)),
                                         (np.full((2, 2), math.nan), np.ones((2, 2)))]))
        with pytest.raises(ValueError, match="RowGapNoise"):
            ct.RowGapNoise(*bad, std=1.0)
        with raises_naming("std"):
            ct.RowGapNoise(np.zeros((2, 2)), np.ones((2, 2)), std=-1.0)
    elif which == "fn":
        name = data.draw(st.sampled_from(["rng", "n_draws", "std", "spec"]))
        args = {"spec": spec, "rng": np.random.default_rng(0), "n_draws": 4, "std": None}
        args[name] = data.draw({"rng": st.sampled_from([None, 0, "rng"]), "n_draws": st.sampled_from([0, -1, 1.5, None]),
                                "std": st.sampled_from([-1.0, math.nan, math.inf, "1"]), "spec": bad_spec()}[name])
        with raises_naming(name):
            ct.row_gap_noise(args.pop("spec"), args.pop("rng"), **args)
    else:
        with raises_naming("noise"):
            ct.row_gap_action(np.zeros(3), 10.0, spec, noise=data.draw(st.sampled_from([1.0, "x", np.zeros((3, 2))])))


@covers(cl.attention, sx.planted_logits)
@budget(20)
@given(L=st.integers(2, 9), kind=st.sampled_from(["linear", "softmax"]), seed=seeds, Delta=st.floats(-20, 20))
def test_causal_attention_and_planted_logits_valid(L, kind, seed, Delta):
    G = np.random.default_rng(seed).normal(size=(2, L, L)) * 3
    A = cl.attention(G, kind, causal=True)
    assert A.shape == (2, L, L)
    assert (np.triu(np.ones((L, L)), 1)[None] * A == 0).all()
    if kind == "softmax":
        np.testing.assert_allclose(A.sum(-1), 1.0, rtol=1e-12)
    g = sx.planted_logits(Delta, L, causal=True)
    assert g.shape == (L, L) and (np.triu(g, 1) == 0).all()
    Ac = cl.attention(g, "softmax", causal=True)
    c = ct.row_copy_weights(Delta, cl.ModelSpec(L, 2, cyclic=False, causal=True))
    np.testing.assert_allclose(Ac[np.arange(1, L), np.arange(L - 1)], c, rtol=1e-10, atol=1e-300)


@covers(ct.global_minimum, ct.minimum_curve)
@budget(30)
@given(which=st.sampled_from(["global_minimum", "minimum_curve"]), name=st.sampled_from(["P", "spec", "version"]),
       data=st.data())
def test_causal_global_minimum_and_curve_invalid(which, name, data):
    args = {"P": 50.0 if which == "global_minimum" else [50.0, 100.0],
            "spec": cl.ModelSpec(5, 3, kind="softmax", cyclic=False, causal=True), "version": "map"}
    args[name] = data.draw({
        "P": st.sampled_from([0.0, -1.0, math.nan, None, "10"] if which == "global_minimum"
                             else [[10.0, 0.0], [], [[10.0]], [math.inf], None]),
        "spec": st.one_of(bad_spec(), st.just(cl.ModelSpec(5, 3, kind="linear")), st.just(cl.ModelSpec(5, 3, cyclic=False))),
        "version": st.sampled_from(["fluct", "bayes", None, 1]),
    }[name])
    with raises_naming("P_values" if (name, which) == ("P", "minimum_curve") else name):
        getattr(ct, which)(*args.values())


_CALLS = {
    "copy_rows": lambda a: ct._copy_rows(a["spec"]),
    "row_copy_weights": lambda a: ct.row_copy_weights(a["Delta"], a["spec"]),
    "copy_state_invariants": lambda a: ct.copy_state_invariants(a["Delta"], a["spec"]),
    "gap_action": lambda a: ct.gap_action(a["Delta"], a["P"], a["spec"], version=a["version"]),
    "row_gap_action": lambda a: ct.row_gap_action(a["Delta"], a["P"], a["spec"], version=a["version"]),
    "local_minima": lambda a: ct.local_minima(a["P"], a["spec"], version=a["version"]),
    "row_gap_minimum": lambda a: ct.row_gap_minimum(a["P"], a["spec"], a["start"], version=a["version"]),
    "row_gap_branches": lambda a: ct.row_gap_branches(a["P_values"], a["spec"], version=a["version"]),
    "first_order_point": lambda a: ct.first_order_point(a["spec"], version=a["version"],
                                                                  P_range=a["P_range"], n_scan=a["n_scan"]),
}
_USES = {
    "copy_rows": ["spec"], "row_copy_weights": ["Delta", "spec"], "copy_state_invariants": ["Delta", "spec"],
    "gap_action": ["Delta", "P", "spec", "version"], "row_gap_action": ["Delta", "P", "spec", "version"],
    "local_minima": ["P", "spec", "version"], "row_gap_minimum": ["P", "spec", "start", "version"],
    "row_gap_branches": ["P_values", "spec", "version"],
    "first_order_point": ["spec", "version", "P_range", "n_scan"],
}


@covers(ct.row_copy_weights, ct.copy_state_invariants, ct.gap_action, ct.row_gap_action,
        ct.local_minima, ct.row_gap_minimum, ct.row_gap_branches, ct.first_order_point)
@budget(120)
@given(data=st.data())
def test_causal_theory_invalid(data):
    which = data.draw(st.sampled_from(sorted(_CALLS)))
    name = data.draw(st.sampled_from(_USES[which]))
    spec = cl.ModelSpec(5, 3, kind="softmax", cyclic=False, causal=True)
    args = {"spec": spec, "Delta": np.full(4, 1.0) if which == "row_gap_action" else np.array([0.5, 1.0]),
            "P": 50.0, "version": "mean_field", "start": 1.0, "P_values": np.array([10.0, 20.0]),
            "P_range": (10.0, 100.0), "n_scan": 5}
    bad = {
        "spec": st.one_of(bad_spec(), st.just(cl.ModelSpec(5, 3, kind="linear")), st.just(cl.ModelSpec(5, 3, cyclic=False))),
        "Delta": st.sampled_from([np.array([math.nan, 1.0]), np.array([math.inf]), None, "x"]),
        "P": st.sampled_from([0.0, -1.0, math.nan, math.inf, None, "10"]),
        "version": st.sampled_from(["fluct", "energy", "bayes", None, 1]),
        "start": st.sampled_from([math.nan, np.zeros(3), None]),
        "P_values": st.sampled_from([np.array([20.0, 10.0]), np.array([10.0]), np.array([0.0, 1.0]), None]),
        "P_range": st.sampled_from([(10.0, 1.0), (0.0, 5.0), (1.0, math.inf)]),
        "n_scan": st.sampled_from([2, 0, 1.5, None]),
    }[name]
    args[name] = data.draw(bad)
    if which == "row_gap_action" and name == "Delta" and isinstance(args[name], np.ndarray) and args[name].size != 4:
        pass  # wrong length is invalid too
    with raises_naming(name):
        _CALLS[which](args)


@covers(cl.attention, sx.planted_logits)
@budget(10)
@given(value=not_bool())
def test_causal_flag_invalid(value):
    with raises_naming("causal"):
        cl.attention(np.zeros((3, 3)), "softmax", causal=value)
    with raises_naming("causal"):
        sx.planted_logits(1.0, 3, causal=value)
    with raises_naming("causal"):
        cl.ModelSpec(3, 2, cyclic=False, causal=value)


@covers(cl.attention)
@budget(5)
@given(x=not_array())
def test_causal_attention_rejects_non_arrays(x):
    with raises_naming("G"):
        cl.attention(x, "softmax", causal=True)


@covers(ct.gain_criterion, ct.gain_criterion_is_monotone)
@budget(20)
@given(spec=copy_specs(), n=st.integers(3, 40), hi=st.floats(0.5, 12.0))
def test_gain_criterion_valid(spec, n, hi):
    D = np.linspace(hi / n, hi, n)
    crit = ct.gain_criterion(D, spec)
    assert crit.shape == (n,)
    assert_finite(crit)
    assert isinstance(ct.gain_criterion_is_monotone(D, spec), bool)


@covers(ct.gain_criterion, ct.gain_criterion_is_monotone)
@budget(20)
@given(bad=st.sampled_from([[0.0, 1.0, 2.0], [1.0, 1.0, 2.0], [1.0, 2.0], [1.0, math.nan, 2.0], [[1.0, 2.0, 3.0]]]),
       monotone=st.booleans())
def test_gain_criterion_invalid(bad, monotone):
    spec = cl.ModelSpec(6, 3, kind="softmax")
    with raises_naming("Delta"):
        (ct.gain_criterion_is_monotone if monotone else ct.gain_criterion)(bad, spec)


@covers(ca.bimodality_coefficient)
@budget(30)
@given(shape=st.tuples(st.integers(1, 3), st.integers(4, 40)), seed=seeds)
def test_bimodality_coefficient_valid(shape, seed):
    x = np.random.default_rng(seed).normal(size=shape)
    bc = ca.bimodality_coefficient(x)
    assert bc.shape == (shape[0],)
    # (g1^2 + 1)/(g2 + 3) = (g1^2 + 1)/kurtosis, and kurtosis >= g1^2 + 1 for every distribution
    assert ((bc > 0) & (bc <= 1 + 1e-9)).all()


@covers(ca.bimodality_coefficient)
@budget(20)
@given(bad=nonfinite())
def test_bimodality_coefficient_invalid(bad):
    x = np.arange(6.0)
    x[2] = bad
    with raises_naming("x"):
        ca.bimodality_coefficient(x)
