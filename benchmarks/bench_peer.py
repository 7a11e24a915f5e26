"""Benchmark: the book's sampler against NumPyro's NUTS on the collapsed softmax posterior.

Issue 40. Both samplers draw from the same posterior, the logits ``(g, b)`` of softmax attention with
the readout integrated out (energy :func:`copylib.posterior.evidence.effective_action`), on the same
data set (one copy-task data set per point), with the same number of chains, all started at
``g = 0, b = 0``, one thread each (torch: ``set_num_threads(1)``; XLA: single-threaded Eigen and
one intra-op thread). Points: ``L = 32`` at ``P = 1000`` and ``P = 590`` (near its ``P3``), and
``L = 48`` at its ``P3``, computed here from the plug-in marginal of
:mod:`copylib.theory.softmax_marginal` (as in the softmax chapter).

* book: :func:`copylib.inference.posterior_sampling.sample_collapsed_posterior` with
  ``n_leapfrog`` leapfrog steps per Metropolis-adjusted proposal (HMC; ``--n-leapfrog 1`` is the
  default sampler, MALA), the step adapted in the warmup to ``--target-accept``;
* NumPyro: ``NUTS(potential_fn=...)`` (diagonal mass matrix and step adapted in the warmup, its
  defaults), on an energy written in JAX (float64, ``jax_enable_x64``), which is checked against
  copylib's ``effective_action`` on random logits before any timing (relative ``1e-10``).

Each sampler's wall time includes everything a user waits for: for NUTS the JIT compilation, for
the book the construction of the target. The score is the ESS of the copy weight ``c`` (ArviZ bulk
ESS over all chains) per second. The two samplers run interleaved, point by point: the book before
and after NUTS (its time the mean of the two runs, which draw the same numbers; ``--no-bracket``: one
run each, the order alternating), so that both see the same load of a shared machine; the ratio is the fair number,
the absolute rates move with the load. The ratio per CPU second of the process (``time.process_time``)
is printed beside it: on a loaded machine it is the steadier of the two. Both posterior means of ``c`` are printed with their Monte
Carlo standard errors and compared (they agree when they differ by less than three combined
standard errors).

Needs ``benchmarks/requirements.txt`` (jax, jaxlib, numpyro), not the book's requirements.
Run from the repository root::

    python benchmarks/bench_peer.py [--chains 8] [--warmup 500] [--draws 1000] [--nuts-draws N] [--n-leapfrog 8]
                                    [--gap-step 0.8]

``--n-leapfrog 1 --gap-step 0.8`` is the sampler the softmax chapter runs near P3 (MALA with the gap move).
"""

from __future__ import annotations

import os

# one thread for XLA, set before jax is imported
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                           + " --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1").strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import argparse  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from numpyro.infer import MCMC, NUTS  # noqa: E402

from copylib import ModelSpec, cooccurrence, copy_task  # noqa: E402
from copylib.analysis.softmax import planted_logits  # noqa: E402
from copylib.inference.diagnostics import effective_sample_size, mcse_mean  # noqa: E402
from copylib.inference.posterior_sampling import sample_collapsed_posterior  # noqa: E402
from copylib.model.statistics import sample_size, target_energy  # noqa: E402
from copylib.posterior.evidence import effective_action  # noqa: E402
from copylib.theory import softmax_marginal as se  # noqa: E402

jax.config.update("jax_enable_x64", True)

V = 4
AGREE_Z = 3.0  # the means agree when they differ by less than this many combined standard errors
ENERGY_RTOL = 1e-10


