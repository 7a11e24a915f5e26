"""What the browser tests share: the system Chromium, pages opened with every other host cut off,
and one visit of every page of the site (:func:`render_pages`).

The fixtures ``site_url`` (the built site served on localhost), ``browser``
(Playwright driving the system Chromium) and ``rendered_pages`` (:func:`render_pages`
of the session's build, which ``test_site.py`` and ``test_math_browser.py`` inspect)
are in ``tests/conftest.py``.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest

CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
NEEDS_CHROMIUM = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Chromium not found: install Debian's `chromium` package (the README's test command does) "
           "to run the browser test",
)
# As for any headless Chromium on these machines: no background connections, which the closed network refuses.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def open_offline(browser, url: str, base: str, viewport: dict, wait_until: str = "load", on_response=None,
                 skip: tuple = ()):
    """``(page, refused)``: ``url`` opened with every request outside ``base`` refused and listed in ``refused``
    (``wait_until``: as Playwright's ``page.goto``; ``"commit"`` returns while the page goes on loading;
    ``on_response``: called with every response of the page, from its first request on; ``skip``: parts of
    URLs of the site not to load, e.g. ``("mathjax",)``, not listed)."""
    page = browser.new_page(viewport=viewport)
    if on_response is not None:
        page.on("response", on_response)
    refused: list[str] = []

    def route(r):
        if skip and r.request.url.startswith(base + "/") and any(part in r.request.url for part in skip):
            r.abort()
        elif r.request.url.startswith((base + "/", "data:", "blob:")):
            r.continue_()
        else:
            refused.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.goto(url, wait_until=wait_until)
    return page, refused


VIEWPORT = {"width": 1280, "height": 1600}
# Sub-pixel rounding: widths are compared after the browser rounds them to whole pixels.
SLACK_PX = 1
# Pages loading at once: typesetting is the browser's CPU work, so a few more than the cores keep them busy.
PAGES_AT_ONCE = 4
REDIRECT = re.compile(r'\s*<meta http-equiv="Refresh" content="\d+;\s*url=([^"]+)"', re.I)
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
# What the widget manager draws for an explorer's controls and boxes.
WIDGET_RENDERED = ".widget-slider, .widget-dropdown, .widget-hslider, .widget-vbox"
WIDGET_TIMEOUT_MS = 60_000  # the manager renders within a second or two; a page without widgets is reported

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



def site_pages(html: Path) -> list[Path]:
    """The pages of the site: every ``.html`` but the generated index, search and module index and
    Sphinx's own folders (``_static``, ``_sources``...)."""
    skip = {"genindex.html", "search.html", "py-modindex.html"}
    return sorted(p for p in html.rglob("*.html")
                  if p.name not in skip and not p.relative_to(html).parts[0].startswith("_"))


def redirect_target(page: Path) -> str | None:
    """The URL a redirect page (a bare ``<meta http-equiv="Refresh">``) sends the reader to, else None."""
    match = REDIRECT.match(page.read_text(encoding="utf-8"))
    return match.group(1) if match else None


@dataclass(frozen=True)
class RenderedPage:
    """One page as the browser left it: after load, MathJax's typesetting and the widget manager."""

    dom: str = field(repr=False)  # the document after its scripts ran
    too_wide: list  # display equations wider than their room: [TeX, formula width, container width, column]
    visible_text: str = field(repr=False)  # the text a reader sees, outside code and typeset formulas
    cut_outputs: list  # cell outputs behind a scrollbar: [first 80 characters, width, room]
    refused: list  # requests to other hosts (refused)
    failed: list  # responses of the site with an error status: "404 /path"


def render_pages(browser, base: str, html: Path) -> dict[str, RenderedPage]:
    """Every page of :func:`site_pages` but redirects, opened once at ``VIEWPORT``: ``{relative path: RenderedPage}``.

    A few pages load at once (each in its own renderer process) while the first is measured.
    """
    rels = [p.relative_to(html).as_posix() for p in site_pages(html) if redirect_target(p) is None]
    seen = {}
    for start in range(0, len(rels), PAGES_AT_ONCE):
        batch = []
        for rel in rels[start:start + PAGES_AT_ONCE]:
            failed: list[str] = []
            page, refused = open_offline(browser, f"{base}/{rel}", base, VIEWPORT, wait_until="commit",
                                         on_response=_error_statuses(base, failed))
            batch.append((rel, page, refused, failed))
        for rel, page, refused, failed in batch:
            _settle(page, widgets=WIDGET_STATE in (html / rel).read_text(encoding="utf-8"))
            seen[rel] = RenderedPage(page.content(), page.evaluate(TOO_WIDE_JS, SLACK_PX),
                                     page.evaluate(VISIBLE_TEXT_JS), page.evaluate(CUT_OUTPUT_JS, SLACK_PX),
                                     refused, failed)
            page.close()
    return seen


def _error_statuses(base: str, failed: list):
    """A response handler listing in ``failed`` every response with an error status, as ``"404 /path"``."""
    def record(response):
        if response.status >= 400:
            failed.append(f"{response.status} {response.url[len(base):]}")
    return record


def _settle(page, widgets: bool) -> None:
    """Wait until ``page`` has loaded, MathJax (if the page loads it) has typeset it and (``widgets``)
    the widget manager has drawn a widget; a widget that never appears is left to the test to report."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.wait_for_load_state("load")
    # Sphinx loads MathJax only on pages with math.
    if page.locator('script[src*="mathjax"]').count():
        page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise",
                               timeout=60_000)
        page.evaluate("() => MathJax.startup.promise")
        page.evaluate("() => document.fonts.ready")  # widths are final once the fonts are in
    if widgets:
        try:
            page.wait_for_selector(WIDGET_RENDERED, state="attached", timeout=WIDGET_TIMEOUT_MS)
        except PlaywrightTimeout:
            pass
