"""Posterior samplers of the model M* (:mod:`copylib.model.network`): Langevin on a posterior target.

* :func:`sample_collapsed_posterior` -- MALA on the logits ``(g, b)`` with the
  readout integrated out (target :class:`copylib.posterior.targets.CollapsedPosterior`,
  energy :func:`copylib.posterior.evidence.effective_action`);
* :func:`sample_full_posterior` -- MALA on ``(g, b, W)`` (target
  :class:`copylib.posterior.targets.JointPosterior`, energy
  :func:`copylib.posterior.targets.map_objective`, the negative log joint posterior).

The attention (hence every order parameter) has the same law under both. Both run
:func:`copylib.inference.langevin.langevin` with the target's hand-written gradient,
start from the prior (or a given state), use the prior widths as length scales and
record order parameters by default; with ``cache=True`` a run goes through the
result cache (:mod:`copylib.cache`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt
import torch

from ..arguments import as_real_array, check_bool, check_generator, check_int
from ..cache import cached
from ..model.network import ModelSpec, attention, attention_logits, check_spec
from ..posterior.order_parameters import copy_weight, invariants, order_parameters
from ..posterior.targets import CollapsedPosterior, JointPosterior, PosteriorTarget
from .langevin import SamplingResult, langevin

__all__ = ["RECORDERS", "sample_collapsed_posterior", "sample_full_posterior"]

_DTYPE = torch.float64


def _initial_state(init, spec: ModelSpec, R: int, generator, names) -> dict:
    """``init`` -> dict of float64 tensors ``(R, ...)`` for the parameters ``names``."""
    L, V = spec.L, spec.V
    shapes = {"g": (L, L), "b": (), "W": (V, V)}
    widths = {"g": spec.sigma_G, "b": spec.sigma_b, "W": math.sqrt(spec.omega)}
    if isinstance(init, str):
        if init == "prior":
            return {n: widths[n] * torch.randn((R,) + shapes[n], generator=generator, dtype=_DTYPE)
                    for n in names}
        if init == "zeros":
            return {n: torch.zeros((R,) + shapes[n], dtype=_DTYPE) for n in names}
        raise ValueError(f"init must be 'prior', 'zeros' or a dict, got {init!r}")
    if not isinstance(init, dict):
        raise TypeError(f"init must be 'prior', 'zeros' or a dict, got {type(init).__name__}")
    if set(init) != set(names):
        raise ValueError(f"init must have exactly the keys {sorted(names)}, got {sorted(init)}")
    out = {}
    for n in names:
        v = init[n]
        t = v.detach().to(_DTYPE).clone() if isinstance(v, torch.Tensor) else torch.tensor(
            as_real_array(f"init[{n!r}]", v))
        if tuple(t.shape) == shapes[n]:
            t = t.expand((R,) + shapes[n]).clone()
        if tuple(t.shape) != (R,) + shapes[n]:
            raise ValueError(f"init[{n!r}] must have shape {(R,) + shapes[n]} or {shapes[n]}, got {tuple(t.shape)}")
        out[n] = t
    return out


def _order_record(spec: ModelSpec):
    """Default recorder: ``m, q, r2`` of the attention (see :func:`copylib.posterior.order_parameters.order_parameters`),
    ``b``, and the four invariants ``alpha_1, alpha_2, gamma_1, gamma_2`` (:func:`copylib.posterior.order_parameters.invariants`)."""

    def record(p):
        A = attention(attention_logits(p["g"], p["b"]), spec.kind, spec.causal)
        m, q, r2 = order_parameters(A)
        a1, a2, g1, g2 = invariants(A, spec.cyclic)
        return {"m": m, "q": q, "r2": r2, "b": p["b"], "alpha_1": a1, "alpha_2": a2, "gamma_1": g1, "gamma_2": g2}

    return record


def _attention_record(spec: ModelSpec, what: str):
    """Recorder of the attention matrix (``{"A": (R, L, L)}``) or of its copy weight (``{"c": (R,)}``)."""
    def record(p):
        A = attention(attention_logits(p["g"], p["b"]), spec.kind, spec.causal)
        return {"A": A} if what == "attention" else {"c": copy_weight(A)}

    return record


RECORDERS = ("order", "all", "attention", "copy_weight")


def _posterior_record(record, spec, names):
    if isinstance(record, str):
        if record == "order":
            return _order_record(spec)
        if record == "all":
            return None
        if record in ("attention", "copy_weight"):
            return _attention_record(spec, record)
        raise ValueError(f"record must be one of {RECORDERS} or a callable, got {record!r}")
    if record is None:
        return None
    if not callable(record):
        raise TypeError(f"record must be one of {RECORDERS}, None or a callable")
    return record


def _run_cached(cache, name: str, params: dict, generator: torch.Generator, run) -> SamplingResult:
    """``run()`` (a posterior sampler call), through the result cache if ``cache``.

    The key holds ``params`` and the generator's full state before the run; the
    cache also keeps the state after it, and a hit sets the generator to that
    state, so a cached call consumes the generator exactly as sampling does.
    """
    check_bool("cache", cache)
    if not cache:
        return run()
    if callable(params["record"]):
        raise ValueError(f"record must be one of {RECORDERS} (or None) with cache=True: a function cannot be "
                         "part of a cache key")

    def compute():
        res = run()
        out = {"energy": res.energy, "accept_rate": res.accept_rate, "step_size": res.step_size,
               "metropolis": res.metropolis, "n_warmup": res.n_warmup, "thin": res.thin,
               "generator_state": generator.get_state().numpy().copy()}
        if res.line_accept_rate is not None:
            out["line_accept_rate"] = res.line_accept_rate
        for group in ("samples", "final_params", "scales"):
            out.update({f"{group}/{k}": v for k, v in getattr(res, group).items()})
        return out

    arrays = cached(compute, dict(params, generator_state=generator.get_state().numpy()), name=name)
    generator.set_state(torch.from_numpy(np.array(arrays["generator_state"], dtype=np.uint8)))

    def group(prefix):
        return {k[len(prefix) + 1:]: v for k, v in arrays.items() if k.startswith(prefix + "/")}

    return SamplingResult(samples=group("samples"), energy=arrays["energy"], accept_rate=arrays["accept_rate"],
                          step_size=arrays["step_size"], final_params=group("final_params"),
                          scales=group("scales"), metropolis=bool(arrays["metropolis"]),
                          n_warmup=int(arrays["n_warmup"]), thin=int(arrays["thin"]),
                          line_accept_rate=arrays.get("line_accept_rate"))


def _default_scales(spec: ModelSpec, names, scales):
    out = {"g": spec.sigma_G, "b": spec.sigma_b, "W": math.sqrt(spec.omega)}
    out = {n: out[n] for n in names}
    if scales is not None:
        if not isinstance(scales, dict):
            raise TypeError("scales must be None or a dict name -> float")
        unknown = set(scales) - set(names)
        if unknown:
            raise ValueError(f"scales has keys {sorted(unknown)} that are not parameters {list(names)}")
        out.update(scales)
    return out


def _sample(target_class: type[PosteriorTarget], name: str, C, spec, n_chains, n_steps, generator, *, n_warmup,
            init="prior", step_size=0.1, thin=1, metropolis=True, target_accept=0.57, scales=None, record="order",
            cache=False, **kwargs) -> SamplingResult:
    """Langevin on ``target_class(C, spec, n_chains)`` from ``init``, through the cache if ``cache`` (``name``
    keys it). The one signature of both public samplers: the arguments are checked here, once."""
    spec = check_spec(spec)
    R = check_int("n_chains", n_chains, 1)
    check_generator("generator", generator, "torch")
    target = target_class(C, spec, R)
    names = target.names
    recorder = _posterior_record(record, spec, names)

    def run():
        x0 = _initial_state(init, spec, R, generator, names)
        return langevin(
            target.energy, x0, n_steps, step_size, generator, n_warmup=n_warmup, thin=thin, metropolis=metropolis,
            target_accept=target_accept, record=recorder,
            scales=_default_scales(spec, names, scales), energy_grad=target.energy_and_grad, **kwargs,
        )

    params = dict(C=target.C.numpy(), spec=spec, n_chains=R, n_steps=n_steps, n_warmup=n_warmup, init=init,
                  step_size=step_size, thin=thin, metropolis=metropolis, target_accept=target_accept, scales=scales,
                  record=record, kwargs=kwargs)
    return _run_cached(cache, name, params, generator, run)


def sample_collapsed_posterior(C: npt.ArrayLike | torch.Tensor, spec: ModelSpec, n_chains: int, n_steps: int,
                               generator: torch.Generator, **options: Any) -> SamplingResult:
    """Langevin (default MALA) on the logits ``(g, b)`` with the readout integrated out.

    The energy is :func:`copylib.posterior.evidence.effective_action` ``(g, b, C, spec)``:
    the exact negative log posterior of the logits, ``-ln p(Y | A(g, b)) +
    |g|^2 / (2 sigma_G^2) + b^2 / (2 sigma_b^2)``.

    For softmax attention ``b`` does not enter ``A``; it is still sampled (it
    decouples, its marginal is the prior ``N(0, sigma_b^2)``), so that both kinds
    share one interface. The row means of ``g`` likewise feel only the prior.

    Parameters
    ----------
    C : array ``(L, L, V, V)`` or ``(n_chains, L, L, V, V)``
        Co-occurrence tensor (:func:`copylib.cooccurrence <copylib.model.statistics.cooccurrence>`):
        one data set shared by all chains, or one per chain (e.g. a sweep over ``P``).
    spec : ModelSpec
    n_chains : int >= 1
    n_steps : int >= 1
        Sampling steps after the warmup.
    generator : torch.Generator
        Source of the initial state (``init="prior"``) and of every sampler draw.
    n_warmup : int >= 0
    init : "prior", "zeros" or dict
        ``"prior"``: ``g, b`` drawn from their priors; ``"zeros"``; or a dict
        ``{"g": (R, L, L) or (L, L), "b": (R,) or ()}`` (e.g. ``final_params`` of
        an earlier run, for continuation or hysteresis).
    step_size : float or ``(R,)``
        Initial step (in units of the scales; adapted during the warmup for MALA).
    thin, metropolis, target_accept : see :func:`copylib.inference.langevin.langevin`
    scales : dict, optional
        Per-group length scales; default ``{"g": sigma_G, "b": sigma_b}``, entries
        given here override the defaults.
    record : "order", "all"/None, "attention", "copy_weight", or callable
        ``"order"`` (default): ``m, q, r2`` of the attention matrix
        (:func:`copylib.posterior.order_parameters.order_parameters`), ``b`` and the four
        invariants ``alpha_1, alpha_2, gamma_1, gamma_2``
        (:func:`copylib.posterior.order_parameters.invariants`), each ``(R, n_kept)``; ``"all"``: ``g`` and ``b``; ``"attention"``: ``A``
        ``(R, n_kept, L, L)``; ``"copy_weight"``: ``c`` of ``A``
        (:func:`copylib.posterior.order_parameters.copy_weight`); or ``record(params)`` with
        ``params = {"g", "b"}``.
    cache : bool
        Keep the result in the result cache (:mod:`copylib.cache`), keyed on every
        argument, the generator's state and copylib's source (``record`` must then
        be a name, not a function). A hit sets the generator to the state the
        run would have left it in.
    **kwargs
        Passed to :func:`copylib.inference.langevin.langevin` (``adapt_scales``, ``min_accept``, ``max_rejections``,
        ``n_leapfrog``: more than one leapfrog step per proposal samples by HMC instead of MALA).

    Returns
    -------
    SamplingResult (``final_params = {"g": (R, L, L), "b": (R,)}``)
    """
    return _sample(CollapsedPosterior, "sample_collapsed_posterior", C, spec, n_chains, n_steps, generator,
                   **options)


def sample_full_posterior(C: npt.ArrayLike | torch.Tensor, spec: ModelSpec, n_chains: int, n_steps: int,
                          generator: torch.Generator, **options: Any) -> SamplingResult:
    """Langevin (default MALA) on the whole network ``(g, b, W)``.

    The energy is :func:`copylib.posterior.targets.map_objective`, the negative log joint
    posterior ``SSE / (2 sigma^2) + |g|^2/(2 sigma_G^2) + b^2/(2 sigma_b^2) +
    |W|^2/(2 omega)``. Its marginal over ``(g, b)`` is the collapsed posterior
    of :func:`sample_collapsed_posterior`: every function of the attention has
    the same law under both samplers (in the limit of long chains).

    Arguments as :func:`sample_collapsed_posterior`, with the extra parameter
    ``W (R, V, V)``: ``init`` dicts have keys ``g, b, W``, the default scales are
    ``{"g": sigma_G, "b": sigma_b, "W": sqrt(omega)}``, ``record="all"`` records
    ``g, b, W`` and a callable ``record`` receives ``{"g", "b", "W"}``; ``cache`` likewise.

    For linear attention the posterior is invariant under ``(g, b, W) -> (-g,
    -b, -W)``; the two signs are separated by a barrier once the data pin ``W``
    down, so measure sign-invariant quantities (``|m|``, ``m^2``, ``q m``).
    """
    return _sample(JointPosterior, "sample_full_posterior", C, spec, n_chains, n_steps, generator, **options)
