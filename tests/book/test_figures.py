"""Every figure in the book speaks: a numbered caption, alt text, a name the prose references.

Two views of the same rule:

* the sources (no build): every myst-nb figure ``name:`` in ``book/*.md`` is
  unique across the book and referenced by at least one {numref};
* the built site (``built_site``): every image a code cell outputs sits in a
  ``<figure>`` whose ``<figcaption>`` starts with "Fig. <number>", and its alt
  text is a description, not a file path (which is what myst-nb writes when a
  cell has no figure metadata).
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


def code_cells(md: Path) -> list:
    return [cell for cell in jupytext.read(md).cells if cell.cell_type == "code"]


def test_every_plotting_cell_is_a_figure():
    """A code cell that shows a matplotlib figure carries myst-nb figure metadata (caption, name, alt)."""
    bare = [f"{md.name}: {cell.source.splitlines()[0]}" for md in CHAPTERS for cell in code_cells(md)
            if "plt.show()" in cell.source and not cell.metadata.get("mystnb", {}).get("figure")]
    assert not bare, "plotting cells without figure metadata:\n" + "\n".join(bare)


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
    """The <img> elements that are code-cell outputs in the page's article."""
    soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
    article = soup.find("article") or soup
    return [img for img in article.find_all("img")
            if img.find_parent("div", class_=["cell_output", "output"]) is not None]


def caption_problem(img) -> str | None:
    figure = img.find_parent("figure")
    caption = figure.find("figcaption") if figure else None
    if caption is None:
        return "no <figure> with a <figcaption>"
    if not FIG_NUMBER.match(caption.get_text(" ", strip=True)):
        return f"caption not numbered: {caption.get_text(' ', strip=True)[:60]!r}"
    alt = (img.get("alt") or "").strip()
    if not alt or PATH_LIKE.search(alt):
        return f"alt text missing or a file path: {alt!r}"
    return None


def test_every_output_image_is_a_numbered_captioned_figure(built_site):
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
