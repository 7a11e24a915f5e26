"""Property tests: the evidence (readout integrated out) and the order parameters / plug-in action.

Besides valid/invalid arguments, the extreme-but-valid regime of issue 8: the
evidence and the plug-in action stay finite for P up to 1e6, L up to 512 and
every variance in [1e-8, 1e8] (data sets of size P are built by repeating a few
sequences, which is a valid data set and keeps C cheap).
"""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest
import torch
from hypothesis import event, given
from hypothesis import strategies as st

import copylib as cl

from props_helpers import (
    assert_finite,
    bad_ints,
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

# the module, not the function copylib.posterior.order_parameters that shadows it in the package namespace
op = importlib.import_module("copylib.posterior.order_parameters")

pytestmark = pytest.mark.usefixtures("one_thread")  # tiny tensors: torch on one thread (tests/conftest.py)


seeds = st.integers(0, 2**32 - 1)


def _attention(spec, rng, batch=(), scale=2.0):
    return cl.attention(cl.attention_logits(scale * rng.normal(size=batch + (spec.L, spec.L)),
                                            rng.normal(size=batch)), spec.kind)


# --------------------------------------------------------------------------
# evidence: valid input
# --------------------------------------------------------------------------


@covers(cl.negative_log_evidence, cl.optimal_readout, cl.effective_action)
@budget(25)
@given(spec=specs(), P=st.integers(1, 8), batch=st.sampled_from([(), (2,)]), shared=st.booleans(),
       use_torch=st.booleans(), seed=seeds)
def test_evidence_valid(spec, P, batch, shared, use_torch, seed):
    rng = np.random.default_rng(seed)
    C = cooccurrence_of(P, spec, seed) if shared or not batch else np.stack(
        [cooccurrence_of(P, spec, seed + i) for i in range(batch[0])])
    g, b = rng.normal(size=batch + (spec.L, spec.L)), rng.normal(size=batch)
    A = cl.attention(cl.attention_logits(g, b), spec.kind)
    conv = torch.as_tensor if use_torch else (lambda x: x)
    nle = cl.negative_log_evidence(conv(A), conv(C), spec)
    W = cl.optimal_readout(conv(A), conv(C), spec)
    act = cl.effective_action(conv(g), conv(b), conv(C), spec)
    for out, shape in ((nle, batch), (W, batch + (spec.V, spec.V)), (act, batch)):
        assert isinstance(out, torch.Tensor if use_torch else np.ndarray)
        assert tuple(out.shape) == shape and out.dtype in (np.float64, torch.float64)
        assert_finite(out)
    prior = (g**2).sum((-1, -2)) / (2 * spec.sigma_G**2) + b**2 / (2 * spec.sigma_b**2)
    np.testing.assert_allclose(np.asarray(act), np.asarray(nle) + prior, rtol=1e-12, atol=1e-12)


@covers(cl.negative_log_evidence_primal, cl.negative_log_evidence_mc)
@budget(10)
@given(spec=specs(L=st.integers(2, 4), V=st.integers(2, 3)), P=st.integers(1, 3), seed=seeds)
def test_evidence_reference_forms_valid(spec, P, seed):
    rng = np.random.default_rng(seed)
    X, Y = cl.copy_task(P, spec.L, spec.V, rng, cyclic=spec.cyclic)
    A = _attention(spec, rng)
    primal = cl.negative_log_evidence_primal(X, Y, A, spec)
    assert isinstance(primal, np.ndarray) and primal.shape == () and math.isfinite(primal)
    # two exact forms of one number: they differ by the rounding of O(P L V) terms of size ~|ln sigma^2|
    dual = cl.negative_log_evidence(A, cl.cooccurrence(X), spec)
    assert float(primal) == pytest.approx(float(dual), rel=1e-9, abs=1e-9)
    est, se = cl.negative_log_evidence_mc(X, Y, A, spec, 64, rng, chunk_size=16)
    assert isinstance(est, float) and isinstance(se, float)
    assert math.isfinite(est) and math.isfinite(se) and se >= 0


# --------------------------------------------------------------------------
# evidence: invalid input
# --------------------------------------------------------------------------


def _ev_base():
    spec = cl.ModelSpec(L=3, V=2, kind="softmax")
    X, Y = cl.copy_task(2, 3, 2, np.random.default_rng(0))
    return spec, X, Y, cl.cooccurrence(X)


@covers(cl.negative_log_evidence, cl.optimal_readout, cl.effective_action)
@budget(80)
@given(data=st.data())
def test_evidence_invalid(data):
    spec, X, Y, C = _ev_base()
    which = data.draw(st.sampled_from(["negative_log_evidence", "optimal_readout", "effective_action"]))
    if which == "effective_action":
        args = {"g": np.zeros((2, 3, 3)), "b": np.zeros(2), "C": C, "spec": spec}
        wrong = {"g": np.zeros((2, 4, 4)), "b": np.zeros(3), "C": np.zeros((2, 2, 2, 2))}
    else:
        args = {"A": np.full((2, 3, 3), 1 / 3), "C": C, "spec": spec}
        wrong = {"A": np.zeros((2, 4, 4)), "C": np.zeros((3, 3, 3, 3))}
    name = data.draw(st.sampled_from(sorted(args)))
    if name == "spec":
        args["spec"] = data.draw(bad_spec())
    else:
        case = data.draw(st.sampled_from(["shape", "nonfinite", "kind"]))
        if case == "shape":
            args[name] = wrong[name]
        elif case == "nonfinite":
            args[name] = with_nonfinite(args[name], data)
        else:
            args[name] = data.draw(not_array())
    with raises_naming(name):
        getattr(cl, which)(**args)


@covers(cl.negative_log_evidence)
@budget(5)
@given(k=st.integers(2, 4))
def test_evidence_batches_must_broadcast(k):
    spec, _, _, C = _ev_base()
    # 2 attention matrices against k data sets: the error names both arrays
    with pytest.raises(ValueError, match=r"(?s)\bA\b.*\bC\b.*broadcast"):
        cl.negative_log_evidence(np.full((2, 3, 3), 1 / 3), np.stack([C] * (k + 1)), spec)


@covers(cl.negative_log_evidence)
@budget(10)
@given(seed=seeds)
def test_evidence_rejects_a_non_cooccurrence_tensor(seed):
    # -C gives K = Phi^T Phi negative definite: the message must blame C, not float precision
    spec, _, _, C = _ev_base()
    A = _attention(spec, np.random.default_rng(seed))
    with raises_naming("C", ValueError):
        cl.negative_log_evidence(A, -C, spec)


@covers(cl.negative_log_evidence_primal, cl.negative_log_evidence_mc)
@budget(60)
@given(data=st.data())
def test_reference_forms_invalid(data):
    spec, X, Y, _ = _ev_base()
    which = data.draw(st.sampled_from(["primal", "mc"]))
    args = {"X": X, "Y": Y, "A": np.full((3, 3), 1 / 3), "spec": spec}
    if which == "mc":
        args.update(n_samples=8, rng=np.random.default_rng(0), chunk_size=4)
    name = data.draw(st.sampled_from(sorted(args)))
    wrong = {"X": np.zeros((2, 4, 2)), "Y": np.zeros((2, 3, 3)), "A": np.zeros((2, 3, 3))}
    if name == "spec":
        args[name] = data.draw(bad_spec())
    elif name in ("n_samples", "chunk_size"):
        args[name] = data.draw(bad_ints(2 if name == "n_samples" else 1))
    elif name == "rng":
        args[name] = data.draw(st.sampled_from([None, 1, torch.Generator()]))
    else:
        case = data.draw(st.sampled_from(["shape", "nonfinite", "kind"]))
        if case == "shape":
            args[name] = wrong[name]
        elif case == "nonfinite":
            args[name] = with_nonfinite(args[name], data)
        else:
            args[name] = data.draw(not_array())
    fn = cl.negative_log_evidence_primal if which == "primal" else cl.negative_log_evidence_mc
    with raises_naming(name):
        fn(**args)


# --------------------------------------------------------------------------
# evidence: extreme but valid input
# --------------------------------------------------------------------------


@covers(cl.negative_log_evidence, cl.optimal_readout, cl.effective_action)
@budget(40)
@given(spec=extreme_specs(st.sampled_from(["linear", "softmax"]), L=st.sampled_from([2, 3, 8])),
       P0=st.integers(1, 4), repeat=st.sampled_from([1, 1000, 250_000]), logit_scale=log_uniform(1e-3, 1e3),
       seed=seeds)
def test_evidence_extreme_scales(spec, P0, repeat, logit_scale, seed):
    """Finite value, readout and gradient for P up to 1e6 and every variance in [1e-8, 1e8] --
    or, only when it is genuinely unrepresentable, a ValueError naming sigma0_sq and omega."""
    rng = np.random.default_rng(seed)
    C = torch.as_tensor(cooccurrence_of(P0, spec, seed) * repeat)  # P0 sequences, each repeated
    g = torch.as_tensor(logit_scale * rng.normal(size=(2, spec.L, spec.L))).requires_grad_()
    b = torch.as_tensor(rng.normal(size=2)).requires_grad_()
    try:
        act = cl.effective_action(g, b, C, spec)
    except ValueError as err:
        # allowed only for a singular K with kappa below its float64 resolution
        assert "sigma0_sq" in str(err) and "omega" in str(err)
        A = cl.attention(cl.attention_logits(g.detach(), b.detach()), spec.kind)
        K = cl.readout_moments(A, C, torch.as_tensor(spec.target))[0]
        ev = torch.linalg.eigvalsh(K)
        top = ev.abs().max()
        assert spec.kappa < 1e-12 * top and ev[..., 0].min() < 1e-9 * top
        event("unrepresentable: singular K, tiny kappa")
        return
    assert_finite(act, "effective action")
    grads = torch.autograd.grad(act.sum(), (g, b))
    for t in grads:
        assert_finite(t, "gradient")
    A = cl.attention(cl.attention_logits(g.detach(), b.detach()), spec.kind)
    assert_finite(cl.optimal_readout(A, C, spec), "readout")


@covers(cl.negative_log_evidence)
@budget(15)
@given(L=st.integers(2, 8), V=st.integers(3, 6), kind=st.sampled_from(["linear", "softmax"]),
       log_kappa_gap=st.floats(-8, 8), seed=seeds)
def test_evidence_singular_K(L, V, kind, log_kappa_gap, seed):
    """Uniform attention on P = 1 < V sequence makes K rank one. Relative to K's scale ~L, a
    kappa above float64 resolution gives a finite evidence; one far below it the documented
    ValueError naming sigma0_sq and omega (the null-space log-det is rounding noise)."""
    rng = np.random.default_rng(seed)
    X, _ = cl.copy_task(1, L, V, rng)
    C = cl.cooccurrence(X) * 1e6  # the one sequence repeated: P = 1e6, K ~ 1e6 L
    A = np.full((L, L), 1.0 / L)
    top = 1e6 * L
    # kappa = sigma0_sq L / omega, set relative to 1e-13 of K's scale (+- 8 decades)
    spec = cl.ModelSpec(L=L, V=V, kind=kind, sigma0_sq=1.0, omega=L / (1e-13 * top * 10.0**log_kappa_gap))
    if log_kappa_gap > 2:  # kappa >= 1e-11 |K|: well above rounding, must be finite
        assert math.isfinite(cl.negative_log_evidence(A, C, spec))
    elif log_kappa_gap < -5:  # kappa <= 1e-18 |K|: below rounding, must be the named error
        with pytest.raises(ValueError, match=r"(?s)sigma0_sq.*omega"):
            cl.negative_log_evidence(A, C, spec)
    else:  # in between either outcome is honest, but never a non-finite number
        try:
            assert math.isfinite(cl.negative_log_evidence(A, C, spec))
        except ValueError as err:
            assert "sigma0_sq" in str(err)


@covers(cl.negative_log_evidence)
@budget(6)
@given(spec=extreme_specs(st.sampled_from(["linear", "softmax"]), L=st.just(512), V=st.sampled_from([2, 3])),
       repeat=st.sampled_from([1, 1_000_000]), seed=seeds)
def test_evidence_long_sequences(spec, repeat, seed):
    # L = 512 with one sequence, repeated up to P = 1e6; well-conditioned unless kappa is tiny
    rng = np.random.default_rng(seed)
    C = cooccurrence_of(1, spec, seed) * repeat
    A = _attention(spec, rng, scale=3.0)
    try:
        nle = cl.negative_log_evidence(A, C, spec)
    except ValueError as err:
        assert "sigma0_sq" in str(err) and spec.kappa < 1e-12 * repeat * spec.L
        event("unrepresentable: singular K, tiny kappa")
        return
    assert nle.shape == () and math.isfinite(nle)


# --------------------------------------------------------------------------
# order parameters
# --------------------------------------------------------------------------


@covers(op.invariants, op.order_parameters, op.attention_from_order_parameters, op.copy_weight)
@budget(30)
@given(spec=specs(L=st.integers(2, 12)), batch=st.sampled_from([(), (3,)]), use_torch=st.booleans(), seed=seeds)
def test_invariants_and_order_parameters_valid(spec, batch, use_torch, seed):
    A = _attention(spec, np.random.default_rng(seed), batch)
    A_in = torch.as_tensor(A) if use_torch else A
    inv = op.invariants(A_in, spec.cyclic)
    mqr = op.order_parameters(A_in)
    c = op.copy_weight(A_in)
    for out in (*inv, *mqr, c):
        assert isinstance(out, torch.Tensor if use_torch else np.ndarray) and tuple(out.shape) == batch
        assert_finite(out)
    a1, a2, g1, g2 = (np.asarray(t) for t in inv)
    m, q, r2 = (np.asarray(t) for t in mqr)
    L = spec.L
    n_T = L if spec.cyclic else L - 1
    tol = 1e-12 * (1 + a1)  # rounding of sums of L^2 products of entries <= max|A|
    assert (a1 >= 0).all() and (a2 >= 0).all() and (r2 >= 0).all()
    # Cauchy-Schwarz: <A, T>^2 <= |A|^2 |T|^2 = alpha_1 n_T
    assert (g1**2 <= a1 * n_T + tol).all()
    # Pythagoras in the orthogonal decomposition
    np.testing.assert_allclose(m**2 + (L - 1) * q**2 + r2, (A**2).sum((-1, -2)), rtol=1e-12, atol=1e-12)
    back = op.attention_from_order_parameters(m, q, L)
    assert back.shape == batch + (L, L)
    np.testing.assert_allclose(op.order_parameters(back)[:2], (m, q), rtol=1e-10, atol=1e-12)


@covers(op.copy_attention, op.logit_gap, op.copy_weight)
@budget(30)
@given(L=st.integers(2, 600), Delta=st.floats(-1e300, 1e300), use_torch=st.booleans())
def test_copy_attention_valid_for_any_gap(L, Delta, use_torch):
    """Row-stochastic and finite for every finite gap, huge ones included (stable sigmoid)."""
    D = torch.tensor(Delta, dtype=torch.float64) if use_torch else np.float64(Delta)
    A = op.copy_attention(D, L)
    assert tuple(A.shape) == (L, L)
    A = np.asarray(A)
    assert_finite(A)
    assert (A >= 0).all()
    np.testing.assert_allclose(A.sum(-1), 1.0, rtol=0, atol=1e-12)
    c = float(op.copy_weight(A))
    if 1e-12 < c < 1 - 1e-12:
        # inverse: exact up to the conditioning of ln(c / (1 - c)) at the ends of (0, 1)
        assert float(op.logit_gap(A)) == pytest.approx(Delta, rel=1e-9, abs=1e-9 / min(c, 1 - c))


@covers(op.plugin_action, op.plugin_action_of_attention, op.prior_action_linear, op.prior_action_softmax)
@budget(30)
@given(spec=specs(L=st.integers(2, 12)), P=log_uniform(1e-3, 1e6), batch=st.sampled_from([(), (2,)]),
       include_constant=st.booleans(), use_torch=st.booleans(), seed=seeds)
def test_plugin_and_prior_actions_valid(spec, P, batch, include_constant, use_torch, seed):
    rng = np.random.default_rng(seed)
    A = _attention(spec, rng, batch)
    A_in = torch.as_tensor(A) if use_torch else A
    S = op.plugin_action_of_attention(A_in, P, spec, include_constant=include_constant)
    assert isinstance(S, torch.Tensor if use_torch else np.ndarray) and tuple(S.shape) == batch
    assert_finite(S)
    S2 = op.plugin_action(*op.invariants(A_in, spec.cyclic), P, spec, include_constant=include_constant)
    np.testing.assert_allclose(np.asarray(S2), np.asarray(S), rtol=1e-14, atol=0)
    m, q = rng.normal(size=batch), rng.normal(size=batch)
    for out in (op.prior_action_linear(m, q, spec), op.prior_action_softmax(m, spec)):
        assert tuple(np.shape(out)) == batch and (np.asarray(out) >= 0).all()
        assert_finite(out)


@covers(op.subspace_coverage)
@budget(20)
@given(n=st.integers(1, 5), L=st.integers(2, 8), seed=seeds)
def test_subspace_coverage_valid(n, L, seed):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, L, L))
    center = rng.normal(size=(L, L))
    samples, mean = op.subspace_coverage(A, center)
    assert isinstance(samples, float) and isinstance(mean, float)
    # fractions of a projected norm; rounding can push them a few ulps past 1
    assert 0 <= samples <= 1 + 1e-12 and 0 <= mean <= 1 + 1e-12


