"""Unit tests for copylib.inference.map_training: MAP objective, batched Adam, MAP filter, sweeps."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from copylib.inference.map_training import (
    SweepResult,
    TrainingResult,
    _adam_step,
    _random_init,
    lowest_objective,
    map_sweep,
    nested_cooccurrence,
    train_map,
)
from copylib.model.losses import empirical_loss, expected_loss
from copylib.model.network import ModelSpec, attention, attention_logits
from copylib.model.statistics import _repeat_block, cooccurrence
from copylib.model.task import copy_task
from copylib.posterior.targets import map_objective

L, V = 4, 2
SPEC = ModelSpec(L=L, V=V, kind="softmax", sigma_G=1.5, sigma_b=0.8, omega=2.0, sigma0_sq=0.3)


@pytest.fixture(autouse=True, scope="module")
def _single_thread():
    # The problems are tiny: thread start-up dominates, so run torch single-threaded
    # here (and restore the setting afterwards).
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


# --------------------------------------------------------------------------- train_map


@pytest.fixture(scope="module")
def trained():
    """A tiny problem (L=4, V=2, three data sets), 300 Adam steps."""
    C = nested_cooccurrence([5, 20, 60], SPEC, np.random.default_rng(6))
    res = train_map(C, SPEC, torch.Generator().manual_seed(7), n_steps=300, n_records=10)
    return C, res


def test_train_map_result_shapes(trained):
    C, res = trained
    R = C.shape[0]
    assert isinstance(res, TrainingResult)
    assert res.steps.shape == (10,)
    assert res.train_loss.shape == res.test_loss.shape == (R, 10)
    assert res.objective.shape == (R,) and res.b.shape == (R,)
    assert res.g.shape == res.A.shape == (R, L, L)
    assert res.W.shape == (R, V, V)
    for arr in (res.train_loss, res.test_loss, res.objective, res.g, res.b, res.W, res.A):
        assert isinstance(arr, np.ndarray) and arr.dtype == np.float64
        assert np.isfinite(arr).all()
    # Evenly spaced records from the initial to the final step.
    assert res.steps[0] == 0 and res.steps[-1] == 300
    assert np.all(np.diff(res.steps) > 0)


def test_train_map_decreases_objective_and_loss(trained):
    C, res = trained
    # The initial objective: same generator seed (same initialisation), one negligible step.
    init = train_map(C, SPEC, torch.Generator().manual_seed(7), n_steps=1, lr=1e-12, lr_final=1e-12)
    np.testing.assert_array_equal(init.train_loss[:, 0], res.train_loss[:, 0])  # same start
    assert np.all(res.objective < init.objective)
    assert np.all(res.train_loss[:, -1] < res.train_loss[:, 0])


def test_train_map_result_is_self_consistent(trained):
    C, res = trained
    g, b, W = (torch.as_tensor(x) for x in (res.g, res.b, res.W))
    np.testing.assert_allclose(map_objective(g, b, W, torch.as_tensor(C), SPEC).numpy(), res.objective, rtol=1e-12)
    np.testing.assert_allclose(attention(attention_logits(res.g, res.b), SPEC.kind), res.A, rtol=1e-12)
    np.testing.assert_allclose(res.train_loss[:, -1], empirical_loss(res.A, res.W, C, SPEC.target), rtol=1e-12)
    np.testing.assert_allclose(res.test_loss[:, -1], expected_loss(res.A, res.W, SPEC.target), rtol=1e-12)


def test_train_map_same_seed_identical_different_seed_different():
    C = nested_cooccurrence([3, 9], SPEC, np.random.default_rng(8))
    kw = dict(n_steps=25, n_records=5)
    a = train_map(C, SPEC, torch.Generator().manual_seed(11), **kw)
    b = train_map(C, SPEC, torch.Generator().manual_seed(11), **kw)
    c = train_map(C, SPEC, torch.Generator().manual_seed(12), **kw)
    for field in ("train_loss", "test_loss", "objective", "g", "b", "W", "A", "steps"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    assert not np.array_equal(a.W, c.W) and not np.array_equal(a.objective, c.objective)


def test_train_map_runs_are_independent():
    # Runs are batched but uncoupled (Adam acts elementwise, the objective is a sum over
    # runs): changing the data of run 1 leaves run 0 unchanged, same initialisation.
    C = nested_cooccurrence([6, 15], SPEC, np.random.default_rng(9))
    C_alt = C.copy()
    C_alt[1] = nested_cooccurrence([40], SPEC, np.random.default_rng(10))[0]
    kw = dict(n_steps=25, n_records=2)
    a = train_map(C, SPEC, torch.Generator().manual_seed(13), **kw)
    b = train_map(C_alt, SPEC, torch.Generator().manual_seed(13), **kw)
    for field in ("g", "b", "W", "objective", "train_loss"):
        np.testing.assert_allclose(getattr(a, field)[0], getattr(b, field)[0], rtol=1e-12, atol=1e-14)
    assert not np.allclose(a.W[1], b.W[1])


@pytest.mark.parametrize(
    "kwargs, exc, name",
    [
        (dict(n_steps=0), ValueError, "n_steps"),
        (dict(n_steps=2.5), ValueError, "n_steps"),
        (dict(n_records=0), ValueError, "n_records"),
        (dict(lr=0.0), ValueError, "lr"),
        (dict(lr=-1.0), ValueError, "lr"),
        (dict(lr=np.nan), ValueError, "lr"),
        (dict(lr_final=np.inf), ValueError, "lr_final"),
        (dict(init_scale=-0.1), ValueError, "init_scale"),
        (dict(init_scale=0.0), ValueError, "init_scale"),
        (dict(init_scale=np.nan), ValueError, "init_scale"),
        (dict(init_scale=[1.0, np.inf]), ValueError, "init_scale"),
    ],
)
def test_train_map_rejects_bad_arguments(kwargs, exc, name):
    C = nested_cooccurrence([2, 3], SPEC, np.random.default_rng(10))
    with pytest.raises(exc, match=name):
        train_map(C, SPEC, torch.Generator().manual_seed(0), **kwargs)


def test_train_map_rejects_bad_generator_and_C():
    C = nested_cooccurrence([2, 3], SPEC, np.random.default_rng(10))
    for gen in (None, 0, np.random.default_rng(0)):
        with pytest.raises(TypeError, match="generator"):
            train_map(C, SPEC, gen, n_steps=1)
    gen = torch.Generator().manual_seed(0)
    with pytest.raises(ValueError, match="C"):
        train_map(C[0], SPEC, gen, n_steps=1)  # missing run axis
    with pytest.raises(ValueError, match="C"):
        train_map(C[None], SPEC, gen, n_steps=1)  # extra axis
    with pytest.raises(ValueError, match="C"):
        train_map(C[:, :3], SPEC, gen, n_steps=1)  # wrong L
    with pytest.raises(ValueError, match="C"):
        train_map(np.zeros((2, L, L, V + 1, V + 1)), SPEC, gen, n_steps=1)  # wrong V


# --------------------------------------------------------------------------- the hand-written gradient and Adam


def _reference_train(C, spec, gen, n_steps, lr=0.05, lr_final=1e-3):
    """Adam as train_map ran it before the hand-written gradient: autograd on
    map_objective, torch.optim.Adam and ExponentialLR. Returns the final (g, b, W)."""
    C = torch.as_tensor(C)
    g, b, W = _random_init(0.1, spec, C.shape[0], gen)
    g, b, W = g.requires_grad_(), b.requires_grad_(), W.requires_grad_()
    opt = torch.optim.Adam([g, b, W], lr=lr)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=(lr_final / lr) ** (1.0 / n_steps))
    for _ in range(n_steps):
        opt.zero_grad()
        map_objective(g, b, W, C, spec).sum().backward()
        opt.step()
        sched.step()
    return g.detach(), b.detach(), W.detach()


def test_repeat_block_detects_only_uniform_blocks():
    C = torch.as_tensor(nested_cooccurrence([3, 5, 8], SPEC, np.random.default_rng(4)))
    assert _repeat_block(C) == 1
    assert _repeat_block(C.repeat_interleave(4, dim=0)) == 4
    assert _repeat_block(C[:1].repeat(5, 1, 1, 1, 1)) == 5
    # blocks of unequal length, or repeats that are not consecutive, are not grouped
    assert _repeat_block(torch.cat([C[:1], C[:1], C[1:]])) == 1
    assert _repeat_block(torch.cat([C[:2], C[:2]])) == 1


def test_adam_step_is_bit_identical_to_torch_adam():
    """Same gradients in, same parameters out, to the last bit: _adam_step with the
    geometric learning rate is the arithmetic of torch.optim.Adam + ExponentialLR."""
    gen = torch.Generator().manual_seed(5)
    target = torch.randn(3, 7, dtype=torch.float64, generator=gen)
    p = torch.randn(3, 7, dtype=torch.float64, generator=gen).requires_grad_()
    x = p.detach().clone()
    m, v = torch.zeros_like(x), torch.zeros_like(x)
    opt = torch.optim.Adam([p], lr=0.05)
    gamma = (1e-3 / 0.05) ** (1 / 50)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=gamma)
    lr = 0.05
    for step in range(1, 51):
        opt.zero_grad()
        ((p - target) ** 4).sum().backward()
        grad = 4 * (x - target) ** 3
        assert torch.equal(grad, p.grad)
        opt.step()
        sched.step()
        _adam_step(x, grad, m, v, step, lr)
        lr *= gamma
        assert torch.equal(x, p.detach()), step


@pytest.mark.parametrize("kind", ["linear", "softmax"])
def test_train_map_follows_the_autograd_reference(kind):
    """train_map (hand-written gradient, flat Adam) ends where the autograd + torch.optim
    version ends. The gradients differ by rounding only; Adam's normalised steps carry
    such differences along without amplifying them here, so the end points agree to
    1e-9 (relative), far below any difference the chapters could see."""
    spec = ModelSpec(L=5, V=3, kind=kind)
    C = np.repeat(nested_cooccurrence([6, 20, 80], spec, np.random.default_rng(6)), 2, axis=0)
    res = train_map(C, spec, torch.Generator().manual_seed(7), init_scale=0.1, n_steps=400)
    g, b, W = _reference_train(C, spec, torch.Generator().manual_seed(7), 400)
    np.testing.assert_allclose(res.g, g.numpy(), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(res.W, W.numpy(), rtol=1e-9, atol=1e-9)
    if kind == "linear":  # b does not enter the softmax objective except through its prior
        np.testing.assert_allclose(res.b, b.numpy(), rtol=1e-9, atol=1e-9)


# --------------------------------------------------------------------------- lowest_objective


def test_lowest_objective_picks_argmin_per_group():
    objective = np.array([3.0, 1.0, 2.0, 5.0, 0.5, 7.0, -1.0])
    groups = np.array([0, 0, 0, 1, 1, 2, 1])
    np.testing.assert_array_equal(lowest_objective(objective, groups), [1, 6, 5])


def test_lowest_objective_orders_by_unique_labels_and_breaks_ties_first():
    objective = [4.0, 2.0, 2.0, 9.0, 1.0]
    groups = ["b", "a", "a", "c", "b"]  # np.unique order: a, b, c
    np.testing.assert_array_equal(lowest_objective(objective, groups), [1, 4, 3])


def test_lowest_objective_rejects_bad_input():
    with pytest.raises(ValueError, match="objective"):
        lowest_objective([1.0, 2.0, 3.0], [0, 1])
    with pytest.raises(ValueError, match="objective"):
        lowest_objective(np.zeros((2, 2)), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="objective"):
        lowest_objective([1.0, np.nan], [0, 0])
    with pytest.raises(ValueError, match="objective"):
        lowest_objective([1.0, np.inf], [0, 1])


# --------------------------------------------------------------------------- nested_cooccurrence


@pytest.mark.parametrize("cyclic", [True, False])
def test_nested_cooccurrence_is_prefix_of_one_draw(cyclic):
    spec = ModelSpec(L=5, V=3, cyclic=cyclic)
    P_values = [7, 2, 12, 7, 1]
    C = nested_cooccurrence(P_values, spec, np.random.default_rng(123))
    assert C.shape == (5, 5, 5, 3, 3) and C.dtype == np.float64
    X, _ = copy_task(12, 5, 3, np.random.default_rng(123), cyclic=cyclic)
    for i, P in enumerate(P_values):
        np.testing.assert_array_equal(C[i], cooccurrence(X[:P]))


def test_nested_cooccurrence_rejects_bad_input():
    spec = ModelSpec(L=4, V=2)
    rng = np.random.default_rng(0)
    for P_values in ([3, 0], [2.5], [3, -1]):
        with pytest.raises(ValueError, match="P"):
            nested_cooccurrence(P_values, spec, rng)
    for P_values in ([], 3, [[1, 2]]):
        with pytest.raises(ValueError, match="P_values"):
            nested_cooccurrence(P_values, spec, rng)
    with pytest.raises(TypeError, match="rng"):
        nested_cooccurrence([3], spec, 0)


# --------------------------------------------------------------------------- map_sweep


SWEEP_KW = dict(init_scales=(0.01, 1.0, 3.0), n_steps=40, n_records=3)


@pytest.fixture(scope="module")
def sweep():
    return map_sweep([3, 10], SPEC, np.random.default_rng(21), **SWEEP_KW)


def test_map_sweep_keeps_lowest_objective_per_sample_size(sweep):
    assert isinstance(sweep, SweepResult)
    n_P, n_restarts = 2, 3
    np.testing.assert_array_equal(sweep.P, [3, 10])
    assert sweep.kept.shape == sweep.train_loss.shape == sweep.test_loss.shape == (n_P,)
    assert sweep.A.shape == (n_P, L, L) and sweep.W.shape == (n_P, V, V)
    assert sweep.runs.objective.shape == (n_P * n_restarts,)
    for i in range(n_P):
        block = slice(i * n_restarts, (i + 1) * n_restarts)
        assert i * n_restarts <= sweep.kept[i] < (i + 1) * n_restarts
        assert sweep.runs.objective[sweep.kept[i]] == sweep.runs.objective[block].min()
        np.testing.assert_array_equal(sweep.A[i], sweep.runs.A[sweep.kept[i]])
        np.testing.assert_array_equal(sweep.W[i], sweep.runs.W[sweep.kept[i]])
        assert sweep.train_loss[i] == sweep.runs.train_loss[sweep.kept[i], -1]
        assert sweep.test_loss[i] == sweep.runs.test_loss[sweep.kept[i], -1]


def test_map_sweep_trains_on_nested_data_from_rng(sweep):
    # The runs' data are nested_cooccurrence(P, spec, rng) drawn first from the same rng,
    # each repeated once per restart: check through the recorded final training loss.
    C = np.repeat(nested_cooccurrence([3, 10], SPEC, np.random.default_rng(21)), 3, axis=0)
    runs = sweep.runs
    np.testing.assert_allclose(runs.train_loss[:, -1], empirical_loss(runs.A, runs.W, C, SPEC.target), rtol=1e-12)


def test_map_sweep_same_seed_identical_different_seed_different(sweep):
    again = map_sweep([3, 10], SPEC, np.random.default_rng(21), **SWEEP_KW)
    other = map_sweep([3, 10], SPEC, np.random.default_rng(22), **SWEEP_KW)
    for field in ("train_loss", "test_loss", "A", "W", "kept", "P"):
        np.testing.assert_array_equal(getattr(sweep, field), getattr(again, field))
    np.testing.assert_array_equal(sweep.runs.objective, again.runs.objective)
    np.testing.assert_array_equal(sweep.runs.g, again.runs.g)
    assert not np.array_equal(sweep.runs.objective, other.runs.objective)
    assert not np.array_equal(sweep.W, other.W)


def test_map_sweep_rejects_bad_input():
    rng = np.random.default_rng(0)
    for P_values in ([], [[2, 3]]):
        with pytest.raises(ValueError, match="P_values"):
            map_sweep(P_values, SPEC, rng, n_steps=1)
    for P_values in ([0, 3], [2.5]):
        with pytest.raises(ValueError, match="P"):
            map_sweep(P_values, SPEC, rng, n_steps=1)
    with pytest.raises(TypeError, match="rng"):
        map_sweep([3], SPEC, 1, n_steps=1)
    with pytest.raises(ValueError, match="init_scale"):
        map_sweep([3], SPEC, rng, init_scales=(1.0, -1.0), n_steps=1)
