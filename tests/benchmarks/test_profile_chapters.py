"""Tests of benchmarks/profile_chapters.py: the pure parts (attribution and summary of a profile)."""

from __future__ import annotations

import cProfile
import pstats
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import profile_chapters as pc  # noqa: E402  (a script directory, not a package)


def _entry(tt, ct, calls=1):
    return (calls, calls, tt, ct, {})


STATS = {
    ("/repo/copylib/theory/linear.py", 10, "p2_numerical"): _entry(0.5, 9.0),
    ("/repo/copylib/theory/linear.py", 90, "_descend_many"): _entry(2.0, 7.0, 30),
    ("~", 0, "<built-in method torch.bmm>"): _entry(3.0, 3.0, 100),
    ("~", 0, "<method 'sum' of 'torch._C.TensorBase' objects>"): _entry(1.0, 1.0, 50),
    ("/site-packages/scipy/optimize/_zeros_py.py", 712, "brentq"): _entry(0.5, 4.0),
    ("/usr/lib/python3.11/asyncio/events.py", 80, "_run"): _entry(3.0, 12.0),
}


@pytest.mark.parametrize("filename, func, package", [
    ("/repo/copylib/theory/linear.py", "f", "copylib"),
    ("/x/site-packages/torch/nn/functional.py", "linear", "torch"),
    ("~", "<built-in method torch.bmm>", "torch"),
    ("~", "<method 'sum' of 'torch._C.TensorBase' objects>", "torch"),
    ("~", "<built-in method numpy.array>", "numpy"),
    ("~", "<built-in method builtins.exec>", "other"),
    ("/usr/lib/python3.11/json/decoder.py", "decode", "other"),
])
def test_package_of(filename, func, package):
    assert pc.package_of(filename, func) == package


def test_summarise_ranks_and_shares():
    s = pc.summarise(STATS, top=2)
    assert s.total == pytest.approx(10.0)  # the sum of own times
    assert s.shares["copylib"] == pytest.approx(0.25) and s.shares["torch"] == pytest.approx(0.4)
    assert s.shares["other"] == pytest.approx(0.3) and sum(s.shares.values()) == pytest.approx(1.0)
    # cumulative: copylib functions only, largest first
    assert [r.label for r in s.by_cumulative] == ["copylib/theory/linear.py:p2_numerical",
                                                  "copylib/theory/linear.py:_descend_many"]
    # own time: the packages' functions, never "other" (asyncio's 3 s is left out)
    assert [r.label for r in s.by_total] == ["<built-in method torch.bmm>", "copylib/theory/linear.py:_descend_many"]
    assert s.by_total[1].ncalls == 30
    text = pc.format_summary(s)
    assert "p2_numerical" in text and "torch 40%" in text
    with pytest.raises(ValueError, match="top"):
        pc.summarise(STATS, top=0)


def test_summarise_reads_a_real_profile(tmp_path):
    prof = cProfile.Profile()
    prof.enable()
    sorted(range(1000), key=lambda x: -x)
    prof.disable()
    out = tmp_path / "p.pstats"
    prof.dump_stats(str(out))
    s = pc.summarise(pstats.Stats(str(out)).stats, top=3)
    assert s.total > 0 and s.by_cumulative == []  # no copylib code ran
    assert abs(sum(s.shares.values()) - 1) < 1e-9
