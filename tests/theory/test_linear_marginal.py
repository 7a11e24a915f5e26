"""Tests of copylib.theory.linear_marginal (the plug-in posterior of linear attention, integrated)."""

from __future__ import annotations

import numpy as np
import pytest

from copylib import ModelSpec
from copylib.theory.linear import global_minimum, susceptibility_m
from copylib.theory.linear_marginal import (
    PluginMarginal,
    PluginSwitch,
    integrated_moments,
    plugin_marginal,
    plugin_posterior_moments,
    plugin_posterior_switch,
)

SPEC = ModelSpec(L=32, V=4, kind="linear")
SPEC_128 = ModelSpec(L=128, V=4, kind="linear")


def test_integrated_moments_small_P_matches_laplace_variance():
    # far below P1 the action is nearly quadratic: E m^2 ~ the Laplace variance
    P = 0.05
    mom = integrated_moments(P, SPEC, "mean_field", m_max=6.0, n_m=241)
    lap = float(susceptibility_m(P, SPEC, "mean_field"))
    assert abs(mom.var_m / lap - 1) < 0.05
    assert abs(mom.q) < 1e-8  # symmetric posterior: E[q sign m] = 0 when q decouples
    assert abs(mom.binder) < 0.05


def test_integrated_moments_large_P_close_to_minimum():
    # well above P1 the posterior concentrates around +-m*: sqrt(E m^2) -> m* within a few widths
    P = 1000.0
    mom = integrated_moments(P, SPEC, "mean_field")
    r = global_minimum(P, SPEC, "mean_field")
    assert abs(mom.rms_m - r.coordinates["m"]) < 0.05 * r.coordinates["m"]
    assert mom.abs_m <= mom.rms_m + 1e-12
    assert mom.binder > 0.5


# --------------------------------------------------------------------------
# plugin_posterior_moments
# --------------------------------------------------------------------------


@pytest.mark.parametrize("P", [17.0, 1000.0])
def test_plugin_posterior_moments_grid_converged(P):
    # trapezoid sums of smooth, rapidly decaying densities converge geometrically:
    # doubling every grid must leave the moments unchanged to well below sampling errors
    a = plugin_posterior_moments(P, SPEC)
    b = plugin_posterior_moments(P, SPEC, n_m=321, n_q=81, n_row=64, n_rest=48)
    assert abs(a.rms_m - b.rms_m) < 1e-5
    # E[q sign m] weighs by a step at m = 0, where the trapezoid rule is only second order:
    # 1e-7 absolute is still 1e-3 of the smallest sampled standard error of q in the chapter
    assert abs(a.q - b.q) < 1e-7
    assert a.edge_mass < 1e-7


def _direct_moments(P, spec, grids):
    """The plug-in posterior's moments on given grids, every term of the action and of the loss
    evaluated on the whole 4-d grid from its definition (the reference for the factored sums)."""
    from copylib.theory.plugin_loss import plugin_loss

    L, V = spec.L, spec.V
    s_p2, s_c2 = spec.sigma_b**2 + spec.sigma_G**2 / L**2, spec.sigma_G**2 / L**2
    n_a, n_b = L - 1, L * L - L - 1
    eps, c = V * spec.kappa / P, P / (2 * spec.sigma_sq * V)
    M, Q = grids["m"][:, None, None, None], grids["q"][None, :, None, None]
    ra, rb = np.exp(grids["row"])[None, None, :, None], np.exp(grids["rest"])[None, None, None, :]
    alpha_1, alpha_2 = M * M + (L - 1) * Q * Q + ra + rb, L * (M * M + ra)
    gamma_1, gamma_2 = M + (L - 1) * Q, L * M
    S = (V * (V - 1) / 2 * np.log(alpha_1 + eps) + V / 2 * np.log(alpha_2 + eps)
         - c * ((V - 1) * gamma_1**2 / (alpha_1 + eps) + gamma_2**2 / (alpha_2 + eps))
         + M * M / (2 * s_p2) + (L - 1) * Q * Q / (2 * s_c2) + (ra + rb) / (2 * s_c2)
         - n_a / 2 * np.log(ra) - n_b / 2 * np.log(rb))
    w = np.exp(-(S - S.min()))
    if grids["m"][0] == 0.0:
        w[0] *= 0.5
    w /= w.sum()
    shape = w.shape
    mean = lambda x: float((w * np.broadcast_to(x, shape)).sum())  # noqa: E731
    q = mean(Q * np.sign(M))
    return dict(var_m=mean(M**2), abs_m=mean(M), q=q, var_q=mean(Q**2) - q * q, m4=mean(M**4),
                loss=mean(plugin_loss(alpha_1, alpha_2, gamma_1, gamma_2, P, spec)),
                rho_row=mean(ra) / (n_a * s_c2), rho_rest=mean(rb) / (n_b * s_c2))


