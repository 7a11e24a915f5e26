"""Binder, checked as far as it can be without mybinder.org (marker ``binder``: a few minutes).

What repo2docker does with this repository, done with a venv and pip in a copy of the tracked
files (``tests/binder_env.py``, started in the background when collection ends): install its
base environment (``binder-base.txt``: JupyterLab) and ``binder/requirements.txt``, run
``binder/postBuild`` from the repository root. Here: start JupyterLab. Then what a reader's browser does after the Binder button: open a chapter's
``.md`` through the contents API as a notebook (jupytext), and in a kernel of that server, over
the kernel's websocket, run the chapter's setup cell and a probe of the whole stack the chapters
use (every module any chapter imports; a frame explorer, which draws with matplotlib and Pillow
into ipywidgets; a short MALA run in torch; ArviZ's diagnostics; pymbar's MBAR; myst-nb's glue),
failing on any error.

The chapter itself is not run again here: the session's book build executes every chapter once
(the issue's budget: each chapter executes once per test run), with the same pins as
``binder/requirements.txt`` (``tests/book/test_launch.py`` checks that they match). What Binder
adds to that, the environment it assembles and the server and kernel it starts, is what this
test runs.

Not covered: repo2docker and Docker themselves, conda's builds of the base environment, and
PyTorch's CPU index (unreachable here; the machine's own wheel is the same version and build).
"""

from __future__ import annotations

import ast
import asyncio
import concurrent.futures
import json
import os
import re
import secrets
import signal
import socket
import struct
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import jupytext
import pytest
from tornado.httpclient import HTTPRequest
from tornado.websocket import websocket_connect

from binder_env import remove_venv

pytestmark = pytest.mark.binder

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = "book/copy_task.md"  # opened as a reader opens it; its setup cell runs in the kernel
SERVER_TIMEOUT = 120  # s for JupyterLab to answer; it takes a few seconds
CELL_TIMEOUT = 300  # s per cell; the stack probe takes ~10 s, margin for a loaded 2-core machine
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def binder(binder_environment):
    """A copy of the repository set up as repo2docker would set it up (:mod:`binder_env`, started by
    ``conftest.py`` when collection ended)."""
    yield binder_environment
    # pytest keeps the last runs' tmp folders; without their 1.7 GB venvs (the logs stay).
    remove_venv(binder_environment["venv"])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


_LOCAL = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never through a proxy


def _api(server: dict, method: str, path: str, body: dict | None = None):
    request = urllib.request.Request(
        server["url"] + path, method=method, data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"token {server['token']}", "Content-Type": "application/json"})
    with _LOCAL.open(request, timeout=60) as response:
        data = response.read()
    return json.loads(data) if data else None


def _wait_until_up(server: dict, proc: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + SERVER_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"JupyterLab exited ({proc.returncode}):\n{log.read_text()[-3000:]}")
        try:
            _api(server, "GET", "/api/status")
            return
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.5)
    pytest.fail(f"JupyterLab did not answer within {SERVER_TIMEOUT} s:\n{log.read_text()[-3000:]}")


