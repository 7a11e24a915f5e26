"""Executed checks of the book's claims, recorded for the validation report.

Every quantitative claim of a chapter is checked by one call of a
:class:`Checks` method. The call compares a measured value with its tolerance,
records the outcome (claim, measured value, tolerance, pass) and raises
``AssertionError`` if the check fails, so a failing claim fails the build. The
records of a chapter are kept in one JSON file per chapter (rewritten
atomically after every check) that the *Validation report* page collects.

The record directory is ``$COPYHEAD_CHECKS_DIR`` if set, otherwise
``_build/checks`` under the book root (the folder holding ``_toc.yml``).
Each file carries the SHA-256 of its chapter's source and of copylib's
source, so the report can refuse records that an older build left behind.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from .cache import source_digest, write_atomic

__all__ = ["alternative_counts", "chapters_with_checks", "CheckRecord", "Checks", "data_set_tolerance",
           "DataSetTolerance", "load_records", "records_dir", "report_table"]

_ENV_DIR = "COPYHEAD_CHECKS_DIR"


@dataclass(frozen=True)
class CheckRecord:
    """One executed check: what is claimed, what was measured, what passes."""

    chapter: str
    claim: str
    measured: str
    tolerance: str
    passed: bool
    post_hoc: str = ""  # why the tolerance was set after seeing data ("" if it was set before)
    alternative: str = ""  # the nearest wrong alternative (a competing theory, or no effect); "" if none given
    alternative_measured: str = ""  # what the alternative gives for ``measured``
    discriminates: bool | None = None  # True: the alternative fails the same tolerance; None: no alternative
    no_alternative: str = ""  # why no nearest wrong alternative is named ("" if one is, or if no reason was given)


def _book_root(start: str | os.PathLike | None = None) -> Path:
    """The nearest folder at or above ``start`` (default: the cwd) holding ``_toc.yml``."""
    here = Path.cwd() if start is None else Path(start)
    for folder in (here.resolve(), *here.resolve().parents):
        if (folder / "_toc.yml").is_file():
            return folder
    raise FileNotFoundError(f"no _toc.yml at or above {here}: cannot locate the book root")


def records_dir(root: str | os.PathLike | None = None) -> Path:
    """Where check records are written: ``$COPYHEAD_CHECKS_DIR`` or ``<book root>/_build/checks``."""
    env = os.environ.get(_ENV_DIR)
    if env:
        return Path(env)
    return _book_root(root) / "_build" / "checks"


def _file_digest(path: str | os.PathLike) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _copylib_digest() -> str:
    """SHA-256 over the names and bytes of copylib's ``.py`` files (the result cache's key too)."""
    return source_digest()


def _fmt(x) -> str:
    x = np.asarray(x)
    if x.dtype == bool:
        return str(bool(x.all())) if x.size != 1 else str(bool(x))
    if x.size == 1:
        v = float(x)
        return f"{v:.4g}"
    return np.array2string(x.ravel()[:6], precision=4, separator=", ") + ("..." if x.size > 6 else "")


def _finite(name: str, x) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    if x.size == 0:
        raise ValueError(f"{name} must not be empty")
    if not np.all(np.isfinite(x)):
        # A NaN compares False with everything, so it would pass a "not above" test silently.
        raise ValueError(f"{name} must be finite, got {_fmt(x)}")
    return x


def _alternative(alternative, boolean: bool = False):
    """Validate ``alternative=("what it is", value)``; returns (name, float array) or (name, bool)."""
    if not (isinstance(alternative, tuple) and len(alternative) == 2 and isinstance(alternative[0], str)
            and alternative[0].strip()):
        raise TypeError("alternative must be a pair (what the nearest wrong alternative is, what it gives), "
                        f"got {alternative!r}")
    name, value = alternative[0].strip(), alternative[1]
    if boolean:
        v = np.asarray(value)
        if v.dtype != bool:
            raise TypeError(f"alternative value of a true() check must be a bool (whether the condition would "
                            f"hold under it), got dtype {v.dtype}")
        return name, bool(v.all())
    return name, _finite("alternative value", value)


def _like(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The alternative's value broadcast to the shape of ``measured``."""
    try:
        return np.broadcast_to(a, x.shape)
    except ValueError:
        raise ValueError(f"alternative value must broadcast to the shape of measured {x.shape}, "
                         f"got {a.shape}") from None


def _bound_alternative(alternative, x: np.ndarray, b: np.ndarray, sign: float):
    """The alternative of a one-sided check (``sign`` +1: above, -1: below): (name, worst value, passes)."""
    if alternative is None:
        return None
    name, a = _alternative(alternative)
    a = _like(a, x)
    margin = sign * (a - b)                      # > 0 where the alternative meets the bound
    j = np.unravel_index(np.argmin(margin), a.shape)
    return name, _fmt(a[j]), bool(np.all(margin > 0))


