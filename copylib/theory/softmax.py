"""Mean-field theory of the softmax copy transition: the reduced action ``S(Delta)``.

For softmax attention in the model M* (:mod:`copylib.model.network`, cyclic copy task)
the cheapest copy state is the one-parameter family
``A(Delta) = copy_attention(Delta, L)`` (:func:`copylib.posterior.order_parameters.copy_attention`):
every row puts the logit gap ``Delta`` on the previous position, so

    A[l, l-1] = c(Delta) = 1 / (1 + (L-1) e^{-Delta}),   A[l, j] = (1 - c)/(L - 1) otherwise.

Its invariants (:func:`copylib.posterior.order_parameters.invariants`) are

    alpha_1 = L [c^2 + (1-c)^2/(L-1)],  alpha_2 = L,  gamma_1 = n_T c,  gamma_2 = n_T,

with ``n_T = tr T^T T`` (``L`` in the cyclic task, ``L - 1`` without the wrap-around).
The reduced action of a version ``v`` is

    S_v(Delta; P) = S_v^data(alpha_1, alpha_2, gamma_1, gamma_2; P) + (L-1) Delta^2 / (2 sigma_G^2)

(data action + the prior of the gap, :func:`copylib.posterior.order_parameters.prior_action_softmax`),
in nats (units of ``-ln`` probability). The versions:

``"mean_field"``
    ``S_v^data`` is the plug-in collapsed action
    :func:`copylib.posterior.order_parameters.plugin_action` (readout ``W`` integrated out;
    contains the Occam log-det terms). Its minima are the saddle points of the
    posterior of ``Delta`` (the mean-field approximation).
``"map"``
    ``W`` minimised instead of integrated (Adam finds the joint MAP over
    ``(g, W)``). For any data, exactly (ridge regression),

    ::

        min_W [SSE/(2 sigma^2) + |W|^2/(2 omega)] = (1/(2 sigma^2)) [y2 - tr B^T (K + kappa I)^{-1} B],

    ``K = Phi^T Phi``, ``B = Phi^T Y``; the evidence is this plus
    ``(V/2) ln det(I + K/kappa)`` plus constants. Replacing ``K, B, y2`` by their
    means (annealing, large ``P``) the trace term becomes
    ``P n_T/(2 sigma^2) - P/(2 sigma^2 V) [(V-1) gamma_1^2/(alpha_1+eps) + gamma_2^2/(alpha_2+eps)]``,
    ``eps = V kappa / P``: the MAP action is the mean-field action minus its two
    log-det terms ``V(V-1)/2 ln(1 + alpha_1/eps) + V/2 ln(1 + alpha_2/eps)``
    (and the ``A``-independent constant). The logit prior is the same: the MAP
    sets the (free) row means of ``g`` to zero, ``g = Delta (T - J/L)``.
``"energy"``
    The large-``P`` limit of ``"map"`` (``eps -> 0``) without its
    ``Delta``-independent ``gamma_2`` term, the softmax chapter's energy action
    ``S = -G0 Gamma(Delta) + (L-1) Delta^2/(2 sigma_G^2)``, ``G0 = P (V-1)/(2 sigma_0^2 V)``,
    ``Gamma = gamma_1^2/(L alpha_1) = 1/(1 + (L-1) e^{-2 Delta})`` (cyclic). This is the
    action that :func:`p3_leading_order` approximates.
``"fluct"``
    The mean-field action with the transverse logit noise integrated at mean-field
    level. Under the prior every logit direction other than the global copy
    mode ``T - J/L`` (whose amplitude is ``Delta``) and the irrelevant row means
    is ``N(0, sigma_G^2)``; if the data do not constrain them they stay there.
    The noise is Gaussian with covariance ``tau^2 (I - T0 T0^T)`` over the ``L^2``
    logits, ``T0 = (T - J/L)/sqrt(L-1)``, ``tau = sigma_G`` (prior level) by
    default. Each row's marginal is ``N(0, tau^2 (I - u u^T / L))`` with ``u``
    the unit vector along ``e_{l-1} - 1/L`` (the global mode takes ``1/L`` of the
    row's gap variance). Approximation ("mean field in the rest"): the data
    action is evaluated at the *expected* invariants,
    ``S_v^data(E[alpha_1], L, E[gamma_1], n_T)`` (rows are row-stochastic, so
    ``alpha_2 = L``, ``gamma_2 = n_T`` stay exact); the invariants are sums over
    ``L`` independent rows, so their relative fluctuations are ``O(L^{-1/2})``.
    The expectations are Monte Carlo averages over a fixed set of noisy rows
    (:class:`RowNoise`, made by :func:`row_noise` from a numpy Generator), so the
    action is a deterministic, smooth function of ``Delta`` (common random
    numbers). What this neglects (the cumulant corrections
    ``-Var(S)/2 + ...`` of ``-ln E[e^{-S}]``, i.e. the data reweighting the
    transverse modes) is measured by the tests (``softmax_noise._transverse_average``).

Transition analysis (all versions): :func:`local_minima`, :func:`spinodals`,
:func:`first_order_point`, :func:`minimum_curve`, and the leading-order
analytic :func:`p3_leading_order`. The test loss of a state is that of its
attention with the plug-in posterior-mean readout (:func:`state_loss`).

Reference numbers (L = 32, V = 4, all constants 1; reproduced by the tests where cheap):

* P3: mean_field 341.95 (Delta 0.331 -> 1.805, c 0.043 -> 0.164, loss 0.709 -> 0.357;
  spinodals 323.7, 380.7); map 329.80 (Delta 0.306 -> 1.863, c 0.042 -> 0.172,
  loss 0.711 -> 0.336; spinodals 309.3, 374.6); energy 264.60; fluct 666.6 +- 0.7
  over row-noise seeds (Delta 0.305 -> 2.368, c 0.041 -> 0.216, loss 0.733 -> 0.456;
  spinodals 618.7, 805.6).
* Mean-field P3 at other sizes: 342 (L=32, V=4), 873 (64, 4),
  885 (64, 8), 2180 (128, 4), 4935 (256, 8). Scanning L = 8, 10, ..., 20, 24 at
  V = 4, the first L with a jump is 20 (mean_field), 18 (map), 24 (energy).
* :func:`p3_leading_order` has no solution at L = 32 (its root needs L >= 41.2).

Everything is float64 numpy/scipy and deterministic; Monte Carlo only enters
through :func:`row_noise`, which takes a
``numpy.random.Generator``.

This module gathers the public names of the modules the theory is written in, one theme each:

* :mod:`copylib.theory.softmax_noise`: the noisy rows of the ``"fluct"`` action (:class:`RowNoise`,
  :func:`row_noise`);
* :mod:`copylib.theory.softmax_action`: the reduced action of every version and its derivatives, the
  copy weight of a gap and the test loss of a state;
* :mod:`copylib.theory.softmax_transition`: minima, spinodals, the first-order point and its barrier,
  the global minimum along ``P``, and the leading-order analytic ``P3``.
"""

from __future__ import annotations

# the public names are those of the theme modules (their __all__), in the order listed above
from . import softmax_action, softmax_noise, softmax_transition
from .softmax_action import *  # noqa: F403
from .softmax_noise import *  # noqa: F403
from .softmax_transition import *  # noqa: F403

__all__ = [
    *softmax_noise.__all__,
    *softmax_action.__all__,
    *softmax_transition.__all__,
]
