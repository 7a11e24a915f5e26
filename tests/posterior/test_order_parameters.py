"""Tests of copylib.posterior.order_parameters: invariants, order parameters, softmax
coordinates, the plug-in action and the priors in order-parameter space."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import torch

from copylib import ModelSpec, attention, attention_logits, cooccurrence, copy_task, shift_matrix, token_moment
from copylib.posterior.order_parameters import (
    attention_from_order_parameters,
    copy_attention,
    copy_weight,
    invariants,
    logit_gap,
    order_parameters,
    plugin_action,
    plugin_action_of_attention,
    prior_action_linear,
    prior_action_softmax,
)

RNG_SEED = 20240611


def _rng(k=0):
    return np.random.default_rng(RNG_SEED + k)


def _frob(X, Y):
    return float(np.sum(X * Y))


# --------------------------------------------------------------------------
# invariants and order parameters
# --------------------------------------------------------------------------


@pytest.mark.parametrize("L", [2, 3, 8])
def test_invariants_match_definitions(L):
    rng = _rng(L)
    A = rng.normal(size=(3, 2, L, L))
    one = np.ones(L)
    for cyclic in (True, False):
        T = shift_matrix(L, cyclic)
        a1, a2, g1, g2 = invariants(A, cyclic=cyclic)
        assert a1.shape == a2.shape == g1.shape == g2.shape == (3, 2)
        for idx in np.ndindex(3, 2):
            Ai = A[idx]
            assert a1[idx] == pytest.approx(np.trace(Ai.T @ Ai), abs=1e-12)
            assert a2[idx] == pytest.approx(np.sum((Ai @ one) ** 2), abs=1e-12)
            assert g1[idx] == pytest.approx(np.trace(Ai.T @ T), abs=1e-12)
            # gamma_2 is the grand sum of A^T T (what E[X^T A^T T X] needs) ...
            assert g2[idx] == pytest.approx(one @ Ai.T @ T @ one, abs=1e-12)
            if cyclic:  # ... which is 1^T A 1 for the cyclic target
                assert g2[idx] == pytest.approx(one @ Ai @ one, abs=1e-12)
                assert g1[idx] == pytest.approx(sum(Ai[l, l - 1] for l in range(L)), abs=1e-12)


def test_invariants_torch_keeps_autograd():
    A = torch.randn(5, 5, dtype=torch.float64, requires_grad=True)
    a1, a2, g1, g2 = invariants(A)
    (a1 + a2 + g1 + g2).backward()
    assert A.grad is not None and isinstance(a1, torch.Tensor)


@pytest.mark.parametrize("L", [2, 5, 16])
def test_decomposition_orthogonality_and_reconstruction(L):
    rng = _rng(100 + L)
    A = rng.normal(size=(4, L, L))
    J = np.ones((L, L))
    T = shift_matrix(L)
    D = T - J / L
    # the two symmetric directions: orthogonal, with the stated norms
    assert _frob(J / L, D) == pytest.approx(0.0, abs=1e-12)
    assert _frob(J / L, J / L) == pytest.approx(1.0, abs=1e-12)
    assert _frob(D, D) == pytest.approx(L - 1, abs=1e-12)
    m, q, r2 = order_parameters(A)
    assert m.shape == q.shape == r2.shape == (4,)
    A_sym = attention_from_order_parameters(m, q, L)
    for i in range(4):
        A_perp = A[i] - A_sym[i]
        assert _frob(A_perp, J) == pytest.approx(0.0, abs=1e-10)
        assert _frob(A_perp, D) == pytest.approx(0.0, abs=1e-10)
        assert r2[i] == pytest.approx(_frob(A_perp, A_perp), rel=1e-12)
        assert r2[i] == pytest.approx(_frob(A[i], A[i]) - m[i] ** 2 - (L - 1) * q[i] ** 2, rel=1e-10)
        assert m[i] == pytest.approx(A[i].sum() / L, rel=1e-12)
        assert q[i] == pytest.approx(_frob(A[i], D) / (L - 1), rel=1e-12)


def test_order_parameter_round_trip_exact():
    rng = _rng(1)
    L = 7
    m, q = rng.normal(size=(2, 3)), rng.normal(size=(2, 3))
    A = attention_from_order_parameters(m, q, L)
    assert A.shape == (2, 3, L, L) and A.dtype == np.float64
    m2, q2, r2 = order_parameters(A)
    np.testing.assert_allclose(m2, m, rtol=0, atol=1e-14)
    np.testing.assert_allclose(q2, q, rtol=0, atol=1e-14)
    np.testing.assert_allclose(r2, 0.0, atol=1e-26)
    # broadcasting m (scalar) against q (vector)
    A = attention_from_order_parameters(0.5, np.array([0.0, 1.0]), L)
    assert A.shape == (2, L, L)
    np.testing.assert_allclose(A[0], np.full((L, L), 0.5 / L))


def test_reference_states():
    L = 6
    J, T = np.ones((L, L)), shift_matrix(L)
    m, q, r2 = order_parameters(np.stack([J / L, T, np.zeros((L, L))]))
    np.testing.assert_allclose(m, [1, 1, 0], atol=1e-14)
    np.testing.assert_allclose(q, [0, 1, 0], atol=1e-14)
    np.testing.assert_allclose(r2, [0, 0, 0], atol=1e-14)


@pytest.mark.parametrize("L", [3, 8])
def test_invariants_through_order_parameters(L):
    """model.md section 3 in (m, q, r2); alpha_2 = L m^2 needs zero-row-sum A_perp."""
    rng = _rng(200 + L)
    # generic A: alpha_1, gamma_1, gamma_2 exact; alpha_2 = L m^2 + |A_perp 1|^2
    A = rng.normal(size=(5, L, L))
    m, q, r2 = order_parameters(A)
    a1, a2, g1, g2 = invariants(A)
    np.testing.assert_allclose(a1, m**2 + (L - 1) * q**2 + r2, rtol=1e-12)
    np.testing.assert_allclose(g1, m + (L - 1) * q, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(g2, L * m, rtol=1e-12, atol=1e-12)
    A_perp = A - attention_from_order_parameters(m, q, L)
    row_perp = A_perp.sum(-1)
    np.testing.assert_allclose(a2, L * m**2 + (row_perp**2).sum(-1), rtol=1e-12)
    assert np.all(np.abs(a2 - L * m**2) > 1e-6)  # generic A: not L m^2
    # |A_perp 1|^2 <= L r2 (Cauchy-Schwarz), so model.md's "alpha_2 = L m^2 + r^2" is not exact
    assert np.all((row_perp**2).sum(-1) <= L * r2 + 1e-12)
    # row-stochastic A (any softmax attention): all row sums equal -> alpha_2 = L m^2 exactly
    G = rng.normal(size=(5, L, L)) * 2
    A = attention(G, "softmax")
    m, q, r2 = order_parameters(A)
    a1, a2, g1, g2 = invariants(A)
    np.testing.assert_allclose(m, 1.0, rtol=1e-12)
    np.testing.assert_allclose(a2, L * m**2, rtol=1e-12)
    assert np.all(r2 > 1e-6)  # although A_perp != 0
    # and A with equal (non-unit) row sums
    A = 0.3 * A  # rows sum to 0.3
    m, q, r2 = order_parameters(A)
    np.testing.assert_allclose(invariants(A)[1], L * m**2, rtol=1e-12)


# --------------------------------------------------------------------------
# softmax coordinates
# --------------------------------------------------------------------------


@pytest.mark.parametrize("L", [2, 4, 32])
def test_copy_attention_is_row_softmax_of_gap(L):
    Delta = np.array([-3.0, 0.0, 0.7, 2.5, 10.0])
    A = copy_attention(Delta, L)
    T = shift_matrix(L)
    G = Delta[:, None, None] * T
    np.testing.assert_allclose(A, attention(G, "softmax"), rtol=1e-13, atol=1e-16)
    c = 1.0 / (1.0 + (L - 1) * np.exp(-Delta))
    np.testing.assert_allclose(copy_weight(A), c, rtol=1e-13)
    for i, ci in enumerate(c):
        np.testing.assert_allclose(A[i][T == 1], ci, rtol=1e-13)
        np.testing.assert_allclose(A[i][T == 0], (1 - ci) / (L - 1), rtol=1e-12)
    # order parameters of the copy state: m = 1, q = (L c - 1)/(L - 1), r2 = 0
    m, q, r2 = order_parameters(A)
    np.testing.assert_allclose(m, 1.0, rtol=1e-13)
    np.testing.assert_allclose(q, (L * c - 1) / (L - 1), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(r2, 0.0, atol=1e-14)


def test_logit_gap_round_trip_exact():
    rng = _rng(3)
    for L in (2, 5, 32):
        Delta = rng.normal(size=(3, 4)) * 3
        np.testing.assert_allclose(logit_gap(copy_attention(Delta, L)), Delta, rtol=0, atol=1e-12)
        A = copy_attention(Delta, L)
        np.testing.assert_allclose(copy_attention(logit_gap(A), L), A, rtol=1e-12, atol=1e-15)
    # uniform attention has zero gap
    assert logit_gap(np.full((6, 6), 1 / 6)) == pytest.approx(0.0, abs=1e-13)


def test_logit_gap_rejects_copy_weight_outside_unit_interval():
    L = 5
    with pytest.raises(ValueError, match=r"c = .*\(0, 1\)|\(0, 1\).*c ="):
        logit_gap(shift_matrix(L))  # c = 1
    with pytest.raises(ValueError, match="A"):
        logit_gap(np.zeros((L, L)))  # c = 0
    with pytest.raises(ValueError, match="A"):
        logit_gap(np.stack([np.full((L, L), 1 / L), -np.eye(L)]))  # one bad entry in a batch


@pytest.mark.parametrize("L", [2, 8, 32])
def test_copy_identity_gamma1_sq_over_L_alpha1(L):
    Delta = np.linspace(-2, 6, 17)
    a1, a2, g1, g2 = invariants(copy_attention(Delta, L))
    np.testing.assert_allclose(g1**2 / (L * a1), 1 / (1 + (L - 1) * np.exp(-2 * Delta)), rtol=1e-12)
    np.testing.assert_allclose(a2, L, rtol=1e-12)
    np.testing.assert_allclose(g2, L, rtol=1e-12)


def test_softmax_coordinates_torch_autograd():
    Delta = torch.tensor([0.5, 1.5], dtype=torch.float64, requires_grad=True)
    A = copy_attention(Delta, 8)
    assert isinstance(A, torch.Tensor) and A.shape == (2, 8, 8)
    logit_gap(A).sum().backward()
    np.testing.assert_allclose(Delta.grad.numpy(), 1.0, rtol=1e-10)


# --------------------------------------------------------------------------
# plug-in action
# --------------------------------------------------------------------------


def _direct_plugin(A, P, spec):
    """(V/2) ln det(I + K/kappa) - tr(B^T (K + kappa)^-1 B)/(2 sigma^2), K, B = P E[...]."""
    V, kap = spec.V, spec.kappa
    T = spec.target
    K = P * token_moment(A.T @ A, V)
    B = P * token_moment(A.T @ T, V)
    logdet = np.linalg.slogdet(np.eye(V) + K / kap)[1]
    return V / 2 * logdet - np.trace(B.T @ np.linalg.solve(K + kap * np.eye(V), B)) / (2 * spec.sigma_sq)


@pytest.mark.parametrize(
    "L,V,cyclic,omega,sigma0_sq",
    [(8, 4, True, 1.0, 1.0), (5, 3, True, 0.7, 1.3), (6, 2, False, 2.0, 0.5), (3, 7, False, 1.0, 1.0)],
)
def test_plugin_action_matches_eigenbasis_free_computation(L, V, cyclic, omega, sigma0_sq):
    spec = ModelSpec(L=L, V=V, kind="linear", omega=omega, sigma0_sq=sigma0_sq, cyclic=cyclic)
    rng = _rng(300 + L * V)
    A = rng.normal(size=(6, L, L)) * rng.uniform(0.1, 2, size=(6, 1, 1))
    A[0] = np.full((L, L), 1 / L)
    A[1] = shift_matrix(L, cyclic)
    for P in (1.0, 37.0, 200.0, 5000.0):
        got = plugin_action_of_attention(A, P, spec)
        assert got.shape == (6,)
        for i in range(6):
            want = _direct_plugin(A[i], P, spec)
            assert got[i] == pytest.approx(want, rel=1e-10, abs=1e-10)


def test_plugin_action_constant_and_broadcasting():
    spec = ModelSpec(L=8, V=4, kind="linear")
    A = shift_matrix(8)
    P = np.array([10.0, 100.0, 1000.0])
    base = plugin_action_of_attention(A, P, spec)
    assert base.shape == (3,)
    full = plugin_action_of_attention(A, P, spec, include_constant=True)
    np.testing.assert_allclose(full - base, P * spec.L / (2 * spec.sigma_sq), rtol=1e-12)
    spec_nc = ModelSpec(L=8, V=4, kind="linear", cyclic=False)
    d = plugin_action_of_attention(A, 50.0, spec_nc, True) - plugin_action_of_attention(A, 50.0, spec_nc)
    assert d == pytest.approx(50.0 * 7 / (2 * spec.sigma_sq))
    # batch of A against a batch of P
    As = np.stack([np.full((8, 8), 1 / 8), A])
    out = plugin_action_of_attention(As[:, None], P[None, :], spec)
    assert out.shape == (2, 3)
    np.testing.assert_allclose(out[1], base, rtol=1e-13)


def test_plugin_action_formula_of_model_md():
    """The note's formula, written out independently, equals the implementation."""
    spec = ModelSpec(L=8, V=4, kind="linear", omega=1.7, sigma0_sq=0.6)
    rng = _rng(4)
    a1, a2 = rng.uniform(0, 5, size=(2, 10))
    g1, g2 = rng.normal(size=(2, 10)) * 2
    P = 123.0
    V, s2 = spec.V, spec.sigma_sq
    eps = V * spec.kappa / P
    note = (
        V * (V - 1) / 2 * np.log(1 + a1 / eps)
        + V / 2 * np.log(1 + a2 / eps)
        - P / (2 * s2 * V) * ((V - 1) * g1**2 / (a1 + eps) + g2**2 / (a2 + eps))
    )
    np.testing.assert_allclose(plugin_action(a1, a2, g1, g2, P, spec), note, rtol=1e-13)


