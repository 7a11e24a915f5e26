"""Benchmark: batched chains vs a Python loop over single chains.

Times the collapsed-posterior sampler (MALA on the softmax logits, energy
``copylib.posterior.evidence.effective_action``) at L=32, V=4, P=500 two ways:

* one call with ``R = 64`` chains advanced together (batched tensors);
* a Python loop of 64 calls with ``R = 1`` each.

and prints the wall time per sampler step (all 64 chains advanced by one step)
side by side, and the speed-up. Target: batched >= 10x faster (PASS/FAIL).

Run from the repository root::

    python benchmarks/bench_sampling.py [--steps 40] [--threads N] [--repeats 3]

The two ways are timed alternately (batched, loop, batched, loop, ... for
``--repeats`` rounds), so that both see the same machine load, and the best of
the rounds is reported for each way (timings on a shared machine are noisy;
the minimum is the least disturbed). The 1-minute load average is printed at
the start and the end.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import torch

from copylib import ModelSpec, cooccurrence, copy_task
from copylib.inference.posterior_sampling import sample_collapsed_posterior

L, V, P, R = 32, 4, 500, 64
TARGET = 10.0


def run(C, spec, n_chains, n_steps, seed):
    """One sampler call; returns the wall time per step (all warmup + sampling steps)."""
    gen = torch.Generator().manual_seed(seed)
    n_warmup = n_steps // 2
    t0 = time.perf_counter()
    sample_collapsed_posterior(C, spec, n_chains, n_steps - n_warmup, gen, n_warmup=n_warmup, step_size=0.05)
    return (time.perf_counter() - t0) / n_steps


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40, help="sampler steps per call (half warmup)")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch intra-op threads (default 1, as the chapters run: small tensors)")
    parser.add_argument("--repeats", type=int, default=5, help="rounds of both timings, keep the fastest")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    spec = ModelSpec(L=L, V=V, kind="softmax")
    X, _ = copy_task(P, L, V, np.random.default_rng(0))
    C = cooccurrence(X)
    run(C, spec, R, 4, 0)  # warm up torch (first-call overheads)
    run(C, spec, 1, 4, 0)

    load_start = os.getloadavg()[0]
    batched, looped = [], []
    for rep in range(args.repeats):  # alternate, so that both see the same load
        batched.append(run(C, spec, R, args.steps, rep))
        looped.append(sum(run(C, spec, 1, args.steps, 1000 * rep + r) for r in range(R)))
    batched, looped = min(batched), min(looped)
    ratio = looped / batched

    print(f"collapsed sampler (MALA), softmax, L={L}, V={V}, P={P}, {R} chains, "
          f"{args.steps} steps per call, torch threads = {torch.get_num_threads()}")
    print(f"{'':28s}{'time per step (64 chains)':>28s}{'per chain-step':>18s}")
    print(f"{'batched: 1 call, R=64':28s}{batched * 1e3:25.2f} ms{batched / R * 1e6:15.1f} us")
    print(f"{'loop: 64 calls, R=1':28s}{looped * 1e3:25.2f} ms{looped / R * 1e6:15.1f} us")
    print(f"speed-up {ratio:.1f}x (target >= {TARGET:.0f}x): {'PASS' if ratio >= TARGET else 'FAIL'}")
    print(f"load average (1 min) {load_start:.2f} at the start, {os.getloadavg()[0]:.2f} at the end, "
          f"on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
