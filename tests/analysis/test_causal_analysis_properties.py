"""Property tests of copylib.analysis.causal."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from copylib.analysis import causal as ca
from props_helpers import budget, covers, nonfinite, raises_naming

seeds = st.integers(0, 2**32 - 1)


@covers(ca.half_way_points)
@budget(30)
@given(n=st.integers(2, 12), k=st.integers(1, 5), seed=seeds)
def test_half_way_points_valid(n, k, seed):
    rng = np.random.default_rng(seed)
    P = np.cumsum(rng.uniform(0.5, 50.0, size=n))
    profile = np.cumsum(rng.uniform(0.01, 1.0, size=(n, k)), axis=0)  # increasing columns
    h = ca.half_way_points(P, profile)
    assert h.shape == (k,) and np.isfinite(h).all()
    assert (h >= P[0] * (1 - 1e-12)).all() and (h <= P[-1] * (1 + 1e-12)).all()


@covers(ca.half_way_points)
@budget(20)
@given(which=st.sampled_from(["P", "profile"]), bad=nonfinite())
def test_half_way_points_invalid(which, bad):
    args = dict(P=np.array([1.0, 2.0, 4.0]), profile=np.array([[0.0], [0.5], [1.0]]))
    args[which] = args[which].copy()
    args[which][1] = bad
    with raises_naming(which):
        ca.half_way_points(**args)


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
