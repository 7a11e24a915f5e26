"""Tests of copylib.analysis.softmax_evidence (finite-size tables, branch comparison, chains, plug-in error)."""

import math

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

import copylib as cl
from copylib.analysis import softmax as sx
from copylib.analysis import softmax_evidence as sxe
from copylib.theory import softmax as st


def test_finite_size_frame_is_one_row_per_L():
    d = sx.weak_double_minimum(24, 4, seeds=(21, 22), n_draws=512)
    frame = sxe.finite_size_frame({24: d.rows}, errors={24: 0.01}, saddle_points={"map": {24: 150.0}})
    assert list(frame.index) == [24]
    assert frame.loc[24, "P3 map"] == 150.0 and frame.loc[24, "error"] == 0.01
    assert np.isnan(frame.loc[24, "P3"])
    with pytest.raises(TypeError, match="rows"):
        sxe.finite_size_frame([d.rows])


def _marginal_draws(spec, cum, P_values, n_data, rng, shift=0.0):
    """Draws of c from the plug-in marginal itself (alpha_1 of the uniform copy state), shape (n_data, 2, 40)."""
    from copylib.theory import softmax_marginal as se
    out = {}
    for P in P_values:
        m = se.plugin_marginal(float(P), spec, cum)
        w = np.exp(m.log_density)
        c = np.clip(rng.choice(m.c, p=w / w.sum(), size=(n_data, 2, 40)) + shift, 1e-3, 0.999)
        a1 = spec.L * (c**2 + (1 - c) ** 2 / (spec.L - 1))
        out[P] = (c, a1, np.zeros_like(c))
    return out


def test_branch_comparison_of_draws_from_the_marginal():
    """Draws of c from the theory itself agree with it; shifted draws do not."""
    from copylib.theory import softmax_marginal as se
    spec = cl.ModelSpec(L=8, V=4, kind="softmax")
    cums = tuple(se.row_cumulants(spec, np.random.default_rng(s), n_draws=256) for s in (1, 2))
    draws = _marginal_draws(spec, cums[0], [20, 90], 8, np.random.default_rng(0))
    bc = sxe.branch_comparison(draws, spec, cums, 0.3, near=[90])
    frame = bc.frame()
    assert list(frame.columns) == ["P", "quantity", "basin", "sampled", "s.e.", "theory", "z"]
    assert len(frame) == len(bc.z) == bc.theory_err.size
    c_rows = frame[frame.quantity == "c"]
    assert (np.abs(c_rows.z) < 4).all()
    assert set(frame.basin[frame.P == 90]) == {"all", "pool", "copy"}
    assert bc.res_c_near.size == 3 and len(bc.corr_blocks) == len(bc.n_groups) == 2
    for block in bc.corr_blocks:
        np.testing.assert_allclose(np.diag(block), 1.0)
        assert (np.abs(block) <= 1).all()
    shifted = sxe.branch_comparison(_marginal_draws(spec, cums[0], [20], 8, np.random.default_rng(0), 0.05),
                                   spec, cums, 0.3)
    assert np.abs(shifted.frame().query("quantity == 'c'").z).max() > 5


def _two_start_draws(rng, P_values, n_data=4, n=200, c_div=0.3):
    """Draws (n_data, 2, n) of c that hop across c_div, and an action S, per P."""
    out = {}
    for P in P_values:
        c = np.clip(c_div + 0.1 * rng.standard_normal((n_data, 2, n)), 0.01, 0.99)
        out[P] = (c, c**2, -np.log(c))
    return out


def test_chain_convergence_counts_crossings_and_pools_the_spread():
    draws = _two_start_draws(np.random.default_rng(3), [100, 200, 300])
    conv = sxe.chain_convergence(draws, 0.3, {100: 50, 200: 400, 300: 50}, [200])
    assert list(conv.table.P) == [100, 100, 200, 200, 300, 300]
    assert list(conv.table.observable) == ["c", "S"] * 3
    c = draws[200][0].reshape(8, -1)
    side = c >= 0.3
    np.testing.assert_array_equal(conv.crossings[200], (side[:, 1:] != side[:, :-1]).sum(1))
    assert conv.cross_min == conv.crossings[200].min()
    assert conv.table["crossings of c* (fewest)"].iloc[0] == conv.crossings[100].min()
    np.testing.assert_allclose(conv.sigma_c, np.sqrt(np.mean([draws[200][0][d].var() for d in range(4)])))
    np.testing.assert_allclose(conv.rhat_flags, np.sqrt(3 * (1.1**2 - 1)) * conv.sigma_c)
    ess_c = conv.table.query("observable == 'c'").set_index("P")["ESS bulk"]
    for P, n_steps in ((100, 50), (200, 400), (300, 50)):
        np.testing.assert_allclose(conv.steps_per_ess[P], n_steps * 8 / ess_c[P])
    assert conv.tau_mid == conv.steps_per_ess[200]
    assert conv.tau_edge == max(conv.steps_per_ess[100], conv.steps_per_ess[300])
    np.testing.assert_allclose(conv.ess_chain_mid, ess_c[200] / 8)
    assert conv.rhat_max < 1.1 and conv.rhat_data_max == conv.rhat_worst.max()  # independent draws mix


