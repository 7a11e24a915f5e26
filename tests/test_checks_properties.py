"""Property tests for the alternatives of copylib.checks: a check passes exactly when its measured value
meets the tolerance and the nearest wrong alternative does not."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from copylib import checks

from props_helpers import budget, covers

finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)


@covers(checks.Checks, checks.CheckRecord, checks.alternative_counts, checks.report_table)
@budget(40)
@given(finite, finite, finite, st.floats(0, 10, allow_nan=False), st.booleans(), st.booleans())
def test_a_check_passes_exactly_when_it_holds_and_its_alternative_fails(x, y, a, tol, cond, alt_cond):
    with tempfile.TemporaryDirectory() as d:
        source = Path(d) / "ch.md"
        source.write_text("checks", encoding="utf-8")
        c = checks.Checks("ch", source=source, directory=Path(d) / "records")
        atol = tol + 1e-300
        for method, args, kwargs, holds, alt_holds in [
            (c.below, (x, y), {}, x < y, a < y),
            (c.above, (x, y), {}, x > y, a > y),
            (c.close, (x, y), {"atol": atol}, abs(x - y) <= atol, abs(a - y) <= atol),
            (c.true, (cond,), {}, cond, alt_cond),
        ]:
            alt = ("the alternative", alt_cond if method == c.true else a)
            if holds and not alt_holds:
                method("claim", *args, alternative=alt, **kwargs)
            else:
                with pytest.raises(AssertionError, match="claim"):
                    method("claim", *args, alternative=alt, **kwargs)
            rec = c.records[-1]
            assert rec.passed == (holds and not alt_holds) and rec.discriminates == (not alt_holds)
        n_alt, n_disc, n_why = checks.alternative_counts(c.records)
        assert n_alt == 4 and n_why == 0 and n_disc == sum(r.discriminates for r in c.records)
        assert checks.report_table(c.records).count("does not discriminate") == 4 - n_disc


@covers(checks.data_set_tolerance, checks.DataSetTolerance)
@budget(30)
@given(st.integers(2, 4), st.integers(1, 8), st.floats(-5, 5), st.floats(0.1, 10), st.integers(0, 2**32 - 1))
def test_data_set_tolerance_is_affine_equivariant_and_pools_every_run(n_sets, n_points, shift, factor, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n_sets, n_points))
    w = rng.uniform(0.5, 2, size=n_points)
    r = checks.data_set_tolerance(x, scale=w, level=0.05)
    moved = checks.data_set_tolerance(shift + factor * x, scale=w, level=0.05)
    assert r.dof == n_points * (n_sets - 1) and r.quantile > 0
    np.testing.assert_allclose(moved.mean, shift + factor * r.mean, atol=1e-9)
    np.testing.assert_allclose(moved.tol, factor * r.tol, rtol=1e-9)
    np.testing.assert_allclose(r.tol, r.quantile * r.s * w / np.sqrt(n_sets), rtol=1e-12)
    assert np.all(checks.data_set_tolerance(x, scale=w, level=0.01).tol > r.tol)  # a lower false-alarm rate is wider


def test_data_set_tolerance_false_alarm_rate_is_at_most_its_level():
    # a correct theory (0) with Gaussian data-set noise of standard deviation 3 / sqrt(P): over 4000
    # simulated experiments of two data sets at six P, the share that fails must not exceed level = 0.05
    # by more than 3 binomial standard errors (0.010)
    rng = np.random.default_rng(0)
    P = np.array([100.0, 200, 300, 500, 800, 1000])
    fails = 0
    for _ in range(4000):
        x = 3 / np.sqrt(P) * rng.normal(size=(2, P.size))
        r = checks.data_set_tolerance(x, scale=1 / np.sqrt(P), level=0.05)
        fails += bool(np.any(np.abs(r.mean) > r.tol))
    assert fails / 4000 <= 0.05 + 0.010


@pytest.mark.parametrize("kwargs, match", [
    ({"runs": np.zeros((1, 3))}, "runs"), ({"runs": np.zeros((2, 0))}, "runs"), ({"runs": [[0, np.nan]] * 2}, "runs"),
    ({"runs": np.zeros((2, 3)), "scale": [1, 1]}, "scale"), ({"runs": np.zeros((2, 3)), "scale": [1, 0, 1]}, "scale"),
    ({"runs": np.zeros((2, 3)), "level": 1.0}, "level"), ({"runs": np.zeros((2, 3)), "level": 0}, "level")])
def test_data_set_tolerance_rejects_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        checks.data_set_tolerance(**kwargs)