def test_plugin_action_torch_autograd_matches_numpy():
    spec = ModelSpec(L=8, V=4, kind="linear")
    rng = _rng(5)
    A_np = rng.normal(size=(2, 8, 8)) / 8
    A = torch.tensor(A_np, requires_grad=True)
    out = plugin_action_of_attention(A, 200.0, spec)
    assert isinstance(out, torch.Tensor)
    np.testing.assert_allclose(out.detach().numpy(), plugin_action_of_attention(A_np, 200.0, spec), rtol=1e-13)
    out.sum().backward()
    # finite-difference check of one gradient entry
    h = 1e-6
    Ap, Am = A_np.copy(), A_np.copy()
    Ap[0, 3, 2] += h
    Am[0, 3, 2] -= h
    fd = (plugin_action_of_attention(Ap, 200.0, spec)[0] - plugin_action_of_attention(Am, 200.0, spec)[0]) / (2 * h)
    assert A.grad[0, 3, 2].item() == pytest.approx(fd, rel=1e-6)


def test_copy_state_beats_pooling_at_large_P():
    spec = ModelSpec(L=8, V=4, kind="linear")
    J, T = np.full((8, 8), 1 / 8), shift_matrix(8)
    assert plugin_action_of_attention(T, 1e4, spec) < plugin_action_of_attention(J, 1e4, spec)
    # A = 0 has zero action (nothing learned, no Occam cost)
    assert plugin_action_of_attention(np.zeros((8, 8)), 100.0, spec) == pytest.approx(0.0, abs=1e-14)