class Checks:
    """The executed checks of one chapter.

    ``Checks("copy_task")`` starts a fresh record for ``book/copy_task.md``
    (any earlier record of that chapter is replaced). Each method prints one
    line (pass mark, claim, measured value, tolerance), so the reader sees every
    check where it is made, appends a :class:`CheckRecord` to ``records``, and
    raises ``AssertionError`` naming the claim if the check fails. The methods
    return ``None``, so a check ending a cell adds no second output. A tolerance
    chosen after the data were seen (after a pilot run, or after a first run failed)
    says so with ``post_hoc="<why>"``; the validation report marks it.

    ``alternative=("what it is", value)`` names the nearest wrong alternative (a
    competing theory, or no effect) and what it would give for ``measured`` (for
    :meth:`true`: whether the condition would hold under it). The same tolerance is
    evaluated on the alternative; a check whose alternative passes too does not
    discriminate and is recorded as failed. A check without one says why in
    ``no_alternative="<why>"`` (an identity, a diagnostic, or an alternative that
    would pass too); the validation report shows the reason.
    """

    def __init__(self, chapter: str, *, source: str | os.PathLike | None = None,
                 directory: str | os.PathLike | None = None) -> None:
        if not isinstance(chapter, str) or not chapter or "/" in chapter:
            raise ValueError(f"chapter must be a chapter's file stem such as 'copy_task', got {chapter!r}")
        self.chapter = chapter
        src = Path(source) if source is not None else _book_root() / "book" / f"{chapter}.md"
        if not src.is_file():
            raise FileNotFoundError(f"chapter source {src} not found (chapter={chapter!r})")
        self._meta = {"chapter": chapter, "source_sha256": _file_digest(src),
                      "copylib_sha256": _copylib_digest()}
        self._path = (Path(directory) if directory is not None else records_dir()) / f"{chapter}.json"
        self.records: list[CheckRecord] = []
        self._save()

    def _save(self) -> None:
        payload = dict(self._meta, checks=[asdict(r) for r in self.records])
        self._path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(self._path, json.dumps(payload, indent=1).encode())

    def _record(self, claim: str, measured: str, tolerance: str, passed: bool, post_hoc: str,
                alt: tuple[str, str, bool] | None = None, no_alternative: str = "") -> None:
        """``alt`` is (what the alternative is, what it gives, whether it passes the same tolerance)."""
        if not isinstance(claim, str) or not claim.strip():
            raise ValueError("claim must be a non-empty sentence saying what is checked")
        for name, value, why in (("post_hoc", post_hoc, "why the tolerance was set after seeing data"),
                                 ("no_alternative", no_alternative, "why no nearest wrong alternative is named")):
            if not isinstance(value, str):
                raise TypeError(f"{name} must be a string ({why}), got {type(value).__name__}")
        if alt is not None and no_alternative.strip():
            raise ValueError("give either alternative or no_alternative (why there is none), not both")
        name, alt_measured, alt_passes = alt if alt is not None else ("", "", False)
        discriminates = None if alt is None else not alt_passes
        rec = CheckRecord(self.chapter, claim.strip(), measured, tolerance, bool(passed) and discriminates is not False,
                          post_hoc.strip(), name, alt_measured, discriminates, no_alternative.strip())
        self.records.append(rec)
        self._save()
        if not passed:
            raise AssertionError(f"[{self.chapter}] {rec.claim}: measured {measured}, required {tolerance}")
        if discriminates is False:
            raise AssertionError(f"[{self.chapter}] {rec.claim}: does not discriminate: the alternative "
                                 f"({name}) gives {alt_measured}, which also meets {tolerance}")
        note = f" (set after seeing data: {rec.post_hoc})" if rec.post_hoc else ""
        if alt is not None:
            note += f"; the alternative ({name}) would give {alt_measured}, which fails it"
        print(f"\u2714 check: {rec.claim} \u2014 measured {measured}; required {tolerance}{note}")

    def close(self, claim: str, measured: npt.ArrayLike, expected: npt.ArrayLike, *, atol: float = 0.0,
              rtol: float = 0.0, post_hoc: str = "", alternative: tuple[str, npt.ArrayLike] | None = None,
              no_alternative: str = "") -> None:
        """``|measured - expected| <= atol + rtol |expected|`` elementwise (reports the worst element).

        The alternative fails if any of its elements is outside the tolerance (reports the farthest)."""
        if not (np.isfinite(atol) and np.isfinite(rtol)) or atol < 0 or rtol < 0 or atol + rtol == 0:
            raise ValueError(f"atol and rtol must be finite, >= 0 and not both 0, got atol={atol}, rtol={rtol}")
        x, y = np.broadcast_arrays(_finite("measured", measured), _finite("expected", expected))
        dev = np.abs(x - y)
        i = np.unravel_index(np.argmax(dev - (atol + rtol * np.abs(y))), dev.shape)
        # conditionals, not list * bool: a numpy tolerance gives a numpy bool, which cannot repeat a list
        parts = ([f"atol {atol:.3g}"] if atol > 0 else []) + ([f"rtol {rtol:.3g}"] if rtol > 0 else [])
        alt = None
        if alternative is not None:
            name, a = _alternative(alternative)
            a = _like(a, x)
            adev = np.abs(a - y)
            j = np.unravel_index(np.argmax(adev - (atol + rtol * np.abs(y))), adev.shape)
            alt = (name, f"{_fmt(a[j])} (|diff| {_fmt(adev[j])})", bool(np.all(adev <= atol + rtol * np.abs(y))))
        self._record(claim, f"{_fmt(x[i])} vs {_fmt(y[i])} (|diff| {_fmt(dev[i])})",
                     "|diff| <= " + " + ".join(parts), bool(np.all(dev <= atol + rtol * np.abs(y))), post_hoc, alt,
                     no_alternative)

    def below(self, claim: str, measured: npt.ArrayLike, bound: npt.ArrayLike, *, post_hoc: str = "",
              alternative: tuple[str, npt.ArrayLike] | None = None, no_alternative: str = "") -> None:
        """Every element of ``measured`` is ``< bound`` (reports the largest)."""
        x, b = np.broadcast_arrays(_finite("measured", measured), _finite("bound", bound))
        i = np.unravel_index(np.argmax(x - b), x.shape)
        self._record(claim, _fmt(x[i]), f"< {_fmt(b[i])}", bool(np.all(x < b)), post_hoc,
                     _bound_alternative(alternative, x, b, -1.0), no_alternative)

    def above(self, claim: str, measured: npt.ArrayLike, bound: npt.ArrayLike, *, post_hoc: str = "",
              alternative: tuple[str, npt.ArrayLike] | None = None, no_alternative: str = "") -> None:
        """Every element of ``measured`` is ``> bound`` (reports the smallest)."""
        x, b = np.broadcast_arrays(_finite("measured", measured), _finite("bound", bound))
        i = np.unravel_index(np.argmin(x - b), x.shape)
        self._record(claim, _fmt(x[i]), f"> {_fmt(b[i])}", bool(np.all(x > b)), post_hoc,
                     _bound_alternative(alternative, x, b, 1.0), no_alternative)

    def true(self, claim: str, condition: bool | np.bool_ | np.ndarray, measured: str = "",
             tolerance: str = "holds", *, post_hoc: str = "",
             alternative: tuple[str, bool | np.bool_ | np.ndarray] | None = None, no_alternative: str = "") -> None:
        """A yes/no claim (an identity, an ordering, ...); ``measured`` describes what was seen.

        ``alternative=("what", holds)``: whether the condition would hold under the alternative."""
        cond = np.asarray(condition)
        if cond.dtype != bool:
            raise TypeError(f"condition must be a bool or a bool array, got dtype {cond.dtype}")
        alt = None
        if alternative is not None:
            name, holds = _alternative(alternative, boolean=True)
            alt = (name, "holds" if holds else "does not hold", holds)
        self._record(claim, measured or _fmt(cond), tolerance, bool(cond.all()), post_hoc, alt, no_alternative)


