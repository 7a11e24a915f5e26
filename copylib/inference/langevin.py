"""Batched Langevin sampling of posteriors.

The sampler draws from ``p(x) ∝ exp(-U(x))`` for ``R`` independent chains at
once. The state ``x`` is a dict (or tuple) of float64 tensors whose first
dimension is the chain index ``R``; the energy ``U`` returns one value per
chain, shape ``(R,)``, and must not couple chains (the gradient of
``U.sum()`` is then the per-chain gradient). All chains advance in the same
tensor operations, so ``R`` chains cost little more than one when a single
chain is dominated by Python/torch overhead.

One step, with step size ``h`` (per chain) and per-group length scales
``s_k`` (a diagonal preconditioner, constant within a parameter group)::

    x' = x - (h/2) s^2 grad U(x) + sqrt(h) s xi,        xi ~ N(0, I).

* ``metropolis=True`` (MALA, Metropolis-adjusted Langevin): ``x'`` is accepted
  with probability ``min(1, exp(-U(x') + U(x)) q(x | x') / q(x' | x))``, so
  ``exp(-U)`` is the exact stationary law. During the warmup each chain adapts
  its own ``h`` by dual averaging (Hoffman & Gelman 2014, Alg. 5) towards the
  acceptance rate ``target_accept`` (0.574 is optimal for MALA in high
  dimension); after the warmup ``h`` is frozen (to the dual-averaging mean), so
  the kept draws come from a fixed, exact Markov kernel.
* ``metropolis=False`` (ULA, the unadjusted Langevin algorithm = SGLD with the
  full gradient): every ``x'`` is kept, ``h`` is fixed. Its stationary law is
  biased by ``O(h)``; for a Gaussian target with precision ``lambda`` (in the
  scaled coordinates) the variance is ``1 / (lambda (1 - h lambda / 4))``.

Posterior samplers of the model M* (:mod:`copylib.model.network`):

* :func:`sample_collapsed_posterior` -- MALA on the logits ``(g, b)`` with the
  readout integrated out (energy :func:`copylib.posterior.evidence.effective_action`);
* :func:`sample_full_posterior` -- MALA on ``(g, b, W)`` (energy
  :func:`copylib.inference.map_training.map_objective`, the negative log joint posterior).

The attention (hence every order parameter) has the same law under both.

Convergence diagnostics of the draws (ArviZ) are in :mod:`copylib.inference.diagnostics`.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch

from ..arguments import as_real_array, check_generator, check_int, check_positive
from ..model.network import ModelSpec, check_spec, attention, attention_logits

__all__ = [
    "SamplingResult",
    "langevin",
    "sample_collapsed_posterior",
    "sample_full_posterior",
]

_DTYPE = torch.float64

# dual averaging constants (Hoffman & Gelman 2014, section 3.2)
_DA_GAMMA = 0.05
_DA_T0 = 10.0
_DA_KAPPA = 0.75
# the end-of-run acceptance check needs enough steps not to fail a healthy chain by chance
_MIN_STEPS_ACCEPT_CHECK = 100


@dataclass(frozen=True)
class SamplingResult:
    """Outcome of :func:`langevin` for ``R`` chains (numpy arrays, float64).

    samples : dict ``name -> (R, n_kept, ...)``
        The recorded statistics at the kept steps (after the warmup, every
        ``thin``-th step), ``n_kept = n_steps // thin``.
    energy : ``(R, n_kept)``
        ``U`` of the chain state at the kept steps.
    accept_rate : ``(R,)``
        Fraction of accepted proposals per chain after the warmup (1 for ULA).
    step_size : ``(R,)``
        The step size of each chain after the warmup (frozen during sampling);
        pass it back as ``step_size`` with ``n_warmup=0`` to continue a run.
    final_params : dict or tuple of ``(R, ...)`` arrays
        The last state of every chain, in the container type of ``init``.
    scales : dict ``name -> (R,)``
        The per-group length scales of each chain that were used for sampling
        (adapted ones if ``adapt_scales``); pass them back as ``scales``.

    metropolis : bool

    n_warmup, thin : int
    """

    samples: dict
    energy: np.ndarray
    accept_rate: np.ndarray
    step_size: np.ndarray
    final_params: dict | tuple
    scales: dict
    metropolis: bool
    n_warmup: int
    thin: int


# --------------------------------------------------------------------------
# the generic sampler
# --------------------------------------------------------------------------


def _unpack(init):
    """``init`` -> (names, list of float64 tensors, is_dict)."""
    if isinstance(init, dict):
        if not init:
            raise ValueError("init must contain at least one parameter tensor")
        names = [str(k) for k in init]
        if len(set(names)) != len(names):
            raise ValueError("init keys must be distinct as strings")
        values, is_dict = list(init.values()), True
    elif isinstance(init, (tuple, list)):
        if not init:
            raise ValueError("init must contain at least one parameter tensor")
        names = [str(i) for i in range(len(init))]
        values, is_dict = list(init), False
    else:
        raise TypeError(f"init must be a dict or a tuple of tensors, got {type(init).__name__}")
    tensors = []
    for name, v in zip(names, values):
        t = v.detach().to(_DTYPE).clone() if isinstance(v, torch.Tensor) else torch.tensor(
            as_real_array(f"init[{name!r}]", v))
        if t.ndim < 1:
            raise ValueError(f"init[{name!r}] must have a leading chain dimension, got shape {tuple(t.shape)}")
        tensors.append(t)
    R = tensors[0].shape[0]
    for name, t in zip(names, tensors):
        if t.shape[0] != R:
            raise ValueError(
                f"every init tensor must have the same number of chains R = {R}; "
                f"init[{name!r}] has shape {tuple(t.shape)}")
    if R < 1:
        raise ValueError("init must hold at least one chain")
    return names, tensors, is_dict


def _pack(names, tensors, is_dict):
    return dict(zip(names, tensors)) if is_dict else tuple(tensors)


def _standard_normal(shape, generator: torch.Generator) -> torch.Tensor:
    """Standard normal float64 draws, the same as ``torch.randn(shape, dtype=float64,
    generator=generator)`` up to the last bit of ``log``/``sin``/``cos`` (tested), and with the
    generator left in the same state, but about twice as fast at the sizes of a batch of chains.

    torch transforms its float64 uniforms one pair at a time (scalar Box-Muller on
    blocks of 16: ``u1 = 1 - u[j]``, ``u2 = u[j + 8]``, ``j < 8``, and the last 16 values
    redrawn when the count is not a multiple of 16); here the same uniforms
    (``torch.rand``, drawn in the same order) go through the same transform as whole
    tensors. Below 16 values torch uses another method, so those are left to it.
    """
    n = math.prod(shape)
    if n < 16:
        return torch.randn(shape, generator=generator, dtype=_DTYPE)
    u = torch.rand(n, generator=generator, dtype=_DTYPE)
    tail = torch.rand(16, generator=generator, dtype=_DTYPE) if n % 16 else None
    out = torch.empty(n, dtype=_DTYPE)

    def box_muller(uniforms, dest):
        b = uniforms.view(-1, 2, 8)
        radius = torch.sqrt(-2 * torch.log(1 - b[:, 0]))
        theta = (2.0 * math.pi) * b[:, 1]
        d = dest.view(-1, 2, 8)
        torch.mul(radius, torch.cos(theta), out=d[:, 0])
        torch.mul(radius, torch.sin(theta), out=d[:, 1])

    full = n - n % 16
    box_muller(u[:full], out[:full])
    if tail is not None:
        last = torch.empty(16, dtype=_DTYPE)
        box_muller(tail, last)
        out[n - 16:] = last
    return out.view(shape)


def _all_finite(t: torch.Tensor) -> bool:
    """True if every entry of ``t`` is finite (one reduction; False also if the sum overflows)."""
    return bool(torch.isfinite(t.sum()))


def _chains(mask: torch.Tensor, limit: int = 10) -> str:
    idx = torch.nonzero(mask).flatten().tolist()
    text = ", ".join(str(i) for i in idx[:limit])
    return ("chain " if len(idx) == 1 else "chains ") + text + (" ..." if len(idx) > limit else "")


def _scale_values(name: str, value, R: int) -> np.ndarray:
    """One group's scale: a float or an array ``(R,)`` (one per chain), > 0; returns ``(R,)``."""
    v = as_real_array(name, value) if not isinstance(value, torch.Tensor) else value.detach().numpy()
    if v.ndim > 1 or (v.ndim == 1 and v.shape[0] not in (1, R)):
        raise ValueError(f"{name} must be a float or an array of shape ({R},), got shape {v.shape}")
    v = np.broadcast_to(v.astype(np.float64), (R,))
    if not (np.isfinite(v).all() and (v > 0).all()):
        raise ValueError(f"{name} must be finite and > 0")
    return v.copy()


