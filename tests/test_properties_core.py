"""Property tests: task, model, statistics, losses, config, transitions, plotting.

For every public function: random valid arguments give finite output of the
documented shape and dtype; each kind of invalid argument raises ValueError or
TypeError naming the parameter.
"""

from __future__ import annotations

import math
import os

import matplotlib
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import copylib as cl
from copylib import config, plotting
from copylib.analysis import transitions
from copylib.model.attention import attention_kind, attention_kinds
from copylib.model.network import check_spec, from_torch, to_torch
from copylib.model.statistics import BatchedReadoutMoments
from props_helpers import (
    assert_finite,
    bad_ints,
    bad_spec,
    budget,
    covers,
    finite_arrays,
    not_array,
    not_bool,
    raises_naming,
    rngs,
    specs,
    with_nonfinite,
)

matplotlib.use("Agg")


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    """Tiny tensors: a second intra-op thread only adds synchronisation (restored after)."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


sizes = st.integers(2, 6)


# --------------------------------------------------------------------------
# task
# --------------------------------------------------------------------------


@covers(cl.shift_matrix)
@budget(20)
@given(L=st.integers(2, 40), cyclic=st.booleans())
def test_shift_matrix_valid(L, cyclic):
    T = cl.shift_matrix(L, cyclic)
    assert T.shape == (L, L) and T.dtype == np.float64
    # a shift: every row but (non-cyclic) the first has a single 1 at l - 1
    assert np.array_equal(T.sum(1), np.r_[1.0 if cyclic else 0.0, np.ones(L - 1)])
    assert np.array_equal(np.argmax(T[1:], 1), np.arange(L - 1))


@covers(cl.shift_matrix)
@budget(20)
@given(data=st.data())
def test_shift_matrix_invalid(data):
    name = data.draw(st.sampled_from(["L", "cyclic"]))
    args = {"L": 4, "cyclic": True}
    args[name] = data.draw(bad_ints(2) if name == "L" else not_bool())
    with raises_naming(name):
        cl.shift_matrix(**args)


@covers(cl.sample_tokens, cl.one_hot, cl.copy_task)
@budget(20)
@given(P=st.integers(1, 5), L=sizes, V=sizes, seed=st.integers(0, 2**32 - 1), cyclic=st.booleans())
def test_task_valid(P, L, V, seed, cyclic):
    tok = cl.sample_tokens(P, L, V, np.random.default_rng(seed))
    assert tok.shape == (P, L) and np.issubdtype(tok.dtype, np.integer)
    assert tok.min() >= 0 and tok.max() < V
    X1 = cl.one_hot(tok, V)
    assert X1.shape == (P, L, V) and X1.dtype == np.float64 and np.array_equal(X1.sum(-1), np.ones((P, L)))
    X, Y = cl.copy_task(P, L, V, np.random.default_rng(seed), cyclic=cyclic)
    assert np.array_equal(X, X1)  # same generator state, same draws
    assert Y.shape == (P, L, V) and Y.dtype == np.float64
    assert np.array_equal(Y, np.einsum("lm,pmv->plv", cl.shift_matrix(L, cyclic), X))


@covers(cl.sample_tokens, cl.copy_task)
@budget(40)
@given(data=st.data(), which=st.sampled_from(["sample_tokens", "copy_task"]))
def test_task_invalid(data, which):
    names = ["P", "L", "V", "rng"] + (["cyclic"] if which == "copy_task" else [])
    name = data.draw(st.sampled_from(names))
    args = {"P": 3, "L": 4, "V": 3, "rng": np.random.default_rng(0)}
    if which == "copy_task":
        args["cyclic"] = True
    minimum = {"P": 1, "L": 2, "V": 2}
    if name in minimum:
        args[name] = data.draw(bad_ints(minimum[name]))
    elif name == "rng":
        args[name] = data.draw(st.sampled_from([0, None, torch.Generator(), np.random.RandomState(0)]))
    else:
        args[name] = data.draw(not_bool())
    with raises_naming(name):
        getattr(cl, which)(**args)


@covers(cl.one_hot)
@budget(20)
@given(data=st.data())
def test_one_hot_invalid(data):
    case = data.draw(st.sampled_from(["V", "float tokens", "out of range"]))
    if case == "V":
        with raises_naming("V"):
            cl.one_hot(np.array([0, 1]), data.draw(bad_ints(2)))
    elif case == "float tokens":
        with raises_naming("tokens"):
            cl.one_hot(np.array([0.0, 1.0]), 3)
    else:
        bad = data.draw(st.one_of(st.integers(max_value=-1), st.integers(min_value=3)))
        with raises_naming("tokens"):
            cl.one_hot(np.array([0, bad]), 3)


# --------------------------------------------------------------------------
# model
# --------------------------------------------------------------------------


@covers(cl.ModelSpec)
@budget(20)
@given(spec=specs())
def test_model_spec_valid(spec):
    assert isinstance(spec.L, int) and isinstance(spec.V, int)
    assert spec.sigma_sq == pytest.approx(spec.sigma0_sq * spec.L, rel=1e-15)
    assert spec.kappa == pytest.approx(spec.sigma_sq / spec.omega, rel=1e-15)
    assert spec.target.shape == (spec.L, spec.L)


@covers(cl.ModelSpec)
@budget(60)
@given(data=st.data())
def test_model_spec_invalid(data):
    name = data.draw(st.sampled_from(["L", "V", "kind", "sigma_G", "sigma_b", "omega", "sigma0_sq", "cyclic"]))
    args = dict(L=4, V=3, kind="softmax", sigma_G=1.0, sigma_b=1.0, omega=1.0, sigma0_sq=1.0, cyclic=True)
    if name in ("L", "V"):
        args[name] = data.draw(bad_ints(2))
    elif name == "kind":
        args[name] = data.draw(st.sampled_from(["Linear", "relu", "", None, 1, ["linear"]]))
    elif name == "cyclic":
        args[name] = data.draw(not_bool())
    else:
        from props_helpers import bad_positive

        args[name] = data.draw(bad_positive())
    with raises_naming(name):
        cl.ModelSpec(**args)


@covers(check_spec)
@budget(30)
@given(spec=specs(), data=st.data())
def test_check_spec(spec, data):
    kind = data.draw(st.sampled_from((None,) + attention_kinds()))
    needs_cyclic = data.draw(st.booleans())
    meets = (kind is None or kind == spec.kind) and (spec.cyclic or not needs_cyclic)
    call = lambda: check_spec(spec, kind=kind, cyclic_because="the test needs it" if needs_cyclic else None)
    if meets:
        assert call() is spec
    elif kind is not None and kind != spec.kind:
        with raises_naming("spec.kind"):
            call()
    else:
        with raises_naming("spec.cyclic"):
            call()


@covers(check_spec)
@budget(20)
@given(data=st.data())
def test_check_spec_invalid(data):
    name = data.draw(st.sampled_from(["spec", "kind"]))
    if name == "spec":
        with raises_naming("spec", TypeError):
            check_spec(data.draw(bad_spec()))
    else:
        with raises_naming("kind", ValueError):
            check_spec(cl.ModelSpec(L=3, V=2), kind=data.draw(st.sampled_from(["relu", "Linear", "", 0, ("linear",)])))


def _as(x, use_torch):
    return torch.as_tensor(x) if use_torch else x


def _check_out(out, shape, use_torch):
    if use_torch:
        assert isinstance(out, torch.Tensor) and out.dtype == torch.float64
    else:
        assert isinstance(out, np.ndarray) and out.dtype == np.float64
    assert tuple(out.shape) == shape
    assert_finite(out)


@covers(cl.attention_logits, cl.attention)
@budget(30)
@given(L=sizes, batch=st.sampled_from([(), (2,), (2, 3)]), kind=st.sampled_from(attention_kinds()),
       log_scale=st.floats(-3, 300), use_torch=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_attention_valid(L, batch, kind, log_scale, use_torch, seed):
    # logits up to 1e300: softmax must stay finite and row-stochastic, linear is G / L
    rng = np.random.default_rng(seed)
    g = rng.normal(size=batch + (L, L)) * 10.0 ** (log_scale / 10 if kind == "linear" else log_scale)
    b = rng.normal(size=batch)
    G = cl.attention_logits(_as(g, use_torch), _as(b, use_torch))
    _check_out(G, batch + (L, L), use_torch)
    A = cl.attention(G, kind)
    _check_out(A, batch + (L, L), use_torch)
    if kind == "softmax":
        A = np.asarray(A)
        assert (A >= 0).all()
        # row sums are 1 up to the rounding of a sum of L terms
        np.testing.assert_allclose(A.sum(-1), 1.0, rtol=0, atol=8 * L * np.finfo(float).eps)


@covers(cl.attention_logits)
@budget(40)
@given(data=st.data())
def test_attention_logits_invalid(data):
    name = data.draw(st.sampled_from(["g", "b"]))
    case = data.draw(st.sampled_from(["shape", "nonfinite", "kind", "int tensor"]))
    args = {"g": np.zeros((2, 3, 3)), "b": np.zeros(2)}
    if case == "shape":
        args[name] = np.zeros((2, 3, 4)) if name == "g" else np.zeros(3)
    elif case == "nonfinite":
        args[name] = with_nonfinite(args[name], data)
    elif case == "kind":
        args[name] = data.draw(not_array())
    else:
        args = {k: torch.as_tensor(v) for k, v in args.items()}
        args[name] = args[name].long()
    with raises_naming(name):
        cl.attention_logits(**args)


@covers(cl.attention)
@budget(30)
@given(data=st.data())
def test_attention_invalid(data):
    case = data.draw(st.sampled_from(["kind", "shape", "L=1", "nonfinite", "not array"]))
    G = np.zeros((3, 3))
    if case == "kind":
        with raises_naming("kind"):
            cl.attention(G, data.draw(st.sampled_from(["soft", None, 0, ("linear",)])))
        return
    if case == "shape":
        G = np.zeros(data.draw(st.sampled_from([(3,), (3, 4), (2, 3, 4)])))
    elif case == "L=1":
        G = np.zeros((1, 1))
    elif case == "nonfinite":
        G = with_nonfinite(G, data)
    else:
        G = data.draw(not_array())
    with raises_naming("G"):
        cl.attention(G, "softmax")


@covers(to_torch, from_torch)
@budget(30)
@given(shapes=st.lists(st.sampled_from([(), (3,), (2, 3)]), min_size=1, max_size=3), data=st.data())
def test_to_torch_and_back(shapes, data):
    # numpy in -> float64 tensors and numpy out; any tensor in -> tensors kept as they are, tensor out
    arrays = [data.draw(finite_arrays(shape)) for shape in shapes]
    as_tensor = [data.draw(st.booleans()) for _ in shapes]
    inputs = [torch.as_tensor(a, dtype=torch.float32) if t else a for a, t in zip(arrays, as_tensor)]
    as_numpy, tensors = to_torch(*inputs, names=tuple(f"x{i}" for i in range(len(inputs))))
    assert as_numpy == (not any(as_tensor))
    for x, t, a in zip(inputs, tensors, arrays):
        assert isinstance(t, torch.Tensor)
        if isinstance(x, torch.Tensor):
            assert t is x
        else:
            assert t.dtype == torch.float64 and np.array_equal(t.numpy(), a)
    out = from_torch(as_numpy, tensors[0])
    if as_numpy:
        assert isinstance(out, np.ndarray) and np.array_equal(out, arrays[0])
    else:
        assert out is tensors[0]


@covers(to_torch)
@budget(20)
@given(data=st.data())
def test_to_torch_invalid(data):
    bad = data.draw(st.one_of(not_array(), st.just(torch.zeros(3, dtype=torch.long))))
    position = data.draw(st.integers(0, 2))
    inputs = [np.zeros(3), np.zeros(3), np.zeros(3)]
    inputs[position] = bad
    with raises_naming(f"x{position}"):
        to_torch(*inputs, names=("x0", "x1", "x2"))


@covers(cl.network_output)
@budget(20)
@given(P=st.integers(1, 4), L=sizes, V=sizes, batch=st.sampled_from([(), (2,)]), use_torch=st.booleans(),
       seed=st.integers(0, 2**32 - 1))
def test_network_output_valid(P, L, V, batch, use_torch, seed):
    rng = np.random.default_rng(seed)
    X, _ = cl.copy_task(P, L, V, rng)
    A, W = rng.normal(size=batch + (L, L)), rng.normal(size=batch + (V, V))
    F = cl.network_output(_as(X, use_torch), _as(A, use_torch), _as(W, use_torch))
    _check_out(F, batch + (P, L, V), use_torch)
    np.testing.assert_allclose(np.asarray(F), np.einsum("...lm,pmv,...vw->...plw", A, X, W), rtol=1e-12, atol=1e-12)


@covers(cl.network_output)
@budget(30)
@given(data=st.data())
def test_network_output_invalid(data):
    name = data.draw(st.sampled_from(["X", "A", "W"]))
    case = data.draw(st.sampled_from(["shape", "nonfinite", "kind"]))
    args = {"X": np.zeros((2, 3, 2)), "A": np.zeros((3, 3)), "W": np.zeros((2, 2))}
    if case == "shape":
        args[name] = {"X": np.zeros((3, 2)), "A": np.zeros((3, 4)), "W": np.zeros((3, 3))}[name]
    elif case == "nonfinite":
        args[name] = with_nonfinite(args[name], data)
    else:
        args[name] = data.draw(not_array())
    with raises_naming(name):
        cl.network_output(**args)


@covers(cl.prior_energy)
@budget(20)
@given(spec=specs(), batch=st.sampled_from([(), (3,)]), use_torch=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_prior_energy_valid(spec, batch, use_torch, seed):
    rng = np.random.default_rng(seed)
    g, b, W = rng.normal(size=batch + (spec.L, spec.L)), rng.normal(size=batch), rng.normal(size=batch + (spec.V,) * 2)
    e = cl.prior_energy(_as(g, use_torch), _as(b, use_torch), _as(W, use_torch), spec)
    _check_out(e, batch, use_torch)
    assert (np.asarray(e) >= 0).all()


@covers(cl.prior_energy)
@budget(30)
@given(data=st.data())
def test_prior_energy_invalid(data):
    spec = cl.ModelSpec(L=3, V=2)
    name = data.draw(st.sampled_from(["g", "b", "W", "spec"]))
    args = {"g": np.zeros((3, 3)), "b": np.zeros(()), "W": np.zeros((2, 2)), "spec": spec}
    if name == "spec":
        args["spec"] = data.draw(bad_spec())
    else:
        case = data.draw(st.sampled_from(["shape", "nonfinite", "kind"]))
        if case == "shape":
            args[name] = {"g": np.zeros((4, 4)), "b": np.zeros(2), "W": np.zeros((3, 3))}[name]
        elif case == "nonfinite":
            args[name] = with_nonfinite(args[name], data)
        else:
            args[name] = data.draw(not_array())
    with raises_naming(name):
        cl.prior_energy(**args)


# --------------------------------------------------------------------------
# statistics
# --------------------------------------------------------------------------


@covers(cl.cooccurrence, cl.sample_size, cl.readout_moments, cl.target_energy, cl.sum_squared_error)
@budget(25)
@given(spec=specs(), P=st.integers(1, 6), batch=st.sampled_from([(), (2,)]), use_torch=st.booleans(),
       seed=st.integers(0, 2**32 - 1))
def test_statistics_valid(spec, P, batch, use_torch, seed):
    rng = np.random.default_rng(seed)
    L, V = spec.L, spec.V
    X = np.stack([cl.copy_task(P, L, V, rng, cyclic=spec.cyclic)[0] for _ in range(math.prod(batch))])
    X = X.reshape(batch + (P, L, V))
    C = cl.cooccurrence(_as(X, use_torch))
    _check_out(C, batch + (L, L, V, V), use_torch)
    n = cl.sample_size(C)
    _check_out(n, batch, use_torch)
    assert np.array_equal(np.asarray(n), np.full(batch, float(P)))
    A = cl.attention(rng.normal(size=batch + (L, L)), spec.kind)
    W = rng.normal(size=batch + (V, V))
    T = _as(spec.target, use_torch)
    K, B, y2 = cl.readout_moments(_as(A, use_torch), C, T)
    _check_out(K, batch + (V, V), use_torch)
    _check_out(B, batch + (V, V), use_torch)
    _check_out(y2, batch, use_torch)
    _check_out(cl.target_energy(C, T), batch, use_torch)
    sse = cl.sum_squared_error(_as(A, use_torch), _as(W, use_torch), C, T)
    _check_out(sse, batch, use_torch)
    direct = ((np.einsum("...lm,...pmv,...vw->...plw", A, X, W)
               - np.einsum("lm,...pmv->...plv", spec.target, X)) ** 2).sum((-1, -2, -3))
    # the dual form subtracts terms of size ~P L |W|^2: rounding of that size is the tolerance
    np.testing.assert_allclose(np.asarray(sse), direct, rtol=1e-10, atol=1e-10 * P * L * (1 + (W**2).sum()))
    with_y2 = cl.sum_squared_error(_as(A, use_torch), _as(W, use_torch), C, T, y2=y2)
    np.testing.assert_allclose(np.asarray(with_y2), np.asarray(sse), rtol=1e-13, atol=1e-12)


def _stat_args():
    X = cl.copy_task(2, 3, 2, np.random.default_rng(0))[0]
    return {"A": np.eye(3), "W": np.eye(2), "C": cl.cooccurrence(X), "T": cl.shift_matrix(3), "X": X}


_WRONG_SHAPES = {"A": np.eye(4), "W": np.zeros((2, 3)), "C": np.zeros((3, 3, 2)), "T": np.eye(4), "X": np.zeros((3, 2)),
                 "M": np.zeros((2, 3))}


@covers(cl.cooccurrence, cl.sample_size, cl.readout_moments, cl.target_energy, cl.sum_squared_error,
        cl.token_moment)
@budget(80)
@given(data=st.data())
def test_statistics_invalid(data):
    funcs = {
        "cooccurrence": ("X",), "sample_size": ("C",), "readout_moments": ("A", "C", "T"),
        "target_energy": ("C", "T"), "sum_squared_error": ("A", "W", "C", "T"), "token_moment": ("M", "V"),
    }
    which = data.draw(st.sampled_from(sorted(funcs)))
    params = funcs[which]
    base = _stat_args()
    base["M"] = np.eye(3)
    args = {p: base[p] for p in params if p != "V"}
    if which == "token_moment":
        args["V"] = 2
    name = data.draw(st.sampled_from(params))
    if name == "V":
        args["V"] = data.draw(bad_ints(2))
    else:
        case = data.draw(st.sampled_from(["shape", "nonfinite", "kind"]))
        if case == "shape":
            args[name] = _WRONG_SHAPES[name]
        elif case == "nonfinite":
            args[name] = with_nonfinite(args[name], data)
        else:
            args[name] = data.draw(not_array())
    with raises_naming(name):
        getattr(cl, which)(**args)


@covers(BatchedReadoutMoments)
@budget(25)
@given(spec=specs(), R=st.integers(1, 4), shared=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_batched_readout_moments_match_readout_moments_and_autograd(spec, R, shared, seed):
    rng = np.random.default_rng(seed)
    L, V = spec.L, spec.V
    n_data = 1 if shared else R
    C = torch.as_tensor(np.stack([cl.cooccurrence(cl.copy_task(3, L, V, rng, cyclic=spec.cyclic)[0])
                                  for _ in range(n_data)]))
    C = C[0] if shared else C
    products = BatchedReadoutMoments(C, R, spec.cyclic)
    G = torch.as_tensor(rng.normal(size=(R, L, L)))
    A = attention_kind(spec.kind).forward(G, False)
    K, B = products.moments(A)
    K_ref, B_ref, _ = cl.readout_moments(A, C, torch.as_tensor(spec.target))
    np.testing.assert_allclose(K.numpy(), K_ref.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(B.numpy(), B_ref.numpy(), rtol=1e-12, atol=1e-12)
    dK = torch.as_tensor(rng.normal(size=(R, V, V)))
    dK = dK + dK.transpose(1, 2)  # the derivative by a symmetric K is symmetric
    dB = torch.as_tensor(rng.normal(size=(R, V, V)))
    A_ad = A.clone().requires_grad_(True)
    K_ad, B_ad = cl.readout_moments(A_ad, C, torch.as_tensor(spec.target))[:2]
    ((K_ad * dK).sum() + (B_ad * dB).sum()).backward()
    dA = products.backward(A, dK, dB)
    assert dA.shape == (R, L, L)
    np.testing.assert_allclose(dA.numpy(), A_ad.grad.numpy(), rtol=1e-10, atol=1e-10)


@covers(BatchedReadoutMoments)
@budget(30)
@given(data=st.data())
def test_batched_readout_moments_invalid(data):
    C = torch.as_tensor(_stat_args()["C"])
    args = {"C": C, "R": 2, "cyclic": True}
    name = data.draw(st.sampled_from(["C", "R", "cyclic"]))
    if name == "R":
        args["R"] = data.draw(bad_ints(1))
    elif name == "cyclic":
        args["cyclic"] = data.draw(not_bool())
    else:
        case = data.draw(st.sampled_from(["numpy", "int tensor", "shape", "runs", "nonfinite"]))
        args["C"] = {
            "numpy": C.numpy(),
            "int tensor": C.long(),
            "shape": C[..., :1],
            "runs": torch.stack([C, C, C]),  # 3 data sets for R = 2
            "nonfinite": torch.as_tensor(with_nonfinite(C.numpy(), data)),
        }[case]
    with raises_naming(name):
        BatchedReadoutMoments(**args)


@covers(cl.sum_squared_error)
@budget(15)
@given(data=st.data())
def test_sum_squared_error_invalid_y2(data):
    base = _stat_args()
    # None is the documented default ("compute it"), so it is not among the invalid values
    y2 = data.draw(st.one_of(not_array().filter(lambda v: v is not None),
                             st.sampled_from([math.nan, math.inf]).map(np.array)))
    with raises_naming("y2"):
        cl.sum_squared_error(base["A"], base["W"], base["C"], base["T"], y2=y2)


@covers(cl.token_moment)
@budget(20)
@given(n=sizes, V=sizes, batch=st.sampled_from([(), (3,)]), use_torch=st.booleans(), data=st.data())
def test_token_moment_valid(n, V, batch, use_torch, data):
    M = data.draw(finite_arrays(batch + (n, n)))
    E = cl.token_moment(_as(M, use_torch), V)
    _check_out(E, batch + (V, V), use_torch)
    # documented closed form: the diagonal carries tr M / V + off-diagonal part, sum = 1^T M 1 / V^0 ... checked by
    # its two eigenvalues: (tr M)/V on 1-perp and (1^T M 1)/V on 1
    # E = (tr M / V) I + ((1^T M 1 - tr M) / V^2) J: its trace and grand sum pin both coefficients
    E = np.asarray(E)
    tr, tot = np.trace(M, axis1=-2, axis2=-1), M.sum((-1, -2))
    scale = 1 + np.abs(M).sum()  # rounding of the sums that build E
    np.testing.assert_allclose(np.trace(E, axis1=-2, axis2=-1), tr + (tot - tr) / V, rtol=0, atol=1e-13 * scale)
    np.testing.assert_allclose(E.sum((-1, -2)), tot, rtol=0, atol=1e-13 * scale * V)


# --------------------------------------------------------------------------
# losses
# --------------------------------------------------------------------------


@covers(cl.expected_loss, cl.empirical_loss)
@budget(25)
@given(spec=specs(), P=st.integers(1, 5), batch=st.sampled_from([(), (2,)]), use_torch=st.booleans(),
       seed=st.integers(0, 2**32 - 1))
def test_losses_valid(spec, P, batch, use_torch, seed):
    rng = np.random.default_rng(seed)
    L, V = spec.L, spec.V
    A = cl.attention(2 * rng.normal(size=batch + (L, L)), spec.kind)
    W = rng.normal(size=batch + (V, V))
    T = spec.target
    e = cl.expected_loss(_as(A, use_torch), _as(W, use_torch), _as(T, use_torch))
    _check_out(e, batch, use_torch)
    # a mean of squares: >= 0 up to the rounding of the cancelling terms (~ |W|^2)
    assert (np.asarray(e) >= -1e-12 * (1 + (W**2).sum())).all()
    C = cl.cooccurrence(cl.copy_task(P, L, V, rng, cyclic=spec.cyclic)[0])
    emp = cl.empirical_loss(_as(A, use_torch), _as(W, use_torch), _as(C, use_torch), _as(T, use_torch))
    _check_out(emp, batch, use_torch)
    assert (np.asarray(emp) >= -1e-12 * (1 + (W**2).sum())).all()


@covers(cl.expected_loss, cl.empirical_loss)
@budget(50)
@given(data=st.data())
def test_losses_invalid(data):
    which = data.draw(st.sampled_from(["expected_loss", "empirical_loss"]))
    params = ("A", "W", "T") if which == "expected_loss" else ("A", "W", "C", "T")
    base = _stat_args()
    args = {p: base[p] for p in params}
    name = data.draw(st.sampled_from(params))
    case = data.draw(st.sampled_from(["shape", "nonfinite", "kind"]))
    if case == "shape":
        args[name] = _WRONG_SHAPES[name]
    elif case == "nonfinite":
        args[name] = with_nonfinite(args[name], data)
    else:
        args[name] = data.draw(not_array())
    with raises_naming(name):
        getattr(cl, which)(**args)


@covers(cl.constant_predictor, cl.uniform_pooling, cl.perfect_copy, cl.constant_predictor_loss,
        cl.uniform_pooling_loss, cl.perfect_copy_loss)
@budget(20)
@given(L=st.integers(2, 12), V=st.integers(2, 12))
def test_reference_predictors_valid(L, V):
    T = cl.shift_matrix(L)
    for make, loss in ((cl.constant_predictor, cl.constant_predictor_loss(V)),
                       (cl.uniform_pooling, cl.uniform_pooling_loss(L, V)),
                       (lambda L, V: cl.perfect_copy(L, V), cl.perfect_copy_loss())):
        A, W = make(L, V)
        assert A.shape == (L, L) and W.shape == (V, V) and A.dtype == W.dtype == np.float64
        assert isinstance(loss, float) and 0 <= loss < 1
        # the documented exact losses are the population losses of the predictors
        assert float(cl.expected_loss(A, W, T)) == pytest.approx(loss, abs=1e-13)
    A, W = cl.perfect_copy(L, V, cyclic=False)
    assert np.array_equal(A, cl.shift_matrix(L, False))


@covers(cl.constant_predictor, cl.uniform_pooling, cl.perfect_copy, cl.constant_predictor_loss,
        cl.uniform_pooling_loss)
@budget(40)
@given(data=st.data())
def test_reference_predictors_invalid(data):
    which = data.draw(st.sampled_from(["constant_predictor", "uniform_pooling", "perfect_copy",
                                       "constant_predictor_loss", "uniform_pooling_loss"]))
    params = {"constant_predictor_loss": ("V",), "perfect_copy": ("L", "V", "cyclic")}.get(which, ("L", "V"))
    args = {"L": 4, "V": 3, "cyclic": True}
    args = {p: args[p] for p in params}
    name = data.draw(st.sampled_from(params))
    args[name] = data.draw(not_bool() if name == "cyclic" else bad_ints(2))
    with raises_naming(name):
        getattr(cl, which)(**args)


# --------------------------------------------------------------------------
# config
# --------------------------------------------------------------------------


class _scale_env:
    """Set COPYHEAD_SCALE inside a with-block and restore it (a fixture would span all examples)."""

    def __init__(self, value):
        self.value = value

    def __enter__(self):
        self.old = os.environ.get("COPYHEAD_SCALE")
        os.environ["COPYHEAD_SCALE"] = self.value

    def __exit__(self, *exc):
        if self.old is None:
            os.environ.pop("COPYHEAD_SCALE", None)
        else:
            os.environ["COPYHEAD_SCALE"] = self.old


@covers(config.scale, config.by_scale)
@budget(10)
@given(value=st.sampled_from(["default", "paper", "PAPER", " paper ", "Default", ""]))
def test_config_valid(value):
    with _scale_env(value):
        s = config.scale()
        assert s in config.SCALES
        assert config.by_scale("d", "p") == ("p" if s == "paper" else "d")


@covers(config.scale, config.by_scale)
@budget(10)
@given(value=st.text(st.characters(blacklist_categories=["Cs", "Cc"]), min_size=1, max_size=6)
       .filter(lambda v: v.strip().lower() not in ("", "default", "paper")))
def test_config_invalid(value):
    with _scale_env(value):
        with raises_naming("COPYHEAD_SCALE", ValueError):
            config.scale()
        with raises_naming("COPYHEAD_SCALE", ValueError):
            config.by_scale(1, 2)


# --------------------------------------------------------------------------
# transitions
# --------------------------------------------------------------------------


@covers(transitions.geometric_grid)
@budget(30)
@given(P_min=st.integers(1, 10**6), span=st.integers(1, 10**6), n=st.integers(2, 200))
def test_geometric_grid_valid(P_min, span, n):
    P_max = P_min + span
    grid = transitions.geometric_grid(P_min, P_max, n)
    assert grid.ndim == 1 and 1 <= grid.size <= n and np.issubdtype(grid.dtype, np.integer)
    assert grid[0] == P_min and grid[-1] == P_max and (np.diff(grid) > 0).all()


@covers(transitions.geometric_grid)
@budget(30)
@given(data=st.data())
def test_geometric_grid_invalid(data):
    name = data.draw(st.sampled_from(["P_min", "P_max", "n"]))
    args = {"P_min": 2, "P_max": 50, "n": 5}
    if name == "P_max" and data.draw(st.booleans()):
        args["P_max"] = data.draw(st.integers(1, 2))  # not above P_min
    else:
        args[name] = data.draw(bad_ints(2 if name == "n" else 1))
    with raises_naming(name):
        transitions.geometric_grid(**args)


@covers(transitions.largest_drop, transitions.step_concentration)
@budget(30)
@given(values=st.lists(st.floats(-1e6, 1e6), min_size=2, max_size=20))
def test_drops_valid(values):
    i, drop = transitions.largest_drop(values)
    assert isinstance(i, int) and 0 <= i < len(values) - 1 and math.isfinite(drop)
    assert drop == pytest.approx(values[i] - values[i + 1], abs=0) and drop >= max(
        a - b for a, b in zip(values[:-1], values[1:]))
    if values[0] > values[-1]:
        c = transitions.step_concentration(values)
        assert isinstance(c, float) and 0 < c and math.isfinite(c)
        # the largest step can exceed the net change only when the curve also rises somewhere
        if all(a >= b for a, b in zip(values[:-1], values[1:])):
            assert c <= 1 + 1e-12


@covers(transitions.largest_drop, transitions.step_concentration)
@budget(30)
@given(data=st.data())
def test_drops_invalid(data):
    which = data.draw(st.sampled_from(["largest_drop", "step_concentration"]))
    name = "values" if which == "largest_drop" else "fine_values"
    bad = data.draw(st.sampled_from(["short", "2d", "nonfinite", "kind"] + (["rising"] if name != "values" else [])))
    value = {"short": [1.0], "2d": [[2.0, 1.0], [1.0, 0.0]], "nonfinite": [2.0, math.nan, 0.0],
             "kind": data.draw(not_array()), "rising": [0.0, 1.0, 2.0]}[bad]
    if bad == "kind" and isinstance(value, str) and value == "1.5":
        value = "ab"  # a numeric string would parse; the point here is a non-array
    with raises_naming(name):
        getattr(transitions, which)(value)


# --------------------------------------------------------------------------
# plotting
# --------------------------------------------------------------------------


@covers(plotting.reference_lines, plotting.loss_vs_sample_size, plotting.attention_heatmap)
@budget(3)
@given(L=st.integers(2, 8), V=st.integers(2, 8), n=st.integers(1, 5))
def test_plotting_valid(L, V, n):
    import matplotlib.pyplot as plt

    fig, (ax, ax2, ax3) = plt.subplots(1, 3)  # the heat map needs a linear axis
    try:
        assert plotting.reference_lines(ax, L, V) is ax
        P = np.geomspace(1, 100, n)
        assert plotting.loss_vs_sample_size(ax2, P, {"a": np.linspace(1, 0, n)}, L, V) is ax2
        assert plotting.attention_heatmap(ax3, np.eye(L), "t") is ax3
    finally:
        plt.close(fig)


@covers(plotting.reference_lines, plotting.loss_vs_sample_size, plotting.attention_heatmap)
@budget(10)
@given(data=st.data())
def test_plotting_invalid(data):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    try:
        which = data.draw(st.sampled_from(["reference_lines", "loss_vs_sample_size", "attention_heatmap"]))
        if which == "attention_heatmap":
            A = data.draw(st.sampled_from([np.zeros(3), np.zeros((2, 3, 3)), np.full((2, 2), np.nan), None]))
            with raises_naming("A"):
                plotting.attention_heatmap(ax, A)
            return
        name = data.draw(st.sampled_from(["L", "V"]))
        args = {"L": 4, "V": 3}
        args[name] = data.draw(bad_ints(2))
        with raises_naming(name):
            if which == "reference_lines":
                plotting.reference_lines(ax, **args)
            else:
                plotting.loss_vs_sample_size(ax, [1, 2], {"a": [1.0, 0.5]}, **args)
    finally:
        plt.close(fig)
