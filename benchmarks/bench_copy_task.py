"""Benchmark: the targets of a copy-task data set, Y = T X, by batched matmul against the einsum used before.

Run from the repository root::

    python benchmarks/bench_copy_task.py

Both sides run alternately on the same one-hot inputs (P = 2628, L = 96, V = 4: the largest data sets of the
softmax chapter's plug-in error table, and P = 600, L = 32); the script prints the median time of each, their
ratio against the target of 5x, and whether the two give identical arrays (they must: T and X hold 0s and 1s).
"""

from __future__ import annotations

import os
import time

import numpy as np

from copylib.model.task import one_hot, sample_tokens, shift_matrix


def _median_time(f, T: np.ndarray, X: np.ndarray, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        f(T, X)
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def main() -> None:
    print(f"bench_copy_task: load average {os.getloadavg()[0]:.2f} (1 min)")
    rng = np.random.default_rng(0)
    for P, L in ((2628, 96), (600, 32)):
        X = one_hot(sample_tokens(P, L, 4, rng), 4)
        T = shift_matrix(L, True)
        old, new = [], []
        for _ in range(5):  # alternate the two sides
            old.append(_median_time(lambda t, x: np.einsum("lm,pmv->plv", t, x), T, X, 3))
            new.append(_median_time(np.matmul, T, X, 3))
        ratio = np.median(old) / np.median(new)
        same = np.array_equal(np.einsum("lm,pmv->plv", T, X), T @ X)
        print(f"P = {P}, L = {L}: einsum {1e3 * np.median(old):.2f} ms, matmul {1e3 * np.median(new):.2f} ms, "
              f"ratio {ratio:.1f}x (target 5x: {'PASS' if ratio >= 5 else 'FAIL'}); identical arrays: {same}")


if __name__ == "__main__":
    main()
