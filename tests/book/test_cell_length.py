"""Visible code cells are short: at most 15 non-blank lines each (issue: one idea per cell).

A cell is visible unless its tags fold or drop its input (``hide-input``,
``remove-input``, ``remove-cell``); those cells hold checks, tables and
bookkeeping, and may be longer. Cells are read with jupytext, as myst-nb reads
them, and every page listed in ``_toc.yml`` is scanned.
"""

from __future__ import annotations

from pathlib import Path

import jupytext
import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 15
HIDDEN_TAGS = {"hide-input", "remove-input", "remove-cell"}


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
