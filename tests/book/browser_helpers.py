"""What the browser tests share: the system Chromium, pages opened with every other host cut off
and their script errors collected, and one visit of every page of the site (:func:`render_pages`).

The fixtures ``site_url`` (the built site served on localhost), ``browser``
(Playwright driving the system Chromium) and ``rendered_pages`` (:func:`render_pages`
of the session's build, which ``test_site.py`` and ``test_math_browser.py`` inspect)
are in ``tests/conftest.py``.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from copylib.frames import _EXPLORER_CLASS, _FRAME_CLASS, _LABEL_CLASS, _LIVE_ONLY_CLASS

CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
NEEDS_CHROMIUM = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Chromium not found: install Debian's `chromium` package (the README's test command does) "
           "to run the browser test",
)
# As for any headless Chromium on these machines: no background connections, which the closed network refuses.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@contextlib.contextmanager
def launched_chromium():
    """Playwright driving the system Chromium (``executable_path``: no browser download), closed after.

    Playwright's sync API is one instance per thread: each thread that browses opens its own.
    """
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def open_offline(browser, url: str, base: str, viewport: dict, wait_until: str = "load", on_response=None,
                 skip: tuple = (), errors: list | None = None):
    """``(page, refused)``: ``url`` opened with every request outside ``base`` refused and listed in ``refused``
    (``wait_until``: as Playwright's ``page.goto``; ``"commit"`` returns while the page goes on loading;
    ``on_response``: called with every response of the page, from its first request on; ``skip``: parts of
    URLs of the site not to load, e.g. ``("mathjax",)``, not listed; ``errors``: a list that collects the
    page's script errors, see :func:`collect_errors`)."""
    page = browser.new_page(viewport=viewport)
    if on_response is not None:
        page.on("response", on_response)
    if errors is not None:
        collect_errors(page, errors)
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


def collect_errors(page, errors: list) -> None:
    """Append to ``errors``, from now on, every uncaught exception of ``page``'s scripts
    (``"pageerror: ..."``) and every message its scripts log as an error (``"console: ..."``,
    Chromium's own "Failed to load resource" lines included: a failed request is an error too), with
    the address of the script or resource when Chromium gives one."""
    def console(msg):
        if msg.type == "error":
            where = (msg.location or {}).get("url", "")
            errors.append(f"console: {msg.text}" + (f" ({where})" if where else ""))

    page.on("pageerror", lambda exc: errors.append(f"pageerror: {exc}"))
    page.on("console", console)


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


# Cell outputs (check results, printed tables) and code cut behind a scrollbar: [first 80 characters, width, room].
CUT_OUTPUT_JS = """(slack) => {
  const out = [];
  for (const pre of document.querySelectorAll('div.cell_output pre, div.output pre, div.cell_input pre, div.highlight pre')) {
    if (pre.scrollWidth > pre.clientWidth + slack) {
      out.push([pre.textContent.slice(0, 80), pre.scrollWidth, pre.clientWidth]);
    }
  }
  return out;
}"""


# Tables wider than the article's column, which the reader then scrolls sideways (a DataFrame's output box
# scrolls; a Markdown table overflows): [section id, table width, column width, start of the table's text].
WIDE_TABLES_JS = """(slack) => {
  const out = [];
  const article = document.querySelector('article'), style = getComputedStyle(article);
  const column = article.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  for (const t of document.querySelectorAll('article table')) {
    if (!t.checkVisibility()) continue;
    const width = t.getBoundingClientRect().width;
    if (width > column + slack) {
      const sec = t.closest('section');
      out.push([(sec && sec.id) || '', Math.round(width), column, t.innerText.slice(0, 60).replace(/\\s+/g, ' ')]);
    }
  }
  return out;
}"""


# Figures the column shows smaller than drawn: their text shrinks with them. The chapters draw text at 8 pt
# or more (legends; tick labels 10 pt), figures at 100 dpi and explorer frames at 90, so at this scale or
# above no text of a figure is smaller than 8 * 90 / 72 * 0.8 = 8 CSS pixels (tick labels 10), against the
# 16 of the prose.
MIN_FIGURE_SCALE = 0.8

# Visible images of the article drawn wider than they are shown: [figure id or alt text, drawn width, shown width].
SHRUNK_FIGURES_JS = """(minScale) => {
  const out = [];
  for (const img of document.querySelectorAll('article img')) {
    if (!img.checkVisibility() || !img.naturalWidth) continue;
    const shown = img.getBoundingClientRect().width;
    if (shown < minScale * img.naturalWidth) {
      const fig = img.closest('figure');
      out.push([(fig && fig.id) || img.alt.slice(0, 60), img.naturalWidth, Math.round(shown)]);
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
    cut_outputs: list  # cell outputs and code behind a scrollbar: [first 80 characters, width, room]
    shrunk_figures: list  # images shown below MIN_FIGURE_SCALE of their drawn width: [id or alt, drawn, shown]
    wide_tables: list  # tables wider than the column: [section id, width, column, first characters]
    refused: list  # requests to other hosts (refused)
    failed: list  # responses of the site with an error status: "404 /path"
    errors: list  # script errors while the page loaded and settled (:func:`collect_errors`)


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
            errors: list[str] = []
            page, refused = open_offline(browser, f"{base}/{rel}", base, VIEWPORT, wait_until="commit",
                                         on_response=_error_statuses(base, failed), errors=errors)
            batch.append((rel, page, refused, failed, errors))
        for rel, page, refused, failed, errors in batch:
            _settle(page, widgets=WIDGET_STATE in (html / rel).read_text(encoding="utf-8"))
            seen[rel] = RenderedPage(page.content(), page.evaluate(TOO_WIDE_JS, SLACK_PX),
                                     page.evaluate(VISIBLE_TEXT_JS), page.evaluate(CUT_OUTPUT_JS, SLACK_PX),
                                     page.evaluate(SHRUNK_FIGURES_JS, MIN_FIGURE_SCALE),
                                     page.evaluate(WIDE_TABLES_JS, SLACK_PX),
                                     refused, failed, list(errors))
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
    if page.locator('script[src*="mathjax/tex-"]').count():
        page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise",
                               timeout=60_000)
        page.evaluate("() => MathJax.startup.promise")
        page.evaluate("() => document.fonts.ready")  # widths are final once the fonts are in
    if widgets:
        try:
            page.wait_for_selector(WIDGET_RENDERED, state="attached", timeout=WIDGET_TIMEOUT_MS)
        except PlaywrightTimeout:
            pass


# ---- Explorers: every control moved, the frame shown checked (tests/book/test_explorers_browser.py) ----

WIDGET_STATE_BLOCK = re.compile(r'<script type="application/vnd.jupyter.widget-state\+json">(.*?)</script>', re.S)
CONTROLS = ".widget-slider, .widget-toggle-buttons"


def explorer_pages(html: Path) -> list[Path]:
    """Pages whose embedded widget state holds an explorer."""
    return sorted(p for p in html.rglob("*.html")
                  if any(_EXPLORER_CLASS in block for block in WIDGET_STATE_BLOCK.findall(p.read_text(encoding="utf-8"))))


def _open(browser, url: str, base: str):
    """The page at ``url`` once its first explorer frame shows; ``page.refused`` lists requests elsewhere,
    ``page.errors`` its script errors (:func:`collect_errors`).

    Without MathJax: the explorers do not use it (the site and math tests check the typesetting), and
    typesetting a chapter costs seconds of the browser's CPU while the controls are moved.
    """
    errors: list[str] = []
    page, page.refused = open_offline(browser, url, base, {"width": 1280, "height": 1600}, skip=("mathjax",),
                                      errors=errors)
    page.errors = errors
    page.wait_for_selector(f".{_FRAME_CLASS}", state="visible", timeout=60_000)
    return page


def _shown(explorer) -> tuple[str, str]:
    """(label, image src) of the one visible frame of ``explorer``; fails unless exactly one is visible."""
    labels = explorer.locator(f".{_LABEL_CLASS}:visible")
    images = explorer.locator(f".{_FRAME_CLASS}:visible")
    assert labels.count() == 1 and images.count() == 1, (labels.all_inner_texts(), images.count())
    image = images.first
    image.evaluate("img => img.decode()")  # waits until the picture is loaded, fails if it cannot be
    assert image.evaluate("img => img.naturalWidth") > 0
    return labels.first.inner_text().strip(), image.get_attribute("src")


def _control_values(explorer) -> dict[str, str]:
    """What every visible control shows: ``{description: value}``."""
    values = {}
    for control in explorer.locator(f"{CONTROLS}").all():
        if not control.is_visible():
            continue
        name = control.locator(".widget-label").first.inner_text().strip()
        if "widget-slider" in control.get_attribute("class"):
            values[name] = control.locator(".widget-readout").inner_text().strip()
        else:
            values[name] = control.locator(".widget-toggle-button.mod-active").inner_text().strip()
    return values


def _move(page, control, end: str):
    """Drag a slider's handle past the end of its track, or click the first/last button."""
    if "widget-slider" in control.get_attribute("class"):
        handle = control.locator(".noUi-handle")
        track = control.locator(".noUi-target").bounding_box()
        start = handle.bounding_box()
        page.mouse.move(start["x"] + start["width"] / 2, start["y"] + start["height"] / 2)
        page.mouse.down()
        x = track["x"] + track["width"] + 40 if end == "max" else track["x"] - 40
        page.mouse.move(x, start["y"] + start["height"] / 2, steps=8)
        page.mouse.up()
    else:
        buttons = control.locator(".widget-toggle-button")
        (buttons.last if end == "max" else buttons.first).click()


def _assert_label_matches(label: str, values: dict):
    for name, value in values.items():
        assert f"{name} = {value}" in label, f"frame {label!r} but the control {name} shows {value!r}"


def explore_site(html: Path, base: str) -> tuple[list[str], list[str], int]:
    """Every control of every explorer on the site moved to both ends: (explorer pages, problems, moves).

    The pages are independent: as many at once as there are cores, each worker thread with its own
    Playwright and Chromium (Playwright's sync API is one instance per thread).
    """
    from concurrent.futures import ThreadPoolExecutor

    pages = [path.relative_to(html).as_posix() for path in explorer_pages(html)]
    if not pages:
        return pages, [], 0
    n = min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1, len(pages))
    with ThreadPoolExecutor(n) as pool:
        results = list(pool.map(lambda part: _explore_pages(part, base), [pages[i::n] for i in range(n)]))
    return pages, [p for found, _ in results for p in found], sum(m for _, m in results)


