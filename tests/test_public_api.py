"""The public API is what the chapters and a reader use (issue 39).

Every copylib module lists its public names in ``__all__``; the rest is private to its module
(a leading underscore) or, for the few helpers that sibling modules of one subpackage share,
listed in ``SHARED_INTERNALS`` with the reason it is not exported. Checked for every module:

* it defines ``__all__``, without repeats, and every name in it exists;
* every public name it defines (a top-level function, class or constant without a leading
  underscore) is in ``__all__`` or in ``SHARED_INTERNALS``;
* every name in ``__all__`` is on the API page (``book/api.md``: its module, or a module that
  re-exports it, is an ``automodule`` with ``:members:``, which documents exactly ``__all__``);
* and every name in ``__all__`` that the module defines has a user: a chapter's code, another copylib module, a Sphinx extension (``_ext/``) or tool (``tools/``), the
  signature or fields of another exported name of its module (a result or argument type), or a
  reader (``FOR_READERS``, with the reason).

The source is read with ``ast`` and the chapters as text; ``api_problems`` is the checker, and the
last tests give it synthetic modules to show that it fails where it should.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

MODULES = tuple(
    ".".join(p.relative_to(ROOT).with_suffix("").parts[:-1] if p.name == "__init__.py" else
             p.relative_to(ROOT).with_suffix("").parts)
    for p in sorted((ROOT / "copylib").rglob("*.py")) if "__pycache__" not in p.parts)

# Public (no underscore, imported across modules, which never import another module's underscore
# names) but not exported: helpers that the modules of one theme share. A reader reaches the theme
# through the module that re-exports it (``copylib.theory.linear``, ``.softmax``, ``.softmax_marginal``).
_LINEAR = "shared by the linear theory modules (linear_minima, linear_thresholds, linear_jump); not a reader's entry"
_SOFTMAX = "shared by the softmax theory modules; not a reader's entry"
_MARGINAL = "shared by the softmax plug-in marginal modules; not a reader's entry"
SHARED_INTERNALS: dict[str, str] = {
    "copylib.analysis.softmax_large_L.logit_share": "the clipped log-odds of a share, shared with analysis.softmax_umbrella",
    "copylib.analysis.softmax_large_L.jackknife_se": "the jackknife standard error, shared with analysis.softmax_umbrella",
    "copylib.inference.free_energy.pymbar_module": "pymbar imported quietly on first use, by free_energy and analysis.softmax_umbrella",
    "copylib.theory.linear_minima.WhitenedAction": "the whitened action the linear minimisers share; not a reader's entry",
    "copylib.theory.linear_minima.standard_starts": "starting points of the linear minimisers (linear_thresholds, linear_jump)",
    "copylib.theory.linear_minima.minimise_many": "the batched linear minimiser behind global_minimum, linear_thresholds, linear_jump",
    "copylib.theory.linear_minima.scan_minima": "followed minima along P segments, for linear_thresholds and linear_jump",
    "copylib.theory.linear_minima.mqr2": "the (m, q, r2) coordinates of Minimum results, for linear_jump and linear_thresholds",
    "copylib.theory.trust_region.descend_many": "the minimiser of linear_minima and linear_jump; not a reader's entry",
    "copylib.theory.linear_action.check_linear_spec": _LINEAR,
    "copylib.theory.linear_action.ActionConstants": _LINEAR,
    "copylib.theory.linear_action.action_constants": _LINEAR,
    "copylib.theory.linear_action.spec_of_constants": _LINEAR,
    "copylib.theory.linear_action.action_grad": _LINEAR,
    "copylib.theory.linear_action.origin_r2": _LINEAR,
    "copylib.theory.linear_action.origin_hessian": _LINEAR,
    "copylib.theory.linear_action.action_hessian": _LINEAR,
    "copylib.theory.softmax_noise.check_softmax_spec": _SOFTMAX,
    "copylib.theory.softmax_noise.set_shift_and_rho": _SOFTMAX,
    "copylib.theory.softmax_noise.rows_for": _SOFTMAX,
    "copylib.theory.softmax_noise.row_averages": _SOFTMAX,
    "copylib.theory.softmax_action.DEFAULT_DELTA_MAX": _SOFTMAX,
    "copylib.theory.softmax_action.DEFAULT_N_GRID": _SOFTMAX,
    "copylib.theory.softmax_action.action_parts": _SOFTMAX,
    "copylib.theory.softmax_action.DeltaGrid": _SOFTMAX,
    "copylib.theory.softmax_cumulants.check_marginal_spec": _MARGINAL,
    "copylib.theory.softmax_cumulants.check_cumulants": _MARGINAL,
    "copylib.theory.softmax_marginal_branches.potential_minima": _MARGINAL,
    "copylib.theory.softmax_marginal_density.EDGE_NATS": _MARGINAL,
    "copylib.theory.softmax_marginal_density.check_c_grid": _MARGINAL,
    "copylib.theory.softmax_marginal_density.data_action": _MARGINAL,
    "copylib.theory.softmax_marginal_density.log_line_density": _MARGINAL,
    "copylib.theory.softmax_marginal_density.copy_weight_lines": _MARGINAL,
}

# Names whose fate waits for the unification of the theory result types (ActionMinimum,
# FirstOrderPoint, Spinodals) in linear_minima, linear_jump, softmax_transition and causal:
# that work may rename, merge or privatise them, so they are neither required in nor barred from
# ``__all__`` until it lands.

# Exported names that no chapter and no other module uses, kept for a reader, with the reason.
_FIGURE = "the figure its explorer draws, for one frame at any value (CONTRIBUTING: an explorer)"
FOR_READERS: dict[str, str] = {
    "copylib.theory.softmax_transition.leading_order_gap": "the leading-order copy gap of the softmax chapter's "
                                                           "section on the leading order, which p3_leading_order evaluates",
    "copylib.analysis.causal.NO_JUMP_TESTS": "the names of the tests that NoJumpTests reports",
    "copylib.analysis.scaling.THRESHOLDS": "what each entry of ThresholdTable.values means",
    "copylib.cache.cache_dir": "where the result cache lives (to inspect or clear it; tools/ use it)",
    "copylib.explorers.attention_figure": _FIGURE,
    "copylib.explorers.training_figure": _FIGURE,
    "copylib.explorers.marginal_figure": _FIGURE,
    "copylib.explorers.threshold_figure": _FIGURE,
    "copylib.explorers.induction_figure": _FIGURE,
    "copylib.landscape_explorers.landscape_figure": _FIGURE,
    "copylib.landscape_explorers.linear_landscape_figure": _FIGURE,
    "copylib.landscape_explorers.softmax_landscape_figure": _FIGURE,
    "copylib.landscape_explorers.LINEAR_SIZE_RATIOS": "the sizes the linear landscape explorer offers",
    "copylib.explorers.LINEAR_SIZE_RATIOS": "the same, bound again so that the explorers' page documents it",
    "copylib.frames.live_only": "CONTRIBUTING: controls that need a kernel are wrapped in it (a new explorer)",
    "copylib.frames.png_frame": "one frame as PNG bytes, for a new explorer (tools/ use it)",
    "copylib.inference.diagnostics.z2_range": "the interval ZCalibration compares the mean z^2 with",
    "copylib.inference.posterior_sampling.RECORDERS": "the allowed values of the samplers' record argument",
    "copylib.inference.proposals.Move": "the proposal interface (CONTRIBUTING: a new sampler)",
    "copylib.inference.proposals.LangevinProposal": "the proposal interface (CONTRIBUTING: a new sampler)",
    "copylib.model.attention.attention_kinds": "the registered attention kinds (CONTRIBUTING: a new kind)",
    "copylib.theory.softmax_marginal_density.default_c_grid": "the copy-weight grid plugin_marginal uses",
    "copylib.analysis.softmax_umbrella.windows_log_odds": "MBAR over harmonic windows in c, the step of "
                                                          "umbrella_log_odds, for windows a reader samples",
}


def _path(module: str) -> Path:
    base = ROOT.joinpath(*module.split("."))
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


def defined_public_names(source: str) -> list[str]:
    """The top-level functions, classes and assigned names of ``source`` without a leading underscore."""
    names = []
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
    return [n for n in names if not n.startswith("_") and n != "__all__"]


def imported_or_accessed(source: str) -> set[str]:
    """Names that ``source`` imports from a module or reads as an attribute (``x.name``)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
    return found


