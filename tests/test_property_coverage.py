"""Every public copylib function and class has a property test (issue 8).

The property tests register what they exercise with ``props_helpers.covers``; this
test lists the public callables of every copylib module (``__all__`` where a
module defines it, otherwise the names without a leading underscore that the
module defines itself) and fails for any that no property test registered, so a
new public function cannot be added without one.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
from pathlib import Path

import copylib

from props_helpers import COVERED

# Every property-test module under tests/ (they are named test_<module>_properties.py), found
# rather than listed, so that a new one counts without being registered here too.
PROPERTY_MODULES = tuple(sorted(p.stem for p in Path(__file__).resolve().parent.rglob("test_*_properties.py")))


def _import_test_module(name: str):
    """Import a property-test module by its (unique) basename from anywhere under tests/."""
    if name in sys.modules:
        return sys.modules[name]
    (path,) = Path(__file__).resolve().parent.rglob(f"{name}.py")
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    return importlib.import_module(name)


def _public_callables():
    found = {}
    for info in pkgutil.walk_packages(copylib.__path__, prefix="copylib."):
        if any(part.startswith("_") for part in info.name.split(".")) or info.ispkg:
            continue
        module = importlib.import_module(info.name)
        names = getattr(module, "__all__", None)
        if names is None:
            names = [n for n, obj in vars(module).items()
                     if not n.startswith("_") and getattr(obj, "__module__", None) == module.__name__]
        for name in names:
            obj = getattr(module, name)
            if inspect.isfunction(obj) or inspect.isclass(obj):
                found[f"{module.__name__}.{name}"] = obj
    return found


def test_every_public_callable_has_a_property_test():
    for name in PROPERTY_MODULES:
        _import_test_module(name)  # registers its tests' functions (cached if pytest ran it)
    public = _public_callables()
    # the package namespace re-exports module functions: those must be the same objects
    for name in dir(copylib):
        obj = getattr(copylib, name)
        if not name.startswith("_") and (inspect.isfunction(obj) or inspect.isclass(obj)):
            assert obj in public.values(), f"copylib.{name} is not defined by a public copylib module"
    missing = sorted(name for name, obj in public.items() if obj not in COVERED)
    assert not missing, f"public callables without a property test: {missing}"
    assert len(public) > 80  # the enumeration itself works (about 100 callables today)
