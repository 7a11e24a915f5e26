"""copylib.checks: outcomes are recorded faithfully, failures raise, stale records are refused."""

from __future__ import annotations

import json

import numpy as np
import pytest

from copylib import checks


@pytest.fixture
def book(tmp_path, monkeypatch):
    """A minimal book root with one chapter, records in their own folder."""
    (tmp_path / "_toc.yml").write_text("root: book/intro\n")
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "ch.md").write_text("checks = cl.Checks('ch')\n")
    monkeypatch.chdir(tmp_path / "book")
    monkeypatch.setenv(checks._ENV_DIR, str(tmp_path / "records"))
    return tmp_path


def test_passing_checks_are_recorded_with_measured_and_tolerance(book):
    c = checks.Checks("ch")
    c.close("close", 1.0, 1.05, rtol=0.1)
    c.below("below", np.array([[1.0, 3.0], [2.0, 0.0]]), 4.0)
    c.above("above", 3.0, np.array([1.0, 2.5]))
    c.true("identity", np.array([True, True]), measured="2 of 2")
    data = json.loads((book / "records" / "ch.json").read_text())
    rows = data["checks"]
    assert [r["claim"] for r in rows] == ["close", "below", "above", "identity"]
    assert all(r["passed"] for r in rows)
    assert rows[0]["measured"].startswith("1 vs 1.05") and "rtol 0.1" in rows[0]["tolerance"]
    assert rows[1]["measured"] == "3" and rows[1]["tolerance"] == "< 4"      # the worst element
    assert rows[2]["measured"] == "3" and rows[2]["tolerance"] == "> 2.5"    # the tightest bound
    assert rows[3]["measured"] == "2 of 2"


@pytest.mark.parametrize("call", [
    lambda c: c.close("c", 1.0, 1.2, atol=0.1),
    lambda c: c.close("c", np.array([1.0, 2.0]), np.array([1.0, 2.5]), rtol=0.1),
    lambda c: c.below("b", np.array([1.0, 4.0]), 4.0),        # strict: equality fails
    lambda c: c.above("a", 2.0, 2.0),
    lambda c: c.true("t", np.array([True, False])),
])
def test_failing_check_raises_and_is_still_recorded(book, call):
    c = checks.Checks("ch")
    with pytest.raises(AssertionError, match=r"\[ch\]"):
        call(c)
    rows = json.loads((book / "records" / "ch.json").read_text())["checks"]
    assert len(rows) == 1 and rows[0]["passed"] is False


def test_nan_is_an_error_not_a_pass(book):
    c = checks.Checks("ch")
    with pytest.raises(ValueError, match="measured must be finite"):
        c.below("nan", np.nan, 1.0)
    with pytest.raises(ValueError, match="bound must be finite"):
        c.above("nan bound", 1.0, np.nan)


def test_invalid_arguments_name_the_parameter(book):
    c = checks.Checks("ch")
    with pytest.raises(ValueError, match="atol and rtol"):
        c.close("c", 1.0, 1.0)
    with pytest.raises(ValueError, match="claim"):
        c.below("  ", 1.0, 2.0)
    with pytest.raises(TypeError, match="condition"):
        c.true("t", 1.5)
    with pytest.raises(ValueError, match="chapter"):
        checks.Checks("book/ch")
    with pytest.raises(FileNotFoundError, match="missing"):
        checks.Checks("missing")


def test_load_records_refuses_missing_stale_and_corrupt(book):
    checks.Checks("ch").below("b", 1.0, 2.0)
    assert [r.claim for r in checks.load_records(["ch"])] == ["b"]
    with pytest.raises(RuntimeError, match="other: no record"):
        checks.load_records(["ch", "other"])
    (book / "book" / "ch.md").write_text("checks = cl.Checks('ch')  # edited\n")
    with pytest.raises(RuntimeError, match="stale"):
        checks.load_records(["ch"])
    (book / "records" / "ch.json").write_text('{"chapter": "ch", "source_sha')  # a torn write
    with pytest.raises(RuntimeError, match="unreadable"):
        checks.load_records(["ch"])