def chapter_code(text: str) -> str:
    """The code of a MyST chapter: its code cells and inline literals (prose words are not uses)."""
    cells = re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", text, re.S)
    return "\n".join(cells + re.findall(r"`([^`\n]+)`", text))


def documented_members(api_text: str) -> set[str]:
    """The modules that the API page documents with ``:members:`` (so: their ``__all__``)."""
    blocks = re.findall(r"\.\. automodule:: (copylib[\w.]*)\n((?:[ \t]+:[\w-]+:.*\n)*)", api_text)
    return {name for name, options in blocks if ":members:" in options}


def annotation_text(module: types.ModuleType, names: list[str]) -> str:
    """The annotations (as written) of the signatures and fields of ``names`` in ``module``."""
    parts = []
    for name in names:
        obj = getattr(module, name, None)
        targets = [obj] + ([m for _, m in inspect.getmembers(obj, inspect.isfunction)] if inspect.isclass(obj) else [])
        for target in targets:
            parts += [str(v) for v in getattr(target, "__annotations__", {}).values()]
    return "\n".join(parts)


def home(module_name: str, name: str, obj: object) -> str:
    """``module.name`` where ``obj`` is defined (its own module for a function or class, else ``module_name``)."""
    own = getattr(obj, "__module__", None) if (inspect.isfunction(obj) or inspect.isclass(obj)) else None
    return f"{own or module_name}.{name}"


