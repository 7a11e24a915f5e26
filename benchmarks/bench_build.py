"""Benchmark: the book build against its budgets, and the execution time of every chapter.

Run from the repository root::

    python benchmarks/bench_build.py --builds --baseline ca660fc   # whole builds against the budgets
    python benchmarks/bench_build.py                     # every executed chapter of _toc.yml, once
    python benchmarks/bench_build.py --baseline HEAD~3   # side by side with an older revision
    python benchmarks/bench_build.py --full-build        # also a clean `jupyter-book build`
    python benchmarks/bench_build.py --builds --baseline 2a22613 \
        --baseline-patch benchmarks/baseline-2a22613.patch --ratio-budget 1.10   # issue 39's budget
    python benchmarks/bench_build.py --builds --baseline 2a22613 \
        --baseline-patch benchmarks/baseline-2a22613.patch --machinery-only --ratio-budget 1.10
                                                         # the build extensions alone, on one book

``--builds`` times whole ``jupyter-book build . -W -n --keep-going`` runs, each
into a fresh output folder: a clean build (the result cache empty) and a rebuild
(the result cache filled by that clean build), and with ``--baseline REV`` a clean
build of that revision before each clean build of this checkout, alternating for
``--repeats`` rounds so that both see the same load (their medians are compared
against ``--ratio-budget``). It checks the budgets: a clean
build within 4 minutes and within 0.67x the baseline's clean build, a rebuild
within 90 s (the absolute figures are for the 2-core machine where ca660fc's clean
build took 360 s; machines of one kind differ by up to 2.5x, hence the ratio).
The exit status is 1 when a budget is missed.

``--machinery-only`` (with ``--builds --baseline REV``) separates what builds the book
from what the book computes: both sides build the tree of ``REV`` (its chapters,
``copylib`` and configuration), one with its own build extensions (``_ext/``), the
other with this checkout's. Their ratio is the cost of the build machinery alone;
without the flag it also holds every change to the chapters and the library since ``REV``.
Only that ratio is then checked: the absolute budgets are for this checkout's book.
``--baseline-patch FILE`` applies a diff to the baseline's tree before it is built, so that a
baseline needing a fix is rebuilt from a committed revision and a committed file, never from a
throw-away commit.

Without ``--builds`` the chapters are timed one by one (the book build runs them
side by side, see ``_ext/parallel_execution.py``; the serial times say where the
time goes):

Each chapter is executed the way the book build (myst-nb) executes it: read with jupytext, run by nbclient in a fresh ``python3`` kernel
with the chapter's directory as working directory. The kernel imports
``copylib`` from this checkout (``PYTHONPATH`` is set to the repository root,
so an editable install of another checkout cannot interfere).

Printed: a table of the wall time of each chapter and its share of the total
(a profile, not a budget: the budgets are those of whole builds, ``--builds``).
``--cells N`` adds the N slowest cells of each chapter (from
nbclient's execution timestamps), which is where to look when profiling.

The result cache (:mod:`copylib.cache`) is pointed at a fresh, empty temporary
directory for every chapter run, so every run computes everything, as a clean
build on a fresh machine does (``--warm`` adds a second, cached run of each
chapter, side by side with the cold one).

``--baseline REV`` exports the chapters and ``copylib`` of a git revision into
a temporary directory and executes each of its chapters alternately with the
current one (baseline, current, baseline, current, ... for ``--repeats``
rounds), so that both see the same machine load; it prints both times and
their ratio per chapter. On a shared machine absolute times drift with the
load (printed at the start and end as the 1-minute load average); compare the
ratios.

``--full-build`` also times ``jupyter-book build . -W -n --keep-going`` into a
temporary output directory (a clean ``_build``) and prints it next to the sum
of the chapter times (the difference is Sphinx's own work).
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import jupytext
import yaml
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
CLEAN_BUDGET = 240.0  # seconds: clean build, result cache empty
REBUILD_BUDGET = 90.0  # seconds: build with the result cache filled
CLEAN_RATIO = 0.67  # clean build against the baseline's, same machine, same run
CELL_TIMEOUT = 600


def toc_chapters(root: Path) -> list[str]:
    """Chapter paths of ``_toc.yml`` (relative, with suffix), in book order."""
    def walk(entry):
        if isinstance(entry, dict):
            for key in ("root", "file"):
                if key in entry:
                    yield entry[key]
            for key in ("parts", "chapters", "sections"):
                for child in entry.get(key) or []:
                    yield from walk(child)
        elif isinstance(entry, list):
            for child in entry:
                yield from walk(child)

    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    out = []
    for name in walk(toc):
        path = root / name
        if path.suffix not in (".md", ".ipynb"):
            path = path.with_suffix(".md")
        if is_notebook(path):  # the build executes only these; Reproducing's bash blocks must not run
            out.append(str(path.relative_to(root)))
    return out


def is_notebook(path: Path) -> bool:
    """Whether the book executes ``path`` (the rule of tests/book/test_chapters.py): an ``.ipynb``,
    or a Markdown page whose front matter names a kernel."""
    if path.suffix == ".ipynb":
        return True
    text = path.read_text(encoding="utf-8")
    if not text.startswith("---"):
        return False
    return "kernelspec" in (yaml.safe_load(text.split("---", 2)[1]) or {})


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} CPUs"


@contextmanager
def kernel_environment(pythonpath: Path, cache_dir: Path | None):
    """Environment for a chapter's kernel, restored afterwards: ``copylib`` from ``pythonpath``, and the
    result cache in ``cache_dir`` (``None``: off). The kernel is a subprocess and inherits this environment."""
    backup = dict(os.environ)
    os.environ["PYTHONPATH"] = str(pythonpath)
    if cache_dir is None:
        os.environ["COPYHEAD_CACHE"] = "off"
    else:
        os.environ["COPYHEAD_CACHE_DIR"] = str(cache_dir)
        os.environ.pop("COPYHEAD_CACHE", None)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(backup)


def run_chapter(chapter: Path, pythonpath: Path, cache_dir: Path | None) -> tuple[float, list]:
    """Execute one chapter in a fresh kernel; wall time and per-cell ``(seconds, first line)``."""
    with kernel_environment(pythonpath, cache_dir):
        nb = jupytext.read(chapter)
        client = NotebookClient(nb, kernel_name="python3", timeout=CELL_TIMEOUT, allow_errors=False,
                                record_timing=True, resources={"metadata": {"path": str(chapter.parent)}})
        t0 = time.perf_counter()
        client.execute()
        wall = time.perf_counter() - t0
    cells = []
    for cell in nb.cells:
        ex = cell.get("metadata", {}).get("execution", {})
        if cell.cell_type == "code" and "iopub.execute_input" in ex and "shell.execute_reply" in ex:
            start = datetime.fromisoformat(ex["iopub.execute_input"].replace("Z", "+00:00"))
            end = datetime.fromisoformat(ex["shell.execute_reply"].replace("Z", "+00:00"))
            first = next((ln for ln in cell.source.splitlines() if ln.strip() and not ln.startswith("#")), "")
            cells.append(((end - start).total_seconds(), first[:70]))
    return wall, cells


def export_revision(rev: str, dest: Path) -> Path:
    """``book/``, ``copylib/`` and ``_toc.yml`` of git revision ``rev`` under ``dest``."""
    return export_tree(rev, dest, paths=("book", "copylib", "_toc.yml"))


def export_tree(rev: str, dest: Path, patch: Path | None = None, paths: tuple[str, ...] = ()) -> Path:
    """The tree of git revision ``rev`` (only ``paths`` if given; a build needs the whole tree, its config
    and extensions) under ``dest``, with ``patch`` (a unified diff against ``rev``) applied if given."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, *paths], check=True, capture_output=True).stdout
    dest.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    if patch is not None:
        apply_patch(patch, dest)
    return dest


