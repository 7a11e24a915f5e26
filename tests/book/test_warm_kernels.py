"""Kernels forked from a warm process (_ext/warm_kernels.py): a chapter sees the kernel a fresh
``python -m ipykernel_launcher`` would give it, and no kernel outlives its notebook or its zygote."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import nbformat
import pytest
from jupyter_client.connect import write_connection_file
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError

ROOT = Path(__file__).resolve().parents[2]


sys.path.insert(0, str(ROOT / "_ext"))  # as Sphinx's local extensions see it
import warm_kernels as wk  # noqa: E402

PROBE = """import os, sys
import matplotlib
print(sys.path)
print(os.getcwd(), os.environ.get("WARM_KERNEL_PROBE"), os.environ.get("OMP_NUM_THREADS"))
print(matplotlib.get_backend())"""
FIGURE = """import matplotlib.pyplot as plt
from myst_nb import glue
plt.plot([1, 2, 3])
glue("probe", 3.5)"""
PID = "import os\nprint(os.getpid(), os.getppid(), os.getpgid(0))"


def _notebook(*cells: str):
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells],
                                    metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                             "language": "python"}})


def _run(nb, cwd: Path, warm: bool, timeout: int = 60):
    kwargs = {"kernel_manager_class": wk.WarmKernelManager} if warm else {}
    NotebookClient(nb, timeout=timeout, resources={"metadata": {"path": str(cwd)}}, **kwargs).execute()
    return nb


def _outputs(nb) -> list:
    """Per cell: the text of its streams and the MIME types and metadata of its displays."""
    return [[(o.output_type, o.get("text"), sorted(o.get("data", {})), o.get("metadata", {})) for o in cell.outputs]
            for cell in nb.cells]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _alive(pid)


def test_a_forked_kernel_runs_a_notebook_as_a_fresh_one_does(tmp_path, monkeypatch):
    wk.zygote()  # started before the variable is set: the kernel must still see it
    monkeypatch.setenv("WARM_KERNEL_PROBE", "set after the zygote started")
    fresh = _outputs(_run(_notebook(PROBE, FIGURE), tmp_path, warm=False))
    warm = _outputs(_run(_notebook(PROBE, FIGURE), tmp_path, warm=True))
    assert warm == fresh
    assert str(tmp_path) in warm[0][0][1] and "set after the zygote started" in warm[0][0][1]
    glued, figure = warm[1]  # the inline backend shows the figure when the cell ends
    assert glued[3] == {"scrapbook": {"name": "probe", "mime_prefix": ""}}
    assert figure[0] == "display_data" and figure[2] == ["image/png", "text/plain"]


def test_the_kernel_is_a_child_of_the_zygote_in_its_own_session_and_ends_with_the_notebook(tmp_path):
    nb = _run(_notebook(PID), tmp_path, warm=True)
    pid, ppid, pgid = map(int, nb.cells[0].outputs[0]["text"].split())
    assert ppid == wk.zygote().process.pid and pgid == pid
    assert _gone_within(pid, 10)


def test_a_cell_that_times_out_ends_its_kernel(tmp_path):
    nb = _notebook(PID, "import time\ntime.sleep(120)")
    with pytest.raises(CellTimeoutError):
        _run(nb, tmp_path, warm=True, timeout=3)
    pid = int(nb.cells[0].outputs[0]["text"].split()[0])
    assert _gone_within(pid, 10)


def test_kernels_end_with_their_zygote(tmp_path):
    zygote = wk.Zygote()
    connection, _ = write_connection_file(str(tmp_path / "kernel.json"))
    pid = zygote.fork([sys.executable, "-m", "ipykernel_launcher", "-f", connection], tmp_path, dict(os.environ))
    assert _alive(pid)
    zygote.close()
    assert _gone_within(pid, 15)  # ipykernel's parent poller looks once a second


def test_only_ipykernel_of_this_interpreter_is_forked(tmp_path):
    assert wk.forkable([sys.executable, "-m", "ipykernel_launcher", "-f", "k.json"])
    assert not wk.forkable([sys.executable, "-c", "print(1)"])
    assert not wk.forkable([str(tmp_path / "python"), "-m", "ipykernel_launcher", "-f", "k.json"])  # no such Python
    (tmp_path / "venv").mkdir()
    (tmp_path / "venv" / "python").symlink_to(os.path.realpath(sys.executable))  # another venv of this Python
    assert not wk.forkable([str(tmp_path / "venv" / "python"), "-m", "ipykernel_launcher", "-f", "k.json"])
    with pytest.raises(ValueError, match="ipykernel_launcher"):
        wk.zygote().fork([sys.executable, "-c", "print(1)"], tmp_path, dict(os.environ))


def test_without_a_zygote_the_notebook_runs_in_a_fresh_kernel(tmp_path, monkeypatch, capfd):
    def broken():
        raise RuntimeError("the kernel zygote did not start (exit code 1)")

    monkeypatch.setattr(wk, "zygote", broken)
    nb = _run(_notebook(PID), tmp_path, warm=True)
    pid, ppid, _ = map(int, nb.cells[0].outputs[0]["text"].split())
    assert ppid == os.getpid()  # started by jupyter_client as usual
    assert "no zygote" in capfd.readouterr().err
