"""Result types shared by the attention geometries (:mod:`copylib.theory.linear`, :mod:`copylib.theory.softmax`, :mod:`copylib.theory.causal`).

The same question gets the same verb and the same result type in every geometry (``CONTRIBUTING.md``):

* :class:`Minimum`: one minimum of the reduced action at one ``P`` (``local_minima`` returns a tuple of
  them, ``global_minimum`` one);
* :class:`MinimumCurve`: the global minimum along a grid of sample sizes (``minimum_curve``), the same
  fields as :class:`Minimum` as arrays;
* :class:`Spinodals`: where the copy minimum appears and the pooling minimum disappears;
* :class:`FirstOrderPoint`: where the pooling and the copy minimum exchange order, with the two states
  there and the jump of the order parameter.

A field a geometry cannot compute is ``None`` (each verb's docstring says which).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Minimum", "MinimumCurve", "Spinodals", "FirstOrderPoint"]

def _finite_or_none(name: str, x, *, allow_nan: bool = False) -> float | None:
    if x is None:
        return None
    x = float(x)
    if not (math.isfinite(x) or (allow_nan and math.isnan(x))):
        raise ValueError(f"{name} must be a finite float or None, got {x!r}")
    return x


@dataclass(frozen=True)
class Minimum:
    """A local (or the global) minimum of a geometry's reduced action at one sample size.

    P : the sample size (> 0); version : the theory version (``"mean_field"``, ``"fluct"``, ``"map"``, ...);
    action : ``S`` at the minimum (nats);
    order_parameter : what the book plots for the state: the copy share ``Q/(m + Q)`` (linear; 0 at the
    symmetric point ``m = q = 0``), the copy weight ``c`` (softmax), the mean copy weight of the rows
    with a target (causal);
    test_loss : the predicted test loss per position with the plug-in readout, or ``None`` where the
    geometry has no loss of a state (causal);
    coordinates : the geometry's own variables by name: ``{"m", "q", "r2"}`` (linear), ``{"Delta"}``
    (softmax, causal uniform gap);
    grad_norm : ``|grad S|`` at the returned point (linear: in prior-whitened units), ``None`` where the
    minimum is a refined root of ``S'`` (softmax, causal).
    """

    P: float
    version: str
    action: float
    order_parameter: float
    test_loss: float | None
    coordinates: Mapping[str, float] = field(hash=False)
    grad_norm: float | None = None

    def __post_init__(self):
        P = float(self.P)
        if not (P > 0 and math.isfinite(P)):
            raise ValueError(f"P must be a finite float > 0, got {self.P!r}")
        object.__setattr__(self, "P", P)
        if not isinstance(self.version, str):
            raise TypeError(f"version must be a str, got {type(self.version).__name__}")
        object.__setattr__(self, "action", _finite_or_none("action", self.action))
        object.__setattr__(self, "order_parameter", _finite_or_none("order_parameter", self.order_parameter,
                                                                     allow_nan=True))
        object.__setattr__(self, "test_loss", _finite_or_none("test_loss", self.test_loss))
        object.__setattr__(self, "grad_norm", _finite_or_none("grad_norm", self.grad_norm))
        if not isinstance(self.coordinates, Mapping) or not self.coordinates:
            raise ValueError(f"coordinates must be a non-empty mapping of names to floats, got {self.coordinates!r}")
        object.__setattr__(self, "coordinates", {str(k): float(v) for k, v in self.coordinates.items()})


@dataclass(frozen=True)
class MinimumCurve:
    """The global minimum of a geometry's reduced action along a grid of sample sizes (``minimum_curve``).

    The fields of :class:`Minimum`, as float64 arrays of shape ``(n_P,)`` in the order of ``P``:

    P : the sample sizes (> 0); version : the theory version;
    action : ``S`` at the global minimum (nats);
    order_parameter : the copy share (linear; ``nan`` at the symmetric point), the copy weight (softmax), the
    mean copy weight of the rows with a target (causal);
    test_loss : the predicted test loss per position, or ``None`` (causal);
    coordinates : the geometry's own variables by name, each an array: ``{"m", "q", "r2"}`` (linear),
    ``{"Delta"}`` (softmax, causal uniform gap);
    n_minima : the number of local minima at each ``P`` (softmax, causal), or ``None`` (linear: its
    trust-region search returns the global minimum only).
    """

    P: np.ndarray
    version: str
    action: np.ndarray
    order_parameter: np.ndarray
    test_loss: np.ndarray | None
    coordinates: Mapping[str, np.ndarray] = field(hash=False)
    n_minima: np.ndarray | None = None

    def __post_init__(self):
        P = np.array(self.P, dtype=np.float64)
        if P.ndim != 1 or P.size == 0 or not (np.all(np.isfinite(P)) and np.all(P > 0)):
            raise ValueError(f"P must be a non-empty 1-d array of finite values > 0, got {self.P!r}")
        object.__setattr__(self, "P", P)
        if not isinstance(self.version, str):
            raise TypeError(f"version must be a str, got {type(self.version).__name__}")

        def along(name, x):
            x = np.array(x, dtype=np.float64)
            if x.shape != P.shape:
                raise ValueError(f"{name} must have the shape of P {P.shape}, got {x.shape}")
            return x

        object.__setattr__(self, "action", along("action", self.action))
        object.__setattr__(self, "order_parameter", along("order_parameter", self.order_parameter))
        if self.test_loss is not None:
            object.__setattr__(self, "test_loss", along("test_loss", self.test_loss))
        if not isinstance(self.coordinates, Mapping) or not self.coordinates:
            raise ValueError(f"coordinates must be a non-empty mapping of names to arrays, got {self.coordinates!r}")
        object.__setattr__(self, "coordinates",
                           {str(k): along(f"coordinates[{k!r}]", v) for k, v in self.coordinates.items()})
        if self.n_minima is not None:
            n = np.array(self.n_minima)
            if n.shape != P.shape or not np.issubdtype(n.dtype, np.integer) or np.any(n < 1):
                raise ValueError(f"n_minima must be integers >= 1 of the shape of P {P.shape}, got {self.n_minima!r}")
            object.__setattr__(self, "n_minima", n)


@dataclass(frozen=True)
class Spinodals:
    """Limits of the coexistence of the pooling and copy minima.

    * P_lower : the copy (large-``Delta``) minimum appears for ``P > P_lower``.
    * P_upper : the pooling (small-``Delta``) minimum disappears for ``P > P_upper``.
    * Delta_lower, Delta_upper : the gap where the marginal minimum is born / dies (there
      ``S' = S'' = 0``; ``nan`` where it was not located).
    """

    P_lower: float
    P_upper: float
    Delta_lower: float
    Delta_upper: float


@dataclass(frozen=True)
class FirstOrderPoint:
    """Where the pooling and the copy minimum exchange order (``first_order_point`` of every geometry).

    * P3 : the sample size of the exchange (softmax, causal: equal action of the two minima; linear: the
      steepest change of the global minimum, bisected to a bracket of relative width ``rel_width``).
    * version : the theory version.
    * pooling, copy : the two states (:class:`Minimum`): at ``P3`` (softmax, causal) or at the lower and
      upper end of the final bracket (linear).
    * first_order : whether the exchange is a jump between two coexisting minima (softmax, causal: always,
      since both are found between the spinodals; linear: tested, see its ``first_order_point``).
    * two_minima : whether two distinct local minima coexist around ``P3`` (softmax, causal: always).
    * spinodals : :class:`Spinodals` (softmax, causal), ``None`` (linear: not located).
    * P2 : the crossover the linear scan is centred on; ``None`` (softmax, causal).
    * rel_width : the final bracket ``P_hi/P_lo - 1`` (linear); ``None`` (softmax, causal: a brentq root).
    * delta_action : ``S_copy - S_pool`` (nats) just below and just above ``P3`` (linear; ``(nan, nan)``
      without two minima); ``None`` (softmax, causal: zero at ``P3`` by construction).
    * slope : ``d(S_copy - S_pool)/d ln P`` at ``P3`` (linear; ``nan`` without two minima); ``None`` otherwise.

    The property :attr:`jump` is the change of the order parameter, copy minus pooling.
    """

    P3: float
    version: str
    pooling: Minimum
    copy: Minimum
    first_order: bool
    two_minima: bool
    spinodals: Spinodals | None = None
    P2: float | None = None
    rel_width: float | None = None
    delta_action: tuple[float, float] | None = None
    slope: float | None = None

    def __post_init__(self):
        for name in ("pooling", "copy"):
            if not isinstance(getattr(self, name), Minimum):
                raise TypeError(f"{name} must be a Minimum, got {type(getattr(self, name)).__name__}")
        if self.spinodals is not None and not isinstance(self.spinodals, Spinodals):
            raise TypeError(f"spinodals must be a Spinodals or None, got {type(self.spinodals).__name__}")

    @property
    def jump(self) -> float:
        """The jump of the order parameter across ``P3``: ``copy.order_parameter - pooling.order_parameter``
        (copy share, linear; copy weight, softmax and causal)."""
        return self.copy.order_parameter - self.pooling.order_parameter