def apply_patch(patch: Path, dest: Path) -> None:
    """Apply the unified diff ``patch`` to the files under ``dest``. Git is kept from finding a repository
    above ``dest`` (a temporary folder inside a checkout), where it would take paths from that
    repository's top instead."""
    env = dict(os.environ, GIT_CEILING_DIRECTORIES=str(dest.resolve().parent))
    subprocess.run(["git", "apply", str(patch.resolve())], cwd=dest, env=env, check=True)


def is_commit(rev: str) -> bool:
    """Whether ``rev`` names a commit of this repository."""
    return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
                          capture_output=True).returncode == 0


def time_build(root: Path, out: Path, cache_dir: Path) -> tuple[float, int, str]:
    """A ``jupyter-book build -W -n --keep-going`` of ``root`` into ``out`` with the result cache in
    ``cache_dir``: wall time, exit code and the log's tail."""
    env = dict(os.environ, PYTHONPATH=str(root), COPYHEAD_CACHE_DIR=str(cache_dir),
               COPYHEAD_CHECKS_DIR=str(out / "checks"))
    env.pop("COPYHEAD_CACHE", None)
    cmd = [sys.executable, "-c", "from jupyter_book.cli.main import main; main()", "build", str(root),
           "--path-output", str(out), "-W", "-n", "--keep-going"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
    return time.perf_counter() - t0, proc.returncode, (proc.stdout + proc.stderr)[-3000:]


def build_verdicts(clean: float, rebuild: float, baseline_clean: float | None,
                   ratio_budget: float = CLEAN_RATIO, absolute: bool = True) -> list[tuple[str, bool]]:
    """Each budget as (line, met): clean and rebuild absolute (unless ``absolute`` is False: they hold
    for this checkout's book, not for a baseline's built with its machinery), and clean against the
    baseline if timed."""
    lines = [(f"clean build {clean:.0f} s / {CLEAN_BUDGET:.0f} s = {clean / CLEAN_BUDGET:.2f}",
              clean <= CLEAN_BUDGET),
             (f"rebuild (result cache filled) {rebuild:.0f} s / {REBUILD_BUDGET:.0f} s = "
              f"{rebuild / REBUILD_BUDGET:.2f}", rebuild <= REBUILD_BUDGET)] if absolute else []
    if baseline_clean is not None:
        ratio = clean / baseline_clean
        lines.append((f"clean build / baseline's = {clean:.0f} s / {baseline_clean:.0f} s = {ratio:.2f} "
                      f"(budget {ratio_budget})", ratio <= ratio_budget))
    return lines


def with_extensions_of(root: Path, source: Path) -> Path:
    """``root`` with its build extensions (``_ext/``) replaced by those of ``source``."""
    shutil.rmtree(root / "_ext")
    shutil.copytree(source / "_ext", root / "_ext", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def run_builds(baseline: str | None, tmp: Path, repeats: int = 1, ratio_budget: float = CLEAN_RATIO,
               machinery_only: bool = False, patch: Path | None = None) -> int:
    """``--builds``: clean builds of the baseline (if any) and of this checkout, alternating for
    ``repeats`` rounds so both see the same load (medians compared), then a rebuild of this checkout.
    ``machinery_only`` (needs ``baseline``): "this checkout" is the baseline's tree with this checkout's
    ``_ext/``, and only the ratio is checked, so no rebuild is timed. ``patch`` is applied to the
    baseline's tree (both sides' with ``machinery_only``)."""
    print(f"bench_build --builds: {os.cpu_count()} CPUs, start: {load()}", flush=True)
    root = export_tree(baseline, tmp / "baseline", patch) if baseline else None
    current = with_extensions_of(export_tree(baseline, tmp / "current", patch), ROOT) if machinery_only else ROOT
    if machinery_only:
        print(f"  both sides build {baseline}'s book, 'clean' with this checkout's _ext/; only the ratio is judged",
              flush=True)
    cleans, baselines = [], []
    for round_ in range(repeats):
        if root is not None:
            wall, code, log = time_build(root, tmp / f"baseline_out{round_}", tmp / f"baseline_cache{round_}")
            print(f"  baseline {baseline} clean build: {wall:.1f} s (exit {code}; {load()})", flush=True)
            if code:
                print(log)
            baselines.append(wall)
        wall, code, log = time_build(current, tmp / f"clean_out{round_}", tmp / f"cache{round_}")
        print(f"  clean: {wall:.1f} s (exit {code}; {load()})", flush=True)
        if code:
            print(log)
            return 1
        cleans.append(wall)
    rebuild = math.nan
    if not machinery_only:
        rebuild, code, log = time_build(current, tmp / "rebuild_out", tmp / f"cache{repeats - 1}")
        print(f"  rebuild: {rebuild:.1f} s (exit {code}; {load()})", flush=True)
        if code:
            print(log)
            return 1
    met = True
    baseline_clean = statistics.median(baselines) if baselines else None
    for line, ok in build_verdicts(statistics.median(cleans), rebuild, baseline_clean, ratio_budget,
                                   absolute=not machinery_only):
        print(f"{line}  {'PASS' if ok else 'FAIL'}")
        met &= ok
    print(f"end: {load()}")
    return 0 if met else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chapters", nargs="*", help="chapter stems to run (default: all of _toc.yml)")
    parser.add_argument("--baseline", metavar="REV", help="git revision to time side by side with this checkout")
    parser.add_argument("--repeats", type=int, default=1, help="rounds per chapter (median reported)")
    parser.add_argument("--warm", action="store_true", help="also time a second run with the cache filled")
    parser.add_argument("--cells", type=int, default=0, metavar="N", help="print the N slowest cells per chapter")
    parser.add_argument("--full-build", action="store_true", help="also time a clean jupyter-book build")
    parser.add_argument("--builds", action="store_true",
                        help="time whole builds (clean, rebuild; --baseline: its clean build) against the budgets")
    parser.add_argument("--ratio-budget", type=float, default=CLEAN_RATIO,
                        help=f"--builds: largest clean build / baseline's clean build (default {CLEAN_RATIO})")
    parser.add_argument("--machinery-only", action="store_true",
                        help="--builds --baseline REV: build REV's book on both sides, with REV's _ext/ and with this "
                             "checkout's (the build machinery's cost alone)")
    parser.add_argument("--baseline-patch", type=Path, metavar="FILE",
                        help="--builds --baseline REV: a diff applied to REV's tree before it is built "
                             "(benchmarks/baseline-2a22613.patch makes 2a22613 build on machines where it stops)")
    args = parser.parse_args()
    if args.baseline and not is_commit(args.baseline):
        parser.error(f"--baseline: {args.baseline!r} is not a commit of this repository")
    if args.machinery_only and not (args.builds and args.baseline):
        parser.error("--machinery-only needs --builds and --baseline REV")
    if args.baseline_patch is not None and not (args.builds and args.baseline):
        parser.error("--baseline-patch needs --builds and --baseline REV")
    if args.baseline_patch is not None and not args.baseline_patch.is_file():
        parser.error(f"--baseline-patch: no file {str(args.baseline_patch)!r}")
    if args.builds:
        tmp = Path(tempfile.mkdtemp(prefix="bench_build_"))
        try:
            return run_builds(args.baseline, tmp, args.repeats, args.ratio_budget, args.machinery_only,
                              args.baseline_patch)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    chapters = toc_chapters(ROOT)
    if args.chapters:
        wanted = set(args.chapters)
        chapters = [c for c in chapters if Path(c).stem in wanted]
        if not chapters:
            parser.error(f"no chapter of _toc.yml matches {sorted(wanted)}")
    print(f"bench_build: {len(chapters)} chapter(s), COPYHEAD_SCALE={os.environ.get('COPYHEAD_SCALE', 'default')}, "
          f"python {sys.version.split()[0]}")
    print(f"start: {load()}")

    tmp = Path(tempfile.mkdtemp(prefix="bench_build_"))
    try:
        base_root = export_revision(args.baseline, tmp / "baseline") if args.baseline else None
        rows = []
        for chapter in chapters:
            cur, base, warm, cells = [], [], [], []
            for _ in range(args.repeats):
                if base_root is not None:
                    if (base_root / chapter).exists():
                        cache = Path(tempfile.mkdtemp(dir=tmp))
                        base.append(run_chapter(base_root / chapter, base_root, cache)[0])
                    else:
                        base.append(float("nan"))
                cache = Path(tempfile.mkdtemp(dir=tmp))
                wall, cells = run_chapter(ROOT / chapter, ROOT, cache)
                cur.append(wall)
                if args.warm:
                    warm.append(run_chapter(ROOT / chapter, ROOT, cache)[0])
            row = {"chapter": chapter, "time": statistics.median(cur), "cells": cells}
            if base:
                row["baseline"] = statistics.median(base)
            if warm:
                row["warm"] = statistics.median(warm)
            rows.append(row)
            extra = f"  baseline {row['baseline']:.1f} s" if base else ""
            extra += f"  warm {row['warm']:.1f} s" if warm else ""
            print(f"  ran {chapter}: {row['time']:.1f} s{extra}  ({load()})", flush=True)

        total = sum(r["time"] for r in rows)
        print()
        head = f"{'chapter':32s} {'time [s]':>9s} {'share':>7s}"
        if base_root is not None:
            head += f" {'baseline [s]':>13s} {'baseline/now':>13s}"
        if args.warm:
            head += f" {'warm [s]':>9s} {'cold/warm':>10s}"
        print(head)
        print("-" * len(head))
        for r in rows:
            line = f"{r['chapter']:32s} {r['time']:9.1f} {r['time'] / total:7.1%}"
            if base_root is not None:
                line += f" {r['baseline']:13.1f} {r['baseline'] / r['time']:12.2f}x"
            if args.warm:
                line += f" {r['warm']:9.1f} {r['time'] / r['warm']:9.1f}x"
            print(line)
        line = f"{'total':32s} {total:9.1f} {1:7.1%}"
        if base_root is not None:
            base_total = sum(r["baseline"] for r in rows)
            line += f" {base_total:13.1f} {base_total / total:12.2f}x"
        if args.warm:
            warm_total = sum(r["warm"] for r in rows)
            line += f" {warm_total:9.1f} {total / warm_total:9.1f}x"
        print(line)
        print()
        if args.cells:
            for r in rows:
                print(f"slowest cells of {r['chapter']}:")
                for sec, first in sorted(r["cells"], reverse=True)[: args.cells]:
                    print(f"  {sec:7.1f} s  {first}")
            print()

        if args.full_build:
            out = tmp / "build"
            env = dict(os.environ, PYTHONPATH=str(ROOT), COPYHEAD_CACHE_DIR=str(tmp / "build_cache"))
            env.pop("COPYHEAD_CACHE", None)
            t0 = time.perf_counter()
            proc = subprocess.run(["jupyter-book", "build", str(ROOT), "--path-output", str(out),
                                   "-W", "-n", "--keep-going"], env=env, capture_output=True, text=True)
            t_build = time.perf_counter() - t0
            status = "exit 0" if proc.returncode == 0 else f"FAILED (exit {proc.returncode})"
            print(f"clean jupyter-book build: {t_build:.1f} s ({status}); sum of chapter times {total:.1f} s; "
                  f"build / chapters = {t_build / total:.2f}")
            if proc.returncode != 0:
                print(proc.stdout[-3000:], proc.stderr[-3000:], sep="\n")
        print(f"end: {load()}")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
