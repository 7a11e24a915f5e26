"""Property tests of copylib.analysis.transitions.steepest_rise (the other functions of the module are
covered in tests/test_properties_core.py)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from copylib.analysis import transitions
from props_helpers import budget, covers, not_array, raises_naming, with_nonfinite

seeds = st.integers(0, 2**32 - 1)


@covers(transitions.steepest_rise)
@budget(30)
@given(n=st.integers(2, 30), k=st.sampled_from([None, 1, 3]), seed=seeds)
def test_steepest_rise_valid(n, k, seed):
    rng = np.random.default_rng(seed)
    P = np.cumsum(rng.uniform(0.1, 5.0, size=n)) + rng.uniform(1e-3, 10.0)
    y = rng.normal(size=(n,) if k is None else (n, k))
    at = transitions.steepest_rise(P, y)
    assert np.shape(at) == (() if k is None else (k,))
    assert np.isin(at, P).all()
    # invariant under a constant offset and a positive rescaling of y, and under a common rescaling of P
    assert np.array_equal(transitions.steepest_rise(P, 4.0 * y + 7.0), at)
    assert np.allclose(transitions.steepest_rise(8.0 * P, y), 8.0 * np.asarray(at))


@covers(transitions.steepest_rise)
@budget(30)
@given(data=st.data())
def test_steepest_rise_invalid(data):
    args = dict(P=np.array([1.0, 2.0, 4.0]), y=np.array([0.0, 1.0, 3.0]))
    name = data.draw(st.sampled_from(["P", "y"]))
    bad = {"P": [np.array([1.0]), np.array([1.0, 1.0, 2.0]), np.array([-1.0, 1.0, 2.0]), np.zeros((3, 1))],
           "y": [np.zeros(2), np.zeros((3, 1, 1)), np.zeros((4, 2))]}[name]
    args[name] = data.draw(st.one_of(st.sampled_from(bad), not_array(),
                                     st.builds(lambda d: with_nonfinite(args[name].copy(), d), st.data())))
    with raises_naming(name):
        transitions.steepest_rise(**args)
