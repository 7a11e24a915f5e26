"""Tests of copylib.theory.softmax: the reduced action of the softmax copy state,
its minima, spinodals and first-order point, and the leading-order P3."""

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
from copylib.theory import softmax as softmax_theory
from copylib.theory.softmax import (
    VERSIONS,
    action_minima,
    copy_weight_of_gap,
    first_order_point,
    leading_order_gap,
    order_parameter_curve,
    p3_leading_order,
    plugin_readout,
    reduced_action,
    reduced_action_derivatives,
    row_noise,
    spinodals,
    state_loss,
    transverse_average,
)

SPEC = ModelSpec(L=32, V=4)
ODD = ModelSpec(L=24, V=3, sigma_G=1.3, omega=0.7, sigma0_sq=0.6)


@pytest.fixture(scope="module")
def noise():
    return row_noise(SPEC, np.random.default_rng(0), n_draws=1024)


@pytest.fixture(scope="module")
def p3_mean_field():
    return first_order_point(SPEC, "mean_field")


def _logdets(Delta, P, spec):
    a1, a2, _, _ = invariants(copy_attention(Delta, spec.L), spec.cyclic)
    eps = spec.V * spec.kappa / P
    return spec.V * (spec.V - 1) / 2 * np.log1p(a1 / eps) + spec.V / 2 * np.log1p(a2 / eps)


# --------------------------------------------------------------------------- the action


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


def test_fluct_is_deterministic_and_matches_full_matrix_average(noise):
    again = row_noise(SPEC, np.random.default_rng(0), n_draws=1024)
    np.testing.assert_array_equal(again.shift, noise.shift)
    # mean copy weight of noisy rows (global copy mode removed) vs full noisy matrices
    ta = transverse_average(2.0, 600.0, SPEC, np.random.default_rng(4), n_samples=400)
    c = copy_weight_of_gap(2.0, SPEC, version="fluct", noise=noise)
    assert c == pytest.approx(ta.copy_weight, rel=0.02)
    data = reduced_action(2.0, 600.0, SPEC, version="fluct", noise=noise) - prior_action_softmax(2.0, SPEC)
    assert data == pytest.approx(ta.mean_field, abs=1.0)
    assert ta.free_energy <= ta.mean + 1e-12  # Jensen


def test_readout_and_loss_of_a_state():
    for Delta, P in [(0.3, 340.0), (1.8, 340.0), (4.0, 5e4)]:
        A = copy_attention(Delta, SPEC.L)
        W = plugin_readout(A, P, SPEC)
        a1, a2, g1, g2 = invariants(A)
        eps = SPEC.V * SPEC.kappa / P
        V = SPEC.V
        Wref = g1 / (a1 + eps) * (np.eye(V) - 1 / V) + g2 / (a2 + eps) / V
        np.testing.assert_allclose(W, Wref, rtol=1e-12, atol=1e-14)
        assert state_loss(Delta, P, SPEC) == pytest.approx(float(expected_loss(A, W, SPEC.target)), rel=1e-12)
        assert copy_weight_of_gap(Delta, SPEC) == pytest.approx(float(copy_weight(A)), rel=1e-13)
    # large P, large Delta: the loss of the copy state goes to 0
    assert state_loss(12.0, 1e9, SPEC) < 1e-4


# --------------------------------------------------------------------------- minima and the transition


@pytest.mark.parametrize("version", ["mean_field", "map"])
def test_minima_are_minima(version):
    for P in (100.0, 345.0, 2000.0):
        D, F = action_minima(P, SPEC, version)
        assert D.size >= 1
        h = 1e-5
        for d, f in zip(D, F):
            Fp, Fm = reduced_action([d + h, d - h], P, SPEC, version=version)
            assert abs(Fp - Fm) / (2 * h) < 1e-6 * max(1.0, abs(f))
            assert (Fp - 2 * f + Fm) / h**2 > 0
            assert Fp > f and Fm > f


