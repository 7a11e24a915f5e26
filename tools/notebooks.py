"""Write notebooks/<chapter>.ipynb, the Colab copies of the chapters.

Usage (from the repository root): ``python tools/notebooks.py`` writes them,
``python tools/notebooks.py --check`` exits 1 if any is missing or out of date
(tests/book/test_launch.py runs the same comparison).

Each notebook is the chapter read by jupytext, without outputs, with one setup
cell in front: on Colab it clones the repository, installs copylib without
touching Colab's own numpy/torch, and moves into ``book/`` so the chapter runs
as it does in the book build. Elsewhere the cell does nothing.
"""

from __future__ import annotations

import sys
from pathlib import Path

import jupytext
import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
REPOSITORY = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["repository"]["url"]

# Run again (or after a restart, when the clone is there but the cwd is back in Colab's
# /content), the cell must still end in copyhead/book: the chapters' checks find the book
# from the cwd.
SETUP = f'''# Colab setup (does nothing outside Colab): get the book and copylib, run from book/.
import os, subprocess, sys
if "google.colab" in sys.modules and not os.path.exists("../_toc.yml"):  # not yet in copyhead/book
    if not os.path.exists("copyhead"):
        subprocess.run(["git", "clone", "--depth", "1", "{REPOSITORY}", "copyhead"], check=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "-e", "copyhead"], check=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "pymbar"])  # not in Colab's image (induction)
    sys.path.insert(0, os.path.abspath("copyhead"))
    os.chdir("copyhead/book")'''


def chapters() -> list[Path]:
    """The toc's pages that have code to run (the report only collects the others' records)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    names = [toc["root"]] + [c["file"] for c in toc.get("chapters", [])]
    paths = [ROOT / f"{name}.md" for name in names if not name.endswith("validation_report")]
    return [p for p in paths if any(c.cell_type == "code" for c in jupytext.read(p, fmt="md:myst").cells)]


def colab_notebook(chapter: Path) -> str:
    """The Colab notebook of ``chapter`` as ipynb JSON text."""
    nb = jupytext.read(chapter, fmt="md:myst")
    nb.cells.insert(0, nbformat.v4.new_code_cell(SETUP, metadata={"tags": ["colab-setup"]}))
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i}"  # stable ids, so regenerating gives identical files
    nb.metadata.pop("jupytext", None)
    return jupytext.writes(nb, fmt="ipynb")


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for chapter in chapters():
        text = colab_notebook(chapter)
        target = ROOT / "notebooks" / f"{chapter.stem}.ipynb"
        if check:
            if not target.is_file() or target.read_text(encoding="utf-8") != text:
                stale.append(target.relative_to(ROOT).as_posix())
        else:
            target.parent.mkdir(exist_ok=True)
            target.write_text(text, encoding="utf-8")
    if stale:
        print("out of date (run `python tools/notebooks.py`):", *stale, sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
