"""The induction chapter's experiments: Adam across sample sizes and seeds, and posterior sampling.

* :func:`induction_sweep` -- MAP training (Adam) of the two-layer network of
  :mod:`copylib.model.induction` for every pair (seed, ``P``), all runs in one batch;
  the data sets of one seed are nested, so ``P`` is the only thing that changes along a row;
* :func:`sample_induction_posterior` -- MALA on the full posterior ``exp(-U(g, K, W))``
  (:func:`copylib.inference.langevin.langevin`), chains at several ``P`` at once;
* :func:`sample_induction_tempering` -- replica exchange over a likelihood-temperature ladder with
  MALA moves (:func:`copylib.inference.tempering.parallel_tempering`), which crosses between the
  copying and the non-copying basins that plain MALA chains do not leave;
* :func:`sample_induction_states` -- the same ladder run separately inside the copying and the
  non-copying region of ``c^(1)``, whose free energies (MBAR, :mod:`copylib.inference.free_energy`)
  give the posterior mass of each state at every ``beta`` without any chain crossing between them.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import numpy as np
import torch

from ..arguments import as_real_array, check_finite, check_generator, check_int, check_positive
from ..cache import cached
from ..inference.diagnostics import split_rhat
from ..inference.free_energy import LadderFit
from ..inference.langevin import langevin
from ..inference.tempering import check_ladder, parallel_tempering
from ..model.induction import (
    InductionData,
    InductionSpec,
    induction_accuracy,
    induction_attention_score,
    induction_keys,
    induction_prior,
    induction_task,
    layer1_copy_weight,
    layer2_visible,
    layers_from_attention,
    sequence_errors,
)
from ..model.network import attention
from .softmax import interpolate_crossing
from .transitions import half_way_point

__all__ = ["InductionSweep", "induction_sweep", "InductionSampling", "sample_induction_posterior",
           "InductionTempering", "sample_induction_tempering", "InductionStates", "sample_induction_states", "dip_ratio",
           "steepness", "OnsetComparison", "compare_onsets", "FormationSteps", "formation_steps", "TemperingMixing",
           "tempering_mixing", "InductionSwitch", "induction_switch"]


@dataclass
class InductionSweep:
    """Adam runs of the two-layer network, one per seed and sample size (numpy arrays).

    P : ``(n_P,)``; steps : ``(n_rec,)`` the recorded steps. Final values, ``(n_seeds, n_P)``:
    c1 (layer-1 copy weight), score (layer-2 attention mass on the induction keys, held-out data),
    accuracy (held-out induction accuracy), test_mse (held-out squared error per masked position),
    objective (``U`` at the end). Curves ``(n_seeds, n_P, n_rec)``: c1_curve, score_curve,
    train_mse_curve. Parameters: g ``(n_seeds, n_P, L, L)``, K, W ``(n_seeds, n_P, V, V)``.
    """

    P: np.ndarray
    steps: np.ndarray
    c1: np.ndarray
    score: np.ndarray
    accuracy: np.ndarray
    test_mse: np.ndarray
    objective: np.ndarray
    c1_curve: np.ndarray
    score_curve: np.ndarray
    train_mse_curve: np.ndarray
    g: np.ndarray
    K: np.ndarray
    W: np.ndarray


def _check_P_values(P_values) -> np.ndarray:
    P = np.asarray(P_values)
    if P.ndim != 1 or P.size == 0:
        raise ValueError("P_values must be a non-empty 1-d sequence of integers >= 1")
    P = np.array([check_int("P_values entries", p, 1) for p in P.tolist()])
    if not (np.diff(P) > 0).all():
        raise ValueError("P_values must be strictly increasing")
    return P


def _result(compute, params, name, cache, kind):
    """``kind`` from ``compute()``, through the result cache (keyed by ``name`` and ``params``) if ``cache``."""
    out = cached(compute, params, name=name) if cache else compute()
    return kind(**{f.name: np.asarray(out[f.name]) for f in dataclasses.fields(kind)})


def _check_spec(spec) -> InductionSpec:
    if not isinstance(spec, InductionSpec):
        raise TypeError(f"spec must be an InductionSpec, got {type(spec).__name__}")
    return spec


def _stacked_data(datasets):
    """The seeds' data sets stacked: ``X, Y (S, P_max, L, V)`` and ``mask (S, P_max, L)`` as float64 tensors."""
    return (torch.as_tensor(np.stack([d.X for d in datasets])), torch.as_tensor(np.stack([d.Y for d in datasets])),
            torch.as_tensor(np.stack([d.mask for d in datasets]), dtype=torch.float64))


def _evaluate(g, K, W, test: InductionData):
    """Layer-1 copy weight, layer-2 induction score and accuracy, held-out squared error, each ``(R,)``."""
    A1 = attention(g, "softmax", causal=True)
    A2, F = layers_from_attention(A1, K, W, torch.as_tensor(test.X))
    mask = torch.as_tensor(test.mask)
    mse = (((F - torch.as_tensor(test.Y)) ** 2).sum(-1) * mask).sum((-1, -2)) / mask.sum()
    return layer1_copy_weight(A1), induction_attention_score(A2, test), induction_accuracy(F, test), mse


def _padded(P):
    """Runs at ``P[i]`` see the first ``P[i]`` sequences of the nested data: weights ``(n_P, P_max)``."""
    weight = (np.arange(P[-1])[None, :] < P[:, None]).astype(float)  # (n_P, P_max)
    return torch.as_tensor(weight)