def _ours(venv: Path) -> list[int]:
    """Processes running the test's venv (the server and its kernels, which run in sessions of their own)."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if (entry.name.isdigit() and int(entry.name) != os.getpid()
                    and str(venv).encode() in (entry / "cmdline").read_bytes()):
                pids.append(int(entry.name))
        except OSError:  # ended meanwhile
            pass
    return pids


def _stop(server: dict, proc: subprocess.Popen, venv: Path) -> None:
    """Shut JupyterLab down (it shuts down its kernels), then kill anything of ours left over."""
    try:
        _api(server, "POST", "/api/shutdown")
        proc.wait(timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    for pid in _ours(venv):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 10  # a killed process stays listed until its parent reaps it
    while _ours(venv) and time.monotonic() < deadline:
        time.sleep(0.2)


@pytest.fixture(scope="module")
def server(binder):
    """JupyterLab started as Binder starts it: in the repository root, with a token."""
    server = {"url": f"http://127.0.0.1:{_free_port()}", "token": secrets.token_hex(16)}
    log = binder["tmp"] / "jupyterlab.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [binder["venv"] / "bin" / "jupyter", "lab", "--no-browser", "--ip=127.0.0.1", f"--port={server['url'].rsplit(':', 1)[1]}",
             "--ServerApp.port_retries=0", f"--IdentityProvider.token={server['token']}",
             f"--ServerApp.root_dir={binder['repo']}",
             # Binder runs as an ordinary user; CI and this machine run the tests as root.
             *(["--allow-root"] if os.geteuid() == 0 else [])],
            cwd=binder["repo"], env=binder["env"], stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True)
        try:
            _wait_until_up(server, proc, log)
            yield server
        finally:
            _stop(server, proc, binder["venv"])
    assert not _ours(binder["venv"]), "processes of the test's venv outlived the server, even SIGKILL"


def _execute_request(session: str, msg_id: str, code: str) -> str:
    header = {"msg_id": msg_id, "session": session, "username": "test", "msg_type": "execute_request",
              "version": "5.3", "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    content = {"code": code, "silent": False, "store_history": True, "user_expressions": {},
               "allow_stdin": False, "stop_on_error": True}
    return json.dumps({"header": header, "parent_header": {}, "metadata": {}, "content": content,
                       "channel": "shell", "buffers": []})


def _decode(frame: str | bytes) -> dict:
    """A message of jupyter_server's default websocket protocol: JSON text, or binary with buffers."""
    if isinstance(frame, str):
        return json.loads(frame)
    n = struct.unpack("!I", frame[:4])[0]  # buffers, the message's JSON first
    offsets = struct.unpack(f"!{n}I", frame[4:4 + 4 * n]) + (len(frame),)
    return json.loads(frame[offsets[0]:offsets[1]])


async def _run_cell(ws, session: str, code: str, index: int) -> str:
    """Run one cell; its stdout. Fails on an error reply or an error output."""
    msg_id = uuid.uuid4().hex
    await ws.write_message(_execute_request(session, msg_id, code))
    stdout, replied, idle = [], False, False
    while not (replied and idle):
        frame = await ws.read_message()
        assert frame is not None, f"the kernel's websocket closed during cell {index}"
        msg = _decode(frame)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = msg["msg_type"], msg["content"]
        if kind == "error" or (kind == "execute_reply" and content["status"] != "ok"):
            trace = ANSI.sub("", "\n".join(content.get("traceback", [])))
            pytest.fail(f"code cell {index + 1} raised {content.get('ename')}: {content.get('evalue')}\n{trace}\n"
                        f"--- the cell:\n{code}")
        if kind == "stream" and content["name"] == "stdout":
            stdout.append(content["text"])
        replied |= kind == "execute_reply"
        idle |= kind == "status" and content["execution_state"] == "idle"
    return "".join(stdout)


async def _run_cells(server: dict, kernel_id: str, cells: list[str]) -> list[str]:
    url = server["url"].replace("http", "ws", 1) + f"/api/kernels/{kernel_id}/channels"
    ws = await websocket_connect(HTTPRequest(url, headers={"Authorization": f"token {server['token']}"}))
    session = uuid.uuid4().hex
    try:
        return [await asyncio.wait_for(_run_cell(ws, session, code, i), CELL_TIMEOUT)
                for i, code in enumerate(cells)]
    finally:
        ws.close()


def _source(cell: dict) -> str:
    return cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])


def test_postbuild_makes_jupyterlab_open_markdown_as_notebooks(binder, server):
    settings = _api(server, "GET", "/lab/api/settings/@jupyterlab/docmanager-extension:plugin")
    # jupytext-config writes an override of the setting's default (the user's own settings stay empty)
    viewers = settings["schema"]["properties"]["defaultViewers"]["default"]
    assert viewers.get("markdown") == "Jupytext Notebook", viewers


