"""The built website as a reader's browser sees it (headless Chromium, no network).

Every page of ``_build/html`` is served on localhost and opened in headless
Chromium with every request to another host refused (``rendered_pages``: one visit
of every page, shared with ``test_math_browser.py``), so MathJax and the widget
manager must come from the site itself. After the page's scripts have run, the DOM
is checked: math typeset, no raw TeX delimiters, no traceback in any output, every
image a real image file, widget state embedded and rendered where a chapter
has an explorer. Every request the pages made must have been answered (no 404)
and none may have gone to another host, and no page's scripts may throw or log
an error. The one redirect (``index.html``) must point at a rendered page.

Skips, saying why, when Chromium is absent (the CI command installs it).
"""

from __future__ import annotations

import re
from pathlib import Path

from browser_helpers import NEEDS_CHROMIUM, WIDGET_STATE, redirect_target, site_pages

ROOT = Path(__file__).resolve().parents[2]
pytestmark = NEEDS_CHROMIUM
MATH = 'class="math notranslate nohighlight"'


def visible_text(dom: str) -> str:
    """The DOM without scripts, styles, code blocks and MathJax's own output."""
    for tag in ("script", "style", "pre", "code", "mjx-container", "textarea"):
        dom = re.sub(rf"<{tag}\b.*?</{tag}>", " ", dom, flags=re.S | re.I)
    return re.sub(r"<[^>]+>", " ", dom)


def explorer_chapters() -> set[str]:
    return {p.stem for p in (ROOT / "book").glob("*.md") if "_explorer(" in p.read_text(encoding="utf-8")}


def test_every_page_renders_offline(built_site, rendered_pages):
    found = site_pages(built_site)
    assert len(found) >= 5, f"too few pages in {built_site}: {found}"
    problems = []
    widget_pages = set()
    for page in found:
        rel = page.relative_to(built_site).as_posix()
        target = redirect_target(page)
        if target is not None:
            dest = (page.parent / target.split("#")[0]).resolve()
            site = built_site.resolve()
            if not (dest.is_relative_to(site) and dest.relative_to(site).as_posix() in rendered_pages):
                problems.append(f"{rel}: redirects to {target}, not a page of the site")
            continue
        static = page.read_text(encoding="utf-8")
        shown = rendered_pages[rel]
        dom = shown.dom
        # Each math element gets one mjx-container; one left untypeset would also
        # leave its \( or \[ in the visible text, checked next.
        n_math = static.count(MATH)
        typeset = dom.count("<mjx-container")
        if typeset < n_math:
            problems.append(f"{rel}: {typeset} MathJax containers for {n_math} math elements")
        text = visible_text(dom)
        for raw in ("$$", "\\[", "\\(", "\\begin{"):
            if raw in text:
                problems.append(f"{rel}: raw TeX {raw!r} left in the page text")
        if "Traceback (most recent call last)" in dom or "output traceback" in dom:
            problems.append(f"{rel}: a cell output contains a traceback")
        for src in re.findall(r'<img[^>]+src="([^"]+)"', static):
            if src.startswith("data:"):
                continue
            if "://" in src:
                problems.append(f"{rel}: image from another host {src}")
                continue
            target = (page.parent / src).resolve()
            head = target.read_bytes()[:256] if target.is_file() else b""
            if not (head.startswith(b"\x89PNG") or b"<svg" in head or head.startswith(b"\xff\xd8")):
                problems.append(f"{rel}: image {src} missing or not an image")
        if WIDGET_STATE in static:
            widget_pages.add(page.stem)
            if not re.search(r'class="[^"]*\bwidget-(slider|dropdown|hslider|vbox)\b', dom):
                problems.append(f"{rel}: widget state embedded but no widget rendered")
        # every request, the browser's own icon request included (the site links _static/favicon.png)
        problems += [f"{rel}: request failed: {f}" for f in shown.failed]
        problems += [f"{rel}: request to another host: {url}" for url in shown.refused]
    missing_state = explorer_chapters() - widget_pages
    if missing_state:
        problems.append(f"chapters with an explorer but no embedded widget state: {sorted(missing_state)}")
    assert not problems, "\n".join(problems)


def test_no_page_raises_a_script_error(rendered_pages):
    """No page's scripts throw or log an error while it loads, typesets and draws its widgets (issue 37,
    item 12: a script declared twice, an invalid colour mode, MathJax 2 calls of the widget manager)."""
    problems = [f"{rel}: {error}" for rel, page in rendered_pages.items() for error in page.errors]
    assert not problems, f"{len(problems)} script errors:\n" + "\n".join(problems)


def test_widget_pages_load_the_vendored_manager(built_site):
    """The manager is loaded from the site (vendor/site), not from a CDN."""
    for page in site_pages(built_site):
        static = page.read_text(encoding="utf-8")
        if WIDGET_STATE in static:
            assert re.search(r'<script[^>]*src="(?![a-z]+://)[^"]*widgets/embed\.js', static), page.name
            assert "cdn.jsdelivr.net" not in static and "cdnjs" not in static, page.name
        if MATH in static:
            assert re.search(r'<script[^>]*src="(?![a-z]+://)[^"]*mathjax/tex-chtml\.js', static), page.name
