"""The model M*: the copy task, the attention kinds, the network and its priors, statistics, losses.

* :mod:`copylib.model.task` -- the copy task (data and target matrix);
* :mod:`copylib.model.attention` -- the registry of attention kinds (forward, backward, prior push-forward);
* :mod:`copylib.model.network` -- :class:`~copylib.model.network.ModelSpec`, attention, network output, priors;
* :mod:`copylib.model.statistics` -- the co-occurrence statistics a data set enters through;
* :mod:`copylib.model.losses` -- test and train losses and the reference predictors;
* :mod:`copylib.model.induction` -- the induction task and a two-layer attention-only network for it.
"""

from __future__ import annotations

# The names live in the submodules (documented one by one on the API page); the package adds none.
__all__: list[str] = []
