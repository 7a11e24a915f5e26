"""Unit tests for copylib.model.attention: the registry of attention kinds."""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np
import pytest
import torch

import copylib as cl
from copylib import explorers
from copylib.model import attention as attention_module
from copylib.model.attention import AttentionKind, attention_kind, attention_kinds
from copylib.model.network import check_spec
from copylib.posterior import order_parameters

KINDS = attention_kinds()
UNKNOWN = ("relu", "Softmax", "", None, 1, ("linear",))


def _logits(L, batch=(), seed=0, scale=2.0):
    return torch.as_tensor(np.random.default_rng(seed).normal(size=batch + (L, L)) * scale)


# --------------------------------------------------------------------------- the registry


def test_registry_holds_linear_and_softmax():
    assert KINDS == ("linear", "softmax")
    for kind in KINDS:
        entry = attention_kind(kind)
        assert isinstance(entry, AttentionKind) and entry.name == kind


def test_entries_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        attention_kind("linear").name = "softmax"


def test_prior_push_forward_and_theory_module_resolve():
    assert attention_kind("linear").prior_action_function() is order_parameters.prior_action_linear
    assert attention_kind("softmax").prior_action_function() is order_parameters.prior_action_softmax
    assert attention_kind("linear").theory_module() is cl.theory.linear
    assert attention_kind("softmax").theory_module() is cl.theory.softmax


@pytest.mark.parametrize("kind", KINDS)
def test_theory_module_checks_specs_of_its_own_kind(kind):
    # the theory module named by an entry is the one whose reduced action accepts that kind
    theory = attention_kind(kind).theory_module()
    spec = cl.ModelSpec(L=4, V=3, kind=kind)
    assert np.isfinite(theory.reduced_action(*([0.5] * (2 if kind == "linear" else 1)), 10.0, spec))
    other = cl.ModelSpec(L=4, V=3, kind=next(k for k in KINDS if k != kind))
    with pytest.raises(ValueError, match="kind"):
        theory.reduced_action(*([0.5] * (2 if kind == "linear" else 1)), 10.0, other)


# --------------------------------------------------------------------------- unknown kinds


class _OneSweep:
    P, A, test_loss = np.array([10.0]), np.full((1, 3, 3), 1 / 3), np.array([0.5])


_ONE_SWEEP = _OneSweep()


def _accepting_a_kind():
    """Every public entry point that takes an attention kind, as ``kind -> call``."""
    return {
        "attention_kind": attention_kind,
        "ModelSpec": lambda k: cl.ModelSpec(L=4, V=3, kind=k),
        "attention": lambda k: cl.attention(np.zeros((3, 3)), k),
        "attention causal": lambda k: cl.attention(np.zeros((3, 3)), k, True),
        "check_spec": lambda k: check_spec(cl.ModelSpec(L=4, V=3), kind=k),
        "landscape_figure": lambda k: explorers.landscape_figure(100.0, 8, 3, k),
        "landscape_explorer": lambda k: explorers.landscape_explorer([100.0], 8, 3, k),
        "training_figure": lambda k: explorers.training_figure({"softmax": _ONE_SWEEP}, k, 10.0),
        "training_explorer": lambda k: explorers.training_explorer({k: _ONE_SWEEP}),
    }


@pytest.mark.parametrize("where", sorted(_accepting_a_kind()))
@pytest.mark.parametrize("kind", UNKNOWN)
def test_unknown_kind_raises_everywhere(where, kind):
    if where == "check_spec" and kind is None:
        pytest.skip("check_spec(kind=None) means any kind (documented)")
    with pytest.raises(ValueError, match=r"kind must be one of \('linear', 'softmax'\)"):
        _accepting_a_kind()[where](kind)


def test_error_names_the_kind_given():
    with pytest.raises(ValueError, match="got 'relu'"):
        attention_kind("relu")


def test_check_spec_with_a_known_kind_still_compares_kinds():
    spec = cl.ModelSpec(L=4, V=3, kind="linear")
    assert check_spec(spec, kind="linear") is spec
    with pytest.raises(ValueError, match="spec.kind must be 'softmax'"):
        check_spec(spec, kind="softmax")


def test_no_public_function_takes_a_kind_the_test_above_misses():
    # a new function with a `kind` parameter must join _accepting_a_kind
    # (arguments.check_generator's `kind` is the generator type, not an attention kind)
    listed = {"ModelSpec", "attention", "check_spec", "landscape_figure", "landscape_explorer", "attention_kind",
              "training_figure"}
    modules = [cl.model.network, cl.model.attention, cl.explorers, cl.posterior.evidence,
               cl.posterior.order_parameters, cl.model.statistics, cl.model.losses,
               cl.inference.map_training, cl.inference.langevin]
    for module in modules:
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
                continue
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and "kind" in inspect.signature(obj).parameters:
                assert name in listed, f"{module.__name__}.{name} takes a kind"