@pytest.mark.parametrize("version", ["mean_field", "fluct"])
def test_curve_finds_the_minima_of_action_minima_at_every_P(version, noise):
    """order_parameter_curve refines all P's brackets in one vectorised root search; each
    P's global minimum is the lowest of action_minima's local minima (found one P at a
    time), the roots are zeros of F' to the root-finder's tolerance, and n_minima agrees."""
    nz = noise if version == "fluct" else None
    P_grid = np.array([5.0, 150.0, 330.0, 341.0, 345.0, 381.0, 700.0, 3000.0])
    curve = order_parameter_curve(P_grid, SPEC, version, noise=nz)
    for i, P in enumerate(P_grid):
        D, F = action_minima(P, SPEC, version, noise=nz)
        assert curve.n_minima[i] == D.size
        assert curve.Delta[i] == pytest.approx(D[np.argmin(F)], abs=1e-12)
        assert curve.action[i] == pytest.approx(F.min(), rel=1e-13)
        if curve.Delta[i] > 0:
            _, Fp, Fpp = reduced_action_derivatives(curve.Delta[i], P, SPEC, version=version, noise=nz)
            assert abs(Fp) < 1e-12 * max(1.0, Fpp)  # |F'| <= F'' * (Delta tolerance)


def test_grid_tables_are_cached_per_noise_and_read_only(noise):
    """The Delta-grid row averages are memoised on the rows' values: another noise sample
    gets its own table, the stored tables cannot be modified, and the store is bounded."""
    from copylib.theory import softmax as st

    st._GRID_CACHE.clear()
    other = row_noise(SPEC, np.random.default_rng(1), n_draws=1024)
    g1 = st._DeltaGrid(20.0, 401, SPEC, "fluct", noise)
    g2 = st._DeltaGrid(20.0, 401, SPEC, "fluct", other)
    F1, F2 = g1.parts(500.0, 1)[1], g2.parts(500.0, 1)[1]
    assert not np.array_equal(F1, F2) and len(st._GRID_CACHE) == 2
    cs, _ = st._grid_averages(g1.x, g1.rows, 1, g1.key)
    with pytest.raises(ValueError, match="read-only"):
        cs[0][0] = 1.0
    np.testing.assert_array_equal(st._DeltaGrid(20.0, 401, SPEC, "fluct", noise).parts(500.0, 1)[1], F1)
    fresh = st._row_averages(g1.x, g1.rows, 1)
    np.testing.assert_array_equal(cs[1], fresh[0][1])  # the stored table is the computed one
    for n in range(12, 3, -1):
        st._DeltaGrid(20.0, 101 + n, SPEC, "mean_field", None).parts(500.0, 0)
    assert len(st._GRID_CACHE) == st._GRID_CACHE_SIZE


def test_branches_equal_at_p3_and_spinodals(p3_mean_field):
    r = p3_mean_field
    sp = r.spinodals
    assert sp.P_lower < r.P3 < sp.P_upper
    D, F = action_minima(r.P3, SPEC)
    assert D.size == 2
    assert abs(F[1] - F[0]) <= 1e-8 * abs(F).max()
    np.testing.assert_allclose(D, r.Delta, rtol=1e-9)
    below, above = action_minima(sp.P_lower * (1 - 1e-3), SPEC), action_minima(sp.P_upper * (1 + 1e-3), SPEC)
    assert below[0].size == 1 and below[0][0] < sp.Delta_lower < r.Delta[1]
    assert above[0].size == 1 and above[0][0] > r.Delta[1] > sp.Delta_upper
    for P in (sp.P_lower * (1 + 1e-2), sp.P_upper * (1 - 1e-2)):
        assert action_minima(P, SPEC)[0].size == 2
    # at a spinodal the marginal minimum is an inflection point with F' = 0
    for P, d in ((sp.P_lower, sp.Delta_lower), (sp.P_upper, sp.Delta_upper)):
        _, F1, F2 = reduced_action_derivatives(d, P, SPEC)
        assert abs(F1) < 1e-7 and abs(F2) < 1e-6
    # reference value of model.md section 4 (reproduced exactly)
    assert r.P3 == pytest.approx(342.0, abs=0.1)
    assert r.Delta[0] == pytest.approx(0.33, abs=0.005) and r.Delta[1] == pytest.approx(1.80, abs=0.01)