def _sweep(P, spec, datasets, test, generator, n_steps, lr, lr_final, init_scale, n_records):
    n_seeds, n_P, L, V = len(datasets), P.size, spec.L, spec.V
    X, Y, mask = _stacked_data(datasets)
    weight = _padded(P).expand(n_seeds, -1, -1)  # (S, n_P, P_max): run (s, i) sees the first P[i] sequences
    n_masked = (mask.sum(-1)[:, None] * weight).sum(-1)  # (S, n_P)
    params = [init_scale * torch.randn(n_seeds, n_P, *shape, generator=generator, dtype=torch.float64)
              for shape in ((L, L), (V, V), (V, V))]
    for p in params:
        p.requires_grad_(True)
    opt = torch.optim.Adam(params, lr=lr)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=(lr_final / lr) ** (1.0 / n_steps))
    record_at = np.unique(np.linspace(0, n_steps, n_records).round().astype(int))
    curves = {"c1": [], "score": [], "mse": []}
    for step in range(n_steps + 1):
        g, K, W = params
        A1 = attention(g, "softmax", causal=True)
        # one padded batch: few large tensor operations beat a loop over P for these small sizes
        sse = (sequence_errors(A1, K, W, X[:, None], Y[:, None], mask[:, None]) * weight).sum(-1)
        objective = sse / (2 * spec.sigma_sq) + induction_prior(g, K, W, spec)
        if step in record_at:
            with torch.no_grad():
                c1, score, _, _ = _evaluate(g.flatten(0, 1), K.flatten(0, 1), W.flatten(0, 1), test)
            curves["c1"].append(c1), curves["score"].append(score), curves["mse"].append((sse / n_masked).detach())
        if step == n_steps:
            break
        opt.zero_grad()
        objective.sum().backward()  # runs are independent: Adam is elementwise
        opt.step()
        sched.step()
    if not torch.isfinite(objective).all():
        raise FloatingPointError("Adam diverged (non-finite objective); lower lr")
    with torch.no_grad():
        c1, score, acc, mse = _evaluate(g.flatten(0, 1), K.flatten(0, 1), W.flatten(0, 1), test)
    shape = (n_seeds, n_P)
    out = {"c1": c1, "score": score, "accuracy": acc, "test_mse": mse, "objective": objective.detach()}
    out = {k: v.numpy().reshape(shape) for k, v in out.items()}
    out.update(P=P, steps=record_at)
    for name, key in (("c1", "c1_curve"), ("score", "score_curve"), ("mse", "train_mse_curve")):
        out[key] = torch.stack(curves[name], -1).numpy().reshape(shape + (-1,))
    for name, p in zip(("g", "K", "W"), params):
        out[name] = p.detach().numpy()
    return out


def induction_sweep(P_values, spec: InductionSpec, rng: np.random.Generator, *, n_seeds: int = 4,
                    n_steps: int = 600, lr: float = 0.05, lr_final: float = 0.005, init_scale: float = 0.1,
                    n_test: int = 256, n_records: int = 16, cache: bool = False) -> InductionSweep:
    """Adam (full batch) on the MAP objective ``U`` for every seed and every ``P``, all runs batched.

    P_values : strictly increasing integers >= 1. Seed ``s`` draws one data set of ``max(P)``
    sequences from ``rng``; the run at ``P`` trains on its first ``P`` (nested data), from its own
    random start (entries ``N(0, init_scale^2)`` for ``g``, ``K``, ``W``, drawn from a torch generator
    seeded by ``rng``). The held-out set (``n_test`` sequences, also from ``rng``) is shared.
    The learning rate decays geometrically from ``lr`` to ``lr_final``; ``n_records`` evenly spaced
    steps are recorded. ``cache=True`` keeps the result in the result cache (:mod:`copylib.cache`).
    """
    P = _check_P_values(P_values)
    spec = _check_spec(spec)
    check_generator("rng", rng)
    n_seeds, n_steps = check_int("n_seeds", n_seeds, 1), check_int("n_steps", n_steps, 1)
    n_test, n_records = check_int("n_test", n_test, 1), check_int("n_records", n_records, 2)
    lr, lr_final = check_positive("lr", lr), check_positive("lr_final", lr_final)
    init_scale = check_positive("init_scale", init_scale)
    if not isinstance(cache, bool):
        raise TypeError(f"cache must be a bool, got {type(cache).__name__}")
    datasets = [induction_task(int(P[-1]), spec.L, spec.V, rng) for _ in range(n_seeds)]
    test = induction_task(n_test, spec.L, spec.V, rng)
    seed = int(rng.integers(2**62))

    def compute():
        return _sweep(P, spec, datasets, test, torch.Generator().manual_seed(seed), n_steps, lr, lr_final,
                      init_scale, n_records)

    params = {"P": P, "spec": dataclasses.asdict(spec), "tokens": np.stack([d.tokens for d in datasets]),
              "test": test.tokens, "seed": seed, "n_steps": n_steps, "lr": lr, "lr_final": lr_final,
              "init_scale": init_scale, "n_records": n_records}
    return _result(compute, params, "induction_sweep", cache, InductionSweep)


@dataclass
class InductionSampling:
    """MALA chains of the two-layer posterior: ``P (n_P,)``; per chain ``(n_P, n_chains, n_kept)``
    draws of the layer-1 copy weight ``c1`` and of the layer-2 induction score ``score`` (on the
    chain's training data); ``accept_rate (n_P, n_chains)``."""

    P: np.ndarray
    c1: np.ndarray
    score: np.ndarray
    accept_rate: np.ndarray


def sample_induction_posterior(P_values, spec: InductionSpec, rng: np.random.Generator, *, n_chains: int = 4,
                               n_steps: int = 1000, n_warmup: int = 500, thin: int = 10, init: dict | None = None,
                               cache: bool = False) -> InductionSampling:
    """MALA on ``exp(-U(g, K, W))`` at every ``P`` (nested data from one draw of ``rng``).

    Chains start from prior draws, or with ``init`` (``{"g": (n_P, L, L), "K": (n_P, V, V),
    "W": (n_P, V, V)}``, e.g. Adam's solutions) every chain at ``P[i]`` starts from entry ``i``.
    Step sizes adapt in the warmup (per chain), length scales are the prior standard deviations.
    Records ``c1`` and the induction score on the training data.
    """
    P = _check_P_values(P_values)
    spec = _check_spec(spec)
    check_generator("rng", rng)
    n_chains = check_int("n_chains", n_chains, 1)
    n_steps, n_warmup, thin = check_int("n_steps", n_steps, 1), check_int("n_warmup", n_warmup, 0), \
        check_int("thin", thin, 1)
    if not isinstance(cache, bool):
        raise TypeError(f"cache must be a bool, got {type(cache).__name__}")
    if init is not None:
        init = _check_init(init, P.size, spec)
    data = induction_task(int(P[-1]), spec.L, spec.V, rng)
    seed = int(rng.integers(2**62))

    def compute():
        return _sample(P, spec, data, torch.Generator().manual_seed(seed), n_chains, n_steps, n_warmup, thin, init)

    params = {"P": P, "spec": dataclasses.asdict(spec), "tokens": data.tokens, "seed": seed, "init": init,
              "n_chains": n_chains, "n_steps": n_steps, "n_warmup": n_warmup, "thin": thin}
    return _result(compute, params, "induction_posterior", cache, InductionSampling)


def _check_init(init, n_P, spec):
    if not isinstance(init, dict) or set(init) != {"g", "K", "W"}:
        raise ValueError("init must be a dict with the keys 'g', 'K', 'W'")
    out = {}
    for name, shape in (("g", (n_P, spec.L, spec.L)), ("K", (n_P, spec.V, spec.V)), ("W", (n_P, spec.V, spec.V))):
        a = as_real_array(f"init[{name!r}]", init[name])
        if a.shape != shape:
            raise ValueError(f"init[{name!r}] must have shape {shape} (one state per P), got {a.shape}")
        check_finite(f"init[{name!r}]", a)
        out[name] = a
    return out


