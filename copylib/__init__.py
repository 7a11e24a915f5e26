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

from . import analysis, cache, checks, config, explorers, gluing, inference, model, plotting, posterior, theory
from .checks import Checks
from .gluing import glue_fields, glue_values
from .inference.diagnostics import effective_sample_size, mcse_mean, split_rhat
from .inference.langevin import SamplingResult, langevin
from .inference.map_training import (
    SweepResult,
    TrainingResult,
    lowest_objective,
    map_sweep,
    nested_cooccurrence,
    train_map,
)
from .inference.posterior_sampling import sample_collapsed_posterior, sample_full_posterior
from .model.losses import (
    constant_predictor,
    constant_predictor_loss,
    empirical_loss,
    expected_loss,
    perfect_copy,
    perfect_copy_loss,
    uniform_pooling,
    uniform_pooling_loss,
)
from .model.network import ModelSpec, attention, attention_logits, network_output, prior_energy
from .model.statistics import (
    cooccurrence,
    readout_moments,
    sample_size,
    sum_squared_error,
    target_energy,
    token_moment,
)
from .model.task import copy_task, one_hot, sample_tokens, shift_matrix
from .posterior.evidence import (
    effective_action,
    negative_log_evidence,
    negative_log_evidence_mc,
    negative_log_evidence_primal,
    optimal_readout,
)
from .posterior.order_parameters import (
    attention_from_order_parameters,
    copy_attention,
    copy_weight,
    invariants,
    logit_gap,
    order_parameters,
    plugin_action,
    plugin_action_of_attention,
    prior_action_linear,
    prior_action_softmax,
    subspace_coverage,
)
from .posterior.targets import map_objective

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

