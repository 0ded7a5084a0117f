"""Fixtures of the engine tests: one trained toy run shared by several tests, and ``graphmatch``
commands forked from a server that has imported the heavy packages once."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import forkserver
import pytest
from engine_helpers import TOY, Recorder


@pytest.fixture(scope="session")
def trained_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Recorder]:
    """One complete toy run (4 epochs) and what the recorder saw while it trained."""
    from graphmatch.engine import train

    recorder = Recorder()
    run_dir = train(TOY, [], tmp_path_factory.mktemp("runs") / "toy", callbacks=[recorder])
    return run_dir, recorder


@pytest.fixture(scope="session")
def command(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Command]:
    """``graphmatch`` commands as processes of their own, forked from this worker's fork server
    (``tests/forkserver.py``), which has imported torch, PyG and Lightning once: ``command(args,
    env)`` is ``subprocess.Popen([sys.executable, "-m", "graphmatch.cli.main", *args], env=env,
    stdout=PIPE, stderr=PIPE, text=True)``, ``command.run(args, env, cwd, timeout)`` its
    :func:`subprocess.run` with ``capture_output=True``."""
    folder = tmp_path_factory.mktemp("forkserver")
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    server = forkserver.start(sys.executable, folder / "server.sock", env, folder / "server.log")
    try:
        yield Command(folder / "server.sock")
    finally:
        server.terminate()
        server.wait(timeout=30)


class Command:
    """Starts ``graphmatch`` commands through the fork server at ``path`` (the :func:`command` fixture)."""

    def __init__(self, path: Path):
        self.path = path

    def __call__(self, args: Sequence[str], env: Mapping[str, str] | None = None) -> forkserver.Forked:
        return forkserver.Forked(self.path, args, env)

    def run(self, args: Sequence[str], env: Mapping[str, str] | None = None, cwd: Path | None = None,
            timeout: float | None = None, how: str = "module") -> subprocess.CompletedProcess:
        return forkserver.forked_run(self.path, args, env, cwd, timeout, how)