def _sample(P, spec, data, generator, n_chains, n_steps, n_warmup, thin, init):
    n_P, L, V = P.size, spec.L, spec.V
    R = n_P * n_chains
    weight = _padded(P).repeat_interleave(n_chains, 0)  # (R, P_max)
    X, Y = torch.as_tensor(data.X), torch.as_tensor(data.Y)
    mask = torch.as_tensor(data.mask, dtype=torch.float64)
    keys = torch.as_tensor(induction_keys(data.tokens), dtype=torch.float64)

    def energy(p):
        A1 = attention(p["g"], "softmax", causal=True)
        err = sequence_errors(A1, p["K"], p["W"], X, Y, mask)  # (R, P_max)
        return (err * weight).sum(-1) / (2 * spec.sigma_sq) + induction_prior(p["g"], p["K"], p["W"], spec)

    def record(p):
        A1 = attention(p["g"], "softmax", causal=True)
        A2, _ = layers_from_attention(A1, p["K"], p["W"], X)
        score = (A2 * keys).sum(-1) * mask  # (R, P_max, L)
        n_targets = (mask.sum(-1) * weight).sum(-1)
        return {"c1": layer1_copy_weight(A1), "score": (score.sum(-1) * weight).sum(-1) / n_targets}

    sd = {"g": spec.sigma_G, "K": spec.sigma_K, "W": spec.omega ** 0.5}
    if init is None:
        init = {name: sd[name] * torch.randn(R, *shape, generator=generator, dtype=torch.float64)
                for name, shape in (("g", (L, L)), ("K", (V, V)), ("W", (V, V)))}
    else:
        init = {name: torch.as_tensor(a).repeat_interleave(n_chains, 0) for name, a in init.items()}
    res = langevin(energy, init, n_steps, 0.01, generator, n_warmup=n_warmup, thin=thin, record=record,
                   scales=sd)
    shape = (n_P, n_chains)
    return {"P": P, "c1": res.samples["c1"].reshape(shape + (-1,)),
            "score": res.samples["score"].reshape(shape + (-1,)), "accept_rate": res.accept_rate.reshape(shape)}


@dataclass
class InductionTempering:
    """Replica-exchange runs of the two-layer posterior (numpy arrays).

    P ``(n_P,)``, betas ``(K,)``. Draws at the posterior rung (``beta = 1``), ``(n_P, n_chains, n_kept)``:
    c1 (layer-1 copy weight), score (layer-2 attention mass on the induction keys, training data),
    accuracy (induction accuracy on held-out data). Per rung: accept_rate ``(K, n_P, n_chains)``
    (MALA), swap_rate ``(K - 1, n_P, n_chains)`` (exchanges of rungs ``k``, ``k + 1``); round_trips
    ``(n_P, n_chains)`` (walkers' completed trips prior -> posterior -> prior, after the warmup).
    """

    P: np.ndarray
    betas: np.ndarray
    c1: np.ndarray
    score: np.ndarray
    accuracy: np.ndarray
    accept_rate: np.ndarray
    swap_rate: np.ndarray
    round_trips: np.ndarray


def sample_induction_tempering(P_values, spec: InductionSpec, rng: np.random.Generator, *, betas,
                               n_chains: int = 4, n_steps: int = 1000, n_warmup: int = 500, thin: int = 10,
                               swap_every: int = 1, init: dict | None = None, n_test: int = 256,
                               cache: bool = False) -> InductionTempering:
    """Replica exchange on ``exp(-beta U_data - U_prior)`` over the ladder ``betas`` at every ``P``, chains batched.

    ``U_data`` is the data term of ``U(g, K, W)`` and ``U_prior`` its prior term (kept at full strength on every
    rung; ``betas`` strictly increasing in ``[0, 1]``, ending at 1). The data are nested (one draw of
    ``max(P)`` sequences from ``rng``); repeated sequences enter once, with their count, which is
    exact and makes a run's cost independent of ``P`` once ``P`` exceeds the number of distinct
    sequences. Every rung of a chain starts from a prior draw, or with ``init`` (``{"g": (n_P, L, L),
    "K": (n_P, V, V), "W": (n_P, V, V)}``, e.g. Adam's solutions) from entry ``i`` at ``P[i]``.
    MALA steps adapt per rung and chain in the warmup; length scales are the prior standard
    deviations. ``n_test`` held-out sequences (from ``rng``) give the accuracy.
    """
    P = _check_P_values(P_values)
    spec = _check_spec(spec)
    check_generator("rng", rng)
    b = check_ladder(betas)
    n_chains, n_steps = check_int("n_chains", n_chains, 1), check_int("n_steps", n_steps, 1)
    n_warmup, thin = check_int("n_warmup", n_warmup, 0), check_int("thin", thin, 1)
    swap_every, n_test = check_int("swap_every", swap_every, 1), check_int("n_test", n_test, 1)
    if not isinstance(cache, bool):
        raise TypeError(f"cache must be a bool, got {type(cache).__name__}")
    if init is not None:
        init = _check_init(init, P.size, spec)
    data = induction_task(int(P[-1]), spec.L, spec.V, rng)
    test = induction_task(n_test, spec.L, spec.V, rng)
    seed = int(rng.integers(2**62))

    def compute():
        return _temper(P, spec, data, test, b, torch.Generator().manual_seed(seed), n_chains, n_steps, n_warmup,
                       thin, swap_every, init)

    params = {"P": P, "spec": dataclasses.asdict(spec), "tokens": data.tokens, "test": test.tokens, "seed": seed,
              "betas": b, "init": init, "n_chains": n_chains, "n_steps": n_steps, "n_warmup": n_warmup,
              "thin": thin, "swap_every": swap_every}
    return _result(compute, params, "induction_tempering", cache, InductionTempering)


def _distinct_counts(data: InductionData, P):
    """The distinct sequences of the nested data and their counts among the first ``P[i]``: ``(n_P, n_distinct)``."""
    distinct, first, inverse = np.unique(data.tokens, axis=0, return_index=True, return_inverse=True)
    inverse = np.asarray(inverse).ravel()
    counts = np.stack([np.bincount(inverse[:p], minlength=len(distinct)) for p in P]).astype(float)
    sub = InductionData(tokens=data.tokens[first], X=data.X[first], Y=data.Y[first], mask=data.mask[first])
    return sub, counts


