"""Tests of copylib.theory.linear_thresholds: the thresholds are ordered, the susceptibility is positive below P1."""

from __future__ import annotations

import pytest

from copylib import ModelSpec
from copylib.theory import linear_thresholds


@pytest.mark.parametrize("version", ["mean_field", "map"])
def test_p1_below_p2_and_susceptibility_below_p1(version):
    spec = ModelSpec(L=32, V=4, kind="linear")
    P1 = linear_thresholds.p1_analytic(spec, version)
    assert 0 < P1 < linear_thresholds.p2_numerical(spec, version)
    assert linear_thresholds.susceptibility_m(0.5 * P1, spec, version) > 0
