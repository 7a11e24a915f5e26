"""Property tests: copylib.theory.softmax_action. Valid random arguments give finite output of the
documented shape, and the action and its derivatives stay finite for P up to 1e6, L up to 512
and every variance in [1e-8, 1e8]."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import copylib as cl
from copylib.theory import softmax_action as sa
from copylib.theory import softmax_noise as sn

from props_helpers import (
    assert_finite,
    budget,
    covers,
    extreme_specs,
    log_uniform,
    specs,
)

versions = st.sampled_from(sa.VERSIONS)


softmax_specs = specs("softmax", L=st.integers(2, 16), V=st.integers(2, 5))


seeds = st.integers(0, 2**32 - 1)


pytestmark = pytest.mark.usefixtures("one_thread")  # tiny tensors: torch on one thread (tests/conftest.py)


def _noise(spec, version, seed, n_draws=64):
    return sn.row_noise(spec, np.random.default_rng(seed), n_draws=n_draws) if version == "fluct" else None


@covers(sa.reduced_action, sa.reduced_action_derivatives, sa.copy_weight_of_gap, sa.state_loss)
@budget(30)
@given(spec=softmax_specs, version=versions, P=log_uniform(1e-2, 1e5), seed=seeds,
       Delta=st.lists(st.floats(-30, 30), min_size=1, max_size=4))
def test_reduced_action_valid(spec, version, P, seed, Delta):
    noise = _noise(spec, version, seed)
    D = np.asarray(Delta)
    F = sa.reduced_action(D, P, spec, version=version, noise=noise)
    F0, F1, F2 = sa.reduced_action_derivatives(D, P, spec, version=version, noise=noise)
    c = sa.copy_weight_of_gap(D, spec, version=version, noise=noise)
    loss = sa.state_loss(D, P, spec, version=version, noise=noise)
    for out in (F, F0, F1, F2, c, loss):
        assert isinstance(out, np.ndarray) and out.shape == D.shape
        assert_finite(out)
    np.testing.assert_array_equal(F, F0)
    assert ((c > 0) & (c < 1)).all() if (np.abs(D) < 30).all() else ((c >= 0) & (c <= 1)).all()
    assert (loss >= -1e-12).all()  # a population loss is a mean of squares
    # closed-form derivatives = central differences (O(h^2) + rounding |F| eps / h)
    h = 1e-5
    Fp = sa.reduced_action(D + h, P, spec, version=version, noise=noise)
    Fm = sa.reduced_action(D - h, P, spec, version=version, noise=noise)
    scale = np.abs(F).max() + 1
    np.testing.assert_allclose(F1, (Fp - Fm) / (2 * h), rtol=1e-5, atol=1e-9 * scale / h)
    np.testing.assert_allclose(F2, (Fp - 2 * F + Fm) / h**2, rtol=1e-3, atol=1e-8 * scale / h**2)
    if version == "mean_field":
        # documented identity with the plug-in action of the copy-state attention
        from copylib.posterior.order_parameters import copy_attention, plugin_action_of_attention, prior_action_softmax

        want = plugin_action_of_attention(copy_attention(D, spec.L), P, spec) + prior_action_softmax(D, spec)
        np.testing.assert_allclose(F, want, rtol=1e-10, atol=1e-10)


@covers(sa._plugin_readout)
@budget(20)
@given(spec=softmax_specs, P=log_uniform(1e-2, 1e5), batch=st.sampled_from([(), (3,)]), seed=seeds)
def test_plugin_readout_valid(spec, P, batch, seed):
    A = cl.attention(2 * np.random.default_rng(seed).normal(size=batch + (spec.L, spec.L)), "softmax")
    W = sa._plugin_readout(A, P, spec)
    assert W.shape == batch + (spec.V, spec.V)
    assert_finite(W)


@covers(sa.reduced_action, sa.reduced_action_derivatives, sa.state_loss, sa.copy_weight_of_gap,
        sa._plugin_readout, sn.row_noise)
@budget(40)
@given(spec=extreme_specs("softmax"), version=versions, P=log_uniform(1e-3, 1e6),
       Delta=st.lists(st.floats(-50, 50), min_size=1, max_size=3), seed=seeds)
def test_softmax_action_extreme_scales(spec, version, P, Delta, seed):
    noise = _noise(spec, version, seed, n_draws=16)
    D = np.asarray(Delta)
    for out in (sa.reduced_action(D, P, spec, version=version, noise=noise),
                *sa.reduced_action_derivatives(D, P, spec, version=version, noise=noise),
                sa.state_loss(D, P, spec, version=version, noise=noise),
                sa.copy_weight_of_gap(D, spec, version=version, noise=noise)):
        assert out.shape == D.shape
        assert_finite(out)
    from copylib.posterior.order_parameters import copy_attention

    assert_finite(sa._plugin_readout(copy_attention(D, spec.L), P, spec))
