"""Tests of copylib.analysis.softmax_umbrella: harmonic windows in c combined by MBAR, and the whole measurement."""

import dataclasses
import math

import numpy as np
import pytest
import torch

import copylib as cl
from copylib.analysis import softmax_umbrella as su


def _double_well(c):
    """A tilted double well on (0, 1): minima near 0.25 and 0.75, an 8-nat barrier at 0.5."""
    return 8.0 * ((c - 0.5) ** 2 / 0.0625 - 1) ** 2 - 1.5 * c


def _window_draws(U, centres, spring, n, rng, grid=np.linspace(0.0, 1.0, 200_001)):
    """Exact independent draws of each window's law ``exp(-U(c) - spring/2 (c - c_k)^2)`` (inverse CDF on a grid)."""
    out = []
    for ck in centres:
        log_p = -U(grid) - 0.5 * spring * (grid - ck) ** 2
        cdf = np.cumsum(np.exp(log_p - log_p.max()))
        out.append(np.interp(rng.random(n), cdf / cdf[-1], grid))
    return np.array(out)


def _exact_log_odds(U, c_div, grid=np.linspace(0.0, 1.0, 200_001)):
    p = np.exp(-(U(grid) - U(grid).min()))
    return math.log(p[grid >= c_div].sum() / p[grid < c_div].sum())


def _double_well_windows(seed):
    centres = np.linspace(0.1, 0.9, 21)
    spring = 1 / (centres[1] - centres[0]) ** 2
    return _window_draws(_double_well, centres, spring, 3000, np.random.default_rng(seed)), centres, spring


def test_windows_recover_the_log_odds_of_a_double_well_behind_an_8_nat_barrier():
    c, centres, spring = _double_well_windows(5)
    exact = _exact_log_odds(_double_well, 0.5)
    assert abs(exact) > 0.5  # the tilt makes the basins unequal: a sign error in the bias would show
    assert su.windows_log_odds(c, centres, spring, 0.5) == pytest.approx(exact, abs=0.08)
    # a single unbiased chain would not see the far basin: the windows are what make the estimate possible
    assert su.windows_log_odds(c, centres, spring, 0.3) == pytest.approx(_exact_log_odds(_double_well, 0.3), abs=0.08)


def test_windows_log_odds_is_wrong_if_the_windows_are_read_with_the_wrong_spring():
    c, centres, spring = _double_well_windows(6)
    exact = _exact_log_odds(_double_well, 0.5)
    assert abs(su.windows_log_odds(c, centres, 0.5 * spring, 0.5) - exact) > 0.3


def test_biased_target_gradient_matches_autograd():
    spec = cl.ModelSpec(L=6, V=3, kind="softmax")
    rng = np.random.default_rng(0)
    C = np.stack([cl.cooccurrence(cl.copy_task(30, 6, 3, rng)[0]) for _ in range(3)])
    target = su._BiasedTarget(C, spec, np.array([0.1, 0.3, 0.5]), 400.0)
    gen = torch.Generator().manual_seed(1)
    g = torch.randn(3, 6, 6, dtype=torch.float64, generator=gen).requires_grad_(True)
    b = torch.randn(3, dtype=torch.float64, generator=gen).requires_grad_(True)
    E = target.energy({"g": g, "b": b})
    dg, db = torch.autograd.grad(E.sum(), (g, b))
    E2, grads = target.energy_and_grad({"g": g.detach(), "b": b.detach()})
    assert torch.allclose(E, E2, rtol=1e-12, atol=1e-9)
    assert torch.allclose(dg, grads["g"], atol=1e-10) and torch.allclose(db, grads["b"], atol=1e-10)
    # the bias is the only difference from the posterior, and it is zero at the centre
    c = cl.copy_weight(target.posterior.attention(g.detach(), b.detach()))
    assert torch.allclose(E2 - target.posterior.energy({"g": g.detach(), "b": b.detach()}),
                          200.0 * (c - target.centres) ** 2, atol=1e-9)