HAS_EVIDENCE = importlib.util.find_spec("copylib.posterior.evidence") is not None


@pytest.mark.skipif(not HAS_EVIDENCE, reason="copylib/posterior/evidence.py not written yet")
def test_exact_evidence_difference_matches_plugin_action():
    """Copy-minus-pool difference of the exact evidence, averaged over 50 data sets,
    agrees with the plug-in action (model.md claims < 0.5 %; we require 1 %)."""
    from copylib.posterior.evidence import negative_log_evidence

    L, V, P = 8, 4, 200
    spec = ModelSpec(L=L, V=V, kind="linear")
    pool, copy = np.full((L, L), 1 / L), shift_matrix(L)
    rng = _rng(6)
    X = np.stack([copy_task(P, L, V, rng)[0] for _ in range(50)])
    C = cooccurrence(X)  # (50, L, L, V, V)
    A = np.stack([pool, copy])[:, None]  # (2, 1, L, L) against 50 data sets
    S_exact = np.asarray(negative_log_evidence(A, C, spec))
    assert S_exact.shape == (2, 50)
    diff_exact = np.mean(S_exact[1] - S_exact[0])
    diff_ann = plugin_action_of_attention(copy, P, spec) - plugin_action_of_attention(pool, P, spec)
    assert abs(diff_exact / diff_ann - 1) < 0.01


