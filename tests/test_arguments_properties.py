"""Property tests of copylib.arguments, the argument checks every public function shares.

An accepted value comes back converted (``int``, ``float``, ``bool``, float64 array,
pair of floats) and equal to what was passed; every rejected value raises the
exception the module documents (``ValueError``, or ``TypeError`` for a wrong kind
of object) with a message that names the parameter (and, where there is one, the
allowed range).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, arrays

from copylib import arguments

from props_helpers import (
    bad_positive,
    budget,
    covers,
    finite_arrays,
    log_uniform,
    not_array,
    not_bool,
    raises_naming,
    with_nonfinite,
)

# Parameter names as copylib passes them; each check must repeat the one it was given.
names = st.sampled_from(["L", "V", "P", "n_steps", "P_min", "sigma_G", "omega", "rng", "fine_values"])

# Values of the wrong kind for a number: a TypeError, whatever the range.
NOT_NUMBERS = [None, "3", b"3", [3], (3,), {"x": 3}, 3 + 0j, 1j, True, False, np.bool_(True)]


def _names(message: str, word: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(word)}(?!\w)", message) is not None


# --------------------------------------------------------------------------
# scalars
# --------------------------------------------------------------------------


@covers(arguments.check_int)
@budget(40)
@given(name=names, minimum=st.integers(-5, 5), box=st.sampled_from([int, np.int64, np.int32, np.uint8]), data=st.data())
def test_check_int_accepts(name, minimum, box, data):
    top = 10**30 if box is int else int(np.iinfo(box).max)
    bottom = minimum if box is int else max(minimum, int(np.iinfo(box).min))
    value = data.draw(st.integers(bottom, top))
    out = arguments.check_int(name, box(value), minimum)
    assert type(out) is int and out == value


@covers(arguments.check_int)
@budget(60)
@given(name=names, minimum=st.integers(-5, 5), data=st.data())
def test_check_int_rejects(name, minimum, data):
    case = data.draw(st.sampled_from(["below", "real", "kind"]))
    if case == "below":
        value = data.draw(st.one_of(st.integers(max_value=minimum - 1),
                                    st.integers(minimum - 10**6, minimum - 1).map(np.int64)))
        exc = ValueError
    elif case == "real":  # a number, but not an integer
        value = data.draw(st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                                    st.floats(-1e6, 1e6).map(np.float64)))
        exc = ValueError
    else:
        value = data.draw(st.sampled_from(NOT_NUMBERS))
        exc = TypeError
    with raises_naming(name, exc) as info:
        arguments.check_int(name, value, minimum)
    assert f">= {minimum}" in str(info.value)  # the allowed range


@covers(arguments.check_positive)
@budget(40)
@given(name=names, allow_zero=st.booleans(), data=st.data())
def test_check_positive_accepts(name, allow_zero, data):
    value = data.draw(st.one_of(
        log_uniform(1e-300, 1e300),
        st.floats(min_value=5e-324, allow_infinity=False),  # down to the smallest subnormal
        st.integers(1, 10**300),
        st.floats(1e-30, 1e30).map(np.float64),
        st.floats(1e-30, 1e30).map(np.float32),
        st.integers(1, 2**62).map(np.int64),
        st.just(0.0) if allow_zero else st.nothing(),
        st.just(0) if allow_zero else st.nothing(),
    ))
    out = arguments.check_positive(name, value, allow_zero=allow_zero)
    assert type(out) is float and out == float(value)


@covers(arguments.check_positive)
@budget(60)
@given(name=names, allow_zero=st.booleans(), data=st.data())
def test_check_positive_rejects(name, allow_zero, data):
    value = data.draw(st.one_of(
        bad_positive().filter(lambda v: not (allow_zero and v == 0 and not isinstance(v, bool))),
        st.sampled_from(NOT_NUMBERS),
        st.floats(max_value=-5e-324).map(np.float64),
    ))
    numeric = isinstance(value, (int, float, np.floating, np.integer)) and not isinstance(value, (bool, np.bool_))
    with raises_naming(name, ValueError if numeric else TypeError) as info:
        arguments.check_positive(name, value, allow_zero=allow_zero)
    if numeric:
        assert (">= 0" if allow_zero else "> 0") in str(info.value)  # the allowed range


@covers(arguments.check_bool)
@budget(10)
@given(name=names, value=st.sampled_from([True, False, np.True_, np.False_]))
def test_check_bool_accepts(name, value):
    out = arguments.check_bool(name, value)
    assert type(out) is bool and out == bool(value)


@covers(arguments.check_bool)
@budget(20)
@given(name=names, value=st.one_of(not_bool(), st.sampled_from([np.array(True), "True", np.int64(1)])))
def test_check_bool_rejects(name, value):
    with raises_naming(name, TypeError):
        arguments.check_bool(name, value)


@covers(arguments.check_generator)
@budget(10)
@given(name=names, seed=st.integers(0, 2**32 - 1), kind=st.sampled_from(["numpy", "torch"]))
def test_check_generator_accepts(name, seed, kind):
    rng = np.random.default_rng(seed) if kind == "numpy" else torch.Generator().manual_seed(seed)
    assert arguments.check_generator(name, rng, kind) is rng


@covers(arguments.check_generator)
@budget(20)
@given(name=names, kind=st.sampled_from(["numpy", "torch"]),
       other=st.sampled_from(["other kind", "legacy", "seed", "None"]))
def test_check_generator_rejects(name, kind, other):
    wrong = {"other kind": torch.Generator() if kind == "numpy" else np.random.default_rng(0),
             "legacy": np.random.RandomState(0), "seed": 0, "None": None}[other]
    with raises_naming(name, TypeError):
        arguments.check_generator(name, wrong, kind)


# --------------------------------------------------------------------------
# arrays
# --------------------------------------------------------------------------


real_dtypes = st.sampled_from([np.float64, np.float32, np.int64, np.int8, np.uint16, np.bool_])


@covers(arguments.as_real_array)
@budget(40)
@given(name=names, data=st.data(), form=st.sampled_from(["array", "list", "scalar"]))
def test_as_real_array_accepts(name, data, form):
    dtype = data.draw(real_dtypes)
    raw = data.draw(arrays(dtype, array_shapes(min_dims=0, max_dims=3, max_side=4)))  # NaN and inf included
    value = {"array": raw, "list": raw.tolist(), "scalar": raw.reshape(-1)[:1].sum().item()}[form]
    if isinstance(value, bool):  # a 0-d boolean array as a scalar
        value = int(value)  # a bare bool is refused on purpose (test_as_real_array_rejects)
    out = arguments.as_real_array(name, value)
    assert isinstance(out, np.ndarray) and out.dtype == np.float64
    assert np.array_equal(out, np.asarray(value, dtype=np.float64), equal_nan=True)


@covers(arguments.as_real_array)
@budget(40)
@given(name=names, value=st.one_of(
    not_array(),
    st.sampled_from([True, np.bool_(False), b"1.0", np.array([1 + 2j]), np.array([1.0], dtype=object),
                     np.array(["2026-01-01"], dtype="datetime64[D]"), [[1.0], [2.0, 3.0]], [1.0, "a"]]),
))
def test_as_real_array_rejects(name, value):
    ragged = isinstance(value, list) and len({len(v) if isinstance(v, list) else -1 for v in value}) > 1
    with raises_naming(name, ValueError if ragged else TypeError):
        arguments.as_real_array(name, value)


@covers(arguments.check_finite)
@budget(40)
@given(name=names, use_torch=st.booleans(), data=st.data())
def test_check_finite_accepts(name, use_torch, data):
    # up to the largest doubles: a sum that overflows must not count as infinite entries
    big = np.finfo(np.float64).max
    array = data.draw(finite_arrays(array_shapes(min_dims=0, max_dims=3, max_side=4), lo=-big, hi=big))
    assert arguments.check_finite(name, torch.as_tensor(array) if use_torch else array) is None


@covers(arguments.check_finite)
@budget(40)
@given(name=names, use_torch=st.booleans(), data=st.data())
def test_check_finite_rejects(name, use_torch, data):
    array = with_nonfinite(data.draw(finite_arrays(array_shapes(min_dims=0, max_dims=3, max_side=4))), data)
    with raises_naming(name, ValueError):
        arguments.check_finite(name, torch.as_tensor(array) if use_torch else array)


@covers(arguments.check_attention)
@budget(40)
@given(name=names, L=st.integers(2, 5), batch=st.lists(st.integers(1, 3), max_size=2), use_torch=st.booleans(),
       give_L=st.booleans(), data=st.data())
def test_check_attention_accepts_square_finite_matrices(name, L, batch, use_torch, give_L, data):
    A = data.draw(finite_arrays(st.just(tuple(batch) + (L, L))))
    A = torch.as_tensor(A) if use_torch else A
    assert arguments.check_attention(name, A, L if give_L else None, batched=bool(batch) or data.draw(st.booleans())) == L


@covers(arguments.check_attention)
@budget(40)
@given(name=names, L=st.integers(2, 5), use_torch=st.booleans(), data=st.data())
def test_check_attention_rejects(name, L, use_torch, data):
    """Not square, L < 2, a batch where none is allowed, the wrong L, or a non-finite entry: each names ``name``."""
    fault = data.draw(st.sampled_from(["not square", "L < 2", "batched", "wrong L", "non-finite", "1-d"]))
    shape, batched, want = {"not square": ((L, L + 1), True, None), "L < 2": ((1, 1), True, None),
                            "batched": ((2, L, L), False, None), "wrong L": ((L, L), True, L + 1),
                            "non-finite": ((L, L), True, None), "1-d": ((L,), True, None)}[fault]
    A = np.zeros(shape)
    if fault == "non-finite":
        A = with_nonfinite(A, data)
    with raises_naming(name, ValueError):
        arguments.check_attention(name, torch.as_tensor(A) if use_torch else A, want, batched=batched)


@st.composite
def shapes_and_arrays(draw):
    """A pattern (sizes or None = any), and the shape of an array that matches it (with batch dimensions)."""
    pattern = tuple(draw(st.lists(st.one_of(st.none(), st.integers(0, 4)), min_size=1, max_size=3)))
    batch = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    matching = batch + tuple(draw(st.integers(0, 4)) if s is None else s for s in pattern)
    return pattern, matching


@covers(arguments.check_shape)
@budget(40)
@given(name=names, case=shapes_and_arrays(), use_torch=st.booleans(), source=st.sampled_from([None, "X"]))
def test_check_shape_accepts(name, case, use_torch, source):
    pattern, shape = case
    array = torch.zeros(shape) if use_torch else np.zeros(shape)
    assert arguments.check_shape(name, array, pattern, source=source) is None


@covers(arguments.check_shape)
@budget(40)
@given(name=names, case=shapes_and_arrays(), use_torch=st.booleans(), source=st.sampled_from([None, "X", "A and C"]),
       data=st.data())
def test_check_shape_rejects(name, case, use_torch, source, data):
    pattern, shape = case
    fixed = [i for i, s in enumerate(pattern) if s is not None]
    if fixed and data.draw(st.booleans(), label="wrong size"):
        i = len(shape) - len(pattern) + data.draw(st.sampled_from(fixed))
        shape = shape[:i] + (shape[i] + data.draw(st.integers(1, 3)),) + shape[i + 1:]
    else:  # too few dimensions
        shape = shape[len(shape) - len(pattern) + 1:]
    array = torch.zeros(shape) if use_torch else np.zeros(shape)
    with raises_naming(name, ValueError) as info:
        arguments.check_shape(name, array, pattern, source=source)
    if source is not None:  # either argument may be the wrong one: both are named
        assert source in str(info.value)


@covers(arguments.check_P_range)
@budget(40)
@given(P_min=log_uniform(1e-300, 1e300), ratio=log_uniform(1 + 1e-9, 1e6),
       form=st.sampled_from([tuple, list, np.array, "ints"]))
def test_check_P_range_accepts(P_min, ratio, form):
    P_max = P_min * ratio
    assume(math.isfinite(P_max) and P_max > P_min)
    if form == "ints":
        P_min, P_max = math.ceil(P_min), math.ceil(P_max) + 1
        value = (P_min, P_max)
    else:
        value = form([P_min, P_max])
    out = arguments.check_P_range(value)
    assert type(out) is tuple and all(type(x) is float for x in out)
    assert out == (float(P_min), float(P_max))


@covers(arguments.check_P_range)
@budget(60)
@given(data=st.data())
def test_check_P_range_rejects(data):
    case = data.draw(st.sampled_from(["order", "sign", "nonfinite", "length", "kind"]))
    positive = st.floats(1e-6, 1e6)
    if case == "order":  # P_min >= P_max
        a = data.draw(positive)
        value = (a, data.draw(st.floats(1e-7, a)))
    elif case == "sign":
        value = (data.draw(st.floats(max_value=0.0)), data.draw(positive))
    elif case == "nonfinite":
        value = [1.0, 10.0]
        value[data.draw(st.integers(0, 1))] = data.draw(st.sampled_from([math.nan, math.inf, -math.inf]))
    elif case == "length":
        value = data.draw(st.lists(positive, max_size=4).filter(lambda v: len(v) != 2))
    else:
        value = data.draw(st.sampled_from([None, 5.0, ("a", "b"), (None, 2.0), ([1.0], 2.0), {"P": 1}]))
    with raises_naming("P_range", ValueError):
        arguments.check_P_range(value)


@covers(arguments.check_positive, arguments.check_P_range)
@budget(20)
@given(name=names, exponent=st.integers(309, 2000), sign=st.sampled_from([1, -1]))
def test_integers_beyond_the_float_range_are_rejected_by_name(name, exponent, sign):
    # float(10**400) raises OverflowError: the checks turn it into the documented ValueError
    with raises_naming(name, ValueError):
        arguments.check_positive(name, sign * 10**exponent)
    with raises_naming("P_range", ValueError):
        arguments.check_P_range((1, sign * 10**exponent))


@covers(arguments.check_P_range)
@given(text=st.sampled_from(["12", "19", b"12", "1e3"]))
def test_a_string_is_not_a_P_range(text):
    with raises_naming("P_range", ValueError):
        arguments.check_P_range(text)


@covers(arguments.check_generator)
@given(kind=st.one_of(st.text(max_size=6).filter(lambda k: k not in ("numpy", "torch")), st.none()))
def test_check_generator_rejects_an_unknown_kind(kind):
    with raises_naming("kind", ValueError):
        arguments.check_generator("rng", np.random.default_rng(0), kind=kind)


# --------------------------------------------------------------------------
# theory versions, finite arrays, sample sizes
# --------------------------------------------------------------------------

version_sets = st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=4, unique=True).map(tuple)


@covers(arguments.check_version)
@budget(40)
@given(versions=version_sets, data=st.data())
def test_check_version_accepts_and_rejects(versions, data):
    good = data.draw(st.sampled_from(versions))
    assert arguments.check_version(good, versions) == good
    bad = data.draw(st.one_of(st.text(max_size=8).filter(lambda s: s not in versions), not_array(), st.none()))
    with raises_naming("version", ValueError):
        arguments.check_version(bad, versions)


@covers(arguments.as_finite_array)
@budget(40)
@given(name=names, sign=st.sampled_from(["any", "positive", "nonnegative"]), data=st.data())
def test_as_finite_array_accepts_and_rejects(name, sign, data):
    lo = {"any": -5.0, "positive": 1e-3, "nonnegative": 0.0}[sign]
    array = data.draw(finite_arrays(array_shapes(min_dims=0, max_dims=3, max_side=4), lo=lo, hi=5.0))
    flags = {"positive": sign == "positive", "nonnegative": sign == "nonnegative"}
    out = arguments.as_finite_array(name, array, **flags)
    assert out.dtype == np.float64 and np.array_equal(out, array)
    with raises_naming(name, ValueError):
        arguments.as_finite_array(name, with_nonfinite(array, data), **flags)
    if sign != "any":
        wrong = array.copy().reshape(-1)
        wrong[0] = -1.0 if sign == "nonnegative" else 0.0
        with raises_naming(name, ValueError):
            arguments.as_finite_array(name, wrong, **flags)


@covers(arguments.check_P)
@budget(40)
@given(data=st.data())
def test_check_P_accepts_and_rejects(data):
    P = data.draw(finite_arrays(array_shapes(min_dims=0, max_dims=2, max_side=4), lo=1.0, hi=1e6))
    assert np.array_equal(arguments.check_P(P), P)
    assert np.array_equal(arguments.check_P(P, name="P_grid"), P)
    bad = P.copy().reshape(-1)
    bad[0] = data.draw(st.sampled_from([0.0, -1.0, np.nan, np.inf]))
    with raises_naming("P_grid", ValueError):
        arguments.check_P(bad, name="P_grid")


@covers(arguments.check_P_values)
@budget(40)
@given(n=st.integers(1, 6), data=st.data())
def test_check_P_values_accepts_and_rejects(n, data):
    P = data.draw(finite_arrays((n,), lo=1.0, hi=1e6))
    assert np.array_equal(arguments.check_P_values(P), P)
    with raises_naming("P_grid", ValueError):  # a grid is 1-d and non-empty
        arguments.check_P_values(data.draw(st.sampled_from([P.reshape(1, -1), P[:0], np.float64(P[0])])),
                                 name="P_grid")
    bad = P.copy()
    bad[data.draw(st.integers(0, n - 1))] = data.draw(st.sampled_from([0.0, -1.0, np.nan, np.inf]))
    with raises_naming("P_values", ValueError):
        arguments.check_P_values(bad)


@covers(arguments.as_paired_arrays)
@budget(40)
@given(n=st.integers(2, 6), extra=st.integers(1, 3), data=st.data())
def test_as_paired_arrays_accepts_and_rejects(n, extra, data):
    x, y = data.draw(finite_arrays((n,))), data.draw(finite_arrays((n,)))
    a, b = arguments.as_paired_arrays("P", x, "log_odds", y)
    assert np.array_equal(a, x) and np.array_equal(b, y) and a.dtype == b.dtype == np.float64
    for x_bad, y_bad in ((x, np.resize(y, n + extra)), (x[:1], y[:1]), (x.reshape(1, -1), y.reshape(1, -1))):
        with raises_naming("log_odds", ValueError):
            arguments.as_paired_arrays("P", x_bad, "log_odds", y_bad)
    with raises_naming("log_odds", ValueError):  # a NaN is named by its parameter
        arguments.as_paired_arrays("P", x, "log_odds", with_nonfinite(y, data))
    with pytest.raises(ValueError, match="length >= 4"):
        arguments.as_paired_arrays("P", x[:3], "log_odds", y[:3], min_size=4)


# --------------------------------------------------------------------------
# grids and integer arrays
# --------------------------------------------------------------------------


@covers(arguments.check_grid)
@budget(40)
@given(name=names, n_min=st.integers(1, 4), positive=st.booleans(), increasing=st.booleans(), data=st.data())
def test_check_grid_accepts(name, n_min, positive, increasing, data):
    n = data.draw(st.integers(n_min, 8))
    lo = 0.5 if positive else -5.0
    steps = data.draw(finite_arrays((n,), 0.1, 2.0))   # increasing: cumulative positive steps
    values = lo + np.cumsum(steps) if increasing else data.draw(finite_arrays((n,), lo, 5.0))
    form = data.draw(st.sampled_from([np.asarray, list]))
    out = arguments.check_grid(name, form(values), n_min=n_min, positive=positive, increasing=increasing)
    assert out.dtype == np.float64 and out.shape == (n,) and np.array_equal(out, values)


@covers(arguments.check_grid)
@budget(60)
@given(name=names, n_min=st.integers(1, 4), data=st.data())
def test_check_grid_rejects(name, n_min, data):
    good = np.arange(1.0, n_min + 3.0)
    case = data.draw(st.sampled_from(["short", "2d", "nonfinite", "sign", "order", "kind"]))
    kwargs = {"n_min": n_min}
    if case == "short":
        value = good[:n_min - 1]
    elif case == "2d":
        value = good.reshape(1, -1)
    elif case == "nonfinite":
        value = with_nonfinite(good, data)
    elif case == "sign":
        value, kwargs["positive"] = good - good[data.draw(st.integers(0, good.size - 1))], True
    elif case == "order":
        value, kwargs["increasing"] = good[::-1].copy(), True
        value[-1] = value[0] if n_min == 1 else value[-1]   # a repeat is not strictly increasing either
    else:
        value = data.draw(not_array())
    with raises_naming(name):
        arguments.check_grid(name, value, **kwargs)


@covers(arguments.check_int_array)
@budget(40)
@given(name=names, minimum=st.integers(-3, 3), increasing=st.booleans(), data=st.data())
def test_check_int_array_accepts(name, minimum, increasing, data):
    n = data.draw(st.integers(1, 6))
    if increasing:
        values = minimum + np.cumsum(data.draw(st.lists(st.integers(1, 5), min_size=n, max_size=n))) - 1
    else:
        values = np.array(data.draw(st.lists(st.integers(minimum, minimum + 20), min_size=n, max_size=n)))
    form = data.draw(st.sampled_from([np.asarray, list, tuple]))
    out = arguments.check_int_array(name, form(values.tolist()), minimum, increasing=increasing)
    assert out.dtype == np.int64 and np.array_equal(out, values)


@covers(arguments.check_int_array)
@budget(60)
@given(name=names, minimum=st.integers(-3, 3), data=st.data())
def test_check_int_array_rejects(name, minimum, data):
    case = data.draw(st.sampled_from(["empty", "2d", "below", "real", "order", "kind"]))
    value, kwargs = [minimum, minimum + 1], {}
    if case == "empty":
        value = []
    elif case == "2d":
        value = [[minimum, minimum + 1]]
    elif case == "below":
        value = [minimum, minimum - data.draw(st.integers(1, 5))]
    elif case == "real":
        value = [minimum, data.draw(st.sampled_from([minimum + 0.5, math.nan, math.inf]))]
    elif case == "order":
        value, kwargs["increasing"] = [minimum + 1, minimum + data.draw(st.integers(0, 1))], True
    else:
        value = data.draw(st.sampled_from([None, "abc", [[1], [1, 2]], [None, 1]]))
    with raises_naming(name):
        arguments.check_int_array(name, value, minimum, **kwargs)


class _Result:
    """A stand-in for a result class that a function consumes."""


class _Other:
    pass


@covers(arguments.check_instance)
@budget(20)
@given(name=names, cls=st.sampled_from([_Result, _Other, np.random.Generator, dict]), data=st.data())
def test_check_instance(name, cls, data):
    good = {_Result: _Result(), _Other: _Other(), np.random.Generator: np.random.default_rng(0), dict: {}}
    assert arguments.check_instance(name, good[cls], cls) is good[cls]
    bad = data.draw(st.sampled_from([v for v in [*good.values(), *NOT_NUMBERS] if not isinstance(v, cls)]))
    with raises_naming(name, TypeError) as info:
        arguments.check_instance(name, bad, cls)
    article = "an" if cls.__name__[0] in "aeiouAEIOU" else "a"
    assert f"must be {article} {cls.__name__}, got {type(bad).__name__}" in str(info.value)