def test_jump_is_discontinuous(p3_mean_field):
    P3 = p3_mean_field.P3
    c = order_parameter_curve(np.array([P3 / 1.25, P3 * (1 - 1e-6), P3 * (1 + 1e-6), P3 * 1.25]), SPEC)
    jump = c.copy_weight[2] - c.copy_weight[1]
    assert jump > 0.5 * (c.copy_weight[3] - c.copy_weight[0])
    assert jump == pytest.approx(p3_mean_field.jump["copy_weight"], rel=1e-4)
    assert c.loss[2] < c.loss[1] - 0.3  # the loss drops from ~0.71 to ~0.36
    assert (np.diff(c.copy_weight) > 0).all()


def test_map_p3_is_below_mean_field_p3(p3_mean_field):
    r = first_order_point(SPEC, "map")
    assert 300 < r.P3 < p3_mean_field.P3
    assert r.spinodals.P_lower < r.P3 < r.spinodals.P_upper


def test_no_jump_for_short_sequences():
    with pytest.raises(ValueError, match="no coexistence"):
        spinodals(ModelSpec(L=12, V=4), "mean_field")


# --------------------------------------------------------------------------- leading order


def test_leading_order_gap_solves_its_equation():
    for L in (42, 64, 1000, 10**6):
        D = leading_order_gap(L)
        assert D > 1.5 and D == pytest.approx(0.5 * math.log((L - 1) * (D - 1)), rel=1e-13)
    assert math.isnan(leading_order_gap(32)) and math.isnan(p3_leading_order(32, 4))


@pytest.mark.parametrize("L", [128, 1000, 100000])
def test_p3_leading_order_accuracy(L):
    """P3_energy = P3_lo [1 + D/((D-1) L) + O(D^4/L^2)]: the O(1/L) term is the whole error."""
    spec = ModelSpec(L=L, V=4)
    P3 = first_order_point(spec, "energy").P3
    lo = p3_leading_order(L, 4, spec)
    D = leading_order_gap(L)
    first = D / ((D - 1) * L)
    assert abs(P3 / lo - 1) < 1.5 * first
    assert abs(P3 / lo - 1 - first) < 0.15 * first


def test_p3_leading_order_scales_with_constants():
    spec = ModelSpec(L=200, V=4, sigma_G=2.0, sigma0_sq=0.5)
    assert p3_leading_order(200, 4, spec) == pytest.approx(p3_leading_order(200, 4) * 0.5 / 4.0, rel=1e-14)


# --------------------------------------------------------------------------- input checks


def test_bad_input(noise):
    with pytest.raises(ValueError, match="P"):
        reduced_action(1.0, 0.0, SPEC)
    with pytest.raises(ValueError, match="P"):
        reduced_action(1.0, [10.0, -1.0], SPEC)
    with pytest.raises(ValueError, match="P"):
        action_minima(-5.0, SPEC)
    with pytest.raises(ValueError, match="Delta"):
        reduced_action([1.0, np.nan], 10.0, SPEC)
    with pytest.raises(ValueError, match="Delta"):
        reduced_action(np.inf, 10.0, SPEC)
    with pytest.raises(ValueError, match="kind"):
        reduced_action(1.0, 10.0, ModelSpec(L=8, V=2, kind="linear"))
    with pytest.raises(ValueError, match="kind"):
        first_order_point(ModelSpec(L=8, V=2, kind="linear"))
    with pytest.raises(ValueError, match="version"):
        reduced_action(1.0, 10.0, SPEC, version="bayes")
    with pytest.raises(TypeError, match="noise"):
        reduced_action(1.0, 10.0, SPEC, version="fluct")
    with pytest.raises(ValueError, match="noise"):
        reduced_action(1.0, 10.0, SPEC, version="mean_field", noise=noise)
    with pytest.raises(ValueError, match="L"):
        reduced_action(1.0, 10.0, ODD, version="fluct", noise=noise)
    with pytest.raises(ValueError, match="n_draws"):
        row_noise(SPEC, np.random.default_rng(0), n_draws=1000)
    with pytest.raises(TypeError, match="rng"):
        row_noise(SPEC, 0)
    with pytest.raises(ValueError, match="P_grid"):
        order_parameter_curve(np.array([10.0, 0.0]), SPEC)
    with pytest.raises(ValueError, match="P_range"):
        spinodals(SPEC, P_range=(10.0, 5.0))
    with pytest.raises(ValueError, match="A"):
        plugin_readout(np.ones((3, 3)), 10.0, SPEC)


