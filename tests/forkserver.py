"""A fork server for tests that run the ``graphmatch`` command as a process of its own: each command
is a real process (its own pid, signals, exit status, standard streams), forked from a server
that has imported the third-party packages every command imports (torch, PyG, Lightning: about
5 CPU-seconds a process, most of a short command's cost), so that only graphmatch itself is
imported afresh by each command.

``python forkserver.py SOCKET`` imports only :data:`PRELOAD`, never graphmatch, and listens on the
Unix socket ``SOCKET``. A client sends the command's arguments, working folder, environment and
how it is started with its standard streams (file descriptors 0, 1 and 2); the server forks, and
the child takes them over, puts the request's ``PYTHONPATH`` (and for ``python -m``, its working
folder) in front of ``sys.path`` and runs the command as the interpreter would: ``"entry"`` as
the installed ``graphmatch`` script (``graphmatch.cli.main.entry``), ``"module"`` as ``python -m
graphmatch.cli.main ARGS``, ``"code"`` as ``python -c CODE``. The server answers ``pid N`` at
once and, when the child has ended, ``exit CODE CPU`` (the status as :class:`subprocess.Popen`
reports it, negative for a signal, and the child's CPU seconds). The server stops when its parent
is gone.

Clients: :func:`run` (a command to its end, with this process's streams: ``tests/doc_shim.py``)
and :class:`Forked` (:class:`subprocess.Popen`'s interface: ``tests/engine``).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path

PRELOAD = ("torch", "torch_geometric", "lightning")
MESSAGE = 1 << 20
HERE = os.path.dirname(os.path.abspath(__file__))


def _request(path: str | os.PathLike, args: Sequence[str], cwd: str, env: Mapping[str, str], how: str,
             fds: Sequence[int]) -> tuple[socket.socket, int]:
    """Send a command to the server at ``path`` with ``fds`` as its streams 0, 1, 2: the connection
    (whose next message is the exit) and the child's pid."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        conn.connect(str(path))
        message = json.dumps({"args": list(args), "cwd": cwd, "env": dict(env), "how": how}).encode()
        socket.send_fds(conn, [message], list(fds))
        reply = conn.recv(64).split()
        if reply[:1] != [b"pid"]:
            raise OSError(f"the fork server at {path} started nothing ({reply!r})")
        return conn, int(reply[1])
    except BaseException:
        conn.close()
        raise


def _exit(reply: bytes) -> tuple[int, float]:
    parts = reply.split()
    return (int(parts[1]), float(parts[2])) if parts[:1] == [b"exit"] else (1, 0.0)


def run(path: str | os.PathLike, args: list[str]) -> tuple[int, float]:
    """``graphmatch ARGS`` (the installed script) in a child of the server at ``path``, with this
    process's folder, environment and standard streams; its exit status and CPU seconds."""
    conn, _ = _request(path, args, os.getcwd(), os.environ, "entry", [0, 1, 2])
    with conn:
        return _exit(conn.recv(64))