def jax_energy(C: np.ndarray, spec: ModelSpec):
    """The collapsed negative log posterior ``U(g, b)`` of one chain in JAX (float64), constants included.

    The dual form of :func:`copylib.posterior.evidence.negative_log_evidence` plus the priors:
    ``K = sum_lm (A^T A)_lm C_lm``, ``B = sum_lm (A^T T)_lm C_lm``, ``M = K + kappa I = R R^T``,
    ``U = const + V sum ln diag R - |R^{-1} B|^2 / (2 sigma^2) + |g|^2 / (2 sigma_G^2) + b^2 / (2 sigma_b^2)``.
    """
    L, s2, kappa = spec.L, spec.sigma_sq, spec.kappa
    Ct = torch.as_tensor(C, dtype=torch.float64)
    P = float(sample_size(Ct))
    y2 = float(target_energy(Ct, torch.as_tensor(spec.target, dtype=torch.float64)))
    const = 0.5 * V * (P * L * math.log(2 * math.pi * s2) - V * math.log(kappa)) + y2 / (2 * s2)
    Cj, T = jnp.asarray(C, dtype=jnp.float64), jnp.asarray(spec.target, dtype=jnp.float64)
    eye = kappa * jnp.eye(V)
    sG2, sb2 = spec.sigma_G**2, spec.sigma_b**2

    def energy(params):
        g, b = params["g"], params["b"]
        A = jax.nn.softmax(g + b, axis=-1)
        K = jnp.einsum("lm,lmab->ab", A.T @ A, Cj)
        B = jnp.einsum("lm,lmab->ab", A.T @ T, Cj)
        chol = jnp.linalg.cholesky(K + eye)
        Z = jax.scipy.linalg.solve_triangular(chol, B, lower=True)
        logdet = 2 * jnp.log(jnp.diagonal(chol)).sum()
        return (const + 0.5 * V * logdet - (Z * Z).sum() / (2 * s2)
                + (g * g).sum() / (2 * sG2) + b * b / (2 * sb2))

    return energy


def check_energy(energy, C: np.ndarray, spec: ModelSpec, rng: np.random.Generator, n: int = 5) -> float:
    """Largest relative difference between the JAX energy and copylib's on ``n`` random logits; asserts < 1e-10."""
    worst = 0.0
    for scale in np.geomspace(0.3, 3.0, n):
        g = scale * spec.sigma_G * rng.standard_normal((spec.L, spec.L))
        b = spec.sigma_b * rng.standard_normal()
        ref = float(effective_action(g, np.asarray(b), C, spec))
        got = float(energy({"g": jnp.asarray(g), "b": jnp.asarray(b)}))
        worst = max(worst, abs(got - ref) / abs(ref))
    assert worst < ENERGY_RTOL, f"the JAX energy differs from copylib's by {worst:.2e} (relative)"
    return worst


def copy_weight_np(g: np.ndarray) -> np.ndarray:
    """``c = (1/L) sum_l softmax(g_l)[l-1]`` (cyclic) of logits ``(..., L, L)``."""
    a = g - g.max(-1, keepdims=True)
    A = np.exp(a)
    A /= A.sum(-1, keepdims=True)
    L = g.shape[-1]
    return A[..., np.arange(L), (np.arange(L) - 1) % L].mean(-1)


def run_book(C, spec, args, seed):
    """The book's sampler: ``(c draws (R, n), seconds, CPU seconds, mean acceptance)``."""
    gen = torch.Generator().manual_seed(seed)
    t0, c0 = time.perf_counter(), time.process_time()
    # the gap move of the softmax chapter: after each proposal, the logits shift along T - J/L (exact, Metropolis-tested)
    gap = {} if args.gap_step is None else dict(direction={"g": planted_logits(1.0, spec.L)}, direction_step=args.gap_step)
    res = sample_collapsed_posterior(C, spec, args.chains, args.draws, gen, n_warmup=args.warmup, init="zeros",
                                     record="copy_weight", n_leapfrog=args.n_leapfrog,
                                     target_accept=args.target_accept, step_size=args.step_size, **gap)
    return res.samples["c"], time.perf_counter() - t0, time.process_time() - c0, float(res.accept_rate.mean())


