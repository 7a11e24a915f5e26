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
:func:`plugin_marginal` (the posterior marginal of ``c`` at one ``P``, with
the conditional means of ``alpha_1`` and of the test loss),
:func:`marginal_branches` (local minima of ``-ln p(c)``, the barrier, basin free
energies and basin means), :func:`marginal_transition` (spinodals and ``P3`` from
equal basin free energies).

This module gathers the public names of the modules the marginal is written in, one theme each:

* :mod:`copylib.theory.softmax_cumulants`: the row cumulant generating function and the saddlepoint
  prior density (:class:`RowCumulants`, :func:`row_cumulants`, :func:`finite_size_cumulants`,
  :func:`default_tilts`);
* :mod:`copylib.theory.softmax_marginal_density`: the marginal of ``c`` at one ``P``
  (:class:`CopyWeightMarginal`, :func:`plugin_marginal`, :func:`default_c_grid`);
* :mod:`copylib.theory.softmax_marginal_branches`: minima, barrier and basin free energies, spinodals and
  ``P3`` (:func:`marginal_branches`, :func:`log_odds_branches`, :func:`half_mass_P`,
  :func:`marginal_transition`);
* :mod:`copylib.theory.softmax_marginal_scan`: many ``P`` at once and the finite-size character of the
  jump (:func:`marginal_scan`, :func:`finite_size_row`).
"""

from __future__ import annotations

# the public names are those of the theme modules (their __all__), in the order listed above
from . import softmax_cumulants, softmax_marginal_branches, softmax_marginal_density, softmax_marginal_scan
from .softmax_cumulants import *  # noqa: F403
from .softmax_marginal_branches import *  # noqa: F403
from .softmax_marginal_density import *  # noqa: F403
from .softmax_marginal_scan import *  # noqa: F403

__all__ = [
    *softmax_cumulants.__all__,
    *softmax_marginal_density.__all__,
    *softmax_marginal_branches.__all__,
    *softmax_marginal_scan.__all__,
]