def _shared_forward(A1, K, W, X):
    """``(A2, F)`` for parameters ``A1 (R, L, L)``, ``K, W (R, V, V)`` on data ``X (n, L, V)`` shared by all rows.

    The same numbers as ``layers_from_attention(A1, K, W, X)`` (tested), but every product is one
    large matrix product over the batch of rows or of sequences instead of ``R x n`` tiny ones.
    """
    query = torch.einsum("nlv,rvw->rnlw", X, K)
    key_token = torch.einsum("rnlw,nkw->rnlk", query, X)  # K[x_l, x_k]
    scores = torch.einsum("rnlk,rjk->rnlj", key_token, A1)  # x_l^T K h_j, h_j = sum_k A1[j, k] x_k
    A2 = torch.softmax(scores.masked_fill(~layer2_visible(X.shape[-2]), -torch.inf), dim=-1)
    F = torch.einsum("rnlv,rvw->rnlw", torch.einsum("rnlj,njv->rnlv", A2, X), W)
    return A2, F


def _temper(P, spec, data, test, betas, generator, n_chains, n_steps, n_warmup, thin, swap_every, init,
            region=None):
    """``region``: None, or ``(c_split, copying)``: every rung is restricted to ``c^(1) > c_split``
    (``copying``) or to ``c^(1) <= c_split``, by an infinite wall in the prior term (MALA rejects
    proposals across it, which keeps the restricted target exact; swaps stay inside)."""
    n_P, L, V, K = P.size, spec.L, spec.V, betas.size
    n_runs = n_P * n_chains
    sub, counts = _distinct_counts(data, P)
    weight = torch.as_tensor(counts).repeat_interleave(n_chains, 0).repeat(K, 1)  # (K * n_runs, n_distinct)
    X, Y = torch.as_tensor(sub.X), torch.as_tensor(sub.Y)
    mask = torch.as_tensor(sub.mask, dtype=torch.float64)
    X_test = torch.as_tensor(test.X)

    def energy(p):
        A1 = attention(p["g"], "softmax", causal=True)
        _, F = _shared_forward(A1, p["K"], p["W"], X)
        err = (((F - Y) ** 2).sum(-1) * mask).sum(-1)
        prior = induction_prior(p["g"], p["K"], p["W"], spec)
        if region is not None:
            prior = prior + torch.where(_in_region(layer1_copy_weight(A1), region), 0.0, torch.inf)
        return (err * weight).sum(-1) / (2 * spec.sigma_sq), prior

    def record(p):
        A1 = attention(p["g"], "softmax", causal=True)
        A2, _ = _shared_forward(A1, p["K"], p["W"], X)
        score = ((A2 * keys).sum(-1) * mask).sum(-1)  # (R, n_distinct)
        _, F = _shared_forward(A1, p["K"], p["W"], X_test)
        return {"c1": layer1_copy_weight(A1), "score": (score * weight).sum(-1) / n_targets,
                "accuracy": induction_accuracy(F, test)}

    keys = torch.as_tensor(induction_keys(sub.tokens), dtype=torch.float64)
    n_targets = (mask.sum(-1) * weight).sum(-1)
    sd = {"g": spec.sigma_G, "K": spec.sigma_K, "W": spec.omega ** 0.5}
    if init is None:
        start = {name: sd[name] * torch.randn(n_runs, *shape, generator=generator, dtype=torch.float64)
                 for name, shape in (("g", (L, L)), ("K", (V, V)), ("W", (V, V)))}
    else:
        start = {name: torch.as_tensor(a).repeat_interleave(n_chains, 0) for name, a in init.items()}
    res = parallel_tempering(energy, start, betas, n_steps, 0.01, generator, n_warmup=n_warmup, thin=thin,
                             swap_every=swap_every, record=record, scales=sd)
    shape = (n_P, n_chains)
    out = {name: res.samples[name][-1].reshape(shape + (-1,)) for name in ("c1", "score", "accuracy")}
    out.update(P=P, betas=betas, accept_rate=res.accept_rate.reshape((K,) + shape),
               swap_rate=res.swap_rate.reshape((K - 1,) + shape), round_trips=res.round_trips.reshape(shape))
    if region is not None:  # every rung's draws, for the free energies
        out.update(rung_c1=res.samples["c1"].reshape((K,) + shape + (-1,)),
                   rung_u_data=res.likelihood.reshape((K,) + shape + (-1,)))
    return out


def _in_region(c1, region):
    c_split, copying = region
    return c1 > c_split if copying else c1 <= c_split


def _prior_draws_in(region, n, spec, generator, batch=4096):
    """``n`` draws of ``g`` from its prior, conditioned on the region (rejection), ``(n, L, L)``."""
    out, have = [], 0
    for _ in range(1000):
        g = spec.sigma_G * torch.randn(batch, spec.L, spec.L, generator=generator, dtype=torch.float64)
        g = g[_in_region(layer1_copy_weight(attention(g, "softmax", causal=True)), region)]
        out.append(g)
        have += g.shape[0]
        if have >= n:
            return torch.cat(out)[:n]
    raise ValueError(f"the region {region} has prior mass below 1e-6; choose c_split inside the prior's range")


@dataclass
class InductionStates:
    """The ladder run inside each region of the layer-1 copy weight, at one ``P`` (numpy arrays).

    ``c_split``: the copying region is ``c^(1) > c_split``, the other ``c^(1) <= c_split``; index 0 of the
    first axis below is the non-copying region, 1 the copying one. P : ``()``; betas ``(K,)``;
    prior_mass ``()``: the prior probability of the copying region (Monte Carlo over ``n_prior`` prior
    draws of ``g``), prior_mass_se ``()`` its standard error. Draws of every rung, ``(2, K, n_chains, n_kept)``:
    c1 and u_data (the data term ``U_data``); accuracy ``(2, n_chains, n_kept)`` on held-out data at the
    posterior rung; accept_rate ``(2, K, n_chains)``, swap_rate ``(2, K - 1, n_chains)``.

    Rung ``beta`` at ``P`` sequences is the posterior of ``beta P`` sequences with the same empirical law
    (the data term is linear in the sequence counts), so one ladder traces the posterior along ``P``.
    """

    P: np.ndarray
    betas: np.ndarray
    c_split: np.ndarray
    prior_mass: np.ndarray
    prior_mass_se: np.ndarray
    c1: np.ndarray
    u_data: np.ndarray
    accuracy: np.ndarray
    accept_rate: np.ndarray
    swap_rate: np.ndarray

    @functools.cached_property
    def ladder_fits(self):
        """MBAR solved once per region and chain, ``[[LadderFit] * n_chains] * 2`` (region 0, then 1):
        free energies and reweighting along the ladder (:class:`copylib.inference.free_energy.LadderFit`)."""
        return [[LadderFit(self.u_data[r, :, i], self.betas) for i in range(self.u_data.shape[2])] for r in (0, 1)]

    def log_odds(self, at) -> np.ndarray:
        """``ln`` (posterior mass of the copying region / of the other) at the inverse temperatures ``at``,
        one row per pair of chains (chain ``i`` of each region), ``(n_chains, len(at))``."""
        log_z = [np.array([fit.log_partition(at) for fit in fits]) for fits in self.ladder_fits]
        log_prior = np.log(self.prior_mass) - np.log1p(-self.prior_mass)  # the rung beta = 0 is the prior
        return log_prior + log_z[1] - log_z[0]

    def copy_mass(self, at) -> np.ndarray:
        """Posterior mass of the copying region at ``at``, ``(n_chains, len(at))`` (see :meth:`log_odds`)."""
        return 1 / (1 + np.exp(-self.log_odds(at)))

    def c1_density(self, beta: float, edges) -> np.ndarray:
        """Histogram density of ``c^(1)`` under the whole target at ``beta``, on the bin ``edges``, one row per
        pair of chains, ``(n_chains, len(edges) - 1)``: chain ``i`` of each region, weighted by the pair's mass."""
        edges = np.asarray(edges, dtype=float)
        m = self.copy_mass(beta)[:, 0]
        out = np.zeros((self.u_data.shape[2], edges.size - 1))
        for i in range(out.shape[0]):
            for r, share in ((0, 1 - m[i]), (1, m[i])):
                w = self.ladder_fits[r][i].weights(beta)
                out[i] += share * np.histogram(self.c1[r, :, i].ravel(), edges, weights=w)[0]
        return out / np.diff(edges)


