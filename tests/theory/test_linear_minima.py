"""Tests of copylib.theory.linear_minima: the batched search equals the one-P search."""

from __future__ import annotations

import numpy as np

from copylib import ModelSpec
from copylib.theory import linear_action, linear_minima

SPEC = ModelSpec(L=4, V=6, kind="linear")


def test_minimise_many_matches_action_minimum():
    k = linear_action.action_constants(SPEC)
    Ps = [5.0, 50.0, 500.0]
    for version in linear_action.VERSIONS:
        batch = linear_minima.minimise_many(Ps, k, version)
        for P, r in zip(Ps, batch):
            assert r == linear_minima.global_minimum(P, SPEC, version)


def test_whitened_action_round_trips_the_order_parameters():
    k = linear_action.action_constants(SPEC)
    obj = linear_minima.WhitenedAction(k, "fluct")
    m, q, r2 = np.array([0.1, 0.5]), np.array([0.0, 0.2]), np.array([0.3, 1.0])
    back = obj.phys(obj.zvec(m, q, r2))
    for a, b in zip(back, (m, q, r2)):
        np.testing.assert_allclose(a, b, rtol=1e-12)
