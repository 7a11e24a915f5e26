"""The built website as a reader's browser sees it (headless Chromium, no network).

Every page of ``_build/html`` is served on localhost and opened in headless
Chromium with every other host unresolvable, so MathJax and the widget manager
must come from the site itself. After the page's scripts have run, the DOM is
checked: math typeset, no raw TeX delimiters, no traceback in any output, every
image a real image file, widget state embedded and rendered where a chapter
has an explorer. Every request the pages made must have been answered (no 404).

Skips, saying why, when Chromium is absent (the CI command installs it).
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Chromium not found: install Debian's `chromium` package (the README's test command does) "
           "to run the browser test",
)

# Flags as for any headless Chromium here; the resolver rule makes every host but
# localhost unreachable, which is what "works without network" means.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
         "--window-size=1280,4000", "--virtual-time-budget=20000", "--dump-dom"]
MATH = 'class="math notranslate nohighlight"'
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


class _Log(SimpleHTTPRequestHandler):
    requests: list  # (path, status), set per server

    def log_request(self, code="-", size="-"):
        self.requests.append((self.path.split("?")[0], int(code)))

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server(built_site):
    requests: list = []
    handler = type("Handler", (_Log,), {"requests": requests})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(built_site)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", requests
    httpd.shutdown()


def pages(html: Path) -> list[Path]:
    skip = {"genindex.html", "search.html", "py-modindex.html"}
    return sorted(p for p in html.rglob("*.html")
                  if p.name not in skip and not p.relative_to(html).parts[0].startswith("_"))


def render(url: str, profile: Path) -> str:
    run = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", url],
                         capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, f"chromium failed on {url}: {run.stderr[-2000:]}"
    return run.stdout


def visible_text(dom: str) -> str:
    """The DOM without scripts, styles, code blocks and MathJax's own output."""
    for tag in ("script", "style", "pre", "code", "mjx-container", "textarea"):
        dom = re.sub(rf"<{tag}\b.*?</{tag}>", " ", dom, flags=re.S | re.I)
    return re.sub(r"<[^>]+>", " ", dom)


def explorer_chapters() -> set[str]:
    return {p.stem for p in (ROOT / "book").glob("*.md") if "_explorer(" in p.read_text(encoding="utf-8")}


def test_every_page_renders_offline(built_site, server, tmp_path):
    base, requests = server
    found = pages(built_site)
    assert len(found) >= 5, f"too few pages in {built_site}: {found}"
    problems = []
    widget_pages = set()
    for page in found:
        rel = page.relative_to(built_site).as_posix()
        static = page.read_text(encoding="utf-8")
        dom = render(f"{base}/{rel}", tmp_path / "profile")
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
    missing_state = explorer_chapters() - widget_pages
    if missing_state:
        problems.append(f"chapters with an explorer but no embedded widget state: {sorted(missing_state)}")
    # The browser asks for /favicon.ico on its own; every other request comes from a page.
    failed = sorted({f"{status} {path}" for path, status in requests
                     if status >= 400 and path != "/favicon.ico"})
    if failed:
        problems.append(f"requests that failed: {failed}")
    assert not problems, "\n".join(problems)


def test_widget_pages_load_the_vendored_manager(built_site):
    """The manager is loaded from the site (vendor/site), not from a CDN."""
    for page in pages(built_site):
        static = page.read_text(encoding="utf-8")
        if WIDGET_STATE in static:
            assert re.search(r'<script[^>]*src="(?![a-z]+://)[^"]*widgets/embed\.js', static), page.name
            assert "cdn.jsdelivr.net" not in static and "cdnjs" not in static, page.name
        if MATH in static:
            assert re.search(r'<script[^>]*src="(?![a-z]+://)[^"]*mathjax/tex-chtml\.js', static), page.name
