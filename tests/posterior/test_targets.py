"""Tests of copylib.posterior.targets: the MAP objective, and the hand-written energies and
gradients of the collapsed and joint posterior targets against autograd."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from copylib.inference.map_training import nested_cooccurrence
from copylib.model.network import ModelSpec, attention, attention_logits
from copylib.model.statistics import cooccurrence, readout_moments
from copylib.model.task import copy_task
from copylib.posterior.evidence import effective_action
from copylib.posterior.targets import CollapsedPosterior, JointPosterior, map_objective

SPEC = ModelSpec(L=4, V=2, kind="softmax", sigma_G=1.5, sigma_b=0.8, omega=2.0, sigma0_sq=0.3)


@pytest.fixture(autouse=True, scope="module")
def _single_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _params(R, spec, seed):
    gen = torch.Generator().manual_seed(seed)
    g = torch.randn(R, spec.L, spec.L, dtype=torch.float64, generator=gen)
    b = torch.randn(R, dtype=torch.float64, generator=gen)
    W = torch.randn(R, spec.V, spec.V, dtype=torch.float64, generator=gen)
    return g, b, W


# --------------------------------------------------------------------------- map_objective


@pytest.mark.parametrize("kind", ["linear", "softmax"])
@pytest.mark.parametrize("cyclic", [True, False])
def test_map_objective_is_scaled_sse_plus_prior(kind, cyclic):
    spec = ModelSpec(L=5, V=3, kind=kind, sigma_G=0.7, sigma_b=1.3, omega=0.4, sigma0_sq=0.2, cyclic=cyclic)
    rng = np.random.default_rng(0)
    R, P = 3, 9
    data = [copy_task(P, spec.L, spec.V, rng, cyclic=cyclic) for _ in range(R)]
    C = torch.as_tensor(np.stack([cooccurrence(X) for X, _ in data]))
    g, b, W = _params(R, spec, seed=1)
    U = map_objective(g, b, W, C, spec)
    assert isinstance(U, torch.Tensor) and U.shape == (R,) and U.dtype == torch.float64
    for r, (X, Y) in enumerate(data):
        gr, br, Wr = g[r].numpy(), float(b[r]), W[r].numpy()
        if kind == "linear":
            A = (gr + br) / spec.L
        else:
            E = np.exp(gr - gr.max(1, keepdims=True))  # b drops out of the softmax
            A = E / E.sum(1, keepdims=True)
        sse = sum(np.sum((A @ X[mu] @ Wr - Y[mu]) ** 2) for mu in range(P))
        prior = np.sum(gr**2) / (2 * 0.7**2) + br**2 / (2 * 1.3**2) + np.sum(Wr**2) / (2 * 0.4)
        expected = sse / (2 * 0.2 * spec.L) + prior
        np.testing.assert_allclose(U[r].item(), expected, rtol=1e-11)


def test_map_objective_unbatched_matches_batched():
    C = torch.as_tensor(nested_cooccurrence([3, 8], SPEC, np.random.default_rng(2)))
    g, b, W = _params(2, SPEC, seed=3)
    U = map_objective(g, b, W, C, SPEC)
    for r in range(2):
        torch.testing.assert_close(map_objective(g[r], b[r], W[r], C[r], SPEC), U[r], rtol=1e-12, atol=0)


@pytest.mark.parametrize("kind", ["linear", "softmax"])
def test_ridge_readout_is_stationary_point_of_map_objective(kind):
    """For fixed (g, b), U is quadratic in W with minimiser W* = (K + kappa I)^{-1} B.

    dU/dW = (K W - B) / sigma^2 + W / omega vanishes at W*, and
    U(W* + D) - U(W*) = tr(D^T (K + kappa I) D) / (2 sigma^2): this pins the scaling of
    the likelihood term against the prior in map_objective.
    """
    spec = ModelSpec(L=5, V=3, kind=kind, sigma_G=1.0, sigma_b=1.0, omega=0.5, sigma0_sq=0.7)
    R = 3
    C = torch.as_tensor(nested_cooccurrence([4, 10, 30], spec, np.random.default_rng(4)))
    g, b, W0 = _params(R, spec, seed=5)
    A = attention(attention_logits(g, b), kind)
    K, B, _ = readout_moments(A, C, torch.as_tensor(spec.target))
    W_star = torch.linalg.solve(K + spec.kappa * torch.eye(spec.V, dtype=torch.float64), B)

    W = W_star.clone().requires_grad_()
    U_star = map_objective(g, b, W, C, spec)
    (grad,) = torch.autograd.grad(U_star.sum(), W)
    scale = (B.abs().amax((-1, -2)) / spec.sigma_sq)[:, None, None]  # size of the individual terms
    assert torch.all(grad.abs() <= 1e-10 * scale)

    # Away from W* the gradient does not vanish, and the excess objective is the quadratic form.
    D = W0 - W_star
    Wd = (W_star + D).requires_grad_()
    U_d = map_objective(g, b, Wd, C, spec)
    (grad_d,) = torch.autograd.grad(U_d.sum(), Wd)
    assert torch.all(grad_d.abs().amax((-1, -2)) > 1e-3 * scale[:, 0, 0])
    H = K + spec.kappa * torch.eye(spec.V, dtype=torch.float64)
    excess = (D * (H @ D)).sum((-1, -2)) / (2 * spec.sigma_sq)
    torch.testing.assert_close(U_d.detach() - U_star.detach(), excess, rtol=1e-9, atol=1e-12)


# --------------------------------------------------------------------------- hand-written gradients


@pytest.mark.parametrize("kind", ["linear", "softmax"])
@pytest.mark.parametrize("cyclic, causal", [(True, False), (False, False), (False, True)])
@pytest.mark.parametrize("layout", ["distinct", "repeated", "shared"])
def test_joint_posterior_gradient_matches_autograd(kind, cyclic, causal, layout):
    """The hand-written gradient (and value) of U equal autograd's on map_objective, to rounding,
    whether the runs have distinct data sets, blocks of repeated ones, or one shared C."""
    spec = ModelSpec(L=6, V=3, kind=kind, sigma_G=0.7, sigma_b=1.3, omega=0.4, sigma0_sq=0.2, cyclic=cyclic,
                     causal=causal)
    R = 6
    C = torch.as_tensor(nested_cooccurrence([4, 9, 30], spec, np.random.default_rng(1)))
    C_runs = {"distinct": torch.as_tensor(nested_cooccurrence([3, 5, 8, 13, 21, 34], spec, np.random.default_rng(2))),
              "repeated": C.repeat_interleave(2, dim=0), "shared": C[2]}[layout]
    obj = JointPosterior(C_runs, spec, R)
    assert obj.products.k == {"distinct": 1, "repeated": 2, "shared": R}[layout]
    g, b, W = _params(R, spec, seed=3)
    x = torch.cat([g.reshape(R, -1), b[:, None], W.reshape(R, -1)], dim=1)
    grad = torch.full_like(x, np.nan)
    U = obj.gradient(x, grad, value=True)
    gr, br, Wr = (t.clone().requires_grad_() for t in (g, b, W))
    C_full = C_runs.expand(R, *C_runs.shape) if layout == "shared" else C_runs
    U_ref = map_objective(gr, br, Wr, C_full, spec)
    U_ref.sum().backward()
    ref = torch.cat([gr.grad.reshape(R, -1), br.grad[:, None], Wr.grad.reshape(R, -1)], dim=1)
    torch.testing.assert_close(U, U_ref.detach(), rtol=1e-13, atol=0)
    torch.testing.assert_close(grad, ref, rtol=1e-12, atol=1e-12 * ref.abs().max().item())


@pytest.mark.parametrize("kind", ["linear", "softmax"])
@pytest.mark.parametrize("cyclic, causal", [(True, False), (False, False), (False, True)])
@pytest.mark.parametrize("layout", ["distinct", "repeated", "shared"])
def test_collapsed_posterior_gradient_matches_autograd(kind, cyclic, causal, layout):
    """The collapsed sampler's hand-written energy and gradient equal effective_action and
    its autograd gradient, to rounding, for each layout of the chains' data."""
    L, V, R = 5, 3, 6
    spec = ModelSpec(L, V, kind=kind, sigma_G=0.8, sigma_b=1.4, omega=0.6, sigma0_sq=0.3, cyclic=cyclic,
                        causal=causal)
    rng = np.random.default_rng(50)
    sets = [cooccurrence(copy_task(int(rng.integers(2, 40)), L, V, rng, cyclic=cyclic)[0]) for _ in range(R)]
    C = torch.as_tensor({"distinct": np.stack(sets), "repeated": np.repeat(np.stack(sets[:3]), 2, axis=0),
                         "shared": sets[0]}[layout])
    target = CollapsedPosterior(C, spec, R)
    gen = torch.Generator().manual_seed(51)
    g = torch.randn(R, L, L, dtype=torch.float64, generator=gen)
    b = torch.randn(R, dtype=torch.float64, generator=gen)
    E, grads = target.energy_and_grad({"g": g, "b": b})
    dg, db = grads["g"], grads["b"]
    gr, br = g.clone().requires_grad_(), b.clone().requires_grad_()
    E_ref = effective_action(gr, br, C, spec)
    E_ref.sum().backward()
    torch.testing.assert_close(E, E_ref.detach(), rtol=1e-13, atol=0)
    torch.testing.assert_close(dg, gr.grad, rtol=1e-11, atol=1e-12 * gr.grad.abs().max().item())
    torch.testing.assert_close(db, br.grad, rtol=1e-11, atol=1e-12 * br.grad.abs().max().item())