def _explore_pages(rels: list[str], site_url: str) -> tuple[list[str], int]:
    """Every control of every explorer on the pages ``rels`` moved: (problems, number of moves)."""
    problems, moved = [], 0
    with launched_chromium() as browser:
        for rel in rels:
            page = _open(browser, f"{site_url}/{rel}", site_url)
            found, n = _explore_page(page, rel)
            problems += found
            moved += n
            page.close()
    return problems, moved


def _explore_page(page, rel: str) -> tuple[list[str], int]:
    problems, moved = [], 0
    live = page.locator(f".{_LIVE_ONLY_CLASS}")
    if any(live.nth(i).is_visible() for i in range(live.count())):
        problems.append(f"{rel}: controls that need a kernel are visible")
    explorers = page.locator(f".{_EXPLORER_CLASS}")
    for k in range(explorers.count()):
        explorer = explorers.nth(k)
        explorer.scroll_into_view_if_needed()
        label, _ = _shown(explorer)
        _assert_label_matches(label, _control_values(explorer))
        n_controls = explorer.locator(CONTROLS).count()
        # Two passes: each control goes to both ends, first max then min, then the other way round,
        # so an inner control is also tried in the last child of its outer stack.
        for ends in (("max", "min"), ("min", "max")):
            for c in range(n_controls):
                control = explorer.locator(CONTROLS).nth(c)
                if not control.is_visible():
                    continue  # a copy of a control in a hidden child of a stack
                for end in ends:
                    problems += _move_and_check(page, explorer, control, end, f"{rel}, explorer {k}")
                    moved += 1
    if page.refused:
        problems.append(f"{rel}: requests to other hosts: {sorted(set(page.refused))}")
    # MathJax is not loaded here (skip): the requests refused on purpose log "Failed to load resource".
    errors = [e for e in page.errors if not e.startswith("console: Failed to load resource")]
    if errors:
        problems.append(f"{rel}: script errors while the explorers were moved: {sorted(set(errors))}")
    return problems, moved


