"""Do the softmax sampler with the gap move and plain MALA agree on the basin weights near P3?

Usage (from the repository root)::

    python tools/gap_move_agreement.py [--seeds 28 128 228] [--P 570] [--gap-steps 11000] [--plain-steps 44000]

At ``L = 32``, ``V = 4`` (the softmax chapter's model) and one ``P`` near the plug-in ``P3``, each
seed draws 10 data sets and samples each from a pooling and a copying start
(:func:`copylib.analysis.softmax.sample_two_starts`, 2000 warm-up steps, every tenth draw
kept) twice on the same data: MALA with the gap move (``gap_step = 0.8``) and plain MALA
with four times the steps (the paper-scale length of the chapter's plain chains near ``P3`` before
they took the gap move).
The copy-basin mass of a data set is the fraction of its two chains' draws at ``c >= c*``
(``c*`` the barrier of the plug-in marginal at its ``P3``, as in the chapter). Printed per
seed: both shares (mean over data sets, standard error over data sets) and the plug-in
marginal's share; then the paired difference gap minus plain over all data sets with its
standard error. Both samplers are exact in the limit of long chains; a difference
beyond its standard error means one of them has not equilibrated the basin weights.
One thread; about 2 minutes per seed on an idle 2-core machine.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from copylib import ModelSpec
from copylib.analysis import softmax as sx
from copylib.theory import softmax_marginal as sm

N_DATA, GAP_STEP = 10, 0.8


def shares(P: int, spec: ModelSpec, c_div: float, seed: int, n_steps: int, gap_step: float | None) -> np.ndarray:
    """The copy-basin mass of each data set ``(N_DATA,)``: both chains' draws pooled."""
    _, draws = sx.sample_two_starts([P], spec, N_DATA, n_steps, n_warmup=2000, thin=10, seed=seed, gap_step=gap_step)
    return (draws[P][0] >= c_div).mean(axis=(1, 2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[28, 128, 228])
    parser.add_argument("--P", type=int, default=570)
    parser.add_argument("--gap-steps", type=int, default=11_000)
    parser.add_argument("--plain-steps", type=int, default=44_000)
    args = parser.parse_args()
    torch.set_num_threads(1)
    spec = ModelSpec(L=32, V=4, kind="softmax")
    cum = sm.row_cumulants(spec, np.random.default_rng(11))  # the chapter's Sobol set
    c_div = sm.marginal_transition(spec, cum, P_range=(500.0, 700.0), n_scan=41).at_P3.barrier
    plugin = float(sm.plugin_marginal(float(args.P), spec, cum).mass(c_div))
    print(f"L = 32, V = 4, P = {args.P}, c* = {c_div:.4f}, plug-in copy-basin mass {plugin:.4f}")
    print(f"{'seed':>5s} {'gap move':>16s} {'plain MALA':>16s} {'seconds':>14s}")
    diffs = []
    for seed in args.seeds:
        t0 = time.perf_counter()
        gap = shares(args.P, spec, c_div, seed, args.gap_steps, GAP_STEP)
        t1 = time.perf_counter()
        plain = shares(args.P, spec, c_div, seed, args.plain_steps, None)
        t2 = time.perf_counter()
        se = [s.std(ddof=1) / np.sqrt(N_DATA) for s in (gap, plain)]
        print(f"{seed:5d} {gap.mean():8.4f} ± {se[0]:.4f} {plain.mean():8.4f} ± {se[1]:.4f} {t1 - t0:6.0f} {t2 - t1:6.0f}")
        diffs.append(gap - plain)
    d = np.concatenate(diffs)
    se = d.std(ddof=1) / np.sqrt(d.size)
    print(f"paired difference gap - plain over {d.size} data sets: {d.mean():+.4f} ± {se:.4f} (z = {d.mean() / se:+.2f})")


if __name__ == "__main__":
    main()
