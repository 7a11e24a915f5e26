"""Tests of copylib.inference.tempering: replica exchange recovers the weights of a two-well target
that plain MALA cannot cross, the exchange bookkeeping, reproducibility and argument errors.

Statistical tolerance. The weight of the right well is estimated from ``n_runs`` independent
ladders; its error is the standard error of the per-run estimates (independent runs, so no
autocorrelation estimate is needed). The test allows 4.5 standard errors (a Gaussian deviation
beyond that has probability 7e-6); the seed is fixed, so the outcome is deterministic.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import integrate

from copylib.inference.langevin import langevin
from copylib.inference.tempering import TemperingResult, check_ladder, parallel_tempering

pytestmark = pytest.mark.usefixtures("one_thread")

# likelihood: mixture w N(-A, S^2) + (1 - w) N(A, S^2); prior N(0, PRIOR_SD^2)
A, S, W_LEFT, PRIOR_SD = 3.0, 0.4, 0.3, 3.0
BETAS = np.concatenate([[0.0], np.geomspace(0.02, 1, 7)])


def likelihood_term(x):
    x = x[:, 0]
    left = math.log(W_LEFT) - (x + A) ** 2 / (2 * S**2)
    right = math.log(1 - W_LEFT) - (x - A) ** 2 / (2 * S**2)
    return -torch.logaddexp(left, right)


def energy(p):
    return likelihood_term(p["x"]), p["x"][:, 0] ** 2 / (2 * PRIOR_SD**2)


def exact_right_weight():
    def density(y):
        return math.exp(-float(likelihood_term(torch.tensor([[y]]))[0]) - y * y / (2 * PRIOR_SD**2))
    left = integrate.quad(density, -12, 0, points=[-A])[0]
    right = integrate.quad(density, 0, 12, points=[A])[0]
    return right / (left + right)


def run(n_steps=1500, seed=0, n_runs=12, **kw):
    return parallel_tempering(energy, {"x": np.full((n_runs, 1), -A)}, kw.pop("betas", BETAS), n_steps, 0.5,
                              torch.Generator().manual_seed(seed), n_warmup=300, **kw)


def test_tempering_recovers_the_well_weights_where_mala_stays_in_one_well():
    res = run()
    assert isinstance(res, TemperingResult)
    right = (res.samples["x"][-1, :, :, 0] > 0).mean(1)  # per run, posterior rung
    target = exact_right_weight()
    assert abs(right.mean() - target) < 4.5 * right.std(ddof=1) / math.sqrt(right.size), (right.mean(), target)
    mala = langevin(lambda p: sum(energy(p)), {"x": np.full((12, 1), -A)}, 1500, 0.5,
                    torch.Generator().manual_seed(0), n_warmup=300)
    assert (mala.samples["x"] < 0).all()  # the barrier (~ A^2 / 2 S^2 = 28) is not crossed


def test_walkers_make_round_trips_and_swaps_are_accepted():
    res = run(n_steps=600)
    assert res.swap_rate.shape == (BETAS.size - 1, 12) and res.round_trips.shape == (12,)
    assert (res.swap_rate > 0.3).all() and (res.swap_rate <= 1).all()
    assert (res.round_trips >= 5).all()
    assert ((res.accept_rate > 0.3) & (res.accept_rate < 0.9)).all()


def test_without_swaps_there_are_no_round_trips():
    res = run(n_steps=200, swap_every=10**6)
    assert (res.round_trips == 0).all() and (res.swap_rate == 0).all()


def test_prior_rung_samples_the_prior():
    res = run()
    x0 = res.samples["x"][0, :, :, 0]
    per_run = (x0 ** 2).mean(1)
    assert abs(per_run.mean() - PRIOR_SD**2) < 4.5 * per_run.std(ddof=1) / math.sqrt(per_run.size)


def test_same_seed_same_numbers_and_shapes():
    a, b = run(n_steps=50, thin=5), run(n_steps=50, thin=5)
    assert np.array_equal(a.samples["x"], b.samples["x"]) and np.array_equal(a.likelihood, b.likelihood)
    assert a.samples["x"].shape == (BETAS.size, 12, 10, 1) and a.likelihood.shape == (BETAS.size, 12, 10)
    assert a.final_params["x"].shape == (BETAS.size, 12, 1) and a.step_size.shape == (BETAS.size, 12)
    c = run(n_steps=50, thin=5, seed=1)
    assert not np.array_equal(a.samples["x"], c.samples["x"])


@pytest.mark.parametrize("betas, match", [([0.0, 0.5], "end at 1"), ([0.5, 0.2, 1.0], "increasing"),
                                          ([-0.1, 1.0], r"\[0, 1\]"), ([0.0, 1.5], r"\[0, 1\]"), ([], "betas")])
def test_bad_ladder_names_betas_and_range(betas, match):
    with pytest.raises(ValueError, match=match):
        check_ladder(betas)
    with pytest.raises(ValueError, match="betas"):
        run(n_steps=5, betas=betas)


@pytest.mark.parametrize("kw, name", [({"swap_every": 0}, "swap_every"), ({"thin": 0}, "thin"),
                                      ({"target_accept": 1.5}, "target_accept"), ({"scales": {"y": 1.0}}, "scales")])
def test_bad_arguments_name_the_parameter(kw, name):
    with pytest.raises((ValueError, TypeError), match=name):
        run(n_steps=5, **kw)


def test_energy_of_the_wrong_shape_is_refused():
    with pytest.raises(ValueError, match="energy"):
        parallel_tempering(lambda p: (p["x"].sum(), p["x"].sum()), {"x": np.zeros((2, 1))}, [0.0, 1.0], 5, 0.5,
                           torch.Generator().manual_seed(0), n_warmup=0)