def sample_induction_states(P: int, spec: InductionSpec, rng: np.random.Generator, *, betas, c_split: float,
                            n_chains: int = 4, n_steps: int = 1000, n_warmup: int = 500, thin: int = 5,
                            n_prior: int = 400_000, n_test: int = 256, cache: bool = False) -> InductionStates:
    """Replica exchange over ``betas`` restricted to ``c^(1) > c_split`` and, separately, to ``c^(1) <= c_split``.

    P : int >= 1 sequences (one draw from ``rng``); betas : strictly increasing in ``[0, 1]`` from 0 to 1
    (the free energies start at the prior rung, whose region masses are known); c_split : float in (0, 1);
    every chain starts from a prior draw inside its region. The other arguments are those of
    :func:`sample_induction_tempering`. The regions' free energies along the ladder give the posterior
    mass of each (:meth:`InductionStates.copy_mass`) with no chain ever crossing between them.
    """
    P = check_int("P", P, 1)
    spec = _check_spec(spec)
    check_generator("rng", rng)
    b = check_ladder(betas)
    if b[0] != 0:
        raise ValueError(f"betas must start at 0 (the prior rung), got {b[0]}")
    c_split = check_positive("c_split", c_split)
    if not c_split < 1:
        raise ValueError(f"c_split must lie in (0, 1), got {c_split}")
    n_chains, n_steps = check_int("n_chains", n_chains, 2), check_int("n_steps", n_steps, 1)
    n_warmup, thin = check_int("n_warmup", n_warmup, 0), check_int("thin", thin, 1)
    n_prior, n_test = check_int("n_prior", n_prior, 1000), check_int("n_test", n_test, 1)
    if not isinstance(cache, bool):
        raise TypeError(f"cache must be a bool, got {type(cache).__name__}")
    data = induction_task(P, spec.L, spec.V, rng)
    test = induction_task(n_test, spec.L, spec.V, rng)
    seed = int(rng.integers(2**62))

    def compute():
        return _states(np.array([P]), spec, data, test, b, torch.Generator().manual_seed(seed), c_split, n_chains,
                       n_steps, n_warmup, thin, n_prior)

    params = {"P": P, "spec": dataclasses.asdict(spec), "tokens": data.tokens, "test": test.tokens, "seed": seed,
              "betas": b, "c_split": c_split, "n_chains": n_chains, "n_steps": n_steps, "n_warmup": n_warmup,
              "thin": thin, "n_prior": n_prior}
    return _result(compute, params, "induction_states", cache, InductionStates)


def _states(P, spec, data, test, betas, generator, c_split, n_chains, n_steps, n_warmup, thin, n_prior):
    g = spec.sigma_G * torch.randn(n_prior, spec.L, spec.L, generator=generator, dtype=torch.float64)
    mass = float((layer1_copy_weight(attention(g, "softmax", causal=True)) > c_split).double().mean())
    if not 0 < mass < 1:
        raise ValueError(f"c_split = {c_split} leaves a region without prior draws; choose it inside the prior's range")
    runs = []
    for copying in (False, True):
        region = (c_split, copying)
        init = {"g": _prior_draws_in(region, n_chains, spec, generator)}
        init.update({name: sd * torch.randn(n_chains, spec.V, spec.V, generator=generator, dtype=torch.float64)
                     for name, sd in (("K", spec.sigma_K), ("W", spec.omega ** 0.5))})
        # the chains as runs at n_chains copies of P: each starts from its own draw
        runs.append(_temper(np.repeat(P, n_chains), spec, data, test, betas, generator, 1, n_steps, n_warmup, thin,
                            1, init, region=region))
    per_rung = {name: np.stack([r[key][..., 0, :] for r in runs]) for name, key in (("c1", "rung_c1"),
                                                                                      ("u_data", "rung_u_data"))}
    return {"P": P[0], "betas": betas, "c_split": c_split, "prior_mass": mass,
            "prior_mass_se": (mass * (1 - mass) / n_prior) ** 0.5, **per_rung,
            "accuracy": np.stack([r["accuracy"][:, 0] for r in runs]),
            "accept_rate": np.stack([r["accept_rate"][..., 0] for r in runs]),
            "swap_rate": np.stack([r["swap_rate"][..., 0] for r in runs])}


def dip_ratio(density, edges, c_split: float):
    """How deep the density of ``c^(1)`` dips between a state below and a state above ``c_split``.

    density : ``(..., n_bins)`` on the bin ``edges`` ``(n_bins + 1,)``. The peaks are the highest bins on
    each side of ``c_split``; the result is the lowest bin between them over the lower peak, ``(...)``:
    1 when the density does not dip between them (one state, or a monotone slope), near 0 for two
    separated states.
    """
    d = as_real_array("density", density)
    e = as_real_array("edges", edges)
    if e.ndim != 1 or d.shape[-1] != e.size - 1 or not (np.diff(e) > 0).all():
        raise ValueError("edges must be increasing, with one more entry than density's last axis")
    check_finite("density", d)
    centre = (e[:-1] + e[1:]) / 2
    below, above = centre <= c_split, centre > c_split
    if not (below.any() and above.any()):
        raise ValueError(f"c_split = {c_split} must lie inside the bins' range")
    flat = d.reshape(-1, d.shape[-1])
    out = np.empty(flat.shape[0])
    for k, row in enumerate(flat):
        i = int(np.flatnonzero(below)[np.argmax(row[below])])
        j = int(np.flatnonzero(above)[np.argmax(row[above])])
        low_peak = min(row[i], row[j])
        if low_peak <= 0:
            raise ValueError("density must be positive on both sides of c_split")
        out[k] = row[i:j + 1].min() / low_peak
    return out.reshape(d.shape[:-1])



