"""Hidden exercise solutions take no equation numbers (issue 37, the reader's item 9).

A labelled equation (``{math}`` with ``:label:``, or ``$$ ... $$ (label)``) in a solution between
``{solution-start}`` and ``{solution-end}`` is numbered in the chapter's sequence although the
solution is folded: the reader sees the numbers jump, and a reference to it points into a
collapsed dropdown. Solutions write their displays without a label and refer to them in words
("the bound above"). Figures in solutions are covered by ``test_figures.py``; this test reads
the sources only (no build).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "book").glob("*.md"))
SOLUTION = re.compile(r"^\s*(?:`{3,}|:{3,})\{solution-start\}.*?^\s*(?:`{3,}|:{3,})\{solution-end\}",
                      flags=re.M | re.S)
MATH_LABEL = re.compile(r"^```\{math\}[^\n]*\n(?::[^\n]*\n)*?:label:\s*(\S+)", flags=re.M)
DOLLAR_LABEL = re.compile(r"^\$\$\s*\((\S+)\)\s*$", flags=re.M)


def labelled_equations_in_solutions(text: str) -> list[str]:
    """Labels of the numbered equations inside the exercise solutions of a MyST page."""
    return [label for block in SOLUTION.findall(text)
            for label in MATH_LABEL.findall(block) + DOLLAR_LABEL.findall(block)]


def test_the_rule_finds_both_label_forms_only_inside_solutions():
    page = ("```{math}\n:label: outside\nx\n```\n\n"
            "````{solution-start} ex-a\n:class: dropdown\n````\n\n"
            "```{math}\n:label: inside-directive\ny\n```\n\n$$\nz\n$$ (inside-dollars)\n\n"
            "```{math}\nw\n```\n\n$$\nv\n$$\n\n"
            "````{solution-end}\n````\n\n$$\nu\n$$ (after)\n")
    assert labelled_equations_in_solutions(page) == ["inside-directive", "inside-dollars"]


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.name)
def test_no_numbered_equation_in_a_solution(chapter):
    found = labelled_equations_in_solutions(chapter.read_text(encoding="utf-8"))
    assert not found, (f"{chapter.name}: labelled equations in exercise solutions {found}: drop the label "
                       "(an unlabelled display takes no number) and refer to it in words")
