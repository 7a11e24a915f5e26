"""Tests of copylib.inference.langevin: MALA/ULA on known targets, divergence.

Statistical tolerances. A sample average is compared with its exact value in
units of its Monte Carlo standard error (MCSE = std / sqrt(ESS), ESS from the
autocorrelation of the chains). The tests use 4.5 MCSE (5 for the comparison
of two samplers, in combined MCSE): a Gaussian deviation beyond 4.5 sigma has
probability 7e-6, so over the ~20 comparisons here a correct sampler fails by
chance with probability ~1e-4, while the margin also absorbs the ~10-20 %
uncertainty of the estimated ESS itself. Every test has a fixed seed, so the
outcome is deterministic; the margin is what makes it robust to seed changes.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.linalg
import torch

from copylib.inference.diagnostics import mcse_mean, split_rhat
from copylib.inference.langevin import SamplingResult, langevin

K_SIGMA = 4.5


pytestmark = pytest.mark.usefixtures("one_thread")  # tiny tensors: torch on one thread (tests/conftest.py)


# --------------------------------------------------------------------------
# a 2-d correlated Gaussian target
# --------------------------------------------------------------------------

MU = np.array([1.0, -2.0])
SIGMA = np.array([[1.0, 0.8], [0.8, 2.0]])
Q = np.linalg.inv(SIGMA)


def gaussian_energy(p):
    d = p["x"] - torch.as_tensor(MU)
    return 0.5 * ((d @ torch.as_tensor(Q)) * d).sum(1)


def check_moments(x, mean, cov, k=K_SIGMA):
    """Sample mean and covariance of draws ``x (R, n, 2)`` against exact values, in MCSE."""
    d = x - MU  # deviations from the exact mean: E[d_i d_j] = cov_ij
    for i in range(2):
        assert abs(x[..., i].mean() - mean[i]) < k * mcse_mean(x[..., i])
        for j in range(i, 2):
            dd = d[..., i] * d[..., j]
            assert abs(dd.mean() - cov[i, j]) < k * mcse_mean(dd), (i, j, dd.mean(), cov[i, j])


def test_mala_reproduces_gaussian_mean_and_covariance():
    gen = torch.Generator().manual_seed(0)
    res = langevin(gaussian_energy, {"x": torch.zeros(64, 2, dtype=torch.float64)}, 1500, 0.5, gen,
                   n_warmup=300)
    assert isinstance(res, SamplingResult)
    x = res.samples["x"]
    assert x.shape == (64, 1500, 2) and res.energy.shape == (64, 1500)
    assert res.accept_rate.shape == (64,) and res.step_size.shape == (64,)
    # dual averaging reaches the target acceptance rate (per chain, up to binomial noise)
    assert abs(res.accept_rate.mean() - 0.57) < 0.03
    assert (np.abs(res.accept_rate - 0.57) < 0.15).all()  # the step of each chain is adapted separately
    assert (split_rhat(x) < 1.01).all()
    check_moments(x, MU, SIGMA)
    # energy trace is the energy of the recorded state
    assert np.allclose(res.energy, gaussian_energy({"x": torch.as_tensor(x.reshape(-1, 2))}).numpy().reshape(64, -1))
    np.testing.assert_array_equal(res.final_params["x"], x[:, -1])


def test_ula_small_step_has_its_known_discretisation_bias():
    """ULA's stationary law on a Gaussian is Gaussian with the right mean and a covariance
    that solves ``S = M S M^T + h I``, ``M = I - h Q / 2``: the samples match that law
    within MCSE, and the target within bias + MCSE."""
    h = 0.2
    gen = torch.Generator().manual_seed(1)
    x0 = torch.as_tensor(np.tile(MU, (64, 1)))
    res = langevin(gaussian_energy, {"x": x0}, 2000, h, gen, n_warmup=200, metropolis=False)
    assert (res.accept_rate == 1).all() and (res.step_size == h).all()
    M = np.eye(2) - h * Q / 2
    cov_h = scipy.linalg.solve_discrete_lyapunov(M, h * np.eye(2))
    bias = cov_h - SIGMA
    assert np.abs(bias).max() > 0.02  # the bias is real, a few per cent here
    x = res.samples["x"]
    check_moments(x, MU, cov_h)
    d = x - MU
    for i in range(2):
        dd = d[..., i] ** 2
        assert abs(dd.mean() - SIGMA[i, i]) < abs(bias[i, i]) + K_SIGMA * mcse_mean(dd)


def test_scales_precondition_groups_of_very_different_widths():
    """Two groups with widths 1 and 1e-3: with matching scales MALA moves both."""
    def energy(p):
        return 0.5 * (p["a"] ** 2).sum(1) + 0.5 * (p["c"] / 1e-3) ** 2

    init = {"a": torch.zeros(64, 3, dtype=torch.float64), "c": torch.zeros(64, dtype=torch.float64)}
    res = langevin(energy, init, 600, 0.5, torch.Generator().manual_seed(2), n_warmup=300,
                   scales={"a": 1.0, "c": 1e-3})
    assert set(res.scales) == {"a", "c"}
    np.testing.assert_array_equal(res.scales["a"], np.ones(64))
    np.testing.assert_array_equal(res.scales["c"], np.full(64, 1e-3))
    assert res.step_size.min() > 0.1  # without the scale it would have to shrink ~1e6-fold
    for name, width in (("a", 1.0), ("c", 1e-3)):
        v = res.samples[name].reshape(64, 600, -1) ** 2
        for i in range(v.shape[-1]):
            assert abs(v[..., i].mean() - width**2) < K_SIGMA * mcse_mean(v[..., i])


def test_adapted_scales_find_the_group_widths():
    """Without given scales (all 1), warmup adaptation finds widths 1 and 0.05."""
    def energy(p):
        return 0.5 * (p["a"] ** 2).sum(1) + 0.5 * ((p["c"] / 0.05) ** 2).sum(1)

    init = {"a": torch.zeros(64, 3, dtype=torch.float64), "c": torch.zeros(64, 2, dtype=torch.float64)}
    gen = torch.Generator().manual_seed(6)
    plain = langevin(energy, init, 10, 0.5, gen, n_warmup=400)
    res = langevin(energy, init, 600, 0.5, gen, n_warmup=400, adapt_scales=True)
    for name, width in (("a", 1.0), ("c", 0.05)):
        ratio = res.scales[name] / width
        assert 0.5 < np.median(ratio) < 1.5 and (ratio > 0.2).all() and (ratio < 3).all(), (name, ratio)
        v = res.samples[name] ** 2
        for i in range(v.shape[-1]):
            assert abs(v[..., i].mean() - width**2) < K_SIGMA * mcse_mean(v[..., i])
    assert np.median(res.step_size) > 20 * np.median(plain.step_size)
    with pytest.raises(ValueError, match="adapt_scales"):
        langevin(energy, init, 10, 0.5, gen, n_warmup=100, adapt_scales=True)


def test_mala_rejects_proposals_outside_the_support():
    """A half-normal (energy +inf for x < 0): infinite-energy proposals are rejected."""
    def energy(p):
        x = p[0][:, 0]
        return torch.where(x > 0, 0.5 * x**2, math.inf)

    res = langevin(energy, (torch.ones(64, 1, dtype=torch.float64),), 800, 1.0,
                   torch.Generator().manual_seed(3), n_warmup=200)
    x = res.samples["0"][..., 0]
    assert (x > 0).all()
    assert abs(x.mean() - math.sqrt(2 / math.pi)) < K_SIGMA * mcse_mean(x)
    assert isinstance(res.final_params, tuple)


def test_same_seed_is_bit_identical_and_another_seed_differs():
    def run(seed):
        return langevin(gaussian_energy, {"x": torch.zeros(8, 2, dtype=torch.float64)}, 100, 0.5,
                        torch.Generator().manual_seed(seed), n_warmup=50, thin=3)

    a, b, c = run(7), run(7), run(8)
    assert a.samples["x"].shape == (8, 33, 2)
    np.testing.assert_array_equal(a.samples["x"], b.samples["x"])
    np.testing.assert_array_equal(a.step_size, b.step_size)
    np.testing.assert_array_equal(a.final_params["x"], b.final_params["x"])
    assert not np.array_equal(a.samples["x"], c.samples["x"])


def test_custom_record_and_continuation():
    gen = torch.Generator().manual_seed(4)
    res = langevin(gaussian_energy, {"x": torch.zeros(16, 2, dtype=torch.float64)}, 50, 0.5, gen,
                   n_warmup=50, record=lambda p: {"s": p["x"].sum(1)})
    assert set(res.samples) == {"s"} and res.samples["s"].shape == (16, 50)
    # continue from the final state with the adapted (frozen) step sizes
    res2 = langevin(gaussian_energy, res.final_params, 20, res.step_size, gen, n_warmup=0)
    np.testing.assert_array_equal(res2.step_size, res.step_size)


def test_energy_grad_replaces_autograd():
    """Given the exact gradient by hand, langevin follows the same chains as with autograd
    (the Gaussian's gradient is linear, so both are exact to rounding), and energy is not called."""
    Qt, MUt = torch.as_tensor(Q), torch.as_tensor(MU)

    def energy_grad(p):
        d = p["x"] - MUt
        return 0.5 * ((d @ Qt) * d).sum(1), {"x": d @ Qt}

    def forbidden(p):
        raise AssertionError("energy must not be called when energy_grad is given")

    init = {"x": torch.zeros(16, 2, dtype=torch.float64)}
    a = langevin(gaussian_energy, init, 200, 0.5, torch.Generator().manual_seed(9), n_warmup=50)
    b = langevin(forbidden, init, 200, 0.5, torch.Generator().manual_seed(9), n_warmup=50, energy_grad=energy_grad)
    np.testing.assert_allclose(b.samples["x"], a.samples["x"], rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(b.accept_rate, a.accept_rate)
    with pytest.raises(ValueError, match="energy_grad must return"):
        langevin(forbidden, init, 10, 0.5, torch.Generator(), n_warmup=0,
                 energy_grad=lambda p: (p["x"].sum(), {"x": p["x"]}))
    with pytest.raises(TypeError, match="energy_grad"):
        langevin(gaussian_energy, init, 10, 0.5, torch.Generator(), n_warmup=0, energy_grad=1.0)


# --------------------------------------------------------------------------
# divergence
# --------------------------------------------------------------------------


def test_nan_energy_raises_and_names_the_chain():
    calls = {"n": 0}

    def energy(p):
        calls["n"] += 1
        e = gaussian_energy(p)
        if calls["n"] == 30:
            e = e.clone()
            e[5] = math.nan
        return e

    with pytest.raises(FloatingPointError, match="chain 5 "):
        langevin(energy, {"x": torch.zeros(8, 2, dtype=torch.float64)}, 100, 0.5,
                 torch.Generator().manual_seed(0), n_warmup=10)


def stiff(p):
    return 0.5 * 100.0 * (p["x"] ** 2).sum(1)


def test_ula_with_a_huge_step_on_a_stiff_quadratic_raises():
    with pytest.raises(FloatingPointError, match="diverged .*ULA"):
        langevin(stiff, {"x": torch.ones(4, 2, dtype=torch.float64)}, 1000, 10.0,
                 torch.Generator().manual_seed(0), n_warmup=0, metropolis=False)


def test_mala_collapsed_acceptance_raises():
    init = {"x": torch.ones(4, 2, dtype=torch.float64)}
    # a fixed step 1e5 times too large: every proposal is rejected
    with pytest.raises(FloatingPointError, match="stuck .*50 consecutive rejections"):
        langevin(stiff, init, 1000, 10.0, torch.Generator().manual_seed(0), n_warmup=0, max_rejections=50)
    with pytest.raises(FloatingPointError, match="acceptance rate"):
        langevin(stiff, init, 150, 10.0, torch.Generator().manual_seed(0), n_warmup=0)


def test_non_finite_initial_state_raises():
    x = torch.zeros(4, 2, dtype=torch.float64)
    x[2, 0] = math.inf
    with pytest.raises(FloatingPointError, match="chain 2"):
        langevin(gaussian_energy, {"x": x}, 10, 0.5, torch.Generator().manual_seed(0), n_warmup=0)


def test_argument_checks():
    init = {"x": torch.zeros(4, 2, dtype=torch.float64)}
    gen = torch.Generator().manual_seed(0)
    with pytest.raises(TypeError, match="generator"):
        langevin(gaussian_energy, init, 10, 0.5, np.random.default_rng(0), n_warmup=0)
    with pytest.raises(ValueError, match="step_size"):
        langevin(gaussian_energy, init, 10, -1.0, gen, n_warmup=0)
    with pytest.raises(ValueError, match="scales"):
        langevin(gaussian_energy, init, 10, 0.5, gen, n_warmup=0, scales={"y": 1.0})
    with pytest.raises(ValueError, match="energy must return"):
        langevin(lambda p: p["x"].sum(), init, 10, 0.5, gen, n_warmup=0)


# --------------------------------------------------------------------------
# the line move (direction=...): a Metropolis move along one fixed direction
# --------------------------------------------------------------------------

WELL = 3.0  # two wells at u = +-WELL along (1, 1)/sqrt(2), WELL^4 / 8 = 10 nats of barrier between them
U_DIR = np.array([1.0, 1.0]) / np.sqrt(2.0)


def two_wells_energy(p):
    """Wells at ``u = +-WELL`` along ``U_DIR`` (depths differ by ``ln 3``), unit Gaussian across."""
    x = p["x"]
    u = x @ torch.as_tensor(U_DIR)
    v = x @ torch.as_tensor([U_DIR[1], -U_DIR[0]])
    quartic = (u * u - WELL**2) ** 2 / 8
    return quartic + 0.5 * v * v - math.log(3.0) * (u > 0)


def test_line_move_keeps_the_gaussian_target_exact():
    """MALA alternating with line moves along the slow axis of the correlated Gaussian: same law."""
    slow = np.linalg.eigh(SIGMA)[1][:, -1]
    res = langevin(gaussian_energy, {"x": torch.zeros(64, 2, dtype=torch.float64)}, 1500, 0.5,
                   torch.Generator().manual_seed(3), n_warmup=300, direction={"x": slow}, direction_step=1.5)
    assert res.line_accept_rate.shape == (64,) and 0.2 < res.line_accept_rate.mean() < 0.9
    check_moments(res.samples["x"], MU, SIGMA)
    assert res.samples["x"].shape == (64, 1500, 2)


def test_line_move_crosses_a_barrier_mala_cannot_and_weights_the_wells_right():
    """Two wells 2 WELL apart along U_DIR: MALA alone never leaves its start, with line moves of
    that size the chains hop, and the fraction of draws in the deeper well is 3/4 (the wells have
    the same shape, one lies ln 3 lower)."""
    init = {"x": torch.as_tensor(np.tile(-WELL * U_DIR, (32, 1)))}
    alone = langevin(two_wells_energy, init, 1000, 0.3, torch.Generator().manual_seed(4), n_warmup=200)
    assert (alone.samples["x"] @ U_DIR < 0).all()  # 10 nats: no MALA chain crosses
    res = langevin(two_wells_energy, init, 3000, 0.3, torch.Generator().manual_seed(4), n_warmup=200,
                   direction={"x": U_DIR}, direction_step=2 * WELL)
    right = (res.samples["x"] @ U_DIR > 0).astype(float)
    assert abs(right.mean() - 0.75) < K_SIGMA * mcse_mean(right), (right.mean(), mcse_mean(right))
    assert (right.mean(1) > 0).all() and (right.mean(1) < 1).all()  # every chain visits both wells


def test_line_move_is_reproducible_and_its_draws_follow_the_langevin_draws():
    """Same seed, same numbers; the move's draws come after MALA's, so the MALA part of the
    first step is that of a run without the move."""
    init = {"x": torch.zeros(8, 2, dtype=torch.float64)}
    kw = dict(n_warmup=0, direction={"x": U_DIR}, direction_step=1.0)
    a = langevin(gaussian_energy, init, 50, 0.5, torch.Generator().manual_seed(5), **kw)
    b = langevin(gaussian_energy, init, 50, 0.5, torch.Generator().manual_seed(5), **kw)
    np.testing.assert_array_equal(a.samples["x"], b.samples["x"])
    np.testing.assert_array_equal(a.line_accept_rate, b.line_accept_rate)
    assert langevin(gaussian_energy, init, 50, 0.5, torch.Generator().manual_seed(5), n_warmup=0).line_accept_rate is None
    one_mala = langevin(gaussian_energy, init, 1, 0.5, torch.Generator().manual_seed(5), n_warmup=0)
    gen = torch.Generator().manual_seed(5)
    langevin(gaussian_energy, init, 1, 0.5, gen, n_warmup=0)
    delta = torch.randn(8, generator=gen, dtype=torch.float64)  # below 16 values: torch's own draw
    u = torch.rand(8, generator=gen, dtype=torch.float64)
    moved = one_mala.samples["x"][:, 0] + delta.numpy()[:, None] * U_DIR
    E0 = gaussian_energy({"x": torch.as_tensor(one_mala.samples["x"][:, 0])})
    E1 = gaussian_energy({"x": torch.as_tensor(moved)})
    keep = (torch.log(u) < E0 - E1).numpy()
    with_move = langevin(gaussian_energy, init, 1, 0.5, torch.Generator().manual_seed(5), **kw)
    expected = np.where(keep[:, None], moved, one_mala.samples["x"][:, 0])
    np.testing.assert_allclose(with_move.samples["x"][:, 0], expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(direction_step=1.0), ValueError, "direction_step is given without a direction"),
    (dict(direction={"x": U_DIR}), ValueError, "direction needs direction_step"),
    (dict(direction={"x": U_DIR}, direction_step=-1.0), ValueError, "direction_step"),
    (dict(direction={"x": U_DIR}, direction_step=1.0, metropolis=False), ValueError, "metropolis=True"),
    (dict(direction={"y": U_DIR}, direction_step=1.0), ValueError, r"keys \['y'\]"),
    (dict(direction={"x": np.ones(3)}, direction_step=1.0), ValueError, r"direction\['x'\] must have the shape"),
    (dict(direction={"x": np.zeros(2)}, direction_step=1.0), ValueError, "not all zero"),
    (dict(direction={"x": [np.nan, 1.0]}, direction_step=1.0), ValueError, "direction"),
    (dict(direction=U_DIR, direction_step=1.0), TypeError, "direction must be a dict"),
])
def test_line_move_argument_checks(kwargs, error, match):
    init = {"x": torch.zeros(4, 2, dtype=torch.float64)}
    with pytest.raises(error, match=match):
        langevin(gaussian_energy, init, 10, 0.5, torch.Generator().manual_seed(0), n_warmup=0, **kwargs)


