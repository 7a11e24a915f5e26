"""Tests of copylib.inference.free_energy: MBAR along a ladder against exact partition functions.

Statistical tolerance. Each estimate is repeated over independent replicates (exact draws, or
independent tempering runs); the test allows 4.5 standard errors of the replicate mean (a Gaussian
deviation beyond that has probability 7e-6; the seeds are fixed, so the outcome is deterministic).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import integrate

from copylib.inference.free_energy import _ladder_weights, ladder_log_partition
from copylib.inference.tempering import parallel_tempering

pytestmark = pytest.mark.usefixtures("one_thread")

# Gaussian ladder: prior N(0, I_D), U_data = a |x|^2 / 2, so rung beta is N(0, I / (1 + a beta)) and
# ln Z(beta) / Z(0) = -(D / 2) ln(1 + a beta).
D, A_GAUSS = 3, 40.0
BETAS = np.concatenate([[0.0], np.geomspace(0.005, 1, 11)])


def gaussian_draws(rng, n=400):
    x = rng.standard_normal((BETAS.size, n, D)) / np.sqrt(1 + A_GAUSS * BETAS)[:, None, None]
    return A_GAUSS * (x**2).sum(-1) / 2, x


def test_log_partition_matches_the_gaussian_ladder_on_and_between_rungs():
    at = np.array([0.0, 0.003, 0.05, 0.3, 0.77, 1.0])  # rungs and points between them
    est = np.array([ladder_log_partition(gaussian_draws(np.random.default_rng(s))[0], BETAS, at) for s in range(12)])
    exact = -D / 2 * np.log1p(A_GAUSS * at)
    se = est.std(0, ddof=1) / math.sqrt(len(est))
    assert est[:, 0] == pytest.approx(0.0, abs=1e-9)  # normalised at the first rung
    assert (np.abs(est.mean(0) - exact)[1:] < 4.5 * se[1:]).all(), (est.mean(0), exact, se)
    assert (est.std(0, ddof=1) < 0.1).all()  # 400 draws per rung: overlap is good, the estimate is sharp


def test_weights_reweight_expectations_to_a_temperature_between_rungs():
    beta = 0.2  # between the rungs 0.163 and 0.264
    est = []
    for s in range(12):
        u, x = gaussian_draws(np.random.default_rng(100 + s))
        w = _ladder_weights(u, BETAS, beta)
        assert w.shape == (u.size,) and w.sum() == pytest.approx(1.0) and (w >= 0).all()
        est.append(w @ (x**2).sum(-1).ravel())
    est = np.array(est)
    assert abs(est.mean() - D / (1 + A_GAUSS * beta)) < 4.5 * est.std(ddof=1) / math.sqrt(est.size)


# Restricted ladders: a double well split at x = 0. Prior N(0, 1) gives each half the mass 1/2;
# U_data = Q (x^2 - 1)^2 + T x puts a barrier of height ~Q between the wells and favours x < 0.
Q, T = 6.0, 1.5
WALL_BETAS = np.concatenate([[0.0], np.geomspace(0.02, 1, 9)])


def data_term(x):
    return Q * (x**2 - 1) ** 2 + T * x


def exact_log_odds(beta):
    def dens(y):
        return math.exp(-beta * data_term(y) - y * y / 2)
    right, left = integrate.quad(dens, 0, 8)[0], integrate.quad(dens, -8, 0)[0]
    return math.log(right / left)


def restricted_run(right, seed, n_runs=8):
    def energy(p):
        x = p["x"][:, 0]
        inside = x > 0 if right else x <= 0
        return data_term(x), x**2 / 2 + torch.where(inside, 0.0, torch.inf)
    start = np.full((n_runs, 1), 1.0 if right else -1.0)
    return parallel_tempering(energy, {"x": start}, WALL_BETAS, 2000, 0.3, torch.Generator().manual_seed(seed),
                              n_warmup=400, thin=4)


def test_restricted_ladders_give_the_mass_of_each_half():
    right, left = restricted_run(True, 1), restricted_run(False, 2)
    assert (right.samples["x"] > 0).all() and (left.samples["x"] <= 0).all()  # the wall holds
    at = np.array([0.1, 0.5, 1.0])
    odds = np.array([ladder_log_partition(right.likelihood[:, i], WALL_BETAS, at)
                     - ladder_log_partition(left.likelihood[:, i], WALL_BETAS, at) for i in range(8)])
    exact = np.array([exact_log_odds(b) for b in at])
    se = odds.std(0, ddof=1) / math.sqrt(len(odds))
    assert (np.abs(odds.mean(0) - exact) < 4.5 * se).all(), (odds.mean(0), exact, se)
    assert abs(exact[-1]) > 1  # the halves' masses differ: the test can tell the weights apart


@pytest.mark.parametrize("kw, name", [
    (dict(u_data=np.zeros((3, 5)), betas=[0.0, 1.0], at=0.5), "u_data"),
    (dict(u_data=np.zeros((2, 5)), betas=[0.0, 0.5], at=0.5), "betas"),
    (dict(u_data=np.zeros((2, 5)), betas=[0.0, 1.0], at=1.5), "at"),
    (dict(u_data=np.full((2, 5), np.nan), betas=[0.0, 1.0], at=0.5), "u_data"),
])
def test_bad_input_names_the_parameter(kw, name):
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        ladder_log_partition(**kw)
