"""Property tests for the alternatives of copylib.checks: a check passes exactly when its measured value
meets the tolerance and the nearest wrong alternative does not."""

from __future__ import annotations

import tempfile
from pathlib import Path

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
        n_alt, n_disc = checks.alternative_counts(c.records)
        assert n_alt == 4 and n_disc == sum(r.discriminates for r in c.records)
        assert checks.report_table(c.records).count("does not discriminate") == 4 - n_disc
