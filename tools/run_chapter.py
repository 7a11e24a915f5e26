"""Execute one chapter the way the book build does and keep what it produced.

Usage (from the repository root)::

    python tools/run_chapter.py linear_attention [--out DIR]

The chapter runs in a fresh ``python3`` kernel with ``book/`` as working directory and
this checkout's ``copylib`` first on ``PYTHONPATH``. The executed notebook goes to
``DIR/<chapter>.ipynb`` and the check records to ``DIR/checks/<chapter>.json`` (default
``DIR``: ``_build/run_chapter``); printed: the wall time, the number of check records
and of failed checks, and the glued keys. A failing cell stops the run with its traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import jupytext
import nbformat
import yaml
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]


def cell_timeout() -> int:
    """The per-cell timeout of the book build (``execute: timeout`` in ``_config.yml``), in seconds."""
    return int(yaml.safe_load((ROOT / "_config.yml").read_text())["execute"]["timeout"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapter", help="chapter stem, e.g. linear_attention")
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "run_chapter")
    args = parser.parse_args()
    path = ROOT / "book" / f"{args.chapter}.md"
    if not path.is_file():
        parser.error(f"chapter: no file {path}")
    out = args.out.resolve()
    (out / "checks").mkdir(parents=True, exist_ok=True)
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    os.environ["COPYHEAD_CHECKS_DIR"] = str(out / "checks")
    nb = jupytext.read(path)
    client = NotebookClient(nb, kernel_name="python3", timeout=cell_timeout(), allow_errors=False,
                            resources={"metadata": {"path": str(path.parent)}})
    t0 = time.perf_counter()
    try:
        client.execute()
    finally:
        nbformat.write(nb, out / f"{args.chapter}.ipynb")
    wall = time.perf_counter() - t0
    records = json.loads((out / "checks" / f"{args.chapter}.json").read_text())["checks"]
    failed = [r for r in records if not r.get("passed", True)]
    glued = sorted({key for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])
                    for key in [o.get("metadata", {}).get("scrapbook", {}).get("name")] if key})
    print(f"{args.chapter}: {wall:.0f} s, {len(records)} check records, {len(failed)} failed")
    print("glued:", " ".join(glued))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