def test_new_run_replaces_the_old_record(book):
    checks.Checks("ch").below("first run", 1.0, 2.0)
    checks.Checks("ch")
    assert checks.load_records(["ch"]) == []


def test_chapters_with_checks_and_table(book):
    (book / "book" / "prose.md").write_text("no checks here\n")
    assert checks.chapters_with_checks() == ["ch"]
    c = checks.Checks("ch")
    c.below("x < 2 <b>", 1.0, 2.0)
    table = checks.report_table(checks.load_records(["ch"]))
    assert table.count("<tr>") == 2 and "&lt;b&gt;" in table   # header + one row, escaped
    assert '<a href="ch.html">ch</a>' in table


def test_each_check_prints_one_line(book, capsys):
    c = checks.Checks("ch")
    c.below("small", 1.0, 2.0)
    assert capsys.readouterr().out == "\u2714 check: small \u2014 measured 1; required < 2\n"


def test_book_root_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="_toc.yml"):
        checks._book_root(tmp_path)


# Explicit source/directory (as a chapter outside the default layout would use them).

@pytest.fixture
def explicit(tmp_path):
    source = tmp_path / "chapter.md"
    source.write_text("text", encoding="utf-8")
    return checks.Checks("chapter", source=source, directory=tmp_path / "records")


def test_close_accepts_numpy_tolerances(explicit):
    # chapters pass tolerances such as 5 * se, a numpy float
    explicit.close("agrees", 1.0, 1.05, atol=np.float64(0.1), rtol=np.float64(0.0))
    rec = explicit.records[-1]
    assert rec.passed and rec.tolerance == "|diff| <= atol 0.1"


def test_true_accepts_numpy_bool(explicit):
    assert explicit.true("holds", np.bool_(True), measured="seen") is None
    assert explicit.records[-1].measured == "seen"


@pytest.mark.parametrize("method, args", [("below", (1.0, 2.0)), ("above", (3.0, 2.0)), ("true", (True,)),
                                          ("close", (1.0, 1.0))])
def test_a_tolerance_set_after_seeing_data_is_recorded_printed_and_marked(book, capsys, method, args):
    c = checks.Checks("ch")
    kw = {"atol": 0.1} if method == "close" else {}
    getattr(c, method)("claim <i>", *args, post_hoc="after a pilot run <b>", **kw)
    getattr(c, method)("planned", *args, **kw)
    first, second = checks.load_records(["ch"])
    assert first.post_hoc == "after a pilot run <b>" and second.post_hoc == ""
    assert capsys.readouterr().out.splitlines()[0].endswith("(set after seeing data: after a pilot run <b>)")
    table = checks.report_table([first, second])
    assert table.count("set after seeing data") == 1 and "after a pilot run &lt;b&gt;" in table
    with pytest.raises(TypeError, match="post_hoc"):
        getattr(c, method)("bad", *args, post_hoc=None, **kw)


# The nearest wrong alternative (issue 38): the same tolerance is applied to it; a check it passes too fails.

@pytest.mark.parametrize("method, args, alt_fails, alt_passes", [
    ("close", (1.0, 1.05), 2.0, 1.02),                      # atol 0.1 below
    ("below", (1.0, 2.0), 3.0, 1.5),
    ("above", (3.0, 2.0), 1.0, 2.5),
    ("true", (True,), False, True),
])
def test_an_alternative_that_fails_discriminates_one_that_passes_does_not(book, capsys, method, args,
                                                                            alt_fails, alt_passes):
    c = checks.Checks("ch")
    kw = {"atol": 0.1} if method == "close" else {}
    getattr(c, method)("claim", *args, alternative=("no effect <b>", alt_fails), **kw)
    rec = c.records[-1]
    assert rec.passed and rec.discriminates is True and rec.alternative == "no effect <b>"
    assert rec.alternative_measured and capsys.readouterr().out.rstrip().endswith(", which fails it")
    with pytest.raises(AssertionError, match="does not discriminate"):
        getattr(c, method)("weak claim", *args, alternative=("a competing theory", alt_passes), **kw)
    rec = c.records[-1]
    assert rec.passed is False and rec.discriminates is False      # recorded as failed, not dropped
    first, second = checks.load_records(["ch"])
    assert (first.discriminates, second.discriminates) == (True, False)
    table = checks.report_table([first, second])
    assert "no effect &lt;b&gt;" in table and table.count("does not discriminate") == 1
    assert checks.alternative_counts([first, second]) == (2, 1, 0)


