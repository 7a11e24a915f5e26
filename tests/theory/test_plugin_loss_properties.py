"""Property tests: copylib.theory.plugin_loss.

Valid random arguments give finite output of the broadcast shape within the bounds of
a mean of squares; invalid ones raise ValueError/TypeError naming the parameter.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import copylib as cl
from copylib.theory import plugin_loss as pl

from props_helpers import assert_finite, bad_spec, budget, covers, log_uniform, raises_naming, specs

any_specs = specs(L=st.integers(2, 16), V=st.integers(2, 5))
softmax_specs = specs("softmax", L=st.integers(2, 16), V=st.integers(2, 5))
Ps = log_uniform(1e-3, 1e6)
seeds = st.integers(0, 2**32 - 1)


@covers(pl.plugin_loss)
@budget(20)
@given(spec=any_specs, P=Ps, seed=seeds, batch=st.sampled_from([(), (3,)]))
def test_plugin_loss_valid(spec, P, seed, batch):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=batch + (spec.L, spec.L)) / spec.L
    loss = pl.plugin_loss(*cl.invariants(A, spec.cyclic), P, spec)
    assert np.shape(loss) == batch
    assert_finite(loss)
    # a population loss with the optimal (plug-in) readout is a mean of squares, at most that of W = 0
    n_T = spec.L if spec.cyclic else spec.L - 1
    assert (loss >= -1e-12).all() and (loss <= n_T / spec.L + 1e-12).all()


@covers(pl.plugin_loss)
@budget(30)
@given(data=st.data())
def test_plugin_loss_invalid(data):
    spec = cl.ModelSpec(L=4, V=3, kind="linear")
    args = {"alpha_1": np.array([1.5]), "alpha_2": np.array([2.0]), "gamma_1": np.array([1.0]),
            "gamma_2": np.array([1.0]), "P": 10.0, "spec": spec}
    name = data.draw(st.sampled_from(sorted(args)))
    if name == "spec":
        args[name] = data.draw(bad_spec())
    else:
        bad = {"alpha_1": [-0.5, math.nan], "alpha_2": [-1.0, math.inf], "gamma_1": [math.nan, math.inf],
               "gamma_2": [-math.inf, math.nan], "P": [0.0, -1.0, math.nan]}[name]
        args[name] = data.draw(st.sampled_from(bad + ["x", None]))
    with raises_naming(name):
        pl.plugin_loss(**args)


@covers(pl.row_stochastic_plugin_loss)
@budget(30)
@given(spec=softmax_specs, P=Ps, seed=seeds, n=st.integers(1, 5))
def test_row_stochastic_plugin_loss_valid(spec, P, seed, n):
    g = spec.sigma_G * np.random.default_rng(seed).normal(size=(n, spec.L, spec.L))
    A = cl.attention(g, "softmax")
    a1, a2, g1, g2 = cl.invariants(A, spec.cyclic)
    loss = pl.row_stochastic_plugin_loss(a1, g1, P, spec)
    assert loss.shape == (n,)
    assert_finite(loss)
    assert (loss >= -1e-12).all()  # an expected squared error
    # the general form at alpha_2 = L, gamma_2 = n_T (summed in another order)
    np.testing.assert_allclose(loss, pl.plugin_loss(a1, a2, g1, g2, P, spec), rtol=1e-9, atol=1e-12)


@covers(pl.row_stochastic_plugin_loss)
@budget(30)
@given(data=st.data())
def test_row_stochastic_plugin_loss_invalid(data):
    spec = cl.ModelSpec(L=4, V=3, kind="softmax")
    args = {"alpha_1": np.array([1.5]), "gamma_1": np.array([1.0]), "P": 10.0, "spec": spec}
    name = data.draw(st.sampled_from(sorted(args)))
    if name == "spec":
        args[name] = data.draw(st.one_of(bad_spec(), st.just(cl.ModelSpec(L=4, V=3, kind="linear"))))
    else:
        bad = {"alpha_1": [0.5, 5.0, math.nan], "gamma_1": [-1.0, 4.5, math.inf], "P": [0.0, -1.0, math.nan]}[name]
        args[name] = data.draw(st.sampled_from(bad + ["x", None]))
    with raises_naming(name):
        pl.row_stochastic_plugin_loss(**args)
