"""Property tests: sampling (Langevin, posterior samplers), training (Adam/MAP) and
the linear-attention experiment helpers.

Sizes and step counts are tiny: these tests check shapes, finiteness and argument
checking, not statistical accuracy (the unit tests do that).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import copylib as cl
from copylib.analysis import linear as lx
from copylib.analysis import linear_evidence as lxe
from copylib.inference import free_energy as fe
from copylib.inference import langevin as sm
from copylib.inference import map_training as tr
from copylib.inference import tempering as pt
from copylib.posterior import targets as tg
from copylib.theory import linear_marginal as lm

from props_helpers import (
    assert_finite,
    bad_ints,
    bad_positive,
    bad_spec,
    budget,
    cooccurrence_of,
    covers,
    not_array,
    not_bool,
    raises_naming,
    specs,
    with_nonfinite,
)

seeds = st.integers(0, 2**32 - 1)
tiny_specs = specs(L=st.integers(2, 4), V=st.integers(2, 3))


pytestmark = pytest.mark.usefixtures("one_thread")  # tiny tensors: torch on one thread (tests/conftest.py)


def _gaussian(p):
    x = p["x"] if isinstance(p, dict) else p[0]
    return 0.5 * (x**2).sum(-1)


# --------------------------------------------------------------------------
# langevin
# --------------------------------------------------------------------------


@covers(sm.langevin, sm.SamplingResult)
@budget(15)
@given(R=st.integers(1, 4), D=st.integers(1, 3), n_steps=st.integers(1, 12), thin=st.integers(1, 3),
       n_warmup=st.integers(0, 5), metropolis=st.booleans(), as_tuple=st.booleans(), seed=seeds,
       step=st.floats(0.01, 0.5))
def test_langevin_valid(R, D, n_steps, thin, n_warmup, metropolis, as_tuple, seed, step):
    thin = min(thin, n_steps)
    init = (np.zeros((R, D)),) if as_tuple else {"x": np.zeros((R, D))}
    res = sm.langevin(_gaussian, init, n_steps, step, torch.Generator().manual_seed(seed % 2**63),
                      n_warmup=n_warmup, thin=thin, metropolis=metropolis)
    n_kept = n_steps // thin
    key = "0" if as_tuple else "x"
    assert res.samples[key].shape == (R, n_kept, D) and res.energy.shape == (R, n_kept)
    assert res.accept_rate.shape == res.step_size.shape == (R,)
    assert ((res.accept_rate >= 0) & (res.accept_rate <= 1)).all() and (res.step_size > 0).all()
    if not metropolis:
        assert (res.accept_rate == 1).all()
    final = res.final_params[0] if as_tuple else res.final_params["x"]
    assert final.shape == (R, D) and isinstance(res.final_params, tuple if as_tuple else dict)
    assert res.scales[key].shape == (R,)
    for a in (res.samples[key], res.energy, final):
        assert_finite(a)


@covers(sm.langevin, sm.SamplingResult)
@budget(15)
@given(R=st.integers(1, 4), D=st.integers(1, 3), n_steps=st.integers(1, 10), n_warmup=st.integers(0, 5),
       n_leapfrog=st.integers(1, 5), seed=seeds, step=st.floats(0.01, 0.5), bad=bad_ints(1))
def test_langevin_hmc_valid_and_n_leapfrog_checked(R, D, n_steps, n_warmup, n_leapfrog, seed, step, bad):
    """Any n_leapfrog >= 1 gives finite draws and acceptance rates in [0, 1]; a bad one, or HMC without
    the Metropolis test, is named."""
    gen = torch.Generator().manual_seed(seed % 2**63)
    res = sm.langevin(_gaussian, {"x": np.zeros((R, D))}, n_steps, step, gen, n_warmup=n_warmup,
                      n_leapfrog=n_leapfrog, target_accept=0.8)
    assert res.samples["x"].shape == (R, n_steps, D) and res.metropolis
    assert ((res.accept_rate >= 0) & (res.accept_rate <= 1)).all() and (res.step_size > 0).all()
    assert_finite(res.samples["x"])
    with raises_naming("n_leapfrog"):
        sm.langevin(_gaussian, {"x": np.zeros((R, D))}, 2, step, gen, n_warmup=0, n_leapfrog=bad)
    if n_leapfrog > 1:
        with raises_naming("n_leapfrog"):
            sm.langevin(_gaussian, {"x": np.zeros((R, D))}, 2, step, gen, n_warmup=0, n_leapfrog=n_leapfrog,
                        metropolis=False)


@covers(pt.parallel_tempering, pt.TemperingResult, pt.check_ladder)
@budget(10)
@given(K=st.integers(1, 4), n_runs=st.integers(1, 3), D=st.integers(1, 3), n_steps=st.integers(1, 8), seed=seeds)
def test_tempering_valid(K, n_runs, D, n_steps, seed):
    betas = np.linspace(0, 1, K + 1)[1:] if K > 1 else [1.0]
    res = pt.parallel_tempering(lambda p: (_gaussian(p), 0.1 * (p["x"] ** 2).sum(-1)), {"x": np.zeros((n_runs, D))},
                                betas, n_steps, 0.3, torch.Generator().manual_seed(seed % 2**63), n_warmup=2)
    assert res.samples["x"].shape == (K, n_runs, n_steps, D) and res.likelihood.shape == (K, n_runs, n_steps)
    assert res.swap_rate.shape == (K - 1, n_runs) and ((0 <= res.swap_rate) & (res.swap_rate <= 1)).all()
    assert (res.round_trips >= 0).all() and np.array_equal(pt.check_ladder(betas), res.betas)
    assert_finite(res.samples["x"])


@covers(fe.LadderFit, fe.ladder_log_partition, fe._ladder_weights)
@budget(15)
@given(K=st.integers(2, 4), n=st.integers(2, 20), seed=seeds)
def test_ladder_fit_is_normalised_and_log_partition_decreases(K, n, seed):
    # U_data >= 0, so Z(beta) = E_prior[exp(-beta U_data)] cannot grow with beta
    u = np.random.default_rng(seed).exponential(size=(K, n))
    betas = np.linspace(0, 1, K)
    log_z = fe.ladder_log_partition(u, betas, np.linspace(0, 1, 7))
    assert log_z[0] == pytest.approx(0.0, abs=1e-9) and (np.diff(log_z) <= 1e-9).all()
    w = fe._ladder_weights(u, betas, 0.5)
    assert w.shape == (K * n,) and w.sum() == pytest.approx(1.0) and (w >= 0).all()


@covers(pt.check_ladder)
@given(betas=st.lists(st.floats(-2, 2), min_size=1, max_size=5))
@budget(20)
def test_ladder_check_accepts_exactly_increasing_ladders_ending_at_one(betas):
    b = np.array(betas)
    ok = bool((b >= 0).all() and (b <= 1).all() and (np.diff(b) > 0).all() and b[-1] == 1)
    if ok:
        assert np.array_equal(pt.check_ladder(b), b)
    else:
        with raises_naming("betas"):
            pt.check_ladder(b)


def _langevin_args():
    return dict(energy=_gaussian, init={"x": np.zeros((2, 2))}, n_steps=5, step_size=0.1,
                generator=torch.Generator().manual_seed(0), n_warmup=2, thin=1, metropolis=True,
                target_accept=0.57, record=None, scales=None, adapt_scales=False, min_accept=0.02,
                max_rejections=1000)


@covers(sm.langevin)
@budget(80)
@given(data=st.data())
def test_langevin_invalid(data):
    args = _langevin_args()
    name = data.draw(st.sampled_from(sorted(args)))
    bad = {
        "energy": st.sampled_from([None, 1.0, "f"]),
        "init": st.sampled_from([{}, (), None, 3.0, {"x": np.zeros((2, 2)), "y": np.zeros((3, 2))},
                                 {"x": np.zeros(())}, {"x": "abc"}]),
        "n_steps": bad_ints(1),
        "step_size": st.sampled_from([0.0, -0.1, math.nan, math.inf, np.full(3, 0.1), np.ones((2, 2)), "x", None]),
        "generator": st.sampled_from([None, 0, np.random.default_rng(0)]),
        "n_warmup": bad_ints(0),
        "thin": st.one_of(bad_ints(1), st.just(6)),  # 6 > n_steps: no kept draw
        "metropolis": not_bool(),
        "target_accept": st.sampled_from([0.0, 1.0, 1.5, -0.2, math.nan, True, "0.5"]),
        "record": st.sampled_from(["x", 1]),
        "scales": st.sampled_from([0.0, -1.0, math.nan, {"y": 1.0}, {"x": -1.0}, "s", [1.0]]),
        "adapt_scales": st.one_of(not_bool(), st.just(True)),  # True needs n_warmup >= 160
        "min_accept": st.sampled_from([1.0, -0.1, math.nan, True]),
        "max_rejections": bad_ints(1),
    }[name]
    args[name] = data.draw(bad)
    with raises_naming(name):
        sm.langevin(**args)


# --------------------------------------------------------------------------
# training
# --------------------------------------------------------------------------


@covers(tg.map_objective, tr.train_map, tr.TrainingResult)
@budget(8)
@given(spec=tiny_specs, R=st.integers(1, 3), n_steps=st.integers(1, 6), n_records=st.integers(1, 4),
       planted=st.booleans(), seed=seeds)
def test_train_map_valid(spec, R, n_steps, n_records, planted, seed):
    C = np.stack([cooccurrence_of(3, spec, seed + r) for r in range(R)])
    rng = np.random.default_rng(seed)
    init = {"g": rng.normal(size=(R, spec.L, spec.L)), "b": np.zeros(R), "W": np.zeros((R, spec.V, spec.V))}
    res = tr.train_map(C, spec, torch.Generator().manual_seed(seed % 2**63), init=init if planted else None,
                       n_steps=n_steps, n_records=n_records)
    n_rec = res.steps.size
    assert 1 <= n_rec <= n_records + 1 and res.steps[-1] == n_steps
    assert res.train_loss.shape == res.test_loss.shape == (R, n_rec) and res.objective.shape == (R,)
    assert res.g.shape == res.A.shape == (R, spec.L, spec.L) and res.b.shape == (R,)
    assert res.W.shape == (R, spec.V, spec.V)
    for a in (res.train_loss, res.test_loss, res.objective, res.g, res.W, res.A):
        assert_finite(a)
    U = tg.map_objective(torch.as_tensor(res.g), torch.as_tensor(res.b), torch.as_tensor(res.W),
                         torch.as_tensor(C), spec)
    assert isinstance(U, torch.Tensor) and U.shape == (R,)
    np.testing.assert_allclose(U.numpy(), res.objective, rtol=1e-12)


@covers(tr.train_map)
@budget(60)
@given(data=st.data())
def test_train_map_invalid(data):
    spec = cl.ModelSpec(L=3, V=2)
    C = np.stack([cooccurrence_of(3, spec, 0)] * 2)
    args = dict(C=C, spec=spec, generator=torch.Generator().manual_seed(0), init=None, init_scale=0.1, n_steps=2,
                lr=0.05, lr_final=1e-3, n_records=2)
    name = data.draw(st.sampled_from(sorted(args)))
    if name == "C":
        args[name] = data.draw(st.sampled_from([C[0], np.zeros((2, 3, 3, 3, 3)), C * math.nan, "C"]))
    elif name == "spec":
        args[name] = data.draw(bad_spec())
    elif name == "generator":
        args[name] = data.draw(st.sampled_from([None, 0, np.random.default_rng(0)]))
    elif name == "init":
        args[name] = data.draw(st.sampled_from([{"g": 0}, {"g": np.zeros((2, 3, 3)), "b": np.zeros(2),
                                                           "W": np.zeros((2, 3, 3))}, "prior"]))
    elif name == "init_scale":
        args[name] = data.draw(st.sampled_from([0.0, -1.0, math.nan, np.full(3, 0.1), "x"]))
    elif name in ("n_steps", "n_records"):
        args[name] = data.draw(bad_ints(1))
    else:
        args[name] = data.draw(bad_positive())
    with raises_naming(name):
        tr.train_map(**args)


@covers(tr.lowest_objective, tr.nested_cooccurrence)
@budget(20)
@given(objective=st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=10), data=st.data(), spec=tiny_specs,
       P=st.lists(st.integers(1, 6), min_size=1, max_size=3), seed=seeds)
def test_lowest_objective_and_nested_valid(objective, data, spec, P, seed):
    groups = np.asarray(data.draw(st.lists(st.integers(0, 2), min_size=len(objective), max_size=len(objective))))
    idx = tr.lowest_objective(objective, groups)
    obj = np.asarray(objective)
    assert idx.shape == (np.unique(groups).size,)
    for i, g in zip(idx, np.unique(groups)):
        assert groups[i] == g and obj[i] == obj[groups == g].min()
    C = tr.nested_cooccurrence(P, spec, np.random.default_rng(seed))
    assert C.shape == (len(P), spec.L, spec.L, spec.V, spec.V)
    np.testing.assert_array_equal(cl.sample_size(C), np.asarray(P, dtype=float))


@covers(tr.map_sweep, tr.SweepResult)
@budget(4)
@given(spec=tiny_specs, P=st.lists(st.integers(1, 6), min_size=1, max_size=2, unique=True), seed=seeds)
def test_map_sweep_valid(spec, P, seed):
    r = tr.map_sweep(P, spec, np.random.default_rng(seed), init_scales=(0.1, 1.0), n_steps=3, n_records=1)
    n = len(P)
    assert r.P.shape == r.train_loss.shape == r.test_loss.shape == r.kept.shape == (n,)
    assert r.A.shape == (n, spec.L, spec.L) and r.W.shape == (n, spec.V, spec.V)
    for a in (r.train_loss, r.test_loss, r.A, r.W):
        assert_finite(a)


@covers(tr.lowest_objective, tr.nested_cooccurrence, tr.map_sweep)
@budget(50)
@given(data=st.data())
def test_training_helpers_invalid(data):
    spec = cl.ModelSpec(L=3, V=2)
    which = data.draw(st.sampled_from(["lowest_objective", "nested_cooccurrence", "map_sweep"]))
    if which == "lowest_objective":
        args = {"objective": np.zeros(3), "groups": np.zeros(3)}
        name = data.draw(st.sampled_from(["objective", "groups"]))
        args[name] = data.draw(st.sampled_from([np.zeros(2), np.zeros((3, 1))]) if name == "groups" else
                               st.sampled_from([np.zeros(2), np.array([0.0, math.nan, 1.0]), "abc"]))
        name = "objective" if name == "groups" else name  # a length mismatch names both
    else:
        args = {"P_values": [2, 4], "spec": spec, "rng": np.random.default_rng(0)}
        if which == "map_sweep":
            args.update(init_scales=(0.1,), n_steps=2)
        name = data.draw(st.sampled_from(sorted(k for k in args if k != "n_steps")))
        args[name] = data.draw({
            "P_values": st.sampled_from([[], [[2, 3]], [0, 2], [2.5], [True], ["2"]]),
            "spec": bad_spec(),
            "rng": st.sampled_from([None, 0, torch.Generator()]),
            "init_scales": st.sampled_from([(), (0.0,), (-1.0, 1.0), (math.nan,), [[1.0]], "abc"]),
        }[name])
    with raises_naming(name):
        getattr(tr, which)(**args)


# --------------------------------------------------------------------------
# linear_experiments
# --------------------------------------------------------------------------


@covers(lm.integrated_moments, lm.IntegratedMoments)
@budget(6)
@given(spec=specs("linear", L=st.integers(2, 8), V=st.integers(2, 4), cyclic=st.just(True)),
       P=st.floats(0.5, 200), version=st.sampled_from(["mean_field", "fluct", "map"]))
def test_integrated_moments_valid(spec, P, version):
    r = lm.integrated_moments(P, spec, version, n_m=41, n_q=21)
    assert isinstance(r, lm.IntegratedMoments) and r.P == P and r.version == version
    for name in ("rms_m", "abs_m", "q", "var_m", "binder"):
        assert math.isfinite(getattr(r, name)), name
    # Jensen: E|m| <= sqrt(E m^2); Binder cumulant of a symmetric law <= 2/3
    assert 0 <= r.abs_m <= r.rms_m * (1 + 1e-12) and r.var_m == pytest.approx(r.rms_m**2, rel=1e-12)
    assert r.binder <= 2 / 3 + 1e-12


@covers(lm.plugin_posterior_moments, lm.PluginMoments)
@budget(6)
@given(spec=specs("linear", L=st.integers(4, 8), V=st.integers(2, 4), cyclic=st.just(True)),
       P=st.floats(0.5, 200))
def test_plugin_posterior_moments_valid(spec, P):
    r = lm.plugin_posterior_moments(P, spec, n_m=81, n_q=21, edge_tol=1e-5)
    assert isinstance(r, lm.PluginMoments) and r.P == P
    for name in ("rms_m", "abs_m", "q", "var_m", "var_q", "binder", "rho_row", "rho_rest", "edge_mass"):
        assert math.isfinite(getattr(r, name)), name
    assert 0 <= r.abs_m <= r.rms_m * (1 + 1e-12) and r.var_m == pytest.approx(r.rms_m**2, rel=1e-12)
    assert r.binder <= 2 / 3 + 1e-12 and 0 <= r.edge_mass <= 1e-5 and r.var_q >= 0
    # the data action increases with each shell's weight, so the posterior can only shrink the
    # shells (E r2 <= prior mean); 1e-6 allows for the quadrature error of these coarse grids
    assert 0 < r.rho_row <= 1 + 1e-6 and 0 < r.rho_rest <= 1 + 1e-6


@covers(lm.plugin_posterior_moments)
@budget(30)
@given(data=st.data())
def test_plugin_posterior_moments_invalid(data):
    spec = cl.ModelSpec(L=4, V=2, kind="linear")
    args = dict(P=10.0, spec=spec, n_m=11, n_q=11, n_row=7, n_rest=7, m_max=2.0, q_max=0.5, max_regrid=2,
                edge_tol=1e-3)
    name = data.draw(st.sampled_from(sorted(args)))
    if name == "spec":
        value = data.draw(st.one_of(bad_spec(), st.sampled_from([cl.ModelSpec(L=4, V=2, kind="softmax"),
                                                                 cl.ModelSpec(L=3, V=2, kind="linear")])))
    elif name in ("n_m", "n_q", "n_row", "n_rest"):
        value = data.draw(bad_ints(5))
    elif name == "max_regrid":
        value = data.draw(bad_ints(0))
    elif name in ("m_max", "q_max"):
        value = data.draw(bad_positive())
    elif name == "edge_tol":
        value = data.draw(st.sampled_from([0.0, -1.0, 1.0, 2.0, math.nan, "x"]))
    else:
        value = data.draw(st.sampled_from([0.0, -1.0, math.nan, math.inf, "10", None, True]))
    args[name] = value
    with raises_naming(name):
        lm.plugin_posterior_moments(**args)


@covers(lx.chain_group_summary, lx.GroupSummary, lx.onset_from_squares)
@budget(20)
@given(G=st.integers(1, 3), R=st.integers(2, 4), n=st.integers(4, 20), seed=seeds)
def test_chain_summary_and_onset_valid(G, R, n, seed):
    rng = np.random.default_rng(seed)
    m, q = rng.normal(size=(G, R, n)), rng.normal(size=(G, R, n))
    s = lx.chain_group_summary(m, q)
    for name in ("rms_m", "rms_m_se", "q", "q_se", "var_m", "binder"):
        assert getattr(s, name).shape == (G,)
        assert_finite(getattr(s, name), name)
    assert (s.rms_m_se >= 0).all() and (s.q_se >= 0).all() and s.m2_sets.shape == s.q_sets.shape == (G, R)
    assert s.n_sets == R and np.allclose(s.var_m, s.m2_sets.mean(1)) and np.allclose(s.q, s.q_sets.mean(1))
    P = np.cumsum(rng.uniform(0.5, 2, size=6))
    mm = np.r_[0.0, 0.0, np.sqrt(np.cumsum(rng.uniform(0.1, 1, size=4)))]
    est = lx.onset_from_squares(P, mm)
    # documented: clipped to the bracket [last P with |m| <= tol, first P with |m| > tol]
    assert isinstance(est, float) and P[1] <= est <= P[2]


@covers(lm.integrated_moments, lx.chain_group_summary, lx.onset_from_squares, lx.map_sweep_datasets)
@budget(60)
@given(data=st.data())
def test_linear_experiments_invalid(data):
    spec = cl.ModelSpec(L=3, V=2, kind="linear")
    which = data.draw(st.sampled_from(["integrated_moments", "chain_group_summary", "onset_from_squares",
                                       "map_sweep_datasets"]))
    args = {
        "integrated_moments": dict(P=10.0, spec=spec, version="mean_field", n_m=11, n_q=11, m_max=2.0, q_widths=3.0),
        "chain_group_summary": dict(m=np.zeros((1, 2, 4)), q=np.zeros((1, 2, 4))),
        "onset_from_squares": dict(P=np.arange(1.0, 5.0), m=np.array([0.0, 0.5, 1.0, 1.5]), tol=1e-3),
        "map_sweep_datasets": dict(P_values=[2, 3], spec=spec, seeds=(1,), init_scales=(0.1,), n_steps=2),
    }[which]
    name = data.draw(st.sampled_from(sorted(k for k in args if k != "n_steps")))
    if name == "spec":
        # the linear theory behind integrated_moments needs kind="linear"; Adam does not
        softmax = st.just(cl.ModelSpec(L=3, V=2, kind="softmax"))
        value = data.draw(st.one_of(bad_spec(), softmax) if which == "integrated_moments" else bad_spec())
    elif name == "version":
        value = data.draw(st.sampled_from(["bayes", None]))
    elif name in ("n_m", "n_q"):
        value = data.draw(bad_ints(3))
    elif name in ("m_max", "q_widths"):
        value = data.draw(bad_positive())
    elif name == "tol":
        value = data.draw(st.sampled_from([-1.0, math.nan, "x"]))
    elif name == "seeds":
        value = data.draw(st.sampled_from([(), 3, "12", (1.5,), (-1,)]))
    elif name == "init_scales":
        value = data.draw(st.sampled_from([(), (0.0,), (math.nan,), "abc"]))
    elif name == "P_values":
        value = data.draw(st.sampled_from([[0, 2], [2.5], []]))
    elif name == "P" and which == "integrated_moments":
        value = data.draw(st.sampled_from([0.0, -1.0, math.nan, "10", None, True]))
    else:
        shape_bad = {"m": np.zeros((1, 1, 4)), "q": np.zeros((1, 2, 3)), "P": np.array([1.0, 3.0, 2.0, 4.0])}
        case = data.draw(st.sampled_from(["nonfinite", "kind", "shape"]))
        if case == "shape":
            value = shape_bad[name] if which != "onset_from_squares" or name == "P" else np.zeros(3)
        elif case == "nonfinite":
            value = with_nonfinite(args[name], data)
        else:
            value = data.draw(not_array())
    args[name] = value
    with raises_naming(name):
        getattr(lm if which == "integrated_moments" else lx, which)(**args)


@covers(lx.map_sweep_datasets, lx.MapSweepSets)
@budget(3)
@given(spec=specs("linear", L=st.integers(2, 4), V=st.integers(2, 3), cyclic=st.just(True)),
       P=st.lists(st.integers(1, 5), min_size=1, max_size=2, unique=True), n_sets=st.integers(1, 2), seed=seeds)
def test_map_sweep_datasets_valid(spec, P, n_sets, seed):
    r = lx.map_sweep_datasets(P, spec, [seed + i for i in range(n_sets)], init_scales=(0.1, 1.0), n_steps=3,
                              n_records=1)
    for name in ("m", "q", "test_loss", "objective"):
        assert getattr(r, name).shape == (n_sets, len(P))
        assert_finite(getattr(r, name), name)
    assert (r.m >= 0).all()  # gauge fixed


@covers(lx.map_sweep_quenched, lx.QuenchedMap)
@budget(60)
@given(data=st.data())
def test_map_sweep_quenched_valid_and_invalid(data):
    spec = cl.ModelSpec(L=3, V=2, kind="linear")
    args = dict(P_values=[2, 3], spec=spec, seeds=(1,), init_scales=(0.1,), gtol=1e-8, max_iter=50, n_steps=3)
    r = lx.map_sweep_quenched(**args)
    for name in ("m", "q", "test_loss", "objective", "m_exact", "q_exact", "objective_exact", "grad_exact"):
        assert getattr(r, name).shape == (1, 2)
        assert_finite(getattr(r, name), name)
    assert (r.objective_exact <= r.objective + 1e-9).all() and (r.m_exact >= 0).all()
    name = data.draw(st.sampled_from(["seeds", "init_scales", "gtol", "max_iter"]))
    bad = {"seeds": st.sampled_from([(), (-1,), "1", 3]), "init_scales": st.sampled_from([(), (0.0,), (math.nan,)]),
           "gtol": st.sampled_from([0.0, -1.0, math.nan, math.inf]), "max_iter": st.sampled_from([0, -3, 1.5, True])}
    args[name] = data.draw(bad[name])
    with raises_naming(name):
        lx.map_sweep_quenched(**args)


@covers(lx.by_data_set, lx.by_chain, lxe.diagnostics_per_group, lxe._diagnostics_table, lxe._diagnostics_arrays)
@budget(10)
@given(G=st.integers(1, 2), S=st.integers(1, 3), R=st.integers(2, 3), n=st.integers(8, 30), seed=seeds)
def test_regrouping_and_diagnostics_valid(G, S, R, n, seed):
    rng = np.random.default_rng(seed)
    flat = [rng.normal(size=(G * S * R, n)) for _ in range(3)]
    per_chain = [lx.by_chain(x, G, S, R) for x in flat]
    assert per_chain[0].shape == (G, S, R, n)
    # pooling a data set's chains keeps every draw, in chain order
    assert np.array_equal(lx.by_data_set(flat[0], G, S), per_chain[0].reshape(G, S, R * n))
    rows = lxe.diagnostics_per_group(*per_chain)
    arrays = lxe._diagnostics_arrays(rows)
    for key in ("rhat", "ess_bulk", "ess_tail", "drift_z", "ess_per_chain", "median_rhat"):
        assert arrays[key].shape == (G, 3)
        assert_finite(arrays[key], key)
    assert len(lxe._diagnostics_table(rows, list(range(1, G + 1)), "x").splitlines()) == G + 1


@covers(lxe.z_scores, lx.posterior_copy_share, lx.map_predictions)
@budget(10)
@given(G=st.integers(1, 3), seed=seeds, L=st.integers(2, 40))
def test_z_scores_and_copy_share_valid(G, seed, L):
    rng = np.random.default_rng(seed)
    s = lx.chain_group_summary(rng.normal(size=(G, 3, 10)), rng.normal(size=(G, 3, 10)))
    moments = [lm.PluginMoments(P=1.0, rms_m=float(a), abs_m=float(a), q=float(b), var_m=1.0, var_q=1.0, loss=1.0,
                                binder=0.0, rho_row=1.0, rho_rest=1.0, edge_mass=0.0)
               for a, b in zip(rng.uniform(0.1, 2, G), rng.uniform(0, 0.1, G))]
    z_m, z_q = lxe.z_scores(s, moments)
    assert z_m.shape == z_q.shape == (G,)
    share = lx.posterior_copy_share(moments, L)
    assert share.shape == (G,) and np.all((share >= 0) & (share < 1))


@covers(lxe._excess_z)
@budget(10)
@given(st.lists(st.tuples(st.floats(-10, 10), st.floats(0.01, 5), st.floats(-10, 10)), min_size=1, max_size=8),
       st.floats(0, 0.5))
def test_excess_z_valid(rows, allowance):
    sampled, se, theory = (np.array(c) for c in zip(*rows))
    ex = lxe._excess_z(sampled, se, theory, allowance)
    assert (ex >= 0).all()
    np.testing.assert_allclose(lxe._excess_z(sampled, se, theory, 0.0), np.abs(sampled - theory) / se, rtol=1e-12)
    inside = np.abs(sampled - theory) <= allowance * np.abs(theory)
    assert (ex[inside] == 0).all()
    # outside the allowance: moving the sample one more s.e. away from the theory adds one to the excess
    away = sampled + np.where(sampled >= theory, se, -se)
    np.testing.assert_allclose(lxe._excess_z(away, se, theory, allowance)[~inside], ex[~inside] + 1, rtol=1e-9, atol=1e-9)
    assert (lxe._excess_z(sampled, se, theory, allowance + 0.1) <= ex).all()  # a larger allowance never adds


@covers(lx.by_data_set, lx.by_chain, lxe._diagnostics_table, lxe._diagnostics_arrays, lxe.z_scores,
        lx.posterior_copy_share, lx.map_predictions)
@budget(30)
@given(data=st.data())
def test_linear_chapter_helpers_invalid(data):
    which = data.draw(st.sampled_from(["by_data_set", "by_chain", "_diagnostics_table", "_diagnostics_arrays",
                                       "z_scores", "posterior_copy_share", "map_predictions"]))
    x = np.zeros((6, 4))
    summary = lx.chain_group_summary(np.ones((2, 2, 4)), np.ones((2, 2, 4)))
    if which == "by_data_set":
        name = data.draw(st.sampled_from(["x", "n_groups", "n_sets"]))
        args = dict(x=x, n_groups=2, n_sets=3)
        args[name] = data.draw(bad_ints(1)) if name != "x" else np.zeros((5, 4))
        call = lambda: lx.by_data_set(**args)  # noqa: E731
    elif which == "by_chain":
        name = data.draw(st.sampled_from(["x", "n_groups", "n_sets", "n_chains"]))
        args = dict(x=x, n_groups=1, n_sets=3, n_chains=2)
        args[name] = data.draw(bad_ints(1)) if name != "x" else np.zeros((7, 4))
        call = lambda: lx.by_chain(**args)  # noqa: E731
    elif which == "_diagnostics_table":
        name = "P_values"
        call = lambda: lxe._diagnostics_table([], [1.0], "x")  # noqa: E731
    elif which == "_diagnostics_arrays":
        name = "rows"
        call = lambda: lxe._diagnostics_arrays(data.draw(st.sampled_from([[], [None]])))  # noqa: E731
    elif which == "z_scores":
        name = "moments"
        call = lambda: lxe.z_scores(summary, [])  # noqa: E731
    elif which == "posterior_copy_share":
        name = "L"
        call = lambda: lx.posterior_copy_share([], data.draw(bad_ints(2)))  # noqa: E731
    else:
        name = "P_values"
        bad = data.draw(st.sampled_from([[], [0.0], [-1.0], [math.nan], [math.inf], ["3"]]))
        call = lambda: lx.map_predictions(bad, cl.ModelSpec(L=3, V=2, kind="linear"))  # noqa: E731
    with raises_naming(name):
        call()
