"""Property tests of copylib.gluing: every finite real number is glued as itself; anything
else is refused, naming its key, and then nothing at all is glued."""

from __future__ import annotations

import dataclasses

import myst_nb
from hypothesis import given
from hypothesis import strategies as st

from copylib import gluing

from props_helpers import budget, covers, raises_naming

keys = st.from_regex(r"[a-z][a-z0-9_]{0,12}", fullmatch=True)
finite = st.one_of(st.integers(-10**9, 10**9), st.floats(allow_nan=False, allow_infinity=False))


class _record_glue:
    """Replace myst_nb.glue inside a with-block (a fixture would span all examples)."""

    def __enter__(self):
        self.old, self.calls = myst_nb.glue, {}
        myst_nb.glue = lambda key, value, display=True: self.calls.__setitem__(key, value)
        return self.calls

    def __exit__(self, *exc):
        myst_nb.glue = self.old


@covers(gluing.glue_values)
@budget(40)
@given(values=st.dictionaries(keys, finite, max_size=6), bad_key=keys,
       bad=st.sampled_from([float("nan"), float("inf"), -float("inf")]))
def test_glue_values(values, bad_key, bad):
    with _record_glue() as calls:
        gluing.glue_values(**values)
    assert calls == values
    with _record_glue() as calls, raises_naming(repr(bad_key)[1:-1]):
        gluing.glue_values(**values, **{bad_key: bad})
    assert calls == {}


@covers(gluing.glue_fields)
@budget(30)
@given(x=finite, n=st.integers(0, 100), prefix=keys)
def test_glue_fields(x, n, prefix):
    @dataclasses.dataclass(frozen=True)
    class Result:
        x: float
        n: int
        name: str = "skipped"
        flag: bool = False

    with _record_glue() as calls:
        gluing.glue_fields(prefix, Result(x, n))
    assert calls == {prefix + "x": x, prefix + "n": n}
