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

from __future__ import annotations

# the public names are those of the theme modules (their __all__), in the order listed above
from . import linear_action, linear_jump, linear_minima, linear_thresholds
from .linear_action import *  # noqa: F403
from .linear_jump import *  # noqa: F403
from .linear_minima import *  # noqa: F403
from .linear_thresholds import *  # noqa: F403

__all__ = [
    *linear_action.__all__,
    *linear_minima.__all__,
    *linear_thresholds.__all__,
    *linear_jump.__all__,
]
