"""Public functions carry type hints (issue 39).

Read from the source with ``ast`` (annotations are never evaluated: every module has
``from __future__ import annotations``), so a missing hint names the file, line and parameter.
Checked: every public module-level function and every public method of a public class (names
without a leading underscore; of the dunder methods only ``__init__`` and ``__call__``, when they
take parameters) annotates every parameter except ``self``/``cls`` and its return, and the
annotations name things that exist (``typing.get_type_hints`` resolves them, with the module's
``if TYPE_CHECKING:`` imports run).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import typing
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Every module of copylib: a public function or method without full annotations fails.
ANNOTATED_MODULES = tuple(
    ".".join(p.relative_to(ROOT).with_suffix("").parts[:-1] if p.name == "__init__.py" else
             p.relative_to(ROOT).with_suffix("").parts)
    for p in sorted((ROOT / "copylib").rglob("*.py")) if "__pycache__" not in p.parts)

CHECKED_DUNDERS = ("__init__", "__call__")


def _path(module: str) -> Path:
    base = ROOT.joinpath(*module.split("."))
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


def _public_functions(tree: ast.Module) -> Iterator[tuple[ast.FunctionDef | ast.AsyncFunctionDef, bool]]:
    """(function, is a method) for the public functions of a module and public methods of its public classes."""
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    for node in tree.body:
        if isinstance(node, functions) and not node.name.startswith("_"):
            yield node, False
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for item in node.body:
                if isinstance(item, functions) and (not item.name.startswith("_") or item.name in CHECKED_DUNDERS):
                    yield item, True


def _is_static(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list)


def missing_annotations(source: str) -> list[str]:
    """``name:line: what is missing`` for every public function of ``source`` short of a full annotation."""
    missing = []
    for fn, is_method in _public_functions(ast.parse(source)):
        args = fn.args
        positional = [*args.posonlyargs, *args.args]
        if is_method and not _is_static(fn) and positional:
            positional = positional[1:]  # self or cls
        params = [*positional, *args.kwonlyargs, *(a for a in (args.vararg, args.kwarg) if a is not None)]
        if fn.name in CHECKED_DUNDERS and not params:
            continue
        where = f"{fn.name}:{fn.lineno}"
        missing += [f"{where}: parameter {a.arg!r}" for a in params if a.annotation is None]
        if fn.returns is None:
            missing.append(f"{where}: return")
    return missing


@pytest.mark.parametrize("module", ANNOTATED_MODULES)
def test_public_functions_are_annotated(module):
    path = _path(module)
    missing = missing_annotations(path.read_text(encoding="utf-8"))
    assert not missing, f"{path.relative_to(ROOT)} lacks annotations: {missing}"


@pytest.mark.parametrize("module", ANNOTATED_MODULES)
def test_annotations_resolve(module):
    """A misspelt or unimported name in an annotation is never evaluated at run time; resolve them all here."""
    tree = ast.parse(_path(module).read_text(encoding="utf-8"))
    namespace = dict(vars(importlib.import_module(module)))
    for node in tree.body:  # names imported only for the type checker
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            exec(compile(ast.Module(body=node.body, type_ignores=[]), module, "exec"), namespace)
    unresolved = []
    for fn, is_method in _public_functions(tree):
        if is_method:
            owner = next(n.name for n in tree.body if isinstance(n, ast.ClassDef) and fn in n.body)
            obj = inspect.getattr_static(namespace[owner], fn.name)
            # the function behind a property (fget), a cached_property (func), a static or class method (__func__)
            obj = getattr(obj, "fget", None) or getattr(obj, "func", None) or getattr(obj, "__func__", None) or obj
        else:
            obj = namespace[fn.name]
        try:
            typing.get_type_hints(obj, globalns=namespace)
        except Exception as err:  # NameError, AttributeError, TypeError: each names the culprit
            unresolved.append(f"{fn.name}:{fn.lineno}: {err!r}")
    assert not unresolved, f"{module}: annotations that do not resolve: {unresolved}"


def test_annotated_modules_exist_and_defer_annotations():
    for module in ANNOTATED_MODULES:
        tree = ast.parse(_path(module).read_text(encoding="utf-8"))
        future = [n for n in tree.body if isinstance(n, ast.ImportFrom) and n.module == "__future__"]
        assert any(a.name == "annotations" for n in future for a in n.names), (
            f"{module} lacks `from __future__ import annotations`")


SYNTHETIC = '''
def annotated(x: int, *rest: float, key: str = "a", **extra: object) -> int:
    return x

def no_param_hint(x, y: int) -> int:
    return y

def no_return(x: int):
    return x

def _private(x):
    return x

class Public:
    def __init__(self, n):
        self.n = n

    def __call__(self) -> int:
        return 1

    def method(self, a: int):
        return a

    @staticmethod
    def static(a) -> int:
        return a

    @classmethod
    def build(cls) -> Public:
        return cls(1)

    def __repr__(self):
        return "Public"

    def _helper(self, a):
        return a

class _Private:
    def method(self, a):
        return a
'''


def _line(start: str) -> int:
    """The line number in SYNTHETIC of the (stripped) line beginning with ``start``."""
    (number,) = [i for i, line in enumerate(SYNTHETIC.splitlines(), 1) if line.strip().startswith(start)]
    return number


def test_checker_catches_missing_annotations():
    found = missing_annotations(SYNTHETIC)
    assert found == [
        f"no_param_hint:{_line('def no_param_hint')}: parameter 'x'",
        f"no_return:{_line('def no_return')}: return",
        f"__init__:{_line('def __init__')}: parameter 'n'",
        f"__init__:{_line('def __init__')}: return",
        f"method:{_line('def method(self, a: int)')}: return",
        f"static:{_line('def static')}: parameter 'a'",
    ]


def test_checker_passes_a_fully_annotated_source():
    assert missing_annotations("def f(x: int, /, y: float, *, z: str) -> None:\n    pass\n") == []
