"""Benchmark: the book's samplers side by side near the softmax P3, effective draws of c per CPU second.

The softmax chapter samples near ``P3`` with MALA and the exact gap move (``gap_step = 0.8``), the
sampler that issue 38's build budget pays for most. This script asks whether another sampler of the
book buys the same evidence for less: HMC (8 leapfrog steps per proposal) with the same gap move,
and HMC alone. All three run in one process, on the same data sets and the same starts as the
chapter (two chains per data set, one at uniform attention, one planted at the gap 2.4), with the
same budget of energy-and-gradient evaluations per chain (MALA + gap move: 2 per step; HMC with
``n`` leapfrog steps: ``n``, plus 1 with the gap move), in an order that rotates from point to point.
The score is the bulk ESS of the copy weight ``c`` (ArviZ, each data set's two chains together),
summed over the data sets as in the chapter, per CPU second of the process (``time.process_time``,
torch on one thread). Means of ``c`` are printed with their Monte Carlo standard errors: the samplers
draw from one posterior, so they must agree.

No target: the ratios against the chapters' sampler say which one to run.
Run from the repository root::

    python benchmarks/bench_near_p3.py [--points 32:590,48:1039] [--data-sets 4] [--evals 8000]
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import time

import numpy as np
import torch

from copylib import ModelSpec, cooccurrence, copy_task
from copylib.analysis.softmax import planted_init, planted_logits
from copylib.inference.diagnostics import effective_sample_size, mcse_mean
from copylib.inference.posterior_sampling import sample_collapsed_posterior

V = 4  # the softmax chapter's vocabulary
GAP_STEP, PLANTED_GAP = 0.8, 2.4  # the chapter's gap move and planted start
#: name -> (leapfrog steps, gap move, warmup acceptance target, evaluations per step)
SAMPLERS = {
    "MALA + gap move (the chapters')": (1, True, 0.57, 2),
    "HMC 8 + gap move": (8, True, 0.8, 9),
    "HMC 8": (8, False, 0.8, 8),
}


def data(L: int, P: int, n_data: int, seed: int) -> tuple[np.ndarray, ModelSpec]:
    """Co-occurrences ``(2 n_data, L, L, V, V)``: each data set twice (its two chains), as the chapter draws them."""
    rng = np.random.default_rng(seed)
    C = np.stack([cooccurrence(copy_task(P, L, V, rng)[0]) for _ in range(n_data)])
    return np.repeat(C, 2, axis=0), ModelSpec(L=L, V=V, kind="softmax")


def run(name: str, C: np.ndarray, spec: ModelSpec, evals: int, warmup_evals: int, seed: int) -> dict:
    n_leapfrog, gap, target, per_step = SAMPLERS[name]
    init = planted_init(np.tile([0.0, PLANTED_GAP], len(C) // 2), C, spec)
    del init["W"]
    moves = dict(direction={"g": planted_logits(1.0, spec.L)}, direction_step=GAP_STEP) if gap else {}
    steps, warmup = evals // per_step, warmup_evals // per_step
    if steps < 10 or warmup < 1:
        raise SystemExit(f"{name}: {evals} + {warmup_evals} evaluations give {steps} + {warmup} steps; "
                         f"give at least {10 * per_step} + {per_step}")
    cpu = time.process_time()
    res = sample_collapsed_posterior(C, spec, len(C), steps, torch.Generator().manual_seed(seed), n_warmup=warmup,
                                     init=init, record="copy_weight", n_leapfrog=n_leapfrog, target_accept=target,
                                     **moves)
    cpu = time.process_time() - cpu
    c = res.samples["c"].reshape(len(C) // 2, 2, -1)  # (data set, start, draw)
    ess = float(sum(effective_sample_size(pair, "bulk") for pair in c))
    return {"steps": steps, "cpu": cpu, "ess": ess, "rate": ess / cpu, "mean": float(c.mean()),
            "mcse": float(np.sqrt(np.mean([mcse_mean(pair) ** 2 for pair in c])) / math.sqrt(len(c))),
            "accept": float(res.accept_rate.mean())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", default="32:590,48:1039", help="L:P pairs (default: both chapter points near P3)")
    parser.add_argument("--data-sets", type=int, default=4, help="data sets per point, two chains each")
    parser.add_argument("--evals", type=int, default=8000, help="energy-and-gradient evaluations per chain, sampling")
    parser.add_argument("--warmup-evals", type=int, default=1000, help="the same, warmup")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    for flag in ("data_sets", "evals", "warmup_evals"):
        if getattr(args, flag) < 1:
            parser.error(f"--{flag.replace('_', '-')} must be >= 1, got {getattr(args, flag)}")
    torch.set_num_threads(1)
    points = [tuple(int(x) for x in item.split(":")) for item in args.points.split(",")]
    names = list(SAMPLERS)
    print(f"V = {V}, {args.data_sets} data sets x 2 chains, {args.evals} + {args.warmup_evals} (warmup) evaluations "
          f"per chain; load {os.getloadavg()[0]:.1f}")
    for k, (L, P) in enumerate(points):
        C, spec = data(L, P, args.data_sets, args.seed + k)
        order = names[k % len(names):] + names[: k % len(names)]
        results = {name: run(name, C, spec, args.evals, args.warmup_evals, args.seed) for name in order}
        ref = results[names[0]]["rate"]
        print(f"\nL = {L}, P = {P} (load {os.getloadavg()[0]:.1f})")
        for name in names:
            r = results[name]
            print(f"  {name:32s} {r['steps']:6d} steps  {r['cpu']:6.1f} CPU s  ESS {r['ess']:7.0f}  "
                  f"{r['rate']:6.1f} per CPU s  ratio {r['rate'] / ref:4.2f}  "
                  f"c = {r['mean']:.4f} +- {r['mcse']:.4f}  acceptance {r['accept']:.2f}")
        worst = max(abs(results[a]["mean"] - results[b]["mean"]) / math.hypot(results[a]["mcse"], results[b]["mcse"])
                    for a, b in itertools.combinations(names, 2))
        print(f"  largest difference of the means: {worst:.1f} combined standard errors")


if __name__ == "__main__":
    main()
