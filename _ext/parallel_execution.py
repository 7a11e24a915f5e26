"""Sphinx extension: execute the chapters side by side before Sphinx reads them.

myst-nb executes a notebook when Sphinx reads it, one after the other, and the
chapters are single-threaded Python: on an n-core machine n - 1 cores idle
through the build. This extension runs when Sphinx has decided which documents
to read (``env-before-read-docs``): it empties the build's jupyter cache, executes
every notebook among them in a pool of worker processes (one kernel each, the
chapter's own directory as working directory, as myst-nb would) and stores each
executed notebook in that cache. myst-nb, in ``cache`` mode, then reads every
chapter's outputs from the cache instead of executing it again. Each chapter runs
in a fresh kernel started by jupyter-cache's ``single_nb_execution`` (the function
its own executors use), and the workers are spawned, not forked, so the extension
works the same on Linux, macOS and Windows.

The jupyter cache is emptied first because its key is the notebook's code only,
blind to a change in copylib. Instead, each executed chapter is kept in copylib's
result cache (:mod:`copylib.cache`), keyed on the chapter file's bytes (prose
included: its check records carry that digest), copylib's source, the numpy and
torch versions and ``COPYHEAD_SCALE``, together with the check records it wrote.
A later build of the same chapter with the same library takes the executed
notebook and restores its records instead of running it again; any change to the
chapter or to copylib runs it afresh, and ``COPYHEAD_CACHE=off`` turns this off
with the rest of the result cache. A chapter that fails in the pool is not
cached; myst-nb then executes it once more itself and fails the build with the
usual traceback.

Configuration (``sphinx: config:`` in ``_config.yml``):

* ``copyhead_execute_last``: docnames executed after all the others, in the same
  pool but never taken from the result cache (the validation report reads the check
  records the chapters write, which are not part of its key);
* ``copyhead_execution_jobs``: the number of workers; 0 (the default) takes the
  environment variable ``COPYHEAD_BUILD_JOBS`` if set, else the number of CPUs
  this process may use (:func:`usable_cpus`).

The pool starts the longest chapters first (by number of code cells, a proxy
known before anything runs), so the last one to finish is a short one. While it
runs, this process, which only waits, imports copylib's subpackages for the API page's autodoc,
which would otherwise import it after the pool. Sphinx then writes the pages in
parallel as well (its reading stays serial: sphinx_multitoc_numbering does not
declare itself safe for parallel reading, and -W would fail on that warning).
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from sphinx.errors import ConfigError
from sphinx.util import logging

logger = logging.getLogger(__name__)
JOBS_VARIABLE = "COPYHEAD_BUILD_JOBS"
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def usable_cpus() -> int:
    """The CPUs this process may run on: ``os.process_cpu_count`` (Python 3.13), else the
    affinity mask where the platform has one (Linux), else ``os.cpu_count`` (macOS, Windows)."""
    if hasattr(os, "process_cpu_count"):
        return os.process_cpu_count() or 1
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def jobs(configured: int) -> int:
    """The number of worker processes: ``configured``, else the environment, else the CPUs."""
    if configured < 0:
        raise ConfigError(f"copyhead_execution_jobs must be >= 0 (0: automatic), got {configured}")
    if configured:
        return configured
    value = os.environ.get(JOBS_VARIABLE, "").strip()
    if not value:
        return usable_cpus()
    if not value.isdigit() or int(value) < 1:
        raise ConfigError(f"{JOBS_VARIABLE} must be an integer >= 1, got {value!r}")
    return int(value)


class _Failed(Exception):
    """A chapter that raised: its error text and run time (nothing is cached)."""

    def __init__(self, text: str, seconds: float):
        super().__init__(text)
        self.text, self.seconds = text, seconds


def chapter_key(source: bytes) -> dict:
    """What an executed chapter depends on besides copylib's source and the numpy and torch
    versions (which ``copylib.cache._cache_key`` adds): its file's bytes and the scale."""
    import hashlib

    from copylib.config import scale

    return {"source_sha256": hashlib.sha256(source).hexdigest(), "scale": scale()}


def _execute(notebook, path: str, timeout, allow_errors: bool, use_cache: bool = True):
    """Worker: one chapter, executed or taken from the result cache (``use_cache``; else always executed).

    Returns the executed notebook, its run time (that of the execution it comes
    from), the error text (``None`` if it ran) and whether it came from the cache.
    """
    import nbformat
    import numpy as np
    from jupyter_cache.executors.utils import single_nb_execution

    from copylib.cache import cached, write_atomic
    from copylib.checks import records_dir

    # One thread per kernel (unless set): the pool already fills the cores, and idle
    # OpenMP threads of one kernel spinning on a core another kernel needs slow both.
    for name in THREAD_VARIABLES:
        os.environ.setdefault(name, "1")
    source = Path(path)
    records = records_dir(source.parent) / f"{source.stem}.json"
    ran = []

    def run():
        result = single_nb_execution(notebook, cwd=str(source.parent), timeout=timeout,
                                     allow_errors=allow_errors, meta_override=True)
        if result.err is not None:
            raise _Failed(result.exc_string or repr(result.err), result.time)
        ran.append(True)
        checks = records.read_bytes() if records.is_file() else b""
        return {"notebook": np.frombuffer(nbformat.writes(result.nb).encode(), dtype=np.uint8),
                "checks": np.frombuffer(checks, dtype=np.uint8), "seconds": result.time}

    try:
        arrays = cached(run, chapter_key(source.read_bytes()), name="chapter." + source.stem) if use_cache else run()
    except _Failed as failed:
        return None, failed.seconds, failed.text, False
    if not ran and arrays["checks"].size:
        records.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(records, arrays["checks"].tobytes())
    executed = nbformat.reads(arrays["notebook"].tobytes().decode(), as_version=nbformat.NO_CONVERT)
    return executed, float(arrays["seconds"]), None, not ran