def run_nuts(C, spec, args, seed):
    """NumPyro NUTS: ``(c draws (R, n), seconds, CPU seconds, mean acceptance)``, compilation included."""
    t0, c0 = time.perf_counter(), time.process_time()
    energy = jax_energy(C, spec)
    draws = args.draws if args.nuts_draws is None else args.nuts_draws
    mcmc = MCMC(NUTS(potential_fn=energy), num_warmup=args.warmup, num_samples=draws, num_chains=args.chains,
                chain_method=args.chain_method, progress_bar=False)
    init = {"g": jnp.zeros((args.chains, spec.L, spec.L)), "b": jnp.zeros(args.chains)}
    mcmc.run(jax.random.PRNGKey(seed), init_params=init, extra_fields=("accept_prob",))
    g = np.asarray(mcmc.get_samples(group_by_chain=True)["g"])
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    accept = float(np.mean(mcmc.get_extra_fields()["accept_prob"]))
    return copy_weight_np(g), seconds, cpu, accept


def bracketed(C, spec, args, seed) -> tuple[dict, dict]:
    """Book, NUTS, book again: the book's times are the means of its two runs, which see the load before and after.

    The book's run is short beside NUTS's; on a shared machine whose load drifts, one run of it samples the load of a
    moment, two around the NUTS run sample it on both sides. The two book runs draw the same numbers (same seed).
    """
    c1, s1, cpu1, acc = run_book(C, spec, args, seed)
    c, seconds, cpu, n_acc = run_nuts(C, spec, args, seed)
    c2, s2, cpu2, _ = run_book(C, spec, args, seed)
    assert np.array_equal(c1, c2), "the book's two runs with one seed drew different numbers"
    book = dict(summary(c1, (s1 + s2) / 2, (cpu1 + cpu2) / 2), accept=acc, s_runs=(s1, s2))
    return book, dict(summary(c, seconds, cpu), accept=n_acc)


def summary(c: np.ndarray, seconds: float, cpu: float) -> dict:
    ess = float(effective_sample_size(c, "bulk"))
    return {"ess": ess, "ess_s": ess / seconds, "ess_cpu": ess / cpu, "mean": float(c.mean()),
            "mcse": float(mcse_mean(c)), "s": seconds, "cpu": cpu}


def p3_of(L: int, seed: int) -> float:
    """``P3`` of the plug-in marginal of ``c`` at ``L`` (``V = 4``), as in the softmax chapter."""
    spec = ModelSpec(L=L, V=V, kind="softmax")
    cum = se.row_cumulants(spec, np.random.default_rng(seed))
    return se.marginal_transition(spec, cum, P_range=(300.0, 2000.0), n_scan=81).P3


