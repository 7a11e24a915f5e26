"""Critical sample sizes across sequence lengths and vocabularies, and power-law fits of them.

* :func:`critical_sample_sizes`: the thresholds ``P1`` (linear, continuous),
  ``P2`` (linear, crossover to copying) and ``P3`` (softmax, first order) of
  the saddle-point theories on a grid of ``(L, V)``, next to their closed
  forms.
* :func:`fit_power_law`: least squares of ``ln y`` on a constant and the logs
  of given regressors, with standard errors.
* :func:`separated_L_exponent`: the effective ``L``-exponent of one threshold at
  one ``V``, on the sizes where it is well separated from ``P1``.
* :func:`plugin_copy_share`, :func:`posterior_crossover`: the copy share of the
  plug-in posterior means at ``P``, and ``P2`` of that posterior itself (no
  saddle point): where the share reaches 1/2.
* :func:`fluct_and_posterior_crossovers`: the ``fluct`` saddle point's ``P2`` and the
  posterior's, the latter searched in a bracket around the former.
* :func:`fixed_variance_thresholds`, :func:`fixed_variance_identity`: the thresholds
  under the other likelihood convention (variance ``sigma^2`` fixed instead of
  ``sigma0^2 L``), and their deviation from M*'s thresholds rescaled by ``sigma^2/L``.
* :func:`shrinking_prior_crossovers`: ``P2`` of the posterior and of the mean-field
  saddle point when the logit prior variance shrinks like ``1/L``.

All numbers are float64; sample sizes are in sequences.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.optimize import brentq
from scipy.stats import t as student_t

from ..arguments import as_real_array, check_finite, check_instance, check_int, check_positive
from ..model.network import ModelSpec
from ..theory import linear as lt
from ..theory import softmax as st
from ..theory.linear import copy_share
from ..theory.linear_marginal import plugin_posterior_moments

__all__ = [
    "THRESHOLDS",
    "FixedVarianceThresholds",
    "PowerLawFit",
    "ShrinkingPriorCrossovers",
    "ThresholdTable",
    "critical_sample_sizes",
    "fit_power_law",
    "fixed_variance_identity",
    "fixed_variance_thresholds",
    "fluct_and_posterior_crossovers",
    "plugin_copy_share",
    "posterior_crossover",
    "separated_L_exponent",
    "shrinking_prior_crossovers",
]

#: names of the thresholds :func:`critical_sample_sizes` computes, with their definition
THRESHOLDS = {
    "P1_mean_field": "linear: symmetric point unstable, mean-field action (exact root of det H)",
    "P1_map": "linear: symmetric point unstable, MAP action",
    "P1_leading": "linear: the leading-order closed form sigma0^2 V^2 [1 + (V-1)/L + 1/(omega sigma_b^2 V^2)]",
    "P2_mean_field": "linear: copy share of the global minimum = 1/2, mean-field action",
    "P2_fluct": "linear: copy share of the global minimum = 1/2, one-shell fluct action",
    "P2_map": "linear: copy share of the global minimum = 1/2, MAP action",
    "P2_analytic_mean_field": "linear: closed form sigma0^2 L^{3/2} V / (sigma_G sqrt(omega (V-1)))",
    "P2_analytic_fluct": "linear: closed form, positive root of the fluct quadratic (-> L^2 V/(V-1))",
    "P3_mean_field": "softmax: equal action of the pooling and copy minima, mean-field action",
    "P3_map": "softmax: equal action of the two minima, MAP action",
    "P3_energy": "softmax: equal action of the two minima, large-P energy action",
    "P3_leading": "softmax: leading-order closed form of the energy action (NaN below L = 2 e^3 + 1)",
}


def _check_sizes(name: str, values, minimum: int) -> np.ndarray:
    a = as_real_array(name, values)
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-d sequence of integers, got shape {a.shape}")
    check_finite(name, a)
    if np.any(a != np.round(a)) or np.any(a < minimum):
        raise ValueError(f"{name} must contain integers >= {minimum}, got {values!r}")
    return a.astype(int)


@dataclass(frozen=True)
class ThresholdTable:
    """:func:`critical_sample_sizes` result.

    L, V : int arrays ``(n,)``, the pairs (all combinations with ``V < L``);
    values : dict name -> float array ``(n,)`` (see :data:`THRESHOLDS`); an entry
    is NaN exactly where ``exists[name]`` is False (no such transition at that
    ``(L, V)``: no coexistence of two softmax minima, no root of a closed form, or
    no crossover to locate because the copy share is already above 1/2 at ``P1``,
    e.g. ``L = 16, V = 12``).
    """

    L: np.ndarray
    V: np.ndarray
    values: dict
    exists: dict


def critical_sample_sizes(L_values: npt.ArrayLike, V_values: npt.ArrayLike, names: Sequence[str] | None = None,
                          **spec_kwargs: float) -> ThresholdTable:
    """Thresholds of the saddle-point theories for every ``(L, V)`` with ``V < L``.

    Parameters
    ----------
    L_values : sequence of int >= 3
    V_values : sequence of int >= 2
    names : sequence of str or None
        Keys of :data:`THRESHOLDS` to compute (default: all).
    **spec_kwargs
        Other ``ModelSpec`` fields (``sigma_G``, ``sigma_b``,
        ``omega``, ``sigma0_sq``); cyclic task.

    Returns
    -------
    ThresholdTable
    """
    Ls = _check_sizes("L_values", L_values, 3)
    Vs = _check_sizes("V_values", V_values, 2)
    names = list(THRESHOLDS) if names is None else list(names)
    for n in names:
        if n not in THRESHOLDS:
            raise ValueError(f"names must be keys of THRESHOLDS {sorted(THRESHOLDS)}, got {n!r}")
    pairs = [(L, V) for L in Ls for V in Vs if V < L]
    if not pairs:
        raise ValueError("V_values must contain a V < L for some L of L_values")
    values = {n: np.full(len(pairs), np.nan) for n in names}
    for i, (L, V) in enumerate(pairs):
        lin = ModelSpec(L=int(L), V=int(V), kind="linear", **spec_kwargs)
        soft = ModelSpec(L=int(L), V=int(V), kind="softmax", **spec_kwargs)
        for n in names:
            kind, what = n.split("_", 1)
            if n == "P1_leading":
                values[n][i] = lt.p1_analytic(lin, "mean_field", "leading")
            elif kind == "P1":
                values[n][i] = lt.p1_analytic(lin, what)
            elif n.startswith("P2_analytic"):
                values[n][i] = lt.p2_analytic(lin, what.split("_", 1)[1])
            elif kind == "P2":  # all pairs at once, below
                continue
            elif n == "P3_leading":
                values[n][i] = st.p3_leading_order(int(L), int(V), soft)
            else:
                try:
                    values[n][i] = st.first_order_point(soft, what).P3
                except ValueError as err:  # documented outcome: no coexistence window at this size
                    if "no coexistence" not in str(err):
                        raise
    linear = [ModelSpec(L=int(L), V=int(V), kind="linear", **spec_kwargs) for L, V in pairs]
    for n in names:
        if n.startswith("P2_") and not n.startswith("P2_analytic"):
            # NaN where copying dominates from the onset (no crossover): a documented outcome
            values[n] = lt.p2_numerical_many(linear, n.split("_", 1)[1], rtol=1e-4)
    exists = {n: np.isfinite(v) for n, v in values.items()}
    return ThresholdTable(L=np.array([p[0] for p in pairs]), V=np.array([p[1] for p in pairs]), values=values,
                          exists=exists)


@dataclass(frozen=True)
class PowerLawFit:
    """:func:`fit_power_law` result: ``ln y = coef[0] + sum_k coef[k] ln x_k``.

    names : ("const", regressor names...); coef, se : arrays ``(1 + n_regressors,)``
    (exponents and their ordinary least-squares standard errors, ``s^2 (X^T X)^{-1}``
    with ``s^2`` the residual variance on ``n - k`` degrees of freedom);
    se_jackknife : array ``(1 + n_regressors,)``, the delete-one jackknife standard
    errors (each point left out in turn; NaN where ``n - 1`` points do not determine
    the coefficients); residual_rms : root mean square of the residuals of ``ln y``
    (a description of the scatter, not an uncertainty of the exponents); n : number
    of points; dof : residual degrees of freedom ``n - k``.
    """

    names: tuple
    coef: np.ndarray
    se: np.ndarray
    se_jackknife: np.ndarray
    residual_rms: float
    n: int
    dof: int

    def exponent(self, name: str) -> tuple[float, float]:
        """``(exponent, OLS standard error)`` of the regressor ``name``."""
        i = self._index(name)
        return float(self.coef[i]), float(self.se[i])

    def larger_se(self, name: str) -> float:
        """The larger of the OLS and the jackknife standard error of the exponent ``name`` (the OLS one where
        the jackknife is NaN): the error a chapter quotes for a fit to a theory's thresholds, where the two
        measure different things (the curvature left by finite-size corrections, and the dependence on which
        sizes are fitted) and neither is a sampling error."""
        i = self._index(name)
        return float(np.fmax(self.se[i], self.se_jackknife[i]))

    def interval(self, name: str, level: float = 0.95) -> tuple[float, float]:
        """Two-sided Student-t confidence interval of the exponent ``name`` at ``level``.

        ``coef +- t_{dof}((1 + level)/2) se``: exact coverage for independent Gaussian
        scatter of ``ln y`` of constant variance; with few points (``dof = 1`` for three
        points and one regressor, ``t = 12.7`` at 95 %) it is honestly wide.
        """
        i = self._index(name)
        level = check_positive("level", level)
        if not level < 1:
            raise ValueError(f"level must lie in (0, 1), got {level}")
        h = float(student_t.ppf(0.5 + level / 2, self.dof)) * float(self.se[i])
        return float(self.coef[i]) - h, float(self.coef[i]) + h

    def summary(self, name: str, level: float = 0.95) -> dict:
        """The exponent of ``name`` with its errors, as a dict (a row of a table): ``exponent``,
        ``se`` (OLS), ``se_jackknife``, ``lo`` and ``hi`` (the :meth:`interval` at ``level``) and ``n``."""
        i = self._index(name)
        lo, hi = self.interval(name, level)
        return {"exponent": float(self.coef[i]), "se": float(self.se[i]), "se_jackknife": float(self.se_jackknife[i]),
                "lo": lo, "hi": hi, "n": self.n}

    def _index(self, name: str) -> int:
        if name not in self.names[1:]:
            raise ValueError(f"name must be one of {self.names[1:]}, got {name!r}")
        return self.names.index(name)


def fit_power_law(y: npt.ArrayLike, **regressors: npt.ArrayLike) -> PowerLawFit:
    """Least-squares fit of ``ln y = c + sum_k b_k ln x_k`` (a product of powers).

    y : array ``(n,)`` of positive values; regressors : name -> array ``(n,)`` of
    positive values (at least one; ``n`` must exceed the number of coefficients).
    The standard errors are the usual OLS ones, ``s^2 (X^T X)^{-1}`` with
    ``s^2`` the residual variance, and the delete-one jackknife ones (over the
    points, e.g. over the ``L`` values of a fit along ``L``). For independent
    Gaussian scatter of ``ln y`` the OLS errors are calibrated
    (:meth:`PowerLawFit.interval` covers the true exponent at its level). For
    deterministic ``y`` (thresholds of a theory) they are not sampling errors:
    they measure how far ``y`` is from an exact product of powers on this grid,
    i.e. the curvature that finite-size corrections leave, and the jackknife
    measures how much the exponent depends on which sizes are included.
    """
    y = as_real_array("y", y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-d, got shape {y.shape}")
    check_finite("y", y)
    if np.any(y <= 0):
        raise ValueError("y must be > 0 (a power law is fitted to ln y)")
    if not regressors:
        raise ValueError("fit_power_law needs at least one regressor")
    cols = [np.ones_like(y)]
    for name, x in regressors.items():
        x = as_real_array(name, x)
        if x.shape != y.shape:
            raise ValueError(f"{name} must have the shape of y {y.shape}, got {x.shape}")
        check_finite(name, x)
        if np.any(x <= 0):
            raise ValueError(f"{name} must be > 0")
        cols.append(np.log(x))
    X = np.stack(cols, axis=1)
    n, k = X.shape
    if n <= k:
        raise ValueError(f"y needs more points ({n}) than coefficients ({k})")
    ly = np.log(y)
    coef, *_ = np.linalg.lstsq(X, ly, rcond=None)
    resid = ly - X @ coef
    s2 = float(resid @ resid) / (n - k)
    cov = s2 * np.linalg.inv(X.T @ X)
    # delete-one jackknife: refit without each point; defined where the n - 1 points still determine the fit
    se_jack = np.full(k, np.nan)
    if n - 1 >= k:
        keep = ~np.eye(n, dtype=bool)
        loo = np.array([np.linalg.lstsq(X[kp], ly[kp], rcond=None)[0] for kp in keep])
        if all(np.linalg.matrix_rank(X[kp]) == k for kp in keep):
            se_jack = np.sqrt((n - 1) / n * ((loo - loo.mean(axis=0)) ** 2).sum(axis=0))
    return PowerLawFit(names=("const", *regressors), coef=coef, se=np.sqrt(np.diag(cov)), se_jackknife=se_jack,
                       residual_rms=float(np.sqrt(np.mean(resid**2))), n=n, dof=n - k)


def separated_L_exponent(table: ThresholdTable, name: str, V: int, *, min_ratio: float = 10.0,
                         min_points: int = 3) -> PowerLawFit | None:
    """Fit ``ln y = c + b ln L`` to the threshold ``name`` of ``table`` at vocabulary ``V``,
    on the sizes where it exceeds ``min_ratio`` times ``P1_mean_field``.

    The cut keeps the sizes where the threshold is well separated from the onset
    of pooling (the asymptotic argument for ``P2`` assumes pooling is
    established), so the exponent is the *effective* one at those sizes. Returns
    ``None`` when fewer than ``min_points`` sizes (at least 3) pass the cut.
    ``table`` must hold ``name`` and ``"P1_mean_field"``.
    """
    for needed in (name, "P1_mean_field"):
        if needed not in table.values:
            raise ValueError(f"name: table has no threshold {needed!r}; it holds {sorted(table.values)}")
    min_ratio = check_positive("min_ratio", min_ratio)
    min_points = check_int("min_points", min_points, 3)
    y = table.values[name]
    with np.errstate(invalid="ignore"):  # NaN thresholds (no transition) never pass the cut
        sel = (table.V == V) & (y > min_ratio * table.values["P1_mean_field"])
    if sel.sum() < min_points:
        return None
    return fit_power_law(y[sel], L=table.L[sel])


def plugin_copy_share(P: float, spec: ModelSpec, **moment_kwargs: float | None) -> float:
    """Copy share ``(L-1) E[q sign m] / (E|m| + (L-1) E[q sign m])`` of the plug-in posterior means at ``P``.

    The moments are those of :func:`copylib.theory.linear_marginal.plugin_posterior_moments`
    (keyword arguments, e.g. its quadrature grid, are passed on).
    """
    mom = plugin_posterior_moments(P, spec, **moment_kwargs)
    return float(copy_share(mom.abs_m, mom.q, spec.L))


def posterior_crossover(spec: ModelSpec, *, share: float = 0.5, P_bracket: tuple[float, float] = (10.0, 1e6),
                        rtol: float = 1e-3, **moment_kwargs: float | None) -> float:
    """``P`` at which the copy share of the plug-in posterior means reaches ``share``.

    The copy share of the posterior is ``(L-1) E[q sign m] / (E|m| + (L-1) E[q sign m])``
    with the moments of :func:`copylib.theory.linear_marginal.plugin_posterior_moments`
    (the posterior integrated over every order parameter, no saddle point): the
    posterior counterpart of :func:`copylib.theory.linear.p2_numerical`. Brent's root
    finder in ``ln P`` inside ``P_bracket``, to relative precision ``rtol`` in ``P``.

    Raises
    ------
    ArithmeticError
        If the share does not cross ``share`` inside ``P_bracket``.
    """
    share = check_positive("share", share)
    if not share < 1:
        raise ValueError(f"share must lie in (0, 1), got {share}")
    rtol = check_positive("rtol", rtol)
    lo, hi = (check_positive("P_bracket", p) for p in P_bracket)
    if not lo < hi:
        raise ValueError(f"P_bracket must be increasing, got {P_bracket!r}")

    def f(P):
        return plugin_copy_share(P, spec, **moment_kwargs) - share

    # Brent's method in ln P (the share is smooth and monotone near the crossover): about half the
    # evaluations of a bisection, each of which is a 4-d quadrature
    try:
        x = brentq(lambda lx: f(math.exp(lx)), math.log(lo), math.log(hi), xtol=0.5 * math.log1p(rtol), rtol=1e-12)
    except ValueError as err:  # brentq: f(a) and f(b) have the same sign
        raise ArithmeticError(f"the posterior copy share does not cross {share} inside P_bracket = {P_bracket}") from err
    return math.exp(x)


def fluct_and_posterior_crossovers(spec: ModelSpec, *, bracket: tuple[float, float] = (0.7, 1.4), rtol: float = 2e-3,
                                   saddle_rtol: float = 1e-4, **moment_kwargs: float | None) -> tuple[float, float]:
    """``(P2 of the fluct saddle point, P2 of the plug-in posterior)`` of a linear spec.

    The posterior crossover (:func:`posterior_crossover`, to relative precision
    ``rtol``) is searched in ``bracket`` times the ``fluct`` one
    (:func:`copylib.theory.linear.p2_numerical`, to ``saddle_rtol``): in the linear
    chapter the two lie within 15 %, and the default bracket ``(0.7, 1.4)`` leaves room
    on both sides. Raises ``ArithmeticError`` if the share does not cross inside it.
    """
    lo, hi = (check_positive("bracket", b) for b in bracket)
    if not lo < hi:
        raise ValueError(f"bracket must be increasing, got {bracket!r}")
    fl = lt.p2_numerical(spec, "fluct", rtol=saddle_rtol)
    post = posterior_crossover(spec, P_bracket=(lo * fl, hi * fl), rtol=rtol, **moment_kwargs)
    return fl, post


@dataclass(frozen=True)
class FixedVarianceThresholds:
    """:func:`fixed_variance_thresholds` result: thresholds with the likelihood variance held fixed.

    sigma_sq : the fixed variance ``sigma^2`` (so ``sigma0^2 = sigma_sq / L`` at each ``L``);
    L : int array ``(n_L,)``, the sizes; p1 : :class:`ThresholdTable` of ``P1_mean_field``
    and ``P1_leading`` on every ``(L, V)`` with ``V < L``; V : the vocabulary of the
    other thresholds; at_V : dict name -> float array ``(n_L,)``, one threshold per
    ``L`` at vocabulary ``V`` (NaN where it does not exist).
    """

    sigma_sq: float
    L: np.ndarray
    p1: ThresholdTable
    V: int
    at_V: dict


def fixed_variance_thresholds(L_values: npt.ArrayLike, V_values: npt.ArrayLike, sigma_sq: float, *, V: int = 4,
                              names: Sequence[str] = ("P2_mean_field", "P2_fluct", "P3_mean_field")) -> FixedVarianceThresholds:
    """Thresholds of M* under the fixed-variance convention ``sigma0^2 = sigma_sq / L``.

    Parameters
    ----------
    L_values : sequence of int >= 3
        Sizes; at each the likelihood temperature is ``sigma_sq / L``.
    V_values : sequence of int >= 2
        Vocabularies of the (cheap) onset ``P1`` (mean field and leading order).
    sigma_sq : float > 0
        The fixed likelihood variance per output entry.
    V : int >= 2
        Vocabulary of the other thresholds ``names`` (below every ``L``).
    names : sequence of str
        Keys of :data:`THRESHOLDS` other than the ``P1`` ones.

    Returns
    -------
    FixedVarianceThresholds
    """
    Ls = _check_sizes("L_values", L_values, 3)
    _check_sizes("V_values", V_values, 2)
    sigma_sq = check_positive("sigma_sq", sigma_sq)
    V = check_int("V", V, 2)
    if not (Ls > V).all():
        raise ValueError(f"V must be below every L of L_values, got V = {V}")
    names = list(names)
    for n in names:
        if n not in THRESHOLDS or n.startswith("P1"):
            raise ValueError(f"names must be keys of THRESHOLDS other than P1, got {n!r}")
    p1 = [critical_sample_sizes([L], V_values, ["P1_mean_field", "P1_leading"], sigma0_sq=sigma_sq / L) for L in Ls]
    table = ThresholdTable(L=np.concatenate([t.L for t in p1]), V=np.concatenate([t.V for t in p1]),
                           values={n: np.concatenate([t.values[n] for t in p1]) for n in p1[0].values},
                           exists={n: np.concatenate([t.exists[n] for t in p1]) for n in p1[0].exists})
    at_V = {n: np.full(Ls.size, np.nan) for n in names}
    for i, L in enumerate(Ls):
        if names:
            one = critical_sample_sizes([L], [V], names, sigma0_sq=sigma_sq / L)
            for n in names:
                at_V[n][i] = one.values[n][0]
    return FixedVarianceThresholds(sigma_sq=sigma_sq, L=Ls, p1=table, V=V, at_V=at_V)


def fixed_variance_identity(fixed: FixedVarianceThresholds, L_values: npt.ArrayLike) -> np.ndarray:
    """Relative deviations of fixed-variance thresholds from M*'s thresholds times ``sigma^2/L``.

    Every threshold of the plug-in theory is proportional to ``sigma0^2``, so at each
    ``L`` the fixed-variance threshold must equal M*'s (``sigma0^2 = 1``) times
    ``sigma_sq / L``. For each ``L`` of ``L_values`` (a subset of ``fixed.L``) this
    recomputes M*'s ``P1_mean_field`` and the thresholds of ``fixed.at_V`` at
    ``fixed.V`` and returns ``fixed / (M* sigma_sq / L) - 1``, an array
    ``(len(L_values), 1 + len(fixed.at_V))`` (columns: ``P1_mean_field``, then
    ``fixed.at_V`` in order): zero up to the root finders' tolerances.
    """
    check_instance("fixed", fixed, FixedVarianceThresholds)
    Ls = _check_sizes("L_values", L_values, 3)
    if not np.isin(Ls, fixed.L).all():
        raise ValueError(f"L_values must be sizes of fixed.L {fixed.L.tolist()}, got {Ls.tolist()}")
    names = ["P1_mean_field", *fixed.at_V]
    mstar = critical_sample_sizes(Ls, [fixed.V], names)
    out = np.empty((Ls.size, len(names)))
    for i, L in enumerate(Ls):
        j = int(np.flatnonzero(fixed.L == L)[0])
        here = [fixed.p1.values["P1_mean_field"][(fixed.p1.L == L) & (fixed.p1.V == fixed.V)][0]]
        here += [fixed.at_V[n][j] for n in fixed.at_V]
        out[i] = np.array(here) / (np.array([mstar.values[n][i] for n in names]) * fixed.sigma_sq / L) - 1
    return out


@dataclass(frozen=True)
class ShrinkingPriorCrossovers:
    """:func:`shrinking_prior_crossovers` result, linear attention with ``sigma_G^2 = scale / L``.

    L : int array ``(n,)``; posterior, fluct, mean_field : float arrays ``(n,)``, ``P2`` of
    the plug-in posterior, of the ``fluct`` and of the mean-field saddle point;
    local_posterior, local_mean_field : float arrays ``(n-1,)``, local ``L``-exponents
    ``d ln P2 / d ln L`` between neighbouring sizes.
    """

    L: np.ndarray
    posterior: np.ndarray
    fluct: np.ndarray
    mean_field: np.ndarray
    local_posterior: np.ndarray
    local_mean_field: np.ndarray


def shrinking_prior_crossovers(L_values: npt.ArrayLike, *, scale: float = 32.0, V: int = 4, rtol: float = 2e-3,
                               **moment_kwargs: float | None) -> ShrinkingPriorCrossovers:
    """``P2`` of linear attention when the logit prior variance shrinks as ``sigma_G^2 = scale / L``.

    At each ``L`` (int >= 3, at least 2 sizes, increasing): the ``fluct`` and the
    mean-field saddle points (:func:`copylib.theory.linear.p2_numerical`, to ``1e-4``)
    and the plug-in posterior's crossover (:func:`fluct_and_posterior_crossovers`,
    searched in ``(0.7, 1.4)`` times the ``fluct`` one, to ``rtol``; ``moment_kwargs``,
    e.g. the quadrature grid, are passed on). ``scale`` > 0 sets where the prior
    equals M*'s (``L = scale``); ``V`` (2 <= V < min L) the vocabulary.
    """
    Ls = _check_sizes("L_values", L_values, 3)
    if Ls.size < 2 or not (np.diff(Ls) > 0).all():
        raise ValueError(f"L_values must hold at least 2 increasing sizes, got {Ls.tolist()}")
    scale = check_positive("scale", scale)
    V = check_int("V", V, 2)
    if not V < Ls.min():
        raise ValueError(f"V must be below every L of L_values, got V = {V}")
    fl, post, mf = [], [], []
    for L in Ls:
        sp = ModelSpec(L=int(L), V=V, kind="linear", sigma_G=float(np.sqrt(scale / L)))
        f, p = fluct_and_posterior_crossovers(sp, rtol=rtol, **moment_kwargs)
        fl.append(f)
        post.append(p)
        mf.append(lt.p2_numerical(sp, "mean_field", rtol=1e-4))
    post, fl, mf = np.array(post), np.array(fl), np.array(mf)
    dlnL = np.diff(np.log(Ls))
    return ShrinkingPriorCrossovers(L=Ls, posterior=post, fluct=fl, mean_field=mf,
                                    local_posterior=np.diff(np.log(post)) / dlnL,
                                    local_mean_field=np.diff(np.log(mf)) / dlnL)

