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

The parts live in their own modules: the proposals (:mod:`copylib.inference.proposals`),
the warmup adaptation of ``h`` and the scales (:mod:`copylib.inference.adaptation`), and the
acceptance monitor and draw recorder (:mod:`copylib.inference.monitoring`). The posterior
samplers of the model M* are in :mod:`copylib.inference.posterior_sampling`.

Convergence diagnostics of the draws (ArviZ) are in :mod:`copylib.inference.diagnostics`.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import torch

from ..arguments import as_real_array, check_bool, check_generator, check_int, check_positive
from .adaptation import DualAveraging, ScaleWindows
from .monitoring import AcceptanceMonitor, DrawRecorder, name_chains
from .proposals import HMC, MALA, ULA, LineMove

__all__ = [
    "SamplingResult",
    "langevin",
]

_DTYPE = torch.float64


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

    line_accept_rate : ``(R,)`` or None
        With ``direction``: the fraction of accepted line moves per chain after the warmup.
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
    line_accept_rate: np.ndarray | None = None


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
    init: dict[str, npt.ArrayLike | torch.Tensor] | Sequence[npt.ArrayLike | torch.Tensor],
    n_steps: int,
    step_size: npt.ArrayLike | torch.Tensor,
    generator: torch.Generator,
    *,
    n_warmup: int,
    thin: int = 1,
    metropolis: bool = True,
    target_accept: float = 0.57,
    record: Callable | None = None,
    scales: npt.ArrayLike | torch.Tensor | dict[str, npt.ArrayLike | torch.Tensor] | Sequence[npt.ArrayLike | torch.Tensor] | None = None,
    adapt_scales: bool = False,
    min_accept: float = 0.02,
    max_rejections: int = 1000,
    energy_grad: Callable | None = None,
    direction: dict[str, npt.ArrayLike | torch.Tensor] | Sequence[npt.ArrayLike | torch.Tensor] | None = None,
    direction_step: float | None = None,
    n_leapfrog: int = 1,
) -> SamplingResult:
    """Langevin sampling of ``exp(-energy)`` for ``R`` chains at once (MALA, ULA, or HMC with ``n_leapfrog > 1``).

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
    direction : None, or a dict (tuple) of arrays shaped like one chain of ``init``
        MALA only: after every Langevin step each chain also makes a random-walk
        Metropolis move along this fixed direction,
        ``x' = x + delta * direction`` with ``delta ~ N(0, direction_step^2)``
        (:class:`~copylib.inference.proposals.LineMove`; exact, as the proposal is
        symmetric). For a collective coordinate that is the slow mode of the chain.
        A dict may leave groups out (zero there); finite, not all zero.
    direction_step : float > 0
        The standard deviation of ``delta``; required with ``direction``.
    n_leapfrog : int >= 1
        Leapfrog steps per proposal. 1 (the default): MALA (or ULA). More: Hamiltonian Monte
        Carlo (:class:`~copylib.inference.proposals.HMC`, needs ``metropolis=True``), ``n_leapfrog``
        leapfrog steps of size ``sqrt(h)`` in the scaled coordinates per Metropolis-adjusted
        proposal, each costing one energy and gradient evaluation; ``h`` is adapted in the
        warmup as for MALA (a ``target_accept`` near 0.8 suits HMC), and ``accept_rate``
        reports HMC's acceptance.

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
    Random draws per step, in this order: one standard normal ``(R, D)`` for the
    whole state (the groups of ``init`` flattened in order, ``D`` entries per
    chain), then (MALA) one ``rand(R)``; with ``direction``, then one standard
    normal ``(R,)`` and one ``rand(R)`` for the line move. The same generator
    state gives bit-identical results. The per-chain step-size adaptation is
    dual averaging on ``log h`` with ``mu = log(10 h_0)``, ``gamma = 0.05``,
    ``t_0 = 10``, ``kappa = 0.75``.
    """
    _check_arguments(energy, energy_grad, generator, n_steps, n_warmup, thin, metropolis, target_accept,
                     adapt_scales, max_rejections, min_accept, record)
    n_leapfrog = _check_leapfrog(n_leapfrog, metropolis)
    _check_direction(direction, direction_step, metropolis)
    names, tensors, is_dict = _unpack(init)
    layout = _Layout(names, tensors, is_dict)
    R = layout.R
    scale_groups = _scales(scales, names, is_dict, R)
    h = _step_sizes(step_size, R)
    evaluate = _evaluator(energy, energy_grad, layout)
    x = torch.cat([t.reshape(R, -1) for t in tensors], dim=1)
    E, grad = _evaluate_start(x, evaluate)

    proposal = HMC(evaluate, generator, n_leapfrog) if n_leapfrog > 1 else (MALA if metropolis else ULA)(
        evaluate, generator)
    line = None if direction is None else LineMove(evaluate, generator, layout.direction(direction), direction_step)
    line_accepts = torch.zeros(R, dtype=_DTYPE)
    s = layout.expand(scale_groups)
    proposal.set_kernel(h, s)
    step = DualAveraging(h, target_accept)
    windows = ScaleWindows(n_warmup, layout.group_of, layout.sizes) if adapt_scales else None
    monitor = AcceptanceMonitor(R, max_rejections, min_accept, proposal.label)
    recorder = DrawRecorder(record, layout.by_name, n_steps // thin, R)
    for t in range(1, n_warmup + n_steps + 1):
        where = f"at warmup step {t}" if t <= n_warmup else f"at sampling step {t - n_warmup}"
        x, E, grad, accept, log_r = proposal.step(x, E, grad, where)
        if line is not None:
            x, E, grad, line_accept, _ = line.step(x, E, grad, where)
            if t > n_warmup:
                line_accepts += line_accept
        if t > n_warmup:
            monitor.update(accept, h, where)
            if (t - n_warmup) % thin == 0:
                recorder.keep(layout.unflatten(x), E)
        elif proposal.metropolis:
            h = step.update(log_r, last=t == n_warmup)
            new_scales = windows.observe(t, x, scale_groups) if windows is not None else None
            if new_scales is not None:
                # same proposal size in the original coordinates for the typical entry, then adapt afresh
                s_old, scale_groups = s, new_scales
                s = layout.expand(scale_groups)
                h = step.mean_step * ((s_old / s) ** 2).mean(1)
                step.restart(h)
            proposal.set_kernel(h, s)

    accept_rate = monitor.accept_rate()
    return SamplingResult(
        samples=recorder.samples(),
        energy=recorder.energy(),
        accept_rate=accept_rate,
        step_size=h.numpy().copy(),
        final_params=layout.to_numpy(layout.unflatten(x.clone())),
        scales={n: np.asarray(v, dtype=np.float64).copy() for n, v in zip(names, scale_groups)},
        metropolis=metropolis,
        n_warmup=n_warmup,
        thin=thin,
        line_accept_rate=None if line is None else (line_accepts / n_steps).numpy(),
    )


def _check_arguments(energy, energy_grad, generator, n_steps, n_warmup, thin, metropolis, target_accept,
                     adapt_scales, max_rejections, min_accept, record) -> None:
    """The argument checks of :func:`langevin` that do not need the state."""
    if not callable(energy):
        raise TypeError("energy must be callable")
    check_generator("generator", generator, "torch")
    n_steps = check_int("n_steps", n_steps, 1)
    check_int("n_warmup", n_warmup, 0)
    thin = check_int("thin", thin, 1)
    if thin > n_steps:
        raise ValueError(f"thin must be <= n_steps (at least one kept draw), got thin={thin}, n_steps={n_steps}")
    check_int("max_rejections", max_rejections, 1)
    check_bool("metropolis", metropolis)
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
    check_bool("adapt_scales", adapt_scales)
    if adapt_scales and not (metropolis and n_warmup >= 160):
        raise ValueError("adapt_scales needs metropolis=True and n_warmup >= 160")


def _check_leapfrog(n_leapfrog, metropolis: bool) -> int:
    """``n_leapfrog`` as an int >= 1; more than one step needs ``metropolis=True`` (HMC is exact only adjusted)."""
    n_leapfrog = check_int("n_leapfrog", n_leapfrog, 1)
    if n_leapfrog > 1 and not metropolis:
        raise ValueError(f"n_leapfrog > 1 (HMC) needs metropolis=True, got n_leapfrog={n_leapfrog}")
    return n_leapfrog


def _check_direction(direction, direction_step, metropolis) -> None:
    """The checks of ``direction`` and ``direction_step`` that do not need the state."""
    if direction is None:
        if direction_step is not None:
            raise ValueError("direction_step is given without a direction")
        return
    if not metropolis:
        raise ValueError("direction needs metropolis=True (the line move is a Metropolis move)")
    if direction_step is None:
        raise ValueError("direction needs direction_step, the standard deviation of the move along it (> 0)")
    check_positive("direction_step", direction_step)


class _Layout:
    """The state of all parameter groups as one flat ``(R, D)`` tensor: few, larger torch ops per step."""

    def __init__(self, names, tensors, is_dict):
        self.names, self.is_dict = names, is_dict
        self.R = tensors[0].shape[0]
        self.shapes = [tuple(t.shape[1:]) for t in tensors]
        self.sizes = [math.prod(sh) for sh in self.shapes]
        self.offsets = np.concatenate([[0], np.cumsum(self.sizes)]).tolist()
        self.group_of = torch.cat([torch.full((n,), k, dtype=torch.long) for k, n in enumerate(self.sizes)])

    def expand(self, scale_groups) -> torch.Tensor:
        """Per-group scales ``[(R,)]`` -> per-entry scales ``(R, D)``."""
        return torch.as_tensor(np.stack(scale_groups, axis=1))[:, self.group_of]

    def unflatten(self, flat: torch.Tensor):
        """The flat state as the container type of ``init`` (views)."""
        parts = [flat[:, a:b].reshape((self.R,) + sh)
                 for a, b, sh in zip(self.offsets[:-1], self.offsets[1:], self.shapes)]
        return _pack(self.names, parts, self.is_dict)

    def flatten(self, grads) -> torch.Tensor:
        """Gradients in the container type of ``init`` -> ``(R, D)``."""
        grads = list(grads.values()) if self.is_dict else list(grads)
        return torch.cat([t.reshape(self.R, -1) for t in grads], dim=1)

    def direction(self, direction) -> torch.Tensor:
        """One chain's direction (container of ``init`` without the chain dimension; a dict may
        leave groups out) -> ``(D,)``, finite and not all zero."""
        if self.is_dict:
            if not isinstance(direction, dict):
                raise TypeError(f"direction must be a dict like init, got {type(direction).__name__}")
            unknown = set(map(str, direction)) - set(self.names)
            if unknown:
                raise ValueError(f"direction has keys {sorted(unknown)} that are not parameters {self.names}")
            given = {str(k): v for k, v in direction.items()}
            parts = [given.get(n, np.zeros(sh)) for n, sh in zip(self.names, self.shapes)]
        else:
            if not isinstance(direction, (tuple, list)) or len(direction) != len(self.names):
                raise ValueError(f"direction must be a sequence of {len(self.names)} arrays, like init")
            parts = list(direction)
        flat = []
        for n, sh, v in zip(self.names, self.shapes, parts):
            a = as_real_array(f"direction[{n!r}]", v.detach().numpy() if isinstance(v, torch.Tensor) else v)
            if a.shape != sh:
                raise ValueError(f"direction[{n!r}] must have the shape of one chain of init, {sh}, got {a.shape}")
            flat.append(a.reshape(-1))
        v = np.concatenate(flat)
        if not np.isfinite(v).all() or not v.any():
            raise ValueError("direction must be finite and not all zero")
        return torch.from_numpy(v)

    def by_name(self, params) -> dict:
        """The default record: every parameter, by name."""
        return dict(zip(self.names, params.values() if self.is_dict else params))

    def to_numpy(self, params):
        return {k: v.numpy() for k, v in params.items()} if self.is_dict else tuple(v.numpy() for v in params)


def _evaluator(energy: Callable, energy_grad: Callable | None, layout: _Layout) -> Callable:
    """``evaluate(flat) -> (E (R,), grad (R, D))``: ``energy_grad`` if given, else autograd on ``energy``."""
    R = layout.R

    def by_hand(flat):
        with torch.no_grad():
            E, grads = energy_grad(layout.unflatten(flat))
            grad = layout.flatten(grads)
        if not isinstance(E, torch.Tensor) or tuple(E.shape) != (R,):
            raise ValueError(
                f"energy_grad must return an energy of shape ({R},), got "
                f"{tuple(E.shape) if isinstance(E, torch.Tensor) else type(E).__name__}")
        return E.to(_DTYPE), grad.to(_DTYPE)

    def by_autograd(flat):
        leaf = flat.detach().requires_grad_(True)
        with torch.enable_grad():
            E = energy(layout.unflatten(leaf))
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

    return by_hand if energy_grad is not None else by_autograd


def _evaluate_start(x: torch.Tensor, evaluate: Callable):
    """Energy and gradient at the initial state; FloatingPointError naming the chains where they are not finite."""
    bad = ~torch.isfinite(x).all(1)
    if bad.any():
        raise FloatingPointError(f"{name_chains(bad)}: non-finite initial parameters")
    E, grad = evaluate(x)
    bad = ~torch.isfinite(E) | ~torch.isfinite(grad).all(1)
    if bad.any():
        raise FloatingPointError(f"{name_chains(bad)}: non-finite energy or gradient at the initial state")
    return E, grad