class Forked:
    """``python -m graphmatch.cli.main ARGS`` (``how="code"``: ``python -c ARGS[0]``) forked by the
    server at ``path``, with :class:`subprocess.Popen`'s interface (text pipes for stdout and
    stderr, stdin empty): ``pid``, ``stdout``, ``stderr``, ``returncode``, :meth:`poll`,
    :meth:`wait`, :meth:`communicate`, :meth:`send_signal`, :meth:`kill`."""

    def __init__(self, path: str | os.PathLike, args: Sequence[str], env: Mapping[str, str] | None = None,
                 cwd: str | os.PathLike | None = None, how: str = "module"):
        self.args = list(args)
        out, err = os.pipe(), os.pipe()
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            self._conn, self.pid = _request(path, self.args, os.fspath(cwd or os.getcwd()),
                                            os.environ if env is None else env, how, [null, out[1], err[1]])
        finally:
            for fd in (null, out[1], err[1]):
                os.close(fd)
        self.stdout = open(out[0], encoding="utf-8", errors="replace")  # noqa: SIM115 - closed by communicate
        self.stderr = open(err[0], encoding="utf-8", errors="replace")  # noqa: SIM115
        self.returncode: int | None = None
        self.cpu = 0.0

    def _ended(self, timeout: float | None) -> int | None:
        if self.returncode is None:
            self._conn.settimeout(timeout)
            try:
                reply = self._conn.recv(64)
            except (TimeoutError, BlockingIOError):
                return None
            self.returncode, self.cpu = _exit(reply)
            self._conn.close()
        return self.returncode

    def poll(self) -> int | None:
        return self._ended(0)

    def wait(self, timeout: float | None = None) -> int:
        code = self._ended(timeout)
        if code is None:
            raise subprocess.TimeoutExpired(self.args, timeout)
        return code

    def communicate(self, timeout: float | None = None) -> tuple[str, str]:
        """Everything the command writes to stdout and stderr, once it has ended."""
        read: dict[str, str] = {}
        readers = [threading.Thread(target=lambda name=name: read.__setitem__(name, getattr(self, name).read()),
                                    daemon=True) for name in ("stdout", "stderr")]
        for reader in readers:
            reader.start()
        self.wait(timeout)
        for reader in readers:
            reader.join(timeout)
            if reader.is_alive():
                raise subprocess.TimeoutExpired(self.args, timeout)
        self.stdout.close()
        self.stderr.close()
        return read["stdout"], read["stderr"]

    def send_signal(self, signum: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, signum)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def forked_run(path: str | os.PathLike, args: Sequence[str], env: Mapping[str, str] | None = None,
               cwd: str | os.PathLike | None = None, timeout: float | None = None,
               how: str = "module") -> subprocess.CompletedProcess:
    """:func:`subprocess.run` with ``capture_output=True, text=True`` for a :class:`Forked` command."""
    proc = Forked(path, args, env, cwd, how)
    out, err = proc.communicate(timeout)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _child(request: dict, fds: list[int], base_path: list[str]) -> None:
    code = 1
    try:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        given = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        first = {"module": [os.getcwd()], "code": [""]}.get(request["how"], [])
        sys.path[:] = first + given + base_path
        if "OMP_NUM_THREADS" in os.environ:  # read once by the OpenMP runtime torch loaded in the server
            import torch

            torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
        try:
            if request["how"] == "module":
                import runpy

                sys.argv = ["-m", *request["args"]]
                runpy.run_module("graphmatch.cli.main", run_name="__main__", alter_sys=True)
                code = 0
            elif request["how"] == "code":
                import types

                sys.argv = ["-c"]
                sys.modules["__main__"] = main = types.ModuleType("__main__")  # not the server's script
                exec(compile(request["args"][0], "<string>", "exec"), vars(main))  # noqa: S102
                code = 0
            else:
                from graphmatch.cli.main import entry

                sys.argv = ["graphmatch", *request["args"]]
                result = entry()
                code = result if isinstance(result, int) else 0
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
            if not isinstance(stop.code, int | None):
                print(stop.code, file=sys.stderr)
        except KeyboardInterrupt:  # as the interpreter ends on one: the traceback, then death by SIGINT
            traceback.print_exc()
            code = -signal.SIGINT
        atexit._run_exitfuncs()
    except BaseException:  # noqa: BLE001 - the command's crash, reported as the interpreter would
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        if code < 0:
            signal.signal(-code, signal.SIG_DFL)
            os.kill(os.getpid(), -code)
        os._exit(code)


def _reap(conn: socket.socket, pid: int) -> None:
    """Wait for the child ``pid`` and send its exit status and CPU seconds on ``conn``."""
    with conn:
        _, status, usage = os.wait4(pid, 0)
        with contextlib.suppress(OSError):
            conn.send(f"exit {os.waitstatus_to_exitcode(status)} {usage.ru_utime + usage.ru_stime:.2f}".encode())


def serve(path: str) -> None:
    """Import :data:`PRELOAD`, then fork one child per request on ``path`` until the parent is gone."""
    import importlib

    own = {p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p} | {HERE}
    base_path = [p for p in sys.path if p not in own]  # the interpreter's own: a request adds its PYTHONPATH
    sys.path[:] = base_path
    for name in PRELOAD:
        importlib.import_module(name)
    parent = os.getppid()
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as server:
        server.bind(path)
        server.listen(16)
        server.settimeout(5)
        print("ready", flush=True)
        while os.getppid() == parent:
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            conn.settimeout(None)
            message, fds, _, _ = socket.recv_fds(conn, MESSAGE, 3)
            pid = os.fork()
            if pid == 0:
                server.close()
                conn.close()
                _child(json.loads(message), fds, base_path)
            for fd in fds:
                os.close(fd)
            conn.send(f"pid {pid}".encode())
            threading.Thread(target=_reap, args=(conn, pid), daemon=True).start()


def start(python: str | os.PathLike, socket_path: Path, env: Mapping[str, str], log: Path) -> subprocess.Popen:
    """The server at ``socket_path``, run by ``python`` with ``env`` (its stderr in ``log``), once ready."""
    socket_path.unlink(missing_ok=True)
    with open(log, "w") as stderr:
        server = subprocess.Popen([os.fspath(python), os.path.join(HERE, "forkserver.py"), str(socket_path)],
                                  cwd=socket_path.parent, env=dict(env), stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=stderr, text=True)
    if server.stdout.readline().strip() != "ready":
        server.kill()
        raise RuntimeError(f"the fork server did not start: {log.read_text()}")
    return server


if __name__ == "__main__":
    serve(sys.argv[1])
