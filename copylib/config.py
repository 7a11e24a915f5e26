"""The one switch between default (fast) and paper-scale problem sizes.

Set the environment variable ``COPYHEAD_SCALE`` to ``paper`` to run the
paper-scale experiments; anything else than ``default`` or ``paper`` is an error.
"""

from __future__ import annotations

import os
from typing import TypeVar

__all__ = ["by_scale", "scale"]

_SCALES = ("default", "paper")
_T = TypeVar("_T")


def scale() -> str:
    """The problem scale selected by ``COPYHEAD_SCALE`` (``"default"`` when unset)."""
    value = os.environ.get("COPYHEAD_SCALE", "default").strip().lower() or "default"
    if value not in _SCALES:
        raise ValueError(f"COPYHEAD_SCALE must be one of {_SCALES}, got {value!r}")
    return value


def by_scale(default: _T, paper: _T) -> _T:
    """Return ``default`` or ``paper`` according to :func:`scale`."""
    return paper if scale() == "paper" else default
