"""Benchmark: a chapter's kernel forked from a warm process against a fresh kernel, side by side.

The build starts each chapter's kernel by forking it from a process that has already imported
numpy, scipy, torch, matplotlib and copylib (``_ext/warm_kernels.py``) instead of starting a fresh
``python -m ipykernel_launcher``. This times, alternately in one run, both ways of executing

* a notebook holding only the imports of the chapters' first cells (what the fork saves), and
* the shortest chapter, ``book/intro.md`` (what a whole chapter sees),

each from kernel start to kernel shutdown, as the build's pool does (``nbclient``, the chapter's
folder as working directory, the result cache off), and prints the time per execution and the
saving. Target: the import notebook at least 2x faster forked (PASS/FAIL). The first forked run
pays for starting the zygote; it is left out, as the build pays it once per worker for a dozen
chapters.

Run from the repository root::

    python benchmarks/bench_kernels.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import jupytext
import nbformat
from bench_build import ROOT, load  # this directory is on sys.path when a script here runs
from nbclient import NotebookClient

TARGET = 2.0
IMPORTS = """import matplotlib.pyplot as plt
import numpy as np
import torch
from scipy import optimize, special, stats
from myst_nb import glue
import copylib as cl"""


def execute(nb, warm_manager) -> float:
    """Wall seconds to execute a copy of ``nb`` in ``book/`` (``warm_manager``: a forked kernel)."""
    kwargs = {} if warm_manager is None else {"kernel_manager_class": warm_manager}
    client = NotebookClient(nbformat.from_dict(nb), timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT / "book")}}, **kwargs)
    t0 = time.perf_counter()
    client.execute()
    return time.perf_counter() - t0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="executions of each notebook each way")
    args = parser.parse_args()
    os.environ["COPYHEAD_CACHE"] = "off"
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(name, "1")  # as the build's pool sets them
    sys.path.insert(0, str(ROOT / "_ext"))  # as Sphinx's local extensions see it
    import warm_kernels

    manager = warm_kernels.WarmKernelManager
    imports = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(IMPORTS)],
                                       metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                                "language": "python"}})
    notebooks = {"imports of a first cell": imports, "book/intro.md": jupytext.read(ROOT / "book" / "intro.md")}
    print(f"bench_kernels: {os.cpu_count()} CPUs, start: {load()}")
    execute(imports, manager)  # starts the zygote
    ratios = {}
    for name, nb in notebooks.items():
        fresh, forked = [], []
        for _ in range(args.repeats):
            fresh.append(execute(nb, None))
            forked.append(execute(nb, manager))
        f, w = sum(fresh) / len(fresh), sum(forked) / len(forked)
        ratios[name] = f / w
        print(f"{name:24s} fresh kernel {f:5.2f} s, forked {w:5.2f} s: {f - w:4.2f} s less, {f / w:.1f}x"
              f" ({args.repeats} each, alternating)")
    ratio = ratios["imports of a first cell"]
    print(f"imports forked {ratio:.1f}x faster (target >= {TARGET}x): {'PASS' if ratio >= TARGET else 'FAIL'}")
    print(f"end: {load()}")


if __name__ == "__main__":
    main()
