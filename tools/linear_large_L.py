"""Sample the linear-attention posterior near its crossover (or plug-in switch) at larger L, from two starts.

Issue 38, item 2. For every ``--L`` this runs :func:`copylib.analysis.linear_large_L.sample_near_switch`
(the ``fluct`` crossover ``P_2``; the plug-in posterior's moments at ``--f`` times ``P_2``; on
``--n-data`` data sets per size one chain started in the plug-in posterior's pooling state and one in
its copying state; Metropolis-adjusted HMC with ``--leapfrog`` steps per proposal, or MALA with
``--leapfrog 1``) and prints the CPU and wall time, the two starts, and per observable (``Q = (L-1) q
sign m`` and ``|m|``) and size: the chain means of each start, their paired difference in standard
errors over data sets (``meet_z``), the mean against the plug-in posterior (``plugin_z`` and the shift in
``P`` that would reconcile them), R-hat within data sets, ESS, drift and the acceptance range.

The linear chapter's section *Evidence: sampling beyond L = 32* runs ``--L 48 --f 0.9 1.1 --n-data 4
--steps 150 --warmup 100 --leapfrog 20 --seed 48``. At ``L = 128`` the plug-in switch lies at about
``0.98 P_2`` (the chapter's ``post_P_128``); pass ``--f`` around it. Run from the repository root::

    python tools/linear_large_L.py [--L 48 128] [--f 0.9 1.1] [--n-data 4] [--steps 150] [--warmup 100]
                                   [--leapfrog 20] [--seed 48]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
import torch

from copylib.analysis.linear_large_L import sample_near_switch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--L", type=int, nargs="+", default=[48], help="sequence lengths (default 48)")
    parser.add_argument("--f", type=float, nargs="+", default=[0.9, 1.1], help="sizes in units of the fluct P_2")
    parser.add_argument("--n-data", type=int, default=4, help="data sets per size, two chains each")
    parser.add_argument("--steps", type=int, default=150, help="steps after the warm-up")
    parser.add_argument("--warmup", type=int, default=100, help="warm-up steps per chain")
    parser.add_argument("--thin", type=int, default=1, help="keep every thin-th draw")
    parser.add_argument("--leapfrog", type=int, default=20, help="leapfrog steps per proposal (1: MALA)")
    parser.add_argument("--seed", type=int, default=48, help="seed of the data sets and the sampler")
    args = parser.parse_args()
    torch.set_num_threads(1)
    pd.set_option("display.width", 220)
    pd.set_option("display.max_columns", 20)
    np.set_printoptions(precision=3, suppress=True)
    for L in args.L:
        cpu, wall = time.process_time(), time.perf_counter()
        near = sample_near_switch(L, 4, args.n_data, args.steps, P_over_P2=tuple(args.f), n_warmup=args.warmup,
                                  thin=args.thin, seed=args.seed, n_leapfrog=args.leapfrog)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        print(f"\nL = {L}: fluct P2 = {near.P2:.1f}, sampled P = {near.P.astype(int).tolist()}, starts (m, Q) = "
              f"{np.round(near.starts, 3).tolist()}; {cpu:.1f} s CPU, {wall:.1f} s wall")
        print(near.frame().round(3))
        print("chain means of Q (size x data set x start):")
        print(near.chains.Q.mean(-1).round(2))


if __name__ == "__main__":
    main()
