"""Binder, checked as far as it can be without mybinder.org (marker ``binder``: a few minutes).

What repo2docker does with this repository, done here with a venv and pip, in a copy of the
tracked files: install its base environment (``binder-base.txt``: JupyterLab) and
``binder/requirements.txt``, run ``binder/postBuild`` from the repository root, start
JupyterLab. Then what a reader's browser does after the Binder button: open a chapter's
``.md`` through the contents API as a notebook (jupytext) and run its code cells in a kernel of
that server over the kernel's websocket, failing on any error.

Not covered: repo2docker and Docker themselves, conda's builds of the base environment, and
PyTorch's CPU index (unreachable here; the machine's own wheel is the same version and build).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import jupytext
import pytest
from tornado.httpclient import HTTPRequest
from tornado.websocket import websocket_connect

pytestmark = pytest.mark.binder

ROOT = Path(__file__).resolve().parents[2]
BASE = Path(__file__).with_name("binder-base.txt")
# The quickest chapter that uses the whole stack (torch, numpy, scipy, matplotlib and an
# ipywidgets explorer): about 70 s in the README's run-time table. The intro is
# quicker (10 s) but its one code cell only imports copylib.
CHAPTER = "book/copy_task.md"
# binder/requirements.txt names PyTorch's CPU index, which this machine and CI cannot reach:
# pip would retry it for every package. Without it, torch==2.13.0+cpu resolves from the
# machine's own wheel (pip's find-links), the same release and build Binder takes from there.
PYTORCH_INDEX = "--extra-index-url https://download.pytorch.org/whl/cpu"
PIP_TIMEOUT = 1800  # s; a clean build takes 2-3 minutes, most of it downloads
SERVER_TIMEOUT = 120  # s for JupyterLab to answer; it takes a few seconds
CELL_TIMEOUT = 900  # s per cell; the whole chapter takes ~70 s, margin for a loaded 2-core machine
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _env(**extra: str) -> dict[str, str]:
    # No PYTHONPATH: copylib must come from the copy's editable install, not from the tree
    # under test (the README's test command) or the global editable install.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(extra)
    return env


def _run(cmd: list, what: str, **kwargs) -> str:
    try:
        r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kwargs)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{what} took over {kwargs['timeout']} s: {cmd}")
    if r.returncode:
        pytest.fail(f"{what} failed (exit {r.returncode}): {cmd}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    return r.stdout


def _copy_tracked_files(dest: Path) -> None:
    """The working tree's tracked files (what a clone of this commit plus local edits holds)."""
    names = _run(["git", "ls-files", "-z"], "listing the tracked files", cwd=ROOT).split("\0")
    for name in filter(None, names):
        if (ROOT / name).is_file():  # a tracked file deleted in the working tree is gone
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)  # copy2 keeps postBuild executable


@pytest.fixture(scope="module")
def binder(tmp_path_factory):
    """A copy of the repository set up as repo2docker would set it up."""
    tmp = tmp_path_factory.mktemp("binder")
    repo, venv, home = tmp / "repo", tmp / "venv", tmp / "home"
    _copy_tracked_files(repo)
    lines = (repo / "binder" / "requirements.txt").read_text(encoding="utf-8").splitlines()
    assert PYTORCH_INDEX in lines, "binder/requirements.txt changed: update PYTORCH_INDEX here"
    local = tmp / "requirements-local.txt"
    local.write_text("\n".join(line for line in lines if line != PYTORCH_INDEX) + "\n", encoding="utf-8")
    _run([sys.executable, "-m", "venv", venv], "python -m venv", env=_env())
    python = venv / "bin" / "python"
    # The user's own pip cache (HOME unchanged here), so a second run downloads nothing new.
    # --no-compile: Python compiles what the kernel imports when it imports it; pip would compile
    # every module of every package, most of which (much of torch) the chapter never imports
    _run([python, "-m", "pip", "install", "-q", "--no-compile", "-r", BASE, "-r", local],
         "building the Binder environment (pip needs PyPI; this test does not skip without it)",
         env=_env(), timeout=PIP_TIMEOUT)
    cache = _run([python, "-m", "pip", "cache", "dir"], "pip cache dir", env=_env()).strip()
    # From here on HOME and Jupyter's directories are in tmp: postBuild's jupytext-config
    # writes the user's JupyterLab settings, which must not touch the real ones.
    env = _env(PATH=f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}", VIRTUAL_ENV=str(venv),
               HOME=str(home), JUPYTER_CONFIG_DIR=str(home / ".jupyter"),
               JUPYTER_DATA_DIR=str(home / ".local/share/jupyter"),
               JUPYTER_RUNTIME_DIR=str(home / ".local/share/jupyter/runtime"), PIP_CACHE_DIR=cache)
    home.mkdir()
    _run([repo / "binder" / "postBuild"], "binder/postBuild", cwd=repo, env=env, timeout=PIP_TIMEOUT)
    yield {"tmp": tmp, "repo": repo, "venv": venv, "home": home, "env": env}
    # pytest keeps the last runs' tmp folders; without their 1.7 GB venvs (the logs stay).
    shutil.rmtree(venv, ignore_errors=True)


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


def test_binder_opens_a_chapter_as_a_notebook_and_runs_it(binder, server):
    model = _api(server, "GET", f"/api/contents/{CHAPTER}?type=notebook&content=1")
    assert model["type"] == "notebook", model["type"]
    cells = [_source(c) for c in model["content"]["cells"] if c["cell_type"] == "code"]
    expected = [c.source for c in jupytext.read(ROOT / CHAPTER, fmt="md:myst").cells if c.cell_type == "code"]
    assert cells and cells == expected, "the contents API's notebook is not the chapter's code"
    # The kernel starts in the chapter's folder, as when a reader opens the chapter in JupyterLab.
    kernel = _api(server, "POST", "/api/kernels", {"name": "python3", "path": str(Path(CHAPTER).parent)})
    try:
        probe = "import copylib, os, sys\nprint(copylib.__file__, os.getcwd(), sys.prefix, sep='\\n')"
        [where] = asyncio.run(_run_cells(server, kernel["id"], [probe]))
        module, cwd, prefix = (Path(p).resolve() for p in where.splitlines())
        repo = binder["repo"].resolve()
        assert module.is_relative_to(repo / "copylib"), f"copylib imported from {module}, not the copy's install"
        assert cwd == repo / "book" and prefix == binder["venv"].resolve(), (cwd, prefix)
        asyncio.run(_run_cells(server, kernel["id"], cells))
    finally:
        _api(server, "DELETE", f"/api/kernels/{kernel['id']}")
