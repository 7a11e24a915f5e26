"""Property tests: the posterior samplers of M* (copylib.inference.posterior_sampling).

Sizes and step counts are tiny: these tests check shapes, finiteness and argument
checking, not statistical accuracy (the unit tests do that).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import copylib as cl
from copylib.inference import langevin as sm
from copylib.inference import posterior_sampling as ps

from props_helpers import (
    assert_finite,
    bad_ints,
    bad_spec,
    budget,
    cooccurrence_of,
    covers,
    not_array,
    raises_naming,
    specs,
    with_nonfinite,
)

seeds = st.integers(0, 2**32 - 1)
tiny_specs = specs(L=st.integers(2, 4), V=st.integers(2, 3))


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@covers(ps.sample_collapsed_posterior, ps.sample_full_posterior)
@budget(8)
@given(spec=tiny_specs, R=st.integers(1, 3), shared=st.booleans(), full=st.booleans(),
       record=st.sampled_from(["order", "all", None]), init=st.sampled_from(["prior", "zeros"]), seed=seeds)
def test_posterior_samplers_valid(spec, R, shared, full, record, init, seed):
    C = cooccurrence_of(4, spec, seed) if shared else np.stack([cooccurrence_of(4, spec, seed + r) for r in range(R)])
    fn = ps.sample_full_posterior if full else ps.sample_collapsed_posterior
    res = fn(C, spec, R, 6, torch.Generator().manual_seed(seed % 2**63), n_warmup=3, init=init, record=record,
             thin=2)
    names = {"order": {"m", "q", "r2", "b", "alpha_1", "alpha_2", "gamma_1", "gamma_2"}, "all": {"g", "b", "W"} if full else {"g", "b"}, None: None}[record]
    if names is not None:
        assert set(res.samples) == names
    if record == "order":
        for k in names:
            assert res.samples[k].shape == (R, 3)
            assert_finite(res.samples[k], k)
        assert (res.samples["r2"] >= 0).all()
    assert res.final_params["g"].shape == (R, spec.L, spec.L) and res.final_params["b"].shape == (R,)
    if full:
        assert res.final_params["W"].shape == (R, spec.V, spec.V)
    assert_finite(res.energy)


@covers(ps.sample_collapsed_posterior, ps.sample_full_posterior)
@budget(8)
@given(spec=tiny_specs, R=st.integers(1, 3), full=st.booleans(), n_leapfrog=st.integers(2, 4), seed=seeds)
def test_posterior_samplers_hmc_valid(spec, R, full, n_leapfrog, seed):
    """``n_leapfrog`` passes through to langevin: HMC runs on both posteriors, acceptance in [0, 1]."""
    fn = ps.sample_full_posterior if full else ps.sample_collapsed_posterior
    res = fn(cooccurrence_of(4, spec, seed), spec, R, 4, torch.Generator().manual_seed(seed % 2**63), n_warmup=3,
             n_leapfrog=n_leapfrog, target_accept=0.8)
    assert res.metropolis and ((res.accept_rate >= 0) & (res.accept_rate <= 1)).all()
    assert_finite(res.energy)


@covers(ps.sample_collapsed_posterior, ps.sample_full_posterior)
@budget(60)
@given(data=st.data())
def test_posterior_samplers_invalid(data):
    spec = cl.ModelSpec(L=3, V=2)
    full = data.draw(st.booleans())
    args = dict(C=cooccurrence_of(3, spec, 0), spec=spec, n_chains=2, n_steps=3,
                generator=torch.Generator().manual_seed(0), n_warmup=1, init="prior", record="order", scales=None)
    name = data.draw(st.sampled_from(sorted(args)))
    if name == "C":
        args[name] = data.draw(st.one_of(st.just(np.zeros((3, 3, 2))), st.just(np.zeros((3, 3, 3, 2, 2))),
                                         st.builds(lambda d: with_nonfinite(args["C"], d), st.data()), not_array()))
    elif name == "spec":
        args[name] = data.draw(bad_spec())
    elif name in ("n_chains", "n_steps", "n_warmup"):
        args[name] = data.draw(bad_ints(0 if name == "n_warmup" else 1))
    elif name == "generator":
        args[name] = data.draw(st.sampled_from([None, 0, np.random.default_rng(0)]))
    elif name == "init":
        keys = {"g": np.zeros((3, 3)), "b": np.zeros(())}
        args[name] = data.draw(st.sampled_from(["uniform", 0, {"g": np.zeros((3, 3))}, {**keys, "Z": 0},
                                                {"g": np.zeros((2, 4, 4)), "b": np.zeros(2), "W": np.eye(2)}]))
        if isinstance(args[name], dict) and "W" in args[name] and not full:
            args[name] = {"g": np.zeros((2, 4, 4)), "b": np.zeros(2)}
    elif name == "record":
        args[name] = data.draw(st.sampled_from(["m", 1]))
    else:
        args[name] = data.draw(st.sampled_from([1.0, {"Z": 1.0}, {"g": -1.0}]))
    fn = ps.sample_full_posterior if full else ps.sample_collapsed_posterior
    with raises_naming(name):
        fn(**args)


@covers(sm.langevin, ps.sample_collapsed_posterior)
@budget(10)
@given(chain=st.integers(0, 2), value=st.sampled_from([math.nan, math.inf]))
def test_nonfinite_initial_state_names_the_chain(chain, value):
    # documented: a FloatingPointError naming the chain (not a silent NaN trace)
    spec = cl.ModelSpec(L=3, V=2)
    g = np.zeros((3, 3, 3))
    g[chain, 0, 0] = value
    with pytest.raises(FloatingPointError, match=rf"chain {chain}\b"):
        ps.sample_collapsed_posterior(cooccurrence_of(3, spec, 0), spec, 3, 2, torch.Generator(), n_warmup=0,
                                      init={"g": g, "b": np.zeros(3)})
