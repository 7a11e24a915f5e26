"""Screenshots of built pages, as a reader's browser shows them (headless Chromium, offline).

Usage, after a build (``jupyter-book build . -W -n --keep-going``), from the repository root::

    python tools/screenshots.py                       # the two default chapters
    python tools/screenshots.py book/copy_task ...    # any pages (without .html)

Writes ``_build/screenshots/<page>.png`` and prints the paths.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
import tempfile
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
DEFAULT = ["book/softmax_attention", "book/linear_attention"]
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
         "--hide-scrollbars", "--window-size=1280,3000", "--virtual-time-budget=20000"]


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def main(pages: list[str]) -> int:
    chromium = next((p for p in map(shutil.which, ("chromium", "chromium-browser")) if p), None)
    if chromium is None:
        print("Chromium not found: install Debian's `chromium` package", file=sys.stderr)
        return 2
    if not (HTML / "index.html").is_file():
        print(f"no built site in {HTML}: build the book first", file=sys.stderr)
        return 2
    out = ROOT / "_build" / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(HTML)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        for page in pages or DEFAULT:
            png = out / f"{Path(page).name}.png"
            with tempfile.TemporaryDirectory() as profile:
                subprocess.run([chromium, *FLAGS, f"--user-data-dir={profile}", f"--screenshot={png}",
                                f"http://127.0.0.1:{httpd.server_address[1]}/{page}.html"],
                               check=True, capture_output=True, timeout=180)
            print(png.relative_to(ROOT))
    finally:
        httpd.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
