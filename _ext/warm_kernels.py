"""Kernels forked from a process that has already imported the chapters' libraries.

Every chapter starts a fresh IPython kernel, and its first cell imports numpy,
scipy, torch and copylib: about two CPU-seconds per chapter, spent again in every
kernel. Here one *zygote* process per pool worker imports them once and then
forks a child for each kernel; the child runs ``ipykernel`` as
``python -m ipykernel_launcher -f <connection file>`` would, with the chapter's
working directory and environment, and finds those modules already imported
(copy-on-write pages of the zygote).

The zygote does nothing a fork could break: it runs no torch or BLAS operation
(no thread pools exist when it forks), opens no zmq context or event loop, and
imports matplotlib without a backend module (ipykernel's inline backend then
registers with the kernel's own shell, as in a fresh kernel).

:class:`WarmKernelManager` is nbclient's kernel manager with one change: its
provisioner asks the zygote for the kernel process instead of starting one.
The kernel is a child of the zygote, so the provisioner watches it by pid; it is
the leader of its own session (signals go to its process group, as jupyter_client
sends them) and exits when the zygote does (its parent poller).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import traceback

from jupyter_client.manager import AsyncKernelManager
from jupyter_client.provisioning import LocalProvisioner

# What the chapters' first cells import, and the kernel's own modules but ipykernel.kernelapp: its class
# body reads JPY_PARENT_PID from the environment, which is each kernel's own.
PRELOAD = ("numpy", "scipy.optimize", "scipy.special", "scipy.stats", "scipy.linalg", "torch",
           "matplotlib", "matplotlib.pyplot", "ipywidgets", "copylib", "ipykernel.ipkernel")
INLINE_BACKEND = "module://matplotlib_inline.backend_inline"


class Zygote:
    """A process that has imported :data:`PRELOAD` and forks a kernel on request."""

    def __init__(self):
        request_read, self._request = os.pipe()
        self._reply, reply_write = os.pipe()
        self.process = subprocess.Popen([sys.executable, __file__, str(request_read), str(reply_write)],
                                        pass_fds=(request_read, reply_write), stdin=subprocess.DEVNULL)
        os.close(request_read)
        os.close(reply_write)
        self._replies = os.fdopen(self._reply, "r")
        self._lock = threading.Lock()
        if self._replies.readline().strip() != "ready":
            raise RuntimeError(f"the kernel zygote did not start (exit code {self.process.wait()})")

    def fork(self, argv: list[str], cwd: str, env: dict[str, str]) -> int:
        """The pid of a new kernel process running ``argv`` (an ipykernel command line)."""
        if not forkable(argv):
            raise ValueError(f"a warm kernel runs `{sys.executable} -m ipykernel_launcher ...`, got {argv!r}")
        request = json.dumps({"argv": argv, "cwd": str(cwd), "env": dict(env)}) + "\n"
        with self._lock:
            os.write(self._request, request.encode())
            reply = self._replies.readline()
        if not reply:
            raise RuntimeError(f"the kernel zygote exited (exit code {self.process.wait()})")
        return int(reply)

    def close(self) -> None:
        os.close(self._request)
        self._replies.close()
        self.process.wait()


_zygote: Zygote | None = None


def zygote() -> Zygote:
    """This process's zygote, started on first use."""
    global _zygote
    if _zygote is None or _zygote.process.poll() is not None:
        _zygote = Zygote()
    return _zygote


class ForkedKernel:
    """The kernel process as jupyter_client's LocalProvisioner uses a Popen (it is not our child)."""

    stdin = stdout = stderr = None

    def __init__(self, pid: int):
        self.pid = pid
        self.returncode = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                os.kill(self.pid, 0)  # the zygote reaps its children: no zombie answers this
            except ProcessLookupError:
                self.returncode = 0  # the exit status went to the zygote
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(str(self.pid), timeout)
            time.sleep(0.02)
        return self.returncode

    def send_signal(self, signum: int) -> None:
        try:
            os.kill(self.pid, signum)
        except ProcessLookupError:
            pass

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)


def forkable(cmd: list[str]) -> bool:
    """Whether the zygote can stand in for ``cmd``: ipykernel run by this very interpreter (a kernel spec
    naming another Python, or another kernel, is launched as usual)."""
    if len(cmd) < 3 or cmd[1:3] != ["-m", "ipykernel_launcher"]:
        return False
    program = os.path.abspath(shutil.which(cmd[0]) or cmd[0])
    here = os.path.abspath(sys.executable)
    # The same folder too: two venvs of one Python link to the same file but see different packages.
    return (os.path.exists(program) and os.path.dirname(program) == os.path.dirname(here)
            and os.path.samefile(program, here))


class WarmProvisioner(LocalProvisioner):
    async def launch_kernel(self, cmd: list[str], **kwargs) -> dict:
        if not forkable(cmd):
            return await super().launch_kernel(cmd, **kwargs)
        self.cwd = kwargs.get("cwd") or os.getcwd()
        try:
            pid = zygote().fork(cmd, self.cwd, dict(kwargs.get("env") or os.environ))
        except (OSError, RuntimeError) as err:  # the chapter still runs, in a fresh kernel (tests fail on this)
            print(f"warm_kernels: no zygote ({err}); starting a fresh kernel", file=sys.stderr)
            return await super().launch_kernel(cmd, **kwargs)
        self.process = ForkedKernel(pid)
        self.pid = self.pgid = self.process.pid  # the kernel leads its own session
        return self.connection_info


class WarmKernelManager(AsyncKernelManager):
    """nbclient's kernel manager, with kernels forked from the zygote."""

    async def _async_pre_start_kernel(self, **kw):
        if self.provisioner is None:
            import uuid

            self.kernel_id = self.kernel_id or kw.pop("kernel_id", str(uuid.uuid4()))
            self.provisioner = WarmProvisioner(kernel_id=self.kernel_id, kernel_spec=self.kernel_spec, parent=self)
        return await super()._async_pre_start_kernel(**kw)


def _kernel(request: dict) -> None:
    """In the forked child: become the kernel ``request['argv']`` describes."""
    os.setsid()
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    os.environ["JPY_PARENT_PID"] = str(os.getppid())  # the kernel exits with the zygote
    import importlib.util

    # as `python -m ipykernel_launcher -f ...` sets it: the module's file, then the arguments
    sys.argv = [importlib.util.find_spec("ipykernel_launcher").origin, *request["argv"][3:]]
    from ipykernel import kernelapp

    kernelapp.launch_new_instance()


def serve(request_fd: int, reply_fd: int) -> None:
    """The zygote: import, then fork one kernel per request line until the requests end."""
    os.environ.setdefault("MPLBACKEND", INLINE_BACKEND)  # what ipykernel sets before a chapter imports pyplot
    import importlib

    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a kernel that imports it raises the error in the chapter's cell
            pass
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped at once, so a pid ends with its kernel
    requests = os.fdopen(request_fd, "r")
    replies = os.fdopen(reply_fd, "w", buffering=1)
    replies.write("ready\n")
    for line in requests:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            status = 0
            try:
                requests.close()
                replies.close()
                _kernel(request)
            except SystemExit as done:
                status = done.code if isinstance(done.code, int) else int(done.code is not None)
            except BaseException:  # noqa: B036 - the child must never return into the zygote's loop
                traceback.print_exc()
                status = 1
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(status)
        replies.write(f"{pid}\n")


if __name__ == "__main__":
    sys.path.pop(0)  # this file's folder: the kernel's sys.path starts as a fresh kernel's does
    serve(int(sys.argv[1]), int(sys.argv[2]))
