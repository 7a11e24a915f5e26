"""Tests of copylib.theory.softmax_transition: minima of the softmax action, spinodals, the
first-order point and its barrier, the global minimum along P, and the leading-order P3."""

from __future__ import annotations

import math

import numpy as np
import pytest

from copylib import ModelSpec
from copylib.theory import softmax_transition as stt
from copylib.theory.softmax_action import (
    DEFAULT_DELTA_MAX,
    DEFAULT_N_GRID,
    DeltaGrid,
    copy_weight_of_gap,
    reduced_action,
    reduced_action_derivatives,
    state_loss,
)
from copylib.theory.softmax_noise import row_noise
from copylib.theory.softmax_transition import (
    first_order_point,
    leading_order_gap,
    local_minima,
    minimum_curve,
    p3_leading_order,
    spinodals,
)

SPEC = ModelSpec(L=32, V=4)


def _DF(minima):
    """Gaps and actions of a tuple of Minimum (local_minima) as two arrays."""
    return np.array([r.coordinates["Delta"] for r in minima]), np.array([r.action for r in minima])


def _gaps(point):
    """The ``(pooling, copy)`` gaps of a first-order point."""
    return np.array([point.pooling.coordinates["Delta"], point.copy.coordinates["Delta"]])


@pytest.fixture(scope="module")
def noise():
    return row_noise(SPEC, np.random.default_rng(0), n_draws=1024)


@pytest.fixture(scope="module")
def p3_mean_field():
    return first_order_point(SPEC, "mean_field")


@pytest.mark.parametrize("version", ["mean_field", "map"])
def test_minima_are_minima(version):
    for P in (100.0, 345.0, 2000.0):
        D, F = _DF(local_minima(P, SPEC, version))
        assert D.size >= 1
        h = 1e-5
        for d, f in zip(D, F):
            Fp, Fm = reduced_action([d + h, d - h], P, SPEC, version=version)
            assert abs(Fp - Fm) / (2 * h) < 1e-6 * max(1.0, abs(f))
            assert (Fp - 2 * f + Fm) / h**2 > 0
            assert Fp > f and Fm > f


@pytest.mark.parametrize("version", ["mean_field", "fluct"])
def test_curve_finds_the_minima_of_action_minima_at_every_P(version, noise):
    """minimum_curve refines all P's brackets in one vectorised root search; each
    P's global minimum is the lowest of local_minima's local minima (found one P at a
    time), the roots are zeros of F' to the root-finder's tolerance, and n_minima agrees."""
    nz = noise if version == "fluct" else None
    P_grid = np.array([5.0, 150.0, 330.0, 341.0, 345.0, 381.0, 700.0, 3000.0])
    curve = minimum_curve(P_grid, SPEC, version, noise=nz)
    for i, P in enumerate(P_grid):
        D, F = _DF(local_minima(P, SPEC, version, noise=nz))
        assert curve.n_minima[i] == D.size
        assert curve.coordinates["Delta"][i] == pytest.approx(D[np.argmin(F)], abs=1e-12)
        assert curve.action[i] == pytest.approx(F.min(), rel=1e-13)
        if curve.coordinates["Delta"][i] > 0:
            _, Fp, Fpp = reduced_action_derivatives(curve.coordinates["Delta"][i], P, SPEC, version=version, noise=nz)
            assert abs(Fp) < 1e-12 * max(1.0, Fpp)  # |F'| <= F'' * (Delta tolerance)


def test_branches_equal_at_p3_and_spinodals(p3_mean_field):
    r = p3_mean_field
    sp = r.spinodals
    assert sp.P_lower < r.P3 < sp.P_upper
    D, F = _DF(local_minima(r.P3, SPEC))
    assert D.size == 2
    assert abs(F[1] - F[0]) <= 1e-8 * abs(F).max()
    np.testing.assert_allclose(D, _gaps(r), rtol=1e-9)
    below = _DF(local_minima(sp.P_lower * (1 - 1e-3), SPEC))[0]
    above = _DF(local_minima(sp.P_upper * (1 + 1e-3), SPEC))[0]
    assert below.size == 1 and below[0] < sp.Delta_lower < _gaps(r)[1]
    assert above.size == 1 and above[0] > _gaps(r)[1] > sp.Delta_upper
    for P in (sp.P_lower * (1 + 1e-2), sp.P_upper * (1 - 1e-2)):
        assert len(local_minima(P, SPEC)) == 2
    # at a spinodal the marginal minimum is an inflection point with F' = 0
    for P, d in ((sp.P_lower, sp.Delta_lower), (sp.P_upper, sp.Delta_upper)):
        _, F1, F2 = reduced_action_derivatives(d, P, SPEC)
        assert abs(F1) < 1e-7 and abs(F2) < 1e-6
    # reference value of model.md section 4 (reproduced exactly)
    assert r.P3 == pytest.approx(342.0, abs=0.1)
    assert _gaps(r)[0] == pytest.approx(0.33, abs=0.005) and _gaps(r)[1] == pytest.approx(1.80, abs=0.01)
    # the two states at P3 are local_minima's, with their copy weights and losses
    for state, d, f in zip((r.pooling, r.copy), D, F):
        assert state.coordinates["Delta"] == d and state.action == f and state.P == r.P3
        assert state.order_parameter == pytest.approx(float(copy_weight_of_gap(d, SPEC)), rel=1e-14)
        assert state.test_loss == pytest.approx(float(state_loss(d, r.P3, SPEC)), rel=1e-14)
    assert r.first_order and r.two_minima and r.P2 is None and r.slope is None


