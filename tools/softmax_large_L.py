"""Sample the softmax posterior near the plug-in P3 at larger L and compare with the plug-in marginal.

Issue 38, item 1. For every ``--L`` this runs :func:`copylib.analysis.softmax_large_L.sample_near_p3`
(the plug-in ``P3`` from 8192 Sobol draws per set, then MALA with the gap move on ``--n-data`` data
sets at ``P3`` and at the sizes where the plug-in log-odds of the basins is about ``-1.8`` and
``+1.8``, two chains per data set: one started at pooling, one planted in the copy state) and prints

* the CPU and wall time of the whole measurement;
* the comparison with the plug-in marginal (copy-basin mass at each size, log-odds slope, binned
  barrier from either side, jump of ``c``; jackknife errors over data sets, ``z`` combined with the
  difference of the two Sobol sets);
* the chains' diagnostics (R-hat within data sets, ESS, drift, fewest crossings of ``c*``);
* the basin weights per data set, the data-set spread of the log-odds and the paired difference of
  the two starts.

The softmax chapter's section *Evidence: sampling at L = 48* runs ``--L 48 --n-data 6 --steps 4000
4500 --warmup 300 --seed 49``. At ``L = 64`` the chains of that length cross the barrier only a few
times or not at all: read its shares as a non-equilibrium measurement unless every chain at ``P3``
crosses ``c*`` several times and R-hat is near one. Run from the repository root::

    python tools/softmax_large_L.py [--L 48 64] [--n-data 6] [--steps 4000 4500] [--warmup 300] [--seed 49]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
import torch

from copylib.analysis.softmax_large_L import sample_near_p3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--L", type=int, nargs="+", default=[48], help="sequence lengths (default 48)")
    parser.add_argument("--n-data", type=int, default=6, help="data sets per size, two chains each")
    parser.add_argument("--steps", type=int, nargs=2, default=[4000, 4500], metavar=("SIDE", "CENTRE"),
                        help="MALA steps after the warm-up on either side of P3 and at P3")
    parser.add_argument("--warmup", type=int, default=300, help="warm-up steps per chain")
    parser.add_argument("--thin", type=int, default=5, help="keep every thin-th draw")
    parser.add_argument("--gap-step", type=float, default=0.8, help="standard deviation of the gap move")
    parser.add_argument("--seed", type=int, default=49, help="seed of the data sets and the sampler")
    args = parser.parse_args()
    torch.set_num_threads(1)
    pd.set_option("display.width", 200)
    pd.set_option("display.max_columns", 20)
    np.set_printoptions(precision=3, suppress=True)
    for L in args.L:
        cpu, wall = time.process_time(), time.perf_counter()
        near = sample_near_p3(L, 4, args.n_data, tuple(args.steps), n_warmup=args.warmup, thin=args.thin,
                              seed=args.seed, gap_step=args.gap_step)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        row, bw = near.plugin, near.comparison.weights
        print(f"\nL = {L}: plug-in P3 = {row.P3:.1f}, barrier {row.barrier_height[0]:.2f} / {row.barrier_height[1]:.2f} "
              f"nats at c* = {row.barrier:.4f}, sharpness {row.sharpness:.1f}; sampled P = {near.P}; "
              f"{cpu:.1f} s CPU, {wall:.1f} s wall; MALA acceptance {near.accept[0]:.2f}-{near.accept[1]:.2f}")
        print(near.comparison.frame().round(4))
        print(near.convergence.table.round(3))
        print("copy-basin mass of each chain (data set x start) at each P:")
        for P in near.P:
            print(f"  P = {P}: {(near.draws[P][0] >= row.barrier).mean(-1).round(2).tolist()}")
        for name in ("log_odds", "log_odds_err", "spread_total", "spread_sampling", "spread_data", "paired_d",
                     "paired_err", "min_crossings"):
            print(f"  {name}: {getattr(bw, name)}")


if __name__ == "__main__":
    main()
