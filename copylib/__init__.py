"""copylib: the copy head as a Bayesian phase transition in attention.

One module per concept:

* :mod:`copylib.task` -- the copy task (data and target matrix);
* :mod:`copylib.model` -- the attention network M* and its priors;
* :mod:`copylib.statistics` -- sufficient statistics of a data set;
* :mod:`copylib.evidence` -- the evidence of an attention matrix (readout integrated out);
* :mod:`copylib.losses` -- test/train losses and reference predictors;
* :mod:`copylib.training` -- Adam (MAP) training batched over runs.
"""

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
from .statistics import cooccurrence, readout_moments, sample_size, sum_squared_error, token_moment
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

from . import config, plotting, transitions  # noqa: E402  (submodules used by the chapters)
from .order_parameters import (  # noqa: E402
    annealed_action,
    annealed_action_of_attention,
    attention_from_order_parameters,
    copy_attention,
    copy_weight,
    invariants,
    logit_gap,
    order_parameters,
    prior_action_linear,
    prior_action_softmax,
)
