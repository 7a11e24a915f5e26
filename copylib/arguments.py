"""Argument checks shared by every public function.

Each check raises ``ValueError`` (or ``TypeError`` for a wrong kind of object)
whose message names the offending parameter and the allowed range, so that bad
input never turns into a silent NaN further down.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from typing import TypeVar

import numpy as np
import numpy.typing as npt
import torch

__all__ = ["as_finite_array", "as_paired_arrays", "as_real_array", "check_attention", "check_bool", "check_finite",
           "check_generator", "check_grid", "check_instance", "check_int", "check_int_array", "check_P",
           "check_P_range", "check_P_values", "check_positive", "check_shape", "check_version"]

_T = TypeVar("_T")


def check_int(name: str, value: object, minimum: int) -> int:
    """Return ``value`` as ``int`` if it is an integer >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
        raise TypeError(f"{name} must be an integer >= {minimum}, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value}")
    return int(value)


def check_positive(name: str, value: object, allow_zero: bool = False) -> float:
    """Return ``value`` as ``float`` if it is finite and > 0 (or >= 0)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    bound = ">= 0" if allow_zero else "> 0"
    try:
        value = float(value)
    except OverflowError:  # an int beyond the float range is not finite as a float
        raise ValueError(f"{name} must be finite and {bound}, got an integer too large for a float") from None
    if not np.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be finite and {bound}, got {value}")
    return value


def check_bool(name: str, value: object) -> bool:
    """Return ``value`` if it is a ``bool`` (a truthy array or string is a bug, not a flag)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return bool(value)


def check_generator(name: str, rng: object, kind: str = "numpy") -> np.random.Generator | torch.Generator:
    """Require an explicit random generator: every draw in copylib goes through one."""
    if kind not in ("numpy", "torch"):
        raise ValueError(f"kind must be 'numpy' or 'torch', got {kind!r}")
    if kind == "numpy" and not isinstance(rng, np.random.Generator):
        raise TypeError(f"{name} must be a numpy.random.Generator, got {type(rng).__name__}")
    if kind == "torch" and not isinstance(rng, torch.Generator):
        raise TypeError(f"{name} must be a torch.Generator, got {type(rng).__name__}")
    return rng


def check_instance(name: str, value: object, cls: type[_T]) -> _T:
    """Return ``value`` if it is an instance of ``cls`` (a result or data class that a function consumes);
    ``TypeError`` naming ``name``, the class and the type given otherwise."""
    if not isinstance(value, cls):
        article = "an" if cls.__name__[:1].lower() in "aeiou" else "a"
        raise TypeError(f"{name} must be {article} {cls.__name__}, got {type(value).__name__}")
    return value


def as_real_array(name: str, value: npt.ArrayLike) -> np.ndarray:
    """``value`` as a float64 numpy array; ``TypeError`` naming ``name`` unless it holds real numbers.

    Rejects what ``np.asarray(..., dtype=float64)`` would silently turn into
    numbers or NaN: ``None`` (-> NaN), strings (``"1.5"`` -> 1.5), a bare bool,
    complex (imaginary part dropped), object and date arrays; a ragged nested
    sequence raises ``ValueError``. Boolean *arrays* are accepted as 0/1 data.
    """
    if value is None or isinstance(value, (str, bytes, bool, np.bool_)):
        raise TypeError(f"{name} must be a real number or array of real numbers, got {type(value).__name__}")
    try:
        raw = np.asarray(value)
    except ValueError:
        raise ValueError(f"{name} must be a rectangular array (nested sequences of equal length)") from None
    if raw.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be a real number or array of real numbers, got dtype {raw.dtype}")
    return raw.astype(np.float64, copy=False)


def check_finite(name: str, array: npt.ArrayLike | torch.Tensor) -> None:
    """Raise if a numpy array or torch tensor holds NaN or infinity."""
    if isinstance(array, torch.Tensor):
        # One reduction and one scalar read is ~10x cheaper than isfinite().all() on the small tensors
        # of a training or sampling step; a sum that overflows on finite entries falls through to the full test.
        finite = math.isfinite(array.detach().sum().item()) or bool(torch.isfinite(array.detach()).all())
    else:
        finite = np.isfinite(array).all()
    if not finite:
        raise ValueError(f"{name} must contain only finite values")


def check_shape(name: str, array: np.ndarray | torch.Tensor, shape: tuple[int | None, ...],
                source: str | None = None) -> None:
    """Check the trailing dimensions of ``array`` against ``shape`` (None = any).

    ``source``: the parameter the expected sizes were read from, named in the message
    (when two arguments disagree, either may be the wrong one).
    """
    actual = tuple(array.shape)
    if len(actual) < len(shape) or any(
        s is not None and a != s for a, s in zip(actual[len(actual) - len(shape):], shape)
    ):
        want = "(..., " + ", ".join("*" if s is None else str(s) for s in shape) + ")"
        origin = f" (sizes taken from {source})" if source else ""
        raise ValueError(f"{name} must have shape {want}{origin}, got {actual}")


def check_attention(name: str, A: np.ndarray | torch.Tensor, L: int | None = None, *, batched: bool = True) -> int:
    """An attention matrix (numpy array or torch tensor): square ``L x L`` with ``L >= 2`` in its last two
    dimensions (the only two unless ``batched``), ``L`` equal to the given one if any, finite. Returns ``L``.
    Raises ``ValueError`` naming ``name`` otherwise."""
    shape = tuple(A.shape)
    if len(shape) < 2 or (not batched and len(shape) != 2) or shape[-1] != shape[-2] or shape[-1] < 2:
        dims = "a square L x L matrix" if not batched else "square in its last two dimensions"
        raise ValueError(f"{name} must be {dims} with L >= 2, got shape {shape}")
    if L is not None and shape[-1] != L:
        raise ValueError(f"{name} must have shape (..., {L}, {L}) (L = spec.L), got {shape}")
    check_finite(name, A)
    return int(shape[-1])


