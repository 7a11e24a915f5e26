"""Every chapter of the book executes without error, checks included.

The chapters are MyST Markdown notebooks listed in ``_toc.yml``. They run once
per test session, in the book build (fixture ``book_build``): myst-nb executes
each one in its own directory and stops the build on a cell that raises (in
particular a failing check of a claim of the text). The test of a chapter reads
the notebook the build executed and fails unless every code cell of the source
ran, with the source's code, and none raised.
"""

from __future__ import annotations

from pathlib import Path

import jupytext
import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
TOC = ROOT / "_toc.yml"
BOOK = ROOT / "book"
SUFFIXES = (".md", ".ipynb")


def _toc_files(entry) -> list[str]:
    """All ``file``/``root`` entries of a (sub)tree of the toc, in order."""
    found: list[str] = []
    if isinstance(entry, dict):
        for key in ("root", "file"):
            if key in entry:
                found.append(entry[key])
        for key in ("parts", "chapters", "sections"):
            for child in entry.get(key, []) or []:
                found.extend(_toc_files(child))
    elif isinstance(entry, list):
        for child in entry:
            found.extend(_toc_files(child))
    return found


def _resolve(docname: str) -> Path:
    """The source file of a toc entry (given with or without suffix)."""
    path = ROOT / docname
    if path.suffix in SUFFIXES:
        return path
    for suffix in SUFFIXES:
        candidate = path.with_suffix(suffix)
        if candidate.exists():
            return candidate
    return path.with_suffix(".md")


def chapter_files() -> list[Path]:
    toc = yaml.safe_load(TOC.read_text(encoding="utf-8"))
    return [_resolve(name) for name in _toc_files(toc)]


CHAPTERS = chapter_files()


def is_notebook(path: Path) -> bool:
    """Whether the book executes ``path``: myst-nb runs a Markdown page only if its
    front matter names a kernel. Other pages (API, bibliography, Reproducing) are
    plain text whose ```bash blocks must never be run."""
    if path.suffix == ".ipynb":
        return True
    text = path.read_text(encoding="utf-8")
    if not text.startswith("---"):
        return False
    front = text.split("---", 2)[1]
    return "kernelspec" in (yaml.safe_load(front) or {})


NOTEBOOKS = [p for p in CHAPTERS if p.exists() and is_notebook(p)]


def test_toc_lists_chapters():
    assert CHAPTERS, "_toc.yml lists no chapter"
    missing = [str(p.relative_to(ROOT)) for p in CHAPTERS if not p.exists()]
    assert not missing, f"_toc.yml lists missing files: {missing}"


def test_no_orphan_chapters():
    listed = {p.resolve() for p in CHAPTERS}
    orphans = sorted(
        str(p.relative_to(ROOT))
        for p in BOOK.rglob("*.md")
        if ".ipynb_checkpoints" not in p.parts and p.resolve() not in listed
    )
    assert not orphans, f"Markdown files under book/ not listed in _toc.yml: {orphans}"


REPORT = "validation_report"


def test_no_bare_assert_in_chapters():
    """Claims are checked through copylib.checks, so the validation report lists every one."""
    offenders = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in CHAPTERS if p.stem != REPORT
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if line.lstrip().startswith("assert ")
    ]
    assert not offenders, f"use copylib.checks.Checks instead of assert: {offenders}"


def test_text_pages_are_not_notebooks():
    """The pages that are not executed are exactly those without a kernel."""
    text_pages = {p.stem for p in CHAPTERS if p.exists() and not is_notebook(p)}
    assert text_pages == {"about", "api", "bibliography", "exercises", "glossary", "notation", "reproducing",
                          "results"}


def execution_problems(source, executed) -> list[str]:
    """What is wrong with ``executed`` as a complete, error-free run of ``source``.

    Both are notebooks (nbformat nodes). Code cells are compared in order: the
    executed notebook must hold the same code (not a stale build of older
    sources), every non-empty cell must carry an execution count, and no output
    may be an error.
    """
    def code(nb):
        return [c for c in nb.cells if c.cell_type == "code"]

    mine, ran = code(source), code(executed)
    if [c.source.strip() for c in mine] != [c.source.strip() for c in ran]:
        return [f"the executed notebook's {len(ran)} code cells differ from the source's {len(mine)}"]
    problems = []
    for i, cell in enumerate(ran, 1):
        if cell.source.strip() and cell.get("execution_count") is None:
            problems.append(f"code cell {i} was not executed")
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                problems.append(f"code cell {i} raised {out.get('ename')}: {out.get('evalue')}")
    return problems


@pytest.mark.parametrize(
    "chapter", NOTEBOOKS, ids=[str(p.relative_to(ROOT)) for p in NOTEBOOKS]
)
def test_chapter_executes(chapter: Path, book_build):
    executed = book_build.executed(chapter)
    if not executed.is_file():
        pytest.fail(f"the book build did not execute {chapter.relative_to(ROOT)} "
                    f"(a cell raised, or the build stopped before it):\n{book_build.failure_report()}")
    source = jupytext.read(chapter, fmt="md:myst") if chapter.suffix == ".md" else jupytext.read(chapter)
    problems = execution_problems(source, nbformat.read(executed, as_version=4))
    assert not problems, f"{chapter.relative_to(ROOT)}: " + "; ".join(problems)


def _notebook(*cells):
    """A notebook of code cells given as (source, execution_count, outputs)."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src, execution_count=n, outputs=outs) for src, n, outs in cells]
    return nb


def test_execution_problems_accepts_a_complete_run():
    source = _notebook(("x = 1", None, []), ("", None, []))
    executed = _notebook(("x = 1", 1, [nbformat.v4.new_output("stream", text="ok")]), ("", None, []))
    assert execution_problems(source, executed) == []


def test_execution_problems_finds_each_fault():
    source = _notebook(("x = 1", None, []), ("y = x", None, []))
    error = nbformat.v4.new_output("error", ename="AssertionError", evalue="claim failed", traceback=[])
    raised = execution_problems(source, _notebook(("x = 1", 1, []), ("y = x", 2, [error])))
    assert raised == ["code cell 2 raised AssertionError: claim failed"]
    skipped = execution_problems(source, _notebook(("x = 1", 1, []), ("y = x", None, [])))
    assert skipped == ["code cell 2 was not executed"]
    stale = execution_problems(source, _notebook(("x = 2", 1, []), ("y = x", 2, [])))
    assert len(stale) == 1 and "differ from the source" in stale[0]
