"""Tests of copylib.theory.softmax_action: the reduced action of the softmax copy state in every
version, its derivatives, the plug-in readout and the loss of a state, and the cached Delta grid."""

from __future__ import annotations

import math

import numpy as np
import pytest

from copylib import ModelSpec, cooccurrence, copy_task, expected_loss, optimal_readout, sum_squared_error, token_moment
from copylib.posterior.evidence import negative_log_evidence
from copylib.posterior.order_parameters import (
    copy_attention,
    copy_weight,
    invariants,
    plugin_action_of_attention,
    prior_action_softmax,
)
from copylib.theory import softmax_action as sa
from copylib.theory.softmax_action import (
    VERSIONS,
    copy_weight_of_gap,
    reduced_action,
    reduced_action_derivatives,
    state_loss,
)
from copylib.theory.softmax_noise import row_averages, row_noise

SPEC = ModelSpec(L=32, V=4)
ODD = ModelSpec(L=24, V=3, sigma_G=1.3, omega=0.7, sigma0_sq=0.6)


@pytest.fixture(scope="module")
def noise():
    return row_noise(SPEC, np.random.default_rng(0), n_draws=1024)


def _logdets(Delta, P, spec):
    a1, a2, _, _ = invariants(copy_attention(Delta, spec.L), spec.cyclic)
    eps = spec.V * spec.kappa / P
    return spec.V * (spec.V - 1) / 2 * np.log1p(a1 / eps) + spec.V / 2 * np.log1p(a2 / eps)


@pytest.mark.parametrize("spec", [SPEC, ODD, ModelSpec(L=9, V=5, sigma_G=0.8, cyclic=False)])
def test_mean_field_action_is_plugin_action_of_copy_attention_plus_prior(spec):
    Delta = np.linspace(-2.0, 8.0, 23)
    P = np.array([3.0, 150.0, 1e5])[:, None]
    F = reduced_action(Delta, P, spec)
    ref = plugin_action_of_attention(copy_attention(Delta, spec.L), P, spec) + prior_action_softmax(Delta, spec)
    assert F.shape == (3, 23)
    np.testing.assert_allclose(F, ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())


@pytest.mark.parametrize("spec", [SPEC, ODD])
def test_map_action_is_mean_field_minus_exactly_the_logdet_terms(spec):
    Delta = np.linspace(0.0, 6.0, 13)
    P = np.array([[10.0], [400.0]])
    diff = reduced_action(Delta, P, spec) - reduced_action(Delta, P, spec, version="map")
    np.testing.assert_allclose(diff, _logdets(Delta, P, spec), rtol=1e-12)


def test_min_over_W_is_the_trace_term_on_real_data():
    """min_W [SSE/(2 s^2) + |W|^2/(2 omega)] = (y2 - tr B^T (K + kappa I)^{-1} B)/(2 s^2), exactly."""
    spec = ODD
    X, _ = copy_task(40, spec.L, spec.V, np.random.default_rng(1))
    C = cooccurrence(X)
    A = copy_attention(1.3, spec.L)
    W = optimal_readout(A, C, spec)

    def energy(W):
        return sum_squared_error(A, W, C, spec.target) / (2 * spec.sigma_sq) + (W**2).sum() / (2 * spec.omega)

    best = energy(W)
    rng = np.random.default_rng(2)
    for _ in range(5):  # W is the minimiser
        assert energy(W + 1e-3 * rng.standard_normal(W.shape)) > best
    # evidence = trace term + (V/2) ln det(I + K/kappa) + (P L V/2) ln(2 pi sigma^2)
    K = np.einsum("lm,lmab->ab", A.T @ A, C)
    logdet = np.linalg.slogdet(np.eye(spec.V) + K / spec.kappa)[1]
    nle = negative_log_evidence(A, C, spec)
    const = 40 * spec.L * spec.V / 2 * math.log(2 * math.pi * spec.sigma_sq)
    assert nle == pytest.approx(best + spec.V / 2 * logdet + const, rel=1e-12)


def test_map_action_is_the_plugin_trace_term():
    """The MAP action is (y2_bar - tr B_bar^T (K_bar + kappa I)^{-1} B_bar)/(2 s^2) + prior, minus the constant."""
    spec = ODD
    for Delta, P in [(0.2, 30.0), (2.5, 700.0)]:
        A = copy_attention(Delta, spec.L)
        Kb = P * token_moment(A.T @ A, spec.V)
        Bb = P * token_moment(A.T @ spec.target, spec.V)
        y2b = P * spec.L
        trace = (y2b - np.trace(Bb.T @ np.linalg.solve(Kb + spec.kappa * np.eye(spec.V), Bb))) / (2 * spec.sigma_sq)
        F = reduced_action(Delta, P, spec, version="map")
        assert F + P * spec.L / (2 * spec.sigma_sq) == pytest.approx(trace + prior_action_softmax(Delta, spec), rel=1e-12)


