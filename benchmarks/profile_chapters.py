"""Profile: where each chapter spends its time, attributed to copylib functions and torch/scipy/numpy leaves.

Run from the repository root::

    python benchmarks/profile_chapters.py                        # every executed chapter of _toc.yml
    python benchmarks/profile_chapters.py --chapters scaling --top 12

Each chapter is executed as the book build executes it (the way of
``bench_build.py``: jupytext + nbclient, a fresh ``python3`` kernel, the
chapter's directory as working directory, ``PYTHONPATH`` = this checkout, the
result cache pointed at an empty temporary directory, or ``--cache off``).
A first injected cell starts a ``cProfile.Profile`` inside the kernel and a
last one dumps its statistics to a temporary file; this script then prints,
per chapter, the wall time (with profiling overhead, typically 10-50 %) and
the top ``N`` functions

* by cumulative time, among copylib functions (which call of the library a
  chapter pays for), and
* by own (total) time, among copylib, torch, scipy and numpy functions (the
  leaves where the time is actually spent),

plus the share of the profiled time owned by each package. The profiler sees
only the kernel's main thread; torch's intra-op threads show up as the time
of the Python call that waits for them. Times are inflated on a shared machine
(the 1-minute load average is printed with each chapter): compare shares and
rankings, and measure speed-ups with the side-by-side benchmarks.
"""

from __future__ import annotations

import argparse
import pstats
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import jupytext
import nbformat
from bench_build import CELL_TIMEOUT, ROOT, kernel_environment, load, toc_chapters
from nbclient import NotebookClient

PACKAGES = ("copylib", "torch", "scipy", "numpy")
START = "import cProfile as _profile_chapters\n_profile_chapters_p = _profile_chapters.Profile()\n" \
        "_profile_chapters_p.enable()"
STOP = "_profile_chapters_p.disable()\n_profile_chapters_p.dump_stats({path!r})"


@dataclass(frozen=True)
class Row:
    """One function of a profile: ``label`` (``package/module.py:function`` or the builtin's name),
    its ``package`` (one of :data:`PACKAGES` or ``"other"``), primitive call count, own and cumulative seconds."""

    label: str
    package: str
    ncalls: int
    tottime: float
    cumtime: float


def package_of(filename: str, funcname: str) -> str:
    """Which of :data:`PACKAGES` a pstats entry belongs to (``"other"`` if none).

    Python functions are assigned by their file's path; builtins (file ``"~"``)
    by the qualified name pstats gives them, e.g. ``<built-in method torch.mm>``.
    """
    if filename == "~":
        for pkg in PACKAGES:
            if f"{pkg}." in funcname or f"'{pkg}" in funcname:
                return pkg
        return "other"
    parts = Path(filename).parts
    for pkg in PACKAGES:
        if pkg in parts:
            return pkg
    return "other"


def _label(filename: str, funcname: str, package: str) -> str:
    if filename == "~" or package == "other":
        return funcname if filename == "~" else f"{Path(filename).name}:{funcname}"
    parts = Path(filename).parts
    tail = parts[len(parts) - 1 - parts[::-1].index(package):]  # from the last occurrence of the package dir
    return f"{'/'.join(tail)}:{funcname}"


def rows_of(stats: dict) -> list[Row]:
    """Rows of a ``pstats.Stats(...).stats`` mapping ``(file, line, function) -> (cc, nc, tt, ct, callers)``."""
    out = []
    for (filename, _line, funcname), (cc, _nc, tt, ct, _callers) in stats.items():
        pkg = package_of(filename, funcname)
        out.append(Row(_label(filename, funcname, pkg), pkg, int(cc), float(tt), float(ct)))
    return out


@dataclass(frozen=True)
class Summary:
    """:func:`summarise` result: ``total`` profiled seconds (sum of own times), ``shares`` package ->
    fraction of it, ``by_cumulative`` (copylib only) and ``by_total`` (the packages) top rows."""

    total: float
    shares: dict
    by_cumulative: list
    by_total: list


def summarise(stats: dict, top: int = 8) -> Summary:
    """The top ``top`` copylib functions by cumulative time and package functions by own time."""
    if top < 1:
        raise ValueError(f"top must be >= 1, got {top}")
    rows = rows_of(stats)
    total = sum(r.tottime for r in rows)
    shares = {pkg: sum(r.tottime for r in rows if r.package == pkg) / total if total > 0 else 0.0
              for pkg in (*PACKAGES, "other")}
    cum = sorted((r for r in rows if r.package == "copylib"), key=lambda r: r.cumtime, reverse=True)[:top]
    own = sorted((r for r in rows if r.package != "other"), key=lambda r: r.tottime, reverse=True)[:top]
    return Summary(total=total, shares=shares, by_cumulative=cum, by_total=own)


def format_summary(s: Summary) -> str:
    """Plain-text tables of a :class:`Summary` (seconds, shares of the profiled time)."""
    lines = ["  profiled time {:.1f} s; own time by package: {}".format(
        s.total, ", ".join(f"{k} {v:.0%}" for k, v in s.shares.items()))]
    for title, rows, key in (("copylib by cumulative time", s.by_cumulative, "cumtime"),
                             ("copylib/torch/scipy/numpy by own time", s.by_total, "tottime")):
        lines.append(f"  top {title}:")
        lines.append(f"    {'cum [s]':>8s} {'own [s]':>8s} {'share':>6s} {'calls':>8s}  function")
        for r in rows:
            share = getattr(r, key) / s.total if s.total > 0 else 0.0
            lines.append(f"    {r.cumtime:8.2f} {r.tottime:8.2f} {share:6.1%} {r.ncalls:8d}  {r.label}")
    return "\n".join(lines)


def profile_chapter(chapter: Path, out: Path, cache_dir: Path | None) -> float:
    """Execute ``chapter`` as the book does, profiled inside the kernel; wall seconds. Stats go to ``out``."""
    with kernel_environment(ROOT, cache_dir):
        nb = jupytext.read(chapter)
        nb.cells.insert(0, nbformat.v4.new_code_cell(START))
        nb.cells.append(nbformat.v4.new_code_cell(STOP.format(path=str(out))))
        client = NotebookClient(nb, kernel_name="python3", timeout=CELL_TIMEOUT, allow_errors=False,
                                resources={"metadata": {"path": str(chapter.parent)}})
        t0 = time.perf_counter()
        client.execute()
        return time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chapters", nargs="*", help="chapter stems to profile (default: all of _toc.yml)")
    parser.add_argument("--top", type=int, default=8, help="functions per table (default 8)")
    parser.add_argument("--cache", choices=("fresh", "off"), default="fresh",
                        help="result cache: an empty temporary directory per chapter (default) or off")
    args = parser.parse_args()
    chapters = toc_chapters(ROOT)
    if args.chapters:
        chapters = [c for c in chapters if Path(c).stem in set(args.chapters)]
        if not chapters:
            parser.error(f"no chapter of _toc.yml matches {args.chapters}")
    print(f"profile_chapters: {len(chapters)} chapter(s), cache {args.cache}, python {sys.version.split()[0]}")
    tmp = Path(tempfile.mkdtemp(prefix="profile_chapters_"))
    try:
        for chapter in chapters:
            out = tmp / (Path(chapter).stem + ".pstats")
            cache = Path(tempfile.mkdtemp(dir=tmp)) if args.cache == "fresh" else None
            wall = profile_chapter(ROOT / chapter, out, cache)
            print(f"\n{chapter}: wall {wall:.1f} s (profiled), {load()}")
            print(format_summary(summarise(pstats.Stats(str(out)).stats, args.top)), flush=True)
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
