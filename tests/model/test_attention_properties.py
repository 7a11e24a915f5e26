"""Property tests: the registry of attention kinds (copylib.model.attention).

For every registered kind and random logits (any batch, ``L``, scale, causal or
not): the forward map is finite with the documented shape and the backward pass
is the autograd gradient of the forward map; an unregistered kind raises a
``ValueError`` naming ``kind``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from copylib.model.attention import AttentionKind, attention_kind, attention_kinds

from props_helpers import assert_finite, budget, covers, raises_naming


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


kinds = st.sampled_from(attention_kinds())


@covers(AttentionKind, attention_kind, attention_kinds)
@budget(40)
@given(kind=kinds, L=st.integers(2, 7), batch=st.sampled_from([(), (2,), (2, 3)]), causal=st.booleans(),
       log_scale=st.floats(-3, 1.5), seed=st.integers(0, 2**32 - 1))
def test_forward_and_backward_of_every_kind(kind, L, batch, causal, log_scale, seed):
    entry = attention_kind(kind)
    assert isinstance(entry, AttentionKind) and entry.name == kind
    rng = np.random.default_rng(seed)
    G = torch.as_tensor(rng.normal(size=batch + (L, L)) * 10.0**log_scale).requires_grad_(True)
    dA = torch.as_tensor(rng.normal(size=batch + (L, L)))
    A = entry.forward(G, causal)
    assert A.shape == G.shape and A.dtype == torch.float64
    assert_finite(A)
    if causal:
        assert (torch.triu(A.detach(), 1) == 0).all()
    (A * dA).sum().backward()
    dG = entry.backward(A.detach(), dA.clone(), causal)
    assert_finite(dG)
    scale = float(dA.abs().max()) * max(1.0, float(A.detach().abs().max()))
    np.testing.assert_allclose(dG.numpy(), G.grad.numpy(), rtol=1e-10, atol=1e-13 * scale)


@covers(attention_kinds, attention_kind, AttentionKind)
@budget(10)
@given(kind=kinds)
def test_every_entry_names_its_prior_and_theory(kind):
    entry = attention_kind(kind)
    assert kind in attention_kinds() and isinstance(attention_kinds(), tuple)
    assert callable(entry.prior_action_function())
    assert entry.theory_module().__name__ == entry.theory


@covers(attention_kind)
@budget(40)
@given(kind=st.one_of(st.text(max_size=8), st.none(), st.integers(), st.lists(kinds, max_size=2).map(tuple))
       .filter(lambda k: k not in attention_kinds()))
def test_unregistered_kind_is_rejected(kind):
    with raises_naming("kind", ValueError):
        attention_kind(kind)
