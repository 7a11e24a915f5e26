"""Benchmark: an explorer's frames with one layout per explorer against one layout per frame.

:func:`copylib.frames._render_frames` lays out the first frame with its figure's layout engine
(matplotlib's tight layout) and gives every later frame the same axes boxes, checking only that
nothing then leaves the canvas; before, every frame ran the tight layout itself. This times both
ways on the frames of two of the book's explorers:

* the copy-task chapter's training explorer (``training_figure``, 16 values of ``P``, random
  attention matrices of the chapter's size ``L = 32``);
* the linear chapter's size explorer (``linear_landscape_figure``: two versions, ``L = 32`` and
  ``128``, three values of ``P / P_2``; its theory is cached after the first pass).

Printed: the time per frame each way and the speed-up of the whole frame (figure built, laid out,
drawn and quantised). Run from the repository root::

    python benchmarks/bench_frame_layout.py [--repeats 2]

The two ways alternate explorer by explorer, so that both see the same machine load; the 1-minute
load average is printed at the start and the end.
"""

from __future__ import annotations

import argparse
import os
import time
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import numpy as np

from copylib import explorers, frames
from copylib import landscape_explorers as le


def training_explorer():
    rng = np.random.default_rng(0)
    P = np.geomspace(4, 2000, 16)
    sweeps = {k: SimpleNamespace(P=P, A=rng.random((16, 32, 32)), test_loss=rng.random(16))
              for k in ("softmax", "linear")}
    return [frames.axis("P", list(P), "{:.4g}")], lambda P: explorers.training_figure(sweeps, "softmax", P)


def size_explorer():
    def draw(version, L, ratio):
        return le.linear_landscape_figure(ratio * le._linear_thresholds(L, 4, version)[1], L, 4, version)

    return [frames.axis("version", ["mean_field", "map"]), frames.axis("L", [32, 128]),
            frames.axis("ratio", [0.5, 0.999, 1.2])], draw


def per_frame(axes, draw):
    """The frames as before: every frame laid out by its own figure's engine."""
    import itertools

    return {index: frames.png_frame(draw(**{a.name: a.values[i] for a, i in zip(axes, index)}))
            for index in itertools.product(*(range(len(a.values)) for a in axes))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2, help="passes over each explorer, each way")
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error(f"--repeats must be >= 1, got {args.repeats}")
    load_start = os.getloadavg()[0]
    for name, make in (("training explorer", training_explorer), ("linear size explorer", size_explorer)):
        axes, draw = make()
        per_frame(axes, draw)  # first-call overheads and the theory's caches out of the timing
        t_before = t_now = 0.0
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            before = per_frame(axes, draw)
            t_before += time.perf_counter() - t0
            t0 = time.perf_counter()
            now = frames._render_frames(axes, draw)
            t_now += time.perf_counter() - t0
        n = args.repeats * len(now)
        print(f"{name}: {len(now)} frames, {t_before / n * 1e3:.0f} ms per frame with a layout each, "
              f"{t_now / n * 1e3:.0f} ms with one layout: speed-up {t_before / t_now:.2f}x "
              f"({sum(map(len, before.values())) / len(before) / 1e3:.1f} -> "
              f"{sum(map(len, now.values())) / len(now) / 1e3:.1f} kB per frame)")
    print(f"load average (1 min) {load_start:.2f} at the start, {os.getloadavg()[0]:.2f} at the end, "
          f"on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