# --------------------------------------------------------------------------
# priors
# --------------------------------------------------------------------------


def test_prior_action_linear_matches_sampled_variances():
    L, n = 6, 40000
    spec = ModelSpec(L=L, V=3, kind="linear", sigma_G=1.3, sigma_b=0.4)
    rng = _rng(7)
    g = rng.normal(0, spec.sigma_G, size=(n, L, L))
    b = rng.normal(0, spec.sigma_b, size=n)
    A = attention(attention_logits(g, b), "linear")
    m, q, r2 = order_parameters(A)
    s_p2 = spec.sigma_b**2 + spec.sigma_G**2 / L**2
    s_c2 = spec.sigma_G**2 / L**2
    for x, var in ((m, s_p2), (q, s_c2 / (L - 1))):
        se = np.sqrt(2 * var**2 / (n - 1))  # standard error of a variance estimate
        assert abs(np.mean(x**2) - var) < 5 * se  # mean is 0: use the raw second moment
    # m, q uncorrelated
    assert abs(np.mean(m * q)) < 5 * np.sqrt(s_p2 * s_c2 / (L - 1) / n)
    # the action is the Gaussian -log density with exactly these variances
    np.testing.assert_allclose(
        prior_action_linear(m[:5], q[:5], spec), m[:5] ** 2 / (2 * s_p2) + q[:5] ** 2 / (2 * s_c2 / (L - 1)), rtol=1e-13
    )
    # transverse modes: L^2 - 2 directions of variance s_c^2 each
    assert abs(np.mean(r2) - (L**2 - 2) * s_c2) < 5 * np.sqrt(2 * (L**2 - 2) * s_c2**2 / n)


