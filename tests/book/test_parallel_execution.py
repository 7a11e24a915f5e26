"""The build's chapter execution (_ext/parallel_execution.py): executed chapters and their
check records come back from the result cache only for the same chapter file, library and scale."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _extension():
    spec = importlib.util.spec_from_file_location("parallel_execution", ROOT / "_ext" / "parallel_execution.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ext = _extension()


@pytest.fixture
def book(tmp_path, monkeypatch):
    """A one-chapter book whose only cell writes a check record and counts its runs."""
    (tmp_path / "_toc.yml").write_text("root: book/tiny\n")
    (tmp_path / "book").mkdir()
    monkeypatch.setenv("COPYHEAD_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("COPYHEAD_CHECKS_DIR", str(tmp_path / "checks"))
    monkeypatch.delenv("COPYHEAD_CACHE", raising=False)
    monkeypatch.delenv("COPYHEAD_SCALE", raising=False)
    return tmp_path


def _chapter(book: Path, code: str, prose: str = "A chapter.") -> Path:
    path = book / "book" / "tiny.md"
    path.write_text(f"{prose}\n\n```python\n{code}\n```\n")
    return path


def _notebook(code: str):
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)],
                                    metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                             "language": "python"}})


CODE = ("import os, pathlib\n"
        "d = pathlib.Path(os.environ['COPYHEAD_CHECKS_DIR']); d.mkdir(exist_ok=True)\n"
        "(d / 'tiny.json').write_text('{\"checks\": [1]}')\n"
        "runs = pathlib.Path(os.environ['COPYHEAD_CACHE_DIR']).parent / 'runs'\n"
        "runs.write_text(runs.read_text() + 'x' if runs.exists() else 'x')\n"
        "print('ran')")


def _run(path: Path, code: str = CODE):
    return ext._execute(_notebook(code), str(path), 60, False)


def test_second_build_takes_chapter_and_records_from_cache(book):
    path = _chapter(book, CODE)
    nb, seconds, error, from_cache = _run(path)
    assert error is None and not from_cache and seconds > 0
    assert nb.cells[0].outputs[0]["text"].strip() == "ran"
    record = book / "checks" / "tiny.json"
    assert json.loads(record.read_text()) == {"checks": [1]}
    shutil.rmtree(record.parent)  # a fresh build folder has no records folder
    nb2, seconds2, error2, from_cache2 = _run(path)
    assert error2 is None and from_cache2 and seconds2 == pytest.approx(seconds)
    assert nb2.cells[0].outputs == nb.cells[0].outputs
    assert json.loads(record.read_text()) == {"checks": [1]}
    assert (book / "runs").read_text() == "x"  # executed once


def test_changed_prose_or_scale_runs_the_chapter_again(book, monkeypatch):
    path = _chapter(book, CODE)
    _run(path)
    _chapter(book, CODE, prose="The same code, new prose.")  # records carry the file's digest
    assert not _run(path)[3]
    monkeypatch.setenv("COPYHEAD_SCALE", "paper")
    assert not _run(path)[3]
    assert (book / "runs").read_text() == "xxx"


def test_cache_off_always_executes(book, monkeypatch):
    monkeypatch.setenv("COPYHEAD_CACHE", "off")
    path = _chapter(book, CODE)
    assert not _run(path)[3] and not _run(path)[3]
    assert (book / "runs").read_text() == "xx"


def test_a_page_run_last_executes_every_time_and_is_not_cached(book):
    # the validation report: its inputs are the other chapters' records, which its key does not see
    path = _chapter(book, CODE)
    run_last = [ext._execute(_notebook(CODE), str(path), 60, False, use_cache=False) for _ in range(2)]
    assert all(error is None and not from_cache for _, _, error, from_cache in run_last)
    assert run_last[0][0].cells[0].outputs[0]["text"].strip() == "ran"
    assert (book / "runs").read_text() == "xx"
    assert not list((book / "cache").glob("chapter.tiny-*"))
    assert not _run(path)[3]  # nothing cached for the ordinary path either


def test_failing_chapter_is_reported_and_not_cached(book):
    code = "raise RuntimeError('broken chapter')"
    path = _chapter(book, code)
    nb, _, error, from_cache = _run(path, code)
    assert nb is None and not from_cache and "broken chapter" in error
    assert _run(path, code)[2] is not None
    assert not list((book / "cache").glob("chapter.tiny-*.json"))


def test_key_follows_the_file_bytes_and_the_scale(monkeypatch):
    monkeypatch.delenv("COPYHEAD_SCALE", raising=False)
    base = ext.chapter_key(b"text")
    assert ext.chapter_key(b"text") == base
    assert ext.chapter_key(b"text ") != base
    monkeypatch.setenv("COPYHEAD_SCALE", "paper")
    assert ext.chapter_key(b"text")["scale"] == "paper"


POOL = """
import multiprocessing, os, sys, time
from concurrent.futures import ProcessPoolExecutor
sys.path.insert(0, {ext!r})
import parallel_execution as ext
if __name__ == "__main__":
    pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                               initializer=ext.die_with_parent, initargs=(os.getpid(), 0.1))
    print(pool.submit(os.getpid).result(), flush=True)
    pool.submit(time.sleep, 600)
    time.sleep(600)
"""


def test_a_worker_ends_when_the_build_is_killed(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    script = tmp_path / "pool.py"
    script.write_text(POOL.format(ext=str(ROOT / "_ext")))
    build = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    worker = int(build.stdout.readline())
    os.kill(build.pid, signal.SIGKILL)
    build.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(worker, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        os.kill(worker, signal.SIGKILL)
        raise AssertionError("the pool worker outlived its killed parent by 10 s")


def test_job_count_where_the_platform_has_no_affinity_mask(monkeypatch):
    """macOS and Windows have no ``os.sched_getaffinity``; Python < 3.13 has no ``os.process_cpu_count``."""
    import os

    from sphinx.errors import ConfigError

    monkeypatch.delenv(ext.JOBS_VARIABLE, raising=False)
    monkeypatch.delattr(os, "process_cpu_count", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 2, 5}, raising=False)
    assert ext.jobs(0) == 3  # Linux: the affinity mask, not the machine's CPU count
    monkeypatch.delattr(os, "sched_getaffinity")
    monkeypatch.setattr(os, "cpu_count", lambda: 7)
    assert ext.jobs(0) == 7
    monkeypatch.setattr(os, "cpu_count", lambda: None)  # "undetermined" in the os docs
    assert ext.jobs(0) == 1
    assert ext.jobs(4) == 4
    monkeypatch.setenv(ext.JOBS_VARIABLE, "2")
    assert ext.jobs(0) == 2
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv(ext.JOBS_VARIABLE, bad)
        with pytest.raises(ConfigError, match=ext.JOBS_VARIABLE):
            ext.jobs(0)
    with pytest.raises(ConfigError, match="copyhead_execution_jobs"):
        ext.jobs(-1)