def api_problems(name: str, module: types.ModuleType, source: str, *, book_code: str, on_page: set[tuple[str, int]],
                 used_elsewhere: set[str], allowed: set[str], readers: set[str]) -> list[str]:
    """What is wrong with the public API of one module (empty when nothing is).

    ``on_page``: ``(name, id(object))`` of every name the API page documents; ``used_elsewhere``:
    names other copylib modules import or read; ``allowed``: qualified names that may stay public
    outside ``__all__`` (and need no user); ``readers``: qualified names exported for a reader.
    """
    exported = getattr(module, "__all__", None)
    if exported is None:
        return [f"{name}: no __all__"]
    problems = []
    if len(set(exported)) != len(exported):
        problems.append(f"{name}: __all__ repeats a name")
    problems += [f"{name}.{n}: in __all__ but not defined" for n in exported if not hasattr(module, n)]
    problems += [f"{name}.{n}: public but neither in __all__ nor documented as internal"
                 for n in defined_public_names(source) if n not in exported and f"{name}.{n}" not in allowed]
    annotations = annotation_text(module, list(exported))
    defined = set(defined_public_names(source))
    for n in exported:
        obj = getattr(module, n, None)
        if obj is None or inspect.ismodule(obj):
            continue  # reported above; a submodule is on the page by tests/book/test_launch.py
        qualified = home(name, n, obj)
        if (n, id(obj)) not in on_page:
            problems.append(f"{qualified}: in __all__ but not on the API page")
        if n not in defined:
            continue  # a re-export: its user is checked where it is defined
        word = re.compile(rf"(?<![\w]){re.escape(n)}\b")
        if not (word.search(book_code) or n in used_elsewhere or word.search(annotations)
                or qualified in readers or qualified in allowed):
            problems.append(f"{qualified}: exported but used by no chapter, no other module and no reader")
    return problems


