"""Chapters whose code a reader sees: at most 35 % of a chapter's code lines in folded cells (issue 37).

Folding hides bookkeeping (checks, glue) from the reader; a chapter that folds most of its code
hides its computation too. The share is counted as the issue measures it, on the MyST source
with the YAML header removed: the code lines of a cell are its non-blank lines that are not
cell options (lines starting with ``:``, such as ``:tags:`` and ``:mystnb:``), and a cell is
folded when a ``:tags:`` option names ``hide-input``, ``remove-input``, ``remove-cell`` or
``hide-cell``. Every page of ``_toc.yml`` with code cells is scanned. What to do about a
chapter above the limit: show the computation its prose argues from in short cells, compact
glue and check boilerplate (one ``glue_values`` call, a loop over a table of claims), or move
hidden computation into ``copylib.analysis``; never drop a check.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
MAX_FOLDED_PERCENT = 35  # compared in integers, so that a page exactly at the limit passes
CODE_CELL = re.compile(r"```\{code-cell\}[^\n]*\n(.*?)```", flags=re.S)
FOLDED_TAG = re.compile(r"^:tags:.*(hide-input|remove-input|remove-cell|hide-cell)", flags=re.M)


def toc_pages() -> list[Path]:
    """The pages of ``_toc.yml`` (root and chapters), as paths of their sources."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [ROOT / f"{f}.md" for f in [toc["root"]] + [entry["file"] for entry in toc["chapters"]]]


def code_and_folded_lines(source: str) -> tuple[int, int]:
    """``(code lines, code lines in folded cells)`` of a MyST page."""
    body = re.sub(r"^---\n.*?\n---\n", "", source, count=1, flags=re.S)
    code = folded = 0
    for cell in CODE_CELL.finditer(body):
        n = sum(1 for line in cell.group(1).splitlines() if line.strip() and not line.startswith(":"))
        code += n
        folded += n if FOLDED_TAG.search(cell.group(1)) else 0
    return code, folded


def folded_share(source: str) -> float:
    """The share of a page's code lines that sit in folded cells (0 for a page without code)."""
    code, folded = code_and_folded_lines(source)
    return folded / max(code, 1)


def check_folded_share(name: str, source: str) -> None:
    code, folded = code_and_folded_lines(source)
    assert 100 * folded <= MAX_FOLDED_PERCENT * code, (
        f"{name}: {folded} of {code} code lines ({100 * folded / max(code, 1):.1f} %) are in folded cells, above "
        f"{MAX_FOLDED_PERCENT} %; show the computation the prose argues from, compact glue and checks, "
        "or move hidden computation into copylib.analysis")


def _page(shown: int, folded: int, tag: str = "hide-input") -> str:
    """A page with one shown and one folded cell of the given numbers of code lines (blank lines between)."""
    show = "\n\n".join(f"a{i} = {i}" for i in range(shown))
    fold = "\n".join(f"checks.true('claim {i}', True)" for i in range(folded))
    return ("---\njupytext:\n  format_name: myst\n---\n\n# Title\n\n```{code-cell}\n" + show + "\n```\n\n"
            "```{code-cell}\n:tags: [" + tag + "]\n" + fold + "\n```\n\n```{code-cell}\n:mystnb:\n:  figure:\n"
            ":    caption: |\n:      A caption.\nplt.show()\n```\n")


def test_counting_on_a_synthetic_page():
    # 13 shown lines (blank lines and option lines do not count), 7 folded: 7 / 20 = 35 %, at the limit
    assert code_and_folded_lines(_page(12, 7)) == (20, 7)
    check_folded_share("page.md", _page(12, 7))
    for tag in ("hide-input", "remove-input", "remove-cell", "hide-cell"):
        assert code_and_folded_lines(_page(12, 8, tag)) == (21, 8)
    assert code_and_folded_lines(_page(12, 8, "full-width")) == (21, 0)  # a tag that folds nothing
    assert folded_share("# Prose only\n") == 0


def test_a_page_above_the_limit_fails():
    assert folded_share(_page(12, 8)) == pytest.approx(8 / 21)
    with pytest.raises(AssertionError, match=r"page\.md: 8 of 21 code lines \(38\.1 %\)"):
        check_folded_share("page.md", _page(12, 8))


EXECUTED = [p for p in toc_pages() if "```{code-cell}" in p.read_text()]


def test_the_toc_has_executed_chapters():
    assert len(EXECUTED) > 5 and all(p.exists() for p in EXECUTED)


@pytest.mark.parametrize("page", EXECUTED, ids=lambda p: p.name)
def test_folded_share_of_each_chapter(page):
    check_folded_share(page.name, page.read_text())