@dataclass(frozen=True)
class DataSetTolerance:
    """:func:`data_set_tolerance` result; arrays have one entry per point.

    mean : the mean over data sets; sd : the pooled standard deviation of one data set's value
    (``scale`` times ``s``); s : the pooled spread in units of ``scale``; dof : its degrees of freedom,
    ``n_points (n_sets - 1)``; quantile : the Student-t quantile used; tol : the allowed ``|mean - theory|``,
    ``quantile * sd / sqrt(n_sets)``; level : the family-wise false-alarm rate.
    """

    mean: np.ndarray
    sd: np.ndarray
    s: float
    dof: int
    quantile: float
    tol: np.ndarray
    level: float


def data_set_tolerance(runs: npt.ArrayLike, *, scale: npt.ArrayLike | None = None,
                       level: float = 0.01) -> DataSetTolerance:
    """A tolerance for ``|mean over data sets - theory|`` with a known false-alarm rate.

    ``runs`` ``(n_sets >= 2, n_points)`` is one quantity measured on independent data sets at several
    points (sample sizes). If its data-set fluctuations are Gaussian with standard deviation
    ``s * scale`` (``scale`` a known shape, e.g. ``1/sqrt(P)``; default 1), the spread ``s`` is estimated
    from every run (the deviations from each point's mean, ``n_points (n_sets - 1)`` degrees of freedom),
    not from two draws. The mean at each point is independent of that estimate, so
    ``(mean - theory) sqrt(n_sets) / sd`` is Student-t; ``tol`` uses its ``1 - level / (2 n_points)``
    quantile (Bonferroni), so a correct theory fails at any point with probability at most ``level``.
    """
    from scipy import stats

    x = _finite("runs", runs)
    if x.ndim != 2 or x.shape[0] < 2 or x.shape[1] < 1:
        raise ValueError(f"runs must have shape (n_sets >= 2, n_points >= 1), got {x.shape}")
    w = np.ones(x.shape[1]) if scale is None else _finite("scale", scale)
    if w.shape != (x.shape[1],) or np.any(w <= 0):
        raise ValueError(f"scale must be positive with shape ({x.shape[1]},), got {w!r}")
    level = float(level)
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    n_sets, n_points = x.shape
    dof = n_points * (n_sets - 1)
    s = float(np.sqrt((((x - x.mean(0)) / w) ** 2).sum() / dof))
    quantile = float(stats.t.ppf(1 - level / (2 * n_points), dof))
    sd = s * w
    return DataSetTolerance(x.mean(0), sd, s, dof, quantile, quantile * sd / np.sqrt(n_sets), level)


