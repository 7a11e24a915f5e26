"""Property tests of the table functions of copylib.analysis.linear (thresholds by route, the plug-in
z test, diagnostics tables).

Random valid arguments give output of the documented type, shape and range; each kind of invalid
argument raises ValueError or TypeError naming the parameter.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

import copylib as cl
from copylib.analysis import linear as lx
from copylib.analysis import linear_evidence as lxe
from copylib.analysis import linear_thresholds as lxt
from copylib.inference.diagnostics import ZCalibration
from copylib.theory import linear as lt

from props_helpers import (
    bad_ints,
    bad_positive,
    bad_spec,
    budget,
    covers,
    raises_naming,
)

seeds = st.integers(0, 2**32 - 1)
VERSIONS = ("mean_field", "fluct", "map")


@covers(lxt.threshold_versions, lxt.ThresholdVersions)
@budget(3)
@given(L=st.integers(4, 6), V=st.integers(2, 3), versions=st.sampled_from([VERSIONS, ("map",), ("fluct", "mean_field")]))
def test_threshold_versions_valid(L, V, versions):
    spec = cl.ModelSpec(L=L, V=V, kind="linear")
    t = lxt.threshold_versions(spec, versions)
    for field in ("p1_exact", "p1_numerical", "p1_leading", "p2_numerical", "p2_asymptotic"):
        assert tuple(getattr(t, field)) == versions
    for v in versions:
        assert 0 < t.p1_exact[v] < t.p2_numerical[v] and t.p2_asymptotic[v] > 0
        assert math.isclose(t.p1_numerical[v], t.p1_exact[v], rel_tol=1e-6)  # two routes to one number
        assert math.isnan(t.p1_leading[v]) == (v == "fluct")
    table = t.table()
    assert isinstance(table, pd.DataFrame) and list(table.index) == list(versions) and table.shape == (len(versions), 3)


@covers(lxt.threshold_versions)
@budget(20)
@given(data=st.data())
def test_threshold_versions_invalid(data):
    args = {"spec": cl.ModelSpec(L=4, V=2, kind="linear"), "versions": VERSIONS, "rtol": 1e-4}
    name = data.draw(st.sampled_from(["spec", "versions", "rtol"]))
    args[name] = data.draw({"spec": bad_spec(), "versions": st.sampled_from(["map", (), ("map", "map")]),
                            "rtol": st.one_of(bad_positive(), st.floats(1.0, 1e6))}[name])
    with raises_naming(name):
        lxt.threshold_versions(**args)


def _summary_and_theory(rng, n_groups, n_sets):
    summary = lx.chain_group_summary(rng.normal(size=(n_groups, n_sets, 20)), rng.normal(size=(n_groups, n_sets, 20)))
    theory = [SimpleNamespace(rms_m=float(a * (1 + 0.05 * rng.normal())), q=float(b))
              for a, b in zip(summary.rms_m, summary.q)]
    return summary, theory


@covers(lxe.plugin_z_test, lxe.PluginZTest)
@budget(15)
@given(n_groups=st.integers(2, 6), n_sets=st.integers(4, 8), split=st.floats(0.5, 8.0),
       allowance=st.floats(0.0, 0.5), seed=seeds)
def test_plugin_z_test_valid(n_groups, n_sets, split, allowance, seed):
    rng = np.random.default_rng(seed)
    summary, theory = _summary_and_theory(rng, n_groups, n_sets)
    P = np.arange(1.0, n_groups + 1.0)
    r = lxe.plugin_z_test(summary, theory, P, np.random.default_rng(seed), allowance=allowance, P_split=split,
                           n_sim=500)
    small = P < split
    assert np.array_equal(r.small, small)
    z_m, z_q = lxe.z_scores(summary, theory)
    assert np.array_equal(r.z_exact, np.concatenate([z_m[~small], z_q]))
    assert r.rel_small.shape == r.excess.shape == (int(small.sum()),)
    assert (r.excess >= 0).all() and (r.excess <= np.abs(z_m[small]) + 1e-12).all()  # the allowance only removes
    assert isinstance(r.calibration, ZCalibration) and r.calibration.n == r.z_exact.size
    assert np.array_equal(r.corr, lxe.z_correlation(summary, ~small))
    k = int((~small).sum())
    assert r.corr_mq.shape == (k,) and np.allclose(r.corr_mq, [r.corr[i, k + g] for i, g in enumerate(np.flatnonzero(~small))])
    again = lxe.plugin_z_test(summary, theory, P, np.random.default_rng(seed), allowance=allowance, P_split=split,
                               n_sim=500)
    assert again.calibration == r.calibration  # the same generator seed gives the same law


@covers(lxe.plugin_z_test)
@budget(25)
@given(data=st.data())
def test_plugin_z_test_invalid(data):
    summary, theory = _summary_and_theory(np.random.default_rng(0), 3, 4)
    args = {"summary": summary, "moments": theory, "P_values": [1.0, 2.0, 3.0],
            "rng": np.random.default_rng(1), "allowance": 0.03, "P_split": 2.0}
    name = data.draw(st.sampled_from(["summary", "moments", "P_values", "rng", "allowance", "P_split", "n_sim"]))
    args[name] = data.draw({"summary": st.sampled_from([None, "summary", {"rms_m": 1}]),
                            "moments": st.just(theory[:2]),
                            "P_values": st.sampled_from([[1.0, 2.0], [1.0, -2.0, 3.0], [1.0, np.nan, 3.0], "abc"]),
                            "n_sim": bad_ints(100), "rng": st.sampled_from([None, 3, "rng"]),
                            "allowance": st.one_of(st.floats(max_value=-1e-9), st.sampled_from([math.nan, None])),
                            "P_split": bad_positive()}[name])
    with raises_naming(name):
        lxe.plugin_z_test(**args)


def _rows(rng, n_P, n_sets=2, n_chains=2, n_draws=40):
    m, q, E = (rng.normal(size=(n_P, n_sets, n_chains, n_draws)) for _ in range(3))
    return lxe.diagnostics_per_group(m, q, E)


@covers(lxe.diagnostics_frame, lxe.diagnostics_summary, lxe.DiagnosticsSummary)
@budget(10)
@given(n_P=st.integers(1, 4), seed=seeds, data=st.data())
def test_diagnostics_frame_and_summary_valid(n_P, seed, data):
    rows = _rows(np.random.default_rng(seed), n_P)
    P = [10.0 * (i + 1) for i in range(n_P)]
    mixed = data.draw(st.lists(st.sampled_from(P), min_size=1, unique=True))
    frame = lxe.diagnostics_frame(rows, P)
    assert frame.shape == (3 * n_P, 6) and list(frame.index.get_level_values("P")) == [int(p) for p in P for _ in "abc"]
    arrays = lxe._diagnostics_arrays(rows)
    assert np.array_equal(frame.xs("q sgn m", level="observable")["R-hat (worst)"].to_numpy(), arrays["rhat"][:, 1])
    assert np.array_equal(frame.xs("energy", level="observable")["bulk ESS"].to_numpy(), np.round(arrays["ess_bulk"][:, 2]))
    s = lxe.diagnostics_summary(rows, P, mixed)
    assert np.array_equal(s.mixed, np.isin(P, mixed))
    assert set(s.worst) == {"rhat_m2", "rhat_q", "rhat_E", "drift", "ess", "ess_chain_q", "ess_chain_E",
                            "rhat_q_bad", "ess_q_bad"}
    assert all(isinstance(v, float) and np.isfinite(v) for v in s.worst.values())
    assert s.worst["rhat_q"] <= s.worst["rhat_q_bad"] and s.worst["ess_q_bad"] <= s.ess_bulk[s.mixed, 1].min()


@covers(lxe.diagnostics_frame, lxe.diagnostics_summary)
@budget(15)
@given(data=st.data())
def test_diagnostics_frame_and_summary_invalid(data):
    rows = _rows(np.random.default_rng(0), 2)
    which = data.draw(st.sampled_from(["frame", "summary"]))
    if which == "frame":
        name = data.draw(st.sampled_from(["rows", "P_values"]))
        args = {"rows": rows, "P_values": [10, 20]}
        args[name] = data.draw({"rows": st.sampled_from([[], [None], ["row"]]), "P_values": st.just([10])}[name])
        with raises_naming(name):
            lxe.diagnostics_frame(**args)
    else:
        name = data.draw(st.sampled_from(["rows", "P_values", "mixed_P"]))
        args = {"rows": rows, "P_values": [10, 20], "mixed_P": [10]}
        args[name] = data.draw({"rows": st.sampled_from([[], [None]]), "P_values": st.sampled_from([[10], "abc"]),
                                "mixed_P": st.sampled_from([[], [30], "abc"])}[name])
        with raises_naming(name):
            lxe.diagnostics_summary(**args)


@covers(lxt.smallest_jump_size, lxt.SmallestJump)
@budget(2)
@given(version=st.sampled_from(VERSIONS), lo=st.integers(4, 5), width=st.integers(1, 3))
def test_smallest_jump_size_valid(version, lo, width):
    r = lxt.smallest_jump_size(version, lo, lo + width, V=2)
    assert r.start == (lo, lo + width) and lo <= r.lo < r.hi <= lo + width and r.hi == r.lo + 1
    assert r.start_valid == bool(not r.start_lo.two_minima and r.start_hi.first_order)
    # each point is first_order_point at its length: its P2 is p2_numerical there (the same call, exactly)
    for point, L in ((r.at_hi, r.hi), (r.start_lo, lo), (r.start_hi, lo + width)):
        assert point.version == version
        assert point.P2 == lt.p2_numerical(cl.ModelSpec(L=L, V=2, kind="linear"), version, rtol=1e-5)


@covers(lxt.smallest_jump_size)
@budget(15)
@given(data=st.data())
def test_smallest_jump_size_invalid(data):
    args = {"version": "map", "lo": 4, "hi": 5, "V": 2}
    name = data.draw(st.sampled_from(["lo", "hi", "V"]))
    args[name] = data.draw({"lo": st.one_of(bad_ints(2), st.just(5), st.just(9)), "hi": bad_ints(3),
                            "V": bad_ints(2)}[name])
    with raises_naming(name):
        lxt.smallest_jump_size(**args)


@covers(lxt.local_minimum_scan, lxt.LocalMinimumScan, lxt.jump_table)
@budget(2)
@given(L=st.integers(4, 6), version=st.sampled_from(VERSIONS), n_P=st.integers(2, 3))
def test_local_minimum_scan_and_jump_table_valid(L, version, n_P):
    spec = cl.ModelSpec(L=L, V=2, kind="linear")
    scan = lxt.local_minimum_scan(spec, version, 2.0, n_P, P_to=50.0)
    assert scan.P.shape == scan.n_minima.shape == (n_P + 3,) and (scan.n_minima >= 0).all()  # none below P1
    assert math.isclose(scan.P[n_P + 1], scan.steepest.P3)
    row = scan.row(L)
    assert row["fewest minima"] <= row["most minima"] and 0 <= row["share below"] <= 1 + 1e-9
    table = lxt.jump_table({version: {L: scan.steepest}}, 2)
    assert table.shape == (1, 8) and table.index[0] == (version, L)
    assert math.isclose(table["jump"].iloc[0], scan.steepest.jump)


@covers(lxt.local_minimum_scan, lxt.jump_table)
@budget(20)
@given(data=st.data())
def test_local_minimum_scan_and_jump_table_invalid(data):
    if data.draw(st.booleans()):
        args = {"spec": cl.ModelSpec(L=4, V=2, kind="linear"), "version": "map", "P_from": 2.0, "n_P": 2, "P_to": 50.0}
        name = data.draw(st.sampled_from(["P_from", "n_P", "P_to"]))
        args[name] = data.draw({"P_from": st.one_of(bad_positive(), st.just(60.0)), "n_P": bad_ints(2),
                                "P_to": bad_positive()}[name])
        with raises_naming(name):
            lxt.local_minimum_scan(**args)
    else:
        name = data.draw(st.sampled_from(["jumps", "V"]))
        args = {"jumps": {"map": {4: None}}, "V": 2}
        args[name] = data.draw({"jumps": st.sampled_from([{}, {"map": {}}, [1], None]), "V": bad_ints(2)}[name])
        with raises_naming(name):
            lxt.jump_table(**args)


@covers(lx.map_agreement, lx.MapAgreement)
@budget(5)
@given(n_sets=st.integers(2, 4), seed=seeds, level=st.floats(0.001, 0.5), P_shift=st.floats(0.0, 0.2))
def test_map_agreement_valid(n_sets, seed, level, P_shift):
    spec = cl.ModelSpec(L=4, V=2, kind="linear")
    P = [2.0, 20.0]
    th = lx.map_predictions(P, spec)
    obs = th[None] * (1 + 0.01 * np.random.default_rng(seed).normal(size=(n_sets, 3, 2)))
    r = lx.map_agreement(P, spec, obs, th, level=level, P_shift=P_shift)
    assert r.tol.shape == r.ratio.shape == (3, 2) and (r.shift >= 0).all()
    assert np.allclose(r.mean, obs.mean(0)) and np.all(r.tol >= r.shift)
    ref = [cl.checks.data_set_tolerance(obs[:, k], scale=np.abs(th[k]) / np.sqrt(P), level=level) for k in range(3)]
    np.testing.assert_allclose(r.tol - r.shift, [x.tol for x in ref], rtol=1e-9)
    assert np.all(lx.map_agreement(P, spec, obs, th, level=level / 2, P_shift=P_shift).tol >= r.tol)
    table = r.table(P)
    assert table.shape == (6, 4) and list(table.index.get_level_values("P")) == P * 3
    assert table.loc[("q", 20.0), "Adam"] == r.mean[1, 1] and table.loc[("loss", 2.0), "ratio"] == r.ratio[2, 0]


@covers(lx.map_agreement)
@budget(20)
@given(data=st.data())
def test_map_agreement_invalid(data):
    spec = cl.ModelSpec(L=4, V=2, kind="linear")
    th = lx.map_predictions([2.0, 20.0], spec)
    args = {"P_values": [2.0, 20.0], "spec": spec, "observed": np.stack([th, th]), "theory": th, "level": 0.01,
            "P_shift": 0.03}
    name = data.draw(st.sampled_from(["P_values", "observed", "theory", "level", "P_shift"]))
    args[name] = data.draw({"P_values": st.sampled_from([[2.0, -1.0], [], "abc"]),
                            "observed": st.sampled_from([th[None], np.zeros((2, 3, 3)), np.full((2, 3, 2), np.nan)]),
                            "theory": st.sampled_from([th[:2], np.full((3, 2), np.inf), 0 * th]),
                            "level": st.one_of(bad_positive(), st.floats(1.0, 10.0)),
                            "P_shift": st.one_of(st.floats(1.0, 10.0), st.floats(max_value=-1e-9))}[name])
    with raises_naming(name):
        lx.map_agreement(**args)


@covers(lx.loss_plateau, lx.LossPlateau)
@budget(30)
@given(n=st.integers(2, 40), seed=seeds, pool=st.floats(0.1, 1.0), width=st.floats(0.01, 0.3))
def test_loss_plateau_valid(n, seed, pool, width):
    rng = np.random.default_rng(seed)
    P = np.cumsum(rng.uniform(0.1, 3.0, size=n)) + 1.0
    loss = np.sort(rng.uniform(0.0, 1.2, size=n))[::-1]  # a non-increasing curve
    r = lx.loss_plateau(P, loss, pool, width=width)
    assert r.largest_step_up <= 0 and r.loss_last == loss[-1]
    on = np.abs(loss - pool) < width
    if on.any():
        assert r.P_from <= r.P_to and math.isclose(r.factor, r.P_to / r.P_from)
    else:
        assert math.isnan(r.P_from) and math.isnan(r.factor)
    assert set(r.row()) == {"plateau from P", "to P", "factor", "loss at the last P"}


@covers(lx.loss_plateau)
@budget(20)
@given(data=st.data())
def test_loss_plateau_invalid(data):
    args = {"P_values": [1.0, 2.0, 4.0], "loss": [1.0, 0.5, 0.4], "pool": 0.5, "width": 0.05}
    name = data.draw(st.sampled_from(["P_values", "loss", "pool", "width"]))
    args[name] = data.draw({"P_values": st.sampled_from([[1.0], [2.0, 1.0, 3.0], [0.0, 1.0, 2.0], "abc"]),
                            "loss": st.sampled_from([[1.0, 0.5], [1.0, np.nan, 0.4]]),
                            "pool": st.one_of(st.floats(max_value=-1e-9), st.just(math.inf)),
                            "width": bad_positive()}[name])
    with raises_naming(name):
        lx.loss_plateau(**args)


def _quenched(rng, n_sets, n_P, rel_m):
    m_ex, q_ex = rng.uniform(0.1, 1.0, (n_sets, n_P)), rng.uniform(0.0, 0.1, (n_sets, n_P))
    obj = rng.normal(size=(n_sets, n_P))
    return lx.QuenchedMap(P=np.arange(1.0, n_P + 1), m=m_ex * (1 + rel_m), q=q_ex, test_loss=np.ones((n_sets, n_P)),
                          objective=obj + abs(rel_m), m_exact=m_ex, q_exact=q_ex, objective_exact=obj,
                          grad_exact=np.full((n_sets, n_P), 1e-9))


@covers(lx.optimisation_error, lx.OptimisationError)
@budget(30)
@given(seed=seeds, n_sets=st.integers(1, 3), n_P=st.integers(1, 4), rel_m=st.floats(-0.1, 0.1))
def test_optimisation_error_valid(seed, n_sets, n_P, rel_m):
    adam = _quenched(np.random.default_rng(seed), n_sets, n_P, rel_m)
    r = lx.optimisation_error(adam)
    assert r.rel.shape == (2, n_sets, n_P) and np.all(r.rel >= 0) and np.all(r.rel[1] == 0)
    assert np.all(r.rel[0] <= abs(rel_m) + 1e-12)  # the floor only shrinks the relative difference
    assert r.largest == r.rel.max() and np.allclose(r.objective_gap, abs(rel_m))
    assert r.table().shape == (4, 1)


@covers(lx.optimisation_error)
@budget(20)
@given(data=st.data())
def test_optimisation_error_invalid(data):
    adam = _quenched(np.random.default_rng(0), 2, 2, 0.01)
    name = data.draw(st.sampled_from(["adam", "floor_m", "floor_q"]))
    args = {"adam": adam}
    args[name] = data.draw(st.sampled_from([None, "adam", {}]) if name == "adam" else bad_positive())
    with raises_naming(name):
        lx.optimisation_error(**args)


@covers(lx.posterior_loss, lx.PosteriorLoss)
@budget(15)
@given(seed=seeds, n_P=st.integers(1, 3), n_sets=st.integers(2, 4), n_draws=st.integers(1, 5))
def test_posterior_loss_valid(seed, n_P, n_sets, n_draws):
    rng = np.random.default_rng(seed)
    spec = cl.ModelSpec(L=4, V=2, kind="linear")
    a1 = rng.uniform(0.1, 2.0, (n_P * n_sets, n_draws))
    samples = {"alpha_1": a1, "alpha_2": a1 * rng.uniform(0, 4, a1.shape), "gamma_1": rng.normal(size=a1.shape),
               "gamma_2": rng.normal(size=a1.shape)}
    P = np.geomspace(2, 200, n_P)
    moments = [SimpleNamespace(loss=float(x)) for x in rng.uniform(0, 1, n_P)]
    minima = [SimpleNamespace(test_loss=float(x)) for x in rng.uniform(0, 1, n_P)]
    r = lx.posterior_loss(samples, P, n_sets, spec, moments, minima)
    assert r.mean.shape == r.se.shape == r.z.shape == (n_P,) and np.all(r.se >= 0)
    # the draws of one data set are averaged first: shuffling draws within each chain changes nothing
    perm = rng.permutation(n_draws)
    shuffled = {k: x[:, perm] for k, x in samples.items()}
    assert np.allclose(lx.posterior_loss(shuffled, P, n_sets, spec, moments, minima).mean, r.mean)
    assert list(r.table().columns) == ["sampled posterior loss", "s.e.", "plug-in integral", "fluct minimum"]


@covers(lx.posterior_loss)
@budget(20)
@given(data=st.data())
def test_posterior_loss_invalid(data):
    spec = cl.ModelSpec(L=4, V=2, kind="linear")
    x = np.ones((4, 3))
    args = {"samples": {k: x for k in ("alpha_1", "alpha_2", "gamma_1", "gamma_2")}, "P_values": [10.0, 20.0],
            "n_sets": 2, "spec": spec, "moments": [SimpleNamespace(loss=0.5)] * 2,
            "minima": [SimpleNamespace(test_loss=0.5)] * 2}
    name = data.draw(st.sampled_from(["P_values", "n_sets", "moments"]))
    args[name] = data.draw({"P_values": st.sampled_from([[], [0.0, 1.0], [np.inf, 1.0]]), "n_sets": bad_ints(2),
                            "moments": st.sampled_from([[], [SimpleNamespace(loss=0.5)]])}[name])
    with raises_naming(name):
        lx.posterior_loss(**args)
