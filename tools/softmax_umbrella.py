"""The log-odds of the two softmax basins near the plug-in P3 by umbrella sampling along c, against the plug-in.

For every ``--L`` this runs :func:`copylib.analysis.softmax_umbrella.umbrella_log_odds`: the plug-in ``P3``,
``c*`` and sharpness (8192 Sobol draws per set), then ``--windows`` harmonic windows in ``c`` on each of
``--n-data`` data sets at ``P3`` (MALA with a small gap move), combined by MBAR (pymbar), and prints

* the CPU and wall time of the whole measurement, and per window chain and step;
* the log-odds ``ln p_copy / (1 - p_copy)`` of every data set, the pooled log-odds with its jackknife
  error over data sets, the plug-in log-odds at the same ``P`` and the z of their difference, and ``P3``
  from sampling (through the plug-in's log-odds slope) against the plug-in ``P3``;
* per window the worst split R-hat and the smallest bulk ESS of ``c`` over the data sets, the smallest
  MBAR overlap of neighbouring windows, the MALA acceptance, and the drift of every data set's log-odds
  from the first to the second half of the windows' draws;
* for every ``L`` in ``--validate``: two hopping chains per data set on the same data sets
  (:func:`copylib.analysis.softmax.sample_two_starts`, ``--direct-steps`` steps, gap move 0.8), their
  log-odds and the paired difference umbrella - direct with its error over data sets.

Run from the repository root (one heavy process; torch on one thread)::

    python tools/softmax_umbrella.py --L 48 64 --validate 48 [--n-data 8] [--steps 6000] [--warmup 500]
        [--thin 5] [--windows 24] [--direct-steps 20000] [--seed 64]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from copylib.analysis.softmax_umbrella import umbrella_log_odds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--L", type=int, nargs="+", default=[48, 64], help="sequence lengths (default 48 64)")
    parser.add_argument("--validate", type=int, nargs="*", default=[48],
                        help="the L at which hopping chains on the same data sets validate the windows")
    parser.add_argument("--n-data", type=int, default=8, help="independent data sets")
    parser.add_argument("--steps", type=int, default=6000, help="MALA steps per window after the warm-up")
    parser.add_argument("--warmup", type=int, default=500, help="warm-up steps per chain")
    parser.add_argument("--thin", type=int, default=5, help="keep every thin-th draw")
    parser.add_argument("--windows", type=int, default=24, help="windows in c per data set")
    parser.add_argument("--spring", type=float, default=None, help="spring constant of the harmonic bias (default 1/spacing^2)")
    parser.add_argument("--gap-step", type=float, default=0.1, help="standard deviation of the gap move in a window")
    parser.add_argument("--direct-steps", type=int, default=20000, help="steps of each hopping chain")
    parser.add_argument("--P", type=int, default=None, help="sample size (default: the plug-in P3 rounded)")
    parser.add_argument("--seed", type=int, default=64, help="seed of the data sets and the sampler")
    args = parser.parse_args()
    torch.set_num_threads(1)
    np.set_printoptions(precision=3, suppress=True, linewidth=150)
    for L in args.L:
        direct = args.direct_steps if L in args.validate else None
        cpu, wall = time.process_time(), time.perf_counter()
        r = umbrella_log_odds(L, 4, args.n_data, args.steps, n_warmup=args.warmup, thin=args.thin, seed=args.seed,
                              P=args.P, n_windows=args.windows, spring=args.spring, gap_step=args.gap_step,
                              direct_steps=direct)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        chain_steps = args.n_data * (args.windows * (args.warmup + args.steps)
                                     + (0 if direct is None else 2 * (args.warmup + direct)))
        print(f"\nL = {L}, V = 4, P = {r.P} ({args.n_data} data sets, {args.windows} windows, {args.steps} steps "
              f"+ {args.warmup} warm-up, thin {args.thin}; direct chains: {direct or 'none'})")
        print(f"  time: {cpu:.1f} s CPU, {wall:.1f} s wall; {1e3 * cpu / chain_steps:.3f} ms CPU per chain and step")
        print(f"  plug-in: P3 = {r.plugin_P3:.1f}, c* = {r.c_div:.4f}, sharpness {r.sharpness:.1f} per unit ln P")
        print(f"  windows: c from {r.centres[0]:.4f} to {r.centres[-1]:.4f}, spring = {r.spring:.0f}; "
              f"MALA acceptance {r.accept[0]:.2f}-{r.accept[1]:.2f}; smallest neighbour overlap {r.overlap:.3f}")
        print(f"  worst split R-hat per window: {r.rhat}")
        print(f"  smallest bulk ESS per window: {r.ess.round(0)}")
        print(f"  umbrella log-odds per data set: {r.data_log_odds}")
        drift = r.half_log_odds[:, 1] - r.half_log_odds[:, 0]
        print(f"  second minus first half of the windows: {drift}; mean {drift.mean():+.3f} +- "
              f"{drift.std(ddof=1) / np.sqrt(drift.size):.3f}")
        print(f"  umbrella log-odds (pooled share) {r.log_odds:+.3f} +- {r.log_odds_err:.3f}; plug-in at P "
              f"{r.plugin_log_odds:+.3f} +- {r.plugin_err:.3f}; z = {r.z:+.2f}")
        print(f"  P3 from sampling {r.P3:.1f} +- {r.P3_err:.1f} (plug-in slope) vs plug-in P3 {r.plugin_P3:.1f}")
        if direct is not None:
            print(f"  direct log-odds per data set:   {r.direct_log_odds}  (fewest crossings of c* per chain "
                  f"{r.direct_crossings})")
            print(f"  paired umbrella - direct: {r.paired_diff:+.3f} +- {r.paired_err:.3f} (z = {r.paired_z:+.2f}, "
                  f"{args.n_data} data sets)")


if __name__ == "__main__":
    main()