def load_records(chapters: Iterable[str], directory: str | os.PathLike | None = None,
                 root: str | os.PathLike | None = None) -> list[CheckRecord]:
    """The records of ``chapters`` (file stems), refusing missing or stale ones.

    A record is stale if its chapter source or copylib changed since it was
    written: the report must describe the code and text it sits next to.
    """
    folder = Path(directory) if directory is not None else records_dir(root)
    base = _book_root(root)
    current = _copylib_digest()
    out: list[CheckRecord] = []
    problems = []
    for chapter in chapters:
        path = folder / f"{chapter}.json"
        if not path.is_file():
            problems.append(f"{chapter}: no record in {folder} (the chapter did not run in this build)")
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data["source_sha256"] != _file_digest(base / "book" / f"{chapter}.md"):
                problems.append(f"{chapter}: record is stale (the chapter changed since it ran)")
            elif data["copylib_sha256"] != current:
                problems.append(f"{chapter}: record is stale (copylib changed since it ran)")
            else:
                out.extend(CheckRecord(**r) for r in data["checks"])
        except (ValueError, KeyError, TypeError) as exc:
            problems.append(f"{chapter}: unreadable record {path} ({exc!r})")
    if problems:
        raise RuntimeError("validation records incomplete:\n  " + "\n  ".join(problems))
    return out


def chapters_with_checks(root: str | os.PathLike | None = None) -> list[str]:
    """File stems of the ``book/*.md`` chapters that create a :class:`Checks` object."""
    base = _book_root(root)
    return sorted(p.stem for p in (base / "book").glob("*.md")
                  if "Checks(" in p.read_text(encoding="utf-8") and p.stem != "validation_report")


def alternative_counts(records: Iterable[CheckRecord]) -> tuple[int, int, int]:
    """(checks that name a nearest wrong alternative, of those the checks whose alternative fails,
    checks that say why they name none)."""
    records = list(records)
    return (sum(bool(r.alternative) for r in records), sum(r.discriminates is True for r in records),
            sum(bool(r.no_alternative) for r in records))


def report_table(records: Iterable[CheckRecord]) -> str:
    """An HTML table of the records: chapter, claim (with the nearest wrong alternative, what it gives and
    whether it fails the same tolerance), measured, tolerance (with the reason, where it was set after seeing
    data), pass."""
    import html

    rows = []
    for r in records:
        mark = "&#10004;" if r.passed else "&#10008;"
        chapter = f'<a href="{html.escape(r.chapter)}.html">{html.escape(r.chapter)}</a>'
        tolerance = html.escape(r.tolerance) + (f"<br><em>set after seeing data: {html.escape(r.post_hoc)}</em>"
                                                 if r.post_hoc else "")
        claim = html.escape(r.claim)
        if r.alternative:
            outcome = "fails" if r.discriminates else "<strong>also passes: does not discriminate</strong>"
            claim += (f'<br><small class="alternative">alternative: {html.escape(r.alternative)} &rarr; '
                      f"{html.escape(r.alternative_measured)}, {outcome}</small>")
        elif r.no_alternative:
            claim += f'<br><small class="alternative">no alternative: {html.escape(r.no_alternative)}</small>'
        rows.append(f"<tr><td>{chapter}</td><td>{claim}</td><td>{html.escape(r.measured)}</td>"
                    f"<td>{tolerance}</td><td>{mark}</td></tr>")
    head = "".join(f"<th>{h}</th>" for h in ("chapter", "claim", "measured", "tolerance", "pass"))
    return (f'<table class="table validation-report"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>")
