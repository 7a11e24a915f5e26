"""Tests of copylib.theory.trust_region: the exact trust-region step and the batched descent."""

from __future__ import annotations

import numpy as np
import pytest

from copylib.theory.trust_region import _trust_region_step, descend_many


class Quadratic:
    """``S(z) = (z - c) . A (z - c) / 2`` for a batch of problems (``A (B, d, d)``, ``c (B, d)``)."""

    def __init__(self, A, c):
        self.A, self.c = np.asarray(A, dtype=float), np.asarray(c, dtype=float)

    def at(self, idx):
        return Quadratic(self.A[idx], self.c[idx])

    def value_grad_hess(self, z, P):
        d = z - self.c
        g = np.einsum("bij,bj->bi", self.A, d)
        return 0.5 * np.einsum("bi,bi->b", d, g), g, self.A.copy()


def test_trust_region_step_solves_the_subproblem():
    """For convex, indefinite and hard-case models the step stays in the ball and no feasible
    point has a lower model value (checked against many points on and inside the sphere)."""
    g = np.array([[1.0, 0.5], [0.3, -1.0], [0.0, 1.0], [1e-3, 2.0], [0.4, 0.1]])
    H = np.array([np.diag([2.0, 1.0]), np.diag([-1.0, 3.0]), np.diag([-2.0, 1.0]),  # hard case: g _|_ e_0
                  [[1.0, 2.0], [2.0, 1.0]], np.diag([50.0, 40.0])])
    radius = np.array([0.3, 1.0, 2.0, 0.5, 1.0])
    p, hits = _trust_region_step(g, H, radius)
    model = lambda x, b: g[b] @ x + 0.5 * x @ H[b] @ x  # noqa: E731
    angles = np.linspace(0, 2 * np.pi, 721)
    for b in range(len(g)):
        assert np.linalg.norm(p[b]) <= radius[b] * (1 + 1e-9)
        ring = np.outer(np.linspace(0, 1, 41), np.ones(2))[:, None, :] * np.stack([np.cos(angles), np.sin(angles)], 1)
        trial = (radius[b] * ring).reshape(-1, 2)
        best = min(model(x, b) for x in trial)
        assert model(p[b], b) <= best + 1e-9
    assert not hits[4] and np.allclose(p[4], -g[4] / np.diag(H[4]))  # the Newton step when it fits
    assert hits[2] and np.linalg.norm(p[2]) == pytest.approx(radius[2])


def test_descend_many_finds_the_minima_of_a_batch_of_quadratics():
    """Each problem of the batch stops at its own minimum (sign convention: ``z[0] >= 0``)."""
    A = np.array([np.diag([2.0, 1.0]), [[3.0, 1.0], [1.0, 2.0]], np.diag([1e-2, 1e2])])
    c = np.array([[1.0, -2.0], [0.5, 0.25], [30.0, 1.0]])
    z, S = descend_many(Quadratic(A, c), np.zeros((3, 2)), np.ones(3))
    np.testing.assert_allclose(z, c, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(S, 0.0, atol=1e-15)