def _scales(scales, names, is_dict, R: int) -> list[np.ndarray]:
    """Per-group scales, each ``(R,)``."""
    if scales is None:
        return [np.ones(R) for _ in names]
    if isinstance(scales, dict):
        unknown = set(map(str, scales)) - set(names)
        if unknown:
            raise ValueError(f"scales has keys {sorted(unknown)} that are not parameters {names}")
        scales = {str(k): v for k, v in scales.items()}
        return [_scale_values(f"scales[{n!r}]", scales.get(n, 1.0), R) for n in names]
    if isinstance(scales, (tuple, list)) and not is_dict:
        if len(scales) != len(names):
            raise ValueError(f"scales must have one entry per parameter ({len(names)}), got {len(scales)}")
        return [_scale_values(f"scales[{i}]", v, R) for i, v in enumerate(scales)]
    if isinstance(scales, (numbers.Real, np.ndarray, torch.Tensor)) and not isinstance(scales, bool):
        return [_scale_values("scales", scales, R) for _ in names]
    raise TypeError("scales must be None, a positive float, a dict name -> float or (R,) array, "
                    "or (tuple init) a sequence")


def _step_sizes(step_size, R: int) -> torch.Tensor:
    h = as_real_array("step_size", step_size.detach().numpy() if isinstance(step_size, torch.Tensor) else step_size)
    if h.ndim > 1 or (h.ndim == 1 and h.shape[0] not in (1, R)):
        raise ValueError(f"step_size must be a float or an array of shape ({R},), got shape {h.shape}")
    h = np.broadcast_to(h, (R,))
    if not (np.isfinite(h).all() and (h > 0).all()):
        raise ValueError("step_size must be finite and > 0")
    return torch.tensor(h.copy())


