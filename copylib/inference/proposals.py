"""Langevin proposals for :func:`copylib.inference.langevin.langevin`, one algorithm per class.

Every proposal moves ``R`` chains held as one flat state ``x (R, D)`` with energies
``E (R,)`` and gradients ``grad (R, D)``. With the step ``h (R,)`` and the per-entry
length scales ``s (R, D)`` (a diagonal preconditioner) it proposes

    x' = x - (h/2) s^2 grad U(x) + sqrt(h) s xi,        xi ~ N(0, I),

and then keeps or rejects it:

* :class:`MALA` -- Metropolis-adjusted: ``x'`` is accepted with probability
  ``min(1, exp(-U(x') + U(x)) q(x | x') / q(x' | x))``, so ``exp(-U)`` is the exact
  stationary law;
* :class:`ULA` -- unadjusted: every ``x'`` is kept; the stationary law is biased
  by ``O(h)``.

Random draws per step: one standard normal ``(R, D)``, then (MALA) one uniform ``(R,)``.

:class:`HMC` -- Hamiltonian Monte Carlo, on the same interface: ``n_leapfrog`` leapfrog steps of
size ``sqrt(h)`` (in the scaled coordinates ``x / s``, unit mass) per Metropolis-adjusted proposal;
one leapfrog step is MALA's proposal and acceptance test. The same draws per step as MALA.

:class:`LineMove`, on the same interface (:class:`Move`), is a random-walk Metropolis move along one fixed
direction of the state, made after each Langevin step where one collective coordinate
mixes slowly.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from ..arguments import check_generator, check_int, check_positive
from .monitoring import name_chains

__all__ = ["Move", "LangevinProposal", "MALA", "ULA", "HMC", "LineMove"]

_DTYPE = torch.float64
# what a move returns: (x, E, grad, accept (R,) bool, log_r (R,) or None)
_Step = tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None]


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


class Move:
    """One move of ``R`` chains: the contract every proposal of this module meets.

    evaluate : callable ``x (R, D) -> (E (R,), grad (R, D))``, the energy and its
    gradient at a flat state; generator : torch.Generator, the source of every draw.
    """

    label = ""

    def __init__(self, evaluate: Callable, generator: torch.Generator) -> None:
        if not callable(evaluate):
            raise TypeError("evaluate must be callable")
        check_generator("generator", generator, "torch")
        self.evaluate, self.generator = evaluate, generator

    def step(self, x: torch.Tensor, E: torch.Tensor, grad: torch.Tensor, where: str) -> _Step:
        """One move: ``(x, E, grad, accept (R,) bool, log_r (R,) or None)``; ``where`` (e.g.
        ``"at warmup step 3"``) goes into the FloatingPointError of a diverged chain."""
        raise NotImplementedError


class LangevinProposal(Move):
    """A Langevin move of ``R`` chains; subclasses decide what to keep.

    Arguments as :class:`Move`. Call :meth:`set_kernel` before the first :meth:`~Move.step`.
    """

    metropolis = False  # whether the step has an accept/reject test (and so can adapt h)

    def set_kernel(self, h: torch.Tensor, s: torch.Tensor) -> None:
        """Use the steps ``h (R,)`` and per-entry scales ``s (R, D)`` from now on."""
        self.half_h_s2 = 0.5 * h[:, None] * s**2
        self.sqrt_h_s = torch.sqrt(h)[:, None] * s

    def _propose(self, x: torch.Tensor, grad: torch.Tensor):
        z = _standard_normal(tuple(x.shape), self.generator)
        return x - self.half_h_s2 * grad + self.sqrt_h_s * z, z


class ULA(LangevinProposal):
    """The unadjusted Langevin algorithm (SGLD with the full gradient): every proposal is kept.

    For a Gaussian target with precision ``lambda`` (in the scaled coordinates) the
    stationary variance is ``1 / (lambda (1 - h lambda / 4))``. A chain whose new
    state, energy or gradient is not finite has diverged (FloatingPointError).
    """

    label = "ULA"

    def step(self, x: torch.Tensor, E: torch.Tensor, grad: torch.Tensor, where: str) -> _Step:
        prop, _ = self._propose(x, grad)
        if not _all_finite(prop):
            raise FloatingPointError(
                f"{name_chains(~torch.isfinite(prop.sum(1)))} diverged {where} (ULA): non-finite parameters")
        E_new, g_new = self.evaluate(prop)
        if not (_all_finite(E_new) and _all_finite(g_new)):
            bad = ~torch.isfinite(E_new + g_new.sum(1))
            raise FloatingPointError(f"{name_chains(bad)} diverged {where} (ULA): non-finite energy or gradient")
        return prop, E_new, g_new, torch.ones(x.shape[0], dtype=torch.bool), None


def _evaluate_proposal(evaluate, prop, x, E, grad, where: str, label: str):
    """Energy and gradient at the proposals ``prop (R, D)``: ``(prop, E_new, g_new, ok)``.

    A proposal with infinite parameters is replaced by ``x`` and not evaluated; one with
    ``+inf`` energy or an infinite gradient gets ``ok = False`` (rejected), its ``E_new`` and
    ``g_new`` those of ``x``. A NaN or ``-inf`` energy, or a NaN gradient, at a finite proposal
    is a bug in the energy: FloatingPointError naming the chains.
    """
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
                f"{name_chains(broken)} diverged {where} ({label}): NaN or -inf energy, or NaN "
                "gradient, at a finite proposal")
        E_new = torch.where(ok, E_new, E)
        g_new = torch.where(ok[:, None], g_new, grad)
    return prop, E_new, g_new, ok


class MALA(LangevinProposal):
    """The Metropolis-adjusted Langevin algorithm: exact for ``exp(-U)``.

    A proposal with infinite parameters, ``+inf`` energy or infinite gradient is
    rejected (the energy is not evaluated at non-finite parameters); a NaN or
    ``-inf`` energy, or a NaN gradient, at a finite proposal is a bug in the
    energy and raises FloatingPointError naming the chains.
    """

    metropolis = True
    label = "MALA"

    def step(self, x: torch.Tensor, E: torch.Tensor, grad: torch.Tensor, where: str) -> _Step:
        prop, z = self._propose(x, grad)
        u = torch.rand(x.shape[0], generator=self.generator, dtype=_DTYPE)
        prop, E_new, g_new, ok = _evaluate_proposal(self.evaluate, prop, x, E, grad, where, self.label)
        # log q(x | x') - log q(x' | x) in the scaled coordinates:
        # (x - x' + (h/2) s^2 g') / (sqrt(h) s) = (sqrt(h) s / 2)(g + g') - z
        d = 0.5 * self.sqrt_h_s * (grad + g_new) - z
        log_r = E - E_new + 0.5 * ((z**2).sum(1) - (d**2).sum(1))
        return _keep(x, E, grad, prop, E_new, g_new, torch.where(ok, log_r, -math.inf), u)


class HMC(LangevinProposal):
    """Hamiltonian Monte Carlo: ``n_leapfrog`` leapfrog steps per Metropolis-adjusted proposal.

    In the scaled coordinates ``y = x / s`` (unit mass) each chain draws a momentum
    ``p ~ N(0, I)`` and makes ``n_leapfrog`` leapfrog steps of size ``eps = sqrt(h)``;
    in ``x``: ``p <- p - (eps/2) s grad U``, ``x <- x + eps s p``, ``p <- p - (eps/2) s grad U``.
    The end point is accepted with probability ``min(1, exp(H_0 - H_1))``,
    ``H = U(x) + |p|^2 / 2``: the map is volume-preserving and reversible (with the momentum
    flipped), so ``exp(-U)`` is the exact stationary law. With ``n_leapfrog = 1`` the proposal
    and the acceptance test are :class:`MALA`'s (the same draws, equal up to rounding); more steps
    carry a chain further along its energy surface per proposal, at ``n_leapfrog`` evaluations of
    the energy and gradient.

    A fixed trajectory length can return a chain near its start in a direction whose period it
    matches (and mix that direction slowly); so each proposal draws its own step
    ``eps = sqrt(h) (1 + jitter (2 u' - 1))``, ``u'`` uniform, chain by chain (Neal 2011, section 5.4.2.2):
    each fixed step is an exact kernel, so their mixture is one too.

    A chain whose trajectory reaches infinite parameters, ``+inf`` energy or an infinite
    gradient stops there (it stays at its start for the rest of the trajectory) and its proposal
    is rejected; a NaN or ``-inf`` energy, or a NaN gradient, at a finite point raises
    FloatingPointError naming the chains, as with :class:`MALA`. Random draws per proposal: one
    standard normal ``(R, D)`` (the momenta), then one uniform ``(R,)`` (acceptance), then, if
    ``jitter > 0``, one uniform ``(R,)`` (the step).

    evaluate, generator : as :class:`Move`; n_leapfrog : int >= 1; jitter : float in [0, 1), the
    relative half-width of the step's spread (0: every proposal uses ``sqrt(h)``).
    """

    metropolis = True
    label = "HMC"

    def __init__(self, evaluate: Callable, generator: torch.Generator, n_leapfrog: int, jitter: float = 0.2) -> None:
        super().__init__(evaluate, generator)
        self.n_leapfrog = check_int("n_leapfrog", n_leapfrog, 1)
        jitter = check_positive("jitter", jitter, allow_zero=True)
        if not jitter < 1:
            raise ValueError(f"jitter must lie in [0, 1), got {jitter}")
        self.jitter = jitter
        self.step_factor = None  # (R, 1) factors of the current proposal's step, or None for 1

    def leapfrog(self, x: torch.Tensor, E: torch.Tensor, grad: torch.Tensor, p: torch.Tensor, where: str = ""
                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """``n_leapfrog`` leapfrog steps from ``(x, p)`` (``p (R, D)``, momenta in the scaled coordinates).

        The step is ``sqrt(h)`` (no jitter: :meth:`step` draws that). Returns ``(x', E', grad', p', ok)``: the end point, its energy and gradient, the end
        momenta and ``ok (R,)``, False for a chain whose trajectory left the finite region
        (then ``x', E', grad'`` are its start). Running it again from ``(x', -p')`` returns
        to ``(x, -p)`` up to rounding (reversibility).
        """
        eps_s = self.sqrt_h_s if self.step_factor is None else self.step_factor * self.sqrt_h_s
        p = p - 0.5 * eps_s * grad
        y, E_y, g_y = x, E, grad
        ok = torch.ones(x.shape[0], dtype=torch.bool)
        for k in range(self.n_leapfrog):
            y = y + eps_s * p
            y, E_y, g_y, ok_k = _evaluate_proposal(self.evaluate, y, x, E, grad, where, self.label)
            if not bool(ok_k.all()):  # a chain that left the finite region waits at its start, rejected
                ok &= ok_k
                y = torch.where(ok[:, None], y, x)
                E_y = torch.where(ok, E_y, E)
                g_y = torch.where(ok[:, None], g_y, grad)
            p = p - (0.5 if k == self.n_leapfrog - 1 else 1.0) * eps_s * g_y
        return y, E_y, g_y, p, ok

    def step(self, x: torch.Tensor, E: torch.Tensor, grad: torch.Tensor, where: str) -> _Step:
        p0 = _standard_normal(tuple(x.shape), self.generator)
        u = torch.rand(x.shape[0], generator=self.generator, dtype=_DTYPE)
        if self.jitter > 0:
            u_step = torch.rand(x.shape[0], generator=self.generator, dtype=_DTYPE)
            self.step_factor = (1 + self.jitter * (2 * u_step - 1))[:, None]
        try:
            prop, E_new, g_new, p, ok = self.leapfrog(x, E, grad, p0, where)
        finally:
            self.step_factor = None
        log_r = E - E_new + 0.5 * ((p0**2).sum(1) - (p**2).sum(1))
        return _keep(x, E, grad, prop, E_new, g_new, torch.where(ok, log_r, -math.inf), u)


class LineMove(Move):
    """Random-walk Metropolis along one fixed direction ``v (D,)`` of the flat state.

    Every chain proposes ``x' = x + delta v`` with its own ``delta ~ N(0, step^2)`` and keeps
    it with probability ``min(1, exp(U(x) - U(x')))``: the proposal is symmetric, so
    ``exp(-U)`` stays the exact stationary law, and alternating this move with a Langevin
    step keeps it too. It pays where one collective coordinate is the slow mode of the
    Langevin chain (a step along ``v`` can be far larger than the Langevin step, which the
    stiffest of all ``D`` directions limits). Non-finite proposals are handled as by
    :class:`MALA`. Random draws per move: one standard normal ``(R,)``, then one uniform ``(R,)``.
    ``evaluate`` and ``generator`` as :class:`Move`; it has no step size to adapt.
    """

    label = "line move"

    def __init__(self, evaluate: Callable, generator: torch.Generator, direction: torch.Tensor, step: float) -> None:
        super().__init__(evaluate, generator)
        self.direction, self.step_size = direction.to(_DTYPE), float(step)

    def step(self, x: torch.Tensor, E: torch.Tensor, grad: torch.Tensor, where: str) -> _Step:
        R = x.shape[0]
        delta = self.step_size * _standard_normal((R,), self.generator)
        u = torch.rand(R, generator=self.generator, dtype=_DTYPE)
        prop = torch.addr(x, delta, self.direction)  # x + delta v, chain by chain
        prop, E_new, g_new, ok = _evaluate_proposal(self.evaluate, prop, x, E, grad, where, self.label)
        return _keep(x, E, grad, prop, E_new, g_new, torch.where(ok, E - E_new, -math.inf), u)


def _keep(x, E, grad, prop, E_new, g_new, log_r, u):
    """The Metropolis decision ``log u < log_r``: ``(x, E, grad, accept, log_r)`` after it."""
    accept = torch.log(u) < log_r
    x = torch.where(accept[:, None], prop, x)
    grad = torch.where(accept[:, None], g_new, grad)
    E = torch.where(accept, E_new, E)
    return x, E, grad, accept, log_r
