"""Property tests of copylib.analysis.linear_evidence added with the chapter's folded cells (the combined
small-P excess, the false-alarm chance of the |z| < 4 test).

Random valid arguments give output of the documented type and range; each kind of invalid argument
raises ValueError or TypeError naming the parameter.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from copylib.analysis import linear_evidence as lxe

from props_helpers import bad_ints, bad_positive, budget, covers, raises_naming

finite = st.floats(-10, 10, allow_nan=False)


def _z_test(z_m, small, rel):
    z_m, small = np.asarray(z_m, dtype=float), np.asarray(small, dtype=bool)
    return lxe.PluginZTest(small=small, z_m=z_m, z_q=np.zeros_like(z_m), z_exact=z_m[~small],
                           rel_small=np.asarray(rel, dtype=float)[: int(small.sum())],
                           excess=np.zeros(int(small.sum())), corr=np.eye(int((~small).sum())),
                           calibration=None)


@covers(lxe.combined_excess, lxe.CombinedExcess)
@budget(40)
@given(data=st.data(), n_tests=st.integers(1, 3))
def test_combined_excess_valid(data, n_tests):
    tests = []
    for _ in range(n_tests):
        n = data.draw(st.integers(1, 6))
        small = data.draw(st.lists(st.booleans(), min_size=n, max_size=n).filter(any))
        z = data.draw(st.lists(finite, min_size=n, max_size=n))
        rel = data.draw(st.lists(st.floats(-0.5, 0.5), min_size=n, max_size=n))
        tests.append(_z_test(z, small, rel))
    r = lxe.combined_excess(tests)
    assert r.n == r.z.size == r.rel.size == sum(int(t.small.sum()) for t in tests)
    assert 0 <= r.n_pos <= r.n
    assert math.isclose(r.z_combined * math.sqrt(r.n), float(r.z.sum()), rel_tol=1e-9, abs_tol=1e-9)
    assert r.rel_min - 1e-12 <= r.rel_mean <= r.rel_max + 1e-12
    # the order of the tests does not matter for the combined z
    assert math.isclose(lxe.combined_excess(tests[::-1]).z_combined, r.z_combined, rel_tol=1e-9, abs_tol=1e-9)


@covers(lxe.combined_excess)
@budget(10)
@given(bad=st.sampled_from([[], [None], ["z"], [1.0]]))
def test_combined_excess_invalid(bad):
    with raises_naming("tests"):
        lxe.combined_excess(bad)


@covers(lxe.family_false_alarm, lxe.FalseAlarm)
@budget(40)
@given(n_sets=st.integers(2, 200), n_tests=st.integers(1, 10**6), threshold=st.floats(0.5, 8))
def test_family_false_alarm_valid(n_sets, n_tests, threshold):
    r = lxe.family_false_alarm(n_sets, n_tests, threshold=threshold)
    assert r.df == n_sets - 1 and 0 < r.per_test < 1
    assert r.family == min(1.0, n_tests * r.per_test)
    assert lxe.family_false_alarm(n_sets, n_tests, threshold=threshold + 1).per_test < r.per_test


@covers(lxe.family_false_alarm)
@budget(20)
@given(data=st.data())
def test_family_false_alarm_invalid(data):
    args = {"n_sets": 10, "n_tests": 5, "threshold": 4.0}
    name = data.draw(st.sampled_from(sorted(args)))
    args[name] = data.draw({"n_sets": bad_ints(2), "n_tests": bad_ints(1), "threshold": bad_positive()}[name])
    with raises_naming(name):
        lxe.family_false_alarm(**args)


@covers(lxe.moments_table, lxe.z_test_table)
@budget(20)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 4), n_sets=st.integers(4, 6))
def test_moments_and_z_test_tables_valid(seed, n, n_sets):
    from types import SimpleNamespace

    from copylib.analysis.linear import chain_group_summary

    rng = np.random.default_rng(seed)
    s = chain_group_summary(rng.normal(size=(n, n_sets, 10)), rng.normal(size=(n, n_sets, 10)))
    th = [SimpleNamespace(rms_m=float(x), q=float(y), coordinates={"m": float(x)}) for x, y in rng.uniform(0.1, 1, (n, 2))]
    P = list(range(1, n + 1))
    table = lxe.moments_table(P, s, {"plug-in": th, "fluct": th, "mean_field": th}, {"fluct": th, "mean_field": th})
    assert table.shape == (n, 10) and list(table.index) == P
    zt = lxe.plugin_z_test(s, th, P, rng, n_sim=500)
    zt_table = lxe.z_test_table(P, s, th, zt)
    assert zt_table.shape == (n, 8) and np.allclose(zt_table["z(E[q sgn m])"], zt.z_q)


@covers(lxe.moments_table, lxe.z_test_table)
@budget(10)
@given(name=st.sampled_from(["summary", "P_values", "theories", "minima"]))
def test_moments_table_invalid(name):
    from types import SimpleNamespace

    from copylib.analysis.linear import chain_group_summary

    rng = np.random.default_rng(0)
    s = chain_group_summary(rng.normal(size=(2, 4, 6)), rng.normal(size=(2, 4, 6)))
    th = [SimpleNamespace(rms_m=1.0, q=0.1, coordinates={"m": 1.0})] * 2
    args = {"P_values": [1, 2], "summary": s, "theories": {"plug-in": th, "fluct": th, "mean_field": th},
            "minima": {"fluct": th, "mean_field": th}}
    args[name] = {"summary": None, "P_values": [1], "theories": {"plug-in": th}, "minima": {}}[name]
    with raises_naming(name):
        lxe.moments_table(**args)
    if name == "summary":
        with raises_naming(name):
            lxe.z_test_table(args["P_values"], args["summary"], th, None)


@covers(lxe.z_correlation)
@budget(40)
@given(seed=st.integers(0, 2**32 - 1), n_groups=st.integers(1, 5), n_sets=st.integers(2, 12), data=st.data())
def test_z_correlation_valid(seed, n_groups, n_sets, data):
    from copylib.analysis.linear import chain_group_summary

    rng = np.random.default_rng(seed)
    m = rng.normal(size=(n_groups, n_sets, 6))
    s = chain_group_summary(m, m * rng.uniform(-1, 1) + rng.normal(size=m.shape))
    exact_m = np.array(data.draw(st.lists(st.booleans(), min_size=n_groups, max_size=n_groups)))
    corr = lxe.z_correlation(s, exact_m)
    k = int(exact_m.sum())
    assert corr.shape == (k + n_groups, k + n_groups) and np.allclose(corr, corr.T) and np.allclose(np.diag(corr), 1)
    assert np.abs(corr).max() <= 1 and np.linalg.eigvalsh(corr).min() >= -1e-12
    # only a group's own z_m and z_q are correlated: one off-diagonal pair per z_m at most
    assert (np.abs(corr - np.eye(corr.shape[0])) > 0).sum() <= 2 * k
    assert np.allclose(corr[:k, :k], np.eye(k)) and np.allclose(corr[k:, k:], np.eye(n_groups))


@covers(lxe.z_correlation)
@budget(10)
@given(name=st.sampled_from(["summary", "exact_m"]), data=st.data())
def test_z_correlation_invalid(name, data):
    from copylib.analysis.linear import chain_group_summary

    rng = np.random.default_rng(0)
    args = {"summary": chain_group_summary(rng.normal(size=(2, 4, 5)), rng.normal(size=(2, 4, 5))),
            "exact_m": np.array([True, False])}
    args[name] = data.draw({"summary": st.sampled_from([None, "summary", {"m2_sets": 1}]),
                            "exact_m": st.sampled_from([[True], np.array([1, 0]), np.array([True, False, True]), None])
                            }[name])
    with raises_naming(name):
        lxe.z_correlation(**args)