@covers(op.plane_coverage)
@budget(20)
@given(n=st.integers(1, 5), L=st.integers(2, 8), gauge=st.booleans(), seed=seeds)
def test_plane_coverage_valid(n, L, gauge, seed):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, L, L))
    center = np.zeros((L, L))
    samples, mean, q = op.plane_coverage(A, center, sign_gauge=gauge)
    assert isinstance(q, float) and math.isfinite(q)
    # fractions of a projected norm; rounding can push them a few ulps past 1
    assert 0 <= samples <= 1 + 1e-12 and 0 <= mean <= 1 + 1e-12
    if gauge:  # the flip A -> -A is what the gauge removes: flipping the input changes nothing
        assert op.plane_coverage(-A, center, sign_gauge=True) == pytest.approx((samples, mean, q), rel=1e-12, abs=1e-15)


_OP_ARRAYS = {
    "invariants": {"A": np.eye(3)},
    "order_parameters": {"A": np.eye(3)},
    "copy_weight": {"A": np.eye(3)},
    "logit_gap": {"A": np.full((3, 3), 1 / 3)},
    "attention_from_order_parameters": {"m": np.zeros(2), "q": np.zeros(2)},
    "copy_attention": {"Delta": np.zeros(2)},
    "plugin_action": {"alpha_1": np.ones(2), "alpha_2": np.ones(2), "gamma_1": np.ones(2), "gamma_2": np.ones(2),
                        "P": np.full(2, 10.0)},
    "plugin_action_of_attention": {"A": np.full((3, 3), 1 / 3), "P": 10.0},
    "prior_action_linear": {"m": np.zeros(2), "q": np.zeros(2)},
    "prior_action_softmax": {"Delta": np.zeros(2)},
    "subspace_coverage": {"A": np.ones((2, 3, 3)), "center": np.eye(3)},
}
_OP_EXTRA = {
    "invariants": {"cyclic": True},
    "attention_from_order_parameters": {"L": 3},
    "copy_attention": {"L": 3},
    "plugin_action": {"spec": cl.ModelSpec(L=3, V=2), "include_constant": False},
    "plugin_action_of_attention": {"spec": cl.ModelSpec(L=3, V=2), "include_constant": False},
    "prior_action_linear": {"spec": cl.ModelSpec(L=3, V=2, kind="linear")},
    "prior_action_softmax": {"spec": cl.ModelSpec(L=3, V=2)},
}


