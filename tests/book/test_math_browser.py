"""The mathematics on the built website fits the page and is typeset (issue 14, item 1).

Every page of the site (the page list of ``test_site.py``) is opened in headless
Chromium at 1280 px, driven by Playwright (from PyPI) through the system
``chromium``; requests to other hosts are refused. After MathJax has typeset
the page:

* every display equation must fit: the typeset formula (``mjx-math``) must be
  no wider than its container and than the content column, and neither the
  container nor the ``div.math`` around it may scroll sideways (an equation cut
  behind a scrollbar fails on the last two);
* the visible text (outside code blocks and typeset formulas) must hold no raw
  TeX: no ``$...$`` span, no TeX command such as ``\\frac``, no ``\\(`` or ``\\[``
  (``RAW_TEX``). Pages without MathJax (the bibliography) are checked too.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from browser_helpers import NEEDS_CHROMIUM, open_offline

pytestmark = NEEDS_CHROMIUM

VIEWPORT = {"width": 1280, "height": 1600}
# Sub-pixel rounding: widths are compared after the browser rounds them to whole pixels.
SLACK_PX = 1
SOURCE_CHARS = 80
# Pages loading at once: typesetting is the browser's CPU work, so a few more than the cores keep them busy.
PAGES_AT_ONCE = 4
REDIRECT = re.compile(r'\s*<meta http-equiv="Refresh"', re.I)
# Raw TeX that a reader could see: a TeX command (\frac, \widehat, ...), TeX's math delimiters
# \( \) \[ \] \{ \}, $$, or a $...$ span that starts with neither a blank nor a digit (so
# "costs $5 and $6" does not count, "$x^{2}$" does). A braced ^{ or _{ alone does not count:
# docstrings (the API page) and the validation report write plain-text formulas such as
# "(K + kappa I)^{-1}" and "P_{i+1}" on purpose; TeX that MathJax missed keeps its delimiters.
RAW_TEX = re.compile(r"\\[A-Za-z]+|\\[()\[\]{}]|\$\$|\$[^\s$\d][^$\n]*\$")

# The display equations of the page that are wider than the room they have:
# [TeX source, formula width, container width, column width].
TOO_WIDE_JS = """(slack) => {
  const article = document.querySelector('article.bd-article') || document.body;
  const style = getComputedStyle(article);
  const column = article.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  const sources = new Map();
  for (const item of (window.MathJax && MathJax.startup.document ? MathJax.startup.document.math : [])) {
    sources.set(item.typesetRoot, item.math);
  }
  const scrolls = el => el && el.scrollWidth > el.clientWidth + slack;
  const out = [];
  for (const box of document.querySelectorAll('mjx-container[display="true"]')) {
    const formula = box.querySelector('mjx-math');
    const width = formula ? formula.getBoundingClientRect().width : 0;
    const block = box.closest('div.math');
    if (width > box.clientWidth + slack || width > column + slack || scrolls(box) || scrolls(block)) {
      out.push([sources.get(box) || box.textContent, width, box.clientWidth, column]);
    }
  }
  return out;
}"""

# Text a reader sees: visible text nodes, not in code, scripts or MathJax's output.
VISIBLE_TEXT_JS = """() => {
  const skip = 'pre, code, script, style, textarea, mjx-container, .MathJax';
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const parts = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (!el || el.closest(skip) || !el.checkVisibility({visibilityProperty: true})) continue;
    parts.push(node.nodeValue);
  }
  return parts.join('');
}"""


# Cell outputs (check results, printed tables) cut behind a scrollbar: [first 80 characters, width, room].
CUT_OUTPUT_JS = """(slack) => {
  const out = [];
  for (const pre of document.querySelectorAll('div.cell_output pre, div.output pre')) {
    if (pre.scrollWidth > pre.clientWidth + slack) {
      out.push([pre.textContent.slice(0, 80), pre.scrollWidth, pre.clientWidth]);
    }
  }
  return out;
}"""


def pages(html: Path) -> list[Path]:
    """The pages of the site (the rule of ``test_site.pages``) except redirects, whose target is a page."""
    skip = {"genindex.html", "search.html", "py-modindex.html"}
    return sorted(p for p in html.rglob("*.html")
                  if p.name not in skip and not p.relative_to(html).parts[0].startswith("_")
                  and not REDIRECT.match(p.read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def typeset_pages(built_site, site_url, browser):
    """``{page: (too wide equations, visible text, refused requests, cut outputs)}`` for every page, after MathJax."""
    seen = {}
    rels = [path.relative_to(built_site).as_posix() for path in pages(built_site)]
    # a few pages load at once (each in its own renderer process) while the first is measured
    for start in range(0, len(rels), PAGES_AT_ONCE):
        batch = [(rel, *open_offline(browser, f"{site_url}/{rel}", site_url, VIEWPORT, wait_until="commit"))
                 for rel in rels[start:start + PAGES_AT_ONCE]]
        for rel, page, refused in batch:
            _typeset(page)
            seen[rel] = (page.evaluate(TOO_WIDE_JS, SLACK_PX), page.evaluate(VISIBLE_TEXT_JS), refused,
                         page.evaluate(CUT_OUTPUT_JS, SLACK_PX))
            page.close()
    return seen


def _typeset(page) -> None:
    """Wait until ``page`` has loaded and MathJax (if the page loads it) has typeset it."""
    page.wait_for_load_state("load")
    # Sphinx loads MathJax only on pages with math.
    if page.locator('script[src*="mathjax"]').count():
        page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise",
                               timeout=60_000)
        page.evaluate("() => MathJax.startup.promise")
        page.evaluate("() => document.fonts.ready")  # widths are final once the fonts are in


def test_pages_were_measured(typeset_pages):
    assert len(typeset_pages) >= 10, sorted(typeset_pages)
    refused = {rel: r for rel, (_, _, r, _) in typeset_pages.items() if r}
    assert not refused, f"requests to other hosts: {refused}"


def test_every_display_equation_fits_the_column(typeset_pages):
    offenders = [f"{rel}: {' '.join(tex.split())[:SOURCE_CHARS]!r} "
                 f"({width:.0f} px wide, {box} px container, {column:.0f} px column)"
                 for rel, (wide, _, _, _) in typeset_pages.items() for tex, width, box, column in wide]
    assert not offenders, (f"{len(offenders)} display equations wider than the column at "
                           f"{VIEWPORT['width']} px:\n" + "\n".join(offenders))


def test_no_raw_tex_in_visible_text(typeset_pages):
    offenders = []
    for rel, (_, text, _, _) in typeset_pages.items():
        for match in RAW_TEX.finditer(text):
            start = max(match.start() - 30, 0)
            offenders.append(f"{rel}: {match.group()!r} in {' '.join(text[start:match.end() + 30].split())!r}")
    assert not offenders, "raw TeX in the visible text:\n" + "\n".join(offenders)


def test_no_cell_output_is_cut(typeset_pages):
    """Printed results wrap inside the column (the site's stylesheet), so none hides behind a scrollbar."""
    offenders = [f"{rel}: {text!r} ({width} px in {room} px)"
                 for rel, (_, _, _, cut) in typeset_pages.items() for text, width, room in cut]
    assert not offenders, f"{len(offenders)} cell outputs wider than the column:\n" + "\n".join(offenders)


@pytest.mark.parametrize("text, raw", [
    (r"An Improved $\widehat{R}$ for MCMC", True),
    (r"the gap $F(\Delta_2, ...", True),
    (r"$x_{ij}$ and $y^{2}$", True),
    (r"inline \(a\) or display \[b\]", True),
    ("$$", True),
    ("$x$", True),
    ("it costs $5 and $6, with (K + kappa I)^{-1}, P_{i+1} and a \\ backslash", False),
    ("α₁ = tr AᵀA, R̂ < 1.01", False),
])
def test_raw_tex_rule(text, raw):
    assert bool(RAW_TEX.search(text)) is raw