# --------------------------------------------------------------------------- helpers of the chapter


def test_barrier_at_p3_is_the_action_maximum_between_equal_minima(p3_mean_field):
    from copylib.theory.softmax import barrier_at_p3

    bar = barrier_at_p3(p3_mean_field, SPEC, "mean_field")
    D = np.linspace(*p3_mean_field.Delta, 201)
    F = reduced_action(D, p3_mean_field.P3, SPEC)
    # a coarser grid can only find a lower maximum, by at most the curvature over one fine step
    assert 0 < F.max() - F[0] <= bar + 1e-12
    assert bar == pytest.approx(F.max() - F[0], rel=1e-3)
    # equal minima at P3 (root-finder precision): the height is the same from the copy side
    assert F[0] == pytest.approx(F[-1], abs=1e-8)
    with pytest.raises(ValueError, match="point"):
        barrier_at_p3(p3_mean_field.P3, SPEC)


def test_copy_minimum_depth_at_p3_is_the_barrier_and_vanishes_at_the_spinodal(p3_mean_field):
    from copylib.theory.softmax import barrier_at_p3, copy_minimum_depth

    r = p3_mean_field
    B, s = copy_minimum_depth(r.P3, SPEC)
    # equal minima at P3: the depth below the barrier top is the barrier; the grid maximum of
    # barrier_at_p3 is below the brentq top by at most the curvature over one grid step
    assert B == pytest.approx(barrier_at_p3(r, SPEC, n_grid=20001), rel=1e-6)
    assert 0 < s < r.Delta[1] - r.Delta[0]
    # B ~ delta^(3/2) near the lower spinodal: a quarter of the distance gives an eighth of the depth
    P_lo = r.spinodals.P_lower
    near, nearer = copy_minimum_depth(P_lo * 1.004, SPEC)[0], copy_minimum_depth(P_lo * 1.001, SPEC)[0]
    assert 0 < nearer < near and near / nearer == pytest.approx(8.0, rel=0.05)  # next order: delta/P_lower
    with pytest.raises(ValueError, match="single minimum"):
        copy_minimum_depth(0.5 * P_lo, SPEC)


def test_local_and_global_minimum_states(p3_mean_field):
    from copylib.theory.softmax import global_minimum_state, local_minimum_copy_weights

    P_in = 0.5 * (p3_mean_field.P3 + p3_mean_field.spinodals.P_upper)  # two minima, the copy one global
    c_loc = local_minimum_copy_weights(P_in, SPEC)
    D, F = action_minima(P_in, SPEC)
    assert c_loc.size == 2 and np.all(np.diff(c_loc) > 0)
    np.testing.assert_allclose(c_loc, copy_weight_of_gap(D, SPEC), rtol=1e-12)
    c_glob, loss_glob = global_minimum_state(P_in, SPEC)
    assert c_glob == pytest.approx(c_loc[np.argmin(F)], rel=1e-12) and c_glob == pytest.approx(c_loc[-1])
    assert loss_glob == pytest.approx(float(state_loss(D[-1], P_in, SPEC)), rel=1e-12)
    with pytest.raises(ValueError, match="P"):
        global_minimum_state(-1.0, SPEC)


@pytest.mark.parametrize("version", ["mean_field", "energy"])
def test_spinodal_scan_refines_every_inflection_pair_as_one_at_a_time(version):
    # the scan of spinodals() refines all inflection points of its 400 sample sizes together;
    # each must equal the scalar search (inflection_pair's brentq, 1e-14 in Delta): F' at the
    # hump and the dip agree to rounding, and the same sizes have a pair
    st = softmax_theory
    spec = ModelSpec(L=64, V=8)
    grid = st._DeltaGrid(st._DEFAULT_DELTA_MAX, st._DEFAULT_N_GRID, spec, version, None)
    Ps = np.geomspace(*st._default_range(spec), 120)
    many = st._states_many(Ps, spec, version, None, grid)
    one = [st._state(P, spec, version, None, grid) for P in Ps]
    assert [s is None for s in many] == [s is None for s in one]
    assert sum(s is not None for s in one) > 10
    got = np.array([s for s in many if s is not None])
    want = np.array([s for s in one if s is not None])
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9 * np.abs(want).max())