@pytest.mark.parametrize("L, V, P", [(8, 3, 5.0), (32, 4, 17.0), (32, 4, 1000.0), (128, 4, 300.0)])
def test_plugin_posterior_moments_equal_the_direct_quadrature_on_the_same_grid(L, V, P):
    # the moments are sums over lower-dimensional marginals and the action is built term by term on
    # the grid of the coordinates each depends on: the same numbers up to rounding (float64)
    from copylib.theory.linear_marginal import _plugin_grid

    spec = ModelSpec(L=L, V=V, kind="linear")
    kw = dict(n_m=121, n_q=41, n_row=32, n_rest=24, m_max=4.0, q_max=None, max_regrid=16, edge_tol=1e-7)
    ref = _direct_moments(P, spec, _plugin_grid(P, spec, **kw)["grids"])
    got = plugin_posterior_moments(P, spec)
    for name in ("var_m", "abs_m", "q", "var_q", "loss", "rho_row", "rho_rest"):
        assert getattr(got, name) == pytest.approx(ref[name], rel=1e-9, abs=1e-14), name
    assert got.binder == pytest.approx(1 - ref["m4"] / (3 * ref["var_m"] ** 2), rel=1e-9, abs=1e-12)


def test_plugin_posterior_moments_without_data_is_the_prior():
    # P -> 0: eps = V kappa / P -> inf, the data action vanishes; m ~ N(0, s_p^2), shells at their prior means
    spec = ModelSpec(L=8, V=3, kind="linear")
    a = plugin_posterior_moments(1e-9, spec, m_max=6.0)
    s_p2 = spec.sigma_b**2 + spec.sigma_G**2 / spec.L**2
    assert a.var_m == pytest.approx(s_p2, rel=1e-6)
    assert a.binder == pytest.approx(0.0, abs=1e-5)  # Gaussian
    # E r2 of a shell = n s_c^2 exactly under the prior
    assert a.rho_row == pytest.approx(1.0, abs=1e-6) and a.rho_rest == pytest.approx(1.0, abs=1e-6)


def test_plugin_posterior_moments_match_importance_sampling_over_all_of_A():
    """The four-coordinate reduction against a direct average over full L x L attention matrices.

    Independent route: draw A = (b J + g)/L from the prior, weight each draw by
    exp(-plugin_action(invariants(A))), average m^2 and q sign m. Nothing of the
    two-shell decomposition is used. Tolerance: 5 standard errors of the
    self-normalised importance estimate (delta method, with its effective sample size).
    """
    import torch

    from copylib.posterior.order_parameters import order_parameters, plugin_action_of_attention

    spec = ModelSpec(L=4, V=2, kind="linear")
    P, n = 3.0, 400_000
    rng = np.random.default_rng(5)
    L = spec.L
    A = (spec.sigma_b * rng.normal(size=(n, 1, 1)) + spec.sigma_G * rng.normal(size=(n, L, L))) / L
    S = plugin_action_of_attention(A, P, spec)
    w = np.exp(-(S - S.min()))
    w /= w.sum()
    ess = 1 / (w**2).sum()
    m, q, _ = order_parameters(torch.from_numpy(A))
    m, q = m.numpy(), q.numpy()
    for values, attr in ((m**2, "var_m"), (q * np.sign(m), "q")):
        est = (w * values).sum()
        se = np.sqrt((w**2 * (values - est) ** 2).sum())
        theory = getattr(plugin_posterior_moments(P, spec, m_max=6.0), attr)
        assert ess > 1000
        assert abs(est - theory) < 5 * se, (attr, est, theory, se)


def test_plugin_posterior_moments_rejects_bad_input():
    with pytest.raises(ValueError, match="P"):
        plugin_posterior_moments(0.0, SPEC)
    with pytest.raises(ValueError, match="n_row"):
        plugin_posterior_moments(10.0, SPEC, n_row=2)
    with pytest.raises(ValueError, match="edge_tol"):
        plugin_posterior_moments(10.0, SPEC, edge_tol=1.5)
    with pytest.raises(ValueError, match="kind"):
        plugin_posterior_moments(10.0, ModelSpec(L=8, V=3, kind="softmax"))
    with pytest.raises(ArithmeticError, match="grid"):
        plugin_posterior_moments(1000.0, SPEC, m_max=0.01, max_regrid=0)


# --------------------------------------------------------------------------
# the marginal of the copy part and the posterior switch
# --------------------------------------------------------------------------


