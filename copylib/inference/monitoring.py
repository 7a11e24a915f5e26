"""Watching the chains of the Langevin sampler (:func:`copylib.inference.langevin.langevin`).

* :func:`name_chains` -- which chains an error is about;
* :class:`AcceptanceMonitor` -- acceptance counts after the warmup and stuck-chain
  detection (too many consecutive rejections, or too low an acceptance rate);
* :class:`DrawRecorder` -- the statistics and energies kept at the recorded steps.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import numpy.typing as npt
import torch

from ..arguments import check_int, check_positive

__all__ = ["name_chains", "AcceptanceMonitor", "DrawRecorder"]

_DTYPE = torch.float64
# the end-of-run acceptance check needs enough steps not to fail a healthy chain by chance
_MIN_STEPS_ACCEPT_CHECK = 100


def name_chains(mask: npt.ArrayLike | torch.Tensor, limit: int = 10) -> str:
    """``"chain 3"`` or ``"chains 0, 4, ..."``: the chains where ``mask (R,)`` is true (at most ``limit`` listed)."""
    limit = check_int("limit", limit, 1)
    idx = torch.nonzero(torch.as_tensor(mask)).flatten().tolist()
    text = ", ".join(str(i) for i in idx[:limit])
    return ("chain " if len(idx) == 1 else "chains ") + text + (" ..." if len(idx) > limit else "")


class AcceptanceMonitor:
    """Acceptance of ``R`` chains after the warmup; declares a chain stuck.

    A chain is stuck when it rejects ``max_rejections`` consecutive proposals
    (checked at every step, so that a long run fails early), or when its acceptance
    rate at the end is below ``min_accept`` (checked only after at least 100 steps,
    so that a healthy chain cannot fail it by chance). ``label`` names the
    algorithm in the messages.
    """

    def __init__(self, R: int, max_rejections: int, min_accept: float, label: str = "MALA") -> None:
        R = check_int("R", R, 1)
        self.max_rejections = check_int("max_rejections", max_rejections, 1)
        self.min_accept = check_positive("min_accept", min_accept, allow_zero=True)
        if not self.min_accept < 1:
            raise ValueError(f"min_accept must lie in [0, 1), got {min_accept}")
        self.label = str(label)
        self.n_accept = torch.zeros(R, dtype=_DTYPE)
        self.streak = torch.zeros(R, dtype=torch.long)
        self.n_steps = 0

    def update(self, accept: torch.Tensor, h: torch.Tensor, where: str) -> None:
        """Count the step's outcomes ``accept (R,)`` (bool); raise FloatingPointError naming
        the stuck chains (with their step sizes ``h``), ``where`` says at which step."""
        self.n_steps += 1
        self.n_accept += accept
        self.streak = torch.where(accept, 0, self.streak + 1)
        if bool((self.streak >= self.max_rejections).any()):
            stuck = self.streak >= self.max_rejections
            raise FloatingPointError(
                f"{name_chains(stuck)} stuck {where} ({self.label}): {self.max_rejections} consecutive rejections "
                f"(acceptance collapsed; step size {h[stuck].tolist()[:10]})")

    def accept_rate(self) -> np.ndarray:
        """Fraction of accepted proposals per chain, ``(R,)``; raises FloatingPointError for a
        chain below ``min_accept`` after at least 100 steps."""
        rate = (self.n_accept / self.n_steps).numpy()
        if self.n_steps >= _MIN_STEPS_ACCEPT_CHECK:
            low = rate < self.min_accept
            if low.any():
                raise FloatingPointError(
                    f"{name_chains(low)}: acceptance rate {rate[low].tolist()[:10]} < "
                    f"min_accept = {self.min_accept} after the warmup (acceptance collapsed)")
        return rate


class DrawRecorder:
    """The draws kept by the sampler: ``record(params)`` and the energy at every kept step.

    record : callable ``params -> dict[str, (R, ...)]`` or None (then ``default(params)``,
    the parameters themselves); n_kept : int >= 1, how many draws to keep (later
    calls of :meth:`keep` are ignored); R : the number of chains.
    """

    def __init__(self, record: Callable | None, default: Callable, n_kept: int, R: int) -> None:
        if record is not None and not callable(record):
            raise TypeError("record must be callable or None")
        self.record = default if record is None else record
        self.n_kept = check_int("n_kept", n_kept, 1)
        self.R = check_int("R", R, 1)
        self.records: list[dict] = []
        self.energies: list[torch.Tensor] = []

    def keep(self, params: Mapping[str, torch.Tensor] | Sequence[torch.Tensor], E: torch.Tensor) -> None:
        """Record the state ``params`` (container of ``(R, ...)`` tensors) with its energy ``E (R,)``."""
        if len(self.energies) >= self.n_kept:
            return
        with torch.no_grad():
            rec = self.record(params)
        if not isinstance(rec, dict):
            raise TypeError("record must return a dict of tensors")
        self.records.append({k: (v.detach().to(_DTYPE).numpy() if isinstance(v, torch.Tensor)
                                 else np.asarray(v, dtype=np.float64)).copy() for k, v in rec.items()})
        self.energies.append(E.clone())

    def samples(self) -> dict:
        """``name -> (R, n_kept, ...)`` arrays of the recorded statistics."""
        out = {}
        for k in self.records[0]:
            arr = np.stack([r[k] for r in self.records], axis=1)
            if arr.shape[0] != self.R:
                raise ValueError(f"record()[{k!r}] must have a leading chain dimension R = {self.R}, got {arr.shape[0]}")
            out[k] = arr
        return out

    def energy(self) -> np.ndarray:
        """``(R, n_kept)`` energies of the kept draws."""
        return torch.stack(self.energies, dim=1).numpy()
