"""Shared pytest configuration.

* Hypothesis profiles for the property tests. ``ci`` (the default) is
  derandomised: every run draws the same examples, so a CI failure reproduces
  locally and the run time is stable. ``explore`` draws fresh random examples
  with five times the budget of each test; run it locally to hunt for new
  counterexamples: ``HYPOTHESIS_PROFILE=explore pytest tests -k properties``.
* ``book_build``: one clean book build per test session (exit code, log, folder);
  ``built_site``: its ``_build/html``, failing if the build failed. The build is
  the session's only execution of the chapters. It starts in the background as
  soon as collection finds the first test that needs it, and the tests that use it
  run last: the library tests (one core) run meanwhile.
* ``binder_environment``: the Binder-like environment of ``tests/book/test_binder.py``
  (:mod:`binder_env`: a venv, pip, ``binder/postBuild``), also started in the background
  when collection ends, if a Binder test was collected; its tests run after the library
  tests and before those on the book build.
* ``rendered_pages`` (every page of the build opened in Chromium) and ``explored_site``
  (every explorer's controls moved): they wait on the browser more than they use a core, so
  each runs in a background thread as soon as the build is done, while the library tests go on.
* ``one_thread``: torch on one intra-op thread for a module of tiny tensors
  (``pytestmark = pytest.mark.usefixtures("one_thread")``).
* ``cumulants_L8``, ``cumulants_L32``: softmax row cumulants (:mod:`copylib.theory.softmax_cumulants`)
  shared by the tests of the plug-in marginal's modules, computed once per session.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, settings

from copylib import ModelSpec
from copylib.theory import softmax_cumulants

# deadline=None: the first call of a torch/scipy path pays one-off import and
# allocation costs, which would trip Hypothesis' per-example deadline spuriously.
# too_slow / data_too_large: some strategies build (L, L, V, V) tensors on purpose.
_COMMON = dict(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.register_profile("ci", derandomize=True, database=None, **_COMMON)
settings.register_profile("explore", derandomize=False, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def one_thread():
    """Torch on one intra-op thread for the module that asks (restored after).

    Modules of tiny tensors: a second thread only adds synchronisation, and thrashes
    on a busy machine.
    """
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture(scope="session")
def cumulants_L8():
    """Softmax row cumulants at ``L = 8, V = 3`` on a wide tilt grid (cheap enough for Monte Carlo checks)."""
    return softmax_cumulants.row_cumulants(ModelSpec(L=8, V=3, kind="softmax"), np.random.default_rng(0),
                                           n_draws=4096, lam1=np.linspace(-200, 100, 151),
                                           lam2=np.linspace(-150, 150, 101))


@pytest.fixture(scope="session")
def cumulants_L32():
    """Softmax row cumulants of the chapter's size ``L = 32, V = 4`` on the default tilt grid."""
    return softmax_cumulants.row_cumulants(ModelSpec(L=32, V=4, kind="softmax"), np.random.default_rng(1),
                                           n_draws=2048)


@dataclass(frozen=True)
class BookBuild:
    """One ``jupyter-book build``: its exit code, its log and its ``_build`` folder."""

    returncode: int
    log: str
    root: Path

    @property
    def html(self) -> Path:
        return self.root / "html"

    def executed(self, source: Path) -> Path:
        """The notebook myst-nb wrote after executing ``source`` (a chapter under ROOT)."""
        return self.root / "jupyter_execute" / source.relative_to(ROOT).with_suffix(".ipynb")

    def failure_report(self) -> str:
        return build_failure_report(self.returncode, self.log)


def _uses_build(item) -> bool:
    return "book_build" in getattr(item, "fixturenames", ())


def _uses_binder(item) -> bool:
    return item.get_closest_marker("binder") is not None


def pytest_collection_modifyitems(session, config, items):
    """The library tests first, then the Binder tests, the tests on the book build last (stable
    otherwise): the library tests run while the Binder environment and the book are built."""
    items.sort(key=lambda item: (_uses_build(item), _uses_binder(item)))


