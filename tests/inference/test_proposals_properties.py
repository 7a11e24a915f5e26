"""Property tests: the Langevin proposals (copylib.inference.proposals)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from copylib.inference import proposals as pr

from props_helpers import budget, covers, log_uniform, raises_naming

seeds = st.integers(0, 2**63 - 1)


def _gaussian(precision):
    def evaluate(x):
        return 0.5 * precision * (x * x).sum(1), precision * x
    return evaluate


def _start(R, D, seed, precision, h, scale):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(R, D, generator=gen, dtype=torch.float64)
    E, grad = _gaussian(precision)(x)
    return x, E, grad, torch.full((R,), h, dtype=torch.float64), torch.full((R, D), scale, dtype=torch.float64)


@covers(pr.LangevinProposal, pr.MALA, pr.ULA)
@budget(25)
@given(R=st.integers(1, 5), D=st.integers(1, 20), seed=seeds, precision=log_uniform(1e-2, 1e2),
       h=log_uniform(1e-3, 10.0), scale=log_uniform(1e-2, 1e2))
def test_mala_keeps_or_moves_to_the_ula_proposal(R, D, seed, precision, h, scale):
    """With the same noise, MALA's new state is, chain by chain, its old state (rejected) or ULA's
    proposal (accepted), and the returned energy and gradient belong to the returned state."""
    x, E, grad, hh, s = _start(R, D, seed, precision, h, scale)
    evaluate = _gaussian(precision)
    ula, mala = pr.ULA(evaluate, torch.Generator().manual_seed(seed)), pr.MALA(evaluate, torch.Generator().manual_seed(seed))
    for p in (ula, mala):
        p.set_kernel(hh, s)
    xu, Eu, gu, acc_u, log_r_u = ula.step(x, E, grad, "at step 1") if _finite_ula(x, grad, hh, s) else (None,) * 5
    xm, Em, gm, acc_m, log_r_m = mala.step(x, E, grad, "at step 1")
    assert acc_m.dtype == torch.bool and acc_m.shape == (R,) and log_r_m.shape == (R,)
    assert not ula.metropolis and mala.metropolis
    E_chk, g_chk = evaluate(xm)
    assert torch.equal(Em, E_chk) and torch.equal(gm, g_chk)
    assert torch.equal(xm[~acc_m], x[~acc_m])
    if xu is not None:
        assert bool(acc_u.all()) and log_r_u is None
        assert torch.equal(xm[acc_m], xu[acc_m])
        assert torch.equal(Eu, evaluate(xu)[0])


def _finite_ula(x, grad, h, s):
    prop_mean = x - 0.5 * h[:, None] * s**2 * grad
    return bool(torch.isfinite(prop_mean).all()) and float(prop_mean.abs().max()) < 1e100


@covers(pr.ULA)
@budget(10)
@given(R=st.integers(1, 4), seed=seeds)
def test_ula_divergence_names_the_chain(R, seed):
    """ULA with a step far beyond the stability limit of a stiff quadratic blows up; the error names
    the chains rather than returning non-finite states."""
    evaluate = _gaussian(1e3)
    x = torch.ones(R, 3, dtype=torch.float64)
    E, grad = evaluate(x)
    ula = pr.ULA(evaluate, torch.Generator().manual_seed(seed))
    ula.set_kernel(torch.full((R,), 100.0, dtype=torch.float64), torch.ones(R, 3, dtype=torch.float64))
    with pytest.raises(FloatingPointError, match=r"chains? 0\b.*diverged at step"):
        for _ in range(200):
            x, E, grad, _, _ = ula.step(x, E, grad, "at step")


@covers(pr.Move, pr.LangevinProposal, pr.MALA)
@budget(10)
@given(bad=st.sampled_from(["evaluate", "generator"]), cls=st.sampled_from([pr.MALA, pr.ULA]))
def test_proposals_invalid(bad, cls):
    args = dict(evaluate=_gaussian(1.0), generator=torch.Generator())
    args[bad] = {"evaluate": 1.0, "generator": np.random.default_rng(0)}[bad]
    with raises_naming(bad):
        cls(**args)
    with pytest.raises(NotImplementedError):
        pr.LangevinProposal(_gaussian(1.0), torch.Generator()).step(None, None, None, "")
    with pytest.raises(NotImplementedError):
        pr.Move(_gaussian(1.0), torch.Generator()).step(None, None, None, "")


@covers(pr.MALA)
@budget(10)
@given(R=st.integers(1, 4), seed=seeds)
def test_mala_rejects_infinite_energy(R, seed):
    """Proposals of +inf energy (outside a support) are rejected, never accepted."""
    def evaluate(x):
        E = torch.where(x[:, 0] > 0, 0.5 * (x * x).sum(1), math.inf)
        return E, x.clone()
    x = torch.full((R, 2), 0.1, dtype=torch.float64)
    E, grad = evaluate(x)
    mala = pr.MALA(evaluate, torch.Generator().manual_seed(seed))
    mala.set_kernel(torch.full((R,), 4.0, dtype=torch.float64), torch.ones(R, 2, dtype=torch.float64))
    for _ in range(20):
        x, E, grad, _, _ = mala.step(x, E, grad, "")
        assert bool((x[:, 0] > 0).all()) and bool(torch.isfinite(E).all())


@covers(pr.LineMove)
@budget(25)
@given(R=st.integers(1, 20), D=st.integers(1, 12), seed=seeds, precision=log_uniform(1e-2, 1e2),
       step=log_uniform(1e-3, 1e2))
def test_line_move_keeps_or_moves_along_its_direction(R, D, seed, precision, step):
    """Chain by chain the new state is the old one (rejected) or ``x + delta v`` with ``delta`` the
    documented draw (accepted, exactly when ``log u < U(x) - U(x')``); the returned energy and
    gradient belong to the returned state."""
    x, E, grad, _, _ = _start(R, D, seed, precision, 1.0, 1.0)
    evaluate = _gaussian(precision)
    v = torch.linspace(-1.0, 2.0, D, dtype=torch.float64) + 0.1
    xn, En, gn, acc, log_r = pr.LineMove(evaluate, torch.Generator().manual_seed(seed), v, step).step(x, E, grad, "")
    gen = torch.Generator().manual_seed(seed)
    delta = step * pr._standard_normal((R,), gen)
    u = torch.rand(R, generator=gen, dtype=torch.float64)
    moved = x + delta[:, None] * v
    E_moved = evaluate(moved)[0]
    assert torch.equal(acc, torch.log(u) < E - E_moved) and torch.allclose(log_r, E - E_moved, rtol=0, atol=1e-9)
    assert torch.equal(xn[acc], moved[acc]) and torch.equal(xn[~acc], x[~acc])
    E_chk, g_chk = evaluate(xn)
    assert torch.equal(En, E_chk) and torch.equal(gn, g_chk)


@covers(pr.LineMove)
@budget(10)
@given(R=st.integers(1, 4), seed=seeds, bad=st.sampled_from(["evaluate", "generator"]))
def test_line_move_rejects_infinite_energy_and_checks_its_arguments(R, seed, bad):
    """A move out of the support (+inf energy) is never kept; a bad evaluate or generator is named."""
    def evaluate(x):
        return torch.where(x[:, 0] > 0, 0.5 * (x * x).sum(1), math.inf), x.clone()
    x = torch.full((R, 2), 0.1, dtype=torch.float64)
    E, grad = evaluate(x)
    move = pr.LineMove(evaluate, torch.Generator().manual_seed(seed), torch.tensor([1.0, 0.0]), 5.0)
    for _ in range(20):
        x, E, grad, _, _ = move.step(x, E, grad, "")
        assert bool((x[:, 0] > 0).all()) and bool(torch.isfinite(E).all())
    args = dict(evaluate=evaluate, generator=torch.Generator(), direction=torch.ones(2), step=1.0)
    args[bad] = {"evaluate": 1.0, "generator": np.random.default_rng(0)}[bad]
    with raises_naming(bad):
        pr.LineMove(**args)


@covers(pr.HMC)
@budget(25)
@given(R=st.integers(1, 5), D=st.integers(1, 12), seed=seeds, precision=log_uniform(1e-2, 1e2),
       h=log_uniform(1e-4, 1.0), scale=log_uniform(1e-2, 1e2), n_leapfrog=st.integers(1, 6),
       jitter=st.sampled_from([0.0, 0.2, 0.5]))
def test_hmc_keeps_or_moves_to_the_leapfrog_end_point(R, D, seed, precision, h, scale, n_leapfrog, jitter):
    """Chain by chain the new state is the old one (rejected) or the end of the leapfrog trajectory
    from the documented draws (accepted, exactly when ``log u < H_0 - H_1``); the returned energy and
    gradient belong to the returned state, and the acceptance flags are booleans ``(R,)``."""
    x, E, grad, hh, s = _start(R, D, seed, precision, h, scale)
    evaluate = _gaussian(precision)
    hmc = pr.HMC(evaluate, torch.Generator().manual_seed(seed), n_leapfrog, jitter=jitter)
    hmc.set_kernel(hh, s)
    xn, En, gn, acc, log_r = hmc.step(x, E, grad, "")
    assert hmc.metropolis and acc.dtype == torch.bool and acc.shape == (R,) and log_r.shape == (R,)
    gen = torch.Generator().manual_seed(seed)
    p0 = pr._standard_normal((R, D), gen)
    u = torch.rand(R, generator=gen, dtype=torch.float64)
    factor = 1 + jitter * (2 * torch.rand(R, generator=gen, dtype=torch.float64) - 1) if jitter else torch.ones(R)
    ref = pr.HMC(evaluate, torch.Generator(), n_leapfrog, jitter=0.0)
    ref.set_kernel(hh * factor**2, s)
    x1, E1, _, p1, ok = ref.leapfrog(x, E, grad, p0)
    log_r_ref = torch.where(ok, E - E1 + 0.5 * ((p0**2).sum(1) - (p1**2).sum(1)), -math.inf)
    assert torch.equal(acc, torch.log(u) < log_r)
    assert torch.allclose(log_r[ok], log_r_ref[ok], rtol=1e-9, atol=1e-9 * (1 + float(E.abs().max())))
    assert torch.equal(xn[~acc], x[~acc]) and torch.allclose(xn[acc], x1[acc], rtol=1e-12, atol=1e-300)
    E_chk, g_chk = evaluate(xn)
    assert torch.equal(En, E_chk) and torch.equal(gn, g_chk)


@covers(pr.HMC)
@budget(20)
@given(R=st.integers(1, 5), D=st.integers(1, 12), seed=seeds, precision=log_uniform(1e-2, 1e2),
       h=log_uniform(1e-3, 10.0), scale=log_uniform(1e-2, 1e2))
def test_hmc_with_one_leapfrog_step_is_mala(R, D, seed, precision, h, scale):
    """One leapfrog step without jitter is MALA's proposal and acceptance test: from the same draws the
    same decisions and the same states, up to rounding."""
    x, E, grad, hh, s = _start(R, D, seed, precision, h, scale)
    evaluate = _gaussian(precision)
    mala, hmc = pr.MALA(evaluate, torch.Generator().manual_seed(seed)), pr.HMC(
        evaluate, torch.Generator().manual_seed(seed), 1, jitter=0.0)
    for p in (mala, hmc):
        p.set_kernel(hh, s)
    xm, Em, _, acc_m, log_r_m = mala.step(x, E, grad, "")
    xh, Eh, _, acc_h, log_r_h = hmc.step(x, E, grad, "")
    close = (log_r_m - log_r_h).abs() < 1e-9 * (1 + log_r_m.abs())
    assert close.all()
    same = acc_m == acc_h  # a decision can flip only where log u sits within rounding of log_r
    assert torch.allclose(xm[same], xh[same], rtol=1e-12, atol=1e-12 * float(x.abs().max() + 1))


@covers(pr.HMC)
@budget(20)
@given(R=st.integers(1, 4), D=st.integers(1, 6), seed=seeds, h=log_uniform(1e-4, 0.1), n_leapfrog=st.integers(1, 8))
def test_leapfrog_reversibility(R, D, seed, h, n_leapfrog):
    """Leapfrog from ``(x', -p')`` returns to ``(x, -p)`` (the property that makes HMC exact)."""
    x, E, grad, hh, s = _start(R, D, seed, 1.0, h, 1.0)
    p = torch.randn(R, D, generator=torch.Generator().manual_seed(seed + 1), dtype=torch.float64)
    hmc = pr.HMC(_gaussian(1.0), torch.Generator(), n_leapfrog)
    hmc.set_kernel(hh, s)
    x1, E1, g1, p1, ok = hmc.leapfrog(x, E, grad, p)
    x2, _, _, p2, ok2 = hmc.leapfrog(x1, E1, g1, -p1)
    assert ok.all() and ok2.all()
    torch.testing.assert_close(x2, x, rtol=0, atol=1e-11 * (1 + float(x.abs().max())))
    torch.testing.assert_close(p2, -p, rtol=0, atol=1e-11 * (1 + float(p.abs().max())))


@covers(pr.HMC)
@budget(15)
@given(R=st.integers(1, 4), seed=seeds, n_leapfrog=st.integers(2, 6), bad=st.sampled_from(["n_leapfrog", "jitter"]),
       value=st.sampled_from([0, -1, 1.0, 1.5, math.nan, "2", None]))
def test_hmc_rejects_infinite_energy_and_checks_its_arguments(R, seed, n_leapfrog, bad, value):
    """A trajectory leaving the support (+inf energy) is never kept; a bad n_leapfrog or jitter is named."""
    def evaluate(x):
        return torch.where(x[:, 0] > 0, 0.5 * (x * x).sum(1), math.inf), x.clone()
    x = torch.full((R, 2), 0.1, dtype=torch.float64)
    E, grad = evaluate(x)
    hmc = pr.HMC(evaluate, torch.Generator().manual_seed(seed), n_leapfrog)
    hmc.set_kernel(torch.full((R,), 1.0, dtype=torch.float64), torch.ones(R, 2, dtype=torch.float64))
    for _ in range(10):
        x, E, grad, _, _ = hmc.step(x, E, grad, "")
        assert bool((x[:, 0] > 0).all()) and bool(torch.isfinite(E).all())
    if bad == "n_leapfrog" and value == 1.0:
        value = 0.5
    if bad == "jitter" and value in (0, "2"):
        value = -0.5 if value == 0 else "0.1"
    kw = {"n_leapfrog": 3, "jitter": 0.2, bad: value}
    with raises_naming(bad):
        pr.HMC(evaluate, torch.Generator(), **kw)
