"""The causal mask: ModelSpec(causal=True), attention(causal=True), the causal copy theory."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import copylib as cl
from copylib.analysis import softmax as sx
from copylib.theory import causal as ct
from copylib.theory import softmax as st


def _causal(L=6, V=3, kind="softmax", **kw):
    return cl.ModelSpec(L, V, kind=kind, cyclic=False, causal=True, **kw)


def test_spec_validates_causal():
    assert _causal().causal and not cl.ModelSpec(4, 2).causal
    with pytest.raises(ValueError, match="cyclic=False"):
        cl.ModelSpec(4, 2, causal=True)
    with pytest.raises(TypeError, match="causal"):
        cl.ModelSpec(4, 2, cyclic=False, causal=1)


@pytest.mark.parametrize("kind", ["softmax", "linear"])
def test_causal_attention_matches_a_row_by_row_reference(kind):
    rng = np.random.default_rng(0)
    L = 7
    G = rng.normal(size=(3, L, L)) * 2
    A = cl.attention(G, kind, causal=True)
    ref = np.zeros_like(G)
    for r in range(3):
        for l in range(L):
            row = G[r, l, : l + 1]
            ref[r, l, : l + 1] = np.exp(row - row.max()) / np.exp(row - row.max()).sum() if kind == "softmax" \
                else row / (l + 1)
    np.testing.assert_allclose(A, ref, rtol=1e-13, atol=1e-15)
    # the hidden logits do not matter, and the non-causal default is unchanged
    G2 = G + np.triu(rng.normal(size=(L, L)), 1) * 5
    np.testing.assert_array_equal(cl.attention(G2, kind, causal=True), A)
    np.testing.assert_array_equal(cl.attention(G, kind), cl.attention(G, kind, causal=False))
    with pytest.raises(TypeError, match="causal"):
        cl.attention(G, kind, causal="yes")


def test_causal_linear_bias_gives_every_row_the_sum_b():
    A = cl.attention(cl.attention_logits(np.zeros((5, 5)), np.array(1.7)), "linear", causal=True)
    np.testing.assert_allclose(A.sum(-1), 1.7, rtol=1e-14)


def test_causal_softmax_logit_gradient_vanishes_on_hidden_entries():
    spec = _causal(5, 3)
    C = torch.as_tensor(cl.cooccurrence(cl.copy_task(20, 5, 3, np.random.default_rng(1), cyclic=False)[0]))
    g = torch.randn(5, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(2), requires_grad=True)
    b = torch.zeros((), dtype=torch.float64)
    (cl.effective_action(g, b, C, spec)).backward()
    hidden = torch.ones(5, 5, dtype=torch.bool).triu(1)
    # only the prior acts on the hidden logits
    torch.testing.assert_close(g.grad[hidden], g.detach()[hidden], rtol=1e-13, atol=0)


def test_planted_causal_logits_give_the_gap_in_every_row_at_the_smallest_norm():
    L, D = 9, 1.3
    g = sx.planted_logits(D, L, causal=True)
    A = cl.attention(g, "softmax", causal=True)
    for l in range(1, L):
        others = [j for j in range(l + 1) if j != l - 1]
        np.testing.assert_allclose(np.log(A[l, l - 1] / A[l, others]), D, rtol=1e-12)
        assert abs(g[l, : l + 1].sum()) < 1e-12  # zero visible row mean: the smallest norm
    H = sum(1 / n for n in range(1, L + 1))
    np.testing.assert_allclose((g**2).sum(), D**2 * (L - H), rtol=1e-13)


def test_causal_copy_invariants_and_weights():
    spec = _causal(8, 3)
    D = np.array([0.0, 0.7, 2.5])
    A = cl.attention(sx.planted_logits(D, 8, causal=True), "softmax", causal=True)
    for x, y in zip(cl.invariants(A, False), ct.copy_state_invariants(D, spec)):
        np.testing.assert_allclose(x, y, rtol=1e-13)
    c = ct.row_copy_weights(D, spec)
    np.testing.assert_allclose(c, A[:, np.arange(1, 8), np.arange(7)], rtol=1e-13)
    np.testing.assert_allclose(c[0], 1 / (1 + np.arange(1, 8)), rtol=1e-14)  # Delta = 0: uniform over l+1


@pytest.mark.parametrize("version", ct.VERSIONS)
def test_cyclic_gap_action_is_the_softmax_theory_action(version):
    spec = cl.ModelSpec(12, 3, kind="softmax", sigma_G=0.8, sigma0_sq=1.3)
    D = np.linspace(-1, 5, 13)
    for order in (0, 1, 2):
        mine = ct.gap_action(D, 77.0, spec, version=version, order=order)
        ref = st.reduced_action_derivatives(D, 77.0, spec, version=version)
        for a, b in zip(np.atleast_2d(mine) if order else [mine], ref):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-10)


@pytest.mark.parametrize("version", ct.VERSIONS)
def test_gap_action_is_the_plugin_action_of_the_planted_attention(version):
    spec = _causal(10, 4, sigma_G=1.2)
    D, P = np.array([0.2, 1.5, 3.0]), 150.0
    A = cl.attention(sx.planted_logits(D, 10, causal=True), "softmax", causal=True)
    S = cl.plugin_action_of_attention(A, P, spec)
    if version == "map":
        eps = spec.V * spec.kappa / P
        a1, a2, _, _ = cl.invariants(A, False)
        S = S - spec.V * (spec.V - 1) / 2 * np.log1p(a1 / eps) - spec.V / 2 * np.log1p(a2 / eps)
    prior = (sx.planted_logits(D, 10, causal=True) ** 2).sum((-1, -2)) / (2 * spec.sigma_G**2)
    np.testing.assert_allclose(ct.gap_action(D, P, spec, version=version), S + prior, rtol=1e-12)


def test_derivatives_and_row_gradient_match_finite_differences():
    spec = _causal(10, 3)
    D, h = np.linspace(0, 4, 9), 1e-5
    F, F1, F2 = ct.gap_action(D, 200.0, spec, order=2)
    np.testing.assert_allclose(F1, (ct.gap_action(D + h, 200.0, spec) - ct.gap_action(D - h, 200.0, spec)) / (2 * h),
                               atol=1e-6)
    np.testing.assert_allclose(F2, (ct.gap_action(D + h, 200.0, spec, order=1)[1]
                                    - ct.gap_action(D - h, 200.0, spec, order=1)[1]) / (2 * h), atol=1e-6)
    x = np.random.default_rng(3).uniform(0, 3, 9)
    Fr, grad = ct.row_gap_action(x, 200.0, spec)
    num = [(ct.row_gap_action(x + h * e, 200.0, spec)[0] - ct.row_gap_action(x - h * e, 200.0, spec)[0]) / (2 * h)
           for e in np.eye(9)]
    np.testing.assert_allclose(grad, num, atol=1e-6)
    # a uniform per-row gap is the uniform family
    np.testing.assert_allclose(ct.row_gap_action(np.full(9, 1.1), 200.0, spec)[0], ct.gap_action(1.1, 200.0, spec),
                               rtol=1e-13)


def test_cyclic_transition_reproduces_the_softmax_theory():
    spec = cl.ModelSpec(32, 4, kind="softmax")
    t = ct.first_order_point(spec)
    ref = st.first_order_point(spec, "mean_field")
    assert t.P3 == pytest.approx(ref.P3, rel=1e-8)
    assert t.spinodals.P_lower == pytest.approx(ref.spinodals.P_lower, rel=1e-6)
    assert t.spinodals.P_upper == pytest.approx(ref.spinodals.P_upper, rel=1e-6)
    assert t.spinodals.Delta_lower == pytest.approx(ref.spinodals.Delta_lower, rel=1e-5)
    assert t.spinodals.Delta_upper == pytest.approx(ref.spinodals.Delta_upper, rel=1e-5)
    for a, b in ((t.pooling, ref.pooling), (t.copy, ref.copy)):
        assert a.coordinates["Delta"] == pytest.approx(b.coordinates["Delta"], rel=1e-6)
        # the cyclic copy weight of a gap is the same in both theories; the causal one has no test loss
        assert a.order_parameter == pytest.approx(b.order_parameter, rel=1e-6) and a.test_loss is None


def test_causal_uniform_family_has_no_jump_at_L32_but_one_at_L256():
    with pytest.raises(ValueError, match="no coexistence"):
        ct.first_order_point(_causal(32, 4))
    t = ct.first_order_point(_causal(256, 4), P_range=(4000.0, 9000.0), n_scan=40)
    assert t.spinodals.P_lower < t.P3 < t.spinodals.P_upper and t.jump > 0


def test_row_gap_minimum_is_stationary_and_branches_agree_without_coexistence():
    spec = _causal(12, 3)
    D, F = ct.row_gap_minimum(120.0, spec, 0.0)
    _, grad = ct.row_gap_action(D, 120.0, spec)
    assert np.abs(grad[D > 1e-8]).max() < 1e-6 and (grad[D <= 1e-8] >= -1e-6).all()
    br = ct.row_gap_branches(np.array([50.0, 120.0, 300.0]), spec)
    assert not br.coexist.any() and math.isnan(br.P3)
    np.testing.assert_allclose(br.c_pool, br.c_copy, atol=1e-5)
    cyc = ct.row_gap_branches(np.arange(300.0, 400.0, 10.0), cl.ModelSpec(32, 4, kind="softmax"))
    assert cyc.coexist.any() and cyc.P3 == pytest.approx(341.95, abs=1.0)


def test_theory_rejects_other_specs():
    with pytest.raises(ValueError, match="kind"):
        ct._copy_rows(cl.ModelSpec(4, 2, kind="linear"))
    with pytest.raises(ValueError, match="cyclic or causal"):
        ct._copy_rows(cl.ModelSpec(4, 2, cyclic=False))


def test_row_noise_without_noise_is_the_noise_free_family_and_its_gradient_is_exact():
    spec = _causal(10, 3)
    x = np.random.default_rng(4).uniform(0, 3, 9)
    quiet = ct.row_gap_noise(spec, np.random.default_rng(5), n_draws=3, std=0.0)
    for a, b in zip(ct.row_gap_action(x, 150.0, spec, noise=quiet), ct.row_gap_action(x, 150.0, spec)):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-13)
    noise = ct.row_gap_noise(spec, np.random.default_rng(6), n_draws=64)
    F, grad = ct.row_gap_action(x, 150.0, spec, noise=noise)
    h = 1e-5
    num = [(ct.row_gap_action(x + h * e, 150.0, spec, noise=noise)[0]
            - ct.row_gap_action(x - h * e, 150.0, spec, noise=noise)[0]) / (2 * h) for e in np.eye(9)]
    np.testing.assert_allclose(grad, num, atol=1e-6)


def test_row_noise_shifts():
    """Noise moves the log-sum-exp of the competitors up (Jensen), except for a single competitor."""
    spec = _causal(6, 2, sigma_G=1.5)
    rows = ct._copy_rows(spec)
    noise = ct.row_gap_noise(spec, np.random.default_rng(7), n_draws=4096)
    assert noise.shift.shape == (5, 4096) and noise.std == 1.5
    # without noise shift = ln n; with noise the mean shift is larger (log-sum-exp of noisy logits, Jensen),
    # except for one competitor, where shift = eta_1 - eta_0 has mean 0
    assert (noise.shift[1:].mean(1) > np.log(rows.competitors[1:])).all()
    assert abs(noise.shift[0].mean()) < 5 * noise.shift[0].std() / np.sqrt(4096)
    with pytest.raises(ValueError, match="rows"):
        ct.row_gap_action(np.zeros(31), 10.0, cl.ModelSpec(32, 2, kind="softmax", cyclic=False, causal=True),
                          noise=noise)


def test_gain_criterion_decides_the_one_gap_jump():
    # cyclic: gamma_1^2/alpha_1 = L/(1 + (L-1) e^{-2 Delta}), one step at Delta = ln(L-1)/2; the criterion
    # rises again there for L = 32. Causal at L = 32: a sum of sigmoids spread over [0, ln L], monotone.
    D = np.linspace(1e-3, 6, 6001)
    L = 32
    cyc = cl.ModelSpec(L, 4, kind="softmax")
    crit = ct.gain_criterion(D, cyc)
    exact = 2 * L * (L - 1) * np.exp(-2 * D) / (1 + (L - 1) * np.exp(-2 * D)) ** 2 / D
    # second-order differences on a step of 1e-3 against a function of unit scale: error ~ 1e-6 relative
    np.testing.assert_allclose(crit[1:-1], exact[1:-1], rtol=1e-5)
    assert not ct.gain_criterion_is_monotone(D, cyc)
    assert ct.gain_criterion_is_monotone(D, _causal(L, 4))


def test_gain_criterion_rejects_bad_grids():
    spec = _causal(8, 3)
    with pytest.raises(ValueError, match="Delta"):
        ct.gain_criterion([0.0, 1.0, 2.0], spec)
    with pytest.raises(ValueError, match="Delta"):
        ct.gain_criterion([1.0, 3.0, 2.0], spec)
    with pytest.raises(ValueError, match="Delta"):
        ct.gain_criterion([1.0, 2.0], spec)
