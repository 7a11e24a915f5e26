"""Property tests of copylib.model.network: ModelSpec, check_spec, attention, network output, prior energy.

Random valid arguments give finite output of the documented shape and dtype (numpy
in, numpy out; torch in, torch out); each kind of invalid argument raises ValueError
or TypeError naming the parameter.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import copylib as cl
from copylib.model.attention import attention_kinds
from copylib.model.network import check_spec, from_torch, to_torch

from props_helpers import (
    as_input,
    bad_ints,
    bad_positive,
    bad_spec,
    budget,
    check_out,
    covers,
    finite_arrays,
    not_array,
    not_bool,
    raises_naming,
    sizes,
    specs,
    with_nonfinite,
)

pytestmark = pytest.mark.usefixtures("one_thread")  # tiny tensors: torch on one thread (tests/conftest.py)


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
        args[name] = data.draw(bad_positive())
    with raises_naming(name):
        cl.ModelSpec(**args)


# Reasons and caller names as the theory modules pass them to check_spec.
reasons = st.sampled_from([None, "the reduced action assumes the cyclic target", "P3 is derived for cyclic data"])
theories = st.sampled_from(["this function", "the linear theory", "softmax_action"])


@covers(check_spec)
@budget(30)
@given(spec=specs(), require_kind=st.booleans(), because=reasons, theory=theories)
def test_check_spec_valid(spec, require_kind, because, theory):
    # the requirements a spec meets: its own kind (or any), cyclic whenever a reason is given
    if because is not None and not spec.cyclic:
        spec = dataclasses.replace(spec, cyclic=True)
    kind = spec.kind if require_kind else None
    assert check_spec(spec, kind=kind, cyclic_because=because, theory=theory) is spec


@covers(check_spec)
@budget(40)
@given(data=st.data(), theory=theories)
def test_check_spec_invalid(data, theory):
    case = data.draw(st.sampled_from(["not a spec", "kind", "cyclic"]))
    if case == "not a spec":
        with raises_naming("spec", TypeError):
            check_spec(data.draw(bad_spec()), theory=theory)
        return
    if case == "kind":
        spec = data.draw(specs())
        other = "linear" if spec.kind == "softmax" else "softmax"
        with raises_naming("spec.kind", ValueError) as info:
            check_spec(spec, kind=other, theory=theory)
        assert theory in str(info.value) and repr(other) in str(info.value)  # who needs which kind
        return
    spec = data.draw(specs(cyclic=st.just(False)))
    because = data.draw(reasons.filter(lambda r: r is not None))
    with raises_naming("spec.cyclic", ValueError) as info:
        check_spec(spec, kind=data.draw(st.sampled_from([None, spec.kind])), cyclic_because=because, theory=theory)
    assert because in str(info.value)  # why the caller needs the cyclic target


@covers(cl.attention_logits, cl.attention)
@budget(30)
@given(L=sizes, batch=st.sampled_from([(), (2,), (2, 3)]), kind=st.sampled_from(attention_kinds()),
       log_scale=st.floats(-3, 300), use_torch=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_attention_valid(L, batch, kind, log_scale, use_torch, seed):
    # logits up to 1e300: softmax must stay finite and row-stochastic, linear is G / L
    rng = np.random.default_rng(seed)
    g = rng.normal(size=batch + (L, L)) * 10.0 ** (log_scale / 10 if kind == "linear" else log_scale)
    b = rng.normal(size=batch)
    G = cl.attention_logits(as_input(g, use_torch), as_input(b, use_torch))
    check_out(G, batch + (L, L), use_torch)
    A = cl.attention(G, kind)
    check_out(A, batch + (L, L), use_torch)
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
    F = cl.network_output(as_input(X, use_torch), as_input(A, use_torch), as_input(W, use_torch))
    check_out(F, batch + (P, L, V), use_torch)
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
    e = cl.prior_energy(as_input(g, use_torch), as_input(b, use_torch), as_input(W, use_torch), spec)
    check_out(e, batch, use_torch)
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