def test_prior_action_softmax_is_cheapest_logit_norm():
    L = 9
    spec = ModelSpec(L=L, V=3, kind="softmax", sigma_G=0.8)
    Delta = np.array([0.3, 1.8, -1.0])
    T, J = shift_matrix(L), np.ones((L, L))
    g = Delta[:, None, None] * (T - J / L)  # the minimum-norm logits
    np.testing.assert_allclose(attention(g, "softmax"), copy_attention(Delta, L), rtol=1e-13)
    np.testing.assert_allclose(
        prior_action_softmax(Delta, spec), (g**2).sum((-1, -2)) / (2 * spec.sigma_G**2), rtol=1e-13
    )
    np.testing.assert_allclose(prior_action_softmax(Delta, spec), (L - 1) * Delta**2 / (2 * spec.sigma_G**2))
    # any per-row shift gives the same attention and a larger norm
    rng = _rng(8)
    shift = rng.normal(size=(3, L, 1))
    g2 = g + shift
    np.testing.assert_allclose(attention(g2, "softmax"), copy_attention(Delta, L), rtol=1e-12)
    assert np.all((g2**2).sum((-1, -2)) > (g**2).sum((-1, -2)))


# --------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------


def test_bad_input():
    spec = ModelSpec(L=4, V=3, kind="linear")
    A = np.full((4, 4), 0.25)
    with pytest.raises(ValueError, match="A"):
        invariants(np.ones((4, 3)))
    with pytest.raises(ValueError, match="A"):
        invariants(np.ones(4))
    with pytest.raises(ValueError, match="A"):
        order_parameters(np.ones((1, 1)))
    with pytest.raises(ValueError, match="A"):
        order_parameters(np.array([[np.nan, 0], [0, 1]]))
    with pytest.raises(TypeError, match="cyclic"):
        invariants(A, cyclic=1)
    with pytest.raises(ValueError, match="L"):
        attention_from_order_parameters(1.0, 0.0, 1)
    with pytest.raises(ValueError, match="q"):
        attention_from_order_parameters(1.0, np.inf, 4)
    with pytest.raises(ValueError, match="L"):
        copy_attention(1.0, 1)
    with pytest.raises(ValueError, match="Delta"):
        copy_attention(np.nan, 4)
    with pytest.raises(ValueError, match="alpha_1"):
        plugin_action(-1.0, 1.0, 0.0, 0.0, 10.0, spec)
    with pytest.raises(ValueError, match="alpha_2"):
        plugin_action(1.0, -1e-3, 0.0, 0.0, 10.0, spec)
    with pytest.raises(ValueError, match="gamma_1"):
        plugin_action(1.0, 1.0, np.nan, 0.0, 10.0, spec)
    with pytest.raises(ValueError, match="P"):
        plugin_action(1.0, 1.0, 0.0, 0.0, 0.0, spec)
    with pytest.raises(ValueError, match="P"):
        plugin_action_of_attention(A, np.array([10.0, -1.0]), spec)
    with pytest.raises(TypeError, match="spec"):
        plugin_action(1.0, 1.0, 0.0, 0.0, 10.0, {"L": 4})
    with pytest.raises(ValueError, match="A.*spec.L|spec.L"):
        plugin_action_of_attention(np.full((5, 5), 0.2), 10.0, spec)
    with pytest.raises(ValueError, match="m"):
        prior_action_linear(np.nan, 0.0, spec)
    with pytest.raises(ValueError, match="Delta"):
        prior_action_softmax(np.inf, spec)


