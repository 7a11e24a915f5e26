"""Free energies along a tempering ladder, by MBAR (pymbar).

A ladder ``beta_1 < ... < beta_K`` of targets ``pi_k(x) ∝ exp(-beta_k U_data(x)) pi_0(x)`` (the prior
``pi_0`` at full strength on every rung, as in :mod:`copylib.inference.tempering`) has partition
functions ``Z(beta) = ∫ exp(-beta U_data) pi_0``, and ``d ln Z / d beta = -<U_data>_beta``. With
draws of ``U_data`` from every rung, the multistate Bennett acceptance ratio (MBAR) estimates
``ln Z(beta_k) / Z(beta_1)`` for every rung, and through the same weights ``ln Z(beta)`` and
expectations at any ``beta`` between the rungs (:func:`ladder_log_partition`,
``_ladder_weights``). Only ``U_data`` enters: the prior terms cancel between the rungs.

The estimator assumes every rung's draws come from its target; MCMC draws are correlated, so
MBAR's own error bars are too small. Error bars here come from independent runs instead.
"""

from __future__ import annotations

import contextlib
import io
import logging
from types import ModuleType

import numpy as np
import numpy.typing as npt
from scipy.special import logsumexp

from ..arguments import as_real_array, check_finite
from .tempering import check_ladder

__all__ = ["LadderFit", "ladder_log_partition"]


def _check_draws(u_data, betas):
    b = check_ladder(betas)
    u = as_real_array("u_data", u_data)
    if u.ndim != 2 or u.shape[0] != b.size or u.shape[1] < 2:
        raise ValueError(f"u_data must have shape (K, n_kept) = ({b.size}, n >= 2), one row per rung, got {u.shape}")
    check_finite("u_data", u)
    return u, b


def _check_at(at):
    a = np.atleast_1d(as_real_array("at", at))
    if a.ndim != 1 or not (np.isfinite(a).all() and (a >= 0).all() and (a <= 1).all()):
        raise ValueError("at must be inverse temperatures in [0, 1]")
    return a


def pymbar_module() -> ModuleType:
    """pymbar, imported on first use (only MBAR needs it), without its import-time banner."""
    try:
        # pymbar prints a banner about JAX and a note on its timeseries module on import
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            import pymbar
    except ImportError as err:
        raise ImportError("copylib.inference.free_energy needs pymbar: pip install pymbar") from err
    logging.getLogger("pymbar").setLevel(logging.ERROR)  # solver fallbacks are reported as warnings
    return pymbar


class LadderFit:
    """MBAR solved once for one run of a ladder; free energies and weights at any ``beta`` from it.

    u_data : ``(K, n_kept)``, the data term ``U_data`` of the draws of each rung (rung ``k`` at ``betas[k]``);
    betas : strictly increasing in ``[0, 1]``, ending at 1.
    """

    def __init__(self, u_data: npt.ArrayLike, betas: npt.ArrayLike) -> None:
        u, b = _check_draws(u_data, betas)
        K, n = u.shape
        self.betas, self.u = b, u.ravel()
        reduced = b[:, None] * self.u[None, :]
        f = pymbar_module().MBAR(reduced, np.full(K, n), verbose=False, initialize="BAR").f_k
        # MBAR's mixture density of every pooled draw: ln sum_k N_k exp(f_k - beta_k U_n)
        self.log_den = logsumexp(np.log(n) + f[:, None] - reduced, axis=0)
        self.log_z_first = logsumexp(-b[0] * self.u - self.log_den)

    def log_partition(self, at: npt.ArrayLike) -> np.ndarray:
        """``ln Z(beta) / Z(beta_1)`` at every ``beta`` in ``at`` (in ``[0, 1]``; best inside ``[beta_1, 1]``:
        outside, MBAR extrapolates), shape ``(len(at),)``."""
        a = _check_at(at)
        return logsumexp(-a[:, None] * self.u[None, :] - self.log_den[None, :], axis=1) - self.log_z_first

    def weights(self, beta: float) -> np.ndarray:
        """Normalised weights of the pooled draws (rung-major, ``(K * n_kept,)``) for the target at ``beta``:
        ``sum_n w_n h(x_n)`` estimates ``<h>_beta`` for any observable ``h`` recorded with the draws."""
        a = _check_at(beta)
        if a.size != 1:
            raise ValueError("beta must be one inverse temperature")
        lw = -a[0] * self.u - self.log_den
        return np.exp(lw - logsumexp(lw))


def ladder_log_partition(u_data: npt.ArrayLike, betas: npt.ArrayLike, at: npt.ArrayLike) -> np.ndarray:
    """``ln Z(beta) / Z(beta_1)`` at every ``beta`` in ``at``, from one run of the ladder (:class:`LadderFit`)."""
    return LadderFit(u_data, betas).log_partition(at)


def _ladder_weights(u_data: npt.ArrayLike, betas: npt.ArrayLike, beta: float) -> np.ndarray:
    """Normalised weights of the pooled draws for the target at ``beta`` (:meth:`LadderFit.weights`)."""
    return LadderFit(u_data, betas).weights(beta)