class _BackgroundBuild:
    """The session's book build, started when collection finds the first test that needs it."""

    def __init__(self, out: Path):
        self.out = out
        self.log_path = out / "build.log"
        env = dict(os.environ, COPYHEAD_CHECKS_DIR=str(out / "checks"))
        # The interpreter running the tests, so the build sees the same environment.
        cmd = [sys.executable, "-c", "from jupyter_book.cli.main import main; main()", "build", str(ROOT),
               "--path-output", str(out), "-W", "-n", "--keep-going"]
        with self.log_path.open("w") as log:
            self.proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)

    def result(self) -> BookBuild:
        returncode = self.proc.wait()
        return BookBuild(returncode, self.log_path.read_text(errors="replace"), self.out / "_build")

    def stop(self) -> None:
        if self.proc.poll() is None:  # the session ended early (interrupted, -x)
            self.proc.kill()
            self.proc.wait()


class _AfterBuild:
    """``work(html, base_url)`` in a daemon thread once the session's build has succeeded, with the
    site served by a server of its own (Playwright's sync API is one instance per thread)."""

    def __init__(self, build: _BackgroundBuild, work):
        import threading

        self._build, self._work, self._value, self._error = build, work, None, None
        self._thread = threading.Thread(target=self._run, daemon=True, name=work.__name__)
        self._thread.start()

    def _run(self) -> None:
        import traceback

        try:
            built = self._build.result()
            if built.returncode != 0:
                return  # built_site fails every test that needs this
            with _served(built.html) as url:
                self._value = self._work(built.html, url)
        except Exception:  # noqa: BLE001 - reported by the fixture, in the main thread
            self._error = traceback.format_exc()

    def result(self):
        """The work's value; ``None`` if the build failed; fails the test if the work raised."""
        self._thread.join()
        if self._error is not None:
            pytest.fail(f"{self._work.__name__} (in the background, after the build) failed:\n{self._error}")
        return self._value


def _render_pages(html: Path, url: str):
    from browser_helpers import launched_chromium, render_pages

    with launched_chromium() as chromium:
        return render_pages(chromium, url, html)


def _explore_site(html: Path, url: str):
    from browser_helpers import explore_site

    return explore_site(html, url)


# The browser's work on the build: it waits on page loads, MathJax and the explorers' controls more
# than it uses a core, so it starts as soon as the build is done, while the library tests go on.
_BROWSER_WORK = {"rendered_pages": _render_pages, "explored_site": _explore_site}
_AFTER: dict[str, _AfterBuild] = {}  # fixture name -> its background work, if a collected test uses it


def _after_build(fixture: str):
    return _AFTER[fixture].result() if fixture in _AFTER else None


_BUILD: list[_BackgroundBuild] = []
_BINDER: list = []  # the binder_env.Background of this session, if a Binder test was collected


def pytest_itemcollected(item):
    """Start the book build as soon as collection finds the first test that needs it: the rest of
    collection, on one core, then overlaps the build instead of delaying it."""
    if not _BUILD and _uses_build(item) and not os.environ.get("COPYHEAD_SITE"):
        # pytest's own temporary-directory factory (the fixture is not available in a hook).
        _BUILD.append(_BackgroundBuild(item.config._tmp_path_factory.mktemp("site")))


def pytest_collection_finish(session):
    factory = session.config._tmp_path_factory
    if any(_uses_binder(item) for item in session.items):
        import binder_env

        _BINDER.append(binder_env.Background(factory.mktemp("binder")))
    if _BUILD and not any(_uses_build(item) for item in session.items):
        _BUILD.pop().stop()  # every test that needed it was deselected (-k, -m)
    if not _BUILD:
        return
    if _can_browse():
        for fixture, work in _BROWSER_WORK.items():
            if any(fixture in getattr(item, "fixturenames", ()) for item in session.items):
                _AFTER[fixture] = _AfterBuild(_BUILD[0], work)


def _can_browse() -> bool:
    """Playwright importable and a Chromium found (else the browser tests skip, saying why)."""
    import importlib.util

    from browser_helpers import CHROMIUM  # tests/book is on sys.path: the build's tests were collected there

    return importlib.util.find_spec("playwright") is not None and CHROMIUM is not None


def pytest_sessionfinish(session, exitstatus):
    for build in _BUILD:
        build.stop()
    if _BINDER:
        import binder_env

        binder_env.stop()