def test_a_failing_check_reports_its_own_failure_not_the_alternative(book):
    c = checks.Checks("ch")
    with pytest.raises(AssertionError, match="required") as err:
        c.below("b", 3.0, 2.0, alternative=("same", 3.0))
    assert "discriminate" not in str(err.value) and c.records[-1].passed is False


def test_close_alternative_fails_if_any_element_is_outside(book):
    c = checks.Checks("ch")
    # measured matches everywhere; the alternative is off in one element only: it still fails, so it discriminates
    c.close("profile", np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 3.0]), atol=0.1,
            alternative=("flat", np.array([1.0, 2.0, 3.5])))
    assert c.records[-1].discriminates and c.records[-1].alternative_measured.startswith("3.5")
    # a scalar alternative is broadcast to the shape of measured
    c.below("all small", np.array([0.1, 0.2]), 1.0, alternative=("big", 2.0))
    assert c.records[-1].alternative_measured == "2"


def test_bad_alternatives_name_the_parameter(book):
    c = checks.Checks("ch")
    for bad in [("", 1.0), "no effect", ("a", 1.0, 2.0), (None, 1.0)]:
        with pytest.raises(TypeError, match="alternative"):
            c.below("b", 1.0, 2.0, alternative=bad)
    with pytest.raises(ValueError, match="alternative value must be finite"):
        c.above("a", 3.0, 2.0, alternative=("x", np.nan))
    with pytest.raises(ValueError, match="alternative value must broadcast"):
        c.close("c", np.ones(3), 1.0, atol=0.1, alternative=("x", np.ones(2)))
    with pytest.raises(TypeError, match="alternative value of a true"):
        c.true("t", True, alternative=("x", 0.5))
    assert c.records == []


def test_old_records_without_alternative_fields_load(book):
    checks.Checks("ch")
    path = book / "records" / "ch.json"
    data = json.loads(path.read_text())
    data["checks"] = [{"chapter": "ch", "claim": "old", "measured": "1", "tolerance": "< 2", "passed": True}]
    path.write_text(json.dumps(data))
    (rec,) = checks.load_records(["ch"])
    assert rec.alternative == "" and rec.discriminates is None
    assert checks.alternative_counts([rec]) == (0, 0, 0) and "alternative" not in checks.report_table([rec])


@pytest.mark.parametrize("method, args", [("close", (1.0, 1.05)), ("below", (1.0, 2.0)), ("above", (3.0, 2.0)),
                                          ("true", (True,))])
def test_a_check_without_alternative_records_why(book, method, args):
    c = checks.Checks("ch")
    kw = {"atol": 0.1} if method == "close" else {}
    getattr(c, method)("identity", *args, no_alternative=" an identity <i> ", **kw)
    getattr(c, method)("silent", *args, **kw)
    first, second = checks.load_records(["ch"])
    assert first.no_alternative == "an identity <i>" and first.discriminates is None and second.no_alternative == ""
    table = checks.report_table([first, second])
    assert table.count("no alternative:") == 1 and "an identity &lt;i&gt;" in table
    assert checks.alternative_counts([first, second]) == (0, 0, 1)
    with pytest.raises(ValueError, match="either alternative or no_alternative"):
        getattr(c, method)("both", *args, alternative=("x", args[0]), no_alternative="why", **kw)
    with pytest.raises(TypeError, match="no_alternative must be a string"):
        getattr(c, method)("bad", *args, no_alternative=1, **kw)
    assert len(c.records) == 2
