"""Argument checks shared by every public function.

Each check raises ``ValueError`` (or ``TypeError`` for a wrong kind of object)
whose message names the offending parameter and the allowed range, so that bad
input never turns into a silent NaN further down.
"""

from __future__ import annotations

import numbers

import numpy as np
import torch

ATTENTION_KINDS = ("linear", "softmax")


def check_int(name: str, value, minimum: int) -> int:
    """Return ``value`` as ``int`` if it is an integer >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
        raise TypeError(f"{name} must be an integer >= {minimum}, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value}")
    return int(value)


def check_positive(name: str, value, allow_zero: bool = False) -> float:
    """Return ``value`` as ``float`` if it is finite and > 0 (or >= 0)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    bound = ">= 0" if allow_zero else "> 0"
    if not np.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be finite and {bound}, got {value}")
    return value


def check_kind(kind: str) -> str:
    """Return the attention kind if it is one of :data:`ATTENTION_KINDS`."""
    if kind not in ATTENTION_KINDS:
        raise ValueError(f"kind must be one of {ATTENTION_KINDS}, got {kind!r}")
    return kind


def check_generator(name: str, rng, kind: str = "numpy"):
    """Require an explicit random generator: every draw in copylib goes through one."""
    if kind == "numpy" and not isinstance(rng, np.random.Generator):
        raise TypeError(f"{name} must be a numpy.random.Generator, got {type(rng).__name__}")
    if kind == "torch" and not isinstance(rng, torch.Generator):
        raise TypeError(f"{name} must be a torch.Generator, got {type(rng).__name__}")
    return rng


def check_finite(name: str, array) -> None:
    """Raise if a numpy array or torch tensor holds NaN or infinity."""
    finite = torch.isfinite(array).all().item() if isinstance(array, torch.Tensor) else np.isfinite(array).all()
    if not finite:
        raise ValueError(f"{name} must contain only finite values")


def check_shape(name: str, array, shape: tuple) -> None:
    """Check the trailing dimensions of ``array`` against ``shape`` (None = any)."""
    actual = tuple(array.shape)
    if len(actual) < len(shape) or any(
        s is not None and a != s for a, s in zip(actual[len(actual) - len(shape):], shape)
    ):
        want = "(..., " + ", ".join("*" if s is None else str(s) for s in shape) + ")"
        raise ValueError(f"{name} must have shape {want}, got {actual}")
