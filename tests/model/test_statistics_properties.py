"""Property tests of copylib.model.statistics: co-occurrence statistics, readout moments, errors.

Random valid arguments give finite output of the documented shape and dtype (numpy
in, numpy out; torch in, torch out); each kind of invalid argument raises ValueError
or TypeError naming the parameter.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import copylib as cl
from copylib.model.attention import attention_kind
from copylib.model.statistics import BatchedReadoutMoments

from props_helpers import (
    WRONG_SHAPES,
    as_input,
    bad_ints,
    budget,
    check_out,
    covers,
    finite_arrays,
    not_array,
    not_bool,
    raises_naming,
    sizes,
    specs,
    statistics_args,
    with_nonfinite,
)

pytestmark = pytest.mark.usefixtures("one_thread")  # tiny tensors: torch on one thread (tests/conftest.py)


@covers(cl.cooccurrence, cl.sample_size, cl.readout_moments, cl.target_energy, cl.sum_squared_error)
@budget(25)
@given(spec=specs(), P=st.integers(1, 6), batch=st.sampled_from([(), (2,)]), use_torch=st.booleans(),
       seed=st.integers(0, 2**32 - 1))
def test_statistics_valid(spec, P, batch, use_torch, seed):
    rng = np.random.default_rng(seed)
    L, V = spec.L, spec.V
    X = np.stack([cl.copy_task(P, L, V, rng, cyclic=spec.cyclic)[0] for _ in range(math.prod(batch))])
    X = X.reshape(batch + (P, L, V))
    C = cl.cooccurrence(as_input(X, use_torch))
    check_out(C, batch + (L, L, V, V), use_torch)
    n = cl.sample_size(C)
    check_out(n, batch, use_torch)
    assert np.array_equal(np.asarray(n), np.full(batch, float(P)))
    A = cl.attention(rng.normal(size=batch + (L, L)), spec.kind)
    W = rng.normal(size=batch + (V, V))
    T = as_input(spec.target, use_torch)
    K, B, y2 = cl.readout_moments(as_input(A, use_torch), C, T)
    check_out(K, batch + (V, V), use_torch)
    check_out(B, batch + (V, V), use_torch)
    check_out(y2, batch, use_torch)
    check_out(cl.target_energy(C, T), batch, use_torch)
    sse = cl.sum_squared_error(as_input(A, use_torch), as_input(W, use_torch), C, T)
    check_out(sse, batch, use_torch)
    direct = ((np.einsum("...lm,...pmv,...vw->...plw", A, X, W)
               - np.einsum("lm,...pmv->...plv", spec.target, X)) ** 2).sum((-1, -2, -3))
    # the dual form subtracts terms of size ~P L |W|^2: rounding of that size is the tolerance
    np.testing.assert_allclose(np.asarray(sse), direct, rtol=1e-10, atol=1e-10 * P * L * (1 + (W**2).sum()))
    with_y2 = cl.sum_squared_error(as_input(A, use_torch), as_input(W, use_torch), C, T, y2=y2)
    np.testing.assert_allclose(np.asarray(with_y2), np.asarray(sse), rtol=1e-13, atol=1e-12)


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
    base = statistics_args()
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
            args[name] = WRONG_SHAPES[name]
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
    C = torch.as_tensor(statistics_args()["C"])
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
    base = statistics_args()
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
    E = cl.token_moment(as_input(M, use_torch), V)
    check_out(E, batch + (V, V), use_torch)
    # documented closed form: the diagonal carries tr M / V + off-diagonal part, sum = 1^T M 1 / V^0 ... checked by
    # its two eigenvalues: (tr M)/V on 1-perp and (1^T M 1)/V on 1
    # E = (tr M / V) I + ((1^T M 1 - tr M) / V^2) J: its trace and grand sum pin both coefficients
    E = np.asarray(E)
    tr, tot = np.trace(M, axis1=-2, axis2=-1), M.sum((-1, -2))
    scale = 1 + np.abs(M).sum()  # rounding of the sums that build E
    np.testing.assert_allclose(np.trace(E, axis1=-2, axis2=-1), tr + (tot - tr) / V, rtol=0, atol=1e-13 * scale)
    np.testing.assert_allclose(E.sum((-1, -2)), tot, rtol=0, atol=1e-13 * scale * V)