def test_chain_convergence_flags_a_pair_stuck_in_different_basins():
    draws = _two_start_draws(np.random.default_rng(4), [100])
    c, a1, S = draws[100]
    c = c.copy()
    c[0, 0] = 0.05 + 0.01 * np.random.default_rng(5).random(c.shape[-1])  # one chain stuck at pooling
    c[0, 1] = 0.60 + 0.01 * np.random.default_rng(6).random(c.shape[-1])  # its partner stuck copying
    conv = sxe.chain_convergence({100: (c, a1, S)}, 0.3, {100: 10}, [100])
    assert conv.rhat_worst[0] > 1.5 and conv.crossings[100][:2].tolist() == [0, 0]
    assert conv.cross_min == 0 and math.isnan(conv.tau_edge)


def test_chain_convergence_names_bad_arguments():
    draws = _two_start_draws(np.random.default_rng(0), [100])
    with pytest.raises(ValueError, match="c_div"):
        sxe.chain_convergence(draws, 1.5, {100: 10}, [100])
    with pytest.raises(ValueError, match="mid"):
        sxe.chain_convergence(draws, 0.3, {100: 10}, [200])
    with pytest.raises(ValueError, match="n_steps"):
        sxe.chain_convergence(draws, 0.3, {200: 10}, [100])


def test_plugin_evidence_error_is_the_exact_difference_minus_the_plugin_one():
    spec = cl.ModelSpec(L=6, V=3, kind="softmax")
    states = {"a": 0.4, "b": 0.7}
    ev = sxe.plugin_evidence_error(spec, 30, 0.2, states, 5, np.random.default_rng(9))
    rng = np.random.default_rng(9)
    C = np.stack([cl.cooccurrence(cl.copy_task(30, 6, 3, rng)[0]) for _ in range(5)])
    ref = sx.uniform_copy_attention(0.2, 6)
    for i, c_state in enumerate(states.values()):
        A = sx.uniform_copy_attention(c_state, 6)
        d = np.asarray(cl.negative_log_evidence(A, C, spec)) - np.asarray(cl.negative_log_evidence(ref, C, spec))
        np.testing.assert_allclose([ev.exact[i], ev.spread[i]], [d.mean(), d.std(ddof=1)], rtol=1e-12)
        d_plug = cl.plugin_action_of_attention(A, 30, spec) - cl.plugin_action_of_attention(ref, 30, spec)
        np.testing.assert_allclose(ev.plugin[i], d_plug, rtol=1e-12)
    np.testing.assert_allclose(ev.bias, ev.exact - ev.plugin)
    assert ev.bound == pytest.approx(np.max(np.abs(ev.bias) + 2 * ev.exact_se))
    frame = ev.frame()
    assert list(frame.index) == ["a", "b"] and list(frame["plug-in error"]) == list(ev.bias)


def test_plugin_evidence_error_names_bad_arguments():
    spec = cl.ModelSpec(L=6, V=3, kind="softmax")
    with pytest.raises(ValueError, match="n_data"):
        sxe.plugin_evidence_error(spec, 30, 0.2, {"a": 0.4}, 1, np.random.default_rng(0))
    with pytest.raises(TypeError, match="states"):
        sxe.plugin_evidence_error(spec, 30, 0.2, {}, 3, np.random.default_rng(0))
    with pytest.raises(TypeError, match="rng"):
        sxe.plugin_evidence_error(spec, 30, 0.2, {"a": 0.4}, 3, 0)


def test_finite_size_figure_draws_every_size_and_version():
    d = sx.weak_double_minimum(24, 4, seeds=(21, 22), n_draws=512)
    row = d.rows[0]
    jump = row.__class__(**{**row.__dict__, "P3": 101.0, "barrier_height": (0.5, 0.2)})
    fs = sxe.finite_size_summary({28: (jump, jump), 32: (jump, jump)})
    np.testing.assert_array_equal(fs.P3, [101.0, 101.0])
    fig = sxe.finite_size_figure(fs, {"mean_field": {28: 50.0, 32: 60.0}, "map": {28: 55.0, 32: 66.0}},
                                 weak=(24, 0.01))
    left, middle, right = fig.axes
    assert len(right.get_lines()) == 3 and right.get_yscale() == "log"
    assert len(middle.get_lines()) == 2 and "$L = 24$: depth" in [t.get_text() for t in left.get_legend().texts]
    with pytest.raises(TypeError, match="summary"):
        sxe.finite_size_figure(d, {"map": {28: 1.0}})
    matplotlib.pyplot.close(fig)


def test_map_data_gain_is_the_map_action_up_to_the_prior_and_a_constant():
    spec = cl.ModelSpec(L=12, V=4, kind="softmax")
    Delta = np.linspace(0.0, 3.0, 7)
    F = st.reduced_action(Delta, 250.0, spec, version="map")
    closed = -sx.map_data_gain(Delta, 250.0, spec)[0] + (spec.L - 1) * Delta**2 / (2 * spec.sigma_G**2)
    np.testing.assert_allclose(F - F[0], closed - closed[0], atol=1e-9)
