"""Property tests: the posterior targets (copylib.posterior.targets) meet their contract."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import copylib as cl
from copylib.posterior import targets as tg

from props_helpers import assert_finite, bad_ints, bad_spec, budget, cooccurrence_of, covers, raises_naming, specs

seeds = st.integers(0, 2**32 - 1)
tiny_specs = specs(L=st.integers(2, 4), V=st.integers(2, 3))


def _state(names, spec, R, seed):
    gen = torch.Generator().manual_seed(seed % 2**63)
    shapes = {"g": (spec.L, spec.L), "b": (), "W": (spec.V, spec.V)}
    return {n: torch.randn((R,) + shapes[n], generator=gen, dtype=torch.float64) for n in names}


@covers(tg.PosteriorTarget, tg.CollapsedPosterior, tg.JointPosterior)
@budget(15)
@given(spec=tiny_specs, R=st.integers(1, 3), shared=st.booleans(), joint=st.booleans(), seed=seeds)
def test_targets_meet_the_contract(spec, R, shared, joint, seed):
    """energy_and_grad gives the energy of energy (to rounding), a gradient of every group with
    its shape, and (joint) the flat-state gradient is the same numbers."""
    C = cooccurrence_of(5, spec, seed) if shared else np.stack([cooccurrence_of(5, spec, seed + r) for r in range(R)])
    target = (tg.JointPosterior if joint else tg.CollapsedPosterior)(C, spec, R)
    assert isinstance(target, tg.PosteriorTarget) and target.R == R
    assert target.names == (("g", "b", "W") if joint else ("g", "b"))
    params = _state(target.names, spec, R, seed)
    E_ref = target.energy(params)
    E, grads = target.energy_and_grad(params)
    assert E.shape == (R,) and set(grads) == set(target.names)
    for n in target.names:
        assert grads[n].shape == (R,) + target.shapes[n]
        assert_finite(grads[n].numpy(), n)
    torch.testing.assert_close(E, E_ref, rtol=1e-10, atol=1e-10 * float(E_ref.abs().max()))
    A = target.attention(params["g"], params["b"])
    assert A.shape == (R, spec.L, spec.L) and bool(torch.isfinite(A).all())
    if joint:
        x = torch.cat([params["g"].reshape(R, -1), params["b"][:, None], params["W"].reshape(R, -1)], dim=1)
        for part, n in zip(target.split(x), target.names):
            assert torch.equal(part, params[n])
        flat = torch.full_like(x, math.nan)
        U = target.gradient(x, flat, value=True)
        assert torch.equal(U, E)
        assert torch.equal(flat, torch.cat([grads["g"].reshape(R, -1), grads["b"][:, None],
                                            grads["W"].reshape(R, -1)], dim=1))


@covers(tg.PosteriorTarget, tg.CollapsedPosterior, tg.JointPosterior)
@budget(40)
@given(data=st.data())
def test_targets_invalid(data):
    spec = cl.ModelSpec(L=3, V=2)
    args = dict(C=cooccurrence_of(3, spec, 0), spec=spec, R=2)
    name = data.draw(st.sampled_from(sorted(args)))
    if name == "C":
        bad = args["C"].copy()
        bad[0, 0, 0, 0] = math.nan
        args[name] = data.draw(st.sampled_from([np.zeros((3, 3, 2)), np.zeros((3, 3, 3, 2, 2)), bad, "C"]))
    elif name == "spec":
        args[name] = data.draw(bad_spec())
    else:
        args[name] = data.draw(bad_ints(1).filter(lambda v: v is not None))
    cls = data.draw(st.sampled_from([tg.CollapsedPosterior, tg.JointPosterior]))
    with raises_naming(name):
        cls(**args)
    # without R, C must hold one data set per chain
    with raises_naming("C"):
        cls(cooccurrence_of(3, spec, 0), spec)
    with pytest.raises(NotImplementedError):
        tg.PosteriorTarget(cooccurrence_of(3, spec, 0), spec, 1).energy({})


@covers(tg.map_objective)
@budget(20)
@given(data=st.data())
def test_map_objective_invalid(data):
    spec = cl.ModelSpec(L=3, V=2)
    args = dict(g=torch.zeros(2, 3, 3, dtype=torch.float64), b=torch.zeros(2, dtype=torch.float64),
                W=torch.zeros(2, 2, 2, dtype=torch.float64),
                C=torch.as_tensor(np.stack([cooccurrence_of(3, spec, 0)] * 2)), spec=spec)
    name = data.draw(st.sampled_from(sorted(args)))
    if name == "spec":
        args[name] = data.draw(bad_spec())
    else:
        args[name] = args[name].clone().contiguous()
        args[name].view(-1)[0] = data.draw(st.sampled_from([math.nan, math.inf]))
    with raises_naming(name):
        tg.map_objective(**args)