def _chapter_imports() -> list[str]:
    """Every module a chapter's code imports (absolute imports), from all chapters."""
    names = set()
    for path in sorted((ROOT / "book").glob("*.md")):
        for cell in jupytext.read(path, fmt="md:myst").cells:
            if cell.cell_type != "code":
                continue
            for node in ast.walk(ast.parse(cell.source)):
                if isinstance(node, ast.Import):
                    names.update(alias.name for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.level == 0:
                    names.add(node.module)
    return sorted(names)


# Each library the chapters compute with, once, at the smallest size; the last line is checked.
STACK = """
import importlib
for name in {modules!r}:
    importlib.import_module(name)
import matplotlib.pyplot as plt
import numpy as np
import torch
from myst_nb import glue
import copylib as cl
from copylib import frames
from copylib.inference.diagnostics import chain_diagnostics
from copylib.inference.free_energy import ladder_log_partition
from copylib.inference.posterior_sampling import sample_collapsed_posterior

spec = cl.ModelSpec(L=4, V=2, kind="softmax")
C = cl.cooccurrence(cl.copy_task(P=8, L=4, V=2, rng=np.random.default_rng(0))[0])
run = sample_collapsed_posterior(C, spec, 2, 40, torch.Generator().manual_seed(0), n_warmup=10)
diagnostics = chain_diagnostics(run.energy)
log_z = ladder_log_partition(np.random.default_rng(1).normal(size=(2, 50)), [0.5, 1.0], [1.0])
explorer = frames.frame_explorer([frames.axis("P", [8, 16])], lambda P: plt.subplots(figsize=(2, 2))[0])
glue("binder_probe", float(run.energy.mean()), display=False)
finite = np.isfinite([*run.energy.ravel(), diagnostics.ess_bulk, *log_z]).all()
print("stack:", finite, len(explorer.jslinks))
"""


def _run_async(coroutine):
    """Run ``coroutine`` to completion in a thread of its own: the session's browser fixture (Playwright's
    sync API) may already run an event loop in the main thread, where ``asyncio.run`` refuses to start one."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def test_binder_opens_a_chapter_as_a_notebook_and_runs_the_stack(binder, server):
    model = _api(server, "GET", f"/api/contents/{CHAPTER}?type=notebook&content=1")
    assert model["type"] == "notebook", model["type"]
    cells = [_source(c) for c in model["content"]["cells"] if c["cell_type"] == "code"]
    expected = [c.source for c in jupytext.read(ROOT / CHAPTER, fmt="md:myst").cells if c.cell_type == "code"]
    assert cells and cells == expected, "the contents API's notebook is not the chapter's code"
    modules = _chapter_imports()
    assert {"copylib", "torch", "matplotlib.pyplot", "myst_nb"} <= set(modules), modules
    # The kernel starts in the chapter's folder, as when a reader opens the chapter in JupyterLab.
    kernel = _api(server, "POST", "/api/kernels", {"name": "python3", "path": str(Path(CHAPTER).parent)})
    try:
        probe = "import copylib, os, sys\nprint(copylib.__file__, os.getcwd(), sys.prefix, sep='\\n')"
        where, _, stack = _run_async(_run_cells(server, kernel["id"], [probe, cells[0], STACK.format(modules=modules)]))
        module, cwd, prefix = (Path(p).resolve() for p in where.splitlines())
        repo = binder["repo"].resolve()
        assert module.is_relative_to(repo / "copylib"), f"copylib imported from {module}, not the copy's install"
        assert cwd == repo / "book" and prefix == binder["venv"].resolve(), (cwd, prefix)
        assert stack.splitlines()[-1] == "stack: True 1", stack
    finally:
        _api(server, "DELETE", f"/api/kernels/{kernel['id']}")
