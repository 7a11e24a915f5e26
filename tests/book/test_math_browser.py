"""The mathematics on the built website fits the page and is typeset (issue 14, item 1).

Every page of the site (but the redirect of ``index.html``) is opened in headless
Chromium at 1280 px, driven by Playwright (from PyPI) through the system
``chromium``; requests to other hosts are refused. The pages are opened once for
this test and ``test_site.py`` (the fixture ``rendered_pages``,
``browser_helpers.render_pages``). After MathJax has typeset the page:

* every display equation must fit: the typeset formula (``mjx-math``) must be
  no wider than its container and than the content column, and neither the
  container nor the ``div.math`` around it may scroll sideways (an equation cut
  behind a scrollbar fails on the last two);
* the visible text (outside code blocks and typeset formulas) must hold no raw
  TeX: no ``$...$`` span, no TeX command such as ``\\frac``, no ``\\(`` or ``\\[``
  (``RAW_TEX``). Pages without MathJax (the bibliography) are checked too;
* the site search shows no TeX either (issue 37, item 10): its snippets are cut from the text
  of the linked page and its section titles come from the index, both passed through
  ``_static/search-snippets.js`` (formulas as plain text: "P₃ ∼ L ln² L");
* no figure is shown below 80 % of the width it was drawn at (``MIN_FIGURE_SCALE``): a wider one
  shrinks to the column, and its labels with it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from browser_helpers import MIN_FIGURE_SCALE, NEEDS_CHROMIUM, VIEWPORT, open_offline

pytestmark = NEEDS_CHROMIUM

SOURCE_CHARS = 80
# Raw TeX that a reader could see: a TeX command (\frac, \widehat, ...), TeX's math delimiters
# \( \) \[ \] \{ \}, $$, or a $...$ span that starts with neither a blank nor a digit (so
# "costs $5 and $6" does not count, "$x^{2}$" does). A braced ^{ or _{ alone does not count:
# docstrings (the API page) and the validation report write plain-text formulas such as
# "(K + kappa I)^{-1}" and "P_{i+1}" on purpose; TeX that MathJax missed keeps its delimiters.
RAW_TEX = re.compile(r"\\[A-Za-z]+|\\[()\[\]{}]|\$\$|\$[^\s$\d][^$\n]*\$")


def test_pages_were_measured(rendered_pages):
    assert len(rendered_pages) >= 10, sorted(rendered_pages)
    refused = {rel: page.refused for rel, page in rendered_pages.items() if page.refused}
    assert not refused, f"requests to other hosts: {refused}"


def test_every_display_equation_fits_the_column(rendered_pages):
    offenders = [f"{rel}: {' '.join(tex.split())[:SOURCE_CHARS]!r} "
                 f"({width:.0f} px wide, {box} px container, {column:.0f} px column)"
                 for rel, page in rendered_pages.items() for tex, width, box, column in page.too_wide]
    assert not offenders, (f"{len(offenders)} display equations wider than the column at "
                           f"{VIEWPORT['width']} px:\n" + "\n".join(offenders))


def test_no_raw_tex_in_visible_text(rendered_pages):
    offenders = []
    for rel, page in rendered_pages.items():
        text = page.visible_text
        for match in RAW_TEX.finditer(text):
            start = max(match.start() - 30, 0)
            offenders.append(f"{rel}: {match.group()!r} in {' '.join(text[start:match.end() + 30].split())!r}")
    assert not offenders, "raw TeX in the visible text:\n" + "\n".join(offenders)


def test_no_cell_output_is_cut(rendered_pages):
    """Printed results wrap inside the column (the site's stylesheet), so none hides behind a scrollbar."""
    offenders = [f"{rel}: {text!r} ({width} px in {room} px)"
                 for rel, page in rendered_pages.items() for text, width, room in page.cut_outputs]
    assert not offenders, f"{len(offenders)} cell outputs wider than the column:\n" + "\n".join(offenders)


def test_no_table_is_wider_than_the_column(rendered_pages):
    """Every table (a DataFrame, the notation page, the validation report) fits the column at 1280 px, so a
    reader sees all its columns without scrolling sideways."""
    offenders = [f"{rel} #{section}: {width} px in a {column} px column: {text!r}"
                 for rel, page in rendered_pages.items() for section, width, column, text in page.wide_tables]
    assert not offenders, (f"{len(offenders)} tables wider than the column at {VIEWPORT['width']} px "
                           f"(fewer digits, a long format, or two tables):\n" + "\n".join(offenders))


def test_no_figure_is_shrunk_to_fit(rendered_pages):
    """Every figure is drawn about as wide as the column shows it, so its labels keep their size."""
    offenders = [f"{rel}: {name!r} drawn {drawn} px wide, shown at {shown} px"
                 for rel, page in rendered_pages.items() for name, drawn, shown in page.shrunk_figures]
    assert not offenders, (f"{len(offenders)} figures shown below {MIN_FIGURE_SCALE:.0%} of their width at "
                           f"{VIEWPORT['width']} px (draw them narrower):\n" + "\n".join(offenders))


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


# ---- Site search (issue 37, item 10): snippets and section titles without raw TeX ----

SEARCH_JS = Path(__file__).resolve().parents[2] / "_static" / "search-snippets.js"
# Queries whose results include sections with a formula in the title and snippets near formulas.
SEARCH_QUERIES = ("threshold", "Occam", "saddle point")


@pytest.mark.parametrize("tex, text", [
    (r"\(P_3 \sim L \ln^2 L\)", "P₃ ∼ L ln² L"),
    (r"P_1 \sim V^2: the readout’s Occam factor", "P₁ ∼ V²: the readout’s Occam factor"),
    (r"\(\sigma^2 = \sigma_0^2 L\)", "σ² = σ₀² L"),
    (r"\[\Omega(c) = \frac{1}{2}\ln\det(K + \kappa I)\]", "Ω(c) = 1/2 ln det(K + κ I)"),
    (r"\(\widehat{R} < 1.01\)", "R < 1.01"),
    (r"P_{\rm lower} – P_{\rm upper}", "P_(lower) – P_(upper)"),
    (r"The network M^\ast", "The network M*"),
    (r"\(100\,\%\)", "100 %"),
    (r"\(\{1, 2\}\)", "{1, 2}"),
])
def test_search_text_of_a_formula(browser, tex, text):
    """texToText (_static/search-snippets.js): what the search shows for a formula."""
    page = browser.new_page()
    try:
        page.set_content("<html><body></body></html>")
        page.add_script_tag(path=str(SEARCH_JS))
        shown = page.evaluate("tex => copyheadSearch.texToText(tex)", tex)
    finally:
        page.close()
    assert shown == text
    assert not RAW_TEX.search(shown) and "\\" not in shown


# The text Sphinx's search cuts snippets from, for every chapter page (code blocks left out: code
# is shown as code), and the number of formulas each page has: {page: [text, formulas]}.
SEARCH_TEXT_JS = """async (pages) => {
  const out = {};
  for (const page of pages) {
    const html = await (await fetch(page)).text();
    const doc = new DOMParser().parseFromString(html, 'text/html');
    const formulas = doc.querySelectorAll('span.math, div.math').length;
    doc.querySelectorAll('pre, code').forEach((el) => el.remove());
    out[page] = [Search.htmlToText(doc.documentElement.outerHTML), formulas];
  }
  return out;
}"""


def test_search_snippets_and_titles_show_no_raw_tex(built_site, site_url, browser):
    """The search page's snippets come from the linked page's text, its section titles from the
    index: neither may show TeX. Checked on the whole text of every chapter (a snippet is a part of
    it) and on the results of a few queries as the reader sees them."""
    pages = sorted(f"book/{p.name}" for p in (built_site / "book").glob("*.html"))
    errors: list[str] = []  # the search page is not among the pages render_pages visits: its errors count here
    page, refused = open_offline(browser, f"{site_url}/search.html", site_url, VIEWPORT, errors=errors)
    try:
        texts = page.evaluate(SEARCH_TEXT_JS, pages)
        shown = {}
        for query in SEARCH_QUERIES:
            page.goto(f"{site_url}/search.html?q={query.replace(' ', '+')}")
            # Sphinx lists the results, then fetches each result's page for its snippet (a result that
            # is an API object gets its description in a span instead).
            page.wait_for_function("""() => {
              const status = document.querySelector('#search-results p.search-summary');
              const items = document.querySelectorAll('#search-results ul.search li');
              return status && status.innerText.startsWith('Search finished') && items.length > 0
                && [...items].every((li) => li.querySelector('p.context, span'));
            }""", timeout=60_000)
            shown[query] = page.locator("#search-results ul.search").inner_text()
    finally:
        page.close()
    assert sum(formulas for _, formulas in texts.values()) > 100, "the chapters should have formulas"
    offenders = [f"{name}: {m.group()!r} in {' '.join(text[max(m.start() - 30, 0):m.end() + 30].split())!r}"
                 for name, (text, _) in texts.items() for m in RAW_TEX.finditer(text)]
    offenders += [f"results for {query!r}: {m.group()!r} in "
                  f"{' '.join(text[max(m.start() - 30, 0):m.end() + 30].split())!r}"
                  for query, text in shown.items() for m in RAW_TEX.finditer(text)]
    assert not offenders, "raw TeX in what the search shows:\n" + "\n".join(offenders)
    assert not refused, refused
    assert not errors, errors
