"""MCMC diagnostics for the book's sampled results, through ArviZ.

One thin adapter (:func:`chain_diagnostics`) turns draws of shape
``(R, n)`` (chains x draws, or ``(R, n, k)`` for ``k`` observables) into the
rank-normalised split R-hat, bulk and tail effective sample sizes and the Monte
Carlo standard error of the mean, computed by ArviZ (Vehtari et al. 2021), plus
a drift test between the halves of every chain. :func:`z_calibration` asks
whether a set of theory-vs-sampling z-scores scatters like standard normals,
which is what calibrated error bars must do.

Thresholds (``RHAT_MAX``, ``ESS_MIN``) are the ones Vehtari et al.
recommend: R-hat below 1.01 and at least 100 effective draws per chain for four
chains, i.e. 400 in total, for bulk and tail alike.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats

from ..arguments import as_real_array

with warnings.catch_warnings():
    # arviz 0.23 announces its 1.0 refactor on import; the functions used here are stable across it
    warnings.simplefilter("ignore", FutureWarning)
    import arviz as _az

__all__ = ["RHAT_MAX", "ESS_MIN", "ChainDiagnostics", "chain_diagnostics", "ZCalibration", "z_calibration"]

RHAT_MAX = 1.01
ESS_MIN = 400.0


@dataclass(frozen=True)
class ChainDiagnostics:
    """Diagnostics of one observable per entry (arrays of the trailing shape of the draws).

    rhat : rank-normalised split R-hat; ess_bulk, ess_tail : effective sample sizes
    (all chains together); mcse : Monte Carlo standard error of the mean;
    drift_z : ``|mean(d)| / se(d)`` of the per-chain differences ``d`` between the
    second and first half of each chain, in standard errors of their mean over chains.
    """

    rhat: np.ndarray
    ess_bulk: np.ndarray
    ess_tail: np.ndarray
    mcse: np.ndarray
    drift_z: np.ndarray
    n_chains: int
    n_draws: int

    def passes(self, rhat_max: float = RHAT_MAX, ess_min: float = ESS_MIN, drift_max: float = 4.0) -> bool:
        """True if every entry has R-hat < ``rhat_max``, bulk and tail ESS > ``ess_min`` and drift z < ``drift_max``."""
        return bool((self.rhat < rhat_max).all() and (self.ess_bulk > ess_min).all()
                    and (self.ess_tail > ess_min).all() and (self.drift_z < drift_max).all())

    def worst(self) -> dict:
        """The worst value of each diagnostic over all entries (for a one-line report)."""
        return dict(rhat=float(np.max(self.rhat)), ess_bulk=float(np.min(self.ess_bulk)),
                    ess_tail=float(np.min(self.ess_tail)),
                    drift_z=float(np.max(self.drift_z)))


def _drift_z(x: np.ndarray) -> np.ndarray:
    R, n = x.shape[:2]
    h = n // 2
    d = x[:, n - h:].mean(1) - x[:, :h].mean(1)
    se = d.std(0, ddof=1) / math.sqrt(R)
    mean = np.abs(d.mean(0))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(se > 0, mean / np.where(se > 0, se, 1.0), np.where(mean > 0, np.inf, 0.0))


def chain_diagnostics(x) -> ChainDiagnostics:
    """R-hat, bulk/tail ESS, MCSE (ArviZ) and the half-chain drift of draws ``x``.

    x : array ``(R, n)`` or ``(R, n, k)``: ``R >= 2`` chains of ``n >= 8`` draws
    of ``k`` observables, all finite.
    """
    x = as_real_array("x", x)
    if x.ndim not in (2, 3) or x.shape[0] < 2 or x.shape[1] < 8:
        raise ValueError(f"x must have shape (R >= 2, n >= 8) or (R, n, k): R-hat compares chains, got {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError("x must contain only finite values")
    y = x if x.ndim == 3 else x[..., None]
    out = {k: np.empty(y.shape[2]) for k in ("rhat", "ess_bulk", "ess_tail", "mcse")}
    for i in range(y.shape[2]):
        d = y[:, :, i]
        if np.ptp(d) == 0:  # a constant observable: perfectly "mixed", ArviZ would return nan
            out["rhat"][i], out["ess_bulk"][i], out["ess_tail"][i], out["mcse"][i] = 1.0, d.size, d.size, 0.0
            continue
        out["rhat"][i] = float(_az.rhat(d, method="rank"))
        out["ess_bulk"][i] = float(_az.ess(d, method="bulk"))
        out["ess_tail"][i] = float(_az.ess(d, method="tail"))
        out["mcse"][i] = float(_az.mcse(d, method="mean"))
    drift = _drift_z(y)
    squeeze = (lambda a: a[0]) if x.ndim == 2 else (lambda a: a)
    return ChainDiagnostics(rhat=squeeze(out["rhat"]), ess_bulk=squeeze(out["ess_bulk"]),
                            ess_tail=squeeze(out["ess_tail"]), mcse=squeeze(out["mcse"]),
                            drift_z=squeeze(drift), n_chains=int(x.shape[0]), n_draws=int(x.shape[1]))


@dataclass(frozen=True)
class ZCalibration:
    """Whether ``n`` z-scores scatter like independent standard normals.

    mean_z2 : the mean of ``z^2`` (1 if the error bars are calibrated);
    lo, hi : its central 95 % range under calibration, ``chi2_n / n``;
    p_value : two-sided tail probability of the observed ``sum z^2`` under ``chi2_n``.
    """

    n: int
    mean_z2: float
    lo: float
    hi: float
    p_value: float

    @property
    def calibrated(self) -> bool:
        return self.lo <= self.mean_z2 <= self.hi


def z_calibration(z) -> ZCalibration:
    """Compare ``mean(z^2)`` of ``n >= 2`` finite z-scores with ``chi2_n / n``.

    Inflated error bars give ``mean_z2`` below ``lo``, optimistic ones above
    ``hi``. The range assumes independent comparisons; correlated comparisons
    (several observables of the same chains) widen the true range, so a value
    just outside it is a warning, not a verdict.
    """
    z = as_real_array("z", z).ravel()
    if z.size < 2 or not np.isfinite(z).all():
        raise ValueError(f"z must hold at least 2 finite values, got {z.size}")
    n = z.size
    s = float((z**2).sum())
    cdf = stats.chi2.cdf(s, n)
    return ZCalibration(n=n, mean_z2=s / n, lo=float(stats.chi2.ppf(0.025, n) / n),
                        hi=float(stats.chi2.ppf(0.975, n) / n), p_value=float(2 * min(cdf, 1 - cdf)))
