"""Tests of copylib.theory.linear_jump: local minima include the global one."""

from __future__ import annotations

from copylib import ModelSpec
from copylib.theory import linear_jump, linear_minima


def test_local_minima_contain_the_global_minimum():
    spec = ModelSpec(L=4, V=6, kind="linear")
    P = 200.0
    best = linear_minima.global_minimum(P, spec, "fluct")
    found = linear_jump.local_minima(P, spec, "fluct")
    assert min(r.action for r in found) <= best.action + 1e-9 * (1 + abs(best.action))