@pytest.mark.parametrize("P", [40.0, 1000.0])
def test_plugin_marginal_consistent_with_moments(P):
    # the Q marginal integrates to 1 and its mean is (L-1) E[q sgn m] of plugin_posterior_moments
    # (same quadrature, other grid sizes: agreement to the quadrature error, well below 1e-3 here)
    mg = plugin_marginal(P, SPEC, "Q")
    assert isinstance(mg, PluginMarginal)
    assert np.trapezoid(mg.density, mg.x) == pytest.approx(1.0, abs=1e-6)
    mom = plugin_posterior_moments(P, SPEC)
    assert np.trapezoid(mg.x * mg.density, mg.x) == pytest.approx((SPEC.L - 1) * mom.q, rel=1e-3, abs=1e-6)
    m = plugin_marginal(P, SPEC, "m")
    assert np.trapezoid(m.density, m.x) == pytest.approx(1.0, abs=1e-6)
    assert np.trapezoid(m.x * m.density, m.x) == pytest.approx(mom.abs_m, rel=1e-3)


def test_plugin_marginal_unimodal_at_small_L():
    # L = 32, across the posterior's crossover (P2 of fluct ~ 1560): one mode of Q, no barrier
    for P in (1000.0, 1400.0, 1560.0, 1800.0, 2400.0):
        mg = plugin_marginal(P, SPEC, "Q")
        assert mg.modes.size == 1 and mg.barrier == 0.0 and np.isnan(mg.log_weight_ratio)


def test_plugin_marginal_barrier_definition_on_a_known_bimodal_case():
    # at L = 128 inside the switch the marginal has two modes; the barrier is ln(lower peak / dip)
    mg = plugin_marginal(0.97 * 26417.3, SPEC_128, "Q", q_max=6 / 127, m_max=3.0)
    assert mg.modes.size == 2 and mg.modes[0] < 2 < mg.modes[1]
    i = [int(np.argmin(np.abs(mg.x - x))) for x in mg.modes]
    dip = mg.density[i[0]:i[1] + 1].min()
    assert mg.barrier == pytest.approx(np.log(min(mg.density[i]) / dip), rel=1e-12)
    assert mg.barrier > 0.05
    # weights on both sides of the dip
    j = int(np.argmin(np.abs(mg.x - mg.dip)))
    up = mg.density[j + 1:].sum() + 0.5 * mg.density[j]
    down = mg.density[:j].sum() + 0.5 * mg.density[j]
    assert mg.log_weight_ratio == pytest.approx(np.log(up / down), rel=1e-9)


def test_plugin_switch_continuous_at_small_L():
    # L = 32: the bisection closes on a single mode (gap of a few grid cells), no two-mode marginal
    sw = plugin_posterior_switch(SPEC, 1000.0, 2400.0, n_bisect=8)
    assert isinstance(sw, PluginSwitch) and not sw.bimodal
    dx = sw.marginal.x[1] - sw.marginal.x[0]
    assert sw.gap < 0.2 and sw.P_lo < sw.P_hi and sw.n_eval == 10
    assert sw.gap < 6 * dx


def test_plugin_switch_rejects_bad_input():
    with pytest.raises(ValueError, match="P_lo"):
        plugin_posterior_switch(SPEC, 2000.0, 1000.0)
    with pytest.raises(ValueError, match="n_bisect"):
        plugin_posterior_switch(SPEC, 1000.0, 2000.0, n_bisect=0)
    with pytest.raises(ValueError, match="coordinate"):
        plugin_posterior_switch(SPEC, 1000.0, 2000.0, coordinate="m")
    with pytest.raises(ValueError, match="coordinate"):
        plugin_marginal(100.0, SPEC, "share")


def test_plugin_switch_finds_two_modes_at_large_L():
    # L = 128: between a pooling marginal (0.9 P2 of fluct) and a copying one (1.05 P2) the
    # bisection meets two-mode marginals; the reported one has a pooling and a copying mode
    P2f = 26417.3  # p2_numerical(SPEC_128, "fluct") to 1e-6
    sw = plugin_posterior_switch(SPEC_128, 0.9 * P2f, 1.05 * P2f, n_bisect=3, q_max=6 / 127, m_max=3.0)
    assert sw.bimodal and sw.marginal.modes.size == 2
    assert sw.marginal.modes[0] < 1.5 < 2.5 < sw.marginal.modes[1]
    assert sw.marginal.barrier > 0 and sw.P_lo < sw.marginal.P * (1 + 1e-12) and sw.marginal.P <= sw.P_hi * (1 + 1e-12)
