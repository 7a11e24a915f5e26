"""The package layout keeps its promises (CONTRIBUTING.md).

Read from the source with ``ast``, so a violation names the file and line:

* no module imports another copylib module's underscore names;
* copylib modules are imported at the top of a module, never inside a function
  (optional heavy dependencies such as IPython may be);
* dependencies point one way: model <- posterior <- theory / inference <- analysis;
* no copylib code compares an attention kind with a string literal: kinds go
  through the registry of ``copylib.model.attention``;
* every library module has a test module that mirrors it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "copylib"
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)
# Lower layers may not import higher ones; support modules (the top level) are outside the order.
LAYERS = {"model": 0, "posterior": 1, "theory": 2, "inference": 2, "analysis": 3}


def _dotted(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute name a ``from ... import`` statement refers to."""
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _copylib_imports(path: Path):
    """(node, absolute target, imported names, inside a function) for every copylib import of a module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    module = _dotted(path)
    in_function: set[int] = set()
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            in_function.update(id(n) for n in ast.walk(fn) if n is not fn)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            target = _resolve(node, module, path.name == "__init__.py")
            if target.split(".")[0] == "copylib":
                yield node, target, [a.name for a in node.names], id(node) in in_function
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "copylib":
                    yield node, alias.name, [], id(node) in in_function


def _layer(dotted: str):
    parts = dotted.split(".")
    return LAYERS.get(parts[1]) if len(parts) > 1 else None


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_imports_keep_the_layout(path):
    here = _dotted(path)
    for node, target, names, inside in _copylib_imports(path):
        where = f"{path.relative_to(ROOT)}:{node.lineno}"
        private = [n for n in names if n.startswith("_") and not n.startswith("__")]
        assert not private, f"{where} imports private names {private} from {target}"
        assert not inside, f"{where} imports {target} inside a function: imports belong at the top"
        mine, theirs = _layer(here), _layer(target)
        if mine is not None and theirs is not None:
            assert theirs <= mine, f"{where}: {here} (layer {mine}) imports the higher layer {target} ({theirs})"


def _kind_literal_comparisons(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        names_kind = any(
            (isinstance(s, ast.Name) and s.id == "kind") or (isinstance(s, ast.Attribute) and s.attr == "kind")
            for s in sides
        )
        literal = any(isinstance(s, ast.Constant) and s.value in ("linear", "softmax") for s in sides)
        if names_kind and literal:
            yield node.lineno


@pytest.mark.parametrize("path", [p for p in MODULES if p.name != "attention.py"],
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_branch_on_a_kind_string(path):
    lines = list(_kind_literal_comparisons(path))
    assert not lines, (f"{path.relative_to(ROOT)} compares an attention kind with a string at lines {lines}: "
                       "look the kind up in copylib.model.attention instead")


def test_every_module_has_a_mirrored_test_module():
    tests = {p.name for p in (ROOT / "tests").rglob("test_*.py")}
    missing = []
    for path in MODULES:
        if path.name == "__init__.py":
            continue
        stem, folder = path.stem, path.parent.name
        candidates = {f"test_{stem}.py", f"test_{stem}_{folder}.py", f"test_{stem}_properties.py",
                      f"test_{stem}_{folder}_properties.py"}
        if not candidates & tests:
            missing.append(path.relative_to(ROOT).as_posix())
    assert not missing, f"library modules without a test module: {missing}"
