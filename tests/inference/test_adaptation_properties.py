"""Property tests: the warmup adaptation of the Langevin sampler (copylib.inference.adaptation)."""

from __future__ import annotations

import math

import numpy as np
import torch
from hypothesis import given
from hypothesis import strategies as st

from copylib.inference import adaptation as ad

from props_helpers import bad_ints, budget, covers, log_uniform, raises_naming

seeds = st.integers(0, 2**32 - 1)


@covers(ad.DualAveraging)
@budget(25)
@given(R=st.integers(1, 5), h0=log_uniform(1e-4, 10.0), target=st.floats(0.05, 0.95), n=st.integers(1, 30),
       seed=seeds)
def test_dual_averaging_raises_the_step_where_acceptance_is_higher(R, h0, target, n, seed):
    """Fed acceptance ratios that are higher chain by chain, the step sizes end up at least as
    large; every step is finite and > 0; the last update returns the averaged step."""
    rng = np.random.default_rng(seed)
    h = torch.full((R,), h0, dtype=torch.float64)
    lo, hi = ad.DualAveraging(h, target), ad.DualAveraging(h, target)
    for t in range(n):
        log_r = torch.as_tensor(-rng.exponential(2.0, R))
        last = t == n - 1
        h_lo, h_hi = lo.update(log_r - torch.as_tensor(rng.exponential(1.0, R)), last), hi.update(log_r, last)
        assert bool((h_hi >= h_lo).all()) and bool((h_lo > 0).all()) and bool(torch.isfinite(h_hi).all())
    assert torch.equal(h_hi, hi.mean_step)
    hi.restart(h)
    assert hi.t == 0
    # exp(log h) is h up to rounding, which grows with |log h|
    torch.testing.assert_close(hi.mean_step, h, rtol=4 * 2.0**-52 * max(1.0, abs(math.log(h0))), atol=0)


@covers(ad.DualAveraging)
@budget(20)
@given(data=st.data())
def test_dual_averaging_invalid(data):
    name = data.draw(st.sampled_from(["h", "target_accept"]))
    args = dict(h=torch.ones(3, dtype=torch.float64), target_accept=0.57)
    if name == "h":
        args[name] = data.draw(st.sampled_from([torch.zeros(3, dtype=torch.float64),
                                                torch.tensor([1.0, math.nan]), torch.ones(2, 2), 1.0]))
    else:
        args[name] = data.draw(st.sampled_from([0.0, 1.0, 1.5, -0.2, math.nan, "0.5"]))
    with raises_naming(name):
        ad.DualAveraging(**args)


@covers(ad.ScaleWindows)
@budget(15)
@given(R=st.integers(1, 4), sizes=st.lists(st.integers(1, 4), min_size=1, max_size=3),
       n_warmup=st.integers(160, 400), frozen=st.integers(0, 3), seed=seeds)
def test_scale_windows_are_the_root_mean_variance_of_each_window(R, sizes, n_warmup, frozen, seed):
    """Outside the window ends nothing changes; at a window's end the new scale of a group is the root
    mean of the per-entry (ddof 0) variances over the window; a chain that did not move keeps its scale."""
    rng = np.random.default_rng(seed)
    group_of = torch.cat([torch.full((n,), k, dtype=torch.long) for k, n in enumerate(sizes)])
    windows = ad.ScaleWindows(n_warmup, group_of, sizes)
    scales = [np.full(R, 7.0) for _ in sizes]
    history = []
    for t in range(1, n_warmup + 1):
        x = rng.normal(size=(R, sum(sizes))) * rng.uniform(0.5, 2.0, size=(1, sum(sizes)))
        if frozen < R:
            x[frozen] = 1.0
        history.append(x)
        new = windows.observe(t, torch.as_tensor(x), scales)
        ends = [w1 for _, w1 in windows.windows]
        if t not in ends:
            assert new is None
            continue
        w0 = max(w for w, w1 in windows.windows if w1 == t)
        var = np.stack(history[w0:t]).var(axis=0)
        for k in range(len(sizes)):
            cols = (group_of == k).numpy()
            expected = np.sqrt(var[:, cols].mean(1))
            expected = np.where(expected > 0, expected, scales[k])
            np.testing.assert_allclose(new[k], expected, rtol=1e-10)
            if frozen < R:
                assert new[k][frozen] == scales[k][frozen]
        scales = new


@covers(ad.ScaleWindows)
@budget(15)
@given(data=st.data())
def test_scale_windows_invalid(data):
    name = data.draw(st.sampled_from(["n_warmup", "group_of"]))
    args = dict(n_warmup=200, group_of=torch.zeros(3, dtype=torch.long), sizes=[3])
    if name == "n_warmup":
        args[name] = data.draw(st.one_of(st.integers(0, 159), bad_ints(160)))
    else:
        args[name] = torch.zeros(2, dtype=torch.long)
    with raises_naming(name):
        ad.ScaleWindows(**args)
