"""copylib.model.induction: the induction data, the two-layer network, its potential, input checks."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from copylib.model import induction as ind
from copylib.model.network import attention

pytestmark = pytest.mark.usefixtures("one_thread")


def _brute_previous(tokens):
    out = np.full(tokens.shape, -1)
    for mu, l in np.ndindex(*tokens.shape):
        hits = np.flatnonzero(tokens[mu, :l] == tokens[mu, l])
        out[mu, l] = hits[-1] if hits.size else -1
    return out


def test_targets_are_masked_exactly_where_there_is_no_previous_occurrence():
    d = ind.induction_task(300, 9, 5, np.random.default_rng(0))
    prev = _brute_previous(d.tokens)
    assert np.array_equal(d.mask, prev >= 0)
    assert (d.Y[~d.mask] == 0).all()
    mu, l = np.nonzero(d.mask)
    assert np.array_equal(d.Y[mu, l].argmax(-1), d.tokens[mu, prev[mu, l] + 1])
    assert np.allclose(d.Y[d.mask].sum(-1), 1) and np.allclose(d.X.sum(-1), 1)


def test_same_seed_same_data():
    a, b = (ind.induction_task(20, 6, 4, np.random.default_rng(3)) for _ in range(2))
    assert np.array_equal(a.tokens, b.tokens)


def test_forward_shapes_causality_and_planted_solution():
    L, V = 6, 4
    d = ind.induction_task(50, L, V, np.random.default_rng(1))
    rng = np.random.default_rng(2)
    g, K, W = rng.normal(size=(3, L, L)), rng.normal(size=(3, V, V)), rng.normal(size=(3, V, V))
    A1, A2, F = ind.induction_forward(g, K, W, d.X[None])
    assert A1.shape == (3, L, L) and A2.shape == (3, 50, L, L) and F.shape == (3, 50, L, V)
    assert (np.triu(A2, 1) == 0).all() and np.allclose(A2.sum(-1), 1)
    # causality: changing a later token leaves earlier outputs unchanged
    X2 = d.X.copy()
    X2[:, -1] = np.roll(X2[:, -1], 1, axis=-1)
    F2 = ind.induction_forward(g[0], K[0], W[0], X2)[2]
    assert np.allclose(F2[:, :-1], F[0][:, :-1], rtol=0, atol=1e-12)
    # the planted induction network attends to the induction keys
    _, A2p, _ = ind.induction_forward(40 * np.eye(L, k=-1), 12 * np.eye(V), np.eye(V), d.X)
    assert float(ind.induction_attention_score(A2p, d)) > 0.99


def test_energy_matches_a_direct_sum_and_autograd_flows():
    L, V = 5, 3
    spec = ind.InductionSpec(L, V, sigma_K=2.0, sigma0_sq=0.5)
    d = ind.induction_task(40, L, V, np.random.default_rng(4))
    gen = torch.Generator().manual_seed(0)
    g, K, W = (torch.randn(*s, generator=gen, dtype=torch.float64, requires_grad=True)
               for s in ((L, L), (V, V), (V, V)))
    U = ind.induction_energy(g, K, W, d, spec)
    _, _, F = ind.induction_forward(g.detach().numpy(), K.detach().numpy(), W.detach().numpy(), d.X)
    sse = (((F - d.Y) ** 2).sum(-1) * d.mask).sum()
    direct = sse / (2 * spec.sigma_sq) + (g.detach().numpy() ** 2).sum() / 2 + (K.detach().numpy() ** 2).sum() / 8 \
        + (W.detach().numpy() ** 2).sum() / 2
    assert U.item() == pytest.approx(direct, rel=1e-12)
    U.backward()
    assert all(torch.isfinite(p.grad).all() and p.grad.abs().sum() > 0 for p in (g, K, W))


def test_copy_weight_of_the_shift_is_one_and_of_uniform_causal_attention_is_the_mean_of_1_over_l():
    L = 7
    assert ind.layer1_copy_weight(np.eye(L, k=-1)) == pytest.approx(1.0)
    A = attention(np.zeros((L, L)), "softmax", causal=True)
    assert ind.layer1_copy_weight(A) == pytest.approx(np.mean(1 / np.arange(2, L + 1)))


@pytest.mark.parametrize("call, name", [
    (lambda: ind.induction_task(0, 5, 3, np.random.default_rng(0)), "P"),
    (lambda: ind.induction_task(5, 1, 3, np.random.default_rng(0)), "L"),
    (lambda: ind.induction_task(5, 5, 1, np.random.default_rng(0)), "V"),
    (lambda: ind.induction_task(5, 5, 3, 0), "rng"),
    (lambda: ind.InductionSpec(5, 3, sigma_K=0.0), "sigma_K"),
    (lambda: ind.InductionSpec(1, 3), "L"),
    (lambda: ind.previous_occurrence(np.zeros((3, 4))), "tokens"),
    (lambda: ind.induction_forward(np.zeros((4, 4)), np.zeros((3, 3)), np.zeros((2, 2)),
                                   np.zeros((2, 4, 3))), "W"),
    (lambda: ind.induction_forward(np.zeros((5, 5)), np.zeros((3, 3)), np.zeros((3, 3)),
                                   np.zeros((2, 4, 3))), "g"),
    (lambda: ind.induction_forward(np.full((4, 4), np.nan), np.zeros((3, 3)), np.zeros((3, 3)),
                                   np.zeros((2, 4, 3))), "g"),
    (lambda: ind.induction_energy(np.zeros((4, 4)), np.zeros((3, 3)), np.zeros((3, 3)), None,
                                  ind.InductionSpec(4, 3)), "data"),
    (lambda: ind.induction_energy(np.zeros((4, 4)), np.zeros((3, 3)), np.zeros((3, 3)),
                                  ind.induction_task(2, 4, 3, np.random.default_rng(0)), "spec"), "spec"),
    (lambda: ind.layer1_copy_weight(np.zeros((3, 4))), "A1"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises((ValueError, TypeError), match=rf"\b{name}\b"):
        call()


def test_layer2_skips_position_one_as_a_key():
    vis = ind.layer2_visible(4).numpy()
    assert vis[0, 0] and not vis[1:, 0].any() and np.array_equal(vis[1:, 1:], np.tri(3, dtype=bool))
