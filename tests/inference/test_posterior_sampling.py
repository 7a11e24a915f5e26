"""Tests of copylib.inference.posterior_sampling: the collapsed and full posterior samplers of M*.

Statistical tolerances as in test_langevin.py: sample averages are compared in units
of their Monte Carlo standard error (4.5 MCSE; 5 combined MCSE for two samplers).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import copylib.inference.posterior_sampling as sampling
from copylib import ModelSpec, cooccurrence, copy_task
from copylib.inference.diagnostics import mcse_mean
from copylib.inference.posterior_sampling import sample_collapsed_posterior, sample_full_posterior

K_SIGMA = 4.5


@pytest.fixture(autouse=True)
def _one_thread():
    """Tiny tensors: intra-op threads only add overhead (and thrash on a busy machine)."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.mark.parametrize("sampler", ["collapsed", "full"])
def test_posterior_samplers_follow_their_autograd_chains(sampler, monkeypatch):
    """The posterior samplers' hand-written gradients give the chains that autograd on
    their energies gives: softmax attention at L=8, where the dynamics do not amplify the
    rounding differences (for linear attention they can: the sign-symmetric posterior makes
    nearby chains separate, and only the law of the samples is the same)."""
    spec = ModelSpec(L=8, V=4, kind="softmax")
    C = cooccurrence(copy_task(40, 8, 4, np.random.default_rng(3))[0])
    fn = {"collapsed": sample_collapsed_posterior, "full": sample_full_posterior}[sampler]
    fast = fn(C, spec, 16, 200, torch.Generator().manual_seed(4), n_warmup=100, thin=5)
    plain = sampling.langevin
    monkeypatch.setattr(sampling, "langevin", lambda *a, **k: plain(*a, **{**k, "energy_grad": None}))
    slow = fn(C, spec, 16, 200, torch.Generator().manual_seed(4), n_warmup=100, thin=5)
    np.testing.assert_array_equal(fast.accept_rate, slow.accept_rate)
    np.testing.assert_allclose(fast.samples["q"], slow.samples["q"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(fast.energy, slow.energy, rtol=1e-10)


def tiny_data(P=20, seed=1):
    spec = ModelSpec(L=4, V=2, kind="linear")
    X, _ = copy_task(P, spec.L, spec.V, np.random.default_rng(seed))
    return spec, cooccurrence(X)


def test_collapsed_and_full_posteriors_agree_on_the_attention():
    """The full posterior's (g, b) marginal is the collapsed posterior: sign-invariant
    statistics of m = 1^T A 1 / L and q = <A, S - J/L> / (L - 1) agree (linear attention,
    L=4, V=2, P=20, where pooling is on and the W-ridge makes the full sampler slow)."""
    spec, C = tiny_data()
    R = 256
    col = sample_collapsed_posterior(C, spec, R, 400, torch.Generator().manual_seed(10), n_warmup=200)
    full = sample_full_posterior(C, spec, R, 800, torch.Generator().manual_seed(11), n_warmup=400)
    assert set(col.samples) == {"m", "q", "r2", "b", "alpha_1", "alpha_2", "gamma_1", "gamma_2"}
    assert col.samples["m"].shape == (R, 400)
    for res in (col, full):
        assert abs(res.accept_rate.mean() - 0.57) < 0.05
    stats = {
        "|m|": lambda m, q: np.abs(m),
        "m^2": lambda m, q: m**2,
        "|q|": lambda m, q: np.abs(q),
        "q^2": lambda m, q: q**2,
        "q m": lambda m, q: q * m,
    }
    for name, f in stats.items():
        a = f(col.samples["m"], col.samples["q"])
        b = f(full.samples["m"], full.samples["q"])
        err = math.hypot(mcse_mean(a), mcse_mean(b))
        assert abs(a.mean() - b.mean()) < 5 * err, (name, a.mean(), b.mean(), err)


def test_posterior_samplers_accept_one_data_set_per_chain():
    spec, C_shared = tiny_data()
    R = 8
    C = np.broadcast_to(C_shared, (R,) + C_shared.shape)
    kw = dict(n_warmup=20, record="all")
    for sampler in (sample_collapsed_posterior, sample_full_posterior):
        a = sampler(C_shared, spec, R, 30, torch.Generator().manual_seed(0), **kw)
        b = sampler(C, spec, R, 30, torch.Generator().manual_seed(0), **kw)
        np.testing.assert_allclose(a.samples["g"], b.samples["g"], rtol=1e-9, atol=1e-12)
        assert a.samples["g"].shape == (R, 30, 4, 4) and a.samples["b"].shape == (R, 30)
    assert set(a.final_params) == {"g", "b", "W"} and a.final_params["W"].shape == (R, 2, 2)
    with pytest.raises(ValueError, match="C must have shape"):
        sample_collapsed_posterior(C[:3], spec, R, 10, torch.Generator(), n_warmup=0)
    with pytest.raises(ValueError, match="init must have exactly the keys"):
        sample_collapsed_posterior(C, spec, R, 10, torch.Generator(), n_warmup=0, init=a.final_params)
    # continuation from a previous state (e.g. hysteresis runs)
    init = {k: a.final_params[k] for k in ("g", "b")}
    res = sample_collapsed_posterior(C, spec, R, 5, torch.Generator(), n_warmup=0, init=init)
    assert res.samples["m"].shape == (R, 5)


def test_softmax_bias_decouples_and_follows_its_prior():
    """For softmax attention b does not enter A: its collapsed marginal is N(0, sigma_b^2)."""
    spec = ModelSpec(L=4, V=2, kind="softmax", sigma_b=2.0)
    X, _ = copy_task(20, 4, 2, np.random.default_rng(0))
    res = sample_collapsed_posterior(cooccurrence(X), spec, 128, 300, torch.Generator().manual_seed(5),
                                     n_warmup=100)
    b = res.samples["b"]
    assert abs(b.mean()) < K_SIGMA * mcse_mean(b)
    assert abs((b**2).mean() - 4.0) < K_SIGMA * mcse_mean(b**2)
    np.testing.assert_allclose(res.samples["m"], 1.0)  # rows of a softmax sum to one


def test_collapsed_hmc_agrees_with_mala():
    """``n_leapfrog`` reaches HMC through sample_collapsed_posterior: on the softmax posterior (L=6, V=3)
    its copy weight and alpha_1 agree with MALA's within 5 combined MCSE, and its acceptance is
    recorded near the target it was adapted to."""
    spec = ModelSpec(L=6, V=3, kind="softmax")
    C = cooccurrence(copy_task(60, 6, 3, np.random.default_rng(4))[0])
    kw = dict(n_warmup=200, init="zeros")
    mala = sample_collapsed_posterior(C, spec, 32, 800, torch.Generator().manual_seed(12), **kw)
    hmc = sample_collapsed_posterior(C, spec, 32, 400, torch.Generator().manual_seed(13), n_leapfrog=4,
                                     target_accept=0.8, **kw)
    assert hmc.samples["gamma_1"].shape == (32, 400)
    assert 0.75 < hmc.accept_rate.mean() < 0.95
    for name in ("gamma_1", "alpha_1"):
        a, b = mala.samples[name], hmc.samples[name]
        err = math.hypot(mcse_mean(a), mcse_mean(b))
        assert abs(a.mean() - b.mean()) < 5 * err, (name, a.mean(), b.mean(), err)
    with pytest.raises(ValueError, match="n_leapfrog"):
        sample_collapsed_posterior(C, spec, 2, 10, torch.Generator(), n_warmup=0, n_leapfrog=0)
