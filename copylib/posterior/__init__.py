"""The posterior of the attention logits: evidence, targets, order parameters.

* :mod:`copylib.posterior.evidence` -- the evidence of an attention matrix, readout integrated out;
* :mod:`copylib.posterior.targets` -- the posterior targets (energy and gradient) samplers and Adam consume;
* :mod:`copylib.posterior.order_parameters` -- invariants, order parameters and the plug-in action.
"""

from __future__ import annotations

# The names live in the submodules (documented one by one on the API page); the package adds none.
__all__: list[str] = []
