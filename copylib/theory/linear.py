"""Saddle-point theory of linear attention in M*: reduced action, minima, thresholds.

Everything here is for the cyclic copy task with linear attention
(``ModelSpec(kind="linear", cyclic=True)``) and is plain float64 numpy/scipy. This module
gathers the public names of the modules the theory is written in, one theme each:

* :mod:`copylib.theory.linear_action`: the order parameters ``(m, q, r2)``, the three
  versions of the reduced action (``"mean_field"``, ``"fluct"``, ``"map"``; the derivation is
  in that module's documentation), the plug-in readout and the predicted test loss;
* :mod:`copylib.theory.trust_region`: the batched trust-region Newton minimiser;
* :mod:`copylib.theory.linear_minima`: the global minimum of the action at one ``P`` and
  along a grid of ``P``;
* :mod:`copylib.theory.linear_thresholds`: the instability of the symmetric point (``P1``),
  the crossover to copying (``P2``) and the susceptibility;
* :mod:`copylib.theory.linear_jump`: coexisting minima at large ``L`` and the jump of the
  copy share.
"""

from .linear_action import (
    VERSIONS,
    copy_share,
    hessian_at_origin,
    plugin_readout,
    predicted_test_loss,
    reduced_action,
    reduced_action_gradient,
    transverse_row_sum_factor,
    transverse_saddle,
)
from .linear_jump import CopyJump, copy_share_jump, local_minima
from .linear_minima import ActionMinimum, MinimumCurve, action_minimum, minimum_curve
from .linear_thresholds import p1_analytic, p1_numerical, p2_analytic, p2_numerical, p2_numerical_many, susceptibility_m

__all__ = [
    "VERSIONS",
    "ActionMinimum",
    "MinimumCurve",
    "transverse_row_sum_factor",
    "reduced_action",
    "reduced_action_gradient",
    "transverse_saddle",
    "hessian_at_origin",
    "action_minimum",
    "minimum_curve",
    "plugin_readout",
    "predicted_test_loss",
    "copy_share",
    "p1_analytic",
    "p1_numerical",
    "p2_analytic",
    "p2_numerical",
    "p2_numerical_many",
    "susceptibility_m",
    "local_minima",
    "CopyJump",
    "copy_share_jump",
]
