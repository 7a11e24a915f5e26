"""Tests of copylib.inference.proposals: the noise of the Langevin proposals."""

from __future__ import annotations

import pytest
import torch

from copylib.inference.proposals import _standard_normal


@pytest.mark.parametrize("shape", [(3,), (4, 4), (17,), (5, 7), (64, 1057), (2, 3, 40)])
def test_standard_normal_is_torch_randn_up_to_rounding(shape):
    """The sampler's vectorised normal draws are torch.randn's (same uniforms, same
    Box-Muller transform; the last bit of log/sin/cos may differ) and leave the generator
    in the same state, so chains follow the same noise as with torch.randn."""
    a_gen, b_gen = torch.Generator().manual_seed(11), torch.Generator().manual_seed(11)
    ref = torch.randn(shape, generator=a_gen, dtype=torch.float64)
    out = _standard_normal(shape, b_gen)
    assert out.shape == ref.shape and out.dtype == torch.float64
    torch.testing.assert_close(out, ref, rtol=0, atol=4 * 2.0**-52 * max(1.0, ref.abs().max().item()))
    assert torch.equal(a_gen.get_state(), b_gen.get_state())
