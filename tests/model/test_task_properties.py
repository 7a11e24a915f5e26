"""Property tests of copylib.model.task: the shift target, token sampling, one-hot coding, the copy task.

Random valid arguments give output of the documented shape and dtype; each kind of
invalid argument raises ValueError or TypeError naming the parameter.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import copylib as cl

from props_helpers import bad_ints, budget, covers, not_bool, raises_naming, sizes

pytestmark = pytest.mark.usefixtures("one_thread")  # tiny tensors: torch on one thread (tests/conftest.py)


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