def check_P_range(P_range: Iterable[float]) -> tuple[float, float]:
    """Return ``(P_min, P_max)`` if ``P_range`` is a pair of finite numbers with ``0 < P_min < P_max``."""
    if isinstance(P_range, (str, bytes)):
        raise ValueError(f"P_range must be a pair (P_min, P_max), got {P_range!r}")
    try:
        a, b = (float(x) for x in P_range)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"P_range must be a pair (P_min, P_max), got {P_range!r}") from None
    if not (math.isfinite(a) and math.isfinite(b) and 0 < a < b):
        raise ValueError(f"P_range must satisfy 0 < P_min < P_max (finite), got {P_range!r}")
    return a, b


def check_version(version: object, versions: tuple[str, ...]) -> str:
    """Return ``version`` if it is one of the strings in ``versions`` (a theory module's ``VERSIONS``).

    Raises ``ValueError`` naming ``version`` and the allowed values otherwise.
    """
    if not isinstance(version, str) or version not in versions:
        raise ValueError(f"version must be one of {tuple(versions)}, got {version!r}")
    return version


def as_finite_array(name: str, value: npt.ArrayLike, *, positive: bool = False,
                    nonnegative: bool = False) -> np.ndarray:
    """``value`` as a float64 array (:func:`as_real_array`) whose entries are all finite.

    positive / nonnegative : also require every entry > 0 (>= 0). Raises ``TypeError``
    for what is not real data and ``ValueError`` naming ``name`` (and the smallest entry
    when the sign is wrong) otherwise.
    """
    a = as_real_array(name, value)
    if not np.isfinite(a).all():
        raise ValueError(f"{name} must contain only finite values")
    if positive and (a <= 0).any():
        raise ValueError(f"{name} must be > 0, got a minimum of {a.min()}")
    if nonnegative and (a < 0).any():
        raise ValueError(f"{name} must be >= 0, got a minimum of {a.min()}")
    return a


def check_grid(name: str, values: npt.ArrayLike, *, n_min: int = 1, positive: bool = False,
               increasing: bool = False) -> np.ndarray:
    """``values`` as a 1-d float64 array of at least ``n_min`` finite entries (a grid or a series).

    positive : also require every entry > 0; increasing : also require strictly increasing entries.
    Raises ``TypeError`` for what is not real data (:func:`as_real_array`) and ``ValueError`` naming
    ``name`` and the requirement it misses otherwise.
    """
    a = as_real_array(name, values)
    if a.ndim != 1 or a.size < n_min:
        raise ValueError(f"{name} must be a 1-d array of at least {n_min} value(s), got shape {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError(f"{name} must contain only finite values")
    if positive and (a <= 0).any():
        raise ValueError(f"{name} must be > 0, got a minimum of {a.min()}")
    if increasing and (np.diff(a) <= 0).any():
        raise ValueError(f"{name} must be strictly increasing")
    return a


def check_int_array(name: str, values: npt.ArrayLike, minimum: int, *, increasing: bool = False) -> np.ndarray:
    """``values`` as a non-empty 1-d int64 array whose entries are integers >= ``minimum``
    (each as :func:`check_int`: ``2.0`` is not an integer); strictly increasing if ``increasing``."""
    want = f"{name} must be a non-empty 1-d sequence of integers >= {minimum}"
    try:
        raw = np.asarray(values)
    except ValueError:  # a ragged nested sequence
        raise ValueError(want) from None
    if raw.ndim != 1 or raw.size == 0:
        raise ValueError(f"{want}, got shape {raw.shape}")
    a = np.array([check_int(f"{name} entries", v, minimum) for v in raw.tolist()], dtype=np.int64)
    if increasing and (np.diff(a) <= 0).any():
        raise ValueError(f"{name} must be strictly increasing")
    return a


def check_P(P: npt.ArrayLike, name: str = "P") -> np.ndarray:
    """Sample sizes as a float64 array: finite and > 0 (``ValueError`` naming ``name`` otherwise)."""
    return as_finite_array(name, P, positive=True)


def check_P_values(P_values: npt.ArrayLike, name: str = "P_values") -> np.ndarray:
    """A grid of sample sizes: a non-empty 1-d float64 array, finite and > 0 (``ValueError`` naming ``name``)."""
    P = check_P(P_values, name)
    if P.ndim != 1 or P.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-d array, got shape {P.shape}")
    return P


def as_paired_arrays(x_name: str, x: npt.ArrayLike, y_name: str, y: npt.ArrayLike,
                     min_size: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """``x`` and ``y`` as finite float64 1-d arrays of one length, at least ``min_size``
    (a curve ``y(x)``, or two values per chain). Raises ``ValueError`` naming both otherwise."""
    a, b = as_finite_array(x_name, x), as_finite_array(y_name, y)
    if a.ndim != 1 or a.size < min_size or b.shape != a.shape:
        raise ValueError(f"{x_name} and {y_name} must be 1-d of equal length >= {min_size}, "
                         f"got shapes {a.shape} and {b.shape}")
    return a, b
