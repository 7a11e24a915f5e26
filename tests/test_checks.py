"""copylib.checks: records, pass/fail and the tolerance types the chapters pass."""

from __future__ import annotations

import json

import numpy as np
import pytest

from copylib.checks import Checks


@pytest.fixture
def checks(tmp_path):
    source = tmp_path / "chapter.md"
    source.write_text("text", encoding="utf-8")
    return Checks("chapter", source=source, directory=tmp_path / "records")


def test_close_accepts_numpy_tolerances(checks):
    # chapters pass tolerances such as 5 * se, a numpy float
    rec = checks.close("agrees", 1.0, 1.05, atol=np.float64(0.1), rtol=np.float64(0.0))
    assert rec.passed and rec.tolerance == "|diff| <= atol 0.1"


def test_failure_is_recorded_then_raised(checks, tmp_path):
    with pytest.raises(AssertionError, match="too big"):
        checks.below("too big", np.array([0.5, 2.0]), 1.0)
    data = json.loads((tmp_path / "records" / "chapter.json").read_text(encoding="utf-8"))
    assert [r["passed"] for r in data["checks"]] == [False]
    assert data["checks"][0]["measured"] == "2"


def test_inequalities_are_strict(checks):
    with pytest.raises(AssertionError):
        checks.below("strict", 1.0, 1.0)
    with pytest.raises(AssertionError):
        checks.above("strict", 1.0, 1.0)
    assert checks.close("non-strict", 1.0, 1.5, atol=0.5).passed


def test_true_needs_a_bool(checks):
    with pytest.raises(TypeError):
        checks.true("not a bool", 1)
    assert checks.true("holds", np.bool_(True), measured="seen").measured == "seen"