# --------------------------------------------------------------------------
# The chapter's summaries: each takes the runs above and returns a small frozen result
# whose fields the chapter glues and checks.
# --------------------------------------------------------------------------

def _se(x, axis=None):
    """Standard error of the mean (``ddof = 1``) along ``axis`` (all entries for ``None``)."""
    x = np.asarray(x, dtype=float)
    n = x.size if axis is None else x.shape[axis]
    return np.std(x, axis=axis, ddof=1) / np.sqrt(n)


def _grid_and_curves(P, y, name="y"):
    """Checked ``P (n,)`` (``> 0``, strictly increasing, ``n >= 2``) and ``y (k, n)`` (one row per curve), finite."""
    P = as_real_array("P", P)
    if P.ndim != 1 or P.size < 2:
        raise ValueError(f"P must be 1-d with at least 2 entries, got shape {P.shape}")
    check_finite("P", P)
    if not ((P > 0).all() and (np.diff(P) > 0).all()):
        raise ValueError("P must be > 0 and strictly increasing")
    y = as_real_array(name, y)
    if y.ndim not in (1, 2) or y.shape[-1] != P.size:
        raise ValueError(f"{name} must have shape ({P.size},) or (k, {P.size}) (one column per P), got {y.shape}")
    check_finite(name, y)
    return P, np.atleast_2d(y)


def steepness(P, y) -> np.ndarray:
    """The steepest normalised rise of each curve, ``max du / d ln P`` over the grid intervals.

    Parameters
    ----------
    P : array_like, shape (n,)
        Sample sizes, ``> 0`` and strictly increasing, ``n >= 2``.
    y : array_like, shape (n,) or (k, n)
        One curve per row, each changing between its first and last ``P``.

    Returns
    -------
    numpy.ndarray, shape (k,)
        With ``u = (y - y[0]) / (y[-1] - y[0])`` the rise normalised to [0, 1]: the largest
        ``Delta u / Delta ln P`` over the grid intervals. A rise spread evenly over a decade of ``P``
        gives ``1 / ln 10``; a jump inside one interval ``1 / (its width in ln P)``, a lower bound.
    """
    P, Y = _grid_and_curves(P, y)
    change = Y[:, -1] - Y[:, 0]
    if (change == 0).any():
        raise ValueError("y must change between the first and the last P in every curve")
    u = (Y - Y[:, :1]) / change[:, None]
    return (np.diff(u, axis=1) / np.diff(np.log(P))).max(1)


@dataclass(frozen=True)
class OnsetComparison:
    """Onsets and steepness of the two-layer observables, per seed, against a one-layer reference.

    names : the observables' names, in the order of the rows below; onset, steepness : ``(n_obs, n_seeds)``
    (:func:`copylib.analysis.transitions.half_way_point` and :func:`steepness` of each seed's curve);
    ref_onset, ref_steepness : ``(n_ref,)``, the same for the reference's runs; grid_step : the coarsest
    step of the two-layer grid in ``ln P``.
    """

    names: tuple
    onset: np.ndarray
    steepness: np.ndarray
    ref_onset: np.ndarray
    ref_steepness: np.ndarray
    grid_step: float

    def _row(self, name: str) -> int:
        if name not in self.names:
            raise ValueError(f"name must be one of {self.names}, got {name!r}")
        return self.names.index(name)

    def onset_ratio(self, name: str) -> float:
        """Mean onset of ``name`` over the mean onset of the reference."""
        return float(self.onset[self._row(name)].mean() / self.ref_onset.mean())

    def later_margin(self, name: str) -> float:
        """``ln(onset ratio)`` minus one grid step minus 3 s.e. of the per-seed ``ln`` onsets of ``name``:
        positive when ``name`` switches on later than the reference by more than that."""
        ln_on = np.log(self.onset[self._row(name)])
        return float(np.log(self.onset_ratio(name)) - self.grid_step - 3 * _se(ln_on))

    def same_onset_margin(self, a: str, b: str) -> float:
        """``|mean of ln onset(a) - ln onset(b)|`` (paired by seed) minus one grid step minus 3 s.e. of the
        paired differences: negative when the two onsets agree within that."""
        d = np.log(self.onset[self._row(a)]) - np.log(self.onset[self._row(b)])
        return float(abs(d.mean()) - self.grid_step - 3 * _se(d))

    def steeper_margin(self, name: str) -> float:
        """Mean steepness of ``name`` minus the reference's, minus 3 s.e. of the difference (independent runs):
        positive when ``name`` rises more steeply than the reference."""
        s = self.steepness[self._row(name)]
        return float(s.mean() - self.ref_steepness.mean() - 3 * np.hypot(_se(s), _se(self.ref_steepness)))

    def table(self, reference: str = "one layer alone: copy weight (Adam)"):
        """The mean onset and steepness of every observable and of the reference, with standard errors,
        as a pandas ``DataFrame`` (one row each)."""
        import pandas as pd

        rows = list(zip(self.names, self.onset, self.steepness)) + [(reference, self.ref_onset, self.ref_steepness)]
        return pd.DataFrame([{"observable": n, "onset P": o.mean(), "onset s.e.": _se(o), "steepness": s.mean(),
                              "steepness s.e.": _se(s)} for n, o, s in rows]).set_index("observable")


def compare_onsets(P, observables: dict, P_ref, reference) -> OnsetComparison:
    """Onsets (half-way points in ``ln P``) and steepness of every seed's curve, and of a reference's runs.

    Parameters
    ----------
    P : array_like, shape (n_P,)
        The two-layer grid, ``> 0`` and strictly increasing.
    observables : dict of str to array_like, shape (n_seeds, n_P)
        One curve per seed for each observable (e.g. :class:`InductionSweep` fields), ``n_seeds >= 2``.
    P_ref : array_like, shape (n_ref_P,)
        The reference's grid.
    reference : array_like, shape (n_ref, n_ref_P)
        The reference's curves, one per run, ``n_ref >= 2``.

    Returns
    -------
    OnsetComparison
    """
    if not isinstance(observables, dict) or not observables:
        raise TypeError("observables must be a non-empty dict of name -> (n_seeds, n_P) curves")
    curves = {str(k): _grid_and_curves(P, v, "observables")[1] for k, v in observables.items()}
    P = _grid_and_curves(P, next(iter(curves.values())), "observables")[0]
    if len({c.shape for c in curves.values()}) != 1 or next(iter(curves.values())).shape[0] < 2:
        raise ValueError("observables must all have the same shape (n_seeds, n_P) with n_seeds >= 2")
    P_ref, ref = _grid_and_curves(P_ref, reference, "reference")
    if ref.shape[0] < 2:
        raise ValueError("reference must have at least 2 runs (rows), for a standard error")
    return OnsetComparison(names=tuple(curves), onset=np.stack([half_way_point(P, c.T) for c in curves.values()]),
                           steepness=np.stack([steepness(P, c) for c in curves.values()]),
                           ref_onset=np.asarray(half_way_point(P_ref, ref.T)), ref_steepness=steepness(P_ref, ref),
                           grid_step=float(np.diff(np.log(P)).max()))