def _move_and_check(page, explorer, control, end: str, where: str) -> list[str]:
    """Move ``control`` to ``end``; the problems seen (the label must match the controls in any case)."""
    name = control.locator(".widget-label").first.inner_text().strip()
    before, was_at_end, others = _shown(explorer), _at_end(control, end), _control_values(explorer)
    _move(page, control, end)
    page.wait_for_timeout(100)
    after, values = _shown(explorer), _control_values(explorer)
    _assert_label_matches(after[0], values)
    problems = []
    if not _at_end(control, end):
        problems.append(f"{where}: {name} did not reach its {end}")
    elif was_at_end != (after == before):
        problems.append(f"{where}: moving {name} to its {end} {'changed' if was_at_end else 'did not change'} the frame")
    moved_others = {n: (v, values.get(n)) for n, v in others.items() if n != name and values.get(n) != v}
    if moved_others:
        problems.append(f"{where}: moving {name} changed other controls (before, after): {moved_others}")
    return problems


def _at_end(control, end: str) -> bool:
    """True if the control was already at ``end`` (so moving there cannot change the frame)."""
    if "widget-slider" in control.get_attribute("class"):
        now = float(control.locator(".noUi-handle").get_attribute("aria-valuenow"))
        bound = control.locator(".noUi-handle").get_attribute("aria-valuemax" if end == "max" else "aria-valuemin")
        return now == float(bound)
    buttons = control.locator(".widget-toggle-button")
    target = buttons.last if end == "max" else buttons.first
    return "mod-active" in (target.get_attribute("class") or "")
