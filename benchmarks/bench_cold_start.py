"""Benchmark: the plug-in row cumulants and the cost of importing copylib, this checkout against a git revision.

Run from the repository root::

    python benchmarks/bench_cold_start.py --baseline 515f1b4 [--repeats 3]

Each measurement runs in a fresh ``python`` process (``OMP_NUM_THREADS=1``, as the
book build's kernels; ``PYTHONPATH`` = the checkout), alternating between the
baseline (``git archive`` of the revision in a temporary directory) and this
checkout, and the median of ``--repeats`` rounds is printed with the ratio:

* ``row_cumulants``: :func:`copylib.theory.softmax_cumulants.row_cumulants` at ``L = 32``,
  ``V = 4`` with the defaults (8192 Sobol draws, ``t_step = 0.1``), what the softmax and the
  predictability chapters compute (and ``weak_double_minimum`` twice at ``L = 24``);
  target: at least 1.5x;
* ``fss row``: :func:`~copylib.theory.softmax_cumulants.finite_size_cumulants` at ``L = 48`` with
  the softmax chapter's finite-size settings (1024 draws, ``t_step = 0.2``);
* ``import copylib``, ``from copylib import checks`` (the introduction and the validation
  report) and ``import copylib; copylib.ModelSpec`` (a chapter): import times; target for
  ``from copylib import checks``: at least 3x.

Both sides must give bit-identical cumulants (checked: the script compares the arrays).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CUMULANTS = """
import time, hashlib, numpy as np
from copylib.theory import softmax_cumulants as sc
from copylib import ModelSpec
t = time.perf_counter()
{call}
dt = time.perf_counter() - t
h = hashlib.sha256(b"".join(np.ascontiguousarray(getattr(c, f)).tobytes()
                            for f in ("phi", "mean", "cov", "correction", "t_edge"))).hexdigest()
print(dt, h)
"""
CASES = {
    "row_cumulants": CUMULANTS.format(
        call="c = sc.row_cumulants(ModelSpec(L=32, V=4, kind='softmax'), np.random.default_rng(11))"),
    "fss row": CUMULANTS.format(
        call="_, c = sc.finite_size_cumulants(48, 4, np.random.default_rng(21), n_draws=1024, t_step=0.2)"),
    "import copylib": "import time; t = time.perf_counter(); import copylib; print(time.perf_counter() - t, '-')",
    "from copylib import checks":
        "import time; t = time.perf_counter(); from copylib import checks; print(time.perf_counter() - t, '-')",
    "import copylib; copylib.ModelSpec":
        "import time; t = time.perf_counter(); import copylib; copylib.ModelSpec; print(time.perf_counter() - t, '-')",
}
TARGETS = {"row_cumulants": 1.5, "from copylib import checks": 3.0}


def run(checkout: Path, code: str) -> tuple[float, str]:
    env = dict(os.environ, PYTHONPATH=str(checkout), OMP_NUM_THREADS="1", COPYHEAD_CACHE="off")
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=tempfile.gettempdir(), capture_output=True,
                         text=True, check=True).stdout.split()
    return float(out[0]), out[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", metavar="REV", required=True, help="git revision to compare with")
    parser.add_argument("--repeats", type=int, default=3, help="rounds per case (median reported)")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} (1 min) on {os.cpu_count()} CPUs")
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        archive = subprocess.run(["git", "archive", args.baseline], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
        for name, code in CASES.items():
            times = {"baseline": [], "this": []}
            digests = set()
            for _ in range(args.repeats):
                for side, checkout in (("baseline", base), ("this", ROOT)):
                    seconds, digest = run(checkout, code)
                    times[side].append(seconds)
                    digests.add(digest)
            b, t = statistics.median(times["baseline"]), statistics.median(times["this"])
            target = TARGETS.get(name)
            verdict = "" if target is None else (" PASS" if b / t >= target else " FAIL") + f" (target {target}x)"
            same = "" if digests == {"-"} else ("  identical arrays" if len(digests) == 1 else "  ARRAYS DIFFER")
            failed |= verdict.startswith(" FAIL") or same == "  ARRAYS DIFFER"
            print(f"{name:36s} baseline {b:7.3f} s  this {t:7.3f} s  ratio {b / t:5.2f}x{verdict}{same}")
    print(f"load average {os.getloadavg()[0]:.2f} (1 min)")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
