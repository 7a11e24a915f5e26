"""Numbers for the prose: glue many computed values in one call.

A chapter states a computed number in its prose through myst-nb's ``{glue:text}``
role, which reads a value the chapter glued under a key. One call per key made the
chapters' folded cells long; :func:`glue_values` glues any number of keys at once and
:func:`glue_fields` glues the numeric fields of a result object, each under
``prefix + field name``. Both refuse a value that is not a finite real number, naming
its key: a NaN in the prose would otherwise read as "nan" on the website.
"""

from __future__ import annotations

import dataclasses
import math
import numbers

import numpy as np

__all__ = ["glue_fields", "glue_values"]


def _finite_number(key: str, value) -> int | float:
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"glue key {key!r}: expected a real number, got {type(value).__name__}")
    if not math.isfinite(value):
        raise ValueError(f"glue key {key!r}: the value is {value}, not a finite number")
    return value


def glue_values(**values: float) -> None:
    """Glue each keyword argument under its name, without showing it in the cell's output.

    ``glue_values(la_nw32=nw32, la_acc32=rate)`` is ``glue("la_nw32", nw32, display=False)``
    and so on, after checking that every value is a finite real number.
    """
    from myst_nb import glue  # the book's renderer; imported here so copylib works without it

    checked = {key: _finite_number(key, value) for key, value in values.items()}
    for key, value in checked.items():
        glue(key, value, display=False)


def glue_fields(prefix: str, result: object, fields: tuple[str, ...] | None = None) -> None:
    """Glue fields of a dataclass result under ``prefix + field``.

    ``fields`` names the fields to glue; by default every field whose value is a real
    number (not a bool) is glued and the others are skipped.
    """
    if not dataclasses.is_dataclass(result) or isinstance(result, type):
        raise TypeError(f"result: expected a dataclass instance, got {type(result).__name__}")
    if fields is None:
        fields = tuple(f.name for f in dataclasses.fields(result)
                       if isinstance(getattr(result, f.name), numbers.Real | np.generic)
                       and not isinstance(getattr(result, f.name), bool | np.bool_))
    glue_values(**{prefix + name: getattr(result, name) for name in fields})