@covers(*(getattr(op, f) for f in _OP_ARRAYS))
@budget(120)
@given(data=st.data())
def test_order_parameter_functions_invalid(data):
    which = data.draw(st.sampled_from(sorted(_OP_ARRAYS)))
    args = {**_OP_ARRAYS[which], **_OP_EXTRA.get(which, {})}
    name = data.draw(st.sampled_from(sorted(args)))
    if name == "spec":
        args[name] = data.draw(bad_spec())
    elif name in ("cyclic", "include_constant"):
        args[name] = data.draw(not_bool())
    elif name == "L":
        args[name] = data.draw(bad_ints(2))
    else:
        case = data.draw(st.sampled_from(["nonfinite", "kind", "range"]))
        if case == "range" and name in ("alpha_1", "alpha_2", "P"):
            args[name] = np.array([1.0, -1.0]) if name != "P" else data.draw(st.sampled_from([0.0, -1.0]))
        elif case == "range" and name in ("A", "center"):
            args[name] = np.zeros({"A": (2, 3, 4), "center": (4, 4)}[name] if which == "subspace_coverage"
                                  else (3, 4))
        elif case == "nonfinite" or case == "range":
            args[name] = with_nonfinite(np.asarray(args[name], dtype=float), data)
        else:
            args[name] = data.draw(not_array())
    with raises_naming(name):
        getattr(op, which)(**args)


