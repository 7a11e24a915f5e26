"""Benchmark: one explorer frame to PNG, the way copylib makes it now against the way it did.

An explorer renders every frame of its grid when the book is built (the copy-task chapter's training
explorer alone draws 32). This times, on the figures of that explorer (``training_figure``, 16 values
of P, random attention matrices of the chapter's size), the step from a drawn matplotlib figure to the
palette PNG the page carries:

* before: ``savefig`` to a PNG, decode it, median-cut quantisation to 64 colours, ``optimize=True``;
* now: :func:`copylib.frames.png_frame` (Agg's pixel buffer, fast octree, zlib's default level),

and prints the time per frame of each, the time to build the figure itself (the same for both), the
frame sizes, and the speed-up of the PNG step. Target: >= 1.3x (PASS/FAIL).

Run from the repository root::

    python benchmarks/bench_frames.py [--repeats 3]

The two ways alternate frame by frame, so that both see the same machine load; the 1-minute load
average is printed at the start and the end.
"""

from __future__ import annotations

import argparse
import io
import os
import time
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
from PIL import Image

from copylib import explorers, frames

TARGET = 1.3
L, N_P = 32, 16


def png_before(fig, dpi: int = 72, colors: int = 64) -> bytes:
    """The frame as ``copylib.frames.png_frame`` made it before (savefig, median cut, optimize)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    plt.close(fig)
    buffer.seek(0)
    image = Image.open(buffer).convert("RGB").quantize(colors=colors, method=Image.Quantize.MEDIANCUT)
    out = io.BytesIO()
    image.save(out, format="png", optimize=True)
    return out.getvalue()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="passes over the 16 frames")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    P = np.geomspace(4, 2000, N_P)
    sweeps = {k: SimpleNamespace(P=P, A=rng.random((N_P, L, L)), test_loss=rng.random(N_P))
              for k in ("softmax", "linear")}
    frames.png_frame(explorers.training_figure(sweeps, "softmax", P[0]))  # first-call overheads

    load_start = os.getloadavg()[0]
    t_fig = t_before = t_now = 0.0
    bytes_before = bytes_now = 0
    n = 0
    for _ in range(args.repeats):
        for p in P:
            t0 = time.perf_counter()
            fig = explorers.training_figure(sweeps, "softmax", p)
            t_fig += time.perf_counter() - t0
            t0 = time.perf_counter()
            bytes_before += len(png_before(fig))
            t_before += time.perf_counter() - t0
            fig = explorers.training_figure(sweeps, "softmax", p)
            t0 = time.perf_counter()
            bytes_now += len(frames.png_frame(fig))
            t_now += time.perf_counter() - t0
            n += 1
    ratio = t_before / t_now
    print(f"training explorer frames (L = {L}, {N_P} values of P, {n} frames each way)")
    print(f"figure built:  {t_fig / n * 1e3:6.1f} ms per frame (the same for both)")
    print(f"to PNG before: {t_before / n * 1e3:6.1f} ms per frame, {bytes_before / n / 1e3:5.1f} kB")
    print(f"to PNG now:    {t_now / n * 1e3:6.1f} ms per frame, {bytes_now / n / 1e3:5.1f} kB")
    print(f"whole frame:   {(t_fig + t_before) / n * 1e3:.0f} -> {(t_fig + t_now) / n * 1e3:.0f} ms")
    print(f"speed-up of the PNG step {ratio:.2f}x (target >= {TARGET}x): {'PASS' if ratio >= TARGET else 'FAIL'}")
    print(f"load average (1 min) {load_start:.2f} at the start, {os.getloadavg()[0]:.2f} at the end, "
          f"on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
