"""Tests of copylib.linear_experiments (integrated theory moments, sampled summaries, onset fit)."""

from __future__ import annotations

import numpy as np
import pytest

from copylib import ModelSpec
from copylib.linear_experiments import chain_group_summary, integrated_moments, onset_from_squares
from copylib.linear_theory import action_minimum, susceptibility_m

SPEC = ModelSpec(L=32, V=4, kind="linear")


def test_integrated_moments_small_P_matches_laplace_variance():
    # far below P1 the action is nearly quadratic: E m^2 ~ the Laplace variance
    P = 0.05
    mom = integrated_moments(P, SPEC, "mean_field", m_max=6.0, n_m=241)
    lap = float(susceptibility_m(P, SPEC, "mean_field"))
    assert abs(mom.var_m / lap - 1) < 0.05
    assert abs(mom.q) < 1e-8  # symmetric posterior: E[q sign m] = 0 when q decouples
    assert abs(mom.binder) < 0.05


def test_integrated_moments_large_P_close_to_minimum():
    # well above P1 the posterior concentrates around +-m*: sqrt(E m^2) -> m* within a few widths
    P = 1000.0
    mom = integrated_moments(P, SPEC, "mean_field")
    r = action_minimum(P, SPEC, "mean_field")
    assert abs(mom.rms_m - r.m) < 0.05 * r.m
    assert mom.abs_m <= mom.rms_m + 1e-12
    assert mom.binder > 0.5


def test_chain_group_summary_on_gaussian_draws():
    rng = np.random.default_rng(0)
    m = rng.normal(size=(2, 8, 400)) * np.array([1.0, 2.0])[:, None, None]
    q = 0.1 * m + 0.01 * rng.normal(size=m.shape)
    s = chain_group_summary(m, q)
    assert np.allclose(s.rms_m, [1.0, 2.0], rtol=0.05)
    assert np.all(s.rms_m_se > 0) and np.all(s.rms_m_se < 0.05 * s.rms_m)
    # E[q sign m] = 0.1 E|m| = 0.1 sqrt(2/pi) sigma
    assert np.allclose(s.q, 0.1 * np.sqrt(2 / np.pi) * np.array([1.0, 2.0]), rtol=0.05)
    with pytest.raises(ValueError):
        chain_group_summary(m[0], q[0])


def test_onset_from_squares_exact_for_linear_m2():
    P = np.arange(1.0, 12.0)
    m = np.sqrt(np.clip(0.3 * (P - 4.4), 0, None))
    assert onset_from_squares(P, m) == pytest.approx(4.4, rel=1e-12)
    with pytest.raises(ValueError):
        onset_from_squares(P, np.zeros_like(P))


def test_map_sweep_datasets_shapes_and_gauge():
    from copylib.linear_experiments import map_sweep_datasets

    spec = ModelSpec(L=6, V=3, kind="linear")
    r = map_sweep_datasets([2, 50], spec, (1, 2), init_scales=(0.1, 1.0), n_steps=200, lr=0.05)
    assert r.m.shape == r.q.shape == r.test_loss.shape == r.objective.shape == (2, 2)
    assert np.all(r.m >= 0)
    assert np.all(np.isfinite(r.test_loss)) and np.all(r.test_loss <= 1.0 + 1e-9)
