"""A small on-disk cache for the results of expensive experiments (sampling runs, Adam sweeps).

A result is a dict of numpy arrays. It is stored under a key that is the sha256
of a canonical JSON text of

* the experiment's name and all its parameters (arrays enter by dtype, shape
  and the sha256 of their bytes; random generators enter by their full state,
  see below),
* the sha256 of the bytes of every source file of ``copylib`` (any change of
  the library recomputes everything), and the numpy and torch versions.

Files, in the cache directory, per entry:

``<name>-<key>.json``
    metadata: the key, the parameters (for humans), the name of the payload
    file and the sha256 of its bytes, and the name, dtype and shape of every
    array.
``<name>-<key>-<payload sha256[:16]>.npz``
    the arrays, written by ``numpy.lib.format.write_array`` with
    ``allow_pickle=False`` into a zip with fixed time stamps (so equal results
    give byte-identical files), read back with ``np.load(allow_pickle=False)``.
    Pickle is never written or read: an object array is refused with
    ``ValueError``.

Writes go to a temporary file in the same directory, which is then renamed over
the final name with ``os.replace`` (atomic on POSIX and Windows): a reader
sees the old file or the new one, never a partial one. The payload is written
before the metadata and its file name contains its checksum, so any metadata
file that exists points to a complete payload, whatever other writers do;
two processes that compute the same entry at once both end with a valid entry
(the last metadata written wins; equal results share one payload file).

On reading, the metadata must parse, carry the expected key, name a payload
whose sha256 matches, and the payload must load (without pickle) into exactly
the arrays the metadata lists. Anything else (a missing, truncated, garbled or
mismatched file) is a miss: the result is recomputed and the entry rewritten;
a damaged file is never trusted.

Random generators. A numpy ``Generator`` or a torch ``Generator`` cannot be
hashed as an object, and a seed alone does not say how far it has advanced.
The wrappers that cache a computation consuming a generator (``cache=True`` of
:func:`copylib.inference.map_training.train_map`, :func:`copylib.inference.posterior_sampling.sample_collapsed_posterior`,
:func:`copylib.inference.posterior_sampling.sample_full_posterior`) key it by its *complete state*
(``torch.Generator.get_state()`` bytes), store the state the computation leaves
it in, and on a hit set the generator to that state: a cached call consumes the
generator exactly as the computation would, so what follows it in a chapter is
unchanged. ``_canonical_json`` itself refuses generators (``ValueError``).

Location and switch:

* ``COPYHEAD_CACHE_DIR``: the directory (created if needed). Default: ``.cache/copyhead``
  under the repository root when ``copylib`` runs from a source checkout
  (hidden directories are excluded from the book build), else
  ``$XDG_CACHE_HOME/copyhead`` (``~/.cache/copyhead``).
* ``COPYHEAD_CACHE=off`` (or ``0``, ``false``, ``no``): compute everything, read
  and write nothing. Clearing the cache = deleting the directory.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import math
import numbers
import os
import re
import tempfile
import warnings
import zipfile
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path

import numpy as np
import numpy.typing as npt

__all__ = ["cache_dir", "cached", "source_digest", "write_atomic"]

_FORMAT = 1
_NAME = re.compile(r"^[A-Za-z0-9_.]+$")
_OFF = ("off", "0", "false", "no")
_PACKAGE = Path(__file__).resolve().parent


def _cache_enabled() -> bool:
    """False when ``COPYHEAD_CACHE`` is ``off``/``0``/``false``/``no`` (case-insensitive)."""
    return os.environ.get("COPYHEAD_CACHE", "on").strip().lower() not in _OFF


def cache_dir() -> Path:
    """The cache directory (see the module docstring); not created here."""
    env = os.environ.get("COPYHEAD_CACHE_DIR", "").strip()
    if env:
        return Path(env).expanduser()
    root = _PACKAGE.parent
    if (root / "pyproject.toml").is_file() and (root / "copylib" / "__init__.py").is_file():
        return root / ".cache" / "copyhead"
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(base) / "copyhead"


@cache
def _digest_of(package_dir: str) -> str:
    h = hashlib.sha256()
    for path in sorted(Path(package_dir).rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        rel = path.relative_to(package_dir).as_posix().encode()
        data = path.read_bytes()
        h.update(len(rel).to_bytes(8, "little") + rel + len(data).to_bytes(8, "little") + data)
    return h.hexdigest()


def source_digest(package_dir: str | os.PathLike | None = None) -> str:
    """sha256 of the relative names and bytes of every ``.py`` file of ``copylib``
    (or of ``package_dir``). Computed once per process and directory."""
    return _digest_of(str(Path(package_dir).resolve() if package_dir is not None else _PACKAGE))


def _c_order(a: np.ndarray) -> np.ndarray:
    # not np.ascontiguousarray: it turns 0-d arrays into 1-d ones
    return a if a.flags.c_contiguous else a.copy(order="C")


def _canonical(value, where: str):
    """A JSON-able, canonical form of ``value`` (``where`` names it in error messages)."""
    if value is None or isinstance(value, (bool, np.bool_)):
        return None if value is None else bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        v = float(value)
        if not math.isfinite(v):
            raise ValueError(f"{where} must be finite to be part of a cache key, got {v}")
        return {"float": v.hex()}  # exact, and distinct from an int of the same value
    if isinstance(value, str):
        return value
    if isinstance(value, np.random.Generator) or type(value).__name__ == "Generator":
        raise ValueError(f"{where} is a random generator: its state cannot be keyed here; "
                         "pass an integer seed (or use a cache=True wrapper, which keys a generator's state)")
    if hasattr(value, "detach") and hasattr(value, "numpy"):  # a torch tensor
        value = value.detach().cpu().numpy()
    if isinstance(value, np.ndarray):
        if value.dtype.hasobject:
            raise ValueError(f"{where} is an object array: only plain numeric arrays can be keyed")
        a = _c_order(value)
        return {"ndarray": {"dtype": a.dtype.str, "shape": list(a.shape),
                            "sha256": hashlib.sha256(a.tobytes()).hexdigest()}}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: _canonical(getattr(value, f.name), f"{where}.{f.name}") for f in dataclasses.fields(value)}
        return {"dataclass": type(value).__qualname__, "fields": fields}
    if isinstance(value, Mapping):
        out = {}
        for k in value:
            if not isinstance(k, str):
                raise ValueError(f"{where} must have string keys to be part of a cache key, got {k!r}")
            out[k] = _canonical(value[k], f"{where}[{k!r}]")
        return {"mapping": dict(sorted(out.items()))}
    if isinstance(value, (list, tuple)):
        return [_canonical(v, f"{where}[{i}]") for i, v in enumerate(value)]
    raise ValueError(f"{where} of type {type(value).__name__} cannot be part of a cache key "
                     "(use numbers, strings, arrays, dataclasses, lists or dicts of them)")


def _canonical_json(params: Mapping) -> str:
    """The canonical JSON text of a parameter dict (sorted keys, no whitespace, exact floats).

    Raises ``ValueError`` naming the parameter for anything that cannot be keyed
    reliably: non-finite floats, object arrays, random generators, other objects.
    """
    if not isinstance(params, Mapping):
        raise ValueError(f"key_params must be a dict, got {type(params).__name__}")
    return json.dumps(_canonical(params, "key_params"), sort_keys=True, separators=(",", ":"), allow_nan=False)


def _cache_key(name: str, key_params: Mapping, *, source: str | None = None) -> str:
    """sha256 (hex) of the experiment's name, its canonical parameters, copylib's source
    digest (or ``source``) and the numpy and torch versions."""
    _check_name(name)
    import torch

    text = json.dumps({"format": _FORMAT, "name": name, "params": json.loads(_canonical_json(key_params)),
                       "source": source if source is not None else source_digest(),
                       "numpy": np.__version__, "torch": torch.__version__},
                      sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _check_name(name) -> None:
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"name must be a non-empty string of letters, digits, '_' and '.', got {name!r}")


def _as_arrays(result, name: str) -> dict:
    if not isinstance(result, Mapping):
        raise ValueError(f"the cached function of {name!r} must return a dict of arrays, got {type(result).__name__}")
    arrays = {}
    for k, v in result.items():
        if not isinstance(k, str) or not re.match(r"^[A-Za-z0-9_./-]+$", k):
            raise ValueError(f"result keys must be strings of letters, digits and '_./-', got {k!r}")
        a = np.asarray(v)
        if a.dtype.hasobject:
            raise ValueError(f"result[{k!r}] is an object array: it would need pickle, which the cache never uses")
        arrays[k] = a
    return arrays


def _npz_bytes(arrays: dict) -> bytes:
    """An .npz archive of ``arrays`` with fixed time stamps (equal arrays, equal bytes)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as zf:
        for k in sorted(arrays):
            info = zipfile.ZipInfo(k + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            with zf.open(info, "w", force_zip64=True) as fid:
                np.lib.format.write_array(fid, _c_order(arrays[k]), allow_pickle=False)
    return buf.getvalue()


def write_atomic(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` so that a reader sees the old file or the new one, never a torn one.

    The bytes go to a temporary file in the same directory, are flushed to disk and
    renamed over ``path`` (atomic on POSIX); an interrupted write leaves no temporary
    file behind. Shared by the result cache and the check records of the validation report.
    """
    path = Path(path)
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError(f"data must be bytes, got {type(data).__name__}")
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix="." + path.name + ".", suffix=".tmp")
    try:
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide a shared cache from other users
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _load(directory: Path, name: str, key: str):
    """The stored arrays of ``(name, key)``, or None if there is no valid entry."""
    try:
        meta = json.loads((directory / f"{name}-{key}.json").read_text(encoding="utf-8"))
        if meta.get("format") != _FORMAT or meta.get("key") != key or meta.get("name") != name:
            return None
        payload = meta["payload"]
        if not re.match(rf"^{re.escape(name)}-{key}-[0-9a-f]{{16}}\.npz$", payload):
            return None
        data = (directory / payload).read_bytes()
        if hashlib.sha256(data).hexdigest() != meta["payload_sha256"]:
            return None
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
        listed = meta["arrays"]
        if set(arrays) != set(listed):
            return None
        for k, a in arrays.items():
            if a.dtype.str != listed[k]["dtype"] or list(a.shape) != listed[k]["shape"]:
                return None
        return arrays
    except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile, EOFError):
        return None


def _store(directory: Path, name: str, key: str, arrays: dict, params_text: str) -> None:
    data = _npz_bytes(arrays)
    digest = hashlib.sha256(data).hexdigest()
    payload = f"{name}-{key}-{digest[:16]}.npz"
    directory.mkdir(parents=True, exist_ok=True)
    if not (directory / payload).is_file() or hashlib.sha256((directory / payload).read_bytes()).hexdigest() != digest:
        write_atomic(directory / payload, data)
    meta = {"format": _FORMAT, "name": name, "key": key, "payload": payload, "payload_sha256": digest,
            "arrays": {k: {"dtype": a.dtype.str, "shape": list(a.shape)} for k, a in arrays.items()},
            "params": json.loads(params_text), "source": source_digest()}
    write_atomic(directory / f"{name}-{key}.json", json.dumps(meta, sort_keys=True, indent=1).encode())


def cached(fn: Callable[[], Mapping[str, npt.ArrayLike]], key_params: Mapping[str, object], *, name: str,
           directory: str | os.PathLike | None = None, enabled: bool | None = None) -> dict[str, np.ndarray]:
    """``fn()`` (a dict of arrays), from the cache when a valid entry for ``(name, key_params)`` exists.

    Parameters
    ----------
    fn : callable without arguments returning ``{str: array_like}`` (no object arrays)
    key_params : dict
        Everything the result depends on besides copylib's source (see
        ``_canonical_json`` for what can be keyed).
    name : str
        The experiment's name (letters, digits, ``_``, ``.``): a prefix of the files.
    directory : path, optional
        Default :func:`cache_dir`.
    enabled : bool, optional
        Default ``_cache_enabled``; False computes and stores nothing.

    Returns
    -------
    dict ``str -> ndarray`` (numbers come back as 0-d arrays).
    """
    _check_name(name)
    params_text = _canonical_json(key_params)  # validates the parameters even when disabled
    if not (_cache_enabled() if enabled is None else enabled):
        return _as_arrays(fn(), name)
    key = _cache_key(name, key_params)
    directory = Path(directory) if directory is not None else cache_dir()
    hit = _load(directory, name, key)
    if hit is not None:
        return hit
    arrays = _as_arrays(fn(), name)
    try:
        _store(directory, name, key, arrays, params_text)
    except OSError as err:  # a cache that cannot be written must not lose the result
        warnings.warn(f"copylib.cache: could not store {name!r} in {directory}: {err}", RuntimeWarning, stacklevel=2)
    return arrays
