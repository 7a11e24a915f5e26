"""The Colab notebooks' setup cell, run offline: a fake ``google.colab``, the clone served from
a local repository, pip installing into a throwaway venv.

The cell's code is taken from a generated notebook and run as it is; only the world around it
is faked: ``git`` rewrites the repository's GitHub address to a local bare repository holding
the working tree's tracked files (``url.<local>.insteadOf`` in a config of the test's own), and
pip has no index (copylib's build backend comes from the venv's view of this environment).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("copyhead_notebooks", ROOT / "tools" / "notebooks.py")
notebooks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(notebooks)

# What the kernel reports after the cell: where copylib comes from, the cwd, the book root the
# chapters' checks find from it.
REPORT = """
import copylib, copylib.checks, os
print(copylib.__file__, os.getcwd(), copylib.checks._book_root(), sep="\\n")
"""


def _run(cmd: list, **kwargs) -> str:
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kwargs)
    assert r.returncode == 0, f"{cmd} failed (exit {r.returncode}):\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r.stdout


def _snapshot(bare: Path) -> None:
    """A bare repository whose one commit holds the working tree's tracked files, local edits included."""
    _run(["git", "init", "-q", "--bare", bare])
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@localhost", f"--git-dir={bare}", f"--work-tree={ROOT}"]
    names = [n for n in _run(["git", "ls-files", "-z"], cwd=ROOT).split("\0") if n and (ROOT / n).is_file()]
    _run(git + ["add", "--", *names])
    _run(git + ["commit", "-q", "-m", "snapshot of the working tree"])


@pytest.fixture(scope="module")
def colab(tmp_path_factory) -> dict:
    """A fake Colab: ``google.colab`` importable, GitHub served locally, a venv for pip to install into."""
    tmp = tmp_path_factory.mktemp("colab")
    _snapshot(tmp / "origin.git")
    (tmp / "fake" / "google" / "colab").mkdir(parents=True)
    (tmp / "fake" / "google" / "__init__.py").touch()
    (tmp / "fake" / "google" / "colab" / "__init__.py").touch()
    gitconfig = tmp / "gitconfig"
    gitconfig.write_text(f'[url "file://{tmp / "origin.git"}"]\n\tinsteadOf = {notebooks.REPOSITORY}\n')
    # System site-packages: numpy, torch and copylib's build backend, as Colab has its own.
    # No pip of its own: ensurepip's old setuptools would shadow the one that builds copylib.
    _run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", tmp / "venv"])
    # When the tests run in a venv, "system" is the base interpreter, not this environment: put this
    # environment's packages first (a .pth in the venv's own site-packages is read before the base's).
    purelib = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    venv_site = Path(_run([tmp / "venv" / "bin" / "python", "-c", purelib]).strip())
    (venv_site / "_host_environment.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(GIT_CONFIG_GLOBAL=str(gitconfig), GIT_CONFIG_NOSYSTEM="1", PIP_NO_INDEX="1",
               PIP_NO_BUILD_ISOLATION="0", PYTHONPATH=str(tmp / "fake"))  # "0": pip's inverted no-* options
    (tmp / "content").mkdir()  # Colab's working directory
    return {"tmp": tmp, "env": env, "python": tmp / "venv" / "bin" / "python", "content": tmp / "content"}


def _setup_cell() -> str:
    nb = jupytext.read(ROOT / "notebooks" / "copy_task.ipynb")
    cell = nb.cells[0]
    assert cell.metadata.get("tags") == ["colab-setup"]
    return cell.source


def _kernel(colab: dict, *cells: str, on_colab: bool = True) -> list[Path]:
    """Run ``cells`` in one fresh Python process started in Colab's /content, then REPORT."""
    code = ("import google.colab\n" if on_colab else "") + "\n".join(cells) + REPORT
    out = _run([colab["python"], "-c", code], cwd=colab["content"], env=colab["env"], timeout=600)
    return [Path(line).resolve() for line in out.splitlines()[-3:]]


def test_setup_cell_clones_installs_and_moves_into_the_book(colab):
    clone = (colab["content"] / "copyhead").resolve()
    cell = _setup_cell()
    # First run, then a second run in the same kernel: it must not clone again from book/.
    module, cwd, root = _kernel(colab, cell, cell)
    assert module == clone / "copylib" / "__init__.py"
    assert cwd == clone / "book" and root == clone
    assert not (clone / "book" / "copyhead").exists()
    show = _run([colab["python"], "-m", "pip", "show", "copylib"], env=colab["env"])
    assert f"Editable project location: {clone}" in show, show
    # After a restart the clone is there and the cwd is /content again: back into book/.
    module, cwd, root = _kernel(colab, cell)
    assert module == clone / "copylib" / "__init__.py" and cwd == clone / "book" and root == clone


def test_setup_cell_does_nothing_outside_colab(colab, tmp_path):
    code = _setup_cell() + "\nprint(os.getcwd(), os.listdir())"
    out = _run([colab["python"], "-c", code], cwd=tmp_path, env=colab["env"])
    assert out.split() == [str(tmp_path), "[]"]
