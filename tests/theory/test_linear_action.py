"""Tests of copylib.theory.linear_action: the constants the linear theory modules share."""

from __future__ import annotations

import pytest

from copylib import ModelSpec
from copylib.theory import linear, linear_action, linear_jump, linear_minima, linear_thresholds, trust_region


def test_action_constants_of_a_spec():
    spec = ModelSpec(L=5, V=7, kind="linear", sigma_G=1.3, sigma_b=0.4, omega=2.0, sigma0_sq=0.3)
    k = linear_action.action_constants(spec)
    assert (k.L, k.V, k.n, k.n_a, k.n_b) == (5, 7, 23, 4, 19)
    assert k.s_c2 == pytest.approx(1.3**2 / 25) and k.s_p2 == pytest.approx(0.4**2 + 1.3**2 / 25)
    assert k.cL == pytest.approx(linear_action.transverse_row_sum_factor(5))
    assert linear_action.spec_of_constants(k) == linear_action.check_linear_spec(spec)


def test_linear_reexports_the_theme_modules():
    """copylib.theory.linear keeps every public name, as the same object as in its theme module."""
    homes = (linear_action, linear_minima, linear_thresholds, linear_jump)
    for name in linear.__all__:
        (home,) = [m for m in homes if name in m.__all__]
        assert getattr(linear, name) is getattr(home, name)
    assert trust_region.__all__ == []  # its minimiser (descend_many) serves linear_minima and linear_jump only
