"""The exercises: how many each chapter has, their labels and levels, and the generated list's parser.

The solutions themselves run with their chapters (tests/book/test_chapters.py and the book
build) and record their checks like the chapters' claims.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "_ext"))
from exercise_list import LEVELS, exercises_of  # noqa: E402

MINIMUM = {"copy_task": 3, "marginalisation": 3, "order_parameters": 3, "linear_attention": 3,
           "softmax_attention": 3, "scaling": 3, "causal_mask": 1, "predictability": 1, "induction_head": 2}


def _exercises(chapter: str) -> list[dict]:
    path = ROOT / "book" / f"{chapter}.md"
    return exercises_of(path.read_text(encoding="utf-8"), str(path))


@pytest.mark.parametrize("chapter", sorted(MINIMUM))
def test_each_chapter_has_its_exercises_graded_from_warm_up(chapter):
    found = _exercises(chapter)
    assert len(found) >= MINIMUM[chapter], f"{chapter} has {len(found)} exercises, needs {MINIMUM[chapter]}"
    ranks = [LEVELS.index(e["level"]) for e in found]
    assert ranks == sorted(ranks), f"{chapter}: levels must go from warm-up to harder, got {[e['level'] for e in found]}"
    if MINIMUM[chapter] >= 3:
        assert len(set(ranks)) >= 2, f"{chapter}: exercises of one level only"


def test_labels_are_unique_and_name_their_chapter():
    labels = []
    for path in sorted((ROOT / "book").glob("*.md")):
        for e in exercises_of(path.read_text(encoding="utf-8"), str(path)):
            assert e["label"].startswith(path.stem), f"{e['label']} is in {path.name}"
            labels.append(e["label"])
    assert len(labels) == len(set(labels))


def test_every_exercise_has_a_solution_that_names_it():
    for chapter in MINIMUM:
        text = (ROOT / "book" / f"{chapter}.md").read_text(encoding="utf-8")
        for e in _exercises(chapter):
            assert f"{{solution-start}} {e['label']}" in text, f"{e['label']} has no solution"


GOOD = """
```{exercise} Double it
:label: ch-double
:class: warm-up

text
```
"""


def test_the_parser_reads_title_label_and_level():
    assert exercises_of(GOOD, "x.md") == [{"title": "Double it", "label": "ch-double", "level": "warm-up"}]
    assert exercises_of(GOOD.replace("```", "::::"), "x.md")[0]["label"] == "ch-double"


@pytest.mark.parametrize("broken", [GOOD.replace(":label: ch-double\n", ""),
                                    GOOD.replace(":class: warm-up", ":class: easy"),
                                    GOOD.replace(":class: warm-up", ":class: warm-up harder")])
def test_an_exercise_without_label_or_level_fails_the_build(broken):
    with pytest.raises(Exception, match="label"):
        exercises_of(broken, "x.md")