def test_subspace_coverage_limits():
    import copylib as cl
    from copylib.posterior.order_parameters import subspace_coverage

    L = 6
    rng = np.random.default_rng(0)
    # patterns inside the plane are covered completely
    inside = cl.attention_from_order_parameters(rng.normal(size=50), rng.normal(size=50), L)
    assert np.allclose(subspace_coverage(inside, np.zeros((L, L))), 1.0, rtol=1e-12)
    # an isotropic Gaussian cloud puts 2 of L^2 dimensions in the plane: coverage 2/L^2 on average;
    # the sample estimate has relative error ~ sqrt(2/(2 n)) per direction, 5 sigma below
    n = 20_000
    cloud = rng.normal(size=(n, L, L))
    cov, _ = subspace_coverage(cloud, np.zeros((L, L)))
    assert abs(cov - 2 / L**2) < 5 * (2 / L**2) * np.sqrt(1 / n)
    # orthogonal patterns are not covered
    perp = rng.normal(size=(3, L, L))
    perp -= cl.attention_from_order_parameters(*cl.order_parameters(perp)[:2], L)
    assert subspace_coverage(perp, np.zeros((L, L)))[0] < 1e-24


def test_subspace_coverage_rejects_bad_input():
    from copylib.posterior.order_parameters import subspace_coverage

    with pytest.raises(ValueError, match="A"):
        subspace_coverage(np.zeros((4, 4)), np.zeros((4, 4)))
    with pytest.raises(ValueError, match="center"):
        subspace_coverage(np.ones((2, 4, 4)), np.zeros((3, 3)))
    with pytest.raises(ValueError, match="center"):
        subspace_coverage(np.ones((2, 4, 4)), np.ones((4, 4)))


def test_plane_coverage_fixes_the_sign_gauge():
    import copylib as cl
    from copylib.posterior.order_parameters import plane_coverage, subspace_coverage

    L = 6
    rng = np.random.default_rng(1)
    # a pooling-and-copy pattern plus transverse noise, half of the samples flipped: the gauge-fixed mean
    # recovers the pattern's q, while without the gauge the flipped halves cancel in the mean
    base = cl.attention_from_order_parameters(1.0, 0.3, L)
    noise = 0.05 * rng.normal(size=(40, L, L))
    signs = np.repeat([1.0, -1.0], 20)[:, None, None]
    A = signs * (base + noise)
    samples, mean, q = plane_coverage(A, np.zeros((L, L)), sign_gauge=True)
    assert (samples, mean) == subspace_coverage(np.abs(signs) * (base + noise), np.zeros((L, L)))
    # q of the mean of the noisy samples: the noise's projection on T - J/L averages over 40 draws of sd
    # 0.05 / sqrt(L - 1) each, so 5 standard errors are below 0.01
    assert abs(q - 0.3) < 0.01
    assert abs(plane_coverage(A, np.zeros((L, L)))[2]) < 0.01  # no gauge: +q and -q cancel
    # without sign_gauge it is subspace_coverage plus q of the plain mean
    s2, m2, q2 = plane_coverage(base + noise, np.full((L, L), 1 / L))
    assert (s2, m2) == subspace_coverage(base + noise, np.full((L, L), 1 / L))
    assert q2 == pytest.approx(float(cl.order_parameters((base + noise).mean(0))[1]), rel=1e-12)


def test_plane_coverage_rejects_bad_input():
    from copylib.posterior.order_parameters import plane_coverage

    with pytest.raises(ValueError, match="A"):
        plane_coverage(np.zeros((4, 4)), np.zeros((4, 4)))
    with pytest.raises(ValueError, match="A"):
        plane_coverage(np.full((2, 3, 3), np.nan), np.zeros((3, 3)))
    with pytest.raises(TypeError, match="sign_gauge"):
        plane_coverage(np.ones((2, 3, 3)), np.zeros((3, 3)), sign_gauge="yes")
    with pytest.raises(ValueError, match="center"):
        plane_coverage(np.ones((2, 3, 3)), np.zeros((4, 4)))
