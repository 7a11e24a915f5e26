"""Benchmark: a full theory sweep over 60 sample sizes, both attention kinds, against a 2 s budget.

Run from the repository root::

    python benchmarks/bench_theory.py [--repeats 3]

The sweep is what the theory chapters draw: the global minimum of every version
of the reduced action at 60 values of ``P`` spaced evenly in ``ln P`` from 1 to
10^4, at ``L = 32``, ``V = 4``:

* linear attention, :func:`copylib.theory.linear.minimum_curve` for
  ``mean_field``, ``fluct`` and ``map``;
* softmax attention, :func:`copylib.theory.softmax.minimum_curve` for
  ``mean_field``, ``map``, ``energy`` and ``fluct`` (with the default 8192-draw
  :func:`copylib.theory.softmax.row_noise`, drawn inside the timed sweep).

Every repetition starts cold: the softmax module's table of Delta-grid row
averages is cleared first, so the fluct table (8192 draws x 4001 grid points)
is computed inside the timing, as in a fresh process.

Printed, all measured in this run: the sweep time against the 2 s budget as a
ratio (PASS when below 1; the fastest of ``--repeats``, the least disturbed by
other load, and the median), and the speed-up of the sweep over the same
minima computed one ``P`` at a time (:func:`copylib.theory.linear.global_minimum`,
:func:`copylib.theory.softmax.global_minimum`), which also checks
that both give the same minima.

``--baseline REV`` also times the same sweep with ``copylib`` of git revision
``REV`` (exported to a temporary directory, run in a subprocess), alternating
with the current one, and prints the ratio of the two.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import copylib as cl
from copylib.theory import linear as lt
from copylib.theory import softmax as st

L, V, N_P = 32, 4, 60
BUDGET = 2.0  # seconds
P_GRID = np.geomspace(1.0, 1e4, N_P)
LINEAR = ("mean_field", "fluct", "map")
SOFTMAX = ("mean_field", "map", "energy", "fluct")


def sweep():
    """The full sweep; returns the global-minimum order parameter of every (kind, version, P)."""
    spec_l = cl.ModelSpec(L, V, kind="linear")
    spec_s = cl.ModelSpec(L, V, kind="softmax")
    out = {}
    for v in LINEAR:
        out["linear", v] = lt.minimum_curve(P_GRID, spec_l, v).coordinates["m"]
    noise = st.row_noise(spec_s, np.random.default_rng(3))
    for v in SOFTMAX:
        out["softmax", v] = st.minimum_curve(P_GRID, spec_s, v, noise=noise if v == "fluct" else None).coordinates["Delta"]
    return out


def pointwise():
    """The same minima, one P at a time."""
    spec_l = cl.ModelSpec(L, V, kind="linear")
    spec_s = cl.ModelSpec(L, V, kind="softmax")
    out = {}
    for v in LINEAR:
        out["linear", v] = np.array([lt.global_minimum(float(P), spec_l, v).coordinates["m"] for P in P_GRID])
    noise = st.row_noise(spec_s, np.random.default_rng(3))
    for v in SOFTMAX:
        out["softmax", v] = np.array([st.global_minimum(float(P), spec_s, v, noise=noise if v == "fluct" else None)
                                      .coordinates["Delta"] for P in P_GRID])
    return out


def timed(fn):
    # cold: the fluct grid table is part of the work (kept by softmax_action, by softmax before the split)
    for module in (st, sys.modules.get("copylib.theory.softmax_action")):
        getattr(module, "_GRID_CACHE", {}).clear()
    t0 = time.perf_counter()
    result = fn()
    return time.perf_counter() - t0, result


def subprocess_sweep(pythonpath: Path) -> float:
    """Wall time of one cold sweep in a fresh interpreter importing copylib from ``pythonpath``."""
    out = subprocess.run([sys.executable, __file__, "--time-one"], env=dict(os.environ, PYTHONPATH=str(pythonpath)),
                         check=True, capture_output=True, text=True).stdout
    return float(out.split()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="timings of the sweep (fastest and median reported)")
    parser.add_argument("--baseline", metavar="REV", help="also time the sweep with copylib of this git revision")
    parser.add_argument("--time-one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.time_one:  # child process of --baseline: one warm-up, then one cold sweep
        timed(sweep)
        print(timed(sweep)[0])
        return 0
    one, five, _ = os.getloadavg()
    print(f"bench_theory: L={L}, V={V}, {N_P} values of P in [1, 1e4]; linear {LINEAR}, softmax {SOFTMAX}")
    print(f"start: load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} CPUs")

    timed(sweep)  # warm up imports and caches of numpy/scipy
    times, per_part = [], {}
    for _ in range(args.repeats):
        t, fast = timed(sweep)
        times.append(t)
    t_point, slow = timed(pointwise)

    # per-part times of one more cold sweep, for the table
    st._GRID_CACHE.clear()
    spec_l, spec_s = cl.ModelSpec(L, V, kind="linear"), cl.ModelSpec(L, V, kind="softmax")
    for v in LINEAR:
        t0 = time.perf_counter()
        lt.minimum_curve(P_GRID, spec_l, v)
        per_part["linear", v] = time.perf_counter() - t0
    t0 = time.perf_counter()
    noise = st.row_noise(spec_s, np.random.default_rng(3))
    per_part["softmax", "row_noise"] = time.perf_counter() - t0
    for v in SOFTMAX:
        t0 = time.perf_counter()
        st.minimum_curve(P_GRID, spec_s, v, noise=noise if v == "fluct" else None)
        per_part["softmax", v] = time.perf_counter() - t0
    part_total = sum(per_part.values())

    print()
    print(f"{'part':28s} {'time [s]':>9s} {'share':>7s}")
    for (kind, v), t in per_part.items():
        print(f"{kind + ' ' + v:28s} {t:9.3f} {t / part_total:7.1%}")
    print(f"{'(this sweep)':28s} {part_total:9.3f}")
    print()

    worst = max(float(np.max(np.abs(fast[key] - slow[key]) / np.maximum(1.0, np.abs(slow[key])))) for key in fast)
    agree = worst < 1e-6
    best, med = min(times), statistics.median(times)
    print(f"full sweep: fastest {best:.3f} s, median {med:.3f} s of {args.repeats} cold runs")
    print(f"sweep / budget = {best:.3f} s / {BUDGET:.0f} s = {best / BUDGET:.2f} (median {med / BUDGET:.2f})  "
          f"(target < 1: {'PASS' if best < BUDGET else 'FAIL'})")
    print(f"one P at a time: {t_point:.3f} s;  pointwise / sweep = {t_point / med:.1f}x (same minima: "
          f"max difference {worst:.1e} {'PASS' if agree else 'FAIL'})")
    if args.baseline:
        root = Path(__file__).resolve().parents[1]
        tmp = Path(tempfile.mkdtemp(prefix="bench_theory_"))
        try:
            archive = subprocess.run(["git", "-C", str(root), "archive", args.baseline, "copylib"],
                                     check=True, capture_output=True).stdout
            subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive, check=True)
            base, cur = [], []
            for _ in range(args.repeats):  # alternate, so that both see the same load
                base.append(subprocess_sweep(tmp))
                cur.append(subprocess_sweep(root))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        b, c = statistics.median(base), statistics.median(cur)
        print(f"baseline {args.baseline}: median {b:.3f} s, this checkout: median {c:.3f} s "
              f"(fresh processes, alternating);  baseline / now = {b / c:.1f}x")
    one, five, _ = os.getloadavg()
    print(f"end: load average {one:.2f} (1 min), {five:.2f} (5 min)")
    return 0 if (best < BUDGET and agree) else 1


if __name__ == "__main__":
    raise SystemExit(main())
