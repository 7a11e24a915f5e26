"""Sphinx extension: ``{exercise-list}``, the table of every exercise of the book.

The table is generated from the chapters' sources at build time, in the order of
``_toc.yml``: one row per ``{exercise}`` directive (sphinx-exercise) with its
chapter, its level and a link to it. Every exercise must carry a ``:label:`` (the
link target) and one level class, ``:class: warm-up``, ``practice`` or ``harder``;
an exercise without them fails the build, so the list cannot silently drop one.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from docutils import nodes
from sphinx import addnodes
from sphinx.errors import ExtensionError
from sphinx.util.docutils import SphinxDirective

LEVELS = ("warm-up", "practice", "harder")
_OPEN = re.compile(r"^(?P<fence>`{3,}|:{3,})\{exercise\}[ \t]*(?P<title>.*)$")
_OPTION = re.compile(r"^:(?P<key>[\w-]+):[ \t]*(?P<value>.*)$")


def _toc_docs(toc: dict) -> list[str]:
    found = []

    def walk(entry):
        if isinstance(entry, dict):
            for key in ("root", "file"):
                if key in entry:
                    found.append(entry[key])
            for key in ("parts", "chapters", "sections"):
                for child in entry.get(key) or []:
                    walk(child)
        elif isinstance(entry, list):
            for child in entry:
                walk(child)

    walk(toc)
    return found


def exercises_of(text: str, where: str) -> list[dict]:
    """``title``, ``label``, ``level`` of every ``{exercise}`` directive in a MyST source."""
    lines = text.splitlines()
    found = []
    for i, line in enumerate(lines):
        m = _OPEN.match(line)
        if not m:
            continue
        options = {}
        for opt in lines[i + 1:]:
            o = _OPTION.match(opt.strip())
            if not o:
                break
            options[o["key"]] = o["value"].strip()
        label = options.get("label")
        levels = [c for c in options.get("class", "").split() if c in LEVELS]
        if not label or len(levels) != 1:
            raise ExtensionError(f"{where}, line {i + 1}: an exercise needs a :label: and exactly one level class "
                                 f"(:class: one of {', '.join(LEVELS)}); got label={label!r}, "
                                 f"class={options.get('class')!r}")
        found.append({"title": m["title"].strip() or label, "label": label, "level": levels[0]})
    return found


def _title_of(text: str, fallback: str) -> str:
    for line in text.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return fallback


class ExerciseList(SphinxDirective):
    has_content = False

    def run(self):
        root = Path(self.env.srcdir)
        toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
        table = nodes.table(classes=["exercise-list"])
        group = nodes.tgroup(cols=3)
        table += group
        for width in (35, 50, 15):
            group += nodes.colspec(colwidth=width)
        head = nodes.thead()
        group += head
        head += self._row([nodes.Text("Chapter"), nodes.Text("Exercise"), nodes.Text("Level")])
        body = nodes.tbody()
        group += body
        n = 0
        for doc in _toc_docs(toc):
            path = root / (doc if doc.endswith(".md") else doc + ".md")
            if not path.is_file():
                continue
            text = path.read_text(encoding="utf-8")
            self.env.note_dependency(str(path))
            chapter = _title_of(text, doc)
            docname = doc[:-3] if doc.endswith(".md") else doc
            for ex in exercises_of(text, str(path.relative_to(root))):
                chapter_ref = addnodes.pending_xref("", nodes.inline(text=chapter), refdomain="std", reftype="doc",
                                                    reftarget="/" + docname, refexplicit=True,
                                                    refdoc=self.env.docname)
                ex_ref = addnodes.pending_xref("", nodes.inline(text=ex["title"]), refdomain="std", reftype="ref",
                                               reftarget=ex["label"], refexplicit=True, refdoc=self.env.docname)
                body += self._row([chapter_ref, ex_ref, nodes.Text(ex["level"])])
                n += 1
        if n == 0:
            raise ExtensionError("exercise-list: the book has no exercises to list")
        return [table]

    @staticmethod
    def _row(cells):
        row = nodes.row()
        for content in cells:
            entry = nodes.entry()
            para = nodes.paragraph()
            para += content
            entry += para
            row += entry
        return row


def setup(app):
    app.add_directive("exercise-list", ExerciseList)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
