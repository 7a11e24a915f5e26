"""Every figure in the book speaks: a numbered caption, alt text, a name the prose references.

A plot in an exercise's solution (between ``{solution-start}`` and ``{solution-end}``) is the
exception: it is part of the hidden answer, so it takes no figure number (a reader would see
the numbers jump past it, issue 37 item 9). It carries alt text only (``image: alt``), no
figure caption or name, and the solution's prose says what it shows.

Two views of the same rule:

* the sources (no build): every plotting cell outside a solution carries myst-nb figure
  metadata and alt text, every plotting cell in a solution alt text and no figure metadata;
  every myst-nb figure ``name:`` in ``book/*.md`` is unique across the book and referenced
  by at least one {numref};
* the built site (``built_site``): every image a code cell outputs outside a solution sits
  in a ``<figure>`` whose ``<figcaption>`` starts with "Fig. <number>", every one inside a
  solution (``div.solution``) in no numbered figure; either way its alt text is a
  description, not a file path (which is what myst-nb writes when a cell has no metadata).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import jupytext
import pytest
from bs4 import BeautifulSoup  # installed with jupyter-book (pydata-sphinx-theme needs it)

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "book").glob("*.md"))
# The figure name in a code cell's option block (":    name: fig-...").
NAME = re.compile(r"^:\s+name:\s*(\S+)\s*$", re.M)
NUMREF = re.compile(r"\{numref\}`(?:[^`<]*<)?([^`>]+)>?`")
FIG_NUMBER = re.compile(r"^Fig\.\s*\d+(\.\d+)*\b")
# An alt text that is a path or a file name, not a description.
PATH_LIKE = re.compile(r"(^|/)[\w.-]+\.(png|jpe?g|svg|gif|webp)$|^\.\.?/|^_images/", re.I)


def figure_names() -> list[tuple[str, str]]:
    """(chapter, name) of every named myst-nb figure in the book's sources."""
    return [(md.name, name) for md in CHAPTERS for name in NAME.findall(md.read_text())]


# A sphinx-exercise gated solution directive, opened with backticks or colons: ````{solution-start} label
SOLUTION_FENCE = re.compile(r"^\s*(?:`{3,}|:{3,})\{solution-(start|end)\}", re.MULTILINE)


def code_cells(md: Path) -> list:
    return [cell for cell, _ in cells_in_solutions(md)]


def cells_in_solutions(md: Path) -> list[tuple]:
    """``(code cell, in a solution)`` for every code cell of ``md``, in order: a cell is in a solution
    when a ``{solution-start}`` directive precedes it with no ``{solution-end}`` in between."""
    out, inside = [], False
    for cell in jupytext.read(md).cells:
        if cell.cell_type == "code":
            out.append((cell, inside))
        elif cell.cell_type == "markdown":
            for kind in SOLUTION_FENCE.findall(cell.source):
                inside = kind == "start"
    return out


def plot_metadata_problem(cell, in_solution: bool) -> str | None:
    """What is wrong with a plotting cell's myst-nb metadata, or None."""
    mystnb = cell.metadata.get("mystnb", {})
    alt = (mystnb.get("image", {}) or {}).get("alt", "")
    if in_solution:
        if mystnb.get("figure"):
            return "a figure caption/name in a solution (it would take a figure number): keep only image: alt"
        return None if alt.strip() else "no image: alt in a solution's plot"
    figure = mystnb.get("figure") or {}
    if not (figure.get("caption") and figure.get("name")):
        return "no figure caption and name"
    return None if alt.strip() else "no image: alt"


def test_every_plotting_cell_is_a_figure_but_in_solutions():
    """A code cell that shows a matplotlib figure carries myst-nb figure metadata (caption, name, alt),
    but in an exercise's solution only its alt text (no figure number for a hidden answer)."""
    bare = [f"{md.name}: {cell.source.splitlines()[0]}: {problem}"
            for md in CHAPTERS for cell, in_solution in cells_in_solutions(md)
            if "plt.show()" in cell.source and (problem := plot_metadata_problem(cell, in_solution))]
    assert not bare, "plotting cells with the wrong metadata:\n" + "\n".join(bare)


