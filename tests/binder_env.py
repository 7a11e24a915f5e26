"""The Binder-like environment of ``tests/book/test_binder.py``, built in the background.

What repo2docker does with this repository, done with a venv and pip in a copy of the tracked
files: install its base environment (``tests/book/binder-base.txt``: JupyterLab) and
``binder/requirements.txt``, then run ``binder/postBuild`` from the repository root.

It takes a few minutes, nearly all of it pip waiting on downloads and unpacking, so the test
session starts it in a thread as soon as collection ends (:func:`start`, from ``conftest.py``)
and the library tests run meanwhile; the Binder tests wait for it (:meth:`Background.result`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASE = ROOT / "tests" / "book" / "binder-base.txt"
# binder/requirements.txt names PyTorch's CPU index, which this machine and CI cannot reach:
# pip would retry it for every package. Without it, torch==2.13.0+cpu resolves from the
# machine's own wheel (pip's find-links), the same release and build Binder takes from there.
PYTORCH_INDEX = "--extra-index-url https://download.pytorch.org/whl/cpu"
PIP_TIMEOUT = 1800  # s; a clean build takes 2-3 minutes, most of it downloads


class SetupFailed(Exception):
    """A step of the environment's setup failed; the message says which and shows its output."""


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without this interpreter's paths, plus ``extra``.

    No PYTHONPATH: copylib must come from the copy's editable install, not from the tree
    under test (the README's test command) or the global editable install.
    """
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(extra)
    return env


_RUNNING: set = set()  # the setup's subprocesses now running, for stop()


def run(cmd: list, what: str, timeout: float | None = None, **kwargs) -> str:
    """``cmd``'s stdout; :class:`SetupFailed` naming ``what`` if it fails or times out."""
    with subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          **kwargs) as proc:
        _RUNNING.add(proc)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise SetupFailed(f"{what} took over {timeout} s: {cmd}") from None
        finally:
            _RUNNING.discard(proc)
    if proc.returncode:
        raise SetupFailed(f"{what} failed (exit {proc.returncode}): {cmd}\n{out[-3000:]}\n{err[-3000:]}")
    return out


def stop() -> None:
    """Kill the setup's running subprocess, if any (the session ended before the setup did)."""
    for proc in list(_RUNNING):
        proc.kill()


def copy_tracked_files(dest: Path) -> None:
    """The working tree's tracked files (what a clone of this commit plus local edits holds)."""
    names = run(["git", "ls-files", "-z"], "listing the tracked files", cwd=ROOT).split("\0")
    for name in filter(None, names):
        if (ROOT / name).is_file():  # a tracked file deleted in the working tree is gone
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)  # copy2 keeps postBuild executable


def prepare(tmp: Path) -> dict:
    """Set up a copy of the repository in ``tmp`` as repo2docker would; its paths and environment."""
    repo, venv, home = tmp / "repo", tmp / "venv", tmp / "home"
    copy_tracked_files(repo)
    lines = (repo / "binder" / "requirements.txt").read_text(encoding="utf-8").splitlines()
    if PYTORCH_INDEX not in lines:
        raise SetupFailed("binder/requirements.txt changed: update PYTORCH_INDEX in tests/binder_env.py")
    local = tmp / "requirements-local.txt"
    local.write_text("\n".join(line for line in lines if line != PYTORCH_INDEX) + "\n", encoding="utf-8")
    run([sys.executable, "-m", "venv", venv], "python -m venv", env=clean_env())
    python = venv / "bin" / "python"
    # The user's own pip cache (HOME unchanged here), so a second run downloads nothing new.
    # --no-compile: Python compiles what the kernel imports when it imports it; pip would compile
    # every module of every package, most of which (much of torch) the kernel never imports
    run([python, "-m", "pip", "install", "-q", "--no-compile", "-r", BASE, "-r", local],
        "building the Binder environment (pip needs PyPI; this test does not skip without it)",
        env=clean_env(), timeout=PIP_TIMEOUT)
    cache = run([python, "-m", "pip", "cache", "dir"], "pip cache dir", env=clean_env()).strip()
    # From here on HOME and Jupyter's directories are in tmp: postBuild's jupytext-config
    # writes the user's JupyterLab settings, which must not touch the real ones.
    env = clean_env(PATH=f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}", VIRTUAL_ENV=str(venv),
                    HOME=str(home), JUPYTER_CONFIG_DIR=str(home / ".jupyter"),
                    JUPYTER_DATA_DIR=str(home / ".local/share/jupyter"),
                    JUPYTER_RUNTIME_DIR=str(home / ".local/share/jupyter/runtime"), PIP_CACHE_DIR=cache)
    home.mkdir()
    run([repo / "binder" / "postBuild"], "binder/postBuild", cwd=repo, env=env, timeout=PIP_TIMEOUT)
    return {"tmp": tmp, "repo": repo, "venv": venv, "home": home, "env": env}


class Background:
    """:func:`prepare` in a daemon thread (its subprocesses release the GIL while pip works)."""

    def __init__(self, tmp: Path):
        self._outcome: dict | Exception | None = None
        self._thread = threading.Thread(target=self._work, args=(tmp,), name="binder-env", daemon=True)
        self._thread.start()

    def _work(self, tmp: Path) -> None:
        try:
            self._outcome = prepare(tmp)
        except Exception as err:  # handed to the test that waits for it
            self._outcome = err

    def result(self) -> dict:
        """The prepared environment (waits for it); re-raises the setup's error."""
        self._thread.join()
        if isinstance(self._outcome, Exception):
            raise self._outcome
        return self._outcome


def remove_venv(venv: Path) -> None:
    """Delete ``venv`` (1.7 GB) in a detached ``rm``, so the session does not wait for it."""
    subprocess.Popen(["rm", "-rf", str(venv)], start_new_session=True,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
