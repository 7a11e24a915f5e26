"""copylib: the copy head as a Bayesian phase transition in attention.

One module per concept:

* :mod:`copylib.task` -- the copy task (data and target matrix);
* :mod:`copylib.model` -- the attention network M* and its priors;
* :mod:`copylib.statistics` -- sufficient statistics of a data set;
* :mod:`copylib.losses` -- test/train losses and reference predictors;
* :mod:`copylib.training` -- Adam (MAP) training batched over runs;
* :mod:`copylib.evidence` -- the evidence of an attention matrix (readout integrated out);
* :mod:`copylib.order_parameters` -- invariants, order parameters and the plug-in action;
* :mod:`copylib.sampling` -- batched Langevin/MALA samplers and convergence diagnostics;
* :mod:`copylib.diagnostics` -- R-hat, bulk/tail ESS, MCSE (ArviZ), drift and z-score calibration;
* :mod:`copylib.transitions` -- locating and classifying changes across sample sizes;
* :mod:`copylib.checks` -- executed checks of the chapters' claims, recorded for the validation report;
* :mod:`copylib.config` -- the default / paper-scale switch;
* :mod:`copylib.cache` -- the on-disk result cache of expensive experiments;
* :mod:`copylib.plotting` -- plotting helpers for the chapters;
* :mod:`copylib.explorers` -- interactive explorers (figures + ipywidgets).
"""

from . import cache, checks, config, diagnostics, explorers, plotting, predictability, scaling, transitions
from .checks import Checks
from .evidence import (
    effective_action,
    negative_log_evidence,
    negative_log_evidence_mc,
    negative_log_evidence_primal,
    optimal_readout,
)
from .losses import (
    constant_predictor,
    constant_predictor_loss,
    empirical_loss,
    expected_loss,
    perfect_copy,
    perfect_copy_loss,
    uniform_pooling,
    uniform_pooling_loss,
)
from .model import ModelSpec, attention, attention_logits, network_output, prior_energy
from .order_parameters import (
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
from .sampling import (
    SamplingResult,
    effective_sample_size,
    langevin,
    mcse_mean,
    sample_collapsed_posterior,
    sample_full_posterior,
    split_rhat,
)
from .statistics import (
    cooccurrence,
    readout_moments,
    sample_size,
    sum_squared_error,
    target_energy,
    token_moment,
)
from .task import copy_task, one_hot, sample_tokens, shift_matrix
from .training import (
    SweepResult,
    TrainingResult,
    lowest_objective,
    map_objective,
    map_sweep,
    nested_cooccurrence,
    train_map,
)

__version__ = "0.1.0"
