"""Property tests of the atomic file write shared by the result cache and the check records."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copylib.cache import write_atomic

from props_helpers import budget, covers, raises_naming


@covers(write_atomic)
@budget(30)
@given(first=st.binary(max_size=2048), second=st.binary(max_size=2048))
def test_write_atomic_replaces_the_file_and_leaves_no_temporary(first, second):
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "record.json"
        write_atomic(path, first)
        assert path.read_bytes() == first
        write_atomic(str(path), second)  # a str path works as well
        assert path.read_bytes() == second
        assert sorted(p.name for p in Path(d).iterdir()) == ["record.json"]


@covers(write_atomic)
@given(data=st.one_of(st.text(max_size=20), st.integers(), st.none()))
def test_write_atomic_rejects_what_is_not_bytes(data):
    with tempfile.TemporaryDirectory() as d:
        with raises_naming("data", TypeError):
            write_atomic(Path(d) / "x", data)
        assert list(Path(d).iterdir()) == []


def test_an_interrupted_write_keeps_the_old_file(monkeypatch):
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "record.json"
        write_atomic(path, b"old")

        def fail(*args, **kwargs):
            raise KeyboardInterrupt

        monkeypatch.setattr("copylib.cache.os.replace", fail)
        with pytest.raises(KeyboardInterrupt):
            write_atomic(path, b"new")
        assert path.read_bytes() == b"old"
        assert [p.name for p in Path(d).iterdir()] == ["record.json"]
