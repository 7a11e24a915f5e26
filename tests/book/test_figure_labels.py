"""Figure labels write symbols in math, as the prose does (issue 37, the reader's item 5).

A chapter's plotting code that labels an axis, a line or a title with a symbol of the book
(``P2``, ``P*``, ``P_lower``, ``sigma^2``, ``Delta``, ``alpha_1``, ``r^2``) in plain text shows the
reader a second spelling of it; the label writes it as mathtext instead (``"$P / P_2$"``). This
test reads the chapters' code cells (no build): the string literal given to ``set_xlabel``,
``set_ylabel``, ``set_title``, ``suptitle`` or a ``label=``, ``xlabel=``, ``ylabel=``, ``title=``
keyword, with its ``$...$`` parts and f-string fields removed, may not hold such a symbol. Check
labels (``checks.*`` claims) are plain text by design and are not read.
"""

from __future__ import annotations

import re
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "book").glob("*.md"))
CALL = re.compile(r"""(?:set_xlabel|set_ylabel|set_title|suptitle|\bxlabel\s*=|\bylabel\s*=|\btitle\s*=|\blabel\s*=)"""
                  r"""\s*\(?\s*[rRfF]{0,2}("|')(.*?)\1""")
PLAIN_SYMBOL = re.compile(r"(?<![\w$])(P[0-9]|P\*|P_\w+|sigma\^?2?|sigma_\w+|Delta|alpha_\d|gamma_\d|r\^2|\w\^\d)(?!\w)")


def plain_symbols(source: str) -> list[str]:
    """The label strings of a code cell's plotting calls that write a book symbol in plain text."""
    found = []
    for line in source.splitlines():
        if line.lstrip().startswith("#") or "checks." in line:
            continue
        for call in CALL.finditer(line):
            text = re.sub(r"\{[^}]*\}", "", re.sub(r"\$[^$]*\$", "", call.group(2)))
            if PLAIN_SYMBOL.search(text):
                found.append(call.group(2))
    return found


@pytest.mark.parametrize("line, bad", [
    ('ax.set_xlabel("P / P2")', True),
    ('axes[1].set_ylabel("posterior variance / its value at P = 0.1 P*")', True),
    ('ax.plot(x, y, label="sigma^2 fixed")', True),
    ('ax.set(xlabel="logit gap Delta", ylabel="y")', True),
    ('ax.set_xlabel(r"$P / P_2$")', False),
    ('ax.plot(x, y, label=f"$L = {L}$, {kind}")', False),
    ('ax.set_ylabel("test loss per position")', False),
    ('checks.below("P2 of the posterior below P2 of fluct", a, b)', False),
    ('# ax.set_xlabel("P2")', False),
])
def test_the_rule(line, bad):
    assert bool(plain_symbols(line)) is bad


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.name)
def test_plot_labels_write_symbols_in_math(chapter):
    found = [label for cell in jupytext.read(chapter).cells if cell.cell_type == "code"
             for label in plain_symbols(cell.source)]
    assert not found, f"{chapter.name}: plot labels with plain-text symbols {found}: write them as $...$"
