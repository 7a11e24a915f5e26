"""The induction chapter's onsets: where and how abruptly each head switches on, in ``P`` and in training time.

* :func:`steepness` -- the steepest normalised rise of a curve in ``ln P``;
* :func:`compare_onsets` -- onsets (half-way points) and steepness of the two-layer observables, per
  seed, against a one-layer reference (:class:`OnsetComparison`, with the margins the chapter checks);
* :func:`formation_steps` -- the training step at which each head makes half of its change;
* :func:`onset_shift` -- how far the onsets and steepness move when the same runs are trained longer or
  restarted (:class:`OnsetShift`, a convergence test of the sweep).

Each takes the runs of :mod:`copylib.analysis.induction` and returns a small frozen result whose
fields the chapter glues and checks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from ..arguments import as_real_array, check_finite, check_grid, check_instance
from .induction import InductionSweep
from .transitions import half_way_point

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["steepness", "OnsetComparison", "compare_onsets", "FormationSteps", "formation_steps",
           "OnsetShift", "onset_shift"]


def _se(x, axis=None):
    """Standard error of the mean (``ddof = 1``) along ``axis`` (all entries for ``None``)."""
    x = np.asarray(x, dtype=float)
    n = x.size if axis is None else x.shape[axis]
    return np.std(x, axis=axis, ddof=1) / np.sqrt(n)


def _grid_and_curves(P, y, name="y"):
    """Checked ``P (n,)`` (``> 0``, strictly increasing, ``n >= 2``) and ``y (k, n)`` (one row per curve), finite."""
    P = check_grid("P", P, n_min=2, positive=True, increasing=True)
    y = as_real_array(name, y)
    if y.ndim not in (1, 2) or y.shape[-1] != P.size:
        raise ValueError(f"{name} must have shape ({P.size},) or (k, {P.size}) (one column per P), got {y.shape}")
    check_finite(name, y)
    return P, np.atleast_2d(y)


def steepness(P: npt.ArrayLike, y: npt.ArrayLike) -> np.ndarray:
    """The steepest normalised rise of each curve, ``max du / d ln P`` over the grid intervals.

    Parameters
    ----------
    P : array_like, shape (n,)
        Sample sizes, ``> 0`` and strictly increasing, ``n >= 2``.
    y : array_like, shape (n,) or (k, n)
        One curve per row, each changing between its first and last ``P``.

    Returns
    -------
    numpy.ndarray, shape (k,)
        With ``u = (y - y[0]) / (y[-1] - y[0])`` the rise normalised to [0, 1]: the largest
        ``Delta u / Delta ln P`` over the grid intervals. A rise spread evenly over a decade of ``P``
        gives ``1 / ln 10``; a jump inside one interval ``1 / (its width in ln P)``, a lower bound.
    """
    P, Y = _grid_and_curves(P, y)
    change = Y[:, -1] - Y[:, 0]
    if (change == 0).any():
        raise ValueError("y must change between the first and the last P in every curve")
    u = (Y - Y[:, :1]) / change[:, None]
    return (np.diff(u, axis=1) / np.diff(np.log(P))).max(1)


@dataclass(frozen=True)
class OnsetComparison:
    """Onsets and steepness of the two-layer observables, per seed, against a one-layer reference.

    names : the observables' names, in the order of the rows below; onset, steepness : ``(n_obs, n_seeds)``
    (:func:`copylib.analysis.transitions.half_way_point` and :func:`steepness` of each seed's curve);
    ref_onset, ref_steepness : ``(n_ref,)``, the same for the reference's runs; grid_step : the coarsest
    step of the two-layer grid in ``ln P``.
    """

    names: tuple
    onset: np.ndarray
    steepness: np.ndarray
    ref_onset: np.ndarray
    ref_steepness: np.ndarray
    grid_step: float

    def _row(self, name: str) -> int:
        if name not in self.names:
            raise ValueError(f"name must be one of {self.names}, got {name!r}")
        return self.names.index(name)

    def onset_ratio(self, name: str) -> float:
        """Mean onset of ``name`` over the mean onset of the reference."""
        return float(self.onset[self._row(name)].mean() / self.ref_onset.mean())

    def later_margin(self, name: str) -> float:
        """``ln(onset ratio)`` minus one grid step minus 3 s.e. of the per-seed ``ln`` onsets of ``name``:
        positive when ``name`` switches on later than the reference by more than that."""
        ln_on = np.log(self.onset[self._row(name)])
        return float(np.log(self.onset_ratio(name)) - self.grid_step - 3 * _se(ln_on))

    def same_onset_margin(self, a: str, b: str) -> float:
        """``|mean of ln onset(a) - ln onset(b)|`` (paired by seed) minus one grid step minus 3 s.e. of the
        paired differences: negative when the two onsets agree within that."""
        d = np.log(self.onset[self._row(a)]) - np.log(self.onset[self._row(b)])
        return float(abs(d.mean()) - self.grid_step - 3 * _se(d))

    def steeper_margin(self, name: str) -> float:
        """Mean steepness of ``name`` minus the reference's, minus 3 s.e. of the difference (independent runs):
        positive when ``name`` rises more steeply than the reference."""
        s = self.steepness[self._row(name)]
        return float(s.mean() - self.ref_steepness.mean() - 3 * np.hypot(_se(s), _se(self.ref_steepness)))

    def table(self, reference: str = "one layer alone: copy weight (Adam)") -> pd.DataFrame:
        """The mean onset and steepness of every observable and of the reference, with standard errors,
        as a pandas ``DataFrame`` (one row each)."""
        import pandas as pd

        rows = list(zip(self.names, self.onset, self.steepness)) + [(reference, self.ref_onset, self.ref_steepness)]
        return pd.DataFrame([{"observable": n, "onset P": o.mean(), "onset s.e.": _se(o), "steepness": s.mean(),
                              "steepness s.e.": _se(s)} for n, o, s in rows]).set_index("observable")


def compare_onsets(P: npt.ArrayLike, observables: dict, P_ref: npt.ArrayLike, reference: npt.ArrayLike
                   ) -> OnsetComparison:
    """Onsets (half-way points in ``ln P``) and steepness of every seed's curve, and of a reference's runs.

    Parameters
    ----------
    P : array_like, shape (n_P,)
        The two-layer grid, ``> 0`` and strictly increasing.
    observables : dict of str to array_like, shape (n_seeds, n_P)
        One curve per seed for each observable (e.g. :class:`copylib.analysis.induction.InductionSweep`
        fields), ``n_seeds >= 2``.
    P_ref : array_like, shape (n_ref_P,)
        The reference's grid.
    reference : array_like, shape (n_ref, n_ref_P)
        The reference's curves, one per run, ``n_ref >= 2``.

    Returns
    -------
    OnsetComparison
    """
    if not isinstance(observables, dict) or not observables:
        raise TypeError("observables must be a non-empty dict of name -> (n_seeds, n_P) curves")
    curves = {str(k): _grid_and_curves(P, v, "observables")[1] for k, v in observables.items()}
    P = _grid_and_curves(P, next(iter(curves.values())), "observables")[0]
    if len({c.shape for c in curves.values()}) != 1 or next(iter(curves.values())).shape[0] < 2:
        raise ValueError("observables must all have the same shape (n_seeds, n_P) with n_seeds >= 2")
    P_ref, ref = _grid_and_curves(P_ref, reference, "reference")
    if ref.shape[0] < 2:
        raise ValueError("reference must have at least 2 runs (rows), for a standard error")
    return OnsetComparison(names=tuple(curves), onset=np.stack([half_way_point(P, c.T) for c in curves.values()]),
                           steepness=np.stack([steepness(P, c) for c in curves.values()]),
                           ref_onset=np.asarray(half_way_point(P_ref, ref.T)), ref_steepness=steepness(P_ref, ref),
                           grid_step=float(np.diff(np.log(P)).max()))


@dataclass(frozen=True)
class FormationSteps:
    """When each head forms in training time, in the runs above the transition.

    P : ``(n_above,)`` the sizes whose mean layer-1 copy weight is above the middle of its range;
    layer1, layer2, loss : ``(n_seeds, n_above)``, the first recorded Adam step at which layer 1's copy weight,
    layer 2's induction score and (falling) the training loss have made half of their change;
    record_interval : the largest gap between recorded steps.
    """

    P: np.ndarray
    layer1: np.ndarray
    layer2: np.ndarray
    loss: np.ndarray
    record_interval: float

    @property
    def lag(self) -> np.ndarray:
        """Layer 2's half-way step minus layer 1's, one per run, ``(n_seeds * n_above,)``."""
        return (self.layer2 - self.layer1).ravel()

    def table(self) -> pd.DataFrame:
        """The mean, smallest and largest half-way step of each curve over the runs (a pandas ``DataFrame``)."""
        import pandas as pd

        rows = {"layer 1: copy weight": self.layer1, "layer 2: induction score": self.layer2,
                "training loss": self.loss}
        return pd.DataFrame([{"mean step": v.mean(), "earliest": int(v.min()), "latest": int(v.max())}
                             for v in rows.values()], index=pd.Index(list(rows), name="half-way point of"))


def formation_steps(sweep: InductionSweep) -> FormationSteps:
    """Half-way steps of the heads and of the loss in the runs of ``sweep`` above the transition.

    Parameters
    ----------
    sweep : InductionSweep
        From :func:`copylib.analysis.induction.induction_sweep`; the runs above the transition are those at the
        ``P`` whose seed-mean layer-1 copy weight exceeds the middle of the range of all runs' final copy weights.

    Returns
    -------
    FormationSteps
    """
    check_instance("sweep", sweep, InductionSweep)
    above = sweep.c1.mean(0) > 0.5 * (sweep.c1.max() + sweep.c1.min())
    if not above.any():
        raise ValueError("sweep has no P above the middle of its copy-weight range")

    def half_time(curve):
        u = (curve - curve[..., :1]) / (curve[..., -1:] - curve[..., :1])
        return sweep.steps[np.argmax(u >= 0.5, axis=-1)]

    return FormationSteps(P=sweep.P[above], layer1=half_time(sweep.c1_curve[:, above]),
                          layer2=half_time(sweep.score_curve[:, above]),
                          loss=half_time(-sweep.train_mse_curve[:, above]),
                          record_interval=float(np.diff(sweep.steps).max()))


@dataclass(frozen=True)
class OnsetShift:
    """Onsets and steepness of the same observables from two versions of a sweep (e.g. more steps, restarts).

    names : the observables; onset_a, onset_b, steepness_a, steepness_b : ``(n_obs, n_seeds)``, per seed, of
    version a (the sweep as run) and version b (the check of its convergence).
    """

    names: tuple
    onset_a: np.ndarray
    onset_b: np.ndarray
    steepness_a: np.ndarray
    steepness_b: np.ndarray

    def margins(self) -> np.ndarray:
        """Per observable, ``|mean onset b - mean onset a|`` minus the combined standard error
        ``hypot(s.e. a, s.e. b)``, and the same for the steepness: ``(n_obs, 2)``; negative when version b
        moves the onset (steepness) by less than the two error bars combined."""
        out = []
        for a, b in ((self.onset_a, self.onset_b), (self.steepness_a, self.steepness_b)):
            out.append(abs(b.mean(1) - a.mean(1)) - np.hypot(_se(a, 1), _se(b, 1)))
        return np.stack(out, 1)

    def table(self, labels: tuple = ("a", "b")) -> pd.DataFrame:
        """Mean onset and steepness of each observable in both versions (named by ``labels``), with the
        combined standard errors, as a pandas ``DataFrame`` (one row per observable)."""
        import pandas as pd

        if len(labels) != 2:
            raise ValueError(f"labels must name the two versions, got {labels!r}")
        a, b = labels
        return pd.DataFrame({f"onset P ({a})": self.onset_a.mean(1), f"onset P ({b})": self.onset_b.mean(1),
                             "onset combined s.e.": np.hypot(_se(self.onset_a, 1), _se(self.onset_b, 1)),
                             f"steepness ({a})": self.steepness_a.mean(1), f"steepness ({b})": self.steepness_b.mean(1),
                             "steepness combined s.e.": np.hypot(_se(self.steepness_a, 1), _se(self.steepness_b, 1))},
                            index=pd.Index(list(self.names), name="observable"))


def onset_shift(P: npt.ArrayLike, observables_a: dict, observables_b: dict) -> OnsetShift:
    """Onsets and steepness per seed of the same observables in two versions of a sweep on the same grid.

    Parameters
    ----------
    P : array_like, shape (n_P,)
        The grid, ``> 0`` and strictly increasing.
    observables_a, observables_b : dict of str to array_like, shape (n_seeds, n_P)
        The same names in both; one curve per seed, ``n_seeds >= 2`` (the seeds may differ in number).

    Returns
    -------
    OnsetShift
    """
    for name, obs in (("observables_a", observables_a), ("observables_b", observables_b)):
        if not isinstance(obs, dict) or not obs:
            raise TypeError(f"{name} must be a non-empty dict of name -> (n_seeds, n_P) curves")
    if set(map(str, observables_a)) != set(map(str, observables_b)):
        raise ValueError("observables_a and observables_b must have the same names")
    names = tuple(map(str, observables_a))
    fields = {}
    for tag, obs in (("a", observables_a), ("b", observables_b)):
        obs = {str(k): v for k, v in obs.items()}
        curves = [_grid_and_curves(P, obs[n], f"observables_{tag}") for n in names]
        if any(c.shape[0] < 2 for _, c in curves):
            raise ValueError(f"observables_{tag} must have at least 2 seeds (rows) per observable")
        fields[f"onset_{tag}"] = np.stack([half_way_point(Pc, c.T) for Pc, c in curves])
        fields[f"steepness_{tag}"] = np.stack([steepness(Pc, c) for Pc, c in curves])
    return OnsetShift(names=names, **fields)
