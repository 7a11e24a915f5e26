"""Property tests: watching the chains (copylib.inference.monitoring)."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from copylib.inference import monitoring as mo

from props_helpers import bad_ints, budget, covers, raises_naming

seeds = st.integers(0, 2**32 - 1)


@covers(mo.name_chains)
@budget(30)
@given(mask=st.lists(st.booleans(), min_size=1, max_size=30), limit=st.integers(1, 12))
def test_name_chains_lists_the_true_entries(mask, limit):
    text = mo.name_chains(np.array(mask), limit)
    idx = [i for i, m in enumerate(mask) if m]
    assert text.startswith("chain " if len(idx) == 1 else "chains ")
    listed = [int(v) for v in re.findall(r"\d+", text)]
    assert listed == idx[:limit]
    assert text.endswith(" ...") == (len(idx) > limit)


@covers(mo.name_chains)
@budget(10)
@given(limit=bad_ints(1))
def test_name_chains_invalid(limit):
    with raises_naming("limit"):
        mo.name_chains(np.array([True]), limit)


@covers(mo.AcceptanceMonitor)
@budget(30)
@given(R=st.integers(1, 4), n=st.integers(1, 150), max_rejections=st.integers(1, 20), p=st.floats(0.0, 1.0),
       seed=seeds)
def test_acceptance_monitor_counts_and_declares_stuck_chains(R, n, max_rejections, p, seed):
    """The monitor raises exactly when some chain has rejected max_rejections proposals in a row, naming
    it; otherwise the acceptance rate is the fraction accepted (checked against min_accept from 100 steps)."""
    rng = np.random.default_rng(seed)
    accept = rng.random((n, R)) < p
    monitor = mo.AcceptanceMonitor(R, max_rejections, 0.3)
    streak = np.zeros(R, dtype=int)
    for t in range(n):
        streak = np.where(accept[t], 0, streak + 1)
        if (streak >= max_rejections).any():
            with pytest.raises(FloatingPointError, match=rf"{mo.name_chains(streak >= max_rejections)} stuck"):
                monitor.update(torch.as_tensor(accept[t]), torch.ones(R, dtype=torch.float64), "at step")
            return
        monitor.update(torch.as_tensor(accept[t]), torch.ones(R, dtype=torch.float64), "at step")
    rate = accept.mean(0)
    if n >= 100 and (rate < 0.3).any():
        with pytest.raises(FloatingPointError, match="acceptance rate"):
            monitor.accept_rate()
    else:
        np.testing.assert_allclose(monitor.accept_rate(), rate, rtol=1e-15)


@covers(mo.AcceptanceMonitor)
@budget(20)
@given(data=st.data())
def test_acceptance_monitor_invalid(data):
    args = dict(R=2, max_rejections=10, min_accept=0.02)
    name = data.draw(st.sampled_from(sorted(args)))
    if name == "min_accept":
        args[name] = data.draw(st.sampled_from([-0.1, 1.0, 2.0, float("nan"), "0.1"]))
    else:
        args[name] = data.draw(bad_ints(1))
    with raises_naming(name):
        mo.AcceptanceMonitor(**args)


@covers(mo.DrawRecorder)
@budget(20)
@given(R=st.integers(1, 4), n_kept=st.integers(1, 6), extra=st.integers(0, 3), custom=st.booleans(), seed=seeds)
def test_draw_recorder_keeps_n_kept_draws(R, n_kept, extra, custom, seed):
    """At most n_kept draws are kept, as (R, n_kept, ...) arrays that are copies of what was recorded."""
    gen = torch.Generator().manual_seed(seed)
    record = (lambda p: {"s": p["x"].sum(1)}) if custom else None
    rec = mo.DrawRecorder(record, lambda p: dict(p), n_kept, R)
    kept = []
    for _ in range(n_kept + extra):
        x = torch.randn(R, 3, generator=gen, dtype=torch.float64)
        E = (x * x).sum(1)
        rec.keep({"x": x}, E)
        kept.append((x.clone(), E.clone()))
        x.zero_()  # the recorder holds copies
    samples = rec.samples()
    assert set(samples) == ({"s"} if custom else {"x"})
    ref = np.stack([(x.sum(1) if custom else x).numpy() for x, _ in kept[:n_kept]], axis=1)
    np.testing.assert_array_equal(samples["s" if custom else "x"], ref)
    np.testing.assert_array_equal(rec.energy(), np.stack([E.numpy() for _, E in kept[:n_kept]], axis=1))


@covers(mo.DrawRecorder)
@budget(10)
@given(data=st.data())
def test_draw_recorder_invalid(data):
    name = data.draw(st.sampled_from(["record", "n_kept", "R"]))
    args = dict(record=None, default=dict, n_kept=2, R=2)
    if name == "record":
        args[name] = data.draw(st.sampled_from([1, "m"]))
        with raises_naming(name):
            mo.DrawRecorder(**args)
        bad = mo.DrawRecorder(lambda p: {"x": p["x"][:1]}, dict, 1, 2)
        bad.keep({"x": torch.zeros(2, 1, dtype=torch.float64)}, torch.zeros(2, dtype=torch.float64))
        with raises_naming("record"):
            bad.samples()
        return
    args[name] = data.draw(bad_ints(1))
    with raises_naming(name):
        mo.DrawRecorder(**args)