def test_solution_fences_pair_up():
    """Guards the solution test above: in every chapter each {solution-start} is closed by a {solution-end}
    before the next one (else every cell after it would count as in a solution)."""
    unpaired = []
    for md in CHAPTERS:
        kinds = [m.group(1) for m in SOLUTION_FENCE.finditer(md.read_text(encoding="utf-8"))]
        if kinds != ["start", "end"] * (len(kinds) // 2):
            unpaired.append(f"{md.name}: {kinds}")
    assert not unpaired, "unpaired solution directives:\n" + "\n".join(unpaired)


def test_figure_names_are_read_from_every_figure_cell():
    # Guards the two tests below, which read names with a pattern, against missing some.
    names = sorted(cell.metadata["mystnb"]["figure"]["name"] for md in CHAPTERS for cell in code_cells(md)
                   if cell.metadata.get("mystnb", {}).get("figure"))
    assert names and names == sorted(name for _, name in figure_names())


def test_figure_names_are_unique():
    counts = Counter(name for _, name in figure_names())
    assert not [n for n, k in counts.items() if k > 1], {n: k for n, k in counts.items() if k > 1}


def test_every_figure_is_referenced_from_the_prose():
    refs = {ref for md in CHAPTERS for ref in NUMREF.findall(md.read_text())}
    unreferenced = [f"{chapter}: {name}" for chapter, name in figure_names() if name not in refs]
    assert not unreferenced, "figures no {numref} points to:\n" + "\n".join(unreferenced)


def output_images(page: Path) -> list:
    """The <img> elements that are code-cell outputs in the page's article (in solutions or not)."""
    soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
    article = soup.find("article") or soup
    return [img for img in article.find_all("img")
            if img.find_parent("div", class_=["cell_output", "output"]) is not None]


def in_solution(img) -> bool:
    """Is the image part of an exercise's solution (sphinx-exercise's ``div.solution``)?"""
    return img.find_parent("div", class_="solution") is not None


def caption_problem(img) -> str | None:
    figure = img.find_parent("figure")
    caption = figure.find("figcaption") if figure else None
    numbered = caption is not None and FIG_NUMBER.match(caption.get_text(" ", strip=True))
    if in_solution(img):
        if numbered:
            return f"a numbered figure in a solution: {caption.get_text(' ', strip=True)[:60]!r}"
    elif caption is None:
        return "no <figure> with a <figcaption>"
    elif not numbered:
        return f"caption not numbered: {caption.get_text(' ', strip=True)[:60]!r}"
    alt = (img.get("alt") or "").strip()
    if not alt or PATH_LIKE.search(alt):
        return f"alt text missing or a file path: {alt!r}"
    return None


def test_every_output_image_is_a_numbered_captioned_figure_but_in_solutions(built_site):
    pages = sorted(p for p in (built_site / "book").glob("*.html"))
    assert pages, f"no chapter pages under {built_site / 'book'}"
    problems = [f"{page.name}: {img.get('src', '?')[-20:]}: {problem}"
                for page in pages for img in output_images(page)
                if (problem := caption_problem(img)) is not None]
    assert not problems, f"{len(problems)} output images without a proper figure:\n" + "\n".join(problems)


@pytest.mark.parametrize("alt, path_like", [
    ("../_images/fa119b92.png", True), ("_images/x.png", True), ("loss.png", True),
    ("Test loss against P for linear and softmax attention.", False),
])
def test_path_like_alt_is_recognised(alt, path_like):
    assert bool(PATH_LIKE.search(alt)) is path_like


SAMPLE = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
    format_version: 0.13
kernelspec:
  name: python3
  language: python
  display_name: Python 3
---

```{code-cell}
:mystnb:
:  figure:
:    caption: A line.
:    name: fig-sample-line
:  image:
:    alt: A rising line.
plt.plot([0, 1]); plt.show()
```

````{solution-start} sample-ex
:class: dropdown
````

```{code-cell}
:mystnb:
:  image:
:    alt: The answer's line.
plt.plot([1, 0]); plt.show()
```

````{solution-end}
````

```{code-cell}
plt.plot([0, 0]); plt.show()
```
"""


def test_cells_in_solutions_and_their_metadata(tmp_path):
    md = tmp_path / "sample.md"
    md.write_text(SAMPLE, encoding="utf-8")
    cells = cells_in_solutions(md)
    assert [inside for _, inside in cells] == [False, True, False]
    assert [plot_metadata_problem(cell, inside) for cell, inside in cells] == [
        None, None, "no figure caption and name"]
    # The first cell's metadata in a solution: its caption would take a figure number.
    assert "figure caption" in plot_metadata_problem(cells[0][0], True)


@pytest.mark.parametrize("html, problem", [
    ('<figure><img src="a.png" alt="A line."><figcaption>Fig. 3 A line.</figcaption></figure>', None),
    ('<img src="a.png" alt="A line.">', "no <figure>"),
    ('<img src="a.png" alt="_images/a.png">', "no <figure>"),
    ('<div class="solution"><img src="a.png" alt="The answer."></div>', None),
    ('<div class="solution"><img src="a.png" alt="../_images/a.png"></div>', "alt text"),
    ('<div class="solution"><figure><img src="a.png" alt="x"><figcaption>Fig. 4 x</figcaption></figure></div>',
     "numbered figure in a solution"),
])
def test_caption_rule(html, problem):
    found = caption_problem(BeautifulSoup(html, "html.parser").find("img"))
    assert (found is None) if problem is None else (problem in found)