# --------------------------------------------------------------------------
# HMC: n_leapfrog > 1 leapfrog steps per Metropolis-adjusted proposal
# --------------------------------------------------------------------------


def test_hmc_reproduces_gaussian_mean_and_covariance():
    """HMC (five leapfrog steps per proposal) through langevin: exact moments of the correlated Gaussian,
    the warmup reaches its target acceptance, and the acceptance is recorded per chain. The frozen step
    is the dual-averaging mean of ``log h``, a little below the last iterates, so the acceptance after
    the warmup lies at or somewhat above the target (as in Stan); here 0.8 to 0.9."""
    res = langevin(gaussian_energy, {"x": torch.zeros(32, 2, dtype=torch.float64)}, 1000, 0.5,
                   torch.Generator().manual_seed(6), n_warmup=300, n_leapfrog=5, target_accept=0.8)
    x = res.samples["x"]
    assert x.shape == (32, 1000, 2) and res.metropolis
    assert 0.8 <= res.accept_rate.mean() < 0.9 and ((res.accept_rate > 0.7) & (res.accept_rate < 0.97)).all()
    assert (split_rhat(x) < 1.01).all()
    check_moments(x, MU, SIGMA)
    assert np.allclose(res.energy, gaussian_energy({"x": torch.as_tensor(x.reshape(-1, 2))}).numpy().reshape(32, -1))


