"""Tests of copylib.inference.proposals: the noise of the Langevin proposals."""

from __future__ import annotations

import math

import pytest
import torch

from copylib.inference.proposals import HMC, _standard_normal


@pytest.mark.parametrize("shape", [(3,), (4, 4), (17,), (5, 7), (64, 1057), (2, 3, 40)])
def test_standard_normal_is_torch_randn_up_to_rounding(shape):
    """The sampler's vectorised normal draws are torch.randn's (same uniforms, same
    Box-Muller transform; the last bit of log/sin/cos may differ) and leave the generator
    in the same state, so chains follow the same noise as with torch.randn."""
    a_gen, b_gen = torch.Generator().manual_seed(11), torch.Generator().manual_seed(11)
    ref = torch.randn(shape, generator=a_gen, dtype=torch.float64)
    out = _standard_normal(shape, b_gen)
    assert out.shape == ref.shape and out.dtype == torch.float64
    torch.testing.assert_close(out, ref, rtol=0, atol=4 * 2.0**-52 * max(1.0, ref.abs().max().item()))
    assert torch.equal(a_gen.get_state(), b_gen.get_state())


# --------------------------------------------------------------------------
# HMC
# --------------------------------------------------------------------------

PRECISION = torch.tensor([0.5, 2.0, 8.0], dtype=torch.float64)  # a Gaussian target, widths 1.4 .. 0.35


def _gaussian(x):
    return 0.5 * (PRECISION * x * x).sum(1), PRECISION * x


def test_hmc_leaves_a_gaussian_target_invariant():
    """Independent chains started from exact draws of a Gaussian stay exact draws after HMC proposals:
    mean and variance of every coordinate within 4.5 standard errors of the exact ones (chains are
    independent, so the error bars are exact: ``sd / sqrt(R)`` and ``var sqrt(2 / (R - 1))``). The step
    is large enough that about a fifth of the proposals are rejected, so leapfrog without the
    Metropolis test would be visibly biased."""
    R = 20_000
    gen = torch.Generator().manual_seed(1)
    var = 1 / PRECISION
    x = torch.randn(R, 3, generator=gen, dtype=torch.float64) * var.sqrt()
    hmc = HMC(_gaussian, gen, n_leapfrog=6)
    hmc.set_kernel(torch.full((R,), 0.55**2, dtype=torch.float64), torch.ones(R, 3, dtype=torch.float64))
    E, grad = _gaussian(x)
    n_acc = 0
    for _ in range(4):
        x, E, grad, acc, _ = hmc.step(x, E, grad, "")
        n_acc += int(acc.sum())
    assert 0.6 < n_acc / (4 * R) < 0.9
    mean_se, var_se = (var / R).sqrt(), var * math.sqrt(2 / (R - 1))
    assert ((x.mean(0)).abs() < 4.5 * mean_se).all(), x.mean(0) / mean_se
    assert ((x.var(0) - var).abs() < 4.5 * var_se).all(), (x.var(0) - var) / var_se
    # leapfrog without the Metropolis test is biased at this step (the test above can see it)
    y = torch.randn(R, 3, generator=gen, dtype=torch.float64) * var.sqrt()
    for _ in range(4):
        p = torch.randn(R, 3, generator=gen, dtype=torch.float64)
        y = hmc.leapfrog(y, *_gaussian(y), p)[0]
    assert ((y.var(0) - var).abs() > 4.5 * var_se).any()


def test_leapfrog_is_reversible():
    """From (x', -p') the leapfrog map returns to (x, -p), with the same energy, up to rounding."""
    gen = torch.Generator().manual_seed(2)
    R, D = 6, 3
    x = torch.randn(R, D, generator=gen, dtype=torch.float64)
    p = torch.randn(R, D, generator=gen, dtype=torch.float64)
    hmc = HMC(_gaussian, gen, n_leapfrog=9)
    hmc.set_kernel(torch.linspace(0.01, 0.2, R, dtype=torch.float64), torch.full((R, D), 0.7, dtype=torch.float64))
    x1, E1, g1, p1, ok = hmc.leapfrog(x, *_gaussian(x), p)
    assert ok.all() and not torch.allclose(x1, x)
    x2, E2, _, p2, ok2 = hmc.leapfrog(x1, E1, g1, -p1)
    assert ok2.all()
    torch.testing.assert_close(x2, x, rtol=0, atol=1e-12)
    torch.testing.assert_close(p2, -p, rtol=0, atol=1e-12)
    torch.testing.assert_close(E2, _gaussian(x)[0], rtol=1e-12, atol=0)


@pytest.mark.parametrize("bad, exc", [(0, ValueError), (-1, ValueError), (1.5, ValueError), (None, TypeError),
                                      (True, TypeError)])
def test_hmc_bad_n_leapfrog_names_it(bad, exc):
    with pytest.raises(exc, match=r"n_leapfrog must be an integer >= 1"):
        HMC(_gaussian, torch.Generator(), n_leapfrog=bad)


@pytest.mark.parametrize("bad", [-0.1, 1.0, 2.0, math.nan])
def test_hmc_bad_jitter_names_it(bad):
    with pytest.raises(ValueError, match=r"\bjitter\b"):
        HMC(_gaussian, torch.Generator(), n_leapfrog=3, jitter=bad)
