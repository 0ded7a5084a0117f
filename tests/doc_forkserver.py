"""A fork server for ``tests/test_doc_commands.py``: each documented ``graphmatch`` command runs
in a process of its own, from the wheel's venv, in the doc's folder, with the block's
environment and standard streams, but without paying again for the third-party start-up that
is the same for every command (torch, PyG and Lightning: about 7 CPU-seconds each time, most
of a shortened command's cost).

``python doc_forkserver.py SOCKET`` (the venv's python) imports only those third-party packages,
never graphmatch, and listens on the Unix socket ``SOCKET``. A client (:func:`run`, called by
``tests/doc_shim.py``) sends its arguments, working folder and environment with its file
descriptors 0, 1 and 2; the server forks, and the child takes them over, imports graphmatch
from the wheel afresh and runs ``graphmatch.cli.main.entry``; the client gets the exit code
and CPU time (1 if the child died without one). The server stops when its parent (the test worker) is gone.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import signal
import socket
import sys
import traceback

#: what every command imports first and the server imports once
PRELOAD = ("torch", "torch_geometric", "lightning")
MESSAGE = 1 << 20


def run(path: str, args: list[str]) -> tuple[int, float]:
    """``graphmatch ARGS`` in a child of the server at ``path``, with this process's folder,
    environment and standard streams; its exit code and CPU seconds."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as conn:
        conn.connect(path)
        message = json.dumps({"args": args, "cwd": os.getcwd(), "env": dict(os.environ)}).encode()
        socket.send_fds(conn, [message], [0, 1, 2])
        reply = conn.recv(64).split()
    return (int(reply[0]), float(reply[1])) if reply else (1, 0.0)


def _child(conn: socket.socket, request: dict, fds: list[int]) -> None:
    code = 1
    try:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = ["graphmatch", *request["args"]]
        try:
            from graphmatch.cli.main import entry

            result = entry()
            code = result if isinstance(result, int) else 0
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
            if not isinstance(stop.code, int | None):
                print(stop.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 - the command's crash, reported as a traceback would be
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        try:
            usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
            conn.send(f"{code} {sum(u.ru_utime + u.ru_stime for u in usage):.2f}".encode())
        finally:
            os._exit(code)


def serve(path: str) -> None:
    """Import :data:`PRELOAD`, then fork one child per request on ``path`` until the parent is gone."""
    import importlib

    sys.path.remove(os.path.dirname(os.path.abspath(__file__)))  # the checkout's tests/: not a user's path
    for name in PRELOAD:
        importlib.import_module(name)
    parent = os.getppid()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the system
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
            with conn:
                conn.settimeout(None)
                message, fds, _, _ = socket.recv_fds(conn, MESSAGE, 3)
                if os.fork() == 0:
                    server.close()
                    _child(conn, json.loads(message), fds)
                for fd in fds:
                    os.close(fd)


if __name__ == "__main__":
    serve(sys.argv[1])
