"""What the browser tests share: the system Chromium, and pages opened with every other host cut off.

The fixtures ``site_url`` (the built site served on localhost) and ``browser``
(Playwright driving the system Chromium) are in ``tests/conftest.py``.
"""

from __future__ import annotations

import shutil

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


def open_offline(browser, url: str, base: str, viewport: dict, wait_until: str = "load"):
    """``(page, refused)``: ``url`` opened with every request outside ``base`` refused and listed in ``refused``
    (``wait_until``: as Playwright's ``page.goto``; ``"commit"`` returns while the page goes on loading)."""
    page = browser.new_page(viewport=viewport)
    refused: list[str] = []

    def route(r):
        if r.request.url.startswith((base + "/", "data:", "blob:")):
            r.continue_()
        else:
            refused.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.goto(url, wait_until=wait_until)
    return page, refused