@dataclass(frozen=True)
class FormationSteps:
    """When each head forms in training time, in the runs above the transition.

    P : ``(n_above,)`` the sizes whose mean layer-1 copy weight is above the middle of its range;
    layer1, layer2, loss : ``(n_seeds, n_above)``, the first recorded Adam step at which layer 1's copy weight,
    layer 2's induction score and (falling) the training loss have made half of their change;
    record_interval : the largest gap between recorded steps.
    """

    P: np.ndarray
    layer1: np.ndarray
    layer2: np.ndarray
    loss: np.ndarray
    record_interval: float

    @property
    def lag(self) -> np.ndarray:
        """Layer 2's half-way step minus layer 1's, one per run, ``(n_seeds * n_above,)``."""
        return (self.layer2 - self.layer1).ravel()

    def table(self):
        """The mean, smallest and largest half-way step of each curve over the runs (a pandas ``DataFrame``)."""
        import pandas as pd

        rows = {"layer 1: copy weight": self.layer1, "layer 2: induction score": self.layer2,
                "training loss": self.loss}
        return pd.DataFrame([{"mean step": v.mean(), "earliest": int(v.min()), "latest": int(v.max())}
                             for v in rows.values()], index=pd.Index(list(rows), name="half-way point of"))


def formation_steps(sweep: InductionSweep) -> FormationSteps:
    """Half-way steps of the heads and of the loss in the runs of ``sweep`` above the transition.

    Parameters
    ----------
    sweep : InductionSweep
        From :func:`induction_sweep`; the runs above the transition are those at the ``P`` whose seed-mean
        layer-1 copy weight exceeds the middle of the range of all runs' final copy weights.

    Returns
    -------
    FormationSteps
    """
    if not isinstance(sweep, InductionSweep):
        raise TypeError(f"sweep must be an InductionSweep, got {type(sweep).__name__}")
    above = sweep.c1.mean(0) > 0.5 * (sweep.c1.max() + sweep.c1.min())
    if not above.any():
        raise ValueError("sweep has no P above the middle of its copy-weight range")

    def half_time(curve):
        u = (curve - curve[..., :1]) / (curve[..., -1:] - curve[..., :1])
        return sweep.steps[np.argmax(u >= 0.5, axis=-1)]

    return FormationSteps(P=sweep.P[above], layer1=half_time(sweep.c1_curve[:, above]),
                          layer2=half_time(sweep.score_curve[:, above]),
                          loss=half_time(-sweep.train_mse_curve[:, above]),
                          record_interval=float(np.diff(sweep.steps).max()))


@dataclass(frozen=True)
class TemperingMixing:
    """Whether replica exchange over the whole posterior mixes, per ``P``, from two or more starts.

    starts : the starts' names; P : ``(n_P,)``; rhat : ``(n_P,)`` split R-hat of the layer-1 copy weight
    over the chains of all starts; fewest_trips : ``(n_P,)`` the fewest round trips of a chain;
    mixed : ``(n_P,)`` ``rhat < rhat_max`` and ``fewest_trips >= min_trips``; swap_min : the lowest exchange
    rate at the smallest ``P`` (every pair of rungs, chain and start); swap_bottom : ``(2,)`` the mean rate
    of the lowest pair of rungs at the smallest and the largest ``P``; P_copy : the first ``P`` at which
    some chain's mean copy weight exceeds ``copy_level`` (``nan`` if none); c1, accuracy : ``(n_starts, n_P)``
    the means over chains and draws on the posterior rung.
    """

    starts: tuple
    P: np.ndarray
    rhat: np.ndarray
    fewest_trips: np.ndarray
    mixed: np.ndarray
    swap_min: float
    swap_bottom: np.ndarray
    P_copy: float
    c1: np.ndarray
    accuracy: np.ndarray

    def summary(self) -> dict:
        """The smallest and the largest ``P`` (``P_lo``, ``P_hi``) with their R-hat and fewest round trips
        (``rhat_lo``, ``trips_lo``, ``rhat_hi``, ``trips_hi``), the largest ``P`` that mixes (``P_mix``, 0 if
        none), ``swap_min``, ``swap_bottom_lo``, ``swap_bottom_hi`` and ``P_copy``: plain floats, the trips ints."""
        return {"P_lo": float(self.P[0]), "P_hi": float(self.P[-1]), "rhat_lo": float(self.rhat[0]),
                "rhat_hi": float(self.rhat[-1]), "trips_lo": int(self.fewest_trips[0]),
                "trips_hi": int(self.fewest_trips[-1]),
                "P_mix": float(self.P[self.mixed].max()) if self.mixed.any() else 0.0, "swap_min": float(self.swap_min),
                "swap_bottom_lo": float(self.swap_bottom[0]), "swap_bottom_hi": float(self.swap_bottom[1]),
                "P_copy": float(self.P_copy)}

    def table(self):
        """One row per ``P``: R-hat, fewest round trips, and each start's mean copy weight and accuracy
        (a pandas ``DataFrame``)."""
        import pandas as pd

        cols = {"R-hat": self.rhat, "fewest round trips": self.fewest_trips.astype(int)}
        for i, s in enumerate(self.starts):
            cols[f"c1, {s} start"], cols[f"accuracy, {s} start"] = self.c1[i], self.accuracy[i]
        return pd.DataFrame(cols, index=pd.Index(self.P.astype(int), name="P"))


