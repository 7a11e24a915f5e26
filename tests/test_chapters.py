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

ROOT = Path(__file__).resolve().parents[1]
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


@pytest.mark.parametrize(
    "chapter", CHAPTERS, ids=[str(p.relative_to(ROOT)) for p in CHAPTERS]
)
def test_chapter_executes(chapter: Path):
    if not chapter.exists():
        pytest.fail(f"chapter listed in _toc.yml does not exist: {chapter}")
    notebook = jupytext.read(chapter)
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