def die_with_parent(parent: int, interval: float = 0.5) -> None:
    """Pool initializer: end this worker (its kernel follows) once ``parent`` is gone.

    A worker blocked on the pool's queue does not notice a parent that was killed (the
    test session stops an unfinished build with SIGKILL), and would idle on forever.
    """
    import threading

    def watch():
        while os.getppid() == parent:
            time.sleep(interval)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="die-with-parent").start()


def _notebooks(env, docnames):
    """(docname, path, notebook) of every document to read that myst-nb treats as a notebook."""
    from myst_nb.core.read import create_nb_reader

    found = []
    for docname in docnames:
        path = Path(env.doc2path(docname))
        text = path.read_text(encoding="utf-8")
        reader = create_nb_reader(str(path), env.myst_config, env.mystnb_config, text)
        if reader is not None:
            found.append((docname, path, reader.read(text)))
    return found


def _code_cells(notebook) -> int:
    return sum(cell.cell_type == "code" for cell in notebook.cells)


def execute_in_parallel(app, env, docnames: list[str]) -> None:
    config = env.mystnb_config
    n_jobs = jobs(app.config.copyhead_execution_jobs)
    if config.execution_mode != "cache" or not docnames:
        return
    from jupyter_cache import get_cache

    cache = get_cache(config.execution_cache_path)
    cache.clear_cache()
    last = set(app.config.copyhead_execute_last)
    found = _notebooks(env, docnames)
    todo = sorted((item for item in found if item[0] not in last), key=lambda item: _code_cells(item[2]),
                  reverse=True)
    after = [item for item in found if item[0] in last]
    if not found:
        return
    logger.info(f"executing {len(found)} notebooks in {n_jobs} processes (or taking them from the result cache)")
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=n_jobs, mp_context=multiprocessing.get_context("spawn"),
                             initializer=die_with_parent, initargs=(os.getpid(),)) as pool:
        for batch, use_cache in ((todo, True), (after, False)):
            futures = {pool.submit(_execute, notebook, str(path), config.execution_timeout,
                                   config.execution_allow_errors, use_cache): (docname, path, notebook)
                       for docname, path, notebook in batch}
            if use_cache:  # autodoc's import of copylib (whose `import copylib` imports nothing), done while waiting
                for name in ("model", "posterior", "theory", "inference", "analysis", "explorers"):
                    importlib.import_module(f"copylib.{name}")
            for future in as_completed(futures):
                _store(app, cache, *futures[future], *future.result())
    logger.info(f"{len(found)} notebooks done in {time.perf_counter() - start:.0f} s")


def _store(app, cache, docname, path, notebook, executed, seconds, error, from_cache) -> None:
    """Put a chapter executed in the pool into myst-nb's jupyter cache (or log its failure)."""
    from jupyter_cache.base import CacheBundleIn

    if error is not None:
        last_line = error.strip().splitlines()[-1] if error.strip() else "?"
        logger.info(f"{docname}: failed in the pool after {seconds:.0f} s ({last_line}); "
                    "myst-nb executes it again and reports the error")
        return
    cache.cache_notebook_bundle(CacheBundleIn(executed, str(path), data={"execution_seconds": seconds}),
                                check_validity=False, overwrite=True)
    app.copyhead_pooled[docname] = notebook
    logger.info(f"{docname}: " + (f"from the result cache (executed in {seconds:.0f} s)" if from_cache
                                  else f"executed in {seconds:.0f} s"))


def write_executed(app, env):
    """Rewrite ``jupyter_execute/<docname>.ipynb`` of every pooled chapter with its outputs.

    myst-nb 1.x writes the notebook it read, not the one it merged the cached
    outputs into, so in ``cache`` mode that file would have no outputs; in
    ``force`` mode it is the executed notebook, which is what this restores.
    """
    if not app.copyhead_pooled:
        return
    import nbformat
    from jupyter_cache import get_cache

    cache = get_cache(env.mystnb_config.execution_cache_path)
    folder = Path(env.mystnb_config.output_folder)
    for docname, notebook in app.copyhead_pooled.items():
        _, merged = cache.merge_match_into_notebook(notebook)
        target = folder.joinpath(*docname.split("/")).with_suffix(".ipynb")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(nbformat.writes(merged), encoding="utf-8")


def write_in_parallel(app, env):
    """Let Sphinx write with one process per CPU besides this one (the reading is done)."""
    app.parallel = max(app.parallel, jobs(app.config.copyhead_execution_jobs) + 1)


def setup(app):
    app.copyhead_pooled = {}  # docname -> the notebook as read, for the chapters executed in the pool
    app.add_config_value("copyhead_execute_last", [], "env", types=[list])
    app.add_config_value("copyhead_execution_jobs", 0, "env", types=[int])
    app.connect("env-before-read-docs", execute_in_parallel)
    app.connect("env-updated", write_executed)
    app.connect("env-updated", write_in_parallel)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