@covers(op.logit_gap)
@budget(10)
@given(L=st.integers(2, 8), c=st.sampled_from([0.0, 1.0]))
def test_logit_gap_outside_the_open_interval(L, c):
    # c = 0 or 1 has no finite gap: a ValueError naming A, never an infinite Delta
    A = np.full((L, L), (1 - c) / (L - 1))
    A[np.arange(L), np.arange(L) - 1] = c
    with raises_naming("A", ValueError):
        op.logit_gap(A)


# --------------------------------------------------------------------------
# plug-in action: extreme but valid input
# --------------------------------------------------------------------------


@covers(op.plugin_action, op.plugin_action_of_attention)
@budget(60)
@given(spec=extreme_specs(st.sampled_from(["linear", "softmax"])), P=log_uniform(1e-3, 1e6),
       logit_scale=log_uniform(1e-3, 1e3), include_constant=st.booleans(), seed=seeds)
def test_plugin_action_extreme_scales(spec, P, logit_scale, include_constant, seed):
    rng = np.random.default_rng(seed)
    A = cl.attention(logit_scale * rng.normal(size=(3, spec.L, spec.L)), spec.kind)
    A = torch.as_tensor(A).requires_grad_()
    S = op.plugin_action_of_attention(A, P, spec, include_constant=include_constant)
    assert_finite(S, "plug-in action")
    (grad,) = torch.autograd.grad(S.sum(), A)
    assert_finite(grad, "gradient")


@covers(op.plugin_action)
@budget(40)
@given(spec=extreme_specs("linear"), P=log_uniform(1e-3, 1e6), a1=log_uniform(1e-300, 1e6),
       a2=log_uniform(1e-300, 1e6), frac=st.floats(-1, 1), zero=st.booleans())
def test_plugin_action_at_degenerate_invariants(spec, P, a1, a2, frac, zero):
    # alpha = 0 (A = 0) and alpha ~ 1e-300 with gamma at its Cauchy-Schwarz limit stay finite
    a1, a2 = (0.0, 0.0) if zero else (a1, a2)
    g1 = frac * math.sqrt(a1 * spec.L)
    g2 = frac * math.sqrt(a2 * spec.L)
    S = op.plugin_action(a1, a2, g1, g2, P, spec)
    assert S.shape == () and math.isfinite(S)
