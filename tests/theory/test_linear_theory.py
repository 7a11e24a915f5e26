"""Tests of copylib.theory.linear: reduced action, minima and thresholds of linear attention."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq

from copylib import ModelSpec, expected_loss, shift_matrix
from copylib.posterior.order_parameters import (
    attention_from_order_parameters,
    invariants,
    plugin_action_of_attention,
    prior_action_linear,
)
from copylib.theory.linear import (
    VERSIONS,
    copy_share,
    global_minimum,
    hessian_at_origin,
    minimum_curve,
    p1_analytic,
    p1_numerical,
    p2_analytic,
    p2_numerical,
    p2_numerical_many,
    predicted_test_loss,
    reduced_action,
    susceptibility_m,
    transverse_row_sum_factor,
)
from copylib.theory.linear_action import _plugin_readout as plugin_readout
from copylib.theory.linear_action import _reduced_action_gradient, _transverse_saddle

SPEC = ModelSpec(L=32, V=4, kind="linear")
SPEC_SMALL = ModelSpec(L=8, V=3, kind="linear", sigma_G=0.7, sigma_b=1.3, omega=0.8, sigma0_sq=1.2)


def _rng(k=0):
    return np.random.default_rng(1234 + k)


# --------------------------------------------------------------------------
# the action
# --------------------------------------------------------------------------


@pytest.mark.parametrize("spec", [SPEC, SPEC_SMALL])
def test_mean_field_action_is_plugin_action_plus_prior(spec):
    rng = _rng()
    m = rng.normal(size=7)
    q = rng.normal(size=7) * 0.1
    P = rng.uniform(1, 1000, size=7)
    A = attention_from_order_parameters(m, q, spec.L)
    want = plugin_action_of_attention(A, P, spec) + prior_action_linear(m, q, spec)
    got = reduced_action(m, q, P, spec)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-12)


def test_map_action_lacks_exactly_the_log_det_terms():
    spec = SPEC_SMALL
    rng = _rng(1)
    m, q, P = rng.normal(size=9), 0.2 * rng.normal(size=9), rng.uniform(0.5, 500, size=9)
    A = attention_from_order_parameters(m, q, spec.L)
    a1, a2, _, _ = invariants(A)
    eps = spec.V * spec.kappa / P
    logdet = spec.V * (spec.V - 1) / 2 * np.log1p(a1 / eps) + spec.V / 2 * np.log1p(a2 / eps)
    diff = reduced_action(m, q, P, spec) - reduced_action(m, q, P, spec, version="map")
    np.testing.assert_allclose(diff, logdet, rtol=1e-12, atol=1e-12)


def test_transverse_weight_enters_as_documented():
    spec = SPEC_SMALL
    L = spec.L
    m, q, r2, P = 0.4, 0.05, 0.3, 40.0
    cL = transverse_row_sum_factor(L)
    s_c2 = spec.sigma_G**2 / L**2
    n = L * L - 2
    # mean_field with r2: invariants shifted, bare prior r2/(2 s_c^2)
    from copylib.posterior.order_parameters import plugin_action

    base = plugin_action(m * m + (L - 1) * q * q + r2, L * m * m + cL * r2, m + (L - 1) * q, L * m, P, spec)
    prior = prior_action_linear(m, q, spec)
    assert reduced_action(m, q, P, spec, r2=r2) == pytest.approx(base + prior + r2 / (2 * s_c2), rel=1e-13)
    rho = r2 / (n * s_c2)
    fl = base + prior + n / 2 * (rho - 1 - math.log(rho))
    assert reduced_action(m, q, P, spec, version="fluct", r2=r2) == pytest.approx(fl, rel=1e-13)


def test_row_sum_factor_is_the_isotropic_average():
    L = 6
    rng = _rng(2)
    S = shift_matrix(L)
    J = np.ones((L, L))
    basis = np.stack([(J / L).ravel(), ((S - J / L) / math.sqrt(L - 1)).ravel()])
    X = rng.normal(size=(20000, L * L))
    X -= (X @ basis.T) @ basis  # project out J/L and S - J/L
    Ap = X.reshape(-1, L, L)
    ratio = (Ap.sum(-1) ** 2).sum(-1) / (Ap**2).sum((-1, -2))
    # E |A_perp 1|^2 / E |A_perp|^2 for a Gaussian (isotropic) A_perp
    est = (Ap.sum(-1) ** 2).sum(-1).mean() / (Ap**2).sum((-1, -2)).mean()
    assert est == pytest.approx(transverse_row_sum_factor(L), rel=0.01)
    assert ratio.max() <= L + 1e-9


@pytest.mark.parametrize("version", VERSIONS)
def test_gradient_matches_finite_differences(version):
    spec = SPEC_SMALL
    m, q, P = 0.37, 0.041, 55.0
    dm, dq = _reduced_action_gradient(m, q, P, spec, version=version)
    h = 1e-6
    fd_m = (reduced_action(m + h, q, P, spec, version=version) - reduced_action(m - h, q, P, spec, version=version)) / (2 * h)
    fd_q = (reduced_action(m, q + h, P, spec, version=version) - reduced_action(m, q - h, P, spec, version=version)) / (2 * h)
    assert float(dm) == pytest.approx(float(fd_m), rel=1e-6, abs=1e-7)
    assert float(dq) == pytest.approx(float(fd_q), rel=1e-6, abs=1e-7)


@pytest.mark.parametrize("version", VERSIONS)
def test_hessian_at_origin_matches_finite_differences(version):
    spec = SPEC_SMALL
    P, h = 7.0, 1e-4
    H = hessian_at_origin(P, spec, version)

    def S(m, q):
        return float(reduced_action(m, q, P, spec, version=version))

    S0 = S(0, 0)
    H_mm = (S(h, 0) + S(-h, 0) - 2 * S0) / h**2
    H_qq = (S(0, h) + S(0, -h) - 2 * S0) / h**2
    H_mq = (S(h, h) - S(h, -h) - S(-h, h) + S(-h, -h)) / (4 * h * h)
    np.testing.assert_allclose(H, [[H_mm, H_mq], [H_mq, H_qq]], rtol=1e-4, atol=1e-4)


def test_transverse_saddle_is_stationary_and_below_prior_mean():
    spec = SPEC
    m, q, P = np.array([0.0, 0.3, 0.2]), np.array([0.0, 0.01, 0.09]), np.array([10.0, 300.0, 3000.0])
    r2 = _transverse_saddle(m, q, P, spec)
    n_sc2 = (spec.L**2 - 2) * spec.sigma_G**2 / spec.L**2
    assert np.all((r2 > 0) & (r2 < n_sc2))
    for dr in (1e-4, -1e-4):
        assert np.all(reduced_action(m, q, P, spec, version="fluct", r2=r2 * (1 + dr))
                      >= reduced_action(m, q, P, spec, version="fluct", r2=r2))
    np.testing.assert_allclose(reduced_action(m, q, P, spec, version="fluct"),
                               reduced_action(m, q, P, spec, version="fluct", r2=r2), rtol=1e-14)


# --------------------------------------------------------------------------
# readout and loss
# --------------------------------------------------------------------------


def test_predicted_loss_equals_expected_loss_with_plugin_readout():
    spec = SPEC_SMALL
    rng = _rng(3)
    m, q, P = rng.uniform(0, 1, 5), rng.uniform(0, 0.3, 5), rng.uniform(1, 300, 5)
    A = attention_from_order_parameters(m, q, spec.L)
    W = plugin_readout(A, P, spec)
    want = expected_loss(A, W, spec.target)
    np.testing.assert_allclose(predicted_test_loss(m, q, P, spec), want, rtol=1e-12)
    # reference points: empty attention, pooling and copying at P -> infinity
    L, V = spec.L, spec.V
    assert predicted_test_loss(0.0, 0.0, 10.0, spec) == pytest.approx(1.0)
    assert predicted_test_loss(1.0, 0.0, 1e12, spec) == pytest.approx((1 - 1 / L) * (1 - 1 / V), rel=1e-8)
    assert predicted_test_loss(1.0, 1.0, 1e12, spec) == pytest.approx(0.0, abs=1e-9)


def test_readout_transverse_term_matches_explicit_average():
    spec = SPEC_SMALL
    L = spec.L
    rng = _rng(4)
    A = attention_from_order_parameters(0.5, 0.1, L)
    # average K_bar over A + A_perp with isotropic A_perp of weight r2 (exact by linearity in A^T A)
    S = shift_matrix(L)
    J = np.ones((L, L))
    basis = np.stack([(J / L).ravel(), ((S - J / L) / math.sqrt(L - 1)).ravel()])
    X = rng.normal(size=(40000, L * L))
    X -= (X @ basis.T) @ basis
    r2 = 0.3
    Ap = X.reshape(-1, L, L)
    Ap *= math.sqrt(r2 / (Ap**2).sum((-1, -2)).mean())
    from copylib import token_moment

    K_mc = token_moment(np.einsum("nji,njk->ik", A + Ap, A + Ap) / len(Ap), spec.V)
    K_th = token_moment(A.T @ A, spec.V) + r2 * (np.eye(spec.V) / spec.V + (transverse_row_sum_factor(L) - 1)
                                                  * np.ones((spec.V, spec.V)) / spec.V**2)
    np.testing.assert_allclose(K_mc, K_th, rtol=0.02, atol=2e-3)
    W = plugin_readout(A, 50.0, spec, r2=r2)
    assert W.shape == (spec.V, spec.V)


# --------------------------------------------------------------------------
# minima
# --------------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("P", [30.0, 300.0, 3000.0])
def test_minimum_is_stationary_and_global(version, P):
    spec = SPEC
    r = global_minimum(P, spec, version)
    assert r.coordinates["m"] > 0
    dm, dq = _reduced_action_gradient(r.coordinates["m"], r.coordinates["q"], P, spec, version=version)
    scale = abs(r.action) + 1
    assert abs(float(dm)) * r.coordinates["m"] < 1e-8 * scale and abs(float(dq)) * max(r.coordinates["q"], 1e-3) < 1e-8 * scale
    assert float(reduced_action(r.coordinates["m"], r.coordinates["q"], P, spec, version=version)) == pytest.approx(r.action, rel=1e-10, abs=1e-10)
    # no grid point is lower (coarse global check)
    mg, qg = np.meshgrid(np.linspace(0, 3, 61), np.linspace(-0.05, 0.3, 71))
    S = reduced_action(mg, qg, P, spec, version=version)
    assert S.min() >= r.action - 1e-9 * scale


def test_minimum_curve_matches_pointwise_minima():
    P = np.array([300.0, 10.0, 3000.0])
    c = minimum_curve(P, SPEC, "mean_field")
    for i, p in enumerate(P):
        r = global_minimum(p, SPEC, "mean_field")
        assert c.coordinates["m"][i] == pytest.approx(r.coordinates["m"], rel=1e-7, abs=1e-12)
        assert c.coordinates["q"][i] == pytest.approx(r.coordinates["q"], rel=1e-6, abs=1e-12)
    assert c.coordinates["m"][1] == 0 and np.isnan(c.order_parameter[1])


@pytest.mark.parametrize("version", VERSIONS)
def test_minimum_curve_of_all_versions_matches_pointwise_minima(version):
    """The batched curve (all P descended together, then from the neighbours' minima) finds
    the minimum of the one-P search at every P, across P1 and the crossover."""
    P = np.geomspace(2, 5000, 13)
    c = minimum_curve(P, SPEC, version)
    for i, p in enumerate(P):
        r = global_minimum(p, SPEC, version)
        assert c.action[i] <= r.action + 1e-10 * (1 + abs(r.action))
        assert c.coordinates["m"][i] == pytest.approx(r.coordinates["m"], rel=1e-6, abs=1e-9)
        assert c.coordinates["q"][i] == pytest.approx(r.coordinates["q"], rel=1e-6, abs=1e-9)


# --------------------------------------------------------------------------
# P1
# --------------------------------------------------------------------------


@pytest.mark.parametrize("spec", [SPEC, SPEC_SMALL])
@pytest.mark.parametrize("version", VERSIONS)
def test_p1_numerical_equals_exact_analytic(spec, version):
    P1n = p1_numerical(spec, version)
    P1a = p1_analytic(spec, version)
    tol = 1e-6 if version == "mean_field" else 1e-5
    assert P1n == pytest.approx(P1a, rel=tol)
    assert global_minimum(P1a * (1 - 1e-4), spec, version).coordinates["m"] == 0.0
    assert global_minimum(P1a * (1 + 1e-4), spec, version).coordinates["m"] > 0.0


def test_p1_forms_and_reference_values():
    exact = p1_analytic(SPEC)
    assert exact == pytest.approx(18.3, abs=0.05)  # model.md's reference value
    assert exact < p1_analytic(SPEC, form="m_only") < exact * (1 + 1e-4)
    assert p1_analytic(SPEC, form="leading") == pytest.approx(exact, rel=0.02)
    assert p1_analytic(ModelSpec(L=64, V=8, kind="linear")) == pytest.approx(71.8, abs=0.05)
    # MAP: no Occam factor, P1 ~ V
    assert p1_analytic(SPEC, "map") == pytest.approx(p1_analytic(SPEC, "map", "leading"), rel=1e-3)
    assert p1_analytic(SPEC, "map") < 4.0
    with pytest.raises(ValueError, match="form"):
        p1_analytic(SPEC, "fluct", "leading")


@pytest.mark.parametrize("version", ["mean_field", "map"])
def test_continuous_onset_with_square_root(version):
    spec = SPEC
    P1 = p1_analytic(spec, version)
    d = np.geomspace(1e-5, 1e-3, 5)
    m = np.array([global_minimum(P1 * (1 + x), spec, version).coordinates["m"] for x in d])
    slope = np.polyfit(np.log(d), np.log(m), 1)[0]
    assert slope == pytest.approx(0.5, rel=0.1)
    # continuity: m* -> 0 at P1
    assert m[0] < 0.02 * global_minimum(2 * P1, spec, version).coordinates["m"]


def test_susceptibility():
    s_p2 = SPEC.sigma_b**2 + SPEC.sigma_G**2 / SPEC.L**2
    assert float(susceptibility_m(1e-9, SPEC)) == pytest.approx(s_p2, rel=1e-6)
    P1 = p1_analytic(SPEC)
    chi = susceptibility_m(P1 * (1 - np.array([1e-2, 1e-3, 1e-4])), SPEC)
    assert np.all(np.diff(chi) > 0)
    assert chi[2] / chi[1] == pytest.approx(10, rel=0.01)  # 1/(P1 - P) divergence
    assert np.isnan(susceptibility_m(P1 * 1.01, SPEC))


# --------------------------------------------------------------------------
# P2
# --------------------------------------------------------------------------


def test_p2():
    L, V = SPEC.L, SPEC.V
    assert p2_analytic(SPEC) == pytest.approx(L**1.5 * V / math.sqrt(V - 1))
    assert p2_analytic(SPEC, "map") == p2_analytic(SPEC)
    assert p2_analytic(SPEC, "fluct") == pytest.approx(L**2 * V / (V - 1), rel=0.15)
    spec = ModelSpec(L=16, V=4, kind="linear")
    P2 = p2_numerical(spec, rtol=1e-5)
    r = global_minimum(P2, spec)
    assert float(copy_share(r.coordinates["m"], r.coordinates["q"], spec.L)) == pytest.approx(0.5, abs=1e-3)
    assert P2 == pytest.approx(p2_analytic(spec), rel=0.2)


def test_copy_share():
    assert float(copy_share(1.0, 0.0, 8)) == 0.0
    assert float(copy_share(1.0, 1.0, 8)) == pytest.approx(7 / 8)
    assert float(copy_share(-1.0, -1.0 / 7, 8)) == pytest.approx(0.5)  # sign invariant


# --------------------------------------------------------------------------
# input validation
# --------------------------------------------------------------------------


def test_bad_input_raises_value_error_naming_the_parameter():
    with pytest.raises(ValueError, match="m"):
        reduced_action(np.nan, 0.0, 10.0, SPEC)
    with pytest.raises(ValueError, match="q"):
        reduced_action(0.0, np.inf, 10.0, SPEC)
    with pytest.raises(ValueError, match="P"):
        reduced_action(0.1, 0.0, 0.0, SPEC)
    with pytest.raises(ValueError, match="P"):
        global_minimum(-3.0, SPEC)
    with pytest.raises(ValueError, match="hint"):
        global_minimum(30.0, SPEC, hint=(0.1, 0.0))
    with pytest.raises(ValueError, match="version"):
        reduced_action(0.1, 0.0, 10.0, SPEC, version="bogus")
    with pytest.raises(ValueError, match="r2"):
        reduced_action(0.1, 0.0, 10.0, SPEC, r2=-1.0)
    with pytest.raises(ValueError, match="r2"):
        reduced_action(0.1, 0.0, 10.0, SPEC, version="fluct", r2=0.0)
    with pytest.raises(ValueError, match="spec.kind"):
        p1_analytic(ModelSpec(L=8, V=3, kind="softmax"))
    with pytest.raises(ValueError, match="spec.cyclic"):
        reduced_action(0.1, 0.0, 10.0, ModelSpec(L=8, V=3, kind="linear", cyclic=False))
    with pytest.raises(ValueError, match="P_values"):
        minimum_curve(np.ones((2, 2)), SPEC)
    with pytest.raises(ValueError, match="A"):
        plugin_readout(np.ones((3, 3)), 10.0, SPEC)
    with pytest.raises(ValueError, match="form"):
        p1_analytic(SPEC, form="bogus")
    with pytest.raises(ValueError, match="L"):
        copy_share(1.0, 0.1, 1)
    with pytest.raises(TypeError, match="spec"):
        reduced_action(0.1, 0.0, 10.0, "spec")


# --------------------------------------------------------------------------
# large L: coexisting minima and the jump of the copy share
# --------------------------------------------------------------------------

from copylib.theory.linear import first_order_point, local_minima  # noqa: E402
from copylib.theory.results import FirstOrderPoint  # noqa: E402

SPEC_128 = ModelSpec(L=128, V=4, kind="linear")


def test_local_minima_single_at_small_L_across_the_crossover():
    # L = 32: one minimum at every P through the crossover of every version
    for version in VERSIONS:
        P2 = p2_numerical(SPEC, version, rtol=1e-4)
        found = local_minima(P2 * np.geomspace(0.5, 2.0, 9), SPEC, version)
        assert [len(f) for f in found] == [1] * 9, version
        for f in found:  # and it is the global minimum
            g = global_minimum(f[0].P, SPEC, version)
            assert f[0].action == pytest.approx(g.action, rel=1e-12, abs=1e-9)
            assert copy_share(f[0].coordinates["m"], f[0].coordinates["q"], SPEC.L) == pytest.approx(copy_share(g.coordinates["m"], g.coordinates["q"], SPEC.L), abs=1e-6)


def test_local_minima_finds_both_minima_at_large_L():
    # L = 128, MAP, at its P2: a pooling and a copying minimum, each a stationary point
    # with a positive-definite Hessian (finite differences of the action, independent of
    # the analytic Hessian), the global one lower
    P = p2_numerical(SPEC_128, "map", rtol=1e-8)
    found = local_minima(P, SPEC_128, "map")
    assert len(found) == 2
    pool, copy = found
    s = [float(copy_share(r.coordinates["m"], r.coordinates["q"], 128)) for r in found]
    assert s[0] < 0.45 and s[1] > 0.6
    for r in found:
        h = 1e-4
        dm = np.array([-h, 0, h]) * max(r.coordinates["m"], 1e-3)
        dq = np.array([-h, 0, h]) * max(abs(r.coordinates["q"]), 1e-5)
        M, Q = np.meshgrid(r.coordinates["m"] + dm, r.coordinates["q"] + dq, indexing="ij")
        S = reduced_action(M, Q, P, SPEC_128, version="map")
        assert S[1, 1] <= S.min() + 1e-9 * abs(S[1, 1])
    g = global_minimum(P, SPEC_128, "map")
    assert g.action == pytest.approx(min(pool.action, copy.action), rel=1e-12)


def test_copy_share_jump_continuous_at_small_L():
    j = first_order_point(SPEC, "map")
    assert isinstance(j, FirstOrderPoint)
    assert j.rel_width < 1e-10
    assert abs(j.jump) < 1e-6 and not j.two_minima and not j.first_order
    assert math.isnan(j.slope)


def test_copy_share_jump_first_order_at_large_L():
    j = first_order_point(SPEC_128, "map")
    assert j.first_order and j.two_minima and j.jump > 0.3
    below, above = j.delta_action
    assert below > 0 > above and j.slope < 0
    # envelope theorem: d(S_copy - S_pool)/d ln P = P dS/dP at fixed (m, q, r2) of each minimum,
    # a derivative of the action alone, independent of the branch tracking
    def dS_dlnP(r):
        h = 1e-6
        S = [reduced_action(r.coordinates["m"], r.coordinates["q"], r.P * f, SPEC_128, version="map") for f in (1 - h, 1 + h)]
        return float((S[1] - S[0]) / (math.log(1 + h) - math.log(1 - h)))
    want = dS_dlnP(j.copy) - dS_dlnP(j.pooling)
    assert j.slope == pytest.approx(want, rel=1e-3)
    # the global minimum on each side is the branch that the jump hands over to
    assert copy_share(j.pooling.coordinates["m"], j.pooling.coordinates["q"], 128) < 0.5 < copy_share(j.copy.coordinates["m"], j.copy.coordinates["q"], 128)


@pytest.mark.parametrize("kwargs, name", [
    (dict(span=(1.2, 3.0)), "span"), (dict(span=(0.5,)), "span"), (dict(n_scan=2), "n_scan"),
    (dict(rtol=0.0), "rtol"), (dict(delta=0.1), "delta"), (dict(sep=1.0), "sep"),
])
def test_copy_share_jump_rejects_bad_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name):
        first_order_point(SPEC, "map", **kwargs)


@pytest.mark.parametrize("kwargs, name", [(dict(n_rays=1), "n_rays"), (dict(sep=0.0), "sep"), (dict(P=-1.0), "P"),
                                          (dict(P=np.ones((2, 2))), "P")])
def test_local_minima_rejects_bad_arguments(kwargs, name):
    args = dict(P=100.0, spec=SPEC, version="map") | kwargs
    with pytest.raises(ValueError, match=name):
        local_minima(**args)


# --------------------------------------------------------------------------
# P2 of several specs at once, against the sequential scalar search
# --------------------------------------------------------------------------


def _p2_sequential(spec, version, rtol):
    """The scalar reference: a warm-started scan of global_minimum (8 points per decade from
    1.01 P1) to the first copy share >= 1/2, then brentq on the share, warm-started from the
    minimum below the crossing (the search p2_numerical made before it was batched)."""
    def share(r):
        return float(copy_share(r.coordinates["m"], r.coordinates["q"], spec.L)) if r.coordinates["m"] > 0 else 0.0

    hint, prev = None, None
    for P in p1_analytic(spec, version) * 1.01 * 10 ** (np.arange(80) / 8):
        r = global_minimum(float(P), spec, version, hint=hint)
        hint = (r.coordinates["m"], r.coordinates["q"], r.coordinates["r2"]) if r.coordinates["m"] > 0 else None
        if share(r) >= 0.5:
            break
        prev, prev_hint = float(P), hint
    return brentq(lambda P: share(global_minimum(P, spec, version, hint=prev_hint)) - 0.5, prev, float(P), rtol=rtol)


@pytest.mark.parametrize("version", ["mean_field", "fluct"])
def test_p2_numerical_many_matches_the_sequential_search(version):
    specs = [ModelSpec(L=32, V=2, kind="linear"), ModelSpec(L=64, V=8, kind="linear"),
             ModelSpec(L=128, V=4, kind="linear")]
    got = p2_numerical_many(specs, version, rtol=1e-4)
    want = [_p2_sequential(sp, version, 1e-5) for sp in specs]
    # both locate the same crossing: the batched one to a bracket of relative width 1e-4 (midpoint:
    # 5e-5), the reference to 1e-5
    np.testing.assert_allclose(got, want, rtol=6e-5)
    assert p2_numerical(specs[1], version, rtol=1e-4) == pytest.approx(got[1], rel=1e-12)


def test_p2_numerical_many_nan_where_there_is_no_crossover():
    # a copy prior much wider than the pooling one: copying dominates from the onset
    wide = ModelSpec(L=8, V=3, kind="linear", sigma_G=30.0, sigma_b=0.1)
    with pytest.raises(ArithmeticError):
        p2_numerical(wide)
    got = p2_numerical_many([wide, SPEC], rtol=1e-4)
    assert np.isnan(got[0]) and got[1] == pytest.approx(p2_numerical(SPEC, rtol=1e-4), rel=1e-12)
    with pytest.raises(ValueError, match="specs"):
        p2_numerical_many([])
