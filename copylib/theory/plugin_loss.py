"""The test loss of an attention matrix with its plug-in readout, from the invariants of the attention.

With the plug-in (large-``P`` posterior-mean) readout ``W = (K_bar + kappa I)^{-1} B_bar``
(``_plugin_readout`` of :mod:`copylib.theory.linear_action` and :mod:`copylib.theory.softmax_action`)
every moment is ``a I + b J_V`` by the vocabulary symmetry, and the population loss per
position of ``(A, W)`` (:func:`copylib.expected_loss <copylib.model.losses.expected_loss>`)
depends on ``A`` only through its four invariants
(:func:`copylib.posterior.order_parameters.invariants`)::

    alpha_1 = |A|^2,   alpha_2 = |A 1|^2,   gamma_1 = tr A^T T,   gamma_2 = 1^T A^T T 1.

On ``1^perp`` (multiplicity ``V - 1``) and on ``1`` the readout has the eigenvalues
``w_perp = gamma_1/(alpha_1 + eps)`` and ``w_1 = gamma_2/(alpha_2 + eps)``,
``eps = V kappa / P``, and the loss is::

    n_T/L + [(V-1)(alpha_1 w_perp^2 - 2 gamma_1 w_perp) + alpha_2 w_1^2 - 2 gamma_2 w_1] / (L V)

(dimensionless; ``n_T = tr T^T T``: ``L`` in the cyclic task, ``L - 1`` without the wrap-around).

* :func:`plugin_loss`: any attention matrix, from its four invariants (the linear theory,
  posterior samples of linear attention).
* :func:`row_stochastic_plugin_loss`: row-stochastic attention (softmax), where
  ``alpha_2 = L`` and ``gamma_2 = n_T`` are fixed, from ``alpha_1`` and ``gamma_1``
  alone (the softmax theories and their posterior samples). It is :func:`plugin_loss`
  at those values, with the terms summed in another order (equal up to rounding).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ..arguments import as_finite_array, check_P
from ..model.network import ModelSpec, check_spec

__all__ = ["plugin_loss", "row_stochastic_plugin_loss"]


def _n_targets(spec: ModelSpec) -> int:
    return spec.L if spec.cyclic else spec.L - 1


def plugin_loss(alpha_1: npt.ArrayLike, alpha_2: npt.ArrayLike, gamma_1: npt.ArrayLike, gamma_2: npt.ArrayLike, P: npt.ArrayLike,
                spec: ModelSpec) -> np.ndarray:
    """Population loss per position of an attention matrix with its plug-in readout, from its invariants.

    Parameters
    ----------
    alpha_1, alpha_2 : array_like, finite, ``>= 0``
        ``|A|^2`` and ``|A 1|^2``.
    gamma_1, gamma_2 : array_like, finite
        ``tr A^T T`` and ``1^T A^T T 1``.
    P : float or array_like, ``> 0``
        Number of training sequences. All arguments broadcast.
    spec : ModelSpec
        Any attention kind; uses ``L``, ``V``, ``kappa`` and ``cyclic``.

    Returns
    -------
    ndarray
        The broadcast shape (dimensionless): ``n_T/L`` for ``A = 0``, ``0`` for
        perfect copying at ``P -> inf``. See the module docstring for the formula.
    """
    spec = check_spec(spec, theory="plugin_loss")
    a1 = as_finite_array("alpha_1", alpha_1)
    a2 = as_finite_array("alpha_2", alpha_2)
    for name, a in (("alpha_1", a1), ("alpha_2", a2)):
        if (a < 0).any():
            raise ValueError(f"{name} must be >= 0, got a minimum of {a.min()}")
    g1 = as_finite_array("gamma_1", gamma_1)
    g2 = as_finite_array("gamma_2", gamma_2)
    P = check_P(P)
    L, V = spec.L, spec.V
    eps = V * spec.kappa / P
    w_p = g1 / (a1 + eps)
    w_1 = g2 / (a2 + eps)
    return _n_targets(spec) / L + ((V - 1) * (a1 * w_p**2 - 2 * g1 * w_p) + a2 * w_1**2 - 2 * g2 * w_1) / (L * V)


def row_stochastic_plugin_loss(alpha_1: npt.ArrayLike, gamma_1: npt.ArrayLike, P: npt.ArrayLike, spec: ModelSpec) -> np.ndarray:
    """Population loss per position of row-stochastic attention with its plug-in readout.

    :func:`plugin_loss` with ``alpha_2 = L`` and ``gamma_2 = n_T`` (every row of ``A``
    sums to 1): the loss of :func:`copylib.theory.softmax.state_loss`, and, applied to
    posterior samples, the loss whose posterior mean
    :func:`copylib.theory.softmax_marginal.plugin_marginal` computes.

    Parameters
    ----------
    alpha_1 : array_like, values in ``[1, L]``
        ``|A|^2``.
    gamma_1 : array_like, values in ``[0, n_T]``
        ``sum_l A[l, l-1]`` (``n_T = L`` cyclic, ``L - 1`` otherwise).
    P : float or array_like, ``> 0``
        Broadcast with ``alpha_1`` and ``gamma_1``.
    spec : ModelSpec
        ``kind="softmax"`` (cyclic or not).

    Returns
    -------
    ndarray
        Broadcast shape of the inputs (dimensionless).
    """
    spec = check_spec(spec, kind="softmax", theory="row_stochastic_plugin_loss")
    L, V, nT = spec.L, spec.V, _n_targets(spec)
    a1 = as_finite_array("alpha_1", alpha_1)
    g1 = as_finite_array("gamma_1", gamma_1)
    P = check_P(P)
    tol = 1e-9 * L
    for name, x, lo, hi in (("alpha_1", a1, 1.0, L), ("gamma_1", g1, 0.0, nT)):
        if (x < lo - tol).any() or (x > hi + tol).any():
            raise ValueError(f"{name} must lie in [{lo:g}, {hi:g}] (row-stochastic attention), "
                             f"got [{x.min()}, {x.max()}]")
    a1, g1, P = np.broadcast_arrays(a1, g1, P)
    eps = V * spec.kappa / P
    w_perp = g1 / (a1 + eps)
    w_1 = nT / (L + eps)
    quad = (V - 1) * (w_perp**2 * a1 - 2 * w_perp * g1) + (w_1**2 * L - 2 * w_1 * nT)
    return (quad / V + nT) / L
