"""copylib: the copy head as a Bayesian phase transition in attention.

The subpackages follow the book's argument (CONTRIBUTING.md says where new pieces go):

* :mod:`copylib.model` -- the copy task, the attention kinds (one registry entry each), the network M*
  and its priors, the co-occurrence statistics of a data set, losses;
* :mod:`copylib.posterior` -- the evidence with the readout integrated out, the posterior targets
  (energy and gradient) that the samplers and Adam move on, invariants, order parameters and the
  plug-in action;
* :mod:`copylib.theory` -- the reduced actions and their minima, spinodals and critical sizes: shared
  machinery, then linear, softmax and causal attention, and the plug-in marginals (the plug-in posterior integrated over all but one coordinate);
* :mod:`copylib.inference` -- the Langevin loop with its proposals, adaptation and monitoring, the
  posterior samplers, Adam (MAP) training, and the MCMC diagnostics (ArviZ);
* :mod:`copylib.analysis` -- what the chapters compute from runs: crossings and onsets, power-law
  fits and scaling, forecasts, the linear and softmax analyses.

Support modules: :mod:`copylib.arguments` (argument checks at the public boundary),
:mod:`copylib.checks` (executed checks of the chapters' claims, recorded for the validation
report), :mod:`copylib.cache` (the on-disk result cache), :mod:`copylib.config` (the default /
paper-scale switch), :mod:`copylib.plotting` and :mod:`copylib.explorers` (interactive figures).

The names below are re-exported for ``import copylib as cl``.
"""

from __future__ import annotations

import importlib

# ``import copylib`` imports nothing more (PEP 562): the support modules that need neither torch nor
# scipy (the validation report's ``from copylib import checks``) load alone, and the first use of any
# other name imports the whole package, as an eager ``import copylib`` would, once.
_LIGHT = ("arguments", "cache", "checks", "config")
_SUBPACKAGES = ("analysis", "cache", "checks", "config", "explorers", "gluing",
                "inference", "model", "plotting", "posterior", "theory")
_REEXPORTED = {  # name: the module that defines it
    "Checks": "checks",
    "glue_fields": "gluing",
    "glue_values": "gluing",
    "effective_sample_size": "inference.diagnostics",
    "mcse_mean": "inference.diagnostics",
    "split_rhat": "inference.diagnostics",
    "SamplingResult": "inference.langevin",
    "langevin": "inference.langevin",
    "SweepResult": "inference.map_training",
    "TrainingResult": "inference.map_training",
    "lowest_objective": "inference.map_training",
    "map_sweep": "inference.map_training",
    "nested_cooccurrence": "inference.map_training",
    "train_map": "inference.map_training",
    "sample_collapsed_posterior": "inference.posterior_sampling",
    "sample_full_posterior": "inference.posterior_sampling",
    "constant_predictor": "model.losses",
    "constant_predictor_loss": "model.losses",
    "empirical_loss": "model.losses",
    "expected_loss": "model.losses",
    "perfect_copy": "model.losses",
    "perfect_copy_loss": "model.losses",
    "uniform_pooling": "model.losses",
    "uniform_pooling_loss": "model.losses",
    "ModelSpec": "model.network",
    "attention": "model.network",
    "attention_logits": "model.network",
    "network_output": "model.network",
    "prior_energy": "model.network",
    "cooccurrence": "model.statistics",
    "readout_moments": "model.statistics",
    "sample_size": "model.statistics",
    "sum_squared_error": "model.statistics",
    "target_energy": "model.statistics",
    "token_moment": "model.statistics",
    "copy_task": "model.task",
    "one_hot": "model.task",
    "sample_tokens": "model.task",
    "shift_matrix": "model.task",
    "effective_action": "posterior.evidence",
    "negative_log_evidence": "posterior.evidence",
    "negative_log_evidence_mc": "posterior.evidence",
    "negative_log_evidence_primal": "posterior.evidence",
    "optimal_readout": "posterior.evidence",
    "attention_from_order_parameters": "posterior.order_parameters",
    "copy_attention": "posterior.order_parameters",
    "copy_weight": "posterior.order_parameters",
    "invariants": "posterior.order_parameters",
    "logit_gap": "posterior.order_parameters",
    "order_parameters": "posterior.order_parameters",
    "plugin_action": "posterior.order_parameters",
    "plugin_action_of_attention": "posterior.order_parameters",
    "prior_action_linear": "posterior.order_parameters",
    "prior_action_softmax": "posterior.order_parameters",
    "subspace_coverage": "posterior.order_parameters",
    "map_objective": "posterior.targets",
}


def _import_all() -> None:
    for name in _SUBPACKAGES:
        globals()[name] = importlib.import_module(f".{name}", __name__)
    for name, module in _REEXPORTED.items():
        globals()[name] = getattr(importlib.import_module(f".{module}", __name__), name)


def __getattr__(name: str):
    if name in _LIGHT:
        return importlib.import_module(f".{name}", __name__)
    if not name.startswith("_"):  # private and dunder probes (IPython's display hooks) import nothing
        _import_all()
        if name in globals():
            return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

__version__ = "0.1.0"

# What `import copylib as cl` offers a chapter or a reader; everything else is reached through its subpackage.
__all__ = [
    "Checks",
    "ModelSpec",
    "SamplingResult",
    "SweepResult",
    "TrainingResult",
    "analysis",
    "attention",
    "attention_from_order_parameters",
    "attention_logits",
    "cache",
    "checks",
    "config",
    "constant_predictor",
    "constant_predictor_loss",
    "cooccurrence",
    "copy_attention",
    "copy_task",
    "copy_weight",
    "effective_action",
    "effective_sample_size",
    "empirical_loss",
    "expected_loss",
    "explorers",
    "glue_fields",
    "glue_values",
    "gluing",
    "inference",
    "invariants",
    "langevin",
    "logit_gap",
    "lowest_objective",
    "map_objective",
    "map_sweep",
    "mcse_mean",
    "model",
    "negative_log_evidence",
    "negative_log_evidence_mc",
    "negative_log_evidence_primal",
    "nested_cooccurrence",
    "network_output",
    "one_hot",
    "optimal_readout",
    "order_parameters",
    "perfect_copy",
    "perfect_copy_loss",
    "plotting",
    "plugin_action",
    "plugin_action_of_attention",
    "posterior",
    "prior_action_linear",
    "prior_action_softmax",
    "prior_energy",
    "readout_moments",
    "sample_collapsed_posterior",
    "sample_full_posterior",
    "sample_size",
    "sample_tokens",
    "shift_matrix",
    "split_rhat",
    "subspace_coverage",
    "sum_squared_error",
    "target_energy",
    "theory",
    "token_moment",
    "train_map",
    "uniform_pooling",
    "uniform_pooling_loss",
]

