"""Execute every chapter of the book, exactly as the book build does.

The chapters are MyST Markdown notebooks listed in ``_toc.yml``. Each one is
read with jupytext and executed with nbclient in its own directory; any cell
that raises (in particular a failing ``assert`` that checks a claim of the
text) fails the test of that chapter.
"""

from __future__ import annotations

from pathlib import Path

import jupytext
import pytest
import yaml
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
TOC = ROOT / "_toc.yml"
BOOK = ROOT / "book"
SUFFIXES = (".md", ".ipynb")
CELL_TIMEOUT = 600  # seconds, as execute.timeout in _config.yml


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
_executed: set[str] = set()


@pytest.fixture(scope="module")
def records_dir(tmp_path_factory) -> Path:
    """One folder for this session's check records, away from any book build's."""
    return tmp_path_factory.mktemp("check_records")


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


@pytest.mark.parametrize(
    "chapter", NOTEBOOKS, ids=[str(p.relative_to(ROOT)) for p in NOTEBOOKS]
)
def test_chapter_executes(chapter: Path, records_dir: Path, monkeypatch):
    if not chapter.exists():
        pytest.fail(f"chapter listed in _toc.yml does not exist: {chapter}")
    if chapter.stem == REPORT:
        from copylib.checks import chapters_with_checks

        not_run = sorted(set(chapters_with_checks(ROOT)) - _executed)
        if not_run:
            pytest.skip(f"the validation report needs the other chapters run first in this session; not run: {not_run}")
    monkeypatch.setenv("COPYHEAD_CHECKS_DIR", str(records_dir))  # the kernel inherits it
    notebook = jupytext.read(chapter, fmt="md:myst") if chapter.suffix == ".md" else jupytext.read(chapter)
    client = NotebookClient(
        notebook,
        kernel_name="python3",
        timeout=CELL_TIMEOUT,
        allow_errors=False,
        resources={"metadata": {"path": str(chapter.parent)}},
    )
    # Raises nbclient.exceptions.CellExecutionError (with the traceback of the
    # failing cell) if any cell raises.
    client.execute()
    _executed.add(chapter.stem)
