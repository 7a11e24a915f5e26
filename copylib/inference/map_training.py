"""Adam training of the full network ``(g, b, W)``: the MAP estimate of M*.

The objective is the negative log joint posterior
(:func:`copylib.posterior.targets.map_objective`, with its hand-written gradient in
:class:`copylib.posterior.targets.JointPosterior`)

::

    U = sum_mu |A X^mu W - Y^mu|^2 / (2 sigma^2)
        + |g|^2 / (2 sigma_G^2) + b^2 / (2 sigma_b^2) + |W|^2 / (2 omega),

i.e. the squared error with weight decays that match the priors. It is computed
exactly (full batch) from the co-occurrence tensor of each data set, so a step
costs O(L^2 V^2) per run whatever ``P`` is. ``R`` independent runs (data sets,
seeds, restarts) are trained together in one set of tensors: Adam acts
elementwise, so this is the same as ``R`` separate optimisers.

Gradient descent started in the basin of a local minimum stays there; the paper
keeps, among restarts, the run with the lowest final objective (the "MAP
filter"). :func:`map_sweep` does the same.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import torch

from ..arguments import (
    as_real_array,
    check_bool,
    check_generator,
    check_grid,
    check_int,
    check_int_array,
    check_positive,
    check_shape,
)
from ..cache import cached
from ..model.losses import empirical_loss, expected_loss
from ..model.network import ModelSpec, check_spec
from ..model.statistics import cooccurrence
from ..model.task import copy_task
from ..posterior.targets import JointPosterior, map_objective

__all__ = ["lowest_objective", "map_sweep", "nested_cooccurrence", "SweepResult", "train_map",
           "TrainingResult"]


@dataclass(frozen=True)
class TrainingResult:
    """Outcome of :func:`train_map` for ``R`` runs (numpy arrays).

    * steps : ``(n_records,)`` step index of each record.
    * train_loss, test_loss : ``(R, n_records)`` loss per position along training
      (test loss = exact population loss).
    * objective : ``(R,)`` final value of ``U``.
    * g : ``(R, L, L)``; b : ``(R,)``; W : ``(R, V, V)``; A : ``(R, L, L)``.
    """

    steps: np.ndarray
    train_loss: np.ndarray
    test_loss: np.ndarray
    objective: np.ndarray
    g: np.ndarray
    b: np.ndarray
    W: np.ndarray
    A: np.ndarray


def _init_scales(init_scale, R: int) -> np.ndarray:
    scale = as_real_array("init_scale", init_scale)
    if scale.shape not in ((), (1,), (R,)):
        raise ValueError(f"init_scale must be a float or have shape ({R},) (one per run of C), got {scale.shape}")
    scale = np.broadcast_to(scale, (R,))
    if not (np.isfinite(scale).all() and (scale > 0).all()):
        raise ValueError("init_scale must be finite and > 0")
    return scale.copy()


def _random_init(init_scale, spec: ModelSpec, R: int, generator) -> tuple:
    check_generator("generator", generator, "torch")
    scale = torch.as_tensor(_init_scales(init_scale, R))
    L, V = spec.L, spec.V
    g = scale[:, None, None] * torch.randn(R, L, L, generator=generator, dtype=torch.float64)
    b = scale * torch.randn(R, generator=generator, dtype=torch.float64)
    W = 0.1 * spec.omega**0.5 * torch.randn(R, V, V, generator=generator, dtype=torch.float64)
    return g, b, W


def _given_init(init, spec: ModelSpec, R: int) -> tuple:
    shapes = {"g": (R, spec.L, spec.L), "b": (R,), "W": (R, spec.V, spec.V)}
    if not isinstance(init, dict) or set(init) != set(shapes):
        raise ValueError("init must be a dict with keys 'g', 'b', 'W'")
    out = []
    for name, shape in shapes.items():
        value = init[name].detach().numpy() if isinstance(init[name], torch.Tensor) else init[name]
        t = torch.as_tensor(as_real_array(f"init[{name!r}]", value)).clone()
        if tuple(t.shape) != shape:
            raise ValueError(f"init[{name!r}] must have shape {shape}, got {tuple(t.shape)}")
        if not torch.isfinite(t).all():
            raise ValueError(f"init[{name!r}] must be finite")
        out.append(t)
    return tuple(out)


def _adam_step(x, grad, m, v, step: int, lr: float, betas=(0.9, 0.999), eps: float = 1e-8) -> None:
    """One Adam update of ``x`` in place, the same arithmetic as ``torch.optim.Adam``
    (single-tensor path, no weight decay, no amsgrad), so that it gives bit-identical
    updates for identical gradients (tested); one call for all parameters."""
    beta1, beta2 = betas
    m.lerp_(grad, 1 - beta1)
    v.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    bias_correction1 = 1 - beta1**step
    bias_correction2 = 1 - beta2**step
    step_size = lr / bias_correction1
    denom = (v.sqrt() / bias_correction2**0.5).add_(eps)
    x.addcdiv_(m, denom, value=-step_size)


def train_map(
    C: npt.ArrayLike | torch.Tensor,
    spec: ModelSpec,
    generator: torch.Generator | None = None,
    *,
    init: dict | None = None,
    init_scale: npt.ArrayLike = 0.1,
    n_steps: int = 2000,
    lr: float = 0.05,
    lr_final: float = 1e-3,
    n_records: int = 40,
    cache: bool = False,
) -> TrainingResult:
    """Minimise ``U`` with Adam for ``R`` runs at once.

    Parameters
    ----------
    C : array ``(R, L, L, V, V)``
        Co-occurrence tensor of each run's data set
        (:func:`copylib.cooccurrence <copylib.model.statistics.cooccurrence>`).
    spec : ModelSpec
    generator : torch.Generator
        Source of the random initialisation (required unless ``init`` is given).
    init : dict, optional
        A given initial state ``{"g": (R, L, L), "b": (R,), "W": (R, V, V)}``
        (e.g. a planted copy pattern) instead of the random one.
    init_scale : float or array ``(R,)``, > 0
        Standard deviation of the initial ``g`` and ``b``; ``W`` starts at
        ``0.1 * sqrt(omega)`` scale.
    n_steps : int >= 1
    lr, lr_final : float > 0
        Learning rate, decayed geometrically from ``lr`` to ``lr_final``.
    n_records : int >= 1
        Number of (evenly spaced) points of the recorded loss curves.
    cache : bool
        Keep the result in the result cache (:mod:`copylib.cache`), keyed on ``C``,
        ``spec``, the initial state (the given one, or the generator's state and
        ``init_scale``), the other arguments and copylib's source. On a hit the
        generator is set to the state training would have left it in.
    """
    spec = check_spec(spec)
    n_steps = check_int("n_steps", n_steps, 1)
    n_records = check_int("n_records", n_records, 1)
    lr, lr_final = check_positive("lr", lr), check_positive("lr_final", lr_final)
    C = torch.as_tensor(as_real_array("C", C.detach().numpy() if isinstance(C, torch.Tensor) else C))
    check_shape("C", C, (spec.L, spec.L, spec.V, spec.V))
    if C.ndim != 5:
        raise ValueError(f"C must have shape (R, L, L, V, V), got {tuple(C.shape)}")
    if not torch.isfinite(C).all():
        raise ValueError("C must contain only finite values")
    R = C.shape[0]
    if init is not None:
        init = dict(zip(("g", "b", "W"), _given_init(init, spec, R)))
    else:
        check_generator("generator", generator, "torch")
        init_scale = _init_scales(init_scale, R)
    check_bool("cache", cache)

    def compute():
        res = _train(C, spec, generator, init, init_scale, n_steps, lr, lr_final, n_records)
        out = dataclasses.asdict(res)
        if init is None:
            out["generator_state"] = generator.get_state().numpy().copy()
        return out

    if not cache:
        out = compute()
    else:
        params = {"C": C.numpy(), "spec": spec, "init": init, "n_steps": n_steps, "lr": lr, "lr_final": lr_final,
                  "n_records": n_records}
        if init is None:
            params.update(generator_state=generator.get_state().numpy(), init_scale=init_scale)
        out = cached(compute, params, name="train_map")
        if init is None:  # consume the generator exactly as training does
            generator.set_state(torch.from_numpy(np.array(out["generator_state"], dtype=np.uint8)))
    return TrainingResult(**{f.name: out[f.name] for f in dataclasses.fields(TrainingResult)})


def _train(C, spec, generator, init, init_scale, n_steps, lr, lr_final, n_records) -> TrainingResult:
    """The body of :func:`train_map` (arguments already checked)."""
    R = C.shape[0]
    g, b, W = ((init["g"], init["b"], init["W"]) if init is not None
               else _random_init(init_scale, spec, R, generator))
    T = torch.as_tensor(spec.target)
    objective_fn = JointPosterior(C, spec)
    # all parameters of all runs in one flat state: Adam is elementwise, so one
    # update of the concatenation equals separate updates of g, b and W
    x = torch.cat([g.reshape(R, -1), b[:, None], W.reshape(R, -1)], dim=1)
    grad = torch.empty_like(x)
    m, v = torch.zeros_like(x), torch.zeros_like(x)
    g, b, W = objective_fn.split(x)

    # ExponentialLR: lr_t = lr * gamma^t, accumulated by repeated multiplication as torch does
    gamma = (lr_final / lr) ** (1.0 / n_steps)
    record_at = set(np.unique(np.linspace(0, n_steps, n_records).round().astype(int)).tolist())
    steps, train_curve, test_curve = [], [], []

    def record(step):
        A = objective_fn.attention(g, b)
        steps.append(step)
        train_curve.append(empirical_loss(A, W, C, T).numpy().copy())
        test_curve.append(expected_loss(A, W, T).numpy().copy())

    lr_t = lr
    with torch.no_grad():
        for step in range(n_steps):
            if step in record_at:
                record(step)
            objective_fn.gradient(x, grad)
            _adam_step(x, grad, m, v, step + 1, lr_t)
            lr_t = lr_t * gamma
        record(n_steps)
        objective = map_objective(g, b, W, C, spec)
        A = objective_fn.attention(g, b)
    if not torch.isfinite(objective).all():
        raise FloatingPointError("Adam diverged (non-finite objective); lower lr")
    return TrainingResult(
        steps=np.asarray(steps),
        train_loss=np.stack(train_curve, axis=1),
        test_loss=np.stack(test_curve, axis=1),
        objective=objective.numpy(),
        g=g.numpy().copy(),
        b=b.numpy().copy(),
        W=W.numpy().copy(),
        A=A.numpy(),
    )


def lowest_objective(objective: npt.ArrayLike, groups: npt.ArrayLike) -> np.ndarray:
    """Index of the run with the lowest objective within each group (the MAP filter).

    objective : ``(R,)``; groups : ``(R,)`` labels. Returns one index per unique
    label, in the order of ``np.unique(groups)``.
    """
    objective, groups = as_real_array("objective", objective), np.asarray(groups)
    if objective.shape != groups.shape or objective.ndim != 1:
        raise ValueError(f"objective and groups must be 1-d of equal length, got {objective.shape} and {groups.shape}")
    if not np.isfinite(objective).all():
        raise ValueError("objective must contain only finite values")
    best = []
    for label in np.unique(groups):
        idx = np.flatnonzero(groups == label)
        best.append(idx[np.argmin(objective[idx])])
    return np.asarray(best)


def nested_cooccurrence(P_values: Sequence[int] | np.ndarray, spec: ModelSpec, rng: np.random.Generator) -> np.ndarray:
    """Co-occurrence tensors of nested data sets, shape ``(n_P, L, L, V, V)``.

    One data set of ``max(P_values)`` sequences is drawn from ``rng``; the data at
    each ``P`` is its first ``P`` sequences (common random numbers), so that the
    difference between neighbouring sample sizes is the added data, not a new draw.
    """
    spec = check_spec(spec)
    check_generator("rng", rng)
    P_values = np.asarray(P_values)
    if P_values.ndim != 1 or P_values.size == 0:
        raise ValueError("P_values must be a non-empty 1-d sequence")
    P_values = np.asarray([check_int("P_values entries", p, 1) for p in P_values.tolist()])
    X, _ = copy_task(int(P_values.max()), spec.L, spec.V, rng, cyclic=spec.cyclic)
    order = np.argsort(P_values, kind="stable")
    C = np.empty((P_values.size, spec.L, spec.L, spec.V, spec.V))
    running, done = np.zeros(C.shape[1:]), 0
    for i in order:
        running = running + cooccurrence(X[done:P_values[i]])
        done = P_values[i]
        C[i] = running
    return C


@dataclass(frozen=True)
class SweepResult:
    """MAP-filtered Adam results across sample sizes (see :func:`map_sweep`).

    P : ``(n_P,)``; train_loss, test_loss : ``(n_P,)`` final losses of the kept run;
    A : ``(n_P, L, L)``; W : ``(n_P, V, V)``; runs : the full :class:`TrainingResult`
    of all ``n_P * n_restarts`` runs (run ``i * n_restarts + k`` is restart ``k`` at ``P[i]``);
    kept : ``(n_P,)`` index of the kept run.
    """

    P: np.ndarray
    train_loss: np.ndarray
    test_loss: np.ndarray
    A: np.ndarray
    W: np.ndarray
    runs: TrainingResult
    kept: np.ndarray


def map_sweep(
    P_values: Sequence[int] | np.ndarray,
    spec: ModelSpec,
    rng: np.random.Generator,
    *,
    init_scales: npt.ArrayLike = (0.01, 1.0, 3.0),
    **train_kwargs: Any,
) -> SweepResult:
    """Adam with restarts over a range of sample sizes, keeping the lowest objective.

    The data sets are nested (:func:`nested_cooccurrence`); each is trained from
    ``len(init_scales)`` initialisations (logit scales), all runs batched together.
    ``train_kwargs`` go to :func:`train_map`.
    """
    check_generator("rng", rng)
    P_values = check_int_array("P_values", P_values, 1)
    scales = check_grid("init_scales", init_scales, positive=True)
    n_restarts = scales.size
    C = np.repeat(nested_cooccurrence(P_values, spec, rng), n_restarts, axis=0)
    generator = torch.Generator().manual_seed(int(rng.integers(2**62)))
    runs = train_map(C, spec, generator, init_scale=np.tile(scales, P_values.size), **train_kwargs)
    kept = lowest_objective(runs.objective, np.repeat(np.arange(P_values.size), n_restarts))
    return SweepResult(
        P=P_values,
        train_loss=runs.train_loss[kept, -1],
        test_loss=runs.test_loss[kept, -1],
        A=runs.A[kept],
        W=runs.W[kept],
        runs=runs,
        kept=kept,
    )
