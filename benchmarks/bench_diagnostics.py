"""Benchmark: the ArviZ diagnostics adapter against plain-numpy split R-hat / ESS / MCSE.

The book takes every R-hat, ESS and MCSE from ArviZ (rank-normalised split
R-hat, bulk ESS, MCSE of the mean; :mod:`copylib.inference.diagnostics`).
Until it did, copylib had its own numpy versions (split R-hat without rank
normalisation, BDA3 eq. 11.4; Geyer's initial monotone sequence on split chains).
A compact copy of them is kept here as the baseline. For draws of the shapes the
chapters and tests use, the script prints the wall time per call of both side by
side, their ratio, and the two values (they estimate the same quantity by
slightly different rules, so they agree to a few per cent, not exactly).

Run from the repository root::

    python benchmarks/bench_diagnostics.py [--repeats 5]

Both ways are timed alternately for ``--repeats`` rounds and the best round is
reported for each (timings on a shared machine are noisy; the minimum is the
least disturbed).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from copylib.inference import diagnostics as dg

SHAPES = {
    "marginalisation (64 chains x 300)": (64, 300),
    "20 chains x 1000": (20, 1000),
    "diagnostics unit test (32 chains x 5000)": (32, 5000),
}


def _split(x):
    n = x.shape[1] // 2
    return np.concatenate([x[:, :n], x[:, x.shape[1] - n:]], axis=0)


def numpy_rhat(x):
    """Split R-hat, no rank normalisation (BDA3 eq. 11.4)."""
    y = _split(x)
    n = y.shape[1]
    W = y.var(axis=1, ddof=1).mean()
    return math.sqrt(((n - 1) / n * W + y.mean(axis=1).var(ddof=1)) / W)


def numpy_ess(x):
    """Multi-chain ESS of split chains (FFT autocovariance, Geyer's initial monotone sequence)."""
    y = _split(x)
    R, n = y.shape
    c = y - y.mean(axis=1, keepdims=True)
    size = 1 << (2 * n - 1).bit_length()
    f = np.fft.rfft(c, n=size, axis=1)
    acov = np.fft.irfft(f * np.conj(f), n=size, axis=1)[:, :n] / n
    W = acov[:, 0].mean() * n / (n - 1)
    var_plus = W * (n - 1) / n + y.mean(axis=1).var(ddof=1)
    rho = 1.0 - (W - acov.mean(axis=0)) / var_plus
    gamma = rho[: 2 * (n // 2): 2] + rho[1: 2 * (n // 2): 2]
    nonpos = np.flatnonzero(gamma <= 0)
    gamma = np.minimum.accumulate(gamma[: int(nonpos[0]) if nonpos.size else gamma.size])
    tau = max(-1.0 + 2.0 * gamma.sum(), 1.0 / math.log10(R * n))
    return R * n / tau


def numpy_mcse(x):
    return x.std(ddof=1) / math.sqrt(numpy_ess(x))


PAIRS = {
    "R-hat": (numpy_rhat, dg.split_rhat),
    "ESS": (numpy_ess, dg.effective_sample_size),
    "MCSE of the mean": (numpy_mcse, dg.mcse_mean),
}


def best_time(f, x, repeats):
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        f(x)
        out.append(time.perf_counter() - t)
    return min(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'draws':42s} {'diagnostic':17s} {'numpy ms':>9s} {'ArviZ ms':>9s} {'ratio':>6s}   values (numpy, ArviZ)")
    for label, shape in SHAPES.items():
        # AR(1)-like chains with a small spread of chain means: a realistic, not perfectly mixed, input
        x = rng.normal(size=shape).cumsum(1) * 0.05 + rng.normal(size=shape) + 0.05 * rng.normal(size=(shape[0], 1))
        for name, (f_np, f_az) in PAIRS.items():
            t_np, t_az = math.inf, math.inf
            for _ in range(args.repeats):  # alternate, so that both see the same load
                t_np = min(t_np, best_time(f_np, x, 1))
                t_az = min(t_az, best_time(f_az, x, 1))
            print(f"{label:42s} {name:17s} {1e3 * t_np:9.2f} {1e3 * t_az:9.2f} {t_az / t_np:6.1f}"
                  f"   {float(f_np(x)):.4g}, {float(f_az(x)):.4g}")


if __name__ == "__main__":
    main()