def parse_points(text: str, seed: int) -> list[tuple[int, int]]:
    """``"32:1000,32:590,48:P3"`` -> ``[(32, 1000), (32, 590), (48, round(P3(48)))]``."""
    out = []
    for item in text.split(","):
        L, P = item.split(":")
        L = int(L)
        out.append((L, round(p3_of(L, seed)) if P.strip().upper() == "P3" else int(P)))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", default="32:1000,32:590,48:P3",
                        help="L:P pairs; P = 'P3' takes the plug-in marginal's P3 at that L")
    parser.add_argument("--chains", type=int, default=8, help="chains per sampler (default 8)")
    parser.add_argument("--warmup", type=int, default=500, help="warmup iterations per chain, both samplers")
    parser.add_argument("--draws", type=int, default=1000, help="kept draws per chain, both samplers")
    parser.add_argument("--nuts-draws", type=int, default=None,
                        help="NumPyro: kept draws per chain if not --draws (NUTS needs fewer for the same ESS; its "
                             "compilation is then spread over fewer draws, which can only lower its rate)")
    parser.add_argument("--n-leapfrog", type=int, default=8, help="book: leapfrog steps per proposal (1 = MALA)")
    parser.add_argument("--gap-step", type=float, default=None,
                        help="book: add the softmax chapter's gap move with this step (the chapters use MALA + 0.8)")
    parser.add_argument("--target-accept", type=float, default=0.8, help="book: warmup acceptance target")
    parser.add_argument("--step-size", type=float, default=0.05, help="book: initial step h")
    parser.add_argument("--chain-method", default="vectorized", choices=("vectorized", "sequential"),
                        help="NumPyro: chains vectorised in one program, or one after another")
    parser.add_argument("--bracket", action=argparse.BooleanOptionalAction, default=True,
                        help="time the book before and after NUTS and take the mean (default); --no-bracket: "
                             "one run each, the order alternating from point to point")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)

    points = parse_points(args.points, 11)
    gap = "" if args.gap_step is None else f" with the gap move (step {args.gap_step})"
    print(f"book: {'MALA' if args.n_leapfrog == 1 else f'HMC, {args.n_leapfrog} leapfrog steps'}{gap}, target acceptance "
          f"{args.target_accept}; NumPyro NUTS ({args.chain_method} chains); {args.chains} chains from g = 0, "
          f"{args.warmup} warmup + {args.draws} draws each"
          f"{'' if args.nuts_draws is None else f' (NUTS {args.nuts_draws})'}; torch threads {torch.get_num_threads()}, "
          f"XLA_FLAGS={os.environ['XLA_FLAGS']!r}")
    load_start = os.getloadavg()[0]
    rows = []
    for k, (L, P) in enumerate(points):
        spec = ModelSpec(L=L, V=V, kind="softmax")
        X, _ = copy_task(P, L, V, np.random.default_rng(args.seed + k))
        C = cooccurrence(X)
        err = check_energy(jax_energy(C, spec), C, spec, np.random.default_rng(args.seed + 100 + k))
        out = {}
        if args.bracket:
            out["book"], out["nuts"] = bracketed(C, spec, args, args.seed + k)
        else:
            for who in ("book", "nuts") if k % 2 == 0 else ("nuts", "book"):
                c, seconds, cpu, acc = (run_book if who == "book" else run_nuts)(C, spec, args, args.seed + k)
                out[who] = dict(summary(c, seconds, cpu), accept=acc)
        b, n = out["book"], out["nuts"]
        z = abs(b["mean"] - n["mean"]) / math.hypot(b["mcse"], n["mcse"])
        rows.append((L, P, b, n, z))
        print(f"L={L} P={P}: JAX energy = copylib's to {err:.1e} (relative); "
              f"book {b['s']:.1f} s{' (runs ' + ', '.join(f'{t:.1f}' for t in b['s_runs']) + ')' if 's_runs' in b else ''}"
              f" ({b['cpu']:.1f} s CPU), ESS {b['ess']:.0f}, acceptance {b['accept']:.2f}; "
              f"NUTS {n['s']:.1f} s ({n['cpu']:.1f} s CPU), ESS {n['ess']:.0f}, acceptance {n['accept']:.2f}",
              flush=True)

    print()
    print(f"{'L':>3} {'P':>5} {'book ESS/s':>11} {'NUTS ESS/s':>11} {'ratio':>6} {'ratio (CPU s)':>14}   "
          f"{'book mean c +- MCSE':>22} {'NUTS mean c +- MCSE':>22}  agree")
    for L, P, b, n, z in rows:
        print(f"{L:3d} {P:5d} {b['ess_s']:11.1f} {n['ess_s']:11.1f} {b['ess_s'] / n['ess_s']:6.2f} "
              f"{b['ess_cpu'] / n['ess_cpu']:14.2f}   "
              f"{b['mean']:13.4f} +- {b['mcse']:.4f} {n['mean']:13.4f} +- {n['mcse']:.4f}  "
              f"{'yes' if z < AGREE_Z else 'NO'} ({z:.1f} SE)")
    ok = all(z < AGREE_Z for *_, z in rows)
    print(f"posterior means {'agree' if ok else 'DO NOT agree'} within {AGREE_Z:.0f} combined Monte Carlo "
          "standard errors at every point")
    print("ESS/s per wall-clock second; ratio (CPU s): the same ratio per CPU second of this process, "
          "less sensitive to the load")
    print(f"ratio = book ESS/s over NUTS ESS/s; >= 1 at every point: "
          f"{'PASS' if all(b['ess_s'] >= n['ess_s'] for _, _, b, n, _ in rows) else 'FAIL'}")
    print(f"load average (1 min) {load_start:.2f} at the start, {os.getloadavg()[0]:.2f} at the end, on "
          f"{os.cpu_count()} CPUs (a shared machine: absolute rates move with the load, the ratio less so)")


if __name__ == "__main__":
    main()