def _context():
    book_code = "\n".join(chapter_code(p.read_text(encoding="utf-8"))
                          for p in sorted((ROOT / "book").glob("*.md")) if p.name != "api.md")
    documented = documented_members((ROOT / "book" / "api.md").read_text(encoding="utf-8"))
    modules = {m: importlib.import_module(m) for m in MODULES}
    on_page = {(n, id(getattr(modules[m], n, None))) for m in documented for n in getattr(modules[m], "__all__", ())}
    sources = {m: _path(m).read_text(encoding="utf-8") for m in MODULES}
    uses = {m: imported_or_accessed(s) for m, s in sources.items()}
    # the book's own code outside the package: Sphinx extensions (_ext/) and tools/ are users too
    for path in sorted([*(ROOT / "_ext").glob("*.py"), *(ROOT / "tools").glob("*.py")]):
        uses[str(path.relative_to(ROOT))] = imported_or_accessed(path.read_text(encoding="utf-8"))
    return book_code, documented, modules, on_page, sources, uses


CONTEXT = _context()


@pytest.mark.parametrize("name", MODULES)
def test_module_api(name):
    book_code, _, modules, on_page, sources, uses = CONTEXT
    used_elsewhere = set().union(*(u for m, u in uses.items() if m != name))
    problems = api_problems(name, modules[name], sources[name], book_code=book_code, on_page=on_page,
                            used_elsewhere=used_elsewhere,
                            allowed=set(SHARED_INTERNALS), readers=set(FOR_READERS))
    assert not problems, "\n".join(problems)


def test_exceptions_name_existing_public_names():
    """The lists above stay true: each names a public, defined name that is not exported."""
    _, _, modules, _, sources, _ = CONTEXT
    for qualified in [*SHARED_INTERNALS, *FOR_READERS]:
        module, _, n = qualified.rpartition(".")
        assert n in defined_public_names(sources[module]), f"{qualified} is not a public name of {module}"
    for qualified in SHARED_INTERNALS:
        module, _, n = qualified.rpartition(".")
        assert n not in modules[module].__all__, f"{qualified} is exported: drop it from SHARED_INTERNALS"
    for qualified in FOR_READERS:
        module, _, n = qualified.rpartition(".")
        exported = {home(m, x, getattr(modules[m], x)) for m in modules for x in modules[m].__all__}
        assert qualified in exported, f"{qualified} is not exported: drop it from FOR_READERS"


def test_the_enumeration_finds_the_package():
    _, documented, modules, _, _, _ = CONTEXT
    assert len(modules) > 60 and "copylib.arguments" in documented and "copylib.theory.linear" in documented


SYNTHETIC = '''
__all__ = ["used", "Result", "gone", "orphan"]
LIMIT = 3

class Result:
    value: float

def used(x: float) -> Result:
    return Result()

def orphan() -> None:
    pass

def _private() -> None:
    pass
'''


def _synthetic(source: str) -> types.ModuleType:
    module = types.ModuleType("fake")
    exec(compile(source, "fake.py", "exec"), module.__dict__)
    return module


def _check(source, **overrides):
    module = _synthetic(source)
    on_page = {(n, id(getattr(module, n, None))) for n in getattr(module, "__all__", ())}
    kwargs = dict(book_code="cl.fake.used(1.0)", on_page=on_page, used_elsewhere=set(), allowed=set(),
                  readers=set())
    kwargs.update(overrides)
    return api_problems("fake", module, source, **kwargs)


def test_checker_catches_each_fault():
    problems = _check(SYNTHETIC)
    assert "fake.gone: in __all__ but not defined" in problems                              # a stale entry
    assert "fake.LIMIT: public but neither in __all__ nor documented as internal" in problems  # not exported
    assert "fake.orphan: exported but used by no chapter, no other module and no reader" in problems
    assert not any("Result" in p or "fake.used" in p or "_private" in p for p in problems)  # a result type, a use
    assert "fake.used: in __all__ but not on the API page" in _check(SYNTHETIC, on_page=set())
    assert _check("X = 1\n") == ["fake: no __all__"]
    assert "fake: __all__ repeats a name" in _check('__all__ = ["X", "X"]\nX = 1\n', readers={"fake.X"})


def test_checker_passes_a_clean_module():
    clean = SYNTHETIC.replace('"gone", ', "")
    assert _check(clean, allowed={"fake.LIMIT"}, readers={"fake.orphan"}) == []
    assert _check(clean, allowed={"fake.LIMIT"}, used_elsewhere={"orphan"}) == []
