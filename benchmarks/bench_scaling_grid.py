"""Benchmark: the threshold grid of the scaling chapter, this checkout against a git revision, side by side.

Run from the repository root::

    python benchmarks/bench_scaling_grid.py                  # against main
    python benchmarks/bench_scaling_grid.py --baseline HEAD~3 --repeats 3

Times ``copylib.analysis.scaling.critical_sample_sizes`` on the chapter's
default grid (``L`` in 32-256, ``V`` in 2-16, the ten thresholds of
book/scaling.md), each run in a fresh Python process that imports ``copylib``
from its own tree (the baseline's is exported with ``git archive``), the two
alternating so that both see the same machine load. Prints the time of each
threshold kind (``P1``, ``P2``, ``P3``) and of the whole grid, the ratio
baseline / current, and the largest relative difference of the thresholds
between the two (the numbers must agree within the solvers' tolerances:
``P2`` is located to a relative ``1e-4``). The chapter's budget for the grid is
15 s; on a shared machine compare the ratio (the 1-minute load average is
printed).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUDGET = 15.0  # seconds: the scaling chapter's threshold grid
# one run: time each group of thresholds of the chapter's grid, print JSON
GROUPS = {"P1": ["P1_mean_field", "P1_map", "P1_leading"],
          "P2": ["P2_mean_field", "P2_fluct", "P2_analytic_mean_field", "P2_analytic_fluct"],
          "P3": ["P3_mean_field", "P3_energy", "P3_leading"]}
# a run in one tree: its threshold names (argument "names"), or the time of each group of the chapter's grid
# (argument: the groups as JSON), as JSON
CHILD = r"""
import importlib, json, pathlib, sys, time
import numpy as np
# copylib.scaling before copylib had subpackages (e.g. ca660fc); the run's cwd is its tree
scaling = importlib.import_module("copylib.analysis.scaling" if pathlib.Path("copylib/analysis").is_dir()
                                  else "copylib.scaling")
import copylib
out = {"time": {}, "values": {}, "copylib": copylib.__file__, "scaling": scaling.__file__,
       "names": list(scaling.THRESHOLDS)}
if sys.argv[1] != "names":
    for g, names in json.loads(sys.argv[1]).items():
        t0 = time.perf_counter()
        table = scaling.critical_sample_sizes([32, 64, 128, 256], [2, 4, 8, 16], names)
        out["time"][g] = time.perf_counter() - t0
        out["values"].update({n: [None if not np.isfinite(x) else float(x) for x in v]
                              for n, v in table.values.items()})
json.dump(out, sys.stdout)
"""


def run(tree: Path, groups: dict | None = None) -> dict:
    """One child run in ``tree``: the grid of ``groups`` (``None``: only the names of its thresholds)."""
    env = dict(os.environ, PYTHONPATH=str(tree), COPYHEAD_CACHE="off")
    arg = "names" if groups is None else json.dumps(groups)
    # run in the tree: ``python -c`` puts the working directory first on sys.path
    proc = subprocess.run([sys.executable, "-c", CHILD, arg], env=env, cwd=tree, capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(f"the run in {tree} failed:\n{proc.stderr[-3000:]}")
    out = json.loads(proc.stdout)
    for module in ("copylib", "scaling"):
        if not Path(out[module]).resolve().is_relative_to(tree.resolve()):
            raise RuntimeError(f"the run in {tree} imported {module} from {out[module]}")
    return out


def common_groups(*trees: Path) -> tuple[dict, list]:
    """:data:`GROUPS` restricted to the thresholds every tree has (the names change between versions),
    and the names left out."""
    known = set.intersection(*(set(run(tree)["names"]) for tree in trees))
    groups = {g: [n for n in names if n in known] for g, names in GROUPS.items()}
    return {g: names for g, names in groups.items() if names}, [n for v in GROUPS.values() for n in v if n not in known]


def max_rel_diff(a: dict, b: dict) -> dict:
    """Largest relative difference per threshold (NaN positions must agree)."""
    out = {}
    for n in a:
        pairs = list(zip(a[n], b[n]))
        if any((x is None) != (y is None) for x, y in pairs):
            out[n] = float("inf")
        else:
            out[n] = max((abs(x - y) / abs(x) for x, y in pairs if x is not None), default=0.0)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="main", metavar="REV", help="git revision to compare with (main)")
    parser.add_argument("--repeats", type=int, default=1, help="alternating rounds (the minimum is reported)")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench_scaling_grid_"))
    try:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.baseline, "copylib"], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive, check=True)
        print(f"bench_scaling_grid: baseline {args.baseline} vs this checkout; load {os.getloadavg()[0]:.2f} (1 min)"
              f" on {os.cpu_count()} CPUs")
        groups, left_out = common_groups(tmp, ROOT)
        if left_out:
            print(f"left out (not in both versions): {', '.join(left_out)}")
        base, cur = [], []
        for _ in range(args.repeats):
            base.append(run(tmp, groups))
            cur.append(run(ROOT, groups))
        print(f"{'thresholds':10s} {'baseline [s]':>13s} {'current [s]':>12s} {'ratio':>7s}")
        for g in (*base[0]["time"], "total"):
            tb = min(sum(r["time"].values()) if g == "total" else r["time"][g] for r in base)
            tc = min(sum(r["time"].values()) if g == "total" else r["time"][g] for r in cur)
            print(f"{g:10s} {tb:13.2f} {tc:12.2f} {tb / tc:6.2f}x")
        diffs = max_rel_diff(base[0]["values"], cur[0]["values"])
        print("largest relative difference per threshold:", ", ".join(f"{n} {d:.1e}" for n, d in diffs.items()))
        total = min(sum(r["time"].values()) for r in cur)
        print(f"current grid / budget = {total:.1f} s / {BUDGET:.0f} s = {total / BUDGET:.2f}  "
              f"(load {os.getloadavg()[0]:.2f} at the end)")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