def test_hmc_default_is_mala_and_n_leapfrog_is_checked():
    """n_leapfrog=1 is the default sampler, bit for bit; a bad n_leapfrog is named with its range."""
    init = {"x": torch.zeros(4, 2, dtype=torch.float64)}
    a = langevin(gaussian_energy, init, 30, 0.5, torch.Generator().manual_seed(7), n_warmup=10)
    b = langevin(gaussian_energy, init, 30, 0.5, torch.Generator().manual_seed(7), n_warmup=10, n_leapfrog=1)
    np.testing.assert_array_equal(a.samples["x"], b.samples["x"])
    gen = torch.Generator().manual_seed(0)
    for bad, exc in ((0, ValueError), (-3, ValueError), (2.5, ValueError), ("4", TypeError), (True, TypeError)):
        with pytest.raises(exc, match=r"n_leapfrog must be an integer >= 1"):
            langevin(gaussian_energy, init, 10, 0.5, gen, n_warmup=0, n_leapfrog=bad)
    with pytest.raises(ValueError, match=r"n_leapfrog > 1 \(HMC\) needs metropolis=True"):
        langevin(gaussian_energy, init, 10, 0.5, gen, n_warmup=0, n_leapfrog=3, metropolis=False)


def test_hmc_stuck_chain_is_detected():
    """The acceptance of HMC is checked like MALA's: a step far too large for the target (every
    proposal rejected after a warmup too short to adapt) raises, naming the sampler."""
    init = {"x": torch.zeros(2, 2, dtype=torch.float64)}
    with pytest.raises(FloatingPointError, match="HMC"):
        langevin(gaussian_energy, init, 200, 1e6, torch.Generator().manual_seed(8), n_warmup=0, n_leapfrog=4,
                 max_rejections=50)
