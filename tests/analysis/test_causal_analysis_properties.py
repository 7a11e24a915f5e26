"""Property tests of copylib.analysis.causal: the chapter's analyses (the bimodality coefficient is
covered in tests/theory/test_causal_theory_properties.py).

Random valid arguments give output of the documented shape and range; each kind of invalid
argument raises ValueError or TypeError naming the parameter.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import copylib as cl
from copylib.analysis import causal as ca

from props_helpers import budget, covers, raises_naming

seeds = st.integers(0, 2**32 - 1)
causal_specs = st.builds(lambda L, V: cl.ModelSpec(L, V, kind="softmax", cyclic=False, causal=True),
                         st.integers(2, 6), st.integers(2, 4))


@covers(ca.gap_prior_variance, ca.GapPriorVariance)
@budget(20)
@given(spec=causal_specs, n=st.integers(3, 200), seed=seeds)
def test_gap_prior_variance_valid(spec, n, seed):
    r = ca.gap_prior_variance(spec, np.random.default_rng(seed), n_draws=n)
    assert 0 < r.stiffness < spec.L and np.isclose(r.unit_norm2, r.stiffness)
    assert r.relative_error >= -1 and r.tolerance > 0


@covers(ca.gap_prior_variance)
@budget(20)
@given(name=st.sampled_from(["spec", "rng", "n_draws"]))
def test_gap_prior_variance_invalid(name):
    args = {"spec": cl.ModelSpec(4, 3, kind="softmax", cyclic=False, causal=True),
            "rng": np.random.default_rng(0), "n_draws": 10}
    args[name] = {"spec": cl.ModelSpec(4, 3, kind="softmax"), "rng": 0, "n_draws": 2}[name]
    with raises_naming(name):
        ca.gap_prior_variance(**args)


@covers(ca.plugin_agreement, ca.PluginAgreement)
@budget(10)
@given(spec=causal_specs, P=st.integers(1, 50), n_sets=st.integers(2, 4), Delta=st.floats(0.5, 3.0), seed=seeds)
def test_plugin_agreement_valid(spec, P, n_sets, Delta, seed):
    r = ca.plugin_agreement(spec, P, n_sets, np.random.default_rng(seed), Delta=Delta)
    assert np.isfinite([r.exact_mean, r.exact_se, r.exact_sd, r.plugin, r.relative_difference]).all()
    assert r.exact_sd >= 0 and r.relative_difference >= 0


@covers(ca.plugin_agreement)
@budget(20)
@given(name=st.sampled_from(["spec", "P", "n_sets", "rng", "Delta"]))
def test_plugin_agreement_invalid(name):
    args = {"spec": cl.ModelSpec(4, 3, kind="softmax", cyclic=False, causal=True), "P": 10, "n_sets": 2,
            "rng": np.random.default_rng(0), "Delta": 2.0}
    args[name] = {"spec": cl.ModelSpec(4, 3, kind="linear", cyclic=False, causal=True), "P": 0, "n_sets": 1,
                  "rng": None, "Delta": -1.0}[name]
    with raises_naming(name):
        ca.plugin_agreement(**args)


@covers(ca.coexistence_scan, ca.CoexistenceScan)
@budget(10)
@given(Ls=st.lists(st.integers(2, 10), min_size=1, max_size=3, unique=True), V=st.integers(2, 4))
def test_coexistence_scan_valid(Ls, V):
    r = ca.coexistence_scan(sorted(Ls), V, P_range=(10.0, 1e3), n_scan=20)
    assert r.L == tuple(sorted(Ls)) and len(r.transitions) == len(Ls)
    assert (r.first_L is None) == all(t is None for t in r.transitions)
    assert r.last_L_without is None or r.last_L_without < r.first_L


@covers(ca.coexistence_scan)
@budget(20)
@given(name=st.sampled_from(["L_values", "V"]), bad=st.integers(0, 2))
def test_coexistence_scan_invalid(name, bad):
    args = {"L_values": (4, 6), "V": 3}
    args[name] = {"L_values": [(1, 4), (6, 4), ()][bad], "V": [1, 0, 1.5][bad]}[name]
    with raises_naming(name):
        ca.coexistence_scan(**args)


@covers(ca.start_agreement, ca.StartAgreement)
@budget(30)
@given(n_sets=st.integers(2, 4), n_P=st.integers(1, 6), seed=seeds)
def test_start_agreement_valid(n_sets, n_P, seed):
    rng = np.random.default_rng(seed)
    c = rng.uniform(size=(n_sets, n_P, 2))
    r = ca.start_agreement(c, rng.uniform(size=n_P))
    assert 0 <= r.start_gap <= 1 and 0 <= r.deviation <= 1
    same = ca.start_agreement(np.repeat(c[..., :1], 2, axis=-1), c[0, :, 0])
    assert same.start_gap == 0
    assert same.deviation == np.abs(c[..., 0] - c[0, :, 0]).max()


@covers(ca.start_agreement)
@budget(20)
@given(name=st.sampled_from(["c", "c_theory"]), bad=st.integers(0, 2))
def test_start_agreement_invalid(name, bad):
    args = {"c": np.zeros((2, 3, 2)), "c_theory": np.zeros(3)}
    args[name] = {"c": [np.zeros((1, 3, 2)), np.zeros((2, 3, 3)), np.full((2, 3, 2), np.nan)][bad],
                  "c_theory": [np.zeros(2), "x", np.full(3, np.inf)][bad]}[name]
    with raises_naming(name):
        ca.start_agreement(**args)


@covers(ca.sampled_copy_weights, ca.SampledCopyWeights)
@budget(30)
@given(n_P=st.integers(1, 4), n_chains=st.integers(2, 5), n_draws=st.integers(1, 6), n_rows=st.integers(1, 4),
       seed=seeds)
def test_sampled_copy_weights_valid(n_P, n_chains, n_draws, n_rows, seed):
    c_rows = np.random.default_rng(seed).uniform(size=(n_P, 2, n_chains, n_draws, n_rows))
    r = ca.sampled_copy_weights(c_rows)
    assert r.mean.shape == r.se.shape == (n_P, 2)
    assert r.mean_all.shape == r.se_all.shape == r.z_starts.shape == r.bimodality.shape == (n_P,)
    assert r.row_chain_means.shape == (n_P, 2 * n_chains, n_rows)
    assert ((r.mean >= 0) & (r.mean <= 1)).all() and (r.se >= 0).all() and (r.z_starts >= 0).all()
    np.testing.assert_allclose(r.mean_all, r.mean.mean(-1), rtol=1e-12)


@covers(ca.sampled_copy_weights)
@budget(20)
@given(bad=st.sampled_from([np.zeros((2, 3, 4, 5)), np.zeros((2, 3, 4, 5, 1)), np.zeros((2, 2, 1, 5, 1)),
                            np.full((2, 2, 2, 2, 2), np.nan), "c"]))
def test_sampled_copy_weights_invalid(bad):
    with raises_naming("c_rows"):
        ca.sampled_copy_weights(bad)


@covers(ca.row_switch_order, ca.RowSwitchOrder)
@budget(20)
@given(n_P=st.integers(2, 5), n_chains=st.integers(1, 4), n_rows=st.integers(2, 6), n_groups=st.integers(2, 3),
       seed=seeds)
def test_row_switch_order_valid(n_P, n_chains, n_rows, n_groups, seed):
    rng = np.random.default_rng(seed)
    P = np.cumsum(rng.uniform(1.0, 50.0, size=n_P)) + 10
    y = np.linspace(0, 1, n_P)[:, None, None] + 0.01 * rng.normal(size=(n_P, n_chains, n_rows))
    n_groups = min(n_groups, n_rows)
    r = ca.row_switch_order(P, y, rng, n_groups=n_groups, n_boot=5)
    assert r.P_half.shape == (n_rows,) and r.group_half.shape == (n_groups,)
    assert ((r.P_half >= P[0]) & (r.P_half <= P[-1])).all() and 0 <= r.ordered_fraction <= 1


@covers(ca.row_switch_order)
@budget(20)
@given(name=st.sampled_from(["row_chain_means", "rng", "n_groups", "n_boot"]))
def test_row_switch_order_invalid(name):
    P = np.array([1.0, 2.0, 4.0])
    args = {"P": P, "row_chain_means": np.linspace(0, 1, 3)[:, None, None] * np.ones((3, 2, 3)),
            "rng": np.random.default_rng(0), "n_groups": 2, "n_boot": 3}
    args[name] = {"row_chain_means": np.zeros((3, 2)), "rng": 1, "n_groups": 4, "n_boot": 0}[name]
    with raises_naming(name):
        ca.row_switch_order(**args)


@covers(ca.no_jump_tests, ca.NoJumpTests)
@budget(15)
@given(n_sets=st.integers(1, 3), n_P=st.integers(2, 4), n_chains=st.integers(2, 4), n_draws=st.integers(8, 20),
       seed=seeds)
def test_no_jump_tests_valid(n_sets, n_P, n_chains, n_draws, seed):
    rng = np.random.default_rng(seed)
    c = rng.uniform(size=(n_sets, n_P, 2, n_chains, n_draws))
    r = ca.no_jump_tests(np.arange(1, n_P + 1) * 100, c)
    assert set(r.verdicts) == set(ca.NO_JUMP_TESTS) and all(isinstance(v, bool) for v in r.verdicts.values())
    assert r.mean.shape == r.bimodality.shape == (n_sets, n_P)
    assert r.z_starts.shape == r.rhat.shape == r.ess_bulk.shape == r.drift_z.shape == (n_P,)
    assert (r.z_starts >= 0).all() and ((r.bimodality > 0) & (r.bimodality <= 1 + 1e-12)).all()
    assert isinstance(r.mixed(1.1, 10), bool)


@covers(ca.no_jump_tests)
@budget(20)
@given(name=st.sampled_from(["P", "c", "z_max", "bimodality_max"]), bad=st.integers(0, 1))
def test_no_jump_tests_invalid(name, bad):
    args = {"P": [1, 2], "c": np.zeros((1, 2, 2, 2, 8)), "z_max": 4.0, "bimodality_max": 0.5}
    args[name] = {"P": [[2, 1], [1]][bad], "c": [np.zeros((1, 2, 2, 1, 8)), np.full((1, 2, 2, 2, 8), np.nan)][bad],
                  "z_max": [0.0, -1.0][bad], "bimodality_max": [0.3, 1.0][bad]}[name]
    with raises_naming(name):
        ca.no_jump_tests(**args)


@covers(ca.sample_two_start_copy_weights, ca.TwoStartDraws)
@budget(5)
@given(causal=st.booleans(), n_P=st.integers(1, 2), n_sets=st.integers(1, 2), n_chains=st.integers(1, 2),
       seed=st.integers(0, 100))
def test_sample_two_start_copy_weights_valid(causal, n_P, n_sets, n_chains, seed):
    spec = cl.ModelSpec(4, 2, kind="softmax", cyclic=not causal, causal=causal)
    d = ca.sample_two_start_copy_weights(list(range(3, 3 + n_P)), spec, range(n_sets), n_chains, 4,
                                         n_warmup=1, thin=2, seed=seed)
    assert d.c.shape == (n_sets, n_P, 2, n_chains, 2) and d.accept_rate.shape == (n_sets, n_P, 2, n_chains)
    assert ((d.c >= 0) & (d.c <= 1)).all() and ((d.accept_rate >= 0) & (d.accept_rate <= 1)).all()


@covers(ca.sample_two_start_copy_weights)
@budget(20)
@given(name=st.sampled_from(["spec", "P", "data_seeds", "n_chains", "seed", "planted_gap"]), bad=st.integers(0, 1))
def test_sample_two_start_copy_weights_invalid(name, bad):
    args = {"P": [3], "spec": cl.ModelSpec(4, 2, kind="softmax"), "data_seeds": (1,), "n_chains": 1, "n_steps": 2,
            "n_warmup": 0, "thin": 1, "seed": 0, "planted_gap": 2.0}
    args[name] = {"spec": [cl.ModelSpec(4, 2, kind="linear"), cl.ModelSpec(4, 2, kind="softmax", cyclic=False)][bad],
                  "P": [[3, 3], [0]][bad], "data_seeds": [(), 3][bad], "n_chains": [0, 1.5][bad],
                  "seed": [-1, "x"][bad], "planted_gap": [0.0, -1.0][bad]}[name]
    with raises_naming(name):
        ca.sample_two_start_copy_weights(**args)
