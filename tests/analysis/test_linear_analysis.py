"""Tests of copylib.analysis.linear (sampled summaries, onset fit, MAP sweeps)."""

from __future__ import annotations

import numpy as np
import pytest

from copylib import ModelSpec
from copylib.analysis.linear import chain_group_summary, onset_from_squares

SPEC = ModelSpec(L=32, V=4, kind="linear")


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
    from copylib.analysis.linear import map_sweep_datasets

    spec = ModelSpec(L=6, V=3, kind="linear")
    r = map_sweep_datasets([2, 50], spec, (1, 2), init_scales=(0.1, 1.0), n_steps=200, lr=0.05)
    assert r.m.shape == r.q.shape == r.test_loss.shape == r.objective.shape == (2, 2)
    assert np.all(r.m >= 0)
    assert np.all(np.isfinite(r.test_loss)) and np.all(r.test_loss <= 1.0 + 1e-9)



def test_map_sweep_quenched_adam_part_equals_map_sweep_datasets_and_polish_lowers_the_objective():
    from copylib.analysis.linear import map_sweep_datasets, map_sweep_quenched

    spec = ModelSpec(L=6, V=3, kind="linear")
    kw = dict(init_scales=(0.1, 1.0), n_steps=60, lr=0.05, lr_final=1e-2)
    r = map_sweep_quenched([2, 40], spec, (3, 4), **kw)
    a = map_sweep_datasets([2, 40], spec, (3, 4), **kw)
    for name in ("m", "q", "test_loss", "objective"):
        assert np.array_equal(getattr(r, name), getattr(a, name))
    # 60 Adam steps are far from converged: L-BFGS must go lower and reach a stationary point
    assert (r.objective_exact <= r.objective + 1e-12).all()
    assert (r.objective - r.objective_exact).max() > 1e-6
    assert r.grad_exact.max() < 1e-5
    assert (r.m_exact >= 0).all() and r.m_exact.shape == (2, 2)
    # a converged minimiser is a fixed point: polishing it again changes nothing
    r2 = map_sweep_quenched([40], spec, (3,), init_scales=(1.0,), n_steps=3000, lr=0.05, lr_final=1e-4)
    assert abs(r2.m[0, 0] - r2.m_exact[0, 0]) < 1e-3 * max(r2.m_exact[0, 0], 1e-3)