# --------------------------------------------------------------------------- forward


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("causal", [False, True])
def test_public_attention_is_the_entry_forward(kind, causal):
    G = _logits(5, (3,))
    np.testing.assert_array_equal(cl.attention(G.numpy(), kind, causal),
                                  attention_kind(kind).forward(G, causal).numpy())


@pytest.mark.parametrize("causal", [False, True])
def test_linear_forward_divides_by_the_visible_count(causal):
    L = 5
    G = _logits(L)
    A = attention_kind("linear").forward(G, causal).numpy()
    if not causal:
        np.testing.assert_allclose(A, G.numpy() / L, rtol=1e-15)
    else:
        want = np.tril(G.numpy()) / np.arange(1, L + 1)[:, None]
        np.testing.assert_allclose(A, want, rtol=1e-15)


@pytest.mark.parametrize("causal", [False, True])
def test_softmax_forward_normalises_the_visible_row(causal):
    L = 5
    G = _logits(L).numpy()
    A = attention_kind("softmax").forward(torch.as_tensor(G), causal).numpy()
    for row in range(L):
        seen = slice(0, row + 1) if causal else slice(0, L)
        e = np.exp(G[row, seen] - G[row, seen].max())
        np.testing.assert_allclose(A[row, seen], e / e.sum(), rtol=1e-13)
        assert (A[row, seen.stop:] == 0).all()


# --------------------------------------------------------------------------- backward against autograd


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("L", [2, 3, 7])
def test_backward_agrees_with_autograd(kind, causal, L):
    entry = attention_kind(kind)
    G = _logits(L, (4,), seed=L).requires_grad_(True)
    dA = _logits(L, (4,), seed=100 + L, scale=1.0)
    A = entry.forward(G, causal)
    (A * dA).sum().backward()
    got = entry.backward(A.detach(), dA.clone(), causal)
    np.testing.assert_allclose(got.numpy(), G.grad.numpy(), rtol=1e-12, atol=1e-14)
    if causal:  # hidden logits do not enter A: their gradient is exactly 0
        assert (np.triu(got.numpy(), 1) == 0).all()


@pytest.mark.parametrize("kind", KINDS)
def test_backward_writes_into_dA(kind):
    G, dA = _logits(4), _logits(4, seed=1)
    A = attention_kind(kind).forward(G, False)
    out = attention_kind(kind).backward(A, dA, False)
    assert out.data_ptr() == dA.data_ptr()


# --------------------------------------------------------------------------- one entry = one kind


def test_a_new_entry_is_a_new_kind_everywhere(monkeypatch):
    # a made-up kind, elementwise tanh pooling: registering it is enough for the spec, the
    # checked forward map and the evidence of the logits to use it (nothing else branches on the name)
    def forward(G, causal):
        return torch.tanh(G) / G.shape[-1]

    def backward(A, dA, causal):
        L = A.shape[-1]
        return dA.mul_(1 - (A * L) ** 2).div_(L)

    toy = AttentionKind("tanh", forward, backward, "copylib.posterior.order_parameters.prior_action_linear",
                        "copylib.theory.linear")
    monkeypatch.setitem(attention_module._KINDS, "tanh", toy)
    assert attention_kinds() == ("linear", "softmax", "tanh")
    spec = cl.ModelSpec(L=4, V=3, kind="tanh")
    G = _logits(4, (2,))
    np.testing.assert_array_equal(cl.attention(G.numpy(), "tanh"), forward(G, False).numpy())
    rng = np.random.default_rng(0)
    C = cl.cooccurrence(cl.copy_task(20, 4, 3, rng)[0])
    g, b = rng.normal(size=(4, 4)), rng.normal()
    want = cl.negative_log_evidence(forward(torch.as_tensor(g + b), False).numpy(), C, spec) + cl.prior_energy(
        g, np.asarray(b), np.zeros((3, 3)), spec)
    np.testing.assert_allclose(cl.effective_action(g, np.asarray(b), C, spec), want, rtol=1e-13)
    with pytest.raises(ValueError, match="spec.kind must be 'linear'"):
        check_spec(spec, kind="linear")
    with pytest.raises(ValueError, match="no landscape figure"):
        explorers.landscape_figure(100.0, 8, 3, "tanh")
