"""Tests of copylib.posterior.evidence: the readout integrated out exactly."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import copylib as cl
from copylib.posterior.evidence import (
    effective_action,
    negative_log_evidence,
    negative_log_evidence_mc,
    negative_log_evidence_primal,
    optimal_readout,
)

KINDS = ("linear", "softmax")


pytestmark = pytest.mark.usefixtures("one_thread")  # tiny tensors: torch on one thread (tests/conftest.py)


def _data(P, L, V, seed, cyclic=True):
    X, Y = cl.copy_task(P, L, V, np.random.default_rng(seed), cyclic=cyclic)
    return X, Y, cl.cooccurrence(X)


def _random_A(L, kind, rng, scale=2.0, batch=()):
    return cl.attention(scale * rng.normal(size=batch + (L, L)), kind)


# ---------------------------------------------------------------- dual == primal


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("cyclic", [True, False])
@pytest.mark.parametrize("L, V, P", [(5, 3, 7), (4, 2, 11), (6, 4, 3), (3, 5, 1)])
def test_dual_equals_primal(kind, cyclic, L, V, P):
    rng = np.random.default_rng(100 * L + 10 * V + P)
    spec = cl.ModelSpec(L, V, kind=kind, cyclic=cyclic, sigma_G=1.3, omega=0.7, sigma0_sq=0.9)
    X, Y, C = _data(P, L, V, rng.integers(1 << 30), cyclic)
    for _ in range(3):
        A = _random_A(L, kind, rng)
        dual = negative_log_evidence(A, C, spec)
        primal = negative_log_evidence_primal(X, Y, A, spec)
        assert isinstance(dual, np.ndarray) and dual.shape == ()
        assert dual == pytest.approx(primal, rel=1e-8)


def test_dual_equals_primal_reference_states():
    """Pooling, copy and the zero matrix (K = 0: the evidence is pure noise)."""
    L, V, P = 6, 3, 9
    spec = cl.ModelSpec(L, V, kind="linear")
    X, Y, C = _data(P, L, V, 1)
    for A in (cl.uniform_pooling(L, V)[0], cl.perfect_copy(L, V)[0], np.zeros((L, L))):
        assert negative_log_evidence(A, C, spec) == pytest.approx(
            negative_log_evidence_primal(X, Y, A, spec), rel=1e-10
        )
    # A = 0: Y ~ N(0, sigma^2 I), so -ln p = (PLV/2) ln(2 pi sigma^2) + |Y|^2 / (2 sigma^2)
    expected = 0.5 * P * L * V * math.log(2 * math.pi * spec.sigma_sq) + P * L / (2 * spec.sigma_sq)
    assert negative_log_evidence(np.zeros((L, L)), C, spec) == pytest.approx(expected, rel=1e-12)


# ---------------------------------------------------------------- dual == Monte Carlo


@pytest.mark.parametrize("kind", KINDS)
def test_dual_matches_monte_carlo_and_rejects_wrong_evidence(kind):
    L, V, P = 3, 2, 2
    spec = cl.ModelSpec(L, V, kind=kind)
    X, Y, C = _data(P, L, V, 7)
    A = _random_A(L, kind, np.random.default_rng(8), scale=1.5)
    est, se = negative_log_evidence_mc(X, Y, A, spec, 200_000, np.random.default_rng(9))
    assert 0 < se < 0.02  # tiny size: the prior draws cover the posterior of W well
    # Tolerance: the MC estimate is asymptotically normal around the exact value with
    # the delta-method standard error `se`; its Jensen bias ~ se^2/2 is negligible. A
    # 4-se band fails by chance with probability ~6e-5 (and the seed is fixed).
    dual = negative_log_evidence(A, C, spec)
    assert abs(dual - est) < 4 * se
    # The same criterion must reject wrong evidences: noise variance doubled, prior
    # variance doubled, and the Occam (log-det) term dropped.
    wrong = [
        negative_log_evidence(A, C, cl.ModelSpec(L, V, kind=kind, sigma0_sq=2.0)),
        negative_log_evidence(A, C, cl.ModelSpec(L, V, kind=kind, omega=2.0)),
    ]
    K, _, _ = cl.readout_moments(A, C, spec.target)
    wrong.append(dual - 0.5 * V * np.linalg.slogdet(np.eye(V) + K / spec.kappa)[1])
    for w in wrong:
        assert abs(w - est) > 4 * se


def test_monte_carlo_chunking_is_invisible():
    L, V, P = 3, 2, 2
    spec = cl.ModelSpec(L, V, kind="softmax")
    X, Y, _ = _data(P, L, V, 3)
    A = _random_A(L, "softmax", np.random.default_rng(4))
    a = negative_log_evidence_mc(X, Y, A, spec, 5000, np.random.default_rng(5), chunk_size=5000)
    b = negative_log_evidence_mc(X, Y, A, spec, 5000, np.random.default_rng(5), chunk_size=333)
    assert a[0] == pytest.approx(b[0], rel=1e-12) and a[1] == pytest.approx(b[1], rel=1e-9)


# ---------------------------------------------------------------- gradients, batching


@pytest.mark.parametrize("kind", KINDS)
def test_gradient_matches_finite_differences(kind):
    L, V, P = 4, 3, 6
    spec = cl.ModelSpec(L, V, kind=kind, sigma_b=0.8)
    _, _, C = _data(P, L, V, 11)
    C = torch.as_tensor(C)
    gen = torch.Generator().manual_seed(12)
    A = torch.randn(2, L, L, dtype=torch.float64, generator=gen).requires_grad_()
    assert torch.autograd.gradcheck(lambda A: negative_log_evidence(A, C, spec), (A,))
    g = torch.randn(2, L, L, dtype=torch.float64, generator=gen).requires_grad_()
    b = torch.randn(2, dtype=torch.float64, generator=gen).requires_grad_()
    # fast_mode: finite differences along random directions of (g, b), vs autograd
    assert torch.autograd.gradcheck(lambda g, b: effective_action(g, b, C, spec), (g, b), fast_mode=True)


@pytest.mark.parametrize("kind", KINDS)
def test_batched_equals_loop(kind):
    L, V, R = 5, 3, 4
    spec = cl.ModelSpec(L, V, kind=kind)
    rng = np.random.default_rng(20)
    C = np.stack([_data(int(rng.integers(1, 20)), L, V, s)[2] for s in range(R)])
    A = _random_A(L, kind, rng, batch=(R,))
    g, b = rng.normal(size=(R, L, L)), rng.normal(size=R)
    nle, act, W = negative_log_evidence(A, C, spec), effective_action(g, b, C, spec), optimal_readout(A, C, spec)
    assert nle.shape == act.shape == (R,) and W.shape == (R, V, V)
    for r in range(R):
        assert nle[r] == pytest.approx(negative_log_evidence(A[r], C[r], spec), rel=1e-12)
        assert act[r] == pytest.approx(effective_action(g[r], b[r], C[r], spec), rel=1e-12)
        np.testing.assert_allclose(W[r], optimal_readout(A[r], C[r], spec), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("kind", KINDS)
def test_broadcast_C_matches_explicit_copies(kind):
    """The sampler's call: g (R, L, L), b (R,), one shared C (L, L, V, V)."""
    L, V, P, R = 5, 3, 13, 6
    spec = cl.ModelSpec(L, V, kind=kind)
    C = torch.as_tensor(_data(P, L, V, 30)[2])
    gen = torch.Generator().manual_seed(31)
    g = torch.randn(R, L, L, dtype=torch.float64, generator=gen).requires_grad_()
    b = torch.randn(R, dtype=torch.float64, generator=gen).requires_grad_()
    shared = effective_action(g, b, C, spec)
    assert isinstance(shared, torch.Tensor) and shared.shape == (R,)
    (dg, db) = torch.autograd.grad(shared.sum(), (g, b))
    copies = effective_action(g, b, C.expand(R, *C.shape).clone(), spec)
    (eg, eb) = torch.autograd.grad(copies.sum(), (g, b))
    torch.testing.assert_close(shared, copies, rtol=1e-12, atol=0)
    torch.testing.assert_close(dg, eg, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(db, eb, rtol=1e-10, atol=1e-12)
    # outer-product broadcasting: 2 attention matrices x 3 data sets -> (2, 3)
    A = cl.attention(g[:2].detach(), kind)[:, None]
    Cs = torch.stack([torch.as_tensor(_data(P + k, L, V, 40 + k)[2]) for k in range(3)])
    out = negative_log_evidence(A, Cs, spec)
    assert out.shape == (2, 3)
    assert out[1, 2].item() == pytest.approx(negative_log_evidence(A[1, 0], Cs[2], spec).item(), rel=1e-12)


def test_float32_input_keeps_dtype():
    L, V = 4, 2
    spec = cl.ModelSpec(L, V, kind="softmax")
    C = torch.as_tensor(_data(10, L, V, 2)[2], dtype=torch.float32)
    A = torch.softmax(torch.randn(3, L, L, generator=torch.Generator().manual_seed(1)), -1)
    out = negative_log_evidence(A, C, spec)
    assert out.dtype == torch.float32
    ref = negative_log_evidence(A.double(), C.double(), spec)
    torch.testing.assert_close(out.double(), ref, rtol=1e-5, atol=0)


# ---------------------------------------------------------------- optimal readout


@pytest.mark.parametrize("kind", KINDS)
def test_optimal_readout_zeroes_map_gradient(kind):
    L, V, R = 5, 3, 3
    spec = cl.ModelSpec(L, V, kind=kind, omega=0.6, sigma0_sq=1.4)
    C = torch.as_tensor(np.stack([_data(20 + 5 * r, L, V, 50 + r)[2] for r in range(R)]))
    gen = torch.Generator().manual_seed(51)
    g = torch.randn(R, L, L, dtype=torch.float64, generator=gen)
    b = torch.randn(R, dtype=torch.float64, generator=gen)
    A = cl.attention(cl.attention_logits(g, b), kind)
    W = optimal_readout(A, C, spec).requires_grad_()
    (grad,) = torch.autograd.grad(cl.map_objective(g, b, W, C, spec).sum(), W)
    # scale of the individual gradient terms, B / sigma^2
    scale = cl.readout_moments(A, C, torch.as_tensor(spec.target))[1].abs().max() / spec.sigma_sq
    assert grad.abs().max() < 1e-10 * scale
    # and it is a minimum: moving W raises the objective
    with torch.no_grad():
        U0 = cl.map_objective(g, b, W, C, spec)
        U1 = cl.map_objective(g, b, W + 1e-3 * torch.randn(W.shape, dtype=W.dtype, generator=gen), C, spec)
    assert (U1 > U0).all()


# ---------------------------------------------------------------- bad input


def test_bad_input_raises_naming_parameter():
    L, V = 4, 3
    spec = cl.ModelSpec(L, V)
    X, Y, C = _data(5, L, V, 0)
    A = np.full((L, L), 1.0 / L)
    with pytest.raises(ValueError, match="A"):
        negative_log_evidence(np.full((L + 1, L + 1), 0.1), C, spec)
    with pytest.raises(ValueError, match="C"):
        negative_log_evidence(A, C[..., :2, :2], spec)
    with pytest.raises(ValueError, match="C"):
        negative_log_evidence(A, C[:, :, :, :, None], spec)
    with pytest.raises(ValueError, match="batch shapes of A"):
        negative_log_evidence(np.stack([A] * 2), np.stack([C] * 3), spec)
    for bad in (np.nan, np.inf):
        A_bad = A.copy()
        A_bad[1, 2] = bad
        with pytest.raises(ValueError, match="A must contain only finite"):
            negative_log_evidence(A_bad, C, spec)
        with pytest.raises(ValueError, match="A must contain only finite"):
            optimal_readout(A_bad, C, spec)
        with pytest.raises(ValueError, match="A must contain only finite"):
            negative_log_evidence_primal(X, Y, A_bad, spec)
    with pytest.raises(ValueError, match="C must contain only finite"):
        negative_log_evidence(A, np.where(C > 0, np.inf, C), spec)
    for s0 in (0.0, -1.0, np.nan):
        with pytest.raises(ValueError, match="sigma0_sq"):
            cl.ModelSpec(L, V, sigma0_sq=s0)
    with pytest.raises(TypeError, match="spec"):
        negative_log_evidence(A, C, None)
    with pytest.raises(ValueError, match="Y"):
        negative_log_evidence_primal(X, Y[:, :, :2], A, spec)
    with pytest.raises(ValueError, match="X"):
        negative_log_evidence_primal(X[0], Y[0], A, spec)
    with pytest.raises(ValueError, match="A"):
        negative_log_evidence_primal(X, Y, np.stack([A] * 2), spec)
    with pytest.raises(ValueError, match="n_samples"):
        negative_log_evidence_mc(X, Y, A, spec, 1, np.random.default_rng(0))
    with pytest.raises(TypeError, match="rng"):
        negative_log_evidence_mc(X, Y, A, spec, 10, 0)
    with pytest.raises(ValueError, match="b"):
        effective_action(np.zeros((2, L, L)), np.zeros(3), C, spec)
    with pytest.raises(ValueError, match="g"):
        effective_action(np.zeros((2, L + 1, L + 1)), np.zeros(2), C, spec)


# ---------------------------------------------------------------- huge P


@pytest.mark.parametrize("kind", KINDS)
def test_huge_P_is_finite_and_accurate(kind):
    L, V, P0 = 8, 4, 100
    factor = 10_000  # P = 1e6, as if every sequence were repeated 1e4 times
    spec = cl.ModelSpec(L, V, kind=kind)
    C = torch.as_tensor(_data(P0, L, V, 60)[2]) * factor
    assert cl.sample_size(C).item() == pytest.approx(P0 * factor)
    gen = torch.Generator().manual_seed(61)
    g = torch.randn(3, L, L, dtype=torch.float64, generator=gen).requires_grad_()
    b = torch.randn(3, dtype=torch.float64, generator=gen).requires_grad_()
    act = effective_action(g, b, C, spec)
    grads = torch.autograd.grad(act.sum(), (g, b))
    assert torch.isfinite(act).all() and all(torch.isfinite(t).all() for t in grads)
    assert torch.isfinite(optimal_readout(cl.attention(cl.attention_logits(g, b), kind), C, spec)).all()
    # Perfect copy (cyclic): K = B = diag(n) with n the token counts, y2 = P L, so the data
    # fit is sum_a n_a kappa / (n_a + kappa) / (2 sigma^2) ~ V/2 despite y2 ~ 1e7: a check
    # of the cancellation in y2 - tr B^T (K + kappa)^{-1} B at huge P.
    T = spec.target
    n = torch.diagonal(torch.einsum("llab->ab", C)).numpy()
    k, s2 = spec.kappa, spec.sigma_sq
    exact_fit = (n * k / (n + k)).sum() / (2 * s2)
    const = 0.5 * V * (P0 * factor * L * math.log(2 * math.pi * s2) + np.log1p(n / k).sum())
    nle = negative_log_evidence(torch.as_tensor(T), C, spec).item()
    assert nle - const == pytest.approx(exact_fit, abs=1e-5)
