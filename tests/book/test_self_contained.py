"""The book and copylib cite nothing the reader cannot see (issue 14, item 5).

The team's background notes are not part of the book: no chapter, page or
docstring may refer to them (``model.md``, "our notes", "the notes' formula").
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HIDDEN = re.compile(r"model\.md|\bour notes\b|\bthe notes\b|\bnotes'|shared/theory|shared/seeds", re.I)


def _sources():
    yield from sorted((ROOT / "book").glob("*.md"))
    yield from sorted((ROOT / "copylib").rglob("*.py"))
    yield ROOT / "README.md"


def test_no_reference_to_notes_the_reader_cannot_see():
    found = [f"{path.relative_to(ROOT)}:{n}: {line.strip()[:90]}"
             for path in _sources()
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if HIDDEN.search(line)]
    assert not found, "references to notes outside the book:\n" + "\n".join(found)


def test_the_rule_catches_what_the_issue_found():
    for bad in ("(model.md section 5)", "as in our notes", "the notes' formula", "the notes give"):
        assert HIDDEN.search(bad), bad
    assert not HIDDEN.search("Notes\n-----")  # numpydoc's section header is fine
