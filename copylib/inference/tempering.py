"""Replica exchange (parallel tempering) over a likelihood-temperature ladder, MALA within each replica.

The target is split into a likelihood term ``U_data(x)`` (``-ln`` likelihood) and a prior term
``U_prior(x)`` (``-ln`` prior); replica ``k`` of a ladder ``0 <= beta_1 < ... < beta_K = 1`` samples

    pi_k(x) ∝ exp(-beta_k U_data(x) - U_prior(x)),

so the prior keeps its full strength at every rung, ``beta = 0`` is the prior itself (which
pools, and mixes easily), and ``beta = 1`` is the posterior. Every ``swap_every`` MALA steps
neighbouring replicas ``(k, k+1)`` exchange their states with probability
``min(1, exp((beta_k - beta_{k+1}) (U_data,k - U_data,k+1)))`` (the priors cancel), alternately the
even and the odd pairs (the deterministic even-odd scheme, which moves states along the ladder
faster than random pair choices). A state can then leave a basin of the posterior by climbing to
small ``beta``, where the likelihood barrier is low, and come back.

``n_runs`` independent ladders (e.g. several chains at several sample sizes) go in one batch:
the state is a dict of float64 tensors ``(K * n_runs, ...)``, rung-major (row ``k * n_runs + r``
is rung ``k`` of run ``r``), and ``energy`` must not couple rows. The within-replica moves are
:class:`copylib.inference.proposals.MALA` with a per-row step size adapted in the warmup by
:class:`copylib.inference.adaptation.DualAveraging` and frozen afterwards, so the kept draws
come from a fixed, exact kernel. Random draws per step: the MALA normal ``(R, D)`` and uniform
``(R,)``; at a swap step one uniform ``(K - 1, n_runs)`` (all from one torch generator: the same
generator state gives the same numbers).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import torch

from ..arguments import as_real_array, check_generator, check_int, check_positive
from .adaptation import DualAveraging
from .proposals import MALA

__all__ = ["TemperingResult", "check_ladder", "parallel_tempering"]

_DTYPE = torch.float64


@dataclass(frozen=True)
class TemperingResult:
    """Outcome of :func:`parallel_tempering` (numpy arrays) for a ladder of ``K`` rungs and ``n_runs`` runs.

    samples : dict ``name -> (K, n_runs, n_kept, ...)``, the recorded statistics at the kept steps
    of every rung (the posterior is rung ``K - 1``); likelihood : ``(K, n_runs, n_kept)``, ``U_data`` at
    the kept steps; accept_rate : ``(K, n_runs)`` MALA acceptance after the warmup; swap_rate :
    ``(K - 1, n_runs)`` acceptance of the exchanges between rungs ``k`` and ``k + 1`` after the
    warmup; round_trips : ``(n_runs,)`` completed round trips (prior rung -> posterior rung -> prior
    rung, counted per walker and summed over the run's walkers) after the warmup; step_size :
    ``(K, n_runs)``; betas : ``(K,)``; final_params : dict ``name -> (K, n_runs, ...)``.
    """

    samples: dict
    likelihood: np.ndarray
    accept_rate: np.ndarray
    swap_rate: np.ndarray
    round_trips: np.ndarray
    step_size: np.ndarray
    betas: np.ndarray
    final_params: dict


def check_ladder(betas: npt.ArrayLike) -> np.ndarray:
    """The inverse temperatures as a float array ``(K,)``: strictly increasing in ``[0, 1]``, last one 1.

    Raises ValueError naming ``betas`` otherwise.
    """
    b = as_real_array("betas", betas)
    if b.ndim != 1 or b.size < 1:
        raise ValueError(f"betas must be a non-empty 1-d array, got shape {b.shape}")
    if not (np.isfinite(b).all() and (b >= 0).all() and (b <= 1).all()):
        raise ValueError("betas must lie in [0, 1]")
    if not (np.diff(b) > 0).all():
        raise ValueError("betas must be strictly increasing")
    if b[-1] != 1:
        raise ValueError(f"betas must end at 1 (the posterior), got {b[-1]}")
    return b.astype(np.float64)


def _flat_state(init, K):
    """``init`` dict of ``(n_runs, ...)`` -> names, shapes, flat ``(K * n_runs, D)`` (every rung starts there)."""
    if not isinstance(init, dict) or not init:
        raise TypeError("init must be a non-empty dict name -> array (n_runs, ...)")
    tensors = {str(k): torch.as_tensor(as_real_array(f"init[{k!r}]", v.detach().numpy() if isinstance(
        v, torch.Tensor) else v)) for k, v in init.items()}
    n_runs = {t.shape[0] if t.ndim else 0 for t in tensors.values()}
    if len(n_runs) != 1 or 0 in n_runs:
        raise ValueError("every init array must have the same leading run dimension n_runs >= 1")
    for k, t in tensors.items():
        if not torch.isfinite(t).all():
            raise ValueError(f"init[{k!r}] must contain only finite values")
    (n,) = n_runs
    flat = torch.cat([t.reshape(n, -1) for t in tensors.values()], 1).repeat(K, 1)
    return list(tensors), [tuple(t.shape[1:]) for t in tensors.values()], flat, n


def _unflatten(flat, names, shapes):
    sizes = [math.prod(s) for s in shapes]
    parts = torch.split(flat, sizes, dim=1)
    return {n: p.reshape((flat.shape[0],) + s) for n, p, s in zip(names, parts, shapes)}


class _Parts:
    """Likelihood and prior terms and their gradients at the current states, so that a swap moves
    them with the states (no re-evaluation) and the tempered energy of any rung is a combination."""

    def __init__(self, energy, names, shapes, beta_rows):
        self.energy, self.names, self.shapes, self.beta = energy, names, shapes, beta_rows
        self.last = None

    def evaluate_parts(self, flat):
        leaf = flat.detach().requires_grad_(True)
        with torch.enable_grad():
            V, U0 = self.energy(_unflatten(leaf, self.names, self.shapes))
            R = flat.shape[0]
            for what, t in (("likelihood term", V), ("prior term", U0)):
                if not isinstance(t, torch.Tensor) or tuple(t.shape) != (R,):
                    raise ValueError(f"energy must return two tensors of shape ({R},); its {what} is not")
            gV = torch.autograd.grad(V.sum(), leaf, retain_graph=True, allow_unused=True)[0]
            gU = torch.autograd.grad(U0.sum(), leaf, allow_unused=True)[0] if U0.requires_grad else None
        zero = torch.zeros_like(flat)
        return [V.detach(), U0.detach(), zero if gV is None else gV, zero if gU is None else gU]

    def evaluate(self, flat):
        """The MALA interface: tempered energy and gradient of every row (parts kept for :meth:`keep`)."""
        self.last = self.evaluate_parts(flat)
        return self.combine(self.last)

    def combine(self, parts):
        V, U0, gV, gU = parts
        return self.beta * V + U0, self.beta[:, None] * gV + gU

    def keep(self, parts, accept):
        return [torch.where(accept if p.ndim == 1 else accept[:, None], new, p) for p, new in zip(parts, self.last)]


def _swap(rows_k, rows_k1, tensors):
    """Exchange rows ``rows_k`` and ``rows_k1`` of every tensor in place."""
    for t in tensors:
        tmp = t[rows_k].clone()
        t[rows_k] = t[rows_k1]
        t[rows_k1] = tmp


def parallel_tempering(energy: Callable, init: dict, betas: npt.ArrayLike, n_steps: int, step_size: float,
                       generator: torch.Generator, *, n_warmup: int, thin: int = 1, swap_every: int = 1,
                       record: Callable | None = None, scales: dict | None = None,
                       target_accept: float = 0.57) -> TemperingResult:
    """Replica exchange over ``betas`` with MALA moves, for ``n_runs`` independent ladders at once.

    - energy : callable ``params -> (U_data (R,), U_prior (R,))``, the likelihood and prior terms of every row
      (``R = K * n_runs``, rung-major), differentiable by autograd; rows must not interact.
    - init : dict name -> array ``(n_runs, ...)``, the start of every run (all its rungs start there).
    - betas : strictly increasing in ``[0, 1]``, ending at 1 (:func:`check_ladder`).
    - n_steps : int >= 1, MALA steps after the warmup; n_warmup : int >= 0 (step sizes adapt, swaps run).
    - step_size : float > 0, the initial MALA step (scaled coordinates); generator : torch.Generator.
    - thin : int in ``[1, n_steps]``; swap_every : int >= 1, MALA steps between exchange attempts.
    - record : ``params -> dict name -> (R, ...)`` evaluated at kept steps (default: the parameters).
    - scales : dict name -> float > 0, per-group length scales (e.g. prior standard deviations).
    - target_accept : float in (0, 1), the MALA acceptance the warmup aims at.
    """
    b = check_ladder(betas)
    if not callable(energy):
        raise TypeError("energy must be callable")
    check_generator("generator", generator, "torch")
    n_steps, n_warmup = check_int("n_steps", n_steps, 1), check_int("n_warmup", n_warmup, 0)
    thin, swap_every = check_int("thin", thin, 1), check_int("swap_every", swap_every, 1)
    if thin > n_steps:
        raise ValueError(f"thin must be <= n_steps, got thin={thin}, n_steps={n_steps}")
    step_size = check_positive("step_size", step_size)
    target_accept = check_positive("target_accept", target_accept)
    if not target_accept < 1:
        raise ValueError(f"target_accept must lie in (0, 1), got {target_accept}")
    if record is not None and not callable(record):
        raise TypeError("record must be callable or None")
    K = b.size
    names, shapes, x, n = _flat_state(init, K)
    s = _expanded_scales(scales, names, shapes, x.shape[0])
    beta_rows = torch.as_tensor(b).repeat_interleave(n)
    parts_of = _Parts(energy, names, shapes, beta_rows)
    parts = parts_of.evaluate_parts(x)
    if not all(bool(torch.isfinite(p).all()) for p in parts):
        raise FloatingPointError("energy or gradient not finite at the initial state")
    E, grad = parts_of.combine(parts)
    mala = MALA(parts_of.evaluate, generator)
    h = torch.full((K * n,), float(step_size), dtype=_DTYPE)
    mala.set_kernel(h, s)
    adapt = DualAveraging(h, target_accept)
    walker = torch.arange(K * n)  # which walker sits in each row
    last_end = torch.full((K * n,), -1)  # per walker: last ladder end visited (0 prior, 1 posterior)
    trips = torch.zeros(n, dtype=torch.long)
    n_acc, n_swap_acc, n_swap_try = torch.zeros(K * n), torch.zeros(K - 1, n), torch.zeros(K - 1, n)
    rec = record or (lambda p: p)
    kept, kept_V = [], []
    n_swaps = 0
    for t in range(1, n_warmup + n_steps + 1):
        sampling = t > n_warmup
        where = f"at sampling step {t - n_warmup}" if sampling else f"at warmup step {t}"
        x, E, grad, accept, log_r = mala.step(x, E, grad, where)
        parts = parts_of.keep(parts, accept)
        if not sampling:
            h = adapt.update(log_r, last=t == n_warmup)
            mala.set_kernel(h, s)
        else:
            n_acc += accept
        if K > 1 and t % swap_every == 0:
            parity, n_swaps = n_swaps % 2, n_swaps + 1
            acc = _exchange(b, n, parity, x, parts, walker, generator)
            E, grad = parts_of.combine(parts)
            if sampling:
                n_swap_try[parity::2] += 1
                n_swap_acc += acc
                trips += _passages(walker, last_end, K, n)
        if sampling and (t - n_warmup) % thin == 0:
            with torch.no_grad():
                out = rec(_unflatten(x, names, shapes))
            kept.append({k: v.detach().clone() for k, v in out.items()})
            kept_V.append(parts[0].clone())
    return _result(kept, kept_V, K, n, n_acc / n_steps, n_swap_acc / n_swap_try.clamp(min=1), trips // 2, h, b,
                   _unflatten(x, names, shapes))


def _expanded_scales(scales, names, shapes, R):
    if scales is None:
        scales = {}
    if not isinstance(scales, dict):
        raise TypeError("scales must be None or a dict name -> float > 0")
    unknown = set(map(str, scales)) - set(names)
    if unknown:
        raise ValueError(f"scales has keys {sorted(unknown)} that are not parameters {names}")
    per = [check_positive(f"scales[{nm!r}]", scales.get(nm, 1.0)) for nm in names]
    entries = torch.cat([torch.full((math.prod(sh),), v, dtype=_DTYPE) for v, sh in zip(per, shapes)])
    return entries.expand(R, -1).clone()


def _exchange(b, n, parity, x, parts, walker, generator):
    """Try the exchanges of the pairs ``(k, k + 1)`` with ``k % 2 == parity`` in every run, in place.

    Returns the accepted exchanges as a float ``(K - 1, n)`` (zero for the pairs not tried)."""
    K = b.size
    u = torch.rand(K - 1, n, generator=generator, dtype=_DTYPE)
    V = parts[0].reshape(K, n)
    db = torch.as_tensor(np.diff(b))[:, None]  # beta_{k+1} - beta_k
    log_a = -db * (V[:-1] - V[1:])  # (beta_k - beta_{k+1}) (V_k - V_{k+1})
    acc = (torch.log(u) < log_a)
    acc[1 - parity::2] = False
    k_idx, r_idx = torch.nonzero(acc, as_tuple=True)
    rows_k, rows_k1 = k_idx * n + r_idx, (k_idx + 1) * n + r_idx
    _swap(rows_k, rows_k1, [x, *parts, walker])
    return acc.to(_DTYPE)


def _passages(walker, last_end, K, n):
    """Count, per run, the walkers that just reached the ladder end opposite to the one they last visited."""
    out = torch.zeros(n, dtype=torch.long)
    for end, rung in ((0, 0), (1, K - 1)):
        w = walker[rung * n:(rung + 1) * n]
        new = last_end[w] == 1 - end
        out += new.long()
        last_end[w] = end
    return out


def _result(kept, kept_V, K, n, accept, swap_rate, trips, h, b, final):
    def stack(seq):
        a = torch.stack(seq, 1).numpy()  # (R, n_kept, ...)
        return a.reshape((K, n) + a.shape[1:])
    samples = {k: stack([d[k] for d in kept]) for k in kept[0]}
    return TemperingResult(samples=samples, likelihood=stack(kept_V), accept_rate=accept.numpy().reshape(K, n),
                           swap_rate=swap_rate.numpy(), round_trips=trips.numpy(), step_size=h.numpy().reshape(K, n),
                           betas=b, final_params={k: v.numpy().reshape((K, n) + v.shape[1:]) for k, v in final.items()})