@pytest.fixture(scope="session")
def book_build(tmp_path_factory) -> BookBuild:
    """One clean ``jupyter-book build . -W -n --keep-going`` per test session.

    The build executes every chapter; the chapter tests inspect the notebooks it
    executed and the site tests the pages it wrote, so no chapter runs twice.
    Set ``COPYHEAD_SITE`` to an existing ``_build/html`` folder to test that
    build instead (the chapter tests check its notebooks match the sources).
    """
    given = os.environ.get("COPYHEAD_SITE")
    if given:
        html = Path(given)
        if not (html / "index.html").is_file():
            pytest.fail(f"COPYHEAD_SITE={given} is not a built site (no index.html)")
        return BookBuild(0, "", html.parent)
    if not _BUILD:  # collection did not see a test needing it (e.g. a fixture requested dynamically)
        _BUILD.append(_BackgroundBuild(tmp_path_factory.mktemp("site")))
    return _BUILD[0].result()


@pytest.fixture(scope="session")
def binder_environment(tmp_path_factory) -> dict:
    """The Binder-like environment (:func:`binder_env.prepare`), started when collection ended."""
    import binder_env

    if not _BINDER:  # collection did not see a Binder test (e.g. a fixture requested dynamically)
        _BINDER.append(binder_env.Background(tmp_path_factory.mktemp("binder")))
    try:
        return _BINDER[0].result()
    except binder_env.SetupFailed as err:
        pytest.fail(str(err))


@pytest.fixture(scope="session")
def built_site(book_build) -> Path:
    """``_build/html`` of the session's book build; fails every site test if the build failed."""
    if book_build.returncode != 0:
        pytest.fail(book_build.failure_report())
    return book_build.html


@contextlib.contextmanager
def _served(html: Path):
    """``html`` served on localhost by a thread; yields its base URL."""
    import functools
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(html)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(scope="session")
def site_url(built_site):
    """The built site served on localhost by a thread, as its base URL."""
    with _served(built_site) as url:
        yield url


@pytest.fixture(scope="session")
def browser():
    """Playwright driving the system Chromium (``browser_helpers.launched_chromium``)."""
    _skip_without_browser()
    from browser_helpers import launched_chromium

    with launched_chromium() as chromium:
        yield chromium


def _skip_without_browser() -> None:
    """Skip the test, saying why, unless Playwright and Chromium are there (:func:`_can_browse`)."""
    pytest.importorskip("playwright.sync_api", reason="playwright is in requirements.txt")
    if not _can_browse():
        pytest.skip("Chromium not found: install Debian's `chromium` package (the README's test command does)")


@pytest.fixture(scope="session")
def rendered_pages(built_site, site_url, request):
    """Every page of the build opened once in Chromium, after its scripts ran
    (``browser_helpers.render_pages``): what ``test_site.py`` and ``test_math_browser.py`` inspect.
    A browser of its own is launched only if the background did not do it."""
    from browser_helpers import render_pages

    _skip_without_browser()
    pages = _after_build("rendered_pages")
    return pages if pages is not None else render_pages(request.getfixturevalue("browser"), site_url, built_site)


@pytest.fixture(scope="session")
def explored_site(built_site, site_url):
    """Every control of every explorer on the site moved (``browser_helpers.explore_site``):
    (explorer pages, problems, moves)."""
    from browser_helpers import explore_site

    _skip_without_browser()
    found = _after_build("explored_site")
    return found if found is not None else explore_site(built_site, site_url)


# Sphinx's own markers; with -W every WARNING line is a reason the build failed.
_PROBLEM = re.compile(r"\b(WARNING|ERROR|CRITICAL|SEVERE)\b|Traceback|Error:")


def build_failure_report(returncode: int, log: str, tail_chars: int = 6000) -> str:
    """Every WARNING/ERROR line of a failed build's ``log``, then the log's last ``tail_chars``.

    With ``--keep-going`` the warnings that fail a -W build are spread through a long
    log; its tail alone shows only the summary.
    """
    # the kernels' own start-up notice ("[IPKernelApp] WARNING | Kernel is running over TCP ...") is not Sphinx's
    problems = [line for line in log.splitlines() if _PROBLEM.search(line) and not line.startswith("[IPKernelApp]")]
    listed = "\n".join(problems) if problems else "(none found)"
    return (f"book build failed (exit {returncode}); {len(problems)} warning/error line(s):\n{listed}\n"
            f"--- last {tail_chars} characters of the log ---\n{log[-tail_chars:]}")