def langevin(
    energy: Callable,
    init,
    n_steps: int,
    step_size,
    generator: torch.Generator,
    *,
    n_warmup: int,
    thin: int = 1,
    metropolis: bool = True,
    target_accept: float = 0.57,
    record: Callable | None = None,
    scales=None,
    adapt_scales: bool = False,
    min_accept: float = 0.02,
    max_rejections: int = 1000,
    energy_grad: Callable | None = None,
) -> SamplingResult:
    """Langevin sampling of ``exp(-energy)`` for ``R`` chains at once (MALA or ULA).

    Parameters
    ----------
    energy : callable
        ``energy(params) -> tensor (R,)``: the negative log density (up to a
        constant) of every chain, differentiable by autograd. ``params`` has the
        container type of ``init`` (dict or tuple) with float64 tensors
        ``(R, ...)``. Chains must not interact.
    init : dict or tuple of arrays ``(R, ...)``
        Initial state; numpy arrays or tensors, converted to float64 (copied).
    n_steps : int >= 1
        Sampling steps after the warmup (the run makes ``n_warmup + n_steps``
        steps in total).
    step_size : float or array ``(R,)``, > 0
        Initial (MALA) or fixed (ULA) step ``h`` in the scaled coordinates
        ``x / s``: the noise added to a group of scale ``s`` has standard deviation
        ``sqrt(h) s``.
    generator : torch.Generator
        Source of every random draw (proposal noise and acceptance uniforms).
    n_warmup : int >= 0
        Warmup steps (discarded). With ``metropolis=True`` the step size of each
        chain is adapted during the warmup and frozen afterwards.
    thin : int >= 1
        Keep every ``thin``-th sampling step.
    metropolis : bool
        MALA (exact) if True, ULA (biased by ``O(h)``, fixed step) if False.
    target_accept : float in (0, 1)
        Acceptance rate targeted by the warmup adaptation (MALA only).
    record : callable or None
        ``record(params) -> dict[str, tensor (R, ...)]`` evaluated (without
        gradient) at every kept step; default: all parameters (names ``"0"``,
        ``"1"``, ... for a tuple ``init``). Record only what you need: ``R x
        n_kept`` copies of the output are kept in memory.
    scales : None, float, dict name -> (float or array ``(R,)``), or a sequence for a tuple init
        Per-group length scales ``s_k`` (diagonal preconditioner, constant within
        a group, optionally one per chain), default 1: give groups of very
        different widths (e.g. their prior standard deviations) comparable moves.
    adapt_scales : bool
        MALA only, needs ``n_warmup >= 160``. Re-estimate each group's scale
        for each chain during the first half of the warmup, in three doubling
        windows of warmup steps ``(n/16, n/8], (n/8, n/4], (n/4, n/2]``
        (``n = n_warmup``): the new scale is the root mean (over the group's
        entries) of the per-entry variance of the chain within the window; the
        step-size adaptation restarts after each window. Scales and step size
        are frozen after the warmup (exactness is kept). Helps when the
        posterior width of a group differs from the given scale (e.g. the
        readout ``W`` at large ``P``). Limits: a window shorter than the slowest
        relaxation time underestimates that group's width, and a group whose
        entries have very different widths stays limited by its stiffest
        direction.
    min_accept : float in [0, 1)
        MALA: a chain whose acceptance rate after the warmup is below this is
        declared stuck (checked at the end, when ``n_steps >= 100``, so that a
        healthy chain cannot fail it by chance).
    max_rejections : int >= 1
        MALA: a chain that rejects this many consecutive proposals after the
        warmup is declared stuck (checked at every step, so that a long run fails
        early). The default is generous on purpose: in curved posteriors (e.g.
        the ``(A, W) -> (c A, W / c)`` ridge of the full network) a healthy MALA
        chain can sit through a few hundred rejections in a stiff region.
    energy_grad : callable or None
        ``energy_grad(params) -> (E, grads)``: the energy ``(R,)`` and its gradient
        (``grads`` in the container type of ``init``, float64), e.g. written out by
        hand; when given it replaces autograd on ``energy`` at every step and
        ``energy`` is not called. It must be the gradient of the same energy.

    Returns
    -------
    SamplingResult

    Raises
    ------
    FloatingPointError
        Naming the chain(s), when a chain diverges: the initial state, or (ULA)
        any new state, has a non-finite parameter, energy or gradient; or (MALA)
        the energy or gradient at a finite proposal is NaN or ``-inf``; or (MALA)
        a chain is stuck after the warmup (see ``min_accept``, ``max_rejections``).
        No samples of a diverged chain are ever returned. A MALA proposal with
        infinite parameters, ``+inf`` energy or infinite gradient is simply
        rejected (the energy is not evaluated at non-finite parameters).

    Notes
    -----
    Random draws per step, in this order: one ``randn`` per parameter group (in
    the order of ``init``), then (MALA) one ``rand(R)``. The same generator
    state gives bit-identical results. The per-chain step-size adaptation is
    dual averaging on ``log h`` with ``mu = log(10 h_0)``, ``gamma = 0.05``,
    ``t_0 = 10``, ``kappa = 0.75``.
    """
    if not callable(energy):
        raise TypeError("energy must be callable")
    check_generator("generator", generator, "torch")
    n_steps = check_int("n_steps", n_steps, 1)
    n_warmup = check_int("n_warmup", n_warmup, 0)
    thin = check_int("thin", thin, 1)
    if thin > n_steps:
        raise ValueError(f"thin must be <= n_steps (at least one kept draw), got thin={thin}, n_steps={n_steps}")
    max_rejections = check_int("max_rejections", max_rejections, 1)
    if not isinstance(metropolis, bool):
        raise TypeError(f"metropolis must be a bool, got {type(metropolis).__name__}")
    target_accept = check_positive("target_accept", target_accept)
    if not target_accept < 1:
        raise ValueError(f"target_accept must lie in (0, 1), got {target_accept}")
    min_accept = check_positive("min_accept", min_accept, allow_zero=True)
    if not min_accept < 1:
        raise ValueError(f"min_accept must lie in [0, 1), got {min_accept}")
    if record is not None and not callable(record):
        raise TypeError("record must be callable or None")
    if energy_grad is not None and not callable(energy_grad):
        raise TypeError("energy_grad must be callable or None")

    if not isinstance(adapt_scales, bool):
        raise TypeError(f"adapt_scales must be a bool, got {type(adapt_scales).__name__}")
    if adapt_scales and not (metropolis and n_warmup >= 160):
        raise ValueError("adapt_scales needs metropolis=True and n_warmup >= 160")

    names, tensors, is_dict = _unpack(init)
    R = tensors[0].shape[0]
    s_group = _scales(scales, names, is_dict, R)
    h = _step_sizes(step_size, R)

    # the state of all groups as one flat (R, D) tensor: few, larger torch ops per step
    shapes = [tuple(t.shape[1:]) for t in tensors]
    sizes = [math.prod(sh) for sh in shapes]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).tolist()
    x = torch.cat([t.reshape(R, -1) for t in tensors], dim=1)
    group_of = torch.cat([torch.full((n,), k, dtype=torch.long) for k, n in enumerate(sizes)])

    def expand_scales(s_group):
        """Per-group scales ``[(R,)]`` -> per-entry scales ``(R, D)``."""
        return torch.as_tensor(np.stack(s_group, axis=1))[:, group_of]

    s = expand_scales(s_group)
    s2 = s**2
    # scale adaptation windows (warmup steps w0 < t <= w1), each twice the previous one
    windows = [(n_warmup // 16, n_warmup // 8), (n_warmup // 8, n_warmup // 4), (n_warmup // 4, n_warmup // 2)]
    acc_sum = acc_sq = None

    def unflatten(flat):
        parts = [flat[:, a:b].reshape((R,) + sh) for a, b, sh in zip(offsets[:-1], offsets[1:], shapes)]
        return _pack(names, parts, is_dict)

    def evaluate(flat):
        """Energy ``(R,)`` and its gradient ``(R, D)`` at the flat state ``flat``."""
        if energy_grad is not None:
            with torch.no_grad():
                E, grads = energy_grad(unflatten(flat))
                grads = list(grads.values()) if is_dict else list(grads)
            if not isinstance(E, torch.Tensor) or tuple(E.shape) != (R,):
                raise ValueError(
                    f"energy_grad must return an energy of shape ({R},), got "
                    f"{tuple(E.shape) if isinstance(E, torch.Tensor) else type(E).__name__}")
            return E.to(_DTYPE), torch.cat([t.reshape(R, -1) for t in grads], dim=1).to(_DTYPE)
        leaf = flat.detach().requires_grad_(True)
        with torch.enable_grad():
            E = energy(unflatten(leaf))
            if not isinstance(E, torch.Tensor) or tuple(E.shape) != (R,):
                raise ValueError(
                    f"energy must return a tensor of shape ({R},), got "
                    f"{tuple(E.shape) if isinstance(E, torch.Tensor) else type(E).__name__}")
            if not E.requires_grad:
                grad = torch.zeros_like(leaf)
            else:
                (grad,) = torch.autograd.grad(E.sum(), leaf, allow_unused=True)
                grad = torch.zeros_like(leaf) if grad is None else grad
        return E.detach().to(_DTYPE), grad.detach()

    # initial state
    bad = ~torch.isfinite(x).all(1)
    if bad.any():
        raise FloatingPointError(f"{_chains(bad)}: non-finite initial parameters")
    E, grad = evaluate(x)
    bad = ~torch.isfinite(E) | ~torch.isfinite(grad).all(1)
    if bad.any():
        raise FloatingPointError(f"{_chains(bad)}: non-finite energy or gradient at the initial state")

    # dual averaging state (per chain)
    mu = torch.log(10 * h)
    H_bar = torch.zeros(R, dtype=_DTYPE)
    log_h_bar = torch.log(h)

    n_kept = n_steps // thin
    kept_records: list[dict] = []
    kept_energy: list[torch.Tensor] = []
    n_accept = torch.zeros(R, dtype=_DTYPE)
    streak = torch.zeros(R, dtype=torch.long)

    def where(t):
        return f"at warmup step {t}" if t <= n_warmup else f"at sampling step {t - n_warmup}"

    half_h_s2 = 0.5 * h[:, None] * s2
    sqrt_h_s = torch.sqrt(h)[:, None] * s
    t_da = 0  # dual-averaging clock (restarts when the scales are adapted)
    for t in range(1, n_warmup + n_steps + 1):
        warm = t <= n_warmup
        z = _standard_normal(tuple(x.shape), generator)
        prop = x - half_h_s2 * grad + sqrt_h_s * z

        if not metropolis:
            if not _all_finite(prop):
                raise FloatingPointError(
                    f"{_chains(~torch.isfinite(prop.sum(1)))} diverged {where(t)} (ULA): non-finite parameters")
            E_new, g_new = evaluate(prop)
            if not (_all_finite(E_new) and _all_finite(g_new)):
                bad = ~torch.isfinite(E_new + g_new.sum(1))
                raise FloatingPointError(
                    f"{_chains(bad)} diverged {where(t)} (ULA): non-finite energy or gradient")
            x, E, grad = prop, E_new, g_new
            if not warm:
                n_accept += 1
        else:
            u = torch.rand(R, generator=generator, dtype=_DTYPE)
            if _all_finite(prop):
                fp = None
            else:  # do not evaluate the energy at non-finite parameters; reject those proposals
                fp = torch.isfinite(prop).all(1)
                prop = torch.where(fp[:, None], prop, x)
            E_new, g_new = evaluate(prop)
            ok = torch.isfinite(E_new + g_new.sum(1))  # one reduction; an overflowing sum only rejects
            if fp is not None:
                ok &= fp
            if not bool(ok.all()):
                broken = (torch.isnan(E_new) | (E_new == -math.inf) | torch.isnan(g_new).any(1))
                if fp is not None:
                    broken &= fp
                if broken.any():
                    raise FloatingPointError(
                        f"{_chains(broken)} diverged {where(t)} (MALA): NaN or -inf energy, or NaN "
                        "gradient, at a finite proposal")
                E_new = torch.where(ok, E_new, E)
                g_new = torch.where(ok[:, None], g_new, grad)
            # log q(x | x') - log q(x' | x) in the scaled coordinates:
            # (x - x' + (h/2) s^2 g') / (sqrt(h) s) = (sqrt(h) s / 2)(g + g') - z
            d = 0.5 * sqrt_h_s * (grad + g_new) - z
            log_r = E - E_new + 0.5 * ((z**2).sum(1) - (d**2).sum(1))
            log_r = torch.where(ok, log_r, -math.inf)
            accept = torch.log(u) < log_r
            x = torch.where(accept[:, None], prop, x)
            grad = torch.where(accept[:, None], g_new, grad)
            E = torch.where(accept, E_new, E)
            if warm:
                t_da += 1
                alpha = torch.exp(torch.clamp(log_r, max=0.0))
                eta = 1.0 / (t_da + _DA_T0)
                H_bar = (1 - eta) * H_bar + eta * (target_accept - alpha)
                log_h = mu - math.sqrt(t_da) / _DA_GAMMA * H_bar
                w = t_da ** (-_DA_KAPPA)
                log_h_bar = w * log_h + (1 - w) * log_h_bar
                h = torch.exp(log_h) if t < n_warmup else torch.exp(log_h_bar)
                window = next(((w0, w1) for w0, w1 in windows if w0 < t <= w1), None) if adapt_scales else None
                if window is not None:
                    w0, w1 = window
                    if t == w0 + 1:
                        acc_sum, acc_sq = torch.zeros_like(x), torch.zeros_like(x)
                    acc_sum += x
                    acc_sq += x**2
                    if t == w1:
                        n_w = w1 - w0
                        var = (acc_sq / n_w - (acc_sum / n_w) ** 2).clamp(min=0.0)
                        var_group = torch.zeros(R, len(sizes), dtype=_DTYPE).index_add_(1, group_of, var)
                        new = torch.sqrt(var_group / torch.as_tensor(sizes, dtype=_DTYPE)).numpy()
                        for k in range(len(sizes)):  # keep the old scale of a chain that did not move
                            good = np.isfinite(new[:, k]) & (new[:, k] > 0)
                            s_group[k] = np.where(good, new[:, k], s_group[k])
                        s_old = s
                        s = expand_scales(s_group)
                        s2 = s**2
                        # same proposal size in the original coordinates for the typical entry, then adapt afresh
                        ratio = ((s_old / s) ** 2).mean(1)
                        h = torch.exp(log_h_bar) * ratio
                        mu, H_bar, log_h_bar, t_da = torch.log(10 * h), torch.zeros_like(H_bar), torch.log(h), 0
                half_h_s2 = 0.5 * h[:, None] * s2
                sqrt_h_s = torch.sqrt(h)[:, None] * s
            else:
                n_accept += accept
                streak = torch.where(accept, 0, streak + 1)
                if bool((streak >= max_rejections).any()):
                    stuck = streak >= max_rejections
                    raise FloatingPointError(
                        f"{_chains(stuck)} stuck {where(t)} (MALA): {max_rejections} consecutive rejections "
                        f"(acceptance collapsed; step size {h[stuck].tolist()[:10]})")

        if not warm and (t - n_warmup) % thin == 0 and len(kept_energy) < n_kept:
            with torch.no_grad():
                params = unflatten(x)
                rec = record(params) if record is not None else dict(zip(names, params.values() if is_dict else params))
            if not isinstance(rec, dict):
                raise TypeError("record must return a dict of tensors")
            kept_records.append({k: (v.detach().to(_DTYPE).numpy() if isinstance(v, torch.Tensor)
                                     else np.asarray(v, dtype=np.float64)).copy() for k, v in rec.items()})
            kept_energy.append(E.clone())

    accept_rate = (n_accept / n_steps).numpy()
    if metropolis and n_steps >= _MIN_STEPS_ACCEPT_CHECK:
        low = accept_rate < min_accept
        if low.any():
            raise FloatingPointError(
                f"{_chains(torch.as_tensor(low))}: acceptance rate {accept_rate[low].tolist()[:10]} < "
                f"min_accept = {min_accept} after the warmup (acceptance collapsed)")

    samples = {}
    for k in kept_records[0]:
        arr = np.stack([r[k] for r in kept_records], axis=1)
        if arr.shape[0] != R:
            raise ValueError(f"record()[{k!r}] must have a leading chain dimension R = {R}, got {arr.shape[0]}")
        samples[k] = arr
    final = unflatten(x.clone())
    final = {k: v.numpy() for k, v in final.items()} if is_dict else tuple(v.numpy() for v in final)
    return SamplingResult(
        samples=samples,
        energy=torch.stack(kept_energy, dim=1).numpy(),
        accept_rate=accept_rate,
        step_size=h.numpy().copy(),
        final_params=final,
        scales={n: np.asarray(v, dtype=np.float64).copy() for n, v in zip(names, s_group)},
        metropolis=metropolis,
        n_warmup=n_warmup,
        thin=thin,
    )


# --------------------------------------------------------------------------
# posterior samplers of the model M*
# --------------------------------------------------------------------------


def _chain_data(C, spec: ModelSpec, R: int) -> torch.Tensor:
    """``C`` as float64, shape ``(L, L, V, V)`` (shared) or ``(R, L, L, V, V)`` (one per chain)."""
    C = C.detach().to(_DTYPE) if isinstance(C, torch.Tensor) else torch.tensor(as_real_array("C", C))
    L, V = spec.L, spec.V
    if tuple(C.shape) not in ((L, L, V, V), (R, L, L, V, V)):
        raise ValueError(f"C must have shape ({L}, {L}, {V}, {V}) or (n_chains={R}, {L}, {L}, {V}, {V}), "
                         f"got {tuple(C.shape)}")
    if not torch.isfinite(C).all():
        raise ValueError("C must contain only finite values")
    return C


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
    from ..posterior.order_parameters import invariants, order_parameters

    def record(p):
        A = attention(attention_logits(p["g"], p["b"]), spec.kind, spec.causal)
        m, q, r2 = order_parameters(A)
        a1, a2, g1, g2 = invariants(A, spec.cyclic)
        return {"m": m, "q": q, "r2": r2, "b": p["b"], "alpha_1": a1, "alpha_2": a2, "gamma_1": g1, "gamma_2": g2}

    return record


def _attention_record(spec: ModelSpec, what: str):
    """Recorder of the attention matrix (``{"A": (R, L, L)}``) or of its copy weight (``{"c": (R,)}``)."""
    from ..posterior.order_parameters import copy_weight

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
    if not isinstance(cache, bool):
        raise TypeError(f"cache must be a bool, got {type(cache).__name__}")
    if not cache:
        return run()
    from ..cache import cached

    if callable(params["record"]):
        raise ValueError(f"record must be one of {RECORDERS} (or None) with cache=True: a function cannot be "
                         "part of a cache key")

    def compute():
        res = run()
        out = {"energy": res.energy, "accept_rate": res.accept_rate, "step_size": res.step_size,
               "metropolis": res.metropolis, "n_warmup": res.n_warmup, "thin": res.thin,
               "generator_state": generator.get_state().numpy().copy()}
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
                          n_warmup=int(arrays["n_warmup"]), thin=int(arrays["thin"]))


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


def sample_collapsed_posterior(
    C,
    spec: ModelSpec,
    n_chains: int,
    n_steps: int,
    generator: torch.Generator,
    *,
    n_warmup: int,
    init="prior",
    step_size=0.1,
    thin: int = 1,
    metropolis: bool = True,
    target_accept: float = 0.57,
    scales: dict | None = None,
    record="order",
    cache: bool = False,
    **kwargs,
) -> SamplingResult:
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
    thin, metropolis, target_accept : see :func:`langevin`
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
        Passed to :func:`langevin` (``adapt_scales``, ``min_accept``, ``max_rejections``).

    Returns
    -------
    SamplingResult (``final_params = {"g": (R, L, L), "b": (R,)}``)
    """
    from ..posterior.evidence import _CollapsedAction, effective_action

    spec = check_spec(spec)
    R = check_int("n_chains", n_chains, 1)
    check_generator("generator", generator, "torch")
    names = ("g", "b")
    Ct = _chain_data(C, spec, R)
    recorder = _posterior_record(record, spec, names)

    def run():
        x0 = _initial_state(init, spec, R, generator, names)

        def energy(p):
            return effective_action(p["g"], p["b"], Ct, spec)

        action = _CollapsedAction(Ct, spec, R)

        def energy_grad(p):
            E, dg, db = action(p["g"], p["b"])
            return E, {"g": dg, "b": db}

        return langevin(
            energy, x0, n_steps, step_size, generator, n_warmup=n_warmup, thin=thin, metropolis=metropolis,
            target_accept=target_accept, record=recorder,
            scales=_default_scales(spec, names, scales), energy_grad=energy_grad, **kwargs,
        )

    params = dict(C=Ct.numpy(), spec=spec, n_chains=R, n_steps=n_steps, n_warmup=n_warmup, init=init,
                  step_size=step_size, thin=thin, metropolis=metropolis, target_accept=target_accept, scales=scales,
                  record=record, kwargs=kwargs)
    return _run_cached(cache, "sample_collapsed_posterior", params, generator, run)


def sample_full_posterior(
    C,
    spec: ModelSpec,
    n_chains: int,
    n_steps: int,
    generator: torch.Generator,
    *,
    n_warmup: int,
    init="prior",
    step_size=0.1,
    thin: int = 1,
    metropolis: bool = True,
    target_accept: float = 0.57,
    scales: dict | None = None,
    record="order",
    cache: bool = False,
    **kwargs,
) -> SamplingResult:
    """Langevin (default MALA) on the whole network ``(g, b, W)``.

    The energy is :func:`copylib.inference.map_training.map_objective`, the negative log joint
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
    from ..inference.map_training import _Objective, map_objective

    spec = check_spec(spec)
    R = check_int("n_chains", n_chains, 1)
    check_generator("generator", generator, "torch")
    names = ("g", "b", "W")
    Ct = _chain_data(C, spec, R)
    recorder = _posterior_record(record, spec, names)

    def run():
        x0 = _initial_state(init, spec, R, generator, names)

        def energy(p):
            return map_objective(p["g"], p["b"], p["W"], Ct, spec)

        objective = _Objective(Ct, spec, R)

        def energy_grad(p):
            U, (dg, db, dW) = objective.value_and_grad(p["g"], p["b"], p["W"])
            return U, {"g": dg, "b": db, "W": dW}

        return langevin(
            energy, x0, n_steps, step_size, generator, n_warmup=n_warmup, thin=thin, metropolis=metropolis,
            target_accept=target_accept, record=recorder,
            scales=_default_scales(spec, names, scales), energy_grad=energy_grad, **kwargs,
        )

    params = dict(C=Ct.numpy(), spec=spec, n_chains=R, n_steps=n_steps, n_warmup=n_warmup, init=init,
                  step_size=step_size, thin=thin, metropolis=metropolis, target_accept=target_accept, scales=scales,
                  record=record, kwargs=kwargs)
    return _run_cached(cache, "sample_full_posterior", params, generator, run)
