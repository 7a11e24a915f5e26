"""Unit tests of copylib.inference.diagnostics: the ArviZ adapter must tell mixed chains from stuck ones,
and z_calibration must tell calibrated error bars from inflated or optimistic ones."""

from __future__ import annotations

import numpy as np

from copylib.inference import diagnostics as dg


def _ar1(rng, R, n, phi, offsets=0.0):
    x = np.empty((R, n))
    x[:, 0] = rng.normal(size=R) / np.sqrt(1 - phi**2)
    for t in range(1, n):
        x[:, t] = phi * x[:, t - 1] + rng.normal(size=R)
    return x + np.asarray(offsets).reshape(-1, 1)


def test_independent_chains_pass_and_ess_matches_ar1_theory():
    rng = np.random.default_rng(0)
    phi, R, n = 0.5, 4, 4000
    d = dg.chain_diagnostics(_ar1(rng, R, n, phi))
    assert d.passes()
    # AR(1): ESS = R n (1 - phi) / (1 + phi); the estimate's relative error is a few percent at this length
    expected = R * n * (1 - phi) / (1 + phi)
    assert abs(d.ess_bulk / expected - 1) < 0.15


def test_chains_stuck_in_separate_modes_fail():
    rng = np.random.default_rng(1)
    x = _ar1(rng, 4, 2000, 0.5, offsets=[0.0, 0.0, 3.0, 3.0])
    d = dg.chain_diagnostics(x)
    assert d.rhat > 1.1 and not d.passes()


def test_drift_flags_a_trend_within_chains():
    rng = np.random.default_rng(2)
    x = _ar1(rng, 8, 2000, 0.3) + np.linspace(0, 1.0, 2000)
    assert dg.chain_diagnostics(x).drift_z > 4


def test_several_observables_at_once():
    rng = np.random.default_rng(3)
    x = np.stack([_ar1(rng, 4, 1000, 0.2), _ar1(rng, 4, 1000, 0.2, offsets=[0, 0, 0, 5])], axis=-1)
    d = dg.chain_diagnostics(x)
    assert d.rhat.shape == (2,) and d.rhat[0] < dg.RHAT_MAX < d.rhat[1]


def test_z_calibration_tells_calibrated_from_inflated_and_optimistic():
    rng = np.random.default_rng(4)
    z = rng.normal(size=200)
    assert dg.z_calibration(z).calibrated
    assert dg.z_calibration(0.6 * z).mean_z2 < dg.z_calibration(0.6 * z).lo   # error bars too large
    assert dg.z_calibration(1.6 * z).mean_z2 > dg.z_calibration(1.6 * z).hi   # error bars too small
