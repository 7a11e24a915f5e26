"""The induction chapter's experiments: Adam across sample sizes and seeds, and posterior sampling.

* :func:`induction_sweep` -- MAP training (Adam) of the two-layer network of
  :mod:`copylib.model.induction` for every pair (seed, ``P``), all runs in one batch;
  the data sets of one seed are nested, so ``P`` is the only thing that changes along a row;
* ``_sample_induction_posterior`` -- MALA on the full posterior ``exp(-U(g, K, W))``
  (:func:`copylib.inference.langevin.langevin`), chains at several ``P`` at once;
* :func:`sample_induction_tempering` -- replica exchange over a likelihood-temperature ladder with
  MALA moves (:func:`copylib.inference.tempering.parallel_tempering`), which crosses between the
  copying and the non-copying basins that plain MALA chains do not leave;
* :func:`sample_induction_states` -- the same ladder run separately inside the copying and the
  non-copying region of ``c^(1)``, whose free energies (MBAR, :mod:`copylib.inference.free_energy`)
  give the posterior mass of each state at every ``beta`` without any chain crossing between them;
* :func:`map_from_states` -- Adam started from the restricted ladders' last posterior draws (and from small
  random starts) on the same data: does the MAP keep the state it starts in?

What the chapter reads off these runs: onsets, steepness and formation steps in
:mod:`copylib.analysis.induction_onsets`; mixing of the ladders and the posterior's switch in
:mod:`copylib.analysis.induction_switch`.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
import torch

from ..arguments import (
    as_real_array,
    check_bool,
    check_finite,
    check_generator,
    check_grid,
    check_instance,
    check_int,
    check_int_array,
    check_positive,
)
from ..cache import cached
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
    previous_occurrence,
    sequence_errors,
)
from ..model.network import attention
from ..model.task import one_hot

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["InductionSweep", "induction_sweep",
           "InductionTempering", "sample_induction_tempering", "InductionStates", "sample_induction_states",
           "MapFromStates", "map_from_states"]


@dataclass
class InductionSweep:
    """Adam runs of the two-layer network, one per seed and sample size (numpy arrays).

    P : ``(n_P,)``; steps : ``(n_rec,)`` the recorded steps. Final values, ``(n_seeds, n_P)``:
    c1 (layer-1 copy weight), score (layer-2 attention mass on the induction keys, held-out data),
    accuracy (held-out induction accuracy), test_mse (held-out squared error per masked position),
    objective (``U`` at the end). Curves ``(n_seeds, n_P, n_rec)``: c1_curve, score_curve,
    train_mse_curve. Parameters: g ``(n_seeds, n_P, L, L)``, K, W ``(n_seeds, n_P, V, V)``.
    kept_start ``(n_seeds, n_P)``: the index of the start (into the sweep's ``init_scale``) whose run was kept.
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
    kept_start: np.ndarray


def _result(compute, params, name, cache, kind):
    """``kind`` from ``compute()``, through the result cache (keyed by ``name`` and ``params``) if ``cache``."""
    out = cached(compute, params, name=name) if cache else compute()
    return kind(**{f.name: np.asarray(out[f.name]) for f in dataclasses.fields(kind)})


def _check_spec(spec) -> InductionSpec:
    check_instance("spec", spec, InductionSpec)
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


def _sweep(P, spec, datasets, test, generator, n_steps, lr, lr_final, init_scale, n_records, init=None,
           counts=None):
    """``init``: None (random starts of scale ``init_scale``) or the start ``[g, K, W]``, each ``(S, n_P, ...)``.
    ``counts``: None (nested data: run ``i`` sees the first ``P[i]`` sequences) or ``(n_P, n)`` the number of times
    run ``i`` sees each sequence (distinct sequences with their counts: exact, and cheaper)."""
    n_seeds, n_P, L, V = len(datasets), P.size, spec.L, spec.V
    X, Y, mask = _stacked_data(datasets)
    weight = _padded(P) if counts is None else torch.as_tensor(counts, dtype=torch.float64)
    weight = weight.expand(n_seeds, -1, -1)  # (S, n_P, n): how often run (s, i) sees each sequence
    n_masked = (mask.sum(-1)[:, None] * weight).sum(-1)  # (S, n_P)
    if init is None:
        params = [init_scale * torch.randn(n_seeds, n_P, *shape, generator=generator, dtype=torch.float64)
                  for shape in ((L, L), (V, V), (V, V))]
    else:
        params = [torch.as_tensor(a, dtype=torch.float64).clone() for a in init]
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


def _keep_lowest(out, n_starts, n_seeds):
    """Of ``n_starts`` runs per (seed, P) (start-major along the seed axis), keep the lowest objective."""
    kept = out["objective"].reshape(n_starts, n_seeds, -1).argmin(0)  # (n_seeds, n_P)
    seed_idx, P_idx = np.indices(kept.shape)
    picked = {k: v.reshape(n_starts, n_seeds, *v.shape[1:])[kept, seed_idx, P_idx] for k, v in out.items()
              if k not in ("P", "steps")}
    return {**out, **picked, "kept_start": kept}


def _check_init_scales(init_scale) -> tuple[float, ...]:
    scales = check_grid("init_scale", np.atleast_1d(as_real_array("init_scale", init_scale)), positive=True)
    return tuple(float(x) for x in scales)


def induction_sweep(P_values: npt.ArrayLike, spec: InductionSpec, rng: np.random.Generator, *, n_seeds: int = 4,
                    n_steps: int = 600, lr: float = 0.05, lr_final: float = 0.005,
                    init_scale: float | npt.ArrayLike = 0.1, n_test: int = 256, n_records: int = 16,
                    cache: bool = False) -> InductionSweep:
    """Adam (full batch) on the MAP objective ``U`` for every seed and every ``P``, all runs batched.

    P_values : strictly increasing integers >= 1. Seed ``s`` draws one data set of ``max(P)``
    sequences from ``rng``; the run at ``P`` trains on its first ``P`` (nested data), from its own
    random start (entries ``N(0, init_scale^2)`` for ``g``, ``K``, ``W``, drawn from a torch generator
    seeded by ``rng``). The held-out set (``n_test`` sequences, also from ``rng``) is shared.
    The learning rate decays geometrically from ``lr`` to ``lr_final``; ``n_records`` evenly spaced
    steps are recorded. ``init_scale`` may be a sequence of scales: then every (seed, ``P``) is trained
    from one start per scale (restarts; all runs batched) and the run with the lowest final ``U`` is kept.
    ``cache=True`` keeps the result in the result cache (:mod:`copylib.cache`).
    """
    P = check_int_array("P_values", P_values, 1, increasing=True)
    spec = _check_spec(spec)
    check_generator("rng", rng)
    n_seeds, n_steps = check_int("n_seeds", n_seeds, 1), check_int("n_steps", n_steps, 1)
    n_test, n_records = check_int("n_test", n_test, 1), check_int("n_records", n_records, 2)
    lr, lr_final = check_positive("lr", lr), check_positive("lr_final", lr_final)
    scales = _check_init_scales(init_scale)
    check_bool("cache", cache)
    datasets = [induction_task(int(P[-1]), spec.L, spec.V, rng) for _ in range(n_seeds)]
    test = induction_task(n_test, spec.L, spec.V, rng)
    seed = int(rng.integers(2**62))

    def compute():
        # the starts are stacked start-major along the seed axis; each row draws its own random start
        init = torch.repeat_interleave(torch.tensor(scales, dtype=torch.float64), n_seeds)[:, None, None, None]
        out = _sweep(P, spec, datasets * len(scales), test, torch.Generator().manual_seed(seed), n_steps, lr,
                     lr_final, init, n_records)
        return _keep_lowest(out, len(scales), n_seeds)

    params = {"P": P, "spec": dataclasses.asdict(spec), "tokens": np.stack([d.tokens for d in datasets]),
              "test": test.tokens, "seed": seed, "n_steps": n_steps, "lr": lr, "lr_final": lr_final,
              "init_scale": scales[0] if len(scales) == 1 else list(scales), "n_records": n_records}
    return _result(compute, params, "induction_sweep", cache, InductionSweep)


@dataclass
class _InductionSampling:
    """MALA chains of the two-layer posterior: ``P (n_P,)``; per chain ``(n_P, n_chains, n_kept)``
    draws of the layer-1 copy weight ``c1`` and of the layer-2 induction score ``score`` (on the
    chain's training data); ``accept_rate (n_P, n_chains)``."""

    P: np.ndarray
    c1: np.ndarray
    score: np.ndarray
    accept_rate: np.ndarray


def _sample_induction_posterior(P_values: npt.ArrayLike, spec: InductionSpec, rng: np.random.Generator, *,
                               n_chains: int = 4, n_steps: int = 1000, n_warmup: int = 500, thin: int = 10,
                               init: dict | None = None, cache: bool = False) -> _InductionSampling:
    """MALA on ``exp(-U(g, K, W))`` at every ``P`` (nested data from one draw of ``rng``).

    Chains start from prior draws, or with ``init`` (``{"g": (n_P, L, L), "K": (n_P, V, V),
    "W": (n_P, V, V)}``, e.g. Adam's solutions) every chain at ``P[i]`` starts from entry ``i``.
    Step sizes adapt in the warmup (per chain), length scales are the prior standard deviations.
    Records ``c1`` and the induction score on the training data.
    """
    P = check_int_array("P_values", P_values, 1, increasing=True)
    spec = _check_spec(spec)
    check_generator("rng", rng)
    n_chains = check_int("n_chains", n_chains, 1)
    n_steps, n_warmup, thin = check_int("n_steps", n_steps, 1), check_int("n_warmup", n_warmup, 0), \
        check_int("thin", thin, 1)
    check_bool("cache", cache)
    if init is not None:
        init = _check_init(init, P.size, spec)
    data = induction_task(int(P[-1]), spec.L, spec.V, rng)
    seed = int(rng.integers(2**62))

    def compute():
        return _sample(P, spec, data, torch.Generator().manual_seed(seed), n_chains, n_steps, n_warmup, thin, init)

    params = {"P": P, "spec": dataclasses.asdict(spec), "tokens": data.tokens, "seed": seed, "init": init,
              "n_chains": n_chains, "n_steps": n_steps, "n_warmup": n_warmup, "thin": thin}
    return _result(compute, params, "induction_posterior", cache, _InductionSampling)


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


def _chain_starts(init, spec, n_runs, n_chains, generator):
    """The prior scales of ``g, K, W`` and the chains' starts: prior draws, or ``init`` (one state per P)
    repeated for each of the ``n_chains`` chains."""
    L, V = spec.L, spec.V
    sd = {"g": spec.sigma_G, "K": spec.sigma_K, "W": spec.omega ** 0.5}
    if init is None:
        return sd, {name: sd[name] * torch.randn(n_runs, *shape, generator=generator, dtype=torch.float64)
                    for name, shape in (("g", (L, L)), ("K", (V, V)), ("W", (V, V)))}
    return sd, {name: torch.as_tensor(a).repeat_interleave(n_chains, 0) for name, a in init.items()}


def _sample(P, spec, data, generator, n_chains, n_steps, n_warmup, thin, init):
    n_P = P.size
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

    sd, init = _chain_starts(init, spec, R, n_chains, generator)
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


def sample_induction_tempering(P_values: npt.ArrayLike, spec: InductionSpec, rng: np.random.Generator, *,
                               betas: npt.ArrayLike, n_chains: int = 4, n_steps: int = 1000, n_warmup: int = 500,
                               thin: int = 10, swap_every: int = 1, init: dict | None = None, n_test: int = 256,
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
    P = check_int_array("P_values", P_values, 1, increasing=True)
    spec = _check_spec(spec)
    check_generator("rng", rng)
    b = check_ladder(betas)
    n_chains, n_steps = check_int("n_chains", n_chains, 1), check_int("n_steps", n_steps, 1)
    n_warmup, thin = check_int("n_warmup", n_warmup, 0), check_int("thin", thin, 1)
    swap_every, n_test = check_int("swap_every", swap_every, 1), check_int("n_test", n_test, 1)
    check_bool("cache", cache)
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
    n_P, K = P.size, betas.size
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
    sd, start = _chain_starts(init, spec, n_runs, n_chains, generator)
    res = parallel_tempering(energy, start, betas, n_steps, 0.01, generator, n_warmup=n_warmup, thin=thin,
                             swap_every=swap_every, record=record, scales=sd)
    shape = (n_P, n_chains)
    out = {name: res.samples[name][-1].reshape(shape + (-1,)) for name in ("c1", "score", "accuracy")}
    out.update(P=P, betas=betas, accept_rate=res.accept_rate.reshape((K,) + shape),
               swap_rate=res.swap_rate.reshape((K - 1,) + shape), round_trips=res.round_trips.reshape(shape))
    if region is not None:  # every rung's draws, for the free energies, and where the posterior rung ended
        out.update(rung_c1=res.samples["c1"].reshape((K,) + shape + (-1,)),
                   rung_u_data=res.likelihood.reshape((K,) + shape + (-1,)),
                   **{f"final_{n}": a[-1].reshape(shape + a.shape[2:]) for n, a in res.final_params.items()})
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
    posterior rung; accept_rate ``(2, K, n_chains)``, swap_rate ``(2, K - 1, n_chains)``. The last state of every
    chain on the posterior rung: g ``(2, n_chains, L, L)``, K, W ``(2, n_chains, V, V)``. The data: tokens
    ``(P, L)`` (training) and test_tokens ``(n_test, L)`` (held out).

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
    g: np.ndarray
    K: np.ndarray
    W: np.ndarray
    tokens: np.ndarray
    test_tokens: np.ndarray

    @functools.cached_property
    def ladder_fits(self) -> list[list[LadderFit]]:
        """MBAR solved once per region and chain, ``[[LadderFit] * n_chains] * 2`` (region 0, then 1):
        free energies and reweighting along the ladder (:class:`copylib.inference.free_energy.LadderFit`)."""
        return [[LadderFit(self.u_data[r, :, i], self.betas) for i in range(self.u_data.shape[2])] for r in (0, 1)]

    def log_odds(self, at: npt.ArrayLike) -> np.ndarray:
        """``ln`` (posterior mass of the copying region / of the other) at the inverse temperatures ``at``,
        one row per pair of chains (chain ``i`` of each region), ``(n_chains, len(at))``."""
        log_z = [np.array([fit.log_partition(at) for fit in fits]) for fits in self.ladder_fits]
        log_prior = np.log(self.prior_mass) - np.log1p(-self.prior_mass)  # the rung beta = 0 is the prior
        return log_prior + log_z[1] - log_z[0]

    def copy_mass(self, at: npt.ArrayLike) -> np.ndarray:
        """Posterior mass of the copying region at ``at``, ``(n_chains, len(at))`` (see :meth:`log_odds`)."""
        return 1 / (1 + np.exp(-self.log_odds(at)))

    def c1_density(self, beta: float, edges: npt.ArrayLike) -> np.ndarray:
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


def sample_induction_states(P: int, spec: InductionSpec, rng: np.random.Generator, *, betas: npt.ArrayLike,
                            c_split: float, n_chains: int = 4, n_steps: int = 1000, n_warmup: int = 500, thin: int = 5,
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
    check_bool("cache", cache)
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
            "swap_rate": np.stack([r["swap_rate"][..., 0] for r in runs]),
            **{n: np.stack([r[f"final_{n}"][:, 0] for r in runs]) for n in ("g", "K", "W")},
            "tokens": data.tokens, "test_tokens": test.tokens}


def _data_from_tokens(tokens: np.ndarray, V: int) -> InductionData:
    """The induction data of given sequences (the same construction as ``induction_task``)."""
    prev = previous_occurrence(tokens)
    mask = prev >= 0
    target = np.take_along_axis(tokens, np.where(mask, prev + 1, 0), axis=1)
    return InductionData(tokens=tokens, X=one_hot(tokens, V), Y=one_hot(target, V) * mask[..., None], mask=mask)


@dataclass(frozen=True)
class MapFromStates:
    """Adam runs on the data of restricted ladders, from their last posterior draws and from small random starts.

    starts : the names of the three kinds of start (non-copying draws, copying draws, small random); per kind
    and run, ``(3, n_chains)``: c1_start, c1 (layer-1 copy weight before and after Adam), objective (``U``
    after Adam), accuracy (held-out induction accuracy after Adam); c_split : the regions' border.
    """

    starts: tuple
    c1_start: np.ndarray
    c1: np.ndarray
    objective: np.ndarray
    accuracy: np.ndarray
    c_split: float

    def table(self) -> pd.DataFrame:
        """Per kind of start: the mean copy weight before and after Adam, the share of runs that end above
        ``c_split``, and the mean ``U`` and held-out accuracy after Adam (a pandas ``DataFrame``)."""
        import pandas as pd

        return pd.DataFrame({"c1 at the start": self.c1_start.mean(1), "c1 after Adam": self.c1.mean(1),
                             "share ending copying": (self.c1 > self.c_split).mean(1),
                             "U after Adam": self.objective.mean(1), "accuracy after Adam": self.accuracy.mean(1)},
                            index=pd.Index(list(self.starts), name="start"))


def map_from_states(states: InductionStates, spec: InductionSpec, *, n_steps: int = 300, lr: float = 0.05,
                    lr_final: float = 0.005, init_scale: float = 0.1, seed: int = 0) -> MapFromStates:
    """Adam (full batch, as :func:`induction_sweep`) on the ladders' data, from the last posterior draw of every
    chain of each region and from as many small random starts (entries ``N(0, init_scale^2)``, torch seed ``seed``).

    Parameters
    ----------
    states : InductionStates
        From :func:`sample_induction_states`; its data and its chains' last states on the posterior rung.
    spec : InductionSpec
        The spec the ladders ran with (``L``, ``V`` must match the states).
    n_steps, lr, lr_final, init_scale :
        As in :func:`induction_sweep`.
    seed : int >= 0
        Seed of the torch generator of the random starts.

    Returns
    -------
    MapFromStates
    """
    check_instance("states", states, InductionStates)
    spec = _check_spec(spec)
    if states.g.shape[-1] != spec.L or states.K.shape[-1] != spec.V:
        raise ValueError(f"spec must have the states' sizes L = {states.g.shape[-1]}, V = {states.K.shape[-1]}")
    n_steps = check_int("n_steps", n_steps, 1)
    lr, lr_final = check_positive("lr", lr), check_positive("lr_final", lr_final)
    init_scale, seed = check_positive("init_scale", init_scale), check_int("seed", seed, 0)
    data, test = _data_from_tokens(states.tokens, spec.V), _data_from_tokens(states.test_tokens, spec.V)
    P = np.array([data.tokens.shape[0]])
    distinct, counts = _distinct_counts(data, P)
    n = states.g.shape[1]
    gen = torch.Generator().manual_seed(seed)
    random = [init_scale * torch.randn(n, *a.shape[2:], generator=gen, dtype=torch.float64)
              for a in (states.g, states.K, states.W)]
    init = [torch.cat([torch.as_tensor(a.reshape(2 * n, *a.shape[2:])), r])[:, None] for a, r in
            zip((states.g, states.K, states.W), random)]  # (3 n, 1, ...): region 0, region 1, random
    out = _sweep(P, spec, [distinct] * (3 * n), test, gen, n_steps, lr, lr_final, init_scale, 2, init=init,
                 counts=counts)
    c1_start = layer1_copy_weight(attention(init[0][:, 0], "softmax", causal=True)).numpy()
    return MapFromStates(starts=("non-copying draws", "copying draws", "small random"),
                         c1_start=c1_start.reshape(3, n), c1=out["c1"].reshape(3, n),
                         objective=out["objective"].reshape(3, n), accuracy=out["accuracy"].reshape(3, n),
                         c_split=float(states.c_split))