@pytest.fixture(scope="module")
def tiny():
    """L = 32 (a barrier under one nat: chains hop), 3 data sets, 10 windows, with hopping chains on the same data."""
    torch.set_num_threads(1)
    return su.umbrella_log_odds(32, 4, 3, 1500, n_warmup=200, thin=5, seed=2, n_windows=10, direct_steps=6000)


def test_umbrella_agrees_with_hopping_chains_on_the_same_data_sets(tiny):
    assert tiny.direct_crossings > 10
    assert np.isfinite(tiny.data_log_odds).all() and tiny.data_log_odds.shape == (3,)
    assert abs(tiny.paired_diff) < 4 * tiny.paired_err + 0.1
    assert tiny.overlap > 0.02 and tiny.rhat.shape == (10,) and tiny.ess.shape == (10,)
    assert tiny.half_log_odds.shape == (3, 2) and np.isfinite(tiny.half_log_odds).all()


def test_umbrella_result_is_consistent(tiny):
    lo_mean_share = math.log(np.mean(1 / (1 + np.exp(-tiny.data_log_odds)))
                             / np.mean(1 / (1 + np.exp(tiny.data_log_odds))))
    assert tiny.log_odds == pytest.approx(lo_mean_share) and tiny.log_odds_err > 0
    assert tiny.z == pytest.approx((tiny.log_odds - tiny.plugin_log_odds) / math.hypot(tiny.log_odds_err,
                                                                                       tiny.plugin_err))
    assert tiny.P == round(tiny.plugin_P3) and tiny.sharpness > 0
    # P3 from sampling: where the sampled log-odds, moved along the plug-in slope, crosses zero
    assert math.log(tiny.P3 / tiny.P) * tiny.sharpness == pytest.approx(-tiny.log_odds)
    assert 0 < tiny.accept[0] <= tiny.accept[1] < 1
    assert tiny.centres[0] < tiny.c_div < tiny.centres[-1]


@pytest.mark.parametrize("bad", [
    dict(L=2), dict(V=1), dict(n_data=1), dict(n_steps=3), dict(thin=0), dict(n_warmup=-1), dict(n_windows=1),
    dict(spring=-1.0), dict(gap_step=0.0), dict(direct_steps=0), dict(P=0), dict(c_range=(0.3, 0.1)),
    dict(c_range=(0.0, 0.5)), dict(seed=-1)])
def test_umbrella_log_odds_names_a_bad_argument(bad):
    args = dict(L=24, V=4, n_data=2, n_steps=40, n_warmup=0, thin=1, seed=0)
    args.update(bad)
    (name,) = bad
    with pytest.raises((ValueError, TypeError), match=rf"\b{name}\b"):
        su.umbrella_log_odds(**args)


@pytest.mark.parametrize("bad,name", [
    (dict(c=np.ones((1, 5))), "c"), (dict(c=np.full((2, 5), np.nan)), "c"), (dict(centres=[0.3, 0.2]), "centres"),
    (dict(centres=[0.1, 0.2, 0.3]), "centres"), (dict(spring=0.0), "spring"), (dict(c_div=0.9), "c_div")])
def test_windows_log_odds_names_a_bad_argument(bad, name):
    rng = np.random.default_rng(0)
    args = dict(c=rng.uniform(0.1, 0.4, (2, 5)), centres=[0.2, 0.3], spring=100.0, c_div=0.25)
    args.update(bad)
    with pytest.raises((ValueError, TypeError), match=rf"\b{name}\b"):
        su.windows_log_odds(**args)


def test_drift_z_is_the_mean_half_difference_over_its_standard_error(tiny):
    d = tiny.half_log_odds[:, 1] - tiny.half_log_odds[:, 0]
    assert tiny.drift_z == pytest.approx(abs(d.mean()) / (d.std(ddof=1) / math.sqrt(d.size)))
    # a shift of every data set's second half by 1 nat moves the mean difference by exactly 1
    shifted = dataclasses.replace(tiny, half_log_odds=tiny.half_log_odds + np.array([0.0, 1.0]))
    assert shifted.drift_z == pytest.approx(abs(d.mean() + 1) / (d.std(ddof=1) / math.sqrt(d.size)))
