"""Benchmark: whole explorer frames with one shared renderer against a renderer per frame.

matplotlib caches text extents and parsed mathtext per renderer. Explorer frames used to be laid out
by ``fig.tight_layout()`` in the figure function (with the figure's own canvas) and drawn by a new
Agg canvas in :func:`copylib.frames.png_frame`: two renderers per frame, every tick label, legend
and title measured twice per frame and again in the next one. Now the figure functions leave the
layout to the draw (``layout="tight"``) and the frames of one size share one renderer. This times
both on the figures of three of the book's explorers, frame by frame alternately (so both see the
same machine load), and prints the time per frame and the speed-up. Target: >= 1.2x (PASS/FAIL).

Run from the repository root::

    python benchmarks/bench_frame_renderer.py [--repeats 2]
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

TARGET = 1.2


def frame_before(fig) -> bytes:
    """The frame as it was made before: tight layout in the figure's own canvas, a new renderer to draw."""
    fig.tight_layout()
    fig.set_layout_engine("none")  # laid out once, as before, not again at the draw
    frames._frame_canvas_class().shared.clear()
    return frames.png_frame(fig)


def figure_makers() -> dict:
    """name -> list of zero-argument functions, one per frame, each returning a new Figure."""
    rng = np.random.default_rng(0)
    P = np.geomspace(4, 2000, 8)
    sweeps = {k: SimpleNamespace(P=P, A=rng.random((P.size, 32, 32)), test_loss=rng.random(P.size))
              for k in ("softmax", "linear")}
    return {
        "training (copy task)": [lambda p=p: explorers.training_figure(sweeps, "softmax", p) for p in P],
        "landscape, linear": [lambda p=p: explorers.landscape_figure(p, 32, 4, kind="linear")
                              for p in np.geomspace(40, 800, 8)],
        "landscape, softmax": [lambda p=p: explorers.landscape_figure(p, 32, 4, kind="softmax")
                               for p in np.linspace(450, 750, 8)],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2, help="passes over each explorer's frames")
    args = parser.parse_args()
    print(f"bench_frame_renderer: load average (1 min) {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    total_before = total_now = 0.0
    for name, makers in figure_makers().items():
        frames.png_frame(makers[0]())  # first-call overheads (fonts, imports) out of the timing
        t_before = t_now = 0.0
        n = 0
        for _ in range(args.repeats):
            for make in makers:
                fig = make()  # the figure is built outside the timing: the same for both
                t0 = time.process_time()
                frame_before(fig)
                t_before += time.process_time() - t0
                fig = make()
                t0 = time.process_time()
                frames.png_frame(fig)
                t_now += time.process_time() - t0
                n += 1
        total_before, total_now = total_before + t_before, total_now + t_now
        print(f"{name:20s} layout and draw: {t_before / n * 1e3:6.1f} -> {t_now / n * 1e3:6.1f} ms per frame "
              f"({t_before / t_now:.2f}x, {n} frames each way)")
    ratio = total_before / total_now
    print(f"all three: {ratio:.2f}x (target >= {TARGET}x): {'PASS' if ratio >= TARGET else 'FAIL'}")
    print(f"load average (1 min) at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
