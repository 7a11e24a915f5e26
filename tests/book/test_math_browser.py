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
  (``RAW_TEX``). Pages without MathJax (the bibliography) are checked too.
"""

from __future__ import annotations

import re

import pytest
from browser_helpers import NEEDS_CHROMIUM, VIEWPORT

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
