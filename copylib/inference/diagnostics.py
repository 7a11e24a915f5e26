"""MCMC diagnostics for the book's sampled results, through ArviZ.

Every R-hat, effective sample size and Monte Carlo standard error in the book
comes from ArviZ (rank-normalised split R-hat, bulk and tail ESS, MCSE; Vehtari
et al. 2021) through this module. Draws are arrays ``(R, n, ...)``: ``R``
chains of ``n`` draws, trailing dimensions are separate observables.

* :func:`chain_diagnostics` -- all of them at once for ``(R, n)`` or
  ``(R, n, k)`` draws, plus the half-chain drift;
* :func:`split_rhat`, :func:`effective_sample_size`, :func:`mcse_mean` -- one
  diagnostic each, for ``(R, n, ...)`` draws;
* :func:`half_drift_z` -- stationarity: the second half of every chain against
  its first half, in standard errors;
* :func:`dataset_chain_diagnostics` -- chains that sample the posteriors of
  different data sets (R-hat and ESS per data set);
* :func:`grouped_rhat` -- one rank-normalised split R-hat for chains in groups
  with different targets;
* :func:`z_calibration`, :func:`z2_range` -- whether theory-vs-sampling
  z-scores scatter like standard normals (independent or correlated), which is
  what calibrated error bars must do;
* :func:`studentized_z_null` -- the same question when every error bar is itself
  estimated from a few independent groups (data sets), so that the z's have
  Student-t tails: the simulated law of ``mean(z^2)`` and of ``max |z|``.

Thresholds (``_RHAT_MAX``, ``_ESS_MIN``) are the ones Vehtari et al.
recommend: R-hat below 1.01 and at least 100 effective draws per chain for four
chains, i.e. 400 in total, for bulk and tail alike.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from scipy import stats

from ..arguments import as_real_array, check_finite, check_generator


def _az():
    """ArviZ, imported on first use: it brings pandas and xarray (half a second), which a chapter
    without MCMC diagnostics should not pay for when it imports copylib."""
    with warnings.catch_warnings():
        # arviz 0.23 announces its 1.0 refactor on import; the functions used here are stable across it
        warnings.simplefilter("ignore", FutureWarning)
        import arviz

    return arviz

__all__ = ["ChainDiagnostics", "chain_diagnostics", "split_rhat", "effective_sample_size",
           "mcse_mean", "half_drift_z", "DatasetDiagnostics", "dataset_chain_diagnostics", "grouped_rhat",
           "ZCalibration", "z_calibration", "z2_range", "StudentizedZNull", "studentized_z_null"]

_ESS_METHODS = ("bulk", "tail", "mean")

_RHAT_MAX = 1.01
_ESS_MIN = 400.0


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

    def passes(self, rhat_max: float = _RHAT_MAX, ess_min: float = _ESS_MIN, drift_max: float = 4.0) -> bool:
        """True if every entry has R-hat < ``rhat_max``, bulk and tail ESS > ``ess_min`` and drift z < ``drift_max``."""
        return bool((self.rhat < rhat_max).all() and (self.ess_bulk > ess_min).all()
                    and (self.ess_tail > ess_min).all() and (self.drift_z < drift_max).all())

    def worst(self) -> dict[str, float]:
        """The worst value of each diagnostic over all entries (for a one-line report)."""
        return dict(rhat=float(np.max(self.rhat)), ess_bulk=float(np.min(self.ess_bulk)),
                    ess_tail=float(np.min(self.ess_tail)),
                    drift_z=float(np.max(self.drift_z)))


def _arviz(d: np.ndarray, what: str) -> float:
    """One ArviZ diagnostic of draws ``d`` of shape ``(R, n)``: ``"rhat"``, ``"mcse"`` or ``"ess_<method>"``."""
    if np.ptp(d) == 0:  # a constant observable: perfectly "mixed", ArviZ would return nan
        return {"rhat": 1.0, "mcse": 0.0}.get(what, float(d.size))
    if what == "rhat":
        return float(_az().rhat(d, method="rank"))
    if what == "mcse":
        return float(_az().mcse(d, method="mean"))
    return float(_az().ess(d, method=what[4:]))


def chain_diagnostics(x: npt.ArrayLike) -> ChainDiagnostics:
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
        for what, values in out.items():
            values[i] = _arviz(y[:, :, i], what)
    drift = _half_drift(np.moveaxis(y, 2, 0))
    squeeze = (lambda a: a[0]) if x.ndim == 2 else (lambda a: a)
    return ChainDiagnostics(rhat=squeeze(out["rhat"]), ess_bulk=squeeze(out["ess_bulk"]),
                            ess_tail=squeeze(out["ess_tail"]), mcse=squeeze(out["mcse"]),
                            drift_z=squeeze(drift), n_chains=int(x.shape[0]), n_draws=int(x.shape[1]))


def _draws(x, min_chains: int = 1) -> np.ndarray:
    """Check draws ``(R >= min_chains, n >= 4, ...)``, all finite (ArviZ needs 4 draws per chain)."""
    x = as_real_array("x", x)
    if x.ndim < 2 or x.shape[0] < min_chains or x.shape[1] < 4:
        raise ValueError(f"x must have shape (R >= {min_chains}, n >= 4, ...) (chains x draws), got {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError("x must contain only finite values")
    return x


def _per_observable(fn, x: np.ndarray):
    """``fn`` of every ``x[:, :, i...]``: a float for ``(R, n)``, else an array of shape ``x.shape[2:]``."""
    if x.ndim == 2:
        return fn(x)
    out = np.empty(x.shape[2:])
    for idx in np.ndindex(*x.shape[2:]):
        out[idx] = fn(x[(slice(None), slice(None)) + idx])
    return out


def split_rhat(x: npt.ArrayLike) -> float | np.ndarray:
    """Rank-normalised split R-hat (ArviZ ``rhat(method="rank")``, Vehtari et al. 2021).

    x : ``(R, n, ...)`` draws, ``R >= 2`` chains of ``n >= 4`` finite draws
    (ArviZ compares chains: it needs two); trailing dimensions are separate
    observables. Each chain is split in
    halves; the result is the larger of the split R-hat of the rank-normalised
    draws (bulk) and of their rank-normalised distance from the median (tails).
    Returns a float (or an array of shape ``x.shape[2:]``): ``1`` for a
    constant observable, ``inf`` if the halves are constant but differ.
    Values above ``_RHAT_MAX`` signal chains that have not mixed.
    """
    return _per_observable(lambda d: _arviz(d, "rhat"), _draws(x, min_chains=2))


def effective_sample_size(x: npt.ArrayLike, method: str = "bulk") -> float | np.ndarray:
    """Effective sample size of all draws together (ArviZ ``ess``, Vehtari et al. 2021).

    x : ``(R, n, ...)`` draws, ``R >= 1`` chains of ``n >= 4`` finite draws. method, one of
    ``_ESS_METHODS``: ``"bulk"`` (default; rank-normalised split chains, for
    the centre of the distribution), ``"tail"`` (the smaller of the ESS of the
    5 % and 95 % quantiles) or ``"mean"`` (split chains, not rank-normalised:
    the ESS behind :func:`mcse_mean`). A difference between chains or a trend
    within a chain lowers it. Returns a float (or an array of shape
    ``x.shape[2:]``); ``R n`` for a constant observable.
    """
    if not isinstance(method, str) or method not in _ESS_METHODS:
        raise ValueError(f"method must be one of {_ESS_METHODS}, got {method!r}")
    return _per_observable(lambda d: _arviz(d, "ess_" + method), _draws(x))


def mcse_mean(x: npt.ArrayLike) -> float | np.ndarray:
    """Monte Carlo standard error of the mean of all draws (ArviZ ``mcse(method="mean")``).

    x : ``(R, n, ...)`` draws, ``R >= 1`` chains of ``n >= 4`` finite draws. ``std / sqrt(ESS)``
    with ``std`` the standard deviation of all ``R n`` draws (ddof 1) and
    ``ESS`` :func:`effective_sample_size` with ``method="mean"``. Returns a
    float (or an array of shape ``x.shape[2:]``); ``0`` for a constant observable.
    """
    return _per_observable(lambda d: _arviz(d, "mcse"), _draws(x))


def _half_drift(x: np.ndarray) -> np.ndarray:
    """:func:`half_drift_z` of checked draws ``(G, R, n)``."""
    h = x.shape[2] // 2
    d = x[:, :, x.shape[2] - h:].mean(-1) - x[:, :, :h].mean(-1)
    mean = np.abs(d.mean(-1))
    se = d.std(-1, ddof=1) / np.sqrt(d.shape[1])
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(se > 0, mean / np.where(se > 0, se, 1.0), np.where(mean > 0, np.inf, 0.0))


def half_drift_z(x: npt.ArrayLike) -> np.ndarray:
    """Stationarity test: drift between the halves of each chain, in standard errors.

    x : array ``(n_groups, n_chains, n_draws)`` of draws of one observable
    (``n_chains >= 2``, ``n_draws >= 2``). For every chain ``d = mean(second
    half) - mean(first half)``; per group the result is
    ``|mean(d)| / (std(d, ddof=1) / sqrt(n_chains))``. Taking the difference
    within each chain removes what the chains do not share (their data set,
    their start), so the test measures only the Monte Carlo drift; the
    standard error assumes the chains are independent. Returns an array
    ``(n_groups,)``: ``0`` where every ``d`` is exactly zero, ``inf`` where all
    ``d`` are equal and non-zero.
    """
    x = as_real_array("x", x)
    if x.ndim != 3 or x.shape[1] < 2 or x.shape[2] < 2:
        raise ValueError(f"x must have shape (n_groups, n_chains >= 2, n_draws >= 2), got {x.shape}")
    check_finite("x", x)
    return _half_drift(x)


@dataclass(frozen=True)
class DatasetDiagnostics:
    """:func:`dataset_chain_diagnostics` result: one entry per observable (arrays of shape ``(k,)``).

    rhat : the largest rank-normalised split R-hat over the data sets (each data
    set's chains compared only with each other); ess_bulk, ess_tail : bulk and tail
    effective sample sizes summed over the data sets (the effective number of draws
    behind the data-set average of the posterior means); drift_z : the half-chain
    drift over all chains (:func:`half_drift_z` with every chain in one group: the
    per-chain difference removes the data set); rhat_sets : ``(n_sets, k)`` R-hat
    of each data set.
    """

    rhat: np.ndarray
    ess_bulk: np.ndarray
    ess_tail: np.ndarray
    drift_z: np.ndarray
    rhat_sets: np.ndarray
    n_sets: int
    n_chains: int
    n_draws: int

    def passes(self, rhat_max: float = _RHAT_MAX, ess_min: float = _ESS_MIN, drift_max: float = 4.0) -> bool:
        """True if R-hat < ``rhat_max``, bulk and tail ESS > ``ess_min`` and drift z < ``drift_max`` everywhere."""
        return bool((self.rhat < rhat_max).all() and (self.ess_bulk > ess_min).all()
                    and (self.ess_tail > ess_min).all() and (self.drift_z < drift_max).all())


def dataset_chain_diagnostics(x: npt.ArrayLike) -> DatasetDiagnostics:
    """MCMC diagnostics for chains that sample the posteriors of *different* data sets.

    x : array ``(n_sets, n_chains, n_draws)`` or ``(n_sets, n_chains, n_draws, k)``:
    ``n_chains >= 2`` chains per data set (independent starts on the same data),
    ``n_draws >= 8``, finite. R-hat across chains of different data sets would
    mistake the data-set spread for non-convergence (and the energy differs
    between data sets by the log evidence), so R-hat and the ESS are computed per
    data set with :func:`chain_diagnostics` (ArviZ); the
    worst R-hat and the summed ESS are returned. The sum is the ESS of the
    data-set average of the posterior means when the data sets' posterior
    variances are equal, an approximation otherwise.
    """
    x = as_real_array("x", x)
    if x.ndim not in (3, 4) or x.shape[1] < 2 or x.shape[2] < 8:
        raise ValueError(f"x must have shape (n_sets, n_chains >= 2, n_draws >= 8[, k]), got {x.shape}")
    check_finite("x", x)
    y = x if x.ndim == 4 else x[..., None]
    S, R, n, k = y.shape
    diags = [chain_diagnostics(y[s]) for s in range(S)]
    rhat_sets = np.stack([d.rhat for d in diags])
    drift = np.array([_half_drift(y[:, :, :, j].reshape(1, S * R, n))[0] for j in range(k)])
    squeeze = (lambda a: a[..., 0]) if x.ndim == 3 else (lambda a: a)
    return DatasetDiagnostics(rhat=squeeze(rhat_sets.max(0)), ess_bulk=squeeze(np.sum([d.ess_bulk for d in diags], 0)),
                              ess_tail=squeeze(np.sum([d.ess_tail for d in diags], 0)), drift_z=squeeze(drift),
                              rhat_sets=squeeze(rhat_sets), n_sets=S, n_chains=R, n_draws=n)


def _rank_normal(a: np.ndarray) -> np.ndarray:
    """Blom normal scores of the ranks of all entries of ``a`` (ArviZ's ``z_scale``)."""
    r = stats.rankdata(a, method="average").reshape(a.shape)
    return stats.norm.ppf((r - 0.375) / (a.size + 0.25))


def grouped_rhat(x: npt.ArrayLike) -> float:
    """Rank-normalised split R-hat of chains that come in groups with different targets.

    x : array ``(D, K, n)``: ``D >= 1`` groups (e.g. data sets) of ``K >= 1``
    chains of ``n >= 4`` finite draws each; the chains of one group sample the
    same distribution, different groups need not.

    Every chain is split in halves (first and last ``n // 2`` draws). Within each
    group the draws are rank-normalised (Blom scores, as ArviZ does), and the
    between-chain variance ``B_d`` (of the half-chain means about the group's
    mean, times ``n // 2``) and the mean within-half variance ``W_d`` are
    averaged over the groups; ``R = sqrt((n' - 1)/n' + B/(n' W))``, ``n' = n // 2``.
    As in Vehtari et al. (2021) the result is the larger of the value for the
    draws (bulk) and for their distance from the group's median (tails). For
    ``D = 1`` it is ArviZ's ``rhat(method="rank")`` (:func:`split_rhat`); ArviZ
    has no grouped version, hence this one. A spread of targets between
    groups does not enter, only disagreement between chains of one group.
    Averaging over groups makes it sensitive to a small disagreement shared by
    all groups but dilutes one bad group (one stuck chain among ``D`` groups
    raises ``R - 1`` by roughly ``1/D`` of its value for that group alone), so
    report it next to the per-group values (``grouped_rhat(x[d:d+1])``).
    """
    x = as_real_array("x", x)
    if x.ndim != 3 or x.shape[2] < 4:
        raise ValueError(f"x must have shape (D, K, n) with n >= 4, got {x.shape}")
    check_finite("x", x)
    D, K, n = x.shape
    h = n // 2
    split = np.concatenate([x[:, :, :h], x[:, :, n - h:]], axis=1)  # (D, 2K, h)

    def rhat(z):
        B = h * z.mean(-1).var(axis=1, ddof=1)  # (D,)
        W = z.var(-1, ddof=1).mean(-1)
        if (W == 0).any():
            return 1.0 if (B == 0).all() else float("inf")
        return float(np.sqrt((B.mean() / W.mean() + h - 1) / h))

    bulk = rhat(np.stack([_rank_normal(s) for s in split]))
    folded = np.abs(split - np.median(split.reshape(D, -1), axis=1)[:, None, None])
    tail = rhat(np.stack([_rank_normal(s) for s in folded]))
    return max(bulk, tail)


@dataclass(frozen=True)
class ZCalibration:
    """Whether ``n`` z-scores scatter as calibrated error bars make them scatter.

    mean_z2 : the mean of ``z^2``; lo, hi : its central 95 % range under calibration;
    p_value : two-sided tail probability of the observed mean under that law. The law is
    ``chi2_n / n`` (independent standard normals) from :func:`z_calibration`, the simulated
    law of :func:`studentized_z_null` from :meth:`StudentizedZNull.calibration`.
    """

    n: int
    mean_z2: float
    lo: float
    hi: float
    p_value: float

    @property
    def calibrated(self) -> bool:
        return self.lo <= self.mean_z2 <= self.hi


def z_calibration(z: npt.ArrayLike) -> ZCalibration:
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


def _check_correlation(name: str, corr) -> np.ndarray:
    """``corr`` as a float array, if it is a square, finite, symmetric matrix with unit diagonal and
    entries in ``[-1, 1]``."""
    corr = as_real_array(name, corr)
    if corr.ndim != 2 or corr.shape[0] != corr.shape[1] or corr.shape[0] < 1:
        raise ValueError(f"{name} must be a square (n, n) matrix, got shape {corr.shape}")
    check_finite(name, corr)
    if not np.allclose(corr, corr.T, atol=1e-12) or not np.allclose(np.diag(corr), 1.0, atol=1e-12) \
            or np.abs(corr).max() > 1 + 1e-12:
        raise ValueError(f"{name} must be symmetric with unit diagonal and entries in [-1, 1]")
    return corr


def _tail(level) -> float:
    """The probability ``(1 - level) / 2`` outside each end of a central ``level`` range."""
    if isinstance(level, bool) or not isinstance(level, numbers.Real) or not 0 < level < 1:
        raise ValueError(f"level must be a number in (0, 1), got {level!r}")
    return (1 - level) / 2


def z2_range(corr: npt.ArrayLike, level: float = 0.95) -> tuple[float, float, float]:
    """Range of ``mean(z^2)`` for ``n`` calibrated z-scores with correlation matrix ``corr``.

    For jointly normal ``z`` with unit variances and correlations ``Xi = corr``,
    ``sum z^2`` has mean ``n`` and variance ``2 tr(Xi^2) = 2 sum_ij Xi_ij^2``.
    Matching a scaled chi-square to these two moments (Satterthwaite) gives
    ``mean(z^2) ~ chi2_nu / nu`` with ``nu = n^2 / sum_ij Xi_ij^2`` effective
    comparisons (``nu = n`` for independent z, ``1`` if all are equal): the
    range :func:`z_calibration` uses when the comparisons are correlated.

    Returns ``(nu, lo, hi)``: ``lo, hi`` the central ``level`` range of ``chi2_nu / nu``.
    """
    corr = _check_correlation("corr", corr)
    a = _tail(level)
    n = corr.shape[0]
    nu = n**2 / float((corr**2).sum())
    return nu, float(stats.chi2.ppf(a, nu) / nu), float(stats.chi2.ppf(1 - a, nu) / nu)


@dataclass(frozen=True)
class StudentizedZNull:
    """Simulated law of a table of ``n`` z-scores when theory and error bars are right, but each
    error bar is estimated from a few groups (:func:`studentized_z_null`).

    mean_z2, max_abs_z : arrays ``(n_sim,)``, the mean of ``z^2`` and the largest ``|z|`` of each
    simulated table; dof : tuple, the degrees of freedom of each block's errors (groups - 1).
    """

    n: int
    dof: tuple
    mean_z2: np.ndarray = field(repr=False)
    max_abs_z: np.ndarray = field(repr=False)

    def z2_range(self, level: float = 0.95) -> tuple[float, float]:
        """The central ``level`` range of ``mean(z^2)``: below it the error bars are too large, above
        it too small (or the theory is off)."""
        a = _tail(level)
        lo, hi = np.quantile(self.mean_z2, [a, 1 - a])
        return float(lo), float(hi)

    def calibration(self, z: npt.ArrayLike) -> ZCalibration:
        """The table ``z`` (``n`` finite z-scores, in the order of the blocks) against this law: its
        ``mean(z^2)``, the central 95 % range and the two-sided tail probability of that mean."""
        z = as_real_array("z", z).ravel()
        if z.size != self.n:
            raise ValueError(f"z must hold the table's {self.n} z-scores, got {z.size}")
        check_finite("z", z)
        mean_z2 = float(np.mean(z**2))
        lo, hi = self.z2_range()
        tail = min(np.mean(self.mean_z2 <= mean_z2), np.mean(self.mean_z2 >= mean_z2))
        return ZCalibration(n=self.n, mean_z2=mean_z2, lo=lo, hi=hi, p_value=float(min(1.0, 2 * tail)))

    def false_alarm(self, threshold: float) -> float:
        """``P(max |z| >= threshold)``: the chance that a correct theory fails ``|z| < threshold``
        in at least one comparison of the table."""
        if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real) \
                or not (np.isfinite(threshold) and threshold > 0):
            raise ValueError(f"threshold must be a finite number > 0, got {threshold!r}")
        return float(np.mean(self.max_abs_z >= threshold))


def _correlation_factor(corr: np.ndarray, name: str) -> np.ndarray:
    """``F`` with ``F F^T`` the nearest correlation matrix to ``corr`` with no negative eigenvalue."""
    corr = _check_correlation(name, corr)
    # An estimated correlation matrix need not be positive semi-definite: drop its negative
    # eigenvalues and give the result its unit diagonal back.
    w, U = np.linalg.eigh(corr)
    F = U * np.sqrt(np.clip(w, 0.0, None))
    return F / np.linalg.norm(F, axis=1, keepdims=True)


def studentized_z_null(corr_blocks: Sequence[npt.ArrayLike], n_groups: int | Sequence[int], rng: np.random.Generator,
                       n_sim: int = 20_000) -> StudentizedZNull:
    """The law of a z table whose error bars are estimated from few groups, by simulation.

    The table is made of independent blocks (e.g. one per sample size). In block ``b`` each of its
    ``n_b`` compared quantities is a mean over ``G_b = n_groups[b]`` independent groups (data
    sets), and its error the standard error over those groups (``sd / sqrt(G_b)``, which the
    leave-one-group-out jackknife of a mean equals). If theory and error bars are right each
    ``z = (mean - theory) / se`` is Student-t with ``G_b - 1`` degrees of freedom, not standard
    normal: ``E z^2 = (G - 1) / (G - 3)``, and the tails are heavier. The z's of one block are
    correlated through the groups they share (``corr_blocks[b]``, their correlation matrix). Each
    simulated table draws ``G_b`` normal group vectors with that correlation per block and forms
    the z's as above.

    corr_blocks : sequence of ``(n_b, n_b)`` correlation matrices (symmetric, unit diagonal,
    entries in ``[-1, 1]``; negative eigenvalues of an estimate are dropped);
    n_groups : int ``>= 4`` (every block) or one per block (``E z^2`` is finite from four groups on);
    rng : numpy Generator, the source of every draw; n_sim : int ``>= 100``, tables simulated.
    """
    if isinstance(corr_blocks, np.ndarray) and corr_blocks.ndim == 2:
        raise TypeError("corr_blocks must be a sequence of correlation matrices, got one matrix: pass [corr]")
    factors = [_correlation_factor(b, f"corr_blocks[{i}]") for i, b in enumerate(corr_blocks)]
    if not factors:
        raise ValueError("corr_blocks must hold at least one block")
    groups = [n_groups] * len(factors) if isinstance(n_groups, numbers.Integral) else list(n_groups)
    if len(groups) != len(factors):
        raise ValueError(f"n_groups must be an int or one per block ({len(factors)}), got {len(groups)}")
    for G in groups:
        if isinstance(G, bool) or not isinstance(G, numbers.Integral) or G < 4:
            raise ValueError(f"n_groups must be integers >= 4 (E z^2 is finite from four groups on), got {G!r}")
    check_generator("rng", rng)
    if isinstance(n_sim, bool) or not isinstance(n_sim, numbers.Integral) or n_sim < 100:
        raise ValueError(f"n_sim must be an integer >= 100, got {n_sim!r}")
    n = sum(F.shape[0] for F in factors)
    sum_z2, max_z = np.zeros(n_sim), np.zeros(n_sim)
    for F, G in zip(factors, groups):
        x = rng.standard_normal((n_sim, int(G), F.shape[1])) @ F.T  # (table, group, quantity)
        z = x.mean(1) / (x.std(1, ddof=1) / np.sqrt(G))
        sum_z2 += (z * z).sum(1)
        np.maximum(max_z, np.abs(z).max(1), out=max_z)
    return StudentizedZNull(n=n, dof=tuple(int(G) - 1 for G in groups), mean_z2=sum_z2 / n, max_abs_z=max_z)
