"""copylib: the copy head as a Bayesian phase transition in attention.

One module per concept:

* :mod:`copylib.task` -- the copy task (data and target matrix);
* :mod:`copylib.model` -- the attention network M* and its priors;
* :mod:`copylib.statistics` -- sufficient statistics of a data set;
* :mod:`copylib.losses` -- test/train losses and reference predictors;
* :mod:`copylib.training` -- Adam (MAP) training batched over runs.
"""

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