def test_energy_action_is_the_notes_formula():
    Delta = np.linspace(0, 5, 11)
    P = 342.0
    G0 = P * (SPEC.V - 1) / (2 * SPEC.sigma0_sq * SPEC.V)
    s = 1 / (1 + (SPEC.L - 1) * np.exp(-2 * Delta))
    ref = -G0 * s + (SPEC.L - 1) * Delta**2 / (2 * SPEC.sigma_G**2)
    np.testing.assert_allclose(reduced_action(Delta, P, SPEC, version="energy"), ref, rtol=1e-13, atol=1e-12)


@pytest.mark.parametrize("version", VERSIONS)
def test_derivatives_match_finite_differences(version, noise):
    kw = {"noise": noise} if version == "fluct" else {}
    Delta = np.array([0.05, 0.4, 1.3, 2.2, 4.0])
    P = 500.0
    F, F1, F2 = reduced_action_derivatives(Delta, P, SPEC, version=version, **kw)
    h = 1e-4
    Fp, Fm = (reduced_action(Delta + s * h, P, SPEC, version=version, **kw) for s in (1, -1))
    np.testing.assert_allclose(F1, (Fp - Fm) / (2 * h), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(F2, (Fp - 2 * F + Fm) / h**2, rtol=1e-4, atol=1e-3)


def test_fluct_without_noise_is_mean_field():
    rows = row_noise(SPEC, np.random.default_rng(3), n_draws=4, std=0.0)
    Delta = np.linspace(0, 5, 9)
    np.testing.assert_allclose(
        reduced_action(Delta, 300.0, SPEC, version="fluct", noise=rows), reduced_action(Delta, 300.0, SPEC),
        rtol=1e-13,
    )


def test_readout_and_loss_of_a_state():
    for Delta, P in [(0.3, 340.0), (1.8, 340.0), (4.0, 5e4)]:
        A = copy_attention(Delta, SPEC.L)
        W = sa._plugin_readout(A, P, SPEC)
        a1, a2, g1, g2 = invariants(A)
        eps = SPEC.V * SPEC.kappa / P
        V = SPEC.V
        Wref = g1 / (a1 + eps) * (np.eye(V) - 1 / V) + g2 / (a2 + eps) / V
        np.testing.assert_allclose(W, Wref, rtol=1e-12, atol=1e-14)
        assert state_loss(Delta, P, SPEC) == pytest.approx(float(expected_loss(A, W, SPEC.target)), rel=1e-12)
        assert copy_weight_of_gap(Delta, SPEC) == pytest.approx(float(copy_weight(A)), rel=1e-13)
    # large P, large Delta: the loss of the copy state goes to 0
    assert state_loss(12.0, 1e9, SPEC) < 1e-4


def test_grid_tables_are_cached_per_noise_and_read_only(noise):
    """The Delta-grid row averages are memoised on the rows' values: another noise sample
    gets its own table, the stored tables cannot be modified, and the store is bounded."""
    sa._GRID_CACHE.clear()
    other = row_noise(SPEC, np.random.default_rng(1), n_draws=1024)
    g1 = sa.DeltaGrid(20.0, 401, SPEC, "fluct", noise)
    g2 = sa.DeltaGrid(20.0, 401, SPEC, "fluct", other)
    F1, F2 = g1.parts(500.0, 1)[1], g2.parts(500.0, 1)[1]
    assert not np.array_equal(F1, F2) and len(sa._GRID_CACHE) == 2
    cs, _ = sa._grid_averages(g1.x, g1.rows, 1, g1.key)
    with pytest.raises(ValueError, match="read-only"):
        cs[0][0] = 1.0
    np.testing.assert_array_equal(sa.DeltaGrid(20.0, 401, SPEC, "fluct", noise).parts(500.0, 1)[1], F1)
    fresh = row_averages(g1.x, g1.rows, 1)
    np.testing.assert_array_equal(cs[1], fresh[0][1])  # the stored table is the computed one
    for n in range(12, 3, -1):
        sa.DeltaGrid(20.0, 101 + n, SPEC, "mean_field", None).parts(500.0, 0)
    assert len(sa._GRID_CACHE) == sa._GRID_CACHE_SIZE
