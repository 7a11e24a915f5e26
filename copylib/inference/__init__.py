"""Inference: Langevin sampling, Adam (MAP) training, MCMC diagnostics.

* :mod:`copylib.inference.langevin` -- the sampling loop;
* :mod:`copylib.inference.proposals` -- its proposals (MALA, ULA), one class each;
* :mod:`copylib.inference.adaptation` -- warmup adaptation (dual-averaging step size, scale windows);
* :mod:`copylib.inference.monitoring` -- acceptance monitor (stuck chains) and draw recorder;
* :mod:`copylib.inference.posterior_sampling` -- the collapsed and the full posterior of M*;
* :mod:`copylib.inference.tempering` -- replica exchange over a likelihood-temperature ladder;
* :mod:`copylib.inference.free_energy` -- free energies along the ladder (MBAR, through pymbar);
* :mod:`copylib.inference.map_training` -- Adam (MAP) training batched over runs;
* :mod:`copylib.inference.diagnostics` -- R-hat, bulk/tail ESS, MCSE (ArviZ), drift and calibration.
"""

from __future__ import annotations

# The names live in the submodules (documented one by one on the API page); the package adds none.
__all__: list[str] = []
