"""Benchmark: the softmax sampler near P3 with and without the gap move.

Near the first-order point of softmax attention the slow mode of MALA is the hop
between the pooling and the copy basin. ``sample_two_starts(..., gap_step=s)``
follows every MALA step with a Metropolis move of the uniform copy gap (the logits
shift by ``delta (T - J/L)``, ``delta ~ N(0, s^2)``; exact, see
``copylib.inference.proposals.LineMove``). This script runs the softmax chapter's
sampler at one size near P3 (L = 32, V = 4, P = 590, 10 data sets, one chain from
each start) both ways with the same data and steps, and prints for each the wall time,
the summed bulk ESS of the copy weight ``c`` over the data sets (ESS of each data
set's two chains, as the chapter sums it) and the effective draws per second; then
their ratio. Target: the gap move gives >= 3x the effective draws per second
(PASS/FAIL).

Run from the repository root::

    python benchmarks/bench_gap_move.py [--steps 3000] [--repeats 2]

The two ways are timed alternately (``--repeats`` rounds, the fastest of each kept);
the ESS does not depend on the round (same seed, same numbers). The 1-minute load
average is printed at the start and the end.
"""

from __future__ import annotations

import argparse
import os
import time

import torch

from copylib import ModelSpec
from copylib.analysis import softmax as sx
from copylib.inference.diagnostics import effective_sample_size

L, V, P, N_DATA, GAP_STEP = 32, 4, 590, 10, 0.8
TARGET = 3.0


def run(n_steps: int, gap_step: float | None) -> tuple[float, float]:
    """Wall time and summed bulk ESS of ``c`` for one run of the two-start sampler."""
    spec = ModelSpec(L=L, V=V, kind="softmax")
    t0 = time.perf_counter()
    _, draws = sx.sample_two_starts([P], spec, N_DATA, n_steps, n_warmup=500, thin=10, seed=28, gap_step=gap_step)
    wall = time.perf_counter() - t0
    c = draws[P][0]  # (data set, start, draw)
    return wall, sum(float(effective_sample_size(c[d])) for d in range(N_DATA))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000, help="sampling steps per chain (after 500 warm-up)")
    parser.add_argument("--repeats", type=int, default=2, help="rounds of both runs, keep the fastest")
    args = parser.parse_args()
    torch.set_num_threads(1)  # as the chapter runs it

    load_start = os.getloadavg()[0]
    times = {None: [], GAP_STEP: []}
    ess = {}
    for _ in range(args.repeats):  # alternate, so that both see the same load
        for gap in times:
            wall, ess[gap] = run(args.steps, gap)
            times[gap].append(wall)
    rate = {gap: ess[gap] / min(t) for gap, t in times.items()}
    ratio = rate[GAP_STEP] / rate[None]

    print(f"softmax two-start sampler, L={L}, V={V}, P={P}, {N_DATA} data sets x 2 chains, "
          f"{args.steps} steps after 500 warm-up")
    print(f"{'':26s}{'wall':>8s}{'summed ESS of c':>18s}{'ESS per s':>12s}{'steps per ESS':>15s}")
    for gap, label in ((None, "MALA"), (GAP_STEP, f"MALA + gap move (s={GAP_STEP})")):
        per = args.steps * 2 * N_DATA / ess[gap]
        print(f"{label:26s}{min(times[gap]):7.1f}s{ess[gap]:18.0f}{rate[gap]:12.1f}{per:15.0f}")
    print(f"effective draws per second: {ratio:.1f}x (target >= {TARGET:.0f}x): {'PASS' if ratio >= TARGET else 'FAIL'}")
    print(f"load average (1 min) {load_start:.2f} at the start, {os.getloadavg()[0]:.2f} at the end, "
          f"on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
