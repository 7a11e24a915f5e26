"""Warmup adaptation of the Langevin sampler (:func:`copylib.inference.langevin.langevin`), per chain.

* :class:`DualAveraging` -- the step size ``h`` by dual averaging on ``log h``
  (Hoffman & Gelman 2014, Alg. 5) towards a target acceptance rate;
* :class:`ScaleWindows` -- the per-group length scales, re-estimated from the
  chain's own spread in three doubling windows of the warmup.

Both act only during the warmup; afterwards the sampler freezes ``h`` and the
scales, so the kept draws come from a fixed, exact Markov kernel.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import torch

from ..arguments import check_int, check_positive

__all__ = ["DualAveraging", "ScaleWindows"]

_DTYPE = torch.float64

# dual averaging constants (Hoffman & Gelman 2014, section 3.2)
_DA_GAMMA = 0.05
_DA_T0 = 10.0
_DA_KAPPA = 0.75


class DualAveraging:
    """Per-chain step size by dual averaging on ``log h``, with ``mu = log(10 h_0)``,
    ``gamma = 0.05``, ``t_0 = 10``, ``kappa = 0.75``.

    h : tensor ``(R,)`` float64, > 0, the initial step of each chain;
    target_accept : float in (0, 1).
    """

    def __init__(self, h: torch.Tensor, target_accept: float) -> None:
        target_accept = check_positive("target_accept", target_accept)
        if not target_accept < 1:
            raise ValueError(f"target_accept must lie in (0, 1), got {target_accept}")
        if not (isinstance(h, torch.Tensor) and h.ndim == 1 and bool((h > 0).all()) and bool(torch.isfinite(h).all())):
            raise ValueError("h must be a 1-d tensor of finite step sizes > 0 (one per chain)")
        self.target_accept = target_accept
        self.restart(h)

    def restart(self, h: torch.Tensor) -> None:
        """Adapt afresh from the step sizes ``h (R,)`` (the clock restarts)."""
        self.mu = torch.log(10 * h)
        self.H_bar = torch.zeros_like(h)
        self.log_h_bar = torch.log(h)
        self.t = 0

    def update(self, log_r: torch.Tensor, last: bool) -> torch.Tensor:
        """One step, given the log acceptance ratios ``log_r (R,)`` of the last proposals.

        Returns the next step sizes ``(R,)``: the iterate, or at the ``last`` warmup
        step the average :attr:`mean_step` (the one to freeze).
        """
        self.t += 1
        alpha = torch.exp(torch.clamp(log_r, max=0.0))
        eta = 1.0 / (self.t + _DA_T0)
        self.H_bar = (1 - eta) * self.H_bar + eta * (self.target_accept - alpha)
        log_h = self.mu - math.sqrt(self.t) / _DA_GAMMA * self.H_bar
        w = self.t ** (-_DA_KAPPA)
        self.log_h_bar = w * log_h + (1 - w) * self.log_h_bar
        return torch.exp(self.log_h_bar) if last else torch.exp(log_h)

    @property
    def mean_step(self) -> torch.Tensor:
        """The averaged step sizes ``exp(log h_bar)``, ``(R,)``."""
        return torch.exp(self.log_h_bar)


class ScaleWindows:
    """Per-group length scales of each chain, re-estimated in three doubling warmup windows.

    The windows are the warmup steps ``(n/16, n/8], (n/8, n/4], (n/4, n/2]``
    (``n = n_warmup >= 160``). At the end of a window the new scale of a group is
    the root mean (over the group's entries) of the per-entry variance of the chain
    within the window; a chain that did not move keeps its old scale.

    n_warmup : int >= 160; group_of : long tensor ``(D,)``, the group of each entry of
    the flat state; sizes : the number of entries of each group.
    """

    def __init__(self, n_warmup: int, group_of: torch.Tensor, sizes: Iterable[int]) -> None:
        n = check_int("n_warmup", n_warmup, 160)
        self.windows = [(n // 16, n // 8), (n // 8, n // 4), (n // 4, n // 2)]
        self.group_of = group_of
        self.sizes = list(sizes)
        if len(group_of) != sum(self.sizes):
            raise ValueError(f"group_of has {len(group_of)} entries but the sizes add up to {sum(self.sizes)}")
        self.acc_sum = self.acc_sq = None

    def observe(self, t: int, x: torch.Tensor, scales: list) -> list | None:
        """Take in the state ``x (R, D)`` after warmup step ``t``.

        ``scales``: the current scales, one array ``(R,)`` per group. Returns the new
        list of scales at the end of a window, else None.
        """
        window = next(((w0, w1) for w0, w1 in self.windows if w0 < t <= w1), None)
        if window is None:
            return None
        w0, w1 = window
        if t == w0 + 1:
            self.acc_sum, self.acc_sq = torch.zeros_like(x), torch.zeros_like(x)
        self.acc_sum += x
        self.acc_sq += x**2
        if t != w1:
            return None
        n_w = w1 - w0
        var = (self.acc_sq / n_w - (self.acc_sum / n_w) ** 2).clamp(min=0.0)
        var_group = torch.zeros(x.shape[0], len(self.sizes), dtype=_DTYPE).index_add_(1, self.group_of, var)
        new = torch.sqrt(var_group / torch.as_tensor(self.sizes, dtype=_DTYPE)).numpy()
        good = np.isfinite(new) & (new > 0)
        return [np.where(good[:, k], new[:, k], scales[k]) for k in range(len(self.sizes))]