def tempering_mixing(runs: dict, *, rhat_max: float = 1.1, min_trips: int = 3,
                     copy_level: float = 0.55) -> TemperingMixing:
    """Mixing diagnostics of replica-exchange runs started from different states on the same data.

    Parameters
    ----------
    runs : dict of str to InductionTempering
        At least two runs (e.g. from prior draws and from Adam's solution) on the same ``P`` grid.
    rhat_max : float > 1
        A ``P`` mixes when the split R-hat of the copy weight over all chains is below it ...
    min_trips : int >= 1
        ... and every chain's walkers make at least this many round trips.
    copy_level : float in (0, 1)
        A chain sits in the copying state when its mean copy weight exceeds it.

    Returns
    -------
    TemperingMixing
    """
    if not isinstance(runs, dict) or len(runs) < 2 or not all(isinstance(r, InductionTempering)
                                                              for r in runs.values()):
        raise TypeError("runs must be a dict of at least two InductionTempering results")
    rs = list(runs.values())
    if any(not np.array_equal(r.P, rs[0].P) for r in rs):
        raise ValueError("runs must share one P grid")
    rhat_max = check_positive("rhat_max", rhat_max)
    if not rhat_max > 1:
        raise ValueError(f"rhat_max must exceed 1, got {rhat_max}")
    min_trips = check_int("min_trips", min_trips, 1)
    copy_level = check_positive("copy_level", copy_level)
    if not copy_level < 1:
        raise ValueError(f"copy_level must lie in (0, 1), got {copy_level}")
    c1 = np.concatenate([r.c1 for r in rs], 1)  # (P, chains of all starts, draws)
    rhat = np.array([float(split_rhat(c)) for c in c1])
    trips = np.min([r.round_trips.min(1) for r in rs], 0)
    copying = (c1.mean(-1) > copy_level).any(1)
    P = rs[0].P
    return TemperingMixing(starts=tuple(runs), P=P, rhat=rhat, fewest_trips=trips,
                           mixed=(rhat < rhat_max) & (trips >= min_trips),
                           swap_min=min(float(r.swap_rate[:, 0].min()) for r in rs),
                           swap_bottom=np.array([np.mean([r.swap_rate[0, i].mean() for r in rs]) for i in (0, -1)]),
                           P_copy=float(P[np.argmax(copying)]) if copying.any() else float("nan"),
                           c1=np.stack([r.c1.mean((1, 2)) for r in rs]),
                           accuracy=np.stack([r.accuracy.mean((1, 2)) for r in rs]))


@dataclass(frozen=True)
class InductionSwitch:
    """Where the posterior moves its weight to the copying region, from the restricted ladders at one ``P``.

    P : the ladder's ``P``; P_eff : ``(n_grid,)`` ``beta P`` from the lowest non-zero rung to ``P`` (geometric);
    log_odds, copy_mass : ``(n_pairs, n_grid)`` per pair of chains (:meth:`InductionStates.log_odds`);
    P_sw, P25, P75 : ``(n_pairs,)`` where the copy mass first reaches 1/2, 1/4, 3/4 (``nan`` if never);
    edges : the bins of the copy weight's density; dip, dip_below : ``(n_pairs,)`` :func:`dip_ratio` at the
    mean ``P_sw`` and at half of it; odds_top : ``(n_pairs,)`` the log odds at ``P``; acc_gap :
    ``(n_pairs,)`` the held-out accuracy of the copying state minus the other's at ``P``.
    """

    P: float
    P_eff: np.ndarray
    log_odds: np.ndarray
    copy_mass: np.ndarray
    P_sw: np.ndarray
    P25: np.ndarray
    P75: np.ndarray
    edges: np.ndarray
    dip: np.ndarray
    dip_below: np.ndarray
    odds_top: np.ndarray
    acc_gap: np.ndarray

    @property
    def width(self) -> np.ndarray:
        """``P75 / P25`` per pair of chains: the window over which the weight moves."""
        return self.P75 / self.P25

    _LABELS = {"P_sw": "P_sw: copy mass 1/2", "P25": "P_25: copy mass 1/4", "P75": "P_75: copy mass 3/4",
               "width": "window P_75 / P_25", "dip": "dip ratio at P_sw", "dip_below": "dip ratio at P_sw / 2",
               "odds_top": "log odds at P", "acc_gap": "accuracy gain of the copying state at P"}

    def table(self):
        """:meth:`summary` as a pandas ``DataFrame``: one row per quantity (named in words), its mean over
        the pairs of chains and its standard error."""
        import pandas as pd

        s = self.summary()
        return pd.DataFrame({"mean over pairs of chains": [s[k] for k in self._LABELS],
                             "s.e.": [s[k + "_se"] for k in self._LABELS]},
                            index=pd.Index(list(self._LABELS.values()), name="quantity"))

    def summary(self) -> dict:
        """Means over the pairs of chains, and standard errors (``*_se``), as plain floats."""
        out = {}
        for name in ("P_sw", "P25", "P75", "width", "dip", "dip_below", "odds_top", "acc_gap"):
            v = getattr(self, name)
            out[name], out[name + "_se"] = float(v.mean()), float(_se(v))
        return out


def induction_switch(states: InductionStates, *, n_grid: int = 121, n_bins: int = 25) -> InductionSwitch:
    """The posterior's switch along ``beta P`` from :func:`sample_induction_states`, per pair of chains.

    Parameters
    ----------
    states : InductionStates
        The restricted ladders; their lowest non-zero rung sets the smallest ``beta P``.
    n_grid : int >= 2
        Points of the geometric ``beta P`` grid on which the crossings are interpolated (in ``ln P``).
    n_bins : int >= 2
        Bins of the copy weight on [0, 1] for the density and its dip at ``c_split``.

    Returns
    -------
    InductionSwitch
    """
    if not isinstance(states, InductionStates):
        raise TypeError(f"states must be an InductionStates, got {type(states).__name__}")
    n_grid, n_bins = check_int("n_grid", n_grid, 2), check_int("n_bins", n_bins, 2)
    P = float(states.P)
    P_eff = np.geomspace(P * states.betas[1], P, n_grid)
    log_odds = states.log_odds(P_eff / P)
    cross = {q: np.exp([interpolate_crossing(np.log(P_eff), lo - np.log(q / (1 - q))) for lo in log_odds])
             for q in (0.5, 0.25, 0.75)}  # per pair of chains: where Pr(C) first reaches q
    edges = np.linspace(0, 1, n_bins + 1)
    c_split, P_sw = float(states.c_split), float(np.mean(cross[0.5]))
    if np.isfinite(P_sw):
        dip = dip_ratio(states.c1_density(P_sw / P, edges), edges, c_split)
        dip_below = dip_ratio(states.c1_density(P_sw / 2 / P, edges), edges, c_split)  # control: one state
    else:  # some pair of chains never reaches 1/2: no switch to look at
        dip = dip_below = np.full(log_odds.shape[0], np.nan)
    return InductionSwitch(P=P, P_eff=P_eff, log_odds=log_odds, copy_mass=1 / (1 + np.exp(-log_odds)),
                           P_sw=cross[0.5], P25=cross[0.25], P75=cross[0.75], edges=edges, dip=dip,
                           dip_below=dip_below, odds_top=log_odds[:, -1],
                           acc_gap=states.accuracy[1].mean(-1) - states.accuracy[0].mean(-1))
