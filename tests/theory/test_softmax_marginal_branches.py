"""Tests of copylib.theory.softmax_marginal_branches: branches of the marginal, the first-order
point at L = 32, the log-odds branches and the half-mass P."""

from __future__ import annotations

import math

import numpy as np
import pytest

from copylib import ModelSpec
from copylib.theory import softmax_marginal_branches as smb
from copylib.theory import softmax_marginal_density as smd

SPEC = ModelSpec(L=32, V=4, kind="softmax")


def _double_well(tilt=0.5, barrier=2.0):
    """A quartic double well in c, minima near 0.05 and 0.3, the copy one raised by ``tilt`` nats."""
    c = np.linspace(0.01, 0.6, 2000)
    U = barrier * ((c - 0.05) * (c - 0.3) / 0.125**2) ** 2 + tilt * (c - 0.05) / 0.25
    logd = -U - math.log(np.trapezoid(np.exp(-U), c))
    return smd.CopyWeightMarginal(P=1.0, c=c, log_density=logd, alpha_1=10 * c, loss=1 - c, edge=-50.0)


def test_branches_of_a_double_well():
    m = _double_well()
    b = smb.marginal_branches(m)
    assert b.n_minima == 2
    assert b.minima[0] == pytest.approx(0.05, abs=0.01) and b.minima[1] == pytest.approx(0.3, abs=0.01)
    assert 0.1 < b.barrier < 0.2
    assert math.exp(-b.free_energy[0]) + math.exp(-b.free_energy[1]) == pytest.approx(1.0, abs=1e-9)
    assert b.barrier_height[0] > 0 and b.barrier_height[1] > 0
    assert b.barrier_height[0] - b.barrier_height[1] == pytest.approx(0.5, abs=0.05)
    assert b.copy_weight[0] < b.barrier < b.copy_weight[1]
    np.testing.assert_allclose(b.alpha_1, 10 * np.array(b.copy_weight), rtol=1e-9)
    np.testing.assert_allclose(b.loss, 1 - np.array(b.copy_weight), rtol=1e-9)
    one = smb.marginal_branches(_double_well(tilt=-20.0))
    assert one.n_minima < 2 and all(math.isnan(x) for x in one.free_energy)


def test_exact_transition_at_L32(cumulants_L32):
    tr = smb.marginal_transition(SPEC, cumulants_L32)
    assert tr.P_lower < tr.P3 < tr.P_upper
    assert tr.at_P3.free_energy[0] == pytest.approx(tr.at_P3.free_energy[1], abs=0.01)
    # the exact posterior's jump is well above the mean-field P3 = 342 and below fluct's 667
    assert 450 < tr.P3 < 660
    assert max(tr.at_P3.barrier_height) < 3  # a weak barrier (nats)


def test_log_odds_branches_use_the_density_of_the_log_odds():
    m = _double_well()
    in_y = smb.log_odds_branches(m)
    # the Jacobian c(1-c) tilts the potential towards the copy side: its minimum moves up in c
    direct = smb.marginal_branches(smd.CopyWeightMarginal(
        P=m.P, c=m.c, log_density=m.log_density + np.log(m.c * (1 - m.c)), alpha_1=m.alpha_1, loss=m.loss,
        edge=m.edge))
    assert in_y.n_minima == direct.n_minima == 2
    np.testing.assert_allclose(in_y.minima, direct.minima, rtol=1e-12)
    assert in_y.minima[0] > smb.marginal_branches(m).minima[0]
    with pytest.raises(ValueError, match="marginal"):
        smb.log_odds_branches(m.c)


def test_half_mass_P_splits_the_mass_at_the_threshold(cumulants_L32):
    tr = smb.marginal_transition(SPEC, cumulants_L32)
    P_half = smb.half_mass_P(tr.at_P3.barrier, SPEC, cumulants_L32)
    assert smd.plugin_marginal(P_half, SPEC, cumulants_L32).mass(tr.at_P3.barrier) == pytest.approx(0.5, abs=1e-3)
    # more data put more mass on the copy side: a higher threshold needs a larger P
    assert smb.half_mass_P(tr.at_P3.barrier + 0.03, SPEC, cumulants_L32) > P_half
    with pytest.raises(ValueError, match="threshold"):
        smb.half_mass_P(1.5, SPEC, cumulants_L32)