def test_jump_is_discontinuous(p3_mean_field):
    P3 = p3_mean_field.P3
    c = minimum_curve(np.array([P3 / 1.25, P3 * (1 - 1e-6), P3 * (1 + 1e-6), P3 * 1.25]), SPEC)
    jump = c.order_parameter[2] - c.order_parameter[1]
    assert jump > 0.5 * (c.order_parameter[3] - c.order_parameter[0])
    assert jump == pytest.approx(p3_mean_field.jump, rel=1e-4)
    assert c.test_loss[2] < c.test_loss[1] - 0.3  # the loss drops from ~0.71 to ~0.36
    assert (np.diff(c.order_parameter) > 0).all()


def test_map_p3_is_below_mean_field_p3(p3_mean_field):
    r = first_order_point(SPEC, "map")
    assert 300 < r.P3 < p3_mean_field.P3
    assert r.spinodals.P_lower < r.P3 < r.spinodals.P_upper


def test_no_jump_for_short_sequences():
    with pytest.raises(ValueError, match="no coexistence"):
        spinodals(ModelSpec(L=12, V=4), "mean_field")


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


def test_barrier_at_p3_is_the_action_maximum_between_equal_minima(p3_mean_field):
    from copylib.theory.softmax_transition import barrier_at_p3

    bar = barrier_at_p3(p3_mean_field, SPEC, "mean_field")
    D = np.linspace(*_gaps(p3_mean_field), 201)
    F = reduced_action(D, p3_mean_field.P3, SPEC)
    # a coarser grid can only find a lower maximum, by at most the curvature over one fine step
    assert 0 < F.max() - F[0] <= bar + 1e-12
    assert bar == pytest.approx(F.max() - F[0], rel=1e-3)
    # equal minima at P3 (root-finder precision): the height is the same from the copy side
    assert F[0] == pytest.approx(F[-1], abs=1e-8)
    with pytest.raises(ValueError, match="point"):
        barrier_at_p3(p3_mean_field.P3, SPEC)


def test_copy_minimum_depth_at_p3_is_the_barrier_and_vanishes_at_the_spinodal(p3_mean_field):
    from copylib.theory.softmax_transition import barrier_at_p3, copy_minimum_depth

    r = p3_mean_field
    B, s = copy_minimum_depth(r.P3, SPEC)
    # equal minima at P3: the depth below the barrier top is the barrier; the grid maximum of
    # barrier_at_p3 is below the brentq top by at most the curvature over one grid step
    assert B == pytest.approx(barrier_at_p3(r, SPEC, n_grid=20001), rel=1e-6)
    assert 0 < s < _gaps(r)[1] - _gaps(r)[0]
    # B ~ delta^(3/2) near the lower spinodal: a quarter of the distance gives an eighth of the depth
    P_lo = r.spinodals.P_lower
    near, nearer = copy_minimum_depth(P_lo * 1.004, SPEC)[0], copy_minimum_depth(P_lo * 1.001, SPEC)[0]
    assert 0 < nearer < near and near / nearer == pytest.approx(8.0, rel=0.05)  # next order: delta/P_lower
    with pytest.raises(ValueError, match="single minimum"):
        copy_minimum_depth(0.5 * P_lo, SPEC)


def test_local_and_global_minimum_states(p3_mean_field):
    from copylib.theory.softmax_transition import global_minimum, local_minimum_copy_weights

    P_in = 0.5 * (p3_mean_field.P3 + p3_mean_field.spinodals.P_upper)  # two minima, the copy one global
    c_loc = local_minimum_copy_weights(P_in, SPEC)
    D, F = _DF(local_minima(P_in, SPEC))
    assert c_loc.size == 2 and np.all(np.diff(c_loc) > 0)
    np.testing.assert_allclose(c_loc, copy_weight_of_gap(D, SPEC), rtol=1e-12)
    g = global_minimum(P_in, SPEC)
    c_glob, loss_glob = g.order_parameter, g.test_loss
    assert g.coordinates["Delta"] == D[np.argmin(F)] and g.action == F.min() and g.grad_norm is None
    assert c_glob == pytest.approx(c_loc[np.argmin(F)], rel=1e-12) and c_glob == pytest.approx(c_loc[-1])
    assert loss_glob == pytest.approx(float(state_loss(D[-1], P_in, SPEC)), rel=1e-12)
    with pytest.raises(ValueError, match="P"):
        global_minimum(-1.0, SPEC)


@pytest.mark.parametrize("version", ["mean_field", "energy"])
def test_spinodal_scan_refines_every_inflection_pair_as_one_at_a_time(version):
    # the scan of spinodals() refines all inflection points of its 400 sample sizes together;
    # each must equal the scalar search (inflection_pair's brentq, 1e-14 in Delta): F' at the
    # hump and the dip agree to rounding, and the same sizes have a pair
    spec = ModelSpec(L=64, V=8)
    grid = DeltaGrid(DEFAULT_DELTA_MAX, DEFAULT_N_GRID, spec, version, None)
    Ps = np.geomspace(*stt._default_range(spec), 120)
    many = stt._states_many(Ps, spec, version, None, grid)
    one = [stt._state(P, spec, version, None, grid) for P in Ps]
    assert [s is None for s in many] == [s is None for s in one]
    assert sum(s is not None for s in one) > 10
    got = np.array([s for s in many if s is not None])
    want = np.array([s for s in one if s is not None])
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9 * np.abs(want).max())
