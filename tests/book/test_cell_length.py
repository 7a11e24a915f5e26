"""Chapters a reader finishes in one sitting, with short cells (issue 37).

* A visible code cell shows one idea in at most 15 non-blank lines; a folded one
  (``hide-input``, ``remove-input``, ``remove-cell``, ``hide-cell``: checks, glue,
  bookkeeping) in at most 25, since what it computes belongs in ``copylib.analysis``.
* A chapter's main line, its prose outside code and math before the first heading
  with *Deeper*, *Evidence* or *Appendix*, has at most 3,000 words (about 30 minutes
  of reading). Pages whose title says *Evidence*, *Validation* or *Appendix* are
  reference pages and have no main line.

Cells are read with jupytext, as myst-nb reads them, and every page listed in
``_toc.yml`` is scanned.
"""

from __future__ import annotations

import re
from pathlib import Path

import jupytext
import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 15
MAX_FOLDED_LINES = 25
MAX_MAIN_WORDS = 3000
HIDDEN_TAGS = {"hide-input", "remove-input", "remove-cell", "hide-cell"}
EVIDENCE_HEADING = re.compile(r"^#+ .*(Deeper|Evidence|Appendix)", flags=re.M)


def toc_pages() -> list[Path]:
    """The pages of ``_toc.yml`` (root and chapters), as paths of their sources."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]] + [entry["file"] for entry in toc["chapters"]]
    return [ROOT / f"{f}.md" for f in files]


def long_visible_cells(nb, max_lines: int = MAX_LINES) -> list[tuple[int, int, str]]:
    """``(cell index, non-blank lines, first line)`` of each visible code cell longer than ``max_lines``."""
    found = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or HIDDEN_TAGS & set(cell.metadata.get("tags", [])):
            continue
        lines = [line for line in cell.source.splitlines() if line.strip()]
        if len(lines) > max_lines:
            found.append((index, len(lines), lines[0]))
    return found


def code_lines(cell) -> int:
    return sum(1 for line in cell.source.splitlines() if line.strip())


def words(text: str) -> int:
    """Words of prose: inline math counts as one word, as a reader reads it."""
    return len(re.findall(r"[A-Za-z][A-Za-z'-]+", re.sub(r"\$[^$]*\$", " x ", text)))


def main_line_words(source: str) -> int | None:
    """Prose words of a MyST page before its first *Deeper*/*Evidence*/*Appendix* heading, None for a
    reference page. Counted as the issue measures them: back-tick fenced blocks (code cells, directives)
    are left out, inline math counts as one word."""
    body = re.sub(r"^---\n.*?\n---\n", "", source, count=1, flags=re.S)
    prose = re.sub(r"```.*?```", "", body, flags=re.S)
    title = re.search(r"^# (.*)", prose, flags=re.M)
    if title and re.search(r"Evidence|Validation|Appendix", title.group(1)):
        return None
    cut = EVIDENCE_HEADING.search(prose)
    return words(prose[:cut.start()] if cut else prose)


def _notebook(*cells) -> nbformat.NotebookNode:
    return nbformat.v4.new_notebook(cells=list(cells))


def test_counting_on_a_synthetic_notebook():
    body = "\n\n".join(f"x{i} = {i}" for i in range(16))  # 16 code lines, 15 blank ones between them
    nb = _notebook(
        nbformat.v4.new_markdown_cell("\n".join(["text"] * 40)),
        nbformat.v4.new_code_cell(body),
        nbformat.v4.new_code_cell("\n".join(f"y{i} = {i}" for i in range(40)), metadata={"tags": ["hide-input"]}),
        nbformat.v4.new_code_cell("\n".join(f"z{i} = {i}" for i in range(15))),
    )
    assert long_visible_cells(nb) == [(1, 16, "x0 = 0")]
    for tag in HIDDEN_TAGS:
        nb.cells[1].metadata["tags"] = [tag]
        assert long_visible_cells(nb) == []


def test_the_counter_reads_myst_pages(tmp_path):
    page = tmp_path / "page.md"
    code = "\n".join(f"a{i} = {i}" for i in range(16))
    page.write_text(f"# Title\n\n```{{code-cell}}\n{code}\n```\n\n```{{code-cell}}\n:tags: [hide-input]\n"
                    + "\n".join(f"b{i} = {i}" for i in range(40)) + "\n```\n")
    assert long_visible_cells(jupytext.read(page)) == [(1, 16, "a0 = 0")]


def test_the_toc_lists_pages_that_exist():
    pages = toc_pages()
    assert len(pages) > 10 and all(p.exists() for p in pages)


@pytest.mark.parametrize("page", toc_pages(), ids=lambda p: p.name)
def test_visible_code_cells_are_short(page):
    long = long_visible_cells(jupytext.read(page))
    assert not long, "\n".join(f"{page.name}: cell {i} has {n} non-blank lines (> {MAX_LINES}), first line: {first!r}"
                               for i, n, first in long)


def test_main_line_counter_on_a_synthetic_page():
    page = "# Title\n\nOne two $x^2 + y$ three.\n\n```{code-cell}\na = b + c\n```\n\n## Evidence: checks\n\nfour five"
    assert main_line_words(page) == 4  # Title One two three: a word has two letters or more
    assert main_line_words("# Evidence: the checks\n\nwords") is None


EXECUTED = [p for p in toc_pages() if "```{code-cell}" in p.read_text()]


@pytest.mark.parametrize("page", EXECUTED, ids=lambda p: p.name)
def test_folded_cells_are_short(page):
    long = [(i, code_lines(c)) for i, c in enumerate(jupytext.read(page).cells)
            if c.cell_type == "code" and code_lines(c) > MAX_FOLDED_LINES]
    assert not long, f"{page.name}: cells over {MAX_FOLDED_LINES} lines (index, lines): {long}; move the work to copylib"


@pytest.mark.parametrize("page", toc_pages(), ids=lambda p: p.name)
def test_main_line_fits_one_sitting(page):
    n = main_line_words(page.read_text())
    assert n is None or n <= MAX_MAIN_WORDS, (
        f"{page.name}: main line {n} words (> {MAX_MAIN_WORDS}); move evidence into an Evidence section")

