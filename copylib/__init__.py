"""copylib: the copy head as a Bayesian phase transition in attention.

One module per concept:

* :mod:`copylib.model.task` -- the copy task (data and target matrix);
* :mod:`copylib.model.network` -- the attention network M* and its priors;
* :mod:`copylib.model.statistics` -- sufficient statistics of a data set;
* :mod:`copylib.model.losses` -- test/train losses and reference predictors;
* :mod:`copylib.inference.map_training` -- Adam (MAP) training batched over runs;
* :mod:`copylib.posterior.evidence` -- the evidence of an attention matrix (readout integrated out);
* :mod:`copylib.posterior.order_parameters` -- invariants, order parameters and the plug-in action;
* :mod:`copylib.inference.langevin` -- batched Langevin/MALA samplers;
* :mod:`copylib.inference.diagnostics` -- R-hat, bulk/tail ESS, MCSE (ArviZ), drift and z-score calibration;
* :mod:`copylib.analysis.transitions` -- locating and classifying changes across sample sizes;
* :mod:`copylib.checks` -- executed checks of the chapters' claims, recorded for the validation report;
* :mod:`copylib.config` -- the default / paper-scale switch;
* :mod:`copylib.cache` -- the on-disk result cache of expensive experiments;
* :mod:`copylib.plotting` -- plotting helpers for the chapters;
* :mod:`copylib.explorers` -- interactive explorers (figures + ipywidgets).
"""

from . import analysis, cache, checks, config, explorers, inference, model, plotting, posterior, theory
from .checks import Checks
from .posterior.evidence import (
    effective_action,
    negative_log_evidence,
    negative_log_evidence_mc,
    negative_log_evidence_primal,
    optimal_readout,
)
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
from .posterior.order_parameters import (
    plugin_action,
    plugin_action_of_attention,
    attention_from_order_parameters,
    copy_attention,
    copy_weight,
    invariants,
    logit_gap,
    order_parameters,
    prior_action_linear,
    prior_action_softmax,
    subspace_coverage,
)
from .inference.langevin import SamplingResult, langevin, sample_collapsed_posterior, sample_full_posterior
from .inference.diagnostics import effective_sample_size, mcse_mean, split_rhat
from .model.statistics import (
    cooccurrence,
    readout_moments,
    sample_size,
    sum_squared_error,
    target_energy,
    token_moment,
)
from .model.task import copy_task, one_hot, sample_tokens, shift_matrix
from .inference.map_training import (
    SweepResult,
    TrainingResult,
    lowest_objective,
    map_objective,
    map_sweep,
    nested_cooccurrence,
    train_map,
)

__version__ = "0.1.0"
