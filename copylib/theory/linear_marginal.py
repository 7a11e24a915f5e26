"""The plug-in posterior of linear attention, integrated over the order parameters (no saddle point).

The linear counterpart of :mod:`copylib.theory.softmax_marginal`:

* :func:`integrated_moments`: posterior moments of ``(m, q)`` under
  ``exp(-S(m, q))`` for a reduced action of :mod:`copylib.theory.linear`,
  integrated on a grid (not its minimum): the quantity to compare with
  posterior samples when ``m*`` is not large compared with its spread.
* :func:`plugin_posterior_moments`: the same moments under the plug-in
  posterior integrated *exactly* over all ``L^2`` attention coordinates (four
  numbers carry the whole dependence; no saddle point anywhere).
* :func:`plugin_marginal`: the marginal density of the copy part ``Q``
  (or of ``|m|``) under that posterior, its modes and the barrier between them.
* :func:`plugin_posterior_switch`: a bisection in ``P`` for the switch of that
  marginal from the pooling to the copying mode.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..arguments import check_int, check_positive
from ..model.network import ModelSpec, check_spec
from .linear import global_minimum, hessian_at_origin, reduced_action
from .linear_action import ActionConstants, action_constants

__all__ = ["IntegratedMoments", "integrated_moments", "PluginMoments", "plugin_posterior_moments", "PluginMarginal",
           "plugin_marginal", "PluginSwitch", "plugin_posterior_switch"]


@dataclass(frozen=True)
class IntegratedMoments:
    """Moments of ``(m, q)`` under ``p(m, q) ∝ exp(-S(m, q))`` at one ``P``.

    rms_m = sqrt(E m^2); abs_m = E|m|; q = E[q sign m] (sign-invariant copy
    amplitude); var_m = E m^2 (the mean of m is 0 by symmetry); binder =
    1 - E m^4 / (3 (E m^2)^2) (0 for a Gaussian centred at 0, 2/3 for two sharp peaks).
    """

    P: float
    version: str
    rms_m: float
    abs_m: float
    q: float
    var_m: float
    binder: float


def integrated_moments(P: float, spec: ModelSpec, version: str = "fluct", *, n_m: int = 161, n_q: int = 61,
                       m_max: float = 4.0, q_widths: float = 12.0) -> IntegratedMoments:
    """Integrate ``exp(-S(m, q))`` on a rectangular grid (plain Riemann sum).

    The ``m`` grid is ``[-m_max, m_max]`` with ``n_m`` points; the ``q`` grid is
    symmetric, of half-width ``|q*| + q_widths * s_q`` where ``q*`` is the
    minimiser and ``s_q`` the Laplace width of ``q`` (at the minimum, or at the
    origin when ``m* = 0``). Both modes ``±(m*, q*)`` are covered. ``S`` for
    "fluct" is the ``r2``-saddle action (:func:`copylib.theory.linear.reduced_action`).
    """
    n_m, n_q = check_int("n_m", n_m, 3), check_int("n_q", n_q, 3)
    m_max, q_widths = check_positive("m_max", m_max), check_positive("q_widths", q_widths)
    r = global_minimum(P, spec, version)
    r_m, r_q = r.coordinates["m"], r.coordinates["q"]
    P = float(P)
    if r_m > 0:
        # Laplace width of q at the minimum: curvature along q by finite differences
        h = max(1e-6, 1e-3 * abs(r_q))
        S3 = reduced_action(r_m, np.array([r_q - h, r_q, r_q + h]), P, spec, version=version)
        curv = (S3[0] - 2 * S3[1] + S3[2]) / h**2
        s_q = 1 / np.sqrt(max(curv, 1e-300))
    else:
        s_q = 1 / np.sqrt(hessian_at_origin(P, spec, version)[1, 1])
    q_max = abs(r_q) + q_widths * s_q
    mg = np.linspace(-m_max, m_max, n_m)
    qg = np.linspace(-q_max, q_max, n_q)
    M, Q = np.meshgrid(mg, qg, indexing="ij")
    S = reduced_action(M, Q, P, spec, version=version)
    w = np.exp(-(S - S.min()))
    w /= w.sum()
    m2 = float((w * M**2).sum())
    m4 = float((w * M**4).sum())
    return IntegratedMoments(P=P, version=version, rms_m=float(np.sqrt(m2)), abs_m=float((w * np.abs(M)).sum()),
                             q=float((w * Q * np.sign(M)).sum()), var_m=m2, binder=1 - m4 / (3 * m2**2))


@dataclass(frozen=True)
class PluginMoments:
    """Moments of the plug-in posterior of linear attention at one ``P`` (:func:`plugin_posterior_moments`).

    rms_m = sqrt(E m^2); abs_m = E|m|; q = E[q sign m]; var_m = E m^2; var_q =
    E q^2 - (E[q sign m])^2 (the posterior variance of the copy amplitude with the
    sign gauge fixed by ``m > 0``); loss = the posterior mean of the test loss of
    ``A`` with its plug-in readout (:func:`copylib.theory.plugin_loss.plugin_loss`);
    binder = 1 - E m^4 / (3 (E m^2)^2); rho_row, rho_rest : posterior means of the
    row-sum and zero-row-sum transverse weights divided by their prior means
    (``1`` without data); edge_mass : the largest share of probability in the
    outermost grid cells of any coordinate (a check that the grid covers the posterior).
    """

    P: float
    rms_m: float
    abs_m: float
    q: float
    var_m: float
    var_q: float
    loss: float
    binder: float
    rho_row: float
    rho_rest: float
    edge_mass: float


def _weights(grids: dict, k: ActionConstants, eps: float, c: float) -> tuple[np.ndarray, np.ndarray]:
    """``exp(-(S - min S))`` of the plug-in action on the 4-d tensor grid ``(m, q, ln r2_row, ln r2_rest)``,
    and ``1 / (alpha_1 + eps)`` there (the posterior mean of the loss needs it).

    Only ``alpha_1 = m^2 + (L-1) q^2 + r2_row + r2_rest`` couples all four coordinates; every
    other term of ``S`` is built on the (at most 3-d) grid of the coordinates it depends on and
    added once, so the 4-d grid sees a handful of passes.
    """
    L, V, n_a, n_b = k.L, k.V, k.n_a, k.n_b
    m, q = grids["m"], grids["q"]
    ra, rb = np.exp(grids["row"]), np.exp(grids["rest"])
    g1 = m[:, None] + (L - 1) * q[None, :]
    a1 = ((m * m)[:, None] + (L - 1) * (q * q)[None, :] + eps)[:, :, None, None] + (ra[:, None] + rb[None, :])
    S = np.log(a1)
    S *= V * (V - 1) / 2
    inv_a1 = np.reciprocal(a1, out=a1)
    S -= inv_a1 * (c * (V - 1) * g1 * g1)[:, :, None, None]
    a2 = L * ((m * m)[:, None] + ra[None, :]) + eps  # alpha_2 + eps on (m, row)
    # every term in nats; the shell Jacobian r2^{n/2-1} d r2 = r2^{n/2} d ln r2
    S_m_row = (V / 2 * np.log(a2) - c * (L * m[:, None]) ** 2 / a2 + (m * m / (2 * k.s_p2))[:, None]
               + (ra / (2 * k.s_c2) - n_a / 2 * grids["row"])[None, :])
    S_q = (L - 1) * q * q / (2 * k.s_c2)
    S += S_m_row[:, None, :, None] + S_q[None, :, None, None]
    S += rb / (2 * k.s_c2) - n_b / 2 * grids["rest"]
    np.subtract(S.min(), S, out=S)
    return np.exp(S, out=S), inv_a1


def _plugin_grid(P, spec, *, n_m, n_q, n_row, n_rest, m_max, q_max, max_regrid, edge_tol) -> dict:
    """The adapted 4-d quadrature of :func:`plugin_posterior_moments` (validates its arguments).

    Returns a dict with the normalised weights ``w`` on the tensor grid (``m >= 0`` half-space,
    trapezoid end weight at ``m = 0``), their sum ``w3`` over ``ln r2_rest``, the 1-d marginals ``margs``,
    ``inv_a1 = 1 / (alpha_1 + eps)`` on the grid, the 1-d ``grids``, ``eps``, ``edge_mass``, the shell
    dimensions and the constants in ``k``.
    """
    spec = check_spec(spec, kind="linear", theory="copylib.theory.linear_marginal",
                      cyclic_because="the order-parameter reduction assumes the cyclic task")
    if spec.L < 4:
        raise ValueError(f"spec.L must be >= 4 for plugin_posterior_moments, got {spec.L}")
    P = check_positive("P", P)
    n_m, n_q = check_int("n_m", n_m, 5), check_int("n_q", n_q, 5)
    n_row, n_rest = check_int("n_row", n_row, 5), check_int("n_rest", n_rest, 5)
    m_max = check_positive("m_max", m_max)
    max_regrid = check_int("max_regrid", max_regrid, 0)
    edge_tol = check_positive("edge_tol", edge_tol)
    if not edge_tol < 1:
        raise ValueError(f"edge_tol must lie in (0, 1), got {edge_tol}")
    k = action_constants(spec)
    L, V, n_a, n_b = k.L, k.V, k.n_a, k.n_b
    if q_max is None:
        q_max = 12 * np.sqrt(k.s_c2 / (L - 1))
    q_max = check_positive("q_max", q_max)
    eps, c = V * k.kappa / P, P / (2 * k.sig2 * V)
    sd_a, sd_b = np.sqrt(2.0 / n_a), np.sqrt(2.0 / n_b)  # prior widths of ln r2 of each shell
    y_a, y_b = np.log(n_a * k.s_c2), np.log(n_b * k.s_c2)
    names = ("m", "q", "row", "rest")
    counts = dict(zip(names, (n_m, n_q, n_row, n_rest)))
    box = {"m": [0.0, m_max], "q": [-q_max, q_max], "row": [y_a - 10 * sd_a, y_a + 6 * sd_a],
           "rest": [y_b - 10 * sd_b, y_b + 6 * sd_b]}
    for _ in range(max_regrid + 1):
        grids = {n: np.linspace(*box[n], counts[n]) for n in names}
        w, inv_a1 = _weights(grids, k, eps, c)
        if box["m"][0] == 0.0:
            w[0] *= 0.5  # trapezoid end weight at m = 0, the mirror point of the symmetric full grid
        w /= w.sum()
        w3 = w.sum(axis=3)  # (m, q, row): the other marginals from it, not from the 4-d grid again
        margs = {"m": w3.sum(axis=(1, 2)), "q": w3.sum(axis=(0, 2)), "row": w3.sum(axis=(0, 1)),
                 "rest": np.einsum("ijkl->l", w)}
        ends = [margs[n][-1] for n in names] + [margs[n][0] for n in names if not (n == "m" and box["m"][0] == 0.0)]
        edge_mass = max(ends)
        changed = False
        for n in names:
            mg, (lo, hi) = margs[n], box[n]
            span = hi - lo
            low_open = not (n == "m" and lo == 0.0)
            if mg[-1] > edge_tol or (low_open and mg[0] > edge_tol):
                if mg[-1] > edge_tol:
                    box[n][1] = hi + 0.5 * span
                if low_open and mg[0] > edge_tol:
                    box[n][0] = max(lo - 0.5 * span, 0.0) if n == "m" else lo - 0.5 * span
                changed = True
                continue
            occupied = np.flatnonzero(mg > 1e-16)
            i0, i1 = max(occupied[0] - 2, 0), min(occupied[-1] + 2, counts[n] - 1)
            if (i1 - i0) < 0.4 * (counts[n] - 1):
                g = grids[n]
                box[n] = [0.0 if (n == "m" and i0 == 0) else g[i0], g[i1]]
                changed = True
        if not changed:
            break
    else:
        raise ArithmeticError(f"plugin_posterior_moments: the grid did not settle on the posterior at P = {P} "
                              f"within {max_regrid} changes (edge mass {edge_mass:.2g})")
    return dict(P=P, w=w, w3=w3, margs=margs, inv_a1=inv_a1, grids=grids, eps=eps, edge_mass=float(edge_mass),
                k=k, box=box)


def plugin_posterior_moments(P: float, spec: ModelSpec, *, n_m: int = 121, n_q: int = 41, n_row: int = 32,
                               n_rest: int = 24, m_max: float = 4.0, q_max: float | None = None, max_regrid: int = 16,
                               edge_tol: float = 1e-7) -> PluginMoments:
    """Moments of ``(m, q)`` under the plug-in posterior, integrated over every attention coordinate.

    The plug-in action (:func:`copylib.posterior.order_parameters.plugin_action`)
    depends on ``A`` only through ``alpha_1 = |A|^2``, ``alpha_2 = |A 1|^2``,
    ``gamma_1``, ``gamma_2``. Split ``A = m J/L + q (T - J/L) + A_row + A_rest`` with
    ``A_row`` in the ``L-1`` dimensional space of row-constant matrices with zero
    grand sum (``|A 1|^2`` sees it) and ``A_rest`` in the ``L^2 - L - 1`` dimensional
    rest (zero row sums, orthogonal to ``T``). Then exactly

        alpha_1 = m^2 + (L-1) q^2 + r2_row + r2_rest,   alpha_2 = L (m^2 + r2_row),
        gamma_1 = m + (L-1) q,                          gamma_2 = L m,

    with ``r2_row = |A_row|^2``, ``r2_rest = |A_rest|^2``. The Gaussian prior of ``A`` is
    isotropic with variance ``s_c^2 = sigma_G^2/L^2`` in both subspaces, so
    ``r2`` of an ``n``-dimensional shell has the prior density
    ``∝ r2^{n/2 - 1} exp(-r2/(2 s_c^2))``, and the posterior of
    ``(m, q, r2_row, r2_rest)`` is the prior of :func:`copylib.theory.linear.reduced_action`'s
    ``(m, q)`` times these two shell densities times ``exp(-S_data)``: the only
    approximation is the annealing of the data action.

    Quadrature: a 4-d tensor grid in ``m >= 0`` (the posterior is symmetric under
    ``(m, q) -> (-m, -q)`` and every returned moment is even under it), ``q``
    and ``ln r2`` of each shell, with trapezoid weights (they converge
    geometrically for these smooth, rapidly decaying densities). The grid is
    adapted: a coordinate whose outermost cells carry more than ``edge_tol`` of
    the mass is widened by half its span on that side, and a coordinate whose
    mass occupies less than 40 % of its span is shrunk around the occupied
    cells, up to ``max_regrid`` times in all.

    Parameters
    ----------
    P : float > 0
        Number of training sequences.
    spec : ModelSpec
        ``kind="linear"``, cyclic, ``L >= 4`` (for smaller ``L`` a shell has one
        or two directions and its very skewed density needs finer grids than these).
    n_m, n_q, n_row, n_rest : int >= 5
        Grid points along ``m``, ``q``, ``ln r2_row``, ``ln r2_rest``.
    m_max : float > 0
        Initial upper end of the ``m`` grid (which starts at ``0``).
    q_max : float > 0 or None
        Initial half-width of the ``q`` grid; ``None``: 12 prior standard
        deviations of ``q``, ``12 s_c / sqrt(L-1)``.
    max_regrid : int >= 0; edge_tol : float in (0, 1).

    Returns
    -------
    PluginMoments

    Raises
    ------
    ArithmeticError
        If the grid does not settle on the posterior within ``max_regrid`` changes.
    """
    g = _plugin_grid(P, spec, n_m=n_m, n_q=n_q, n_row=n_row, n_rest=n_rest, m_max=m_max, q_max=q_max,
                     max_regrid=max_regrid, edge_tol=edge_tol)
    P, w3, margs, grids, k = (g[n] for n in ("P", "w3", "margs", "grids", "k"))
    m, q, ra = grids["m"], grids["q"], np.exp(grids["row"])
    m2 = float(margs["m"] @ m**2)
    m4 = float(margs["m"] @ m**4)
    # q sign m: on the half-space m >= 0 the sign is +1, except at m = 0 where it is 0
    q_mean = float(np.sign(m) @ w3.sum(axis=2) @ q)
    return PluginMoments(
        P=P, rms_m=float(np.sqrt(m2)), abs_m=float(margs["m"] @ m), q=q_mean, var_m=m2,
        var_q=max(float(margs["q"] @ q**2) - q_mean**2, 0.0), loss=_posterior_loss(g), binder=1 - m4 / (3 * m2**2),
        rho_row=float(margs["row"] @ ra / (k.n_a * k.s_c2)),
        rho_rest=float(margs["rest"] @ np.exp(grids["rest"]) / (k.n_b * k.s_c2)),
        edge_mass=float(g["edge_mass"]),
    )


def _posterior_loss(g: dict) -> float:
    """The posterior mean of :func:`copylib.theory.plugin_loss.plugin_loss` on the grid of :func:`_plugin_grid`.

    With ``a = alpha + eps`` each of its two readout terms is ``alpha w^2 - 2 gamma w = -gamma^2 (1/a + eps/a^2)``
    at ``w = gamma / a``: on ``1^perp`` with ``(alpha_1, gamma_1)``, which needs the 4-d grid, and on ``1``
    with ``(alpha_2, gamma_2)``, a function of ``(m, r2_row)`` alone.
    """
    w, w3, grids, eps, k = g["w"], g["w3"], g["grids"], g["eps"], g["k"]
    L, V = k.L, k.V
    m, q = grids["m"], grids["q"]
    inv_a1 = g["inv_a1"]
    g1_sq = (m[:, None] + (L - 1) * q[None, :]) ** 2
    w_inv = w * inv_a1
    perp = (g1_sq * (w_inv.sum(axis=(2, 3)) + eps * np.einsum("ijkl,ijkl->ij", w_inv, inv_a1))).sum()
    inv_a2 = 1 / (L * ((m * m)[:, None] + np.exp(grids["row"])[None, :]) + eps)
    one = ((L * m[:, None]) ** 2 * (inv_a2 + eps * inv_a2**2) * w3.sum(axis=1)).sum()
    return float(1 - ((V - 1) * perp + one) / (L * V))  # n_T / L = 1: the cyclic task (checked in _plugin_grid)


@dataclass(frozen=True)
class PluginMarginal:
    """Marginal posterior density of one order parameter under the plug-in posterior (:func:`plugin_marginal`).

    x : grid of the coordinate (``"Q"``: the copy part ``(L-1) q sign m`` of ``gamma_1``;
    ``"m"``: ``|m|``); density : probability per unit ``x`` on the grid (its trapezoid
    integral is 1 up to the edge mass);
    modes : ``x`` of the local maxima of the density higher than ``1e-6`` of the largest,
    increasing; barrier : for two or more modes, ``ln(min(p_a, p_b) / p_dip)`` (nats) with
    ``p_a, p_b`` the two highest peaks and ``p_dip`` the lowest density between them (``0``
    for one mode); dip : ``x`` of that lowest point (``nan`` for one mode);
    log_weight_ratio : ``ln(mass above dip / mass below dip)`` (``nan`` for one mode), the
    free-energy difference of the two modes in nats (positive: the upper mode holds more);
    edge_mass : as in :class:`PluginMoments`.
    """

    P: float
    coordinate: str
    x: np.ndarray
    density: np.ndarray
    modes: np.ndarray
    barrier: float
    dip: float
    log_weight_ratio: float
    edge_mass: float


def plugin_marginal(P: float, spec: ModelSpec, coordinate: str = "Q", *, n_m: int = 81, n_q: int = 161,
                              n_row: int = 24, n_rest: int = 16, m_max: float = 4.0, q_max: float | None = None,
                              max_regrid: int = 16, edge_tol: float = 1e-7) -> PluginMarginal:
    """Marginal density of ``Q = (L-1) q sign m`` or of ``|m|`` under the plug-in posterior, and its modes.

    The same 4-d quadrature as :func:`plugin_posterior_moments` (the grid is
    adapted to the posterior in the same way), summed over the other three
    coordinates: the marginal on the grid of the chosen coordinate, exact up to
    quadrature error. Two modes with a dip between them are two coexisting
    posterior states (pooling, copying); ``barrier`` measures the dip in nats
    and ``log_weight_ratio`` the free-energy difference of the two states.
    Both depend on the coordinate (a density is not invariant under a change of
    variable; the barrier's size at fixed coordinate is what is compared across
    ``L`` and ``P``).

    Parameters
    ----------
    P : float > 0; spec : ModelSpec (linear, cyclic, ``L >= 4``)
    coordinate : {"Q", "m"}
    n_m, n_q, n_row, n_rest, m_max, q_max, max_regrid, edge_tol : see
        :func:`plugin_posterior_moments` (finer in ``q`` by default).

    Returns
    -------
    PluginMarginal
    """
    if not isinstance(coordinate, str) or coordinate not in ("Q", "m"):
        raise ValueError(f"coordinate must be 'Q' or 'm', got {coordinate!r}")
    g = _plugin_grid(P, spec, n_m=n_m, n_q=n_q, n_row=n_row, n_rest=n_rest, m_max=m_max, q_max=q_max,
                     max_regrid=max_regrid, edge_tol=edge_tol)
    L = g["k"].L
    if coordinate == "Q":
        x = (L - 1) * g["grids"]["q"]
        mass = g["margs"]["q"]
    else:
        x = g["grids"]["m"]
        mass = g["margs"]["m"]
    dx = x[1] - x[0]
    density = mass / (mass.sum() * dx)
    if coordinate == "m" and x[0] == 0.0:
        density[0] *= 2  # the point m = 0 carries the trapezoid's half cell of the one-sided grid
    top = density.max()
    inner = np.flatnonzero((density[1:-1] > density[:-2]) & (density[1:-1] >= density[2:])
                           & (density[1:-1] > 1e-6 * top)) + 1
    ends = [i for i in (0, x.size - 1) if density[i] > 1e-6 * top
            and density[i] > density[1 if i == 0 else x.size - 2]]
    peaks = np.sort(np.concatenate([inner, np.asarray(ends, dtype=int)])).astype(int)
    barrier, dip, lwr = 0.0, float("nan"), float("nan")
    if peaks.size >= 2:
        a, b = np.sort(peaks[np.argsort(density[peaks])[-2:]])
        j = a + int(np.argmin(density[a:b + 1]))
        barrier = float(np.log(min(density[a], density[b]) / density[j]))
        dip = float(x[j])
        lwr = float(np.log(mass[j + 1:].sum() + 0.5 * mass[j]) - np.log(mass[:j].sum() + 0.5 * mass[j]))
    return PluginMarginal(P=float(g["P"]), coordinate=coordinate, x=x, density=density, modes=x[peaks],
                          barrier=barrier, dip=dip, log_weight_ratio=lwr, edge_mass=g["edge_mass"])


@dataclass(frozen=True)
class PluginSwitch:
    """:func:`plugin_posterior_switch` result.

    P_lo, P_hi : the final bracket; modes_lo, modes_hi : the modes of the ``Q`` marginal at
    its ends; gap : the distance between the two modes that the bracket ends straddle
    (the largest-``Q`` mode at ``P_lo``, the smallest at ``P_hi``); bimodal : whether a
    two-mode marginal was found; marginal : the two-mode marginal closest to equal weights
    (``|log_weight_ratio|`` smallest) if ``bimodal``, else the marginal at ``P_hi``;
    n_eval : number of marginals computed.
    """

    P_lo: float
    P_hi: float
    modes_lo: np.ndarray
    modes_hi: np.ndarray
    gap: float
    bimodal: bool
    marginal: PluginMarginal
    n_eval: int


def plugin_posterior_switch(spec: ModelSpec, P_lo: float, P_hi: float, *, n_bisect: int = 12,
                            **grid: float | None) -> PluginSwitch:
    """Bisect ``[P_lo, P_hi]`` for the switch of the plug-in posterior from a pooling to a copying mode.

    The mode of the ``Q`` marginal (:func:`plugin_marginal`) moves from
    the pooling value at ``P_lo`` to the copying value at ``P_hi``. Each
    geometric midpoint is assigned to the end whose mode it is closer to, until
    a marginal with two modes is found (two coexisting posterior states) or
    ``n_bisect`` steps are done. If the switch is continuous, the gap between the
    modes at the bracket ends shrinks to the grid spacing; if it is a jump
    between two states, the marginals inside the window are bimodal. Once two
    modes are found, a bimodal midpoint is assigned by the sign of its
    ``log_weight_ratio`` (towards equal weights), a unimodal one as before; all
    ``n_bisect`` steps are done.

    Parameters
    ----------
    spec : ModelSpec (linear, cyclic, ``L >= 4``)
    P_lo, P_hi : floats, ``0 < P_lo < P_hi``; the ``Q`` marginal must be unimodal at both ends
    n_bisect : int >= 1
    grid : keyword arguments of :func:`plugin_marginal` (not ``coordinate``)

    Returns
    -------
    PluginSwitch
    """

    P_lo, P_hi = check_positive("P_lo", P_lo), check_positive("P_hi", P_hi)
    if not P_lo < P_hi:
        raise ValueError(f"P_lo must be < P_hi, got {P_lo} and {P_hi}")
    n_bisect = check_int("n_bisect", n_bisect, 1)
    if "coordinate" in grid:
        raise ValueError("coordinate is fixed to 'Q' for plugin_posterior_switch")

    def marg(P):
        return plugin_marginal(P, spec, "Q", **grid)

    lo, hi = marg(P_lo), marg(P_hi)
    if lo.modes.size != 1 or hi.modes.size != 1:
        raise ValueError(f"the Q marginal must be unimodal at P_lo and P_hi, found {lo.modes.size} and "
                         f"{hi.modes.size} modes")
    n_eval, best = 2, None
    for _ in range(n_bisect):
        mid = marg(float(np.sqrt(lo.P * hi.P)))
        n_eval += 1
        if mid.modes.size >= 2:
            if best is None or abs(mid.log_weight_ratio) < abs(best.log_weight_ratio):
                best = mid
            if mid.log_weight_ratio > 0:  # the copy mode holds more: equal weights lie lower
                hi = mid
            else:
                lo = mid
            continue
        if abs(mid.modes[0] - lo.modes[-1]) <= abs(mid.modes[0] - hi.modes[0]):
            lo = mid
        else:
            hi = mid
    return PluginSwitch(P_lo=lo.P, P_hi=hi.P, modes_lo=lo.modes, modes_hi=hi.modes,
                        gap=float(hi.modes[0] - lo.modes[-1]), bimodal=best is not None,
                        marginal=best if best is not None else hi, n_eval=n_eval)
