"""The plug-in posterior of softmax attention (saddlepoint density), integrated over all its invariants.

For softmax attention the plug-in data action
(:func:`copylib.posterior.order_parameters.plugin_action`) depends on the logits ``g``
only through

::

    alpha_1 = sum_l u_l,   u_l = |a_l|^2,        gamma_1 = sum_l v_l,   v_l = A[l, l-1],

(``alpha_2 = gamma_2 = L`` for row-stochastic ``A``, cyclic task). Under the prior
the ``L`` rows of ``g`` are independent and identically distributed (the copy
position of each row is a relabelling), so the prior density of the pair
``Theta = (alpha_1, gamma_1)`` is the ``L``-fold convolution ``p0`` of the density of
one row's ``(u, v)``, and the plug-in posterior of ``Theta`` is exactly

::

    p(Theta | P) = p0(Theta) exp(-S(Theta; P)) / Z(P).

No saddle point over a one-parameter family is taken: everything below is a
two-dimensional integral over ``Theta``.

**The row cumulant generating function.** Write a row's logits as ``x`` (the
previous position) and ``eta`` (the other ``L - 1``), all ``N(0, sigma_G^2)``.
With ``shift = ln sum_j e^{eta_j}``, ``Psi = sum_j e^{2 eta_j}/(sum_j e^{eta_j})^2``
and ``t = x - shift``,

::

    v = sigmoid(t),    u = v^2 + Psi (1 - v)^2.

The cumulant generating function ``phi(lam) = ln E[exp(lam_1 u + lam_2 v)]`` is
computed with ``x`` integrated by the trapezoid rule on a fine ``t`` grid (the
density of ``t`` given ``eta`` is the Gaussian ``N(t + shift; 0, sigma_G^2)``) and
``eta`` by randomised quasi-Monte Carlo (scrambled Sobol points, fixed once:
common random numbers, so ``phi`` is a smooth function of ``lam``). Given ``t``,
``u`` is linear in ``Psi``: the moments of ``(u, v)`` under the tilted measure
need only the tilted conditional moments ``E[Psi^j | t]``, ``j <= 4``.

**Saddlepoint (Daniels) density.** For ``Theta = L grad phi(lam)``,

::

    ln p0(Theta) = L phi(lam) - lam . Theta - ln(2 pi L) - (1/2) ln det Sigma(lam) + ln(1 + r(lam)/L),

``Sigma = Hess phi`` the tilted covariance of one row and ``r`` the standard
second-order term built from the third and fourth tilted cumulants ``k``:
``r = k_ijkl S^ij S^kl / 8 - k_ijk k_lmn (S^ij S^kl S^mn / 8 + S^il S^jm S^kn / 12)``
(``S^ij`` the inverse of ``Sigma``; McCullagh, *Tensor methods in statistics*,
1987, section 6.3). Without the last term (the default) the relative error is
``O(1/L)`` uniformly, including far in the tails (large deviations), where a
Gaussian or Edgeworth approximation fails; measured on the prior mean of the
copy weight (exactly ``1/L``) it is 0.9 %, 0.3 % and 0.1 % at ``L = 8, 16, 32``.
The term ``r`` is available (``correction=True``) but is unreliable where the
tilted row is close to degenerate or bimodal (see
:meth:`RowCumulants.log_prior_density`).

**The marginal of the copy weight.** ``lam`` is a global coordinate on ``Theta``
(``Theta = L grad phi`` is a bijection, ``dTheta = L^2 det Sigma dlam``). At fixed
``lam_1``, ``gamma_1`` increases with ``lam_2`` (``d gamma_1/d lam_2 = L Sigma_22``),
so ``(lam_1, gamma_1)`` are coordinates too, with
``d alpha_1 d gamma_1 = (L det Sigma / Sigma_22) d lam_1 d gamma_1``. The marginal
of ``c = gamma_1 / L`` is the integral over ``lam_1`` (trapezoid) of
``p(Theta) L det Sigma / Sigma_22``, each ``lam_1`` row interpolated onto a common
``c`` grid (monotone piecewise-cubic in ``gamma_1``, on the log scale: at large
positive ``lam_1`` the tilted row is bimodal and ``gamma_1`` jumps between
neighbouring ``lam_2``, where an ordinary cubic spline overshoots).

Functions: :func:`row_cumulants` (the prior of one row, independent of ``P``;
:func:`finite_size_cumulants` on a refinable default tilt grid),
:func:`copy_weight_marginal` (the posterior marginal of ``c`` at one ``P``, with
the conditional means of ``alpha_1`` and of the test loss),
:func:`marginal_branches` (local minima of ``-ln p(c)``, the barrier, basin free
energies and basin means), :func:`marginal_transition` (spinodals and ``P3`` from
equal basin free energies).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.interpolate import PchipInterpolator
from scipy.optimize import brentq
from scipy.special import expit, ndtri
from scipy.stats import qmc

from ..arguments import as_real_array, check_bool, check_generator, check_int, check_P_range, check_positive
from ..model.network import ModelSpec, check_spec
from .plugin_loss import row_stochastic_plugin_loss
from .reduced_action import downward_crossings, upward_crossings

__all__ = [
    "RowCumulants",
    "row_cumulants",
    "finite_size_cumulants",
    "CopyWeightMarginal",
    "copy_weight_marginal",
    "MarginalBranches",
    "marginal_branches",
    "log_odds_branches",
    "half_mass_P",
    "MarginalTransition",
    "marginal_transition",
    "default_tilts",
    "default_c_grid",
    "MarginalScan",
    "marginal_scan",
    "FiniteSizeRow",
    "finite_size_row",
]

_EDGE_NATS = 20.0  # the grid edge must lie this far below the maximum of the posterior (nats)
_RAW = {(a, b): k for k, (a, b) in enumerate((a, b) for a in range(5) for b in range(5 - a))}
_CENTRAL = [(a, b) for a in range(5) for b in range(5 - a) if a + b >= 2]  # the grid edge must lie this far below the maximum of the posterior


def _check_spec(spec) -> ModelSpec:
    return check_spec(spec, kind="softmax", theory="the softmax theory",
                      cyclic_because="the exact marginal uses gamma_2 = L (cyclic task)")


def _check_grid(name: str, x, n_min: int = 5) -> np.ndarray:
    x = as_real_array(name, x)
    if x.ndim != 1 or x.size < n_min:
        raise ValueError(f"{name} must be a 1-d array of at least {n_min} values, got shape {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError(f"{name} must contain only finite values")
    if not (np.diff(x) > 0).all():
        raise ValueError(f"{name} must be strictly increasing")
    return x.astype(np.float64)


# --------------------------------------------------------------------------
# the row cumulant generating function on a lambda grid
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class RowCumulants:
    """The cumulant generating function of one softmax row's ``(u, v)`` on a grid of tilts.

    ``u = |a|^2`` (squared norm of the row of attention weights) and ``v`` the
    weight on the previous position; logits i.i.d. ``N(0, sigma_G^2)``.

    Attributes
    ----------
    lam1, lam2 : arrays ``(n1,)``, ``(n2,)``
        The tilts conjugate to ``u`` and ``v`` (dimensionless; ``lam = 0`` is the prior).
    phi : array ``(n1, n2)``
        ``ln E[exp(lam1 u + lam2 v)]`` (nats).
    mean : array ``(n1, n2, 2)``
        Tilted means ``(E u, E v)``.
    cov : array ``(n1, n2, 2, 2)``
        Tilted covariance ``Sigma`` of ``(u, v)`` (the Hessian of ``phi``).
    correction : array ``(n1, n2)``
        The second-order saddlepoint term ``r`` (see the module docstring); the
        density of a sum of ``L`` rows is multiplied by ``1 + r/L``.
    t_edge : array ``(n1, n2)``
        Largest tilted weight of a point at either end of the ``t`` grid: the
        quadrature in ``t`` is complete where it is tiny (checked by
        :func:`copy_weight_marginal` wherever the posterior has mass).
    L : int
        Row length.
    sigma_G : float
        Prior scale of the logits.
    n_draws : int
        Quasi-Monte Carlo draws of the other ``L - 1`` logits.
    """

    lam1: np.ndarray
    lam2: np.ndarray
    phi: np.ndarray
    mean: np.ndarray
    cov: np.ndarray
    correction: np.ndarray
    t_edge: np.ndarray
    L: int
    sigma_G: float
    n_draws: int

    def log_prior_density(self, correction: bool = False) -> np.ndarray:
        """``ln p0(alpha_1, gamma_1)`` at ``(alpha_1, gamma_1) = L mean`` (Daniels), ``(n1, n2)``.

        With ``correction=True`` the second-order factor ``1 + r/L`` is included
        (clipped below at ``1e-3``). It is off by default: where the tilted row is
        close to degenerate or bimodal (far from the posterior's mass, e.g. at
        large positive ``lam1``) ``r`` is huge and the expansion is useless; where
        the posterior has its mass (``L = 32``) it changes means by ``~1e-4``, and
        the change it makes is a measure of the saddlepoint error there.
        """
        L = self.L
        lam1, lam2 = np.meshgrid(self.lam1, self.lam2, indexing="ij")
        s1, s2 = L * self.mean[..., 0], L * self.mean[..., 1]
        det = self.cov[..., 0, 0] * self.cov[..., 1, 1] - self.cov[..., 0, 1] ** 2
        out = L * self.phi - lam1 * s1 - lam2 * s2 - math.log(2 * math.pi * L) - 0.5 * np.log(det)
        if correction:
            out = out + np.log(np.maximum(1.0 + self.correction / L, 1e-3))
        return out


def default_tilts(L: int) -> tuple[np.ndarray, np.ndarray]:
    """The default tilt grids ``(lam1, lam2)`` of :func:`row_cumulants` for rows of length ``L``.

    ``lam1`` runs from ``-420`` to ``hi`` in steps of 5, ``lam2`` from ``-240`` to
    ``320`` in steps of 2 (dimensionless). ``hi = 40`` up to ``L = 48`` (with
    ``hi = 20``, the edge used before, the posterior density at ``L = 32`` reaches
    within 18-20 nats of its maximum on the edge for ``P <= 600``, which the
    coverage check rejects for some Sobol sets); beyond, the pooling state of a
    longer row sits at larger ``lam1`` (the prior of ``u = |a|^2`` narrows like
    ``1/L``), and ``hi`` grows by 5 every 8 positions (``70`` at ``L = 96``). :func:`copy_weight_marginal` checks at every ``P``
    that the grid covers the posterior and raises otherwise.
    """
    L = check_int("L", L, 3)
    hi = 40.0 + 5.0 * math.ceil(max(0, L - 48) / 8)
    return np.arange(-420.0, hi + 2.5, 5.0), np.linspace(-240.0, 320.0, 281)


def default_c_grid(L: int) -> np.ndarray:
    """The default copy-weight grid of :func:`copy_weight_marginal` for rows of length ``L``.

    From ``c_lo = min(0.01, 0.4 / L)`` (well below the prior mean ``1/L``) to
    ``0.7`` in steps of ``min(0.0005, c_lo / 20)``: ``linspace(0.01, 0.7, 1381)``
    up to ``L = 40``, finer and lower beyond, where the pooling basin is narrower.
    """
    L = check_int("L", L, 3)
    c_lo = min(0.01, 0.4 / L)
    step = min(5e-4, c_lo / 20)
    return np.linspace(c_lo, 0.7, int(round((0.7 - c_lo) / step)) + 1)


def _other_logits(L: int, sigma_G: float, n_draws: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """``shift`` and ``rho`` of ``n_draws`` scrambled-Sobol draws of ``L - 1`` logits."""
    u01 = qmc.Sobol(d=L - 1, scramble=True, seed=rng).random_base2(n_draws.bit_length() - 1)
    eta = sigma_G * ndtri(np.clip(u01, 1e-300, 1 - 1e-16))
    mx = eta.max(axis=1, keepdims=True)
    e = np.exp(eta - mx)
    s1 = e.sum(axis=1)
    s2 = (e**2).sum(axis=1)
    return np.log(s1) + mx[:, 0], s2 / s1**2


def _third_fourth(mom, cov):
    """Tilted central moments ``mom[a, b] = E[(u-Eu)^a (v-Ev)^b]`` -> the term ``r``."""
    Si = np.linalg.inv(cov)

    def k3(*idx):
        a = idx.count(0)
        return mom[a][3 - a]

    C = [[cov[..., 0, 0], cov[..., 0, 1]], [cov[..., 1, 0], cov[..., 1, 1]]]

    def k4(i, j, k, l):
        a = (i, j, k, l).count(0)
        return mom[a][4 - a] - C[i][j] * C[k][l] - C[i][k] * C[j][l] - C[i][l] * C[j][k]

    r4 = r13 = r23 = 0.0
    idx = range(2)
    for i in idx:
        for j in idx:
            for k in idx:
                for l in idx:
                    r4 = r4 + k4(i, j, k, l) * Si[..., i, j] * Si[..., k, l]
    for i in idx:
        for j in idx:
            for k in idx:
                a = k3(i, j, k)
                for l in idx:
                    for m in idx:
                        for n in idx:
                            b = a * k3(l, m, n)
                            r13 = r13 + b * Si[..., i, j] * Si[..., k, l] * Si[..., m, n]
                            r23 = r23 + b * Si[..., i, l] * Si[..., j, m] * Si[..., k, n]
    return r4 / 8 - r13 / 8 - r23 / 12


def row_cumulants(spec: ModelSpec, rng: np.random.Generator, *, n_draws: int = 8192,
                  lam1=None, lam2=None, t_step: float = 0.1, t_range=(-14.0, 10.0)) -> RowCumulants:
    """Tabulate the cumulant generating function of one softmax row on a ``(lam1, lam2)`` grid.

    Parameters
    ----------
    spec : ModelSpec
        ``kind="softmax"``, cyclic; uses ``L`` and ``sigma_G``.
    rng : numpy.random.Generator
        Seeds the scrambling of the Sobol points (the result is deterministic given ``rng``).
    n_draws : int
        Draws of the ``L - 1`` other logits, a power of 2 (``>= 16``).
    lam1, lam2 : 1-d increasing arrays, optional
        Tilt grids (dimensionless). Defaults :func:`default_tilts` (``linspace(-420, 40, 93)``
        and ``linspace(-240, 320, 281)`` up to ``L = 48``): they cover the posterior at
        ``L = 32, V = 4`` for ``P`` up to about 1500 and, at ``V = 4``, the transition
        region for ``16 <= L <= 96`` (:func:`copy_weight_marginal` checks the coverage
        at every ``P`` and raises if the grid is too small).
    t_step : float, ``0 < t_step <= sigma_G / 4``
        Spacing of the trapezoid grid in ``t = x - shift`` (logit units). The
        integrand is analytic, so the trapezoid rule converges exponentially: at
        ``L = 32`` halving the default step changes nothing at the 5th digit.
    t_range : pair of floats
        Range of that grid; it must hold the prior density of ``t`` (to ``1e-6``,
        else ``ValueError``). The defaults suit ``sigma_G`` of order one.

    Returns
    -------
    RowCumulants
        Cost ``O(n1 n_t n_draws + n1 n2 n_t)``: about two seconds at the defaults.
    """
    spec = _check_spec(spec)
    check_generator("rng", rng)
    n_draws = check_int("n_draws", n_draws, 16)
    if n_draws & (n_draws - 1):
        raise ValueError(f"n_draws must be a power of 2 (Sobol points), got {n_draws}")
    lam1 = _check_grid("lam1", default_tilts(spec.L)[0] if lam1 is None else lam1)
    lam2 = _check_grid("lam2", default_tilts(spec.L)[1] if lam2 is None else lam2)
    t_step = check_positive("t_step", t_step)
    try:
        t_lo, t_hi = (float(x) for x in t_range)
    except (TypeError, ValueError):
        raise ValueError(f"t_range must be a pair (t_min, t_max), got {t_range!r}") from None
    if not (math.isfinite(t_lo) and math.isfinite(t_hi) and t_lo < t_hi):
        raise ValueError(f"t_range must satisfy t_min < t_max (finite), got {t_range!r}")
    n_t = int(round((t_hi - t_lo) / t_step)) + 1
    if n_t < 20:
        raise ValueError(f"t_step must give at least 20 grid points on t_range, got {n_t}")
    L, sG = spec.L, spec.sigma_G
    if L < 3:
        raise ValueError(f"spec.L must be >= 3 (for L = 2, u is a function of v and (u, v) has no density), got {L}")
    if t_step > sG / 4:
        raise ValueError(f"t_step must be <= sigma_G / 4 = {sG / 4:g} to resolve the logit density, got {t_step:g}")
    t = np.linspace(t_lo, t_hi, n_t)
    h = t[1] - t[0]
    sig = expit(t)
    w = (1.0 - sig) ** 2
    shift, rho = _other_logits(L, sG, n_draws, rng)
    logN = -0.5 * ((t[None, :] + shift[:, None]) / sG) ** 2 - math.log(math.sqrt(2 * math.pi) * sG)
    captured = h * np.exp(logN).sum() / n_draws
    if abs(captured - 1) > 1e-6:
        raise ValueError(
            f"t_range = {t_range!r} holds only {captured:.6f} of the prior density of t = x - shift; widen it"
        )
    R = np.stack([rho**j for j in range(5)])  # (5, k)
    n1, n2 = lam1.size, lam2.size
    t_edge = np.empty((n1, n2))
    phi = np.empty((n1, n2))
    mean = np.empty((n1, n2, 2))
    mom = [[np.empty((n1, n2)) for _ in range(5)] for _ in range(5)]

    def basis(mj):
        rj = [np.ones_like(t), *mj]
        cols = np.empty((t.size, len(_RAW)))
        for (aa, bb), col in _RAW.items():
            cu = sum(math.comb(aa, j) * sig ** (2 * (aa - j)) * w**j * rj[j] for j in range(aa + 1))
            cols[:, col] = cu * sig**bb
        return cols

    for i, l1 in enumerate(lam1):
        # tilted sum over the other logits, for every t: E[rho^j N(t + shift)] e^{l1 rho w}
        a = logN + (l1 * rho)[:, None] * w[None, :]
        m = a.max(axis=0)
        # einsum, not @: BLAS threads on a shared machine are ~50x slower here than a plain loop
        Wj = np.einsum("jk,kt->jt", R, np.exp(a - m))  # (5, n_t), times e^m / n_draws
        mj = Wj[1:] / Wj[0]  # E[rho^j | t], tilted
        lw = np.log(Wj[0]) + m + l1 * sig**2  # log weight of t, without the lam2 term
        # tilt in lam2
        lwt = lw[None, :] + lam2[:, None] * sig[None, :]
        mx = lwt.max(axis=1, keepdims=True)
        p = np.exp(lwt - mx)
        Z = p.sum(axis=1)
        phi[i] = np.log(Z * h) + mx[:, 0] - math.log(n_draws)
        p /= Z[:, None]
        t_edge[i] = np.maximum(p[:, 0], p[:, -1])
        # raw moments E[u^a v^b] from the conditional moments of rho given t:
        # u = sig^2 + w rho, so E[u^a | t] = sum_j C(a, j) sig^(2(a-j)) w^j E[rho^j | t]
        raw = np.einsum("nt,tm->nm", p, basis(mj))  # (n2, 15)
        Eu, Ev = raw[:, _RAW[(1, 0)]], raw[:, _RAW[(0, 1)]]
        mean[i, :, 0], mean[i, :, 1] = Eu, Ev
        for (aa, bb) in _CENTRAL:
            # central moment from raw ones (binomial expansion in both variables)
            acc = 0.0
            for j in range(aa + 1):
                for k in range(bb + 1):
                    acc = acc + (math.comb(aa, j) * math.comb(bb, k) * (-Eu) ** (aa - j) * (-Ev) ** (bb - k)
                                 * raw[:, _RAW[(j, k)]])
            mom[aa][bb][i] = acc
    cov = np.empty((n1, n2, 2, 2))
    cov[..., 0, 0], cov[..., 1, 1] = mom[2][0], mom[0][2]
    cov[..., 0, 1] = cov[..., 1, 0] = mom[1][1]
    correction = _third_fourth(mom, cov)
    return RowCumulants(lam1=lam1, lam2=lam2, phi=phi, mean=mean, cov=cov, correction=correction,
                        t_edge=t_edge, L=L, sigma_G=sG, n_draws=n_draws)


def finite_size_cumulants(L: int, V: int, rng: np.random.Generator, *, refine: int = 1,
                          **kwargs) -> tuple[ModelSpec, RowCumulants]:
    """The cyclic softmax spec of size ``L``, ``V`` and its :func:`row_cumulants` on a refinable tilt grid.

    The tilt grids are :func:`default_tilts` ``(L)`` as ``linspace`` grids over the
    same range with the spacing divided by ``refine`` (an integer >= 1), so every
    point of the ``refine = 1`` grid is also a point of the refined grid: a grid
    refinement measures the interpolation error of the marginal (the finite-size
    table of the softmax chapter). ``kwargs`` go to :func:`row_cumulants`
    (``n_draws``, ``t_step``, ``t_range``; not the tilt grids).
    """
    refine = check_int("refine", refine, 1)
    if {"lam1", "lam2"} & set(kwargs):
        raise TypeError("finite_size_cumulants sets the tilt grids lam1, lam2 itself (use refine)")
    spec = ModelSpec(L=check_int("L", L, 3), V=check_int("V", V, 2), kind="softmax")
    grids = {name: np.linspace(g[0], g[-1], refine * (g.size - 1) + 1)
             for name, g in zip(("lam1", "lam2"), default_tilts(spec.L))}
    return spec, row_cumulants(spec, rng, **grids, **kwargs)


# --------------------------------------------------------------------------
# the posterior marginal of the copy weight
# --------------------------------------------------------------------------


def _check_cumulants(cum, spec) -> RowCumulants:
    if not isinstance(cum, RowCumulants):
        raise TypeError(f"cumulants must be a RowCumulants (make it with row_cumulants), got {type(cum).__name__}")
    if cum.L != spec.L or cum.sigma_G != spec.sigma_G:
        raise ValueError(
            f"cumulants were made for L = {cum.L}, sigma_G = {cum.sigma_G}; spec has L = {spec.L}, "
            f"sigma_G = {spec.sigma_G}"
        )
    return cum


def _data_action(a1, g1, P, spec):
    """``plugin_action(alpha_1, L, gamma_1, L, P, spec)`` in plain numpy (same terms)."""
    L, V = spec.L, spec.V
    eps = V * spec.kappa / P
    return (V * (V - 1) / 2 * np.log1p(a1 / eps) + V / 2 * np.log1p(L / eps)
            - P / (2 * spec.sigma_sq * V) * ((V - 1) * g1**2 / (a1 + eps) + L**2 / (L + eps)))


@dataclass(frozen=True)
class CopyWeightMarginal:
    """The plug-in marginal of the copy weight ``c = gamma_1 / L`` at one ``P``.

    Attributes
    ----------
    P : float or None
        Number of training sequences (``None``: the prior).
    c : array ``(n_c,)``
        Grid of copy weights.
    log_density : array ``(n_c,)``
        ``ln p(c)``, normalised so that the trapezoid integral of ``exp`` over the
        ``c`` grid is 1 (i.e. conditional on ``c`` in the grid's range: choose the
        range to hold the mass).
    alpha_1 : array ``(n_c,)``
        ``E[alpha_1 | c]``.
    loss : array ``(n_c,)``
        ``E[loss | c]``: test loss per position of the attention with its plug-in
        readout (:func:`copylib.theory.softmax.state_loss`'s definition); ``nan`` for ``P = None``.
    edge : float
        Largest log density on the boundary of the tilt grid relative to the
        maximum over the grid, both over the points whose ``c`` lies in the range of
        the ``c`` grid (nats, ``<= 0``): the grid covers the posterior if it is well
        below zero.
    """

    P: float | None
    c: np.ndarray
    log_density: np.ndarray
    alpha_1: np.ndarray
    loss: np.ndarray
    edge: float

    @property
    def potential(self) -> np.ndarray:
        """The effective potential ``Omega(c) = -ln p(c)`` (nats), shifted to minimum 0."""
        Omega = -self.log_density
        return Omega - Omega.min()

    def mean(self, what: str = "c", lo: float = -np.inf, hi: float = np.inf) -> float:
        """Posterior mean of ``what`` in ``{"c", "alpha_1", "loss"}`` over ``lo <= c < hi``."""
        if what not in ("c", "alpha_1", "loss"):
            raise ValueError(f"what must be 'c', 'alpha_1' or 'loss', got {what!r}")
        val = self.c if what == "c" else getattr(self, what)
        p = np.exp(self.log_density - self.log_density.max()) * ((self.c >= lo) & (self.c < hi))
        return float(np.trapezoid(p * val, self.c) / np.trapezoid(p, self.c))

    def var(self) -> float:
        """Posterior variance of the copy weight ``c`` (the susceptibility of the copy order parameter)."""
        p = np.exp(self.log_density - self.log_density.max())
        mean = np.trapezoid(p * self.c, self.c) / np.trapezoid(p, self.c)
        return float(np.trapezoid(p * (self.c - mean) ** 2, self.c) / np.trapezoid(p, self.c))

    def mass(self, lo: float = -np.inf, hi: float = np.inf) -> float:
        """Posterior probability of ``lo <= c < hi`` (trapezoid rule on the grid)."""
        p = np.exp(self.log_density) * ((self.c >= lo) & (self.c < hi))
        return float(np.trapezoid(p, self.c))


def _log_line_density(cum: RowCumulants, correction: bool) -> np.ndarray:
    """``ln`` of the prior density in the coordinates ``(lam1, gamma_1)``, on the tilt grid."""
    det = cum.cov[..., 0, 0] * cum.cov[..., 1, 1] - cum.cov[..., 0, 1] ** 2
    return cum.log_prior_density(correction) + np.log(cum.L * det / cum.cov[..., 1, 1])


def _lines(cum: RowCumulants, c: np.ndarray, correction: bool):
    """``(Y0, A)``, each ``(n1, n_c)``: the log prior density in ``(lam1, gamma_1)`` and ``alpha_1``
    on every line ``lam1 = const`` at ``gamma_1 = L c`` (monotone piecewise-cubic interpolation in
    ``gamma_1``, which never overshoots the tabulated values;
    ``Y0 = -inf`` where the line does not reach ``c``). Cached on ``cum`` (it does not depend on ``P``)."""
    key = (hash(c.tobytes()), c.size, bool(correction))
    cache = cum.__dict__.setdefault("_lines_cache", {})
    if key in cache:
        return cache[key]
    L = cum.L
    a1 = L * cum.mean[..., 0]
    g1 = L * cum.mean[..., 1]
    logq0 = _log_line_density(cum, correction)
    gam = L * c
    n1 = cum.lam1.size
    Y0 = np.full((n1, c.size), -np.inf)
    A = np.zeros((n1, c.size))
    for i in range(n1):
        x = g1[i]
        keep = np.concatenate([[True], np.diff(x) > 0])  # strictly increasing (it is, up to rounding)
        x = x[keep]
        inside = (gam >= x[0]) & (gam <= x[-1])
        if inside.any():
            Y0[i, inside] = PchipInterpolator(x, logq0[i][keep])(gam[inside])
            A[i, inside] = PchipInterpolator(x, a1[i][keep])(gam[inside])
    for t in (Y0, A):
        t.setflags(write=False)
    if len(cache) >= 4:
        cache.pop(next(iter(cache)))
    cache[key] = (Y0, A)
    return Y0, A


def copy_weight_marginal(P, spec: ModelSpec, cumulants: RowCumulants, *, c_grid=None,
                         correction: bool = False, check_coverage: bool = True) -> CopyWeightMarginal:
    """The plug-in marginal of the copy weight at ``P`` (or of the prior).

    Parameters
    ----------
    P : float > 0 or None
        Number of training sequences; ``None`` gives the prior marginal (no data action).
    spec : ModelSpec
        Softmax, cyclic.
    cumulants : RowCumulants
        From :func:`row_cumulants` with the same ``L`` and ``sigma_G``.
    c_grid : 1-d increasing array in ``(0, 1)``, optional
        Default :func:`default_c_grid` (``linspace(0.01, 0.7, 1381)`` up to ``L = 40``).
    correction : bool
        Include the second-order saddlepoint term (see
        :meth:`RowCumulants.log_prior_density`; default off).
    check_coverage : bool
        Raise ``ValueError`` if the posterior density on the edge of the tilt grid
        is within 20 nats of its maximum (the grid would cut off mass), or if the
        ``t`` quadrature is cut off where the posterior has mass.

    Returns
    -------
    CopyWeightMarginal
    """
    spec = _check_spec(spec)
    cum = _check_cumulants(cumulants, spec)
    P = None if P is None else check_positive("P", P)
    correction = check_bool("correction", correction)
    check_coverage = check_bool("check_coverage", check_coverage)
    c = _check_grid("c_grid", default_c_grid(spec.L) if c_grid is None else c_grid)
    if c[0] <= 0 or c[-1] >= 1:
        raise ValueError(f"c_grid must lie in (0, 1), got [{c[0]}, {c[-1]}]")
    L = spec.L
    a1 = L * cum.mean[..., 0]
    g1 = L * cum.mean[..., 1]
    logq0 = _log_line_density(cum, correction)
    logq = logq0 if P is None else logq0 - _data_action(a1, g1, P, spec)
    # coverage: the density on the edges of the tilt grid, where those edges map into c_grid's range
    in_range = (g1 >= L * c[0]) & (g1 <= L * c[-1])
    masked = np.where(in_range, logq, -np.inf)
    top = masked.max()
    edge = float(max(masked[0].max(), masked[-1].max(), masked[:, 0].max(), masked[:, -1].max()) - top)
    if check_coverage and edge > -_EDGE_NATS:
        raise ValueError(
            f"the tilt grid of cumulants does not cover the posterior at P = {P}: the density on its edge is "
            f"only {-edge:.1f} nats below the maximum (need {_EDGE_NATS:g}); widen lam1/lam2 in row_cumulants"
        )
    heavy = logq > top - _EDGE_NATS
    if check_coverage and cum.t_edge[heavy].max() > 1e-6:
        raise ValueError(
            f"the t grid of cumulants is too short at P = {P}: a point at its end carries "
            f"{cum.t_edge[heavy].max():.1e} of the tilted weight where the posterior has mass; widen t_range"
        )
    # the P-independent part on the lines of constant gamma_1 = L c; the data action
    # is then evaluated exactly at (alpha_1 on the line, L c)
    Y0, A = _lines(cum, c, correction)
    Y = Y0 if P is None else Y0 - _data_action(A, L * c, P, spec)
    top_c = Y.max(axis=0)
    if not np.isfinite(top_c).all():
        raise ValueError("the tilt grid does not reach every point of c_grid; narrow c_grid or widen lam2")
    wts = np.exp(Y - top_c)  # trapezoid over lam1 at every c, in log space
    mass = np.trapezoid(wts, cum.lam1, axis=0)
    logd = np.log(mass) + top_c + math.log(L)  # d gamma_1 = L dc
    alpha = np.trapezoid(wts * A, cum.lam1, axis=0) / mass
    loss = (np.full_like(c, np.nan) if P is None
            # off the lines (Y0 = -inf, zero weight) alpha_1 is a placeholder that any loss multiplies by 0
            else np.trapezoid(wts * row_stochastic_plugin_loss(np.where(np.isfinite(Y0), A, 1.0), L * c, P, spec),
                              cum.lam1, axis=0) / mass)
    mx = logd.max()
    logd -= mx + math.log(np.trapezoid(np.exp(logd - mx), c))
    return CopyWeightMarginal(P=P, c=c, log_density=logd, alpha_1=alpha, loss=loss, edge=edge)


# --------------------------------------------------------------------------
# branches, barrier, free energies
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class MarginalBranches:
    """Local minima of the effective potential ``Omega(c) = -ln p(c)`` and their basins.

    Attributes
    ----------
    P : float or None
    minima : array ``(n_min,)``
        Copy weights of the local minima of ``Omega`` (ascending).
    barrier : float
        ``c*``, the maximum of ``Omega`` between the first (pooling) and the last
        (copy) minimum; ``nan`` with one minimum.
    barrier_height : tuple ``(from pooling, from copy)``
        ``Omega(c*) - Omega(minimum)`` in nats; ``nan`` with one minimum.
    free_energy : tuple ``(pooling, copy)``
        ``Omega_pool``, ``Omega_copy`` ``= -ln`` (posterior mass of ``c < c*`` resp. ``c >= c*``), nats.
    copy_weight, alpha_1, loss : tuples ``(pooling, copy)``
        Basin-conditional posterior means.
    """

    P: float | None
    minima: np.ndarray
    barrier: float
    barrier_height: tuple
    free_energy: tuple
    copy_weight: tuple
    alpha_1: tuple
    loss: tuple

    @property
    def n_minima(self) -> int:
        """Number of local minima of ``Omega``."""
        return int(self.minima.size)


def _local_minima(Omega, tol, max_nats):
    """Indices of interior local minima of ``Omega`` (shifted to minimum 0) that lie below ``max_nats``
    and whose depth (to the neighbouring maxima) exceeds ``tol``."""
    # the steps of Omega, 0 between equal values (also two infinite ones): each has the sign of the
    # comparison of its neighbours (IEEE subtraction of unequal numbers never gives 0)
    with np.errstate(invalid="ignore"):
        dOmega = np.where(Omega[1:] == Omega[:-1], 0.0, Omega[1:] - Omega[:-1])
    idx = upward_crossings(dOmega) + 1
    idx = idx[Omega[idx] < max_nats]
    maxima = downward_crossings(dOmega) + 1
    keep = []
    for i in idx:
        left = maxima[maxima < i]
        right = maxima[maxima > i]
        hl = Omega[left].max() - Omega[i] if left.size else np.inf
        hr = Omega[right].max() - Omega[i] if right.size else np.inf
        if min(hl, hr) > tol:
            keep.append(i)
    return np.array(keep, dtype=int)


def marginal_branches(marginal: CopyWeightMarginal, *, tol: float = 1e-6,
                      max_nats: float = 30.0) -> MarginalBranches:
    """Branches of the posterior marginal of ``c``: minima, barrier, basin free energies and means.

    Parameters
    ----------
    marginal : CopyWeightMarginal
    tol : float >= 0
        A local minimum of ``Omega`` counts only if it is more than ``tol`` nats below
        the nearest maxima on both sides (guards against rounding wiggles).
    max_nats : float > 0
        Only minima less than ``max_nats`` above the global minimum of ``Omega`` count
        (the far tails carry no mass and the quasi-Monte Carlo error of
        :func:`row_cumulants` grows there).

    Returns
    -------
    MarginalBranches
        With fewer than two minima every basin entry is ``nan`` (the global means
        are :meth:`CopyWeightMarginal.mean`).
    """
    if not isinstance(marginal, CopyWeightMarginal):
        raise TypeError(f"marginal must be a CopyWeightMarginal, got {type(marginal).__name__}")
    tol = check_positive("tol", tol, allow_zero=True)
    max_nats = check_positive("max_nats", max_nats)
    Omega, c = marginal.potential, marginal.c
    idx = _local_minima(Omega, tol, max_nats)
    mins = c[idx]
    nan2 = (math.nan, math.nan)
    if idx.size < 2:
        return MarginalBranches(P=marginal.P, minima=mins, barrier=math.nan, barrier_height=nan2,
                                free_energy=nan2, copy_weight=nan2, alpha_1=nan2, loss=nan2)
    i0, i1 = idx[0], idx[-1]
    k = i0 + int(np.argmax(Omega[i0:i1 + 1]))
    cs = float(c[k])
    heights = (float(Omega[k] - Omega[i0]), float(Omega[k] - Omega[i1]))
    basins = ((-np.inf, cs), (cs, np.inf))
    F = tuple(-math.log(marginal.mass(lo, hi)) for lo, hi in basins)
    mean = {w: tuple(marginal.mean(w, lo, hi) for lo, hi in basins) for w in ("c", "alpha_1")}
    loss = tuple(marginal.mean("loss", lo, hi) for lo, hi in basins) if marginal.P is not None else nan2
    return MarginalBranches(P=marginal.P, minima=mins, barrier=cs, barrier_height=heights, free_energy=F,
                            copy_weight=mean["c"], alpha_1=mean["alpha_1"], loss=loss)


@dataclass(frozen=True)
class MarginalTransition:
    """Spinodals and first-order point of the plug-in marginal of ``c``.

    Attributes
    ----------
    P3 : float
        Equal basin free energies (equal posterior mass on either side of the barrier).
    P_lower, P_upper : float
        The copy minimum of ``Omega(c)`` exists for ``P > P_lower``; the pooling
        minimum for ``P < P_upper``.
    at_P3 : MarginalBranches
        The branches at ``P3``.
    """

    P3: float
    P_lower: float
    P_upper: float
    at_P3: MarginalBranches


def log_odds_branches(marginal: CopyWeightMarginal, **kwargs) -> MarginalBranches:
    """:func:`marginal_branches` of the same posterior in the log-odds ``y = ln c/(1-c)``.

    The density of ``y`` is ``p(c) c (1-c)``: the minima and the barrier of its
    potential ``Omega(y) = -ln p(y)`` depend on the coordinate, the mass on either
    side of a dividing point does not. The branches are reported as copy
    weights. ``kwargs`` go to :func:`marginal_branches`.
    """
    if not isinstance(marginal, CopyWeightMarginal):
        raise ValueError(f"marginal must be a CopyWeightMarginal, got {type(marginal).__name__}")
    m = marginal
    in_y = CopyWeightMarginal(P=m.P, c=m.c, log_density=m.log_density + np.log(m.c * (1 - m.c)),
                              alpha_1=m.alpha_1, loss=m.loss, edge=m.edge)  # the potential depends only on the shape
    return marginal_branches(in_y, **kwargs)


def half_mass_P(threshold: float, spec: ModelSpec, cumulants: RowCumulants, *, P_range=(500.0, 700.0),
                xtol: float = 0.01, **kwargs) -> float:
    """The ``P`` in ``P_range`` where the plug-in marginal puts half its mass at ``c >= threshold``.

    With ``threshold`` the barrier ``c*`` at ``P3`` this is the free-energy ``P3``
    itself; other dividing points give the counterpart of a sampler's copy share.
    Brent's method to ``xtol`` in ``P``; ``P_range`` must bracket the crossing.
    ``kwargs`` (``c_grid``, ``check_coverage``) go to :func:`copy_weight_marginal`.
    """
    spec = _check_spec(spec)
    threshold = as_real_array("threshold", threshold)
    if threshold.ndim or not 0 < threshold < 1:
        raise ValueError(f"threshold must be a single copy weight in (0, 1), got {threshold}")
    lo, hi = check_P_range(P_range)
    xtol = check_positive("xtol", xtol)

    def excess(P):
        return copy_weight_marginal(P, spec, cumulants, **kwargs).mass(threshold) - 0.5

    if excess(lo) * excess(hi) > 0:
        raise ValueError(f"P_range {(lo, hi)} does not bracket the P where the mass at c >= {float(threshold)} "
                         "is one half")
    return float(brentq(excess, lo, hi, xtol=xtol))


def marginal_transition(spec: ModelSpec, cumulants: RowCumulants, *, P_range=(300.0, 1200.0),
                     n_scan: int = 141, xtol: float = 0.05, correction: bool = False) -> MarginalTransition:
    """Spinodals (where a local minimum of ``-ln p(c)`` disappears) and ``P3`` (equal basin masses).

    A geometric scan of ``n_scan`` sample sizes in ``P_range`` finds the interval
    with two minima (at the defaults consecutive sizes differ by 1 %: a
    coexistence window narrower than that can be missed); the spinodals are refined by bisection to ``xtol`` (in ``P``)
    and ``P3`` by brentq on ``Omega_copy - Omega_pool``, which decreases with ``P``.

    Parameters
    ----------
    spec : ModelSpec; cumulants : RowCumulants
    P_range : pair ``0 < P_min < P_max``
    n_scan : int >= 5
    xtol : float > 0
    correction : bool, see :func:`copy_weight_marginal`

    Returns
    -------
    MarginalTransition

    Raises
    ------
    ValueError
        If no interval with two minima lies strictly inside ``P_range``, or if the
        basin free energies do not cross inside it (then there is no first-order
        point in this sense).
    """
    spec = _check_spec(spec)
    cum = _check_cumulants(cumulants, spec)
    a, b = check_P_range(P_range)
    n_scan = check_int("n_scan", n_scan, 5)
    xtol = check_positive("xtol", xtol)
    correction = check_bool("correction", correction)

    def br(P):
        return marginal_branches(copy_weight_marginal(P, spec, cum, correction=correction))

    Ps = np.geomspace(a, b, n_scan)
    two = np.array([br(P).n_minima >= 2 for P in Ps])
    if not two.any():
        raise ValueError(f"no P in {P_range} with two minima of the marginal of c (no first-order transition)")
    i0, i1 = np.flatnonzero(two)[[0, -1]]
    if i0 == 0 or i1 == n_scan - 1:
        raise ValueError(f"the coexistence region touches the end of P_range = {P_range}; widen it")

    def bisect(p_one, p_two):
        """Bisection on ``n_minima >= 2``; returns (spinodal estimate, nearest P with two minima)."""
        while abs(p_two - p_one) > xtol:
            mid = 0.5 * (p_one + p_two)
            if br(mid).n_minima >= 2:
                p_two = mid
            else:
                p_one = mid
        return 0.5 * (p_one + p_two), p_two

    P_lo, lo = bisect(Ps[i0 - 1], Ps[i0])
    P_up, hi = bisect(Ps[i1 + 1], Ps[i1])

    def diff(P):
        f = br(P).free_energy
        return f[1] - f[0]

    if not diff(lo) > 0 > diff(hi):
        raise ValueError("the basin free energies do not cross inside the coexistence region")
    P3 = brentq(diff, lo, hi, xtol=xtol)
    return MarginalTransition(P3=float(P3), P_lower=float(P_lo), P_upper=float(P_up), at_P3=br(P3))


# --------------------------------------------------------------------------
# scans in P and the finite-size character of the jump
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class MarginalScan:
    """The plug-in marginal of ``c`` summarised on a set of sample sizes.

    Fields, arrays of shape ``(n_P,)`` unless stated:

    P : array
        The sample sizes, as given.
    mean, var : arrays
        Posterior mean and variance of ``c``.
    n_minima : int array
        Number of local minima of ``Omega(c) = -ln p(c)`` (see :func:`marginal_branches`).
    barrier_height : array ``(n_P, 2)``
        ``Omega(c*) - Omega(minimum)`` above the pooling (first) and the copy (last)
        minimum, nats; ``0`` with fewer than two minima.
    depth : array
        The smaller of the two: the depth of the shallower basin (``0`` with one minimum).
    barrier : array
        ``c*`` (``nan`` with one minimum).
    delta_F : array
        ``Omega_copy - Omega_pool`` (nats), the basins split at ``c*`` (``nan`` with one minimum),
        or at the fixed ``c_split`` if one was given (then ``+-inf`` where one side holds
        no mass in floating point).
    shoulder : array
        The smallest slope of ``Omega`` pointing the wrong way, ``min(min_{c > c_0} Omega'(c),
        min_{c < c_0} -Omega'(c))`` with ``c_0`` the global minimum, over the region
        ``Omega < max_nats`` (nats per unit of ``c``, finite differences on the grid). It
        is positive with one minimum, negative with two, and continuous in ``P``:
        its minimum over ``P`` decides whether two minima exist at any ``P``.
    """

    P: np.ndarray
    mean: np.ndarray
    var: np.ndarray
    n_minima: np.ndarray
    barrier_height: np.ndarray
    depth: np.ndarray
    barrier: np.ndarray
    delta_F: np.ndarray
    shoulder: np.ndarray


def _log_marginals(Ps, spec, cum, c, correction, check_coverage):
    """``ln p(c)`` (unnormalised) at every ``P`` of ``Ps``, ``(n_P, n_c)``; coverage checked as in
    :func:`copy_weight_marginal`. Vectorised over chunks of ``P``."""
    L = spec.L
    Y0, A = _lines(cum, c, correction)
    if check_coverage:
        a1, g1 = L * cum.mean[..., 0], L * cum.mean[..., 1]
        logq0 = _log_line_density(cum, correction)
        in_range = (g1 >= L * c[0]) & (g1 <= L * c[-1])
    out = np.empty((len(Ps), c.size))
    chunk = max(1, int(4e5 // Y0.size))  # small chunks: the temporaries stay in cache
    for k in range(0, len(Ps), chunk):
        Pc = np.asarray(Ps[k:k + chunk], dtype=np.float64)
        if check_coverage:
            logq = np.where(in_range, logq0[None] - _data_action(a1[None], g1[None], Pc[:, None, None], spec), -np.inf)
            top = logq.max(axis=(1, 2))
            edge = np.max([logq[:, 0].max(1), logq[:, -1].max(1), logq[:, :, 0].max(1), logq[:, :, -1].max(1)], axis=0)
            bad = edge - top > -_EDGE_NATS
            if bad.any():
                P_bad = Pc[bad][0]
                raise ValueError(
                    f"the tilt grid of cumulants does not cover the posterior at P = {P_bad}: the density on its edge "
                    f"is only {float((top - edge)[bad][0]):.1f} nats below the maximum (need {_EDGE_NATS:g}); "
                    "widen lam1/lam2 in row_cumulants")
            heavy = logq > (top - _EDGE_NATS)[:, None, None]
            if (heavy & (cum.t_edge[None] > 1e-6)).any():
                raise ValueError("the t grid of cumulants is too short where the posterior has mass; widen t_range")
        Y = Y0[None] - _data_action(A[None], (L * c)[None, None], Pc[:, None, None], spec)
        top_c = Y.max(axis=1)
        if not np.isfinite(top_c).all():
            raise ValueError("the tilt grid does not reach every point of c_grid; narrow c_grid or widen lam2")
        mass = np.trapezoid(np.exp(Y - top_c[:, None, :]), cum.lam1, axis=1)
        out[k:k + chunk] = np.log(mass) + top_c
    return out


def marginal_scan(P_values, spec: ModelSpec, cumulants: RowCumulants, *, c_grid=None, correction: bool = False,
                  check_coverage: bool = True, tol: float = 1e-6, max_nats: float = 30.0,
                  c_split: float | None = None) -> MarginalScan:
    """Mean, variance, minima, barrier and basin free energies of the marginal of ``c`` at many ``P``.

    The same quantities as :func:`copy_weight_marginal` followed by
    :func:`marginal_branches` (identical definitions and tolerances), computed for
    all ``P`` at once (vectorised; about ten times faster per ``P``), without the
    conditional means of ``alpha_1`` and of the loss.

    Parameters
    ----------
    P_values : 1-d array of ``P > 0`` (any order)
    spec : ModelSpec; cumulants : RowCumulants
    c_grid : 1-d increasing array in ``(0, 1)``, optional; default :func:`default_c_grid`
    correction, check_coverage : bool, see :func:`copy_weight_marginal`
    tol, max_nats : see :func:`marginal_branches`
    c_split : float in the range of ``c_grid``, optional
        If given, ``delta_F`` splits the basins at this fixed copy weight at every
        ``P`` (defined with one minimum too) instead of at each ``P``'s own barrier.

    Returns
    -------
    MarginalScan
    """
    spec = _check_spec(spec)
    cum = _check_cumulants(cumulants, spec)
    Ps = as_real_array("P_values", P_values)
    if Ps.ndim != 1 or Ps.size < 1:
        raise ValueError(f"P_values must be a non-empty 1-d array, got shape {Ps.shape}")
    if not (np.isfinite(Ps).all() and (Ps > 0).all()):
        raise ValueError("P_values must be finite and > 0")
    correction = check_bool("correction", correction)
    check_coverage = check_bool("check_coverage", check_coverage)
    tol = check_positive("tol", tol, allow_zero=True)
    max_nats = check_positive("max_nats", max_nats)
    c = _check_grid("c_grid", default_c_grid(spec.L) if c_grid is None else c_grid)
    if c[0] <= 0 or c[-1] >= 1:
        raise ValueError(f"c_grid must lie in (0, 1), got [{c[0]}, {c[-1]}]")
    if c_split is not None:
        c_split = as_real_array("c_split", c_split)
        if c_split.size != 1:
            raise ValueError(f"c_split must be a single number, got shape {c_split.shape}")
        c_split = float(c_split.reshape(()))
        if not c[0] < c_split < c[-1]:
            raise ValueError(f"c_split must lie inside the range of c_grid [{c[0]}, {c[-1]}], got {c_split}")
    logd = _log_marginals(Ps.astype(np.float64), spec, cum, c, correction, check_coverage)
    n = Ps.size
    mean, var, depth, cs, dF, sh = (np.empty(n) for _ in range(6))
    nmin = np.empty(n, dtype=int)
    heights = np.zeros((n, 2))
    for k in range(n):
        Omega = logd[k].max() - logd[k]
        p = np.exp(-Omega)
        Z = np.trapezoid(p, c)
        mean[k] = np.trapezoid(p * c, c) / Z
        var[k] = np.trapezoid(p * (c - mean[k]) ** 2, c) / Z
        dOmega = np.diff(Omega) / np.diff(c)
        k0 = int(np.argmin(Omega))
        low = (Omega[1:] < max_nats) & (Omega[:-1] < max_nats)
        right, left = dOmega[k0:][low[k0:]], -dOmega[:k0][low[:k0]]
        sh[k] = min(right.min() if right.size else np.inf, left.min() if left.size else np.inf)
        idx = _local_minima(Omega, tol, max_nats)
        nmin[k] = idx.size
        if c_split is not None:  # +-inf if one side holds no mass in floating point
            m_pool = np.trapezoid(p * (c < c_split), c)
            with np.errstate(divide="ignore"):
                dF[k] = np.log(m_pool) - np.log(max(Z - m_pool, 0.0))
        if idx.size < 2:
            depth[k], cs[k] = 0.0, math.nan
            if c_split is None:
                dF[k] = math.nan
            continue
        i0, i1 = idx[0], idx[-1]
        j = i0 + int(np.argmax(Omega[i0:i1 + 1]))
        heights[k] = Omega[j] - Omega[i0], Omega[j] - Omega[i1]
        depth[k], cs[k] = heights[k].min(), c[j]
        if c_split is None:
            m_pool = np.trapezoid(p * (c < c[j]), c)
            dF[k] = math.log(m_pool) - math.log(Z - m_pool)
    return MarginalScan(P=Ps.copy(), mean=mean, var=var, n_minima=nmin, barrier_height=heights, depth=depth,
                        barrier=cs, delta_F=dF, shoulder=sh)


@dataclass(frozen=True)
class FiniteSizeRow:
    """The jump of the plug-in marginal of ``c`` at one ``(L, V)``: see :func:`finite_size_row`.

    Attributes
    ----------
    L, V : int
    P_peak : float
        The sample size with the largest posterior variance of ``c`` on the coarse scan
        (the crossover, defined with or without two minima).
    scanned : tuple ``(P_a, P_b)``
        The range searched for two minima at the resolution ``step``.
    step : float
        Resolution in ``P`` of the search that decided whether two minima exist
        (the coarse scan's largest spacing there if it found them, else the fine scan's
        spacing): a coexistence window narrower than ``step`` can be missed.
    two_minima : bool
        Whether ``Omega(c)`` has two local minima at some scanned ``P``.
    max_depth : float
        Largest depth of the shallower basin over the evaluated sizes (nats; 0 if never two minima).
    shoulder : float
        Smallest shoulder slope of ``Omega(c)`` over the deciding scan (see
        :class:`MarginalScan`; nats per unit of ``c``): negative with two minima;
        positive, the margin by which the marginal misses a second minimum there
        (it carries the grid-level noise of ``Omega``).
    P_lower, P_upper : float
        Spinodals (bisected to ``xtol``); ``nan`` without two minima.
    P3 : float
        Equal basin free energies; ``nan`` without two minima or if the basin masses do
        not balance inside the coexistence window.
    barrier_height : tuple ``(pooling, copy)``
        At ``P3``, nats (``nan`` without ``P3``).
    barrier : float
        ``c*`` at ``P3``.
    slope : float
        ``d(Omega_copy - Omega_pool)/dP`` at ``P3`` with the basins split at the fixed ``c*``
        (per unit of ``P``; ``< 0``).
    """

    L: int
    V: int
    P_peak: float
    scanned: tuple
    step: float
    two_minima: bool
    max_depth: float
    shoulder: float
    P_lower: float
    P_upper: float
    P3: float
    barrier_height: tuple
    barrier: float
    slope: float

    @property
    def window(self) -> float:
        """Coexistence window over ``P3``: ``(P_upper - P_lower) / P3`` (``nan`` without ``P3``)."""
        return (self.P_upper - self.P_lower) / self.P3

    @property
    def sharpness(self) -> float:
        """``-P3 d(Omega_copy - Omega_pool)/dP`` at ``P3``: the change of the log-odds of the two basins
        per unit relative change of ``P`` (dimensionless; it grows like the number of rows
        in a first-order limit)."""
        return -self.P3 * self.slope


def finite_size_row(spec: ModelSpec, cumulants: RowCumulants, *, P_range=None, n_coarse: int = 61,
                    rel_step: float = 5e-4, xtol: float | None = None, correction: bool = False) -> FiniteSizeRow:
    """Locate the jump of the plug-in marginal of ``c`` and measure it at one ``(L, V)``.

    1. A coarse geometric scan of ``n_coarse`` sizes over ``P_range`` (coverage not
       checked here) finds the variance peak ``P_peak`` and any ``P`` with two minima.
    2. If it finds none, a fine linear scan with step ``rel_step * P_peak`` covers
       the crossover, the region where the variance of ``c`` is above half its peak
       (padded by one coarse step on each side): a coexistence window wider than
       that step cannot be missed there (one outside it would need a second
       variance peak).
    3. Spinodals by bisection on ``n_minima >= 2`` to ``xtol``, ``P3`` by brentq on
       ``Omega_copy - Omega_pool`` between them, the barrier at ``P3``, and the slope of
       ``Omega_copy - Omega_pool`` there, the basins split at the fixed ``c*`` of ``P3``
       (so that the motion of ``c*`` with ``P`` does not enter), from a straight
       line through five sizes spread over the middle half of the coexistence
       window around ``P3``.

    Parameters
    ----------
    spec : ModelSpec; cumulants : RowCumulants
    P_range : pair ``0 < P_min < P_max``, optional
        Default ``(6 L, 40 L)`` (it holds the transition at ``V = 4``, ``16 <= L <= 96``,
        for the default priors).
    n_coarse : int >= 11
        Default 61 (3 % steps over the default range).
    rel_step : float in ``(0, 0.1]``
        Fine-scan spacing relative to ``P_peak``.
    xtol : float > 0, optional
        Precision of spinodals and ``P3`` in ``P``; default ``rel_step * P_peak / 8``.
    correction : bool
        Include the second-order saddlepoint term (a measure of the saddlepoint error).

    Returns
    -------
    FiniteSizeRow

    Raises
    ------
    ValueError
        If the variance peak or the coexistence region touches the end of ``P_range``,
        or the tilt grid does not cover the posterior where it is refined.
    """
    spec = _check_spec(spec)
    cum = _check_cumulants(cumulants, spec)
    L = spec.L
    if P_range is None:
        P_range = (6.0 * L, 40.0 * L)
    a, b = check_P_range(P_range)
    n_coarse = check_int("n_coarse", n_coarse, 11)
    rel_step = check_positive("rel_step", rel_step)
    if rel_step > 0.1:
        raise ValueError(f"rel_step must be <= 0.1, got {rel_step}")
    correction = check_bool("correction", correction)
    if xtol is not None:
        xtol = check_positive("xtol", xtol)

    def scan(Ps, check=True):
        return marginal_scan(np.atleast_1d(np.asarray(Ps, dtype=float)), spec, cum, correction=correction,
                             check_coverage=check)

    Pc = np.geomspace(a, b, n_coarse)
    coarse = scan(Pc, check=False)
    i_peak = int(np.argmax(coarse.var))
    if i_peak in (0, n_coarse - 1):
        raise ValueError(f"the variance of c peaks at the end of P_range = {P_range}; widen it")
    P_peak = float(Pc[i_peak])
    xtol = rel_step * P_peak / 8 if xtol is None else xtol
    two = coarse.n_minima >= 2
    if two.any():
        Ps, found = Pc, two
        step = float(np.diff(Pc[np.flatnonzero(two).min() - 1:np.flatnonzero(two).max() + 2]).max())
        scanned = (a, b)
        max_depth = float(coarse.depth.max())
        shoulder = float(coarse.shoulder.min())
    else:
        # a fine linear scan over the crossover: where the variance is above half its peak (padded by one coarse step)
        half = coarse.var >= 0.5 * coarse.var[i_peak]
        j0 = j1 = i_peak
        while j0 > 0 and half[j0 - 1]:
            j0 -= 1
        while j1 < n_coarse - 1 and half[j1 + 1]:
            j1 += 1
        j0, j1 = max(j0 - 1, 0), min(j1 + 1, n_coarse - 1)
        step = rel_step * P_peak
        Ps = np.arange(Pc[j0], Pc[j1] + step / 2, step)
        fine = scan(Ps)
        found = fine.n_minima >= 2
        scanned = (float(Pc[j0]), float(Pc[j1]))
        max_depth = float(fine.depth.max())
        shoulder = float(fine.shoulder.min())
    nan2 = (math.nan, math.nan)
    if not found.any():
        return FiniteSizeRow(L=L, V=spec.V, P_peak=P_peak, scanned=scanned, step=step, two_minima=False,
                             max_depth=max_depth, shoulder=shoulder, P_lower=math.nan, P_upper=math.nan, P3=math.nan,
                             barrier_height=nan2, barrier=math.nan, slope=math.nan)
    i0, i1 = np.flatnonzero(found)[[0, -1]]
    if i0 == 0 or i1 == Ps.size - 1:
        raise ValueError(f"the coexistence region touches the end of the scanned range {scanned}; widen P_range")

    def n_min(P):
        return int(scan([P]).n_minima[0])

    def bisect(p_one, p_two):
        while abs(p_two - p_one) > xtol:
            mid = 0.5 * (p_one + p_two)
            if n_min(mid) >= 2:
                p_two = mid
            else:
                p_one = mid
        return 0.5 * (p_one + p_two), p_two

    P_lo, lo_two = bisect(float(Ps[i0 - 1]), float(Ps[i0]))
    P_up, hi_two = bisect(float(Ps[i1 + 1]), float(Ps[i1]))

    def dF(P):
        return float(scan([P]).delta_F[0])

    f_lo, f_hi = dF(lo_two), dF(hi_two)
    if not (f_lo > 0 > f_hi):
        return FiniteSizeRow(L=L, V=spec.V, P_peak=P_peak, scanned=scanned, step=step, two_minima=True,
                             max_depth=max_depth, shoulder=shoulder, P_lower=P_lo, P_upper=P_up, P3=math.nan,
                             barrier_height=nan2, barrier=math.nan, slope=math.nan)
    P3 = brentq(dF, lo_two, hi_two, xtol=xtol / 4)
    at = scan([P3])
    h = min((hi_two - lo_two) / 4, P3 - lo_two, hi_two - P3)
    P_fit = P3 + np.linspace(-h, h, 5)
    fixed = marginal_scan(P_fit, spec, cum, correction=correction, c_split=float(at.barrier[0]))
    slope = np.polyfit(P_fit, fixed.delta_F, 1)[0]
    return FiniteSizeRow(L=L, V=spec.V, P_peak=P_peak, scanned=scanned, step=step, two_minima=True,
                         max_depth=max(max_depth, float(at.depth[0])), shoulder=shoulder, P_lower=P_lo, P_upper=P_up, P3=float(P3),
                         barrier_height=tuple(float(x) for x in at.barrier_height[0]), barrier=float(at.barrier[0]),
                         slope=float(slope))
