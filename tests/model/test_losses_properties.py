"""Property tests of copylib.model.losses: population and empirical losses, reference predictors.

Random valid arguments give finite output of the documented shape and dtype (numpy
in, numpy out; torch in, torch out); each kind of invalid argument raises ValueError
or TypeError naming the parameter.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import copylib as cl

from props_helpers import (
    WRONG_SHAPES,
    as_input,
    bad_ints,
    budget,
    check_out,
    covers,
    not_array,
    not_bool,
    raises_naming,
    specs,
    statistics_args,
    with_nonfinite,
)

pytestmark = pytest.mark.usefixtures("one_thread")  # tiny tensors: torch on one thread (tests/conftest.py)


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
    e = cl.expected_loss(as_input(A, use_torch), as_input(W, use_torch), as_input(T, use_torch))
    check_out(e, batch, use_torch)
    # a mean of squares: >= 0 up to the rounding of the cancelling terms (~ |W|^2)
    assert (np.asarray(e) >= -1e-12 * (1 + (W**2).sum())).all()
    C = cl.cooccurrence(cl.copy_task(P, L, V, rng, cyclic=spec.cyclic)[0])
    emp = cl.empirical_loss(as_input(A, use_torch), as_input(W, use_torch), as_input(C, use_torch), as_input(T, use_torch))
    check_out(emp, batch, use_torch)
    assert (np.asarray(emp) >= -1e-12 * (1 + (W**2).sum())).all()


@covers(cl.expected_loss, cl.empirical_loss)
@budget(50)
@given(data=st.data())
def test_losses_invalid(data):
    which = data.draw(st.sampled_from(["expected_loss", "empirical_loss"]))
    params = ("A", "W", "T") if which == "expected_loss" else ("A", "W", "C", "T")
    base = statistics_args()
    args = {p: base[p] for p in params}
    name = data.draw(st.sampled_from(params))
    case = data.draw(st.sampled_from(["shape", "nonfinite", "kind"]))
    if case == "shape":
        args[name] = WRONG_SHAPES[name]
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
