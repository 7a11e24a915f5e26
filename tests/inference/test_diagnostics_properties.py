"""Property tests of copylib.inference.diagnostics (the ArviZ adapter and the drift, grouped R-hat and
z-score checks built on it).

Sizes are tiny: these tests check shapes, finiteness, documented special values,
invariances and argument checking; the unit tests (test_diagnostics.py) check
that the diagnostics tell mixed chains from stuck ones.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from copylib.inference import diagnostics as dg

from props_helpers import budget, covers, not_array, raises_naming, with_nonfinite

seeds = st.integers(0, 2**32 - 1)


@covers(dg.split_rhat, dg.effective_sample_size, dg.mcse_mean)
@budget(30)
@given(R=st.integers(1, 4), n=st.integers(4, 40), trailing=st.sampled_from([(), (2,)]),
       method=st.sampled_from(dg._ESS_METHODS), constant=st.booleans(), seed=seeds)
def test_single_diagnostics_valid(R, n, trailing, method, constant, seed):
    rng = np.random.default_rng(seed)
    x = np.full((R, n) + trailing, 1.5) if constant else rng.normal(size=(R, n) + trailing).cumsum(1)
    ess, se = dg.effective_sample_size(x, method), dg.mcse_mean(x)
    if R == 1:  # R-hat compares chains
        with raises_naming("x"):
            dg.split_rhat(x)
        rhat = np.ones(trailing) if constant else np.full(trailing, 1.1)
    else:
        rhat = dg.split_rhat(x)
    for out in (rhat, ess, se):
        assert np.shape(out) == trailing
    if constant:  # documented values for a constant observable
        assert (np.asarray(rhat) == 1).all() and (np.asarray(ess) == R * n).all() and (np.asarray(se) == 0).all()
    else:
        assert np.isfinite(rhat).all() and (np.asarray(rhat) > 0).all()
        assert np.isfinite(ess).all() and (np.asarray(ess) > 0).all()
        assert np.isfinite(se).all() and (np.asarray(se) > 0).all()
    # the same numbers as the all-in-one adapter, where that applies
    if R >= 2 and n >= 8:
        d = dg.chain_diagnostics(x)
        assert np.array_equal(rhat, d.rhat) and np.array_equal(se, d.mcse)
        if method in ("bulk", "tail"):
            assert np.array_equal(ess, getattr(d, "ess_" + method))


@covers(dg.split_rhat, dg.effective_sample_size, dg.mcse_mean)
@budget(40)
@given(data=st.data())
def test_single_diagnostics_invalid(data):
    which = data.draw(st.sampled_from(["split_rhat", "effective_sample_size", "mcse_mean"]))
    if which == "effective_sample_size" and data.draw(st.booleans()):
        with raises_naming("method"):
            dg.effective_sample_size(np.zeros((2, 8)), data.draw(st.sampled_from(["identity", "", None, 1, "Bulk"])))
        return
    x = data.draw(st.one_of(
        st.sampled_from([np.zeros(8), np.zeros((2, 3)), np.zeros((0, 8))]), not_array(),
        st.builds(lambda d: with_nonfinite(np.zeros((2, 8)), d), st.data())))
    with raises_naming("x"):
        getattr(dg, which)(x)


@covers(dg.half_drift_z)
@budget(20)
@given(G=st.integers(1, 3), R=st.integers(2, 5), n=st.integers(2, 30), seed=seeds)
def test_half_drift_z_valid(G, R, n, seed):
    x = np.random.default_rng(seed).normal(size=(G, R, n))
    z = dg.half_drift_z(x)
    assert z.shape == (G,) and (z >= 0).all()
    # invariant under a per-chain offset (data set) and under a common scale
    assert np.allclose(dg.half_drift_z(3.0 * x + np.arange(R)[None, :, None]), z, rtol=1e-9, atol=1e-9)
    with raises_naming("x"):
        dg.half_drift_z(x[:, :1])
    with raises_naming("x"):
        dg.half_drift_z(np.where(np.arange(n) == 0, np.nan, x))


@covers(dg.chain_diagnostics, dg.ChainDiagnostics)
@budget(25)
@given(R=st.integers(2, 4), n=st.integers(8, 40), k=st.sampled_from([None, 2]), constant=st.booleans(), seed=seeds)
def test_chain_diagnostics_valid(R, n, k, constant, seed):
    rng = np.random.default_rng(seed)
    shape = (R, n) if k is None else (R, n, k)
    x = np.full(shape, 0.5) if constant else rng.normal(size=shape).cumsum(1)
    d = dg.chain_diagnostics(x)
    for a in (d.rhat, d.ess_bulk, d.ess_tail, d.mcse):
        assert np.shape(a) == shape[2:]
        assert np.isfinite(a).all()
    assert isinstance(d.passes(), bool) and set(d.worst()) == {"rhat", "ess_bulk", "ess_tail", "drift_z"}


@covers(dg.chain_diagnostics)
@budget(20)
@given(data=st.data())
def test_chain_diagnostics_invalid(data):
    x = data.draw(st.one_of(
        st.sampled_from([np.zeros(8), np.zeros((2, 7)), np.zeros((1, 8)), np.zeros((2, 8, 2, 2))]), not_array(),
        st.builds(lambda d: with_nonfinite(np.zeros((2, 8)), d), st.data())))
    with raises_naming("x"):
        dg.chain_diagnostics(x)


@covers(dg.z_calibration, dg.ZCalibration)
@budget(25)
@given(z=st.lists(st.floats(-50, 50), min_size=2, max_size=60))
def test_z_calibration_valid(z):
    c = dg.z_calibration(z)
    assert c.n == len(z) and 0 < c.lo < 1 < c.hi and 0 <= c.p_value <= 1
    assert c.calibrated == (c.lo <= c.mean_z2 <= c.hi)


@covers(dg.z_calibration)
def test_z_calibration_invalid():
    for bad in ([1.0], [], [0.0, np.nan], "ab"):
        with raises_naming("z"):
            dg.z_calibration(bad)


@covers(dg.dataset_chain_diagnostics, dg.DatasetDiagnostics)
@budget(30)
@given(S=st.integers(1, 3), R=st.integers(2, 4), n=st.integers(8, 40), k=st.integers(0, 2), seed=seeds)
def test_dataset_chain_diagnostics_valid(S, R, n, k, seed):
    shape = (S, R, n) if k == 0 else (S, R, n, k)
    x = np.random.default_rng(seed).normal(size=shape)
    d = dg.dataset_chain_diagnostics(x)
    trailing = () if k == 0 else (k,)
    for name in ("rhat", "ess_bulk", "ess_tail", "drift_z"):
        assert np.shape(getattr(d, name)) == trailing
        assert np.isfinite(getattr(d, name)).all() and (np.asarray(getattr(d, name)) >= 0).all()
    assert d.rhat_sets.shape == (S,) + trailing and (d.n_sets, d.n_chains, d.n_draws) == (S, R, n)
    # per data set it is chain_diagnostics of that set's chains; the drift ignores per-chain offsets
    assert np.allclose(d.rhat_sets[-1], dg.chain_diagnostics(x[-1]).rhat)
    off = np.arange(S * R, dtype=float).reshape((S, R) + (1,) * (len(shape) - 2))
    assert np.allclose(dg.dataset_chain_diagnostics(x + off).drift_z, d.drift_z, rtol=1e-6, atol=1e-9)
    assert isinstance(d.passes(), bool)
    with raises_naming("x"):
        dg.dataset_chain_diagnostics(x[:, :1])
    with raises_naming("x"):
        dg.dataset_chain_diagnostics(x[:, :, :7])
    with raises_naming("x"):
        dg.dataset_chain_diagnostics(np.where(np.arange(n)[:, None] == 0 if k else np.arange(n) == 0, np.nan, x))


@covers(dg.grouped_rhat)
@budget(30)
@given(D=st.integers(1, 4), K=st.integers(1, 3), n=st.integers(4, 40), k=st.integers(-30, 30), seed=seeds)
def test_grouped_rhat_valid_and_invariant(D, K, n, k, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(D, K, n))
    r = dg.grouped_rhat(x)
    assert math.isfinite(r) and r > 0
    # ranks within groups: rescaling one group leaves it unchanged (a power of 2 keeps the folded
    # distances' exact ties at the median of an even number of draws)
    y = x.copy()
    y[0] = 2.0**k * x[0]
    assert dg.grouped_rhat(y) == pytest.approx(r, rel=1e-9)
    with raises_naming("x"):
        dg.grouped_rhat(x[..., :3])
    with raises_naming("x"):
        dg.grouped_rhat(with_nonfinite_x(x))


def with_nonfinite_x(x):
    y = x.copy()
    y.flat[0] = np.nan
    return y


@covers(dg.z2_range)
@budget(30)
@given(n=st.integers(1, 12), k=st.integers(1, 6), level=st.floats(0.5, 0.99), seed=seeds)
def test_z2_range_valid(n, k, level, seed):
    F = np.random.default_rng(seed).normal(size=(n, k))
    cov = F @ F.T + 1e-3 * np.eye(n)
    corr = cov / np.sqrt(np.outer(np.diag(cov), np.diag(cov)))
    corr = (corr + corr.T) / 2
    np.fill_diagonal(corr, 1.0)
    nu, lo, hi = dg.z2_range(corr, level)
    assert 1 - 1e-9 <= nu <= n + 1e-9  # n^2 / sum rho^2 lies between 1 and n
    assert 0 <= lo < 1 < hi
    with raises_naming("corr"):
        dg.z2_range(corr[:, :-1] if n > 1 else np.ones((1, 2)))
    with raises_naming("level"):
        dg.z2_range(corr, 1.5)


@covers(dg.studentized_z_null, dg.StudentizedZNull)
@budget(30)
@given(sizes=st.lists(st.integers(1, 5), min_size=1, max_size=3), G=st.integers(4, 12), level=st.floats(0.5, 0.99),
       seed=seeds)
def test_studentized_z_null_valid(sizes, G, level, seed):
    rng = np.random.default_rng(seed)
    blocks = []
    for n in sizes:
        F = rng.normal(size=(n, 2))
        cov = F @ F.T + 0.1 * np.eye(n)
        corr = cov / np.sqrt(np.outer(np.diag(cov), np.diag(cov)))
        corr = (corr + corr.T) / 2
        np.fill_diagonal(corr, 1.0)
        blocks.append(corr)
    null = dg.studentized_z_null(blocks, G, np.random.default_rng(seed), n_sim=200)
    assert null.n == sum(sizes) and null.dof == (G - 1,) * len(sizes)
    assert null.mean_z2.shape == null.max_abs_z.shape == (200,)
    assert np.isfinite(null.mean_z2).all() and (null.mean_z2 > 0).all()
    lo, hi = null.z2_range(level)
    assert 0 < lo <= hi
    assert null.false_alarm(1e-9) == 1.0 and null.false_alarm(1e9) == 0.0
    # the same generator state gives the same table laws
    again = dg.studentized_z_null(blocks, G, np.random.default_rng(seed), n_sim=200)
    assert np.array_equal(again.mean_z2, null.mean_z2)
    with raises_naming("corr_blocks[0]"):
        dg.studentized_z_null([blocks[0][:, :1]] if sizes[0] > 1 else [np.ones((1, 2))], G, rng)
    with raises_naming("n_groups"):
        dg.studentized_z_null(blocks, 3, rng)
    with raises_naming("n_groups"):
        dg.studentized_z_null(blocks, [G] * (len(blocks) + 1), rng)
    with raises_naming("n_sim"):
        dg.studentized_z_null(blocks, G, rng, n_sim=10)
    with raises_naming("level"):
        null.z2_range(1.5)
    cal = null.calibration(rng.normal(size=null.n))
    assert (cal.lo, cal.hi) == null.z2_range()  # the central 95 % range
    assert 0 <= cal.p_value <= 1
    with raises_naming("z"):
        null.calibration(np.full(null.n, np.nan))
    with raises_naming("threshold"):
        null.false_alarm(float("nan"))
    with pytest.raises(TypeError, match="rng"):
        dg.studentized_z_null(blocks, G, 0)
