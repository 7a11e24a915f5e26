"""Property tests of copylib.analysis.softmax_evidence: finite-size tables, branch comparison, chains, plug-in error."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import copylib as cl
from copylib.analysis import softmax_evidence as sxe
from copylib.theory.softmax_marginal import FiniteSizeRow

from props_helpers import budget, covers, raises_naming


def _row(L, two, P3, lo=100.0, width=2.0, bar=(0.5, 0.2)):
    nan2 = (math.nan, math.nan)
    return FiniteSizeRow(L=L, V=4, P_peak=lo + 1, scanned=(lo - 50, lo + 50), step=0.1, two_minima=two,
                         max_depth=0.01 if two else 0.0, shoulder=-0.1 if two else 0.1,
                         P_lower=lo if two else math.nan, P_upper=lo + width if two else math.nan,
                         P3=P3 if two else math.nan, barrier_height=bar if two and math.isfinite(P3) else nan2,
                         barrier=0.1, slope=-0.5)


@covers(sxe.finite_size_frame)
@budget(30)
@given(Ls=st.lists(st.integers(3, 200), min_size=1, max_size=6, unique=True), data=st.data())
def test_finite_size_frame_one_row_per_L(Ls, data):
    rows, errors = {}, {}
    for L in Ls:
        two = data.draw(st.booleans())
        P3 = data.draw(st.sampled_from([math.nan, 101.0]))
        rows[L] = (_row(L, two, P3), _row(L, two, P3))
        errors[L] = data.draw(st.floats(0, 1))
    frame = sxe.finite_size_frame(rows, errors=errors, saddle_points={"mean_field": {Ls[0]: 50.0}})
    assert list(frame.index) == Ls
    for L in Ls:
        a = rows[L][0]
        assert frame.loc[L, "two minima"] == ("yes" if a.two_minima else "no")
        assert (frame.loc[L, "window"] != "") == a.two_minima
        if math.isfinite(a.P3):
            assert frame.loc[L, "window / P3"] == a.window and frame.loc[L, "sharpness"] == a.sharpness
        else:
            assert np.isnan(frame.loc[L, "P3"]) and np.isnan(frame.loc[L, "sharpness"])
    assert frame.loc[Ls[0], "P3 mean_field"] == 50.0


@covers(sxe.finite_size_frame)
@budget(10)
@given(bad=st.sampled_from([[1, 2], "rows", 3.0]))
def test_finite_size_frame_refuses_non_mappings(bad):
    with raises_naming("rows", TypeError):
        sxe.finite_size_frame(bad)


@covers(sxe.branch_comparison, sxe.BranchComparison)
@budget(20)
@given(which=st.sampled_from(["c_div", "min_mass", "draws", "cumulants"]), data=st.data())
def test_branch_comparison_names_a_bad_argument(which, data):
    import copylib as cl
    from copylib.theory import softmax_marginal as se
    spec = cl.ModelSpec(L=8, V=4, kind="softmax")
    cum = se.row_cumulants(spec, np.random.default_rng(1), n_draws=16, lam1=np.linspace(-60, 10, 8),
                           lam2=np.linspace(-30, 60, 10))
    c = np.full((2, 2, 3), 0.1)
    args = {"draws": {20: (c, c, c)}, "spec": spec, "cumulants": (cum, cum), "c_div": 0.2}
    args[which] = data.draw({"c_div": st.sampled_from([0.0, 1.0, -0.5, math.nan, "0.2", True]),
                             "min_mass": st.sampled_from([0.0, 0.5, math.inf, "x"]),
                             "draws": st.sampled_from([{}, [1, 2], None]),
                             "cumulants": st.sampled_from([(cum,), (cum, cum, cum)])}[which])
    with raises_naming(which):
        sxe.branch_comparison(**args)


@covers(sxe.branch_comparison, sxe.BranchComparison)
@budget(5)
@given(seed=st.integers(0, 2**16), n_data=st.integers(2, 5), c_div=st.floats(0.15, 0.4))
def test_branch_comparison_rows_are_consistent(seed, n_data, c_div):
    import copylib as cl
    from copylib.theory import softmax_marginal as se
    spec = cl.ModelSpec(L=8, V=4, kind="softmax")
    cum = se.row_cumulants(spec, np.random.default_rng(1), n_draws=64)
    rng = np.random.default_rng(seed)
    c = rng.uniform(0.05, 0.6, size=(n_data, 2, 7))
    a1 = 8 * (c**2 + (1 - c) ** 2 / 7)
    bc = sxe.branch_comparison({50: (c, a1, c)}, spec, (cum, cum), c_div, near=[50])
    for P, _what, basin, mean, err, th, z in bc.rows:
        assert P == 50 and basin in ("all", "pool", "copy") and err >= 0
        assert math.isfinite(th)
        if err > 0:  # identical cumulants: no theory error, z is the plain t statistic
            assert math.isclose(z, (mean - th) / err, rel_tol=1e-12, abs_tol=1e-12)
    assert len(bc.rows) == bc.theory_err.size
    if bc.rows:
        assert bc.corr_blocks[0].shape == (len(bc.rows), len(bc.rows))


@covers(sxe.finite_size_summary, sxe.FiniteSizeSummary)
@budget(30)
@given(Ls=st.lists(st.integers(3, 200), min_size=1, max_size=6, unique=True), data=st.data())
def test_finite_size_summary_errors_bound_the_set_difference(Ls, data):
    rows = {}
    for L in Ls:
        two = data.draw(st.booleans())
        P3 = data.draw(st.sampled_from([math.nan, 101.0]))
        bars = [tuple(data.draw(st.floats(0, 10)) for _ in range(2)) for _ in range(2)]
        rows[L] = (_row(L, two, P3, bar=bars[0]), _row(L, two, P3, bar=bars[1]))
    jump = sorted(L for L in Ls if math.isfinite(rows[L][0].P3))
    refined = {jump[0]: _row(jump[0], True, 101.0, bar=(0.0, 0.0))} if jump else {}
    fs = sxe.finite_size_summary(rows, refined)
    assert list(fs.L) == jump and fs.barrier.shape == fs.barrier_err.shape == (len(jump), 2)
    assert (fs.barrier_err >= np.abs(fs.barrier - fs.barrier_b) - 1e-12).all()
    assert fs.grid_change >= 0 and set(fs.L_two).isdisjoint(fs.L_none)
    assert set(fs.L_two) | set(fs.L_none) == set(Ls)  # both sets of a row agree here


@covers(sxe.finite_size_summary)
@budget(10)
@given(bad=st.sampled_from([{}, [1, 2], None, {24: (1, 2)}]))
def test_finite_size_summary_refuses_bad_rows(bad):
    with raises_naming("rows", TypeError):
        sxe.finite_size_summary(bad)


@covers(sxe.finite_size_summary, sxe.FiniteSizeSummary)
@budget(20)
@given(Ls=st.lists(st.integers(3, 200), min_size=1, max_size=6, unique=True),
       P3s=st.lists(st.floats(10, 1e4), min_size=6, max_size=6))
def test_finite_size_summary_P3_is_set_A_at_every_jump(Ls, P3s):
    rows = {L: (_row(L, True, P3), _row(L, True, P3 + 1)) for L, P3 in zip(Ls, P3s)}
    fs = sxe.finite_size_summary(rows)
    assert list(fs.L) == sorted(Ls)
    np.testing.assert_array_equal(fs.P3, [rows[L][0].P3 for L in sorted(Ls)])


@covers(sxe.finite_size_figure)
@budget(10)
@given(Ls=st.lists(st.integers(3, 200), min_size=1, max_size=5, unique=True), n_versions=st.integers(1, 2),
       weak=st.booleans())
def test_finite_size_figure_has_a_line_per_set_and_version(Ls, n_versions, weak):
    fs = sxe.finite_size_summary({L: (_row(L, True, 101.0), _row(L, True, 102.0)) for L in Ls})
    versions = {v: {L: 50.0 + L for L in sorted(Ls)} for v in ("mean_field", "map")[:n_versions]}
    fig = sxe.finite_size_figure(fs, versions, weak=(2, 0.01) if weak else None)
    left, middle, right = fig.axes
    assert len(right.get_lines()) == 1 + n_versions and len(middle.get_lines()) == 2
    assert len(left.get_lines()) >= 1 + weak
    plt.close(fig)


@covers(sxe.finite_size_figure)
@budget(10)
@given(which=st.sampled_from(["summary", "saddle_points"]))
def test_finite_size_figure_names_a_bad_argument(which):
    fs = sxe.finite_size_summary({28: (_row(28, True, 101.0), _row(28, True, 102.0))})
    args = {"summary": fs, "saddle_points": {"map": {28: 1.0}}}
    args[which] = {"summary": {28: 1.0}, "saddle_points": {"a": {}, "b": {}, "c": {}}}[which]
    with raises_naming(which, TypeError):
        sxe.finite_size_figure(**args)


def _draws(seed, P_values, n_data, n):
    rng = np.random.default_rng(seed)
    out = {}
    for P in P_values:
        c = rng.uniform(0.02, 0.8, size=(n_data, 2, n))
        out[P] = (c, c**2, rng.normal(size=(n_data, 2, n)))
    return out


@covers(sxe.chain_convergence, sxe.ChainConvergence)
@budget(20)
@given(seed=st.integers(0, 2**16), n_P=st.integers(1, 3), n_data=st.integers(1, 4), n=st.integers(8, 40),
       c_div=st.floats(0.05, 0.75), steps=st.integers(1, 10_000))
def test_chain_convergence_summaries_are_the_extremes_of_its_table(seed, n_P, n_data, n, c_div, steps):
    P_values = [100 * (i + 1) for i in range(n_P)]
    draws = _draws(seed, P_values, n_data, n)
    conv = sxe.chain_convergence(draws, c_div, dict.fromkeys(P_values, steps), P_values[:1])
    assert len(conv.table) == 2 * n_P and conv.rhat.shape == (2 * n_P,)
    assert conv.rhat_max == conv.rhat.max() and conv.rhat_data_max == conv.rhat_worst.max()
    assert conv.ess_min == min(conv.ess_bulk.min(), conv.ess_tail.min())
    for P in P_values:
        assert conv.crossings[P].shape == (2 * n_data,)
        assert ((conv.crossings[P] >= 0) & (conv.crossings[P] <= n - 1)).all()
    assert conv.cross_min == conv.crossings[P_values[0]].min()
    assert conv.sigma_c >= 0 and math.isclose(conv.rhat_flags, math.sqrt(0.63) * conv.sigma_c, rel_tol=1e-12)
    assert math.isnan(conv.tau_edge) == (n_P == 1)


@covers(sxe.chain_convergence)
@budget(10)
@given(which=st.sampled_from(["draws", "c_div", "n_steps", "mid", "rhat_bound"]), data=st.data())
def test_chain_convergence_names_a_bad_argument(which, data):
    args = {"draws": _draws(0, [100], 2, 10), "c_div": 0.3, "n_steps": {100: 10}, "mid": [100]}
    args[which] = data.draw({"draws": st.sampled_from([{}, [1, 2], None]),
                             "c_div": st.sampled_from([0.0, 1.0, math.nan, "0.3"]),
                             "n_steps": st.sampled_from([{}, {100: 0}, {200: 10}, [10]]),
                             "mid": st.sampled_from([[], [200]]),
                             "rhat_bound": st.sampled_from([1.0, 0.5, math.inf])}[which])
    with raises_naming(which):
        sxe.chain_convergence(**args)


@covers(sxe.plugin_evidence_error, sxe.PluginEvidenceError)
@budget(10)
@given(seed=st.integers(0, 2**16), n_data=st.integers(2, 4), c_ref=st.floats(0.1, 0.5),
       cs=st.lists(st.floats(0.1, 0.9), min_size=1, max_size=3))
def test_plugin_evidence_error_is_exact_minus_plugin_and_bounded(seed, n_data, c_ref, cs):
    spec = cl.ModelSpec(L=4, V=2, kind="softmax")
    states = {f"s{i}": c for i, c in enumerate(cs)}
    ev = sxe.plugin_evidence_error(spec, 20, c_ref, states, n_data, np.random.default_rng(seed))
    again = sxe.plugin_evidence_error(spec, 20, c_ref, states, n_data, np.random.default_rng(seed))
    np.testing.assert_array_equal(ev.exact, again.exact)  # the generator alone fixes the data sets
    np.testing.assert_allclose(ev.bias, ev.exact - ev.plugin)
    np.testing.assert_allclose(ev.exact_se * math.sqrt(n_data), ev.spread, rtol=1e-12)
    assert ev.bound >= np.abs(ev.bias).max() and ev.states == tuple(states)
    assert len(ev.frame()) == len(cs)


@covers(sxe.plugin_evidence_error)
@budget(10)
@given(which=st.sampled_from(["P", "c_ref", "n_data", "states", "rng"]), data=st.data())
def test_plugin_evidence_error_names_a_bad_argument(which, data):
    spec = cl.ModelSpec(L=4, V=2, kind="softmax")
    args = {"spec": spec, "P": 20, "c_ref": 0.2, "states": {"a": 0.5}, "n_data": 3,
            "rng": np.random.default_rng(0)}
    bad = {"P": st.sampled_from([0, -1, 2.5]), "c_ref": st.sampled_from([0.0, 1.0, 1.5, math.nan]),
           "n_data": st.sampled_from([1, 0, 2.5]), "states": st.sampled_from([{}, [0.5], None, {"a": 1.0}]),
           "rng": st.sampled_from([0, None, "rng"])}[which]
    args[which] = data.draw(bad)
    with raises_naming(which):
        sxe.plugin_evidence_error(**args)
