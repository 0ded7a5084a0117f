"""The test suite's fork server (``tests/forkserver.py``) runs a command as the interpreter would:
the same output and exit status as ``python -m graphmatch.cli.main``, the process's real pid, a
death by a signal reported as :class:`subprocess.Popen` reports it, ``PYTHONPATH`` and the working
folder honoured."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from engine_helpers import HERE, TOY

ROOT = HERE.parents[1]


@pytest.mark.parametrize("args", [["--version"], ["train", "no/such/recipe"], ["evaluate"]])
def test_a_forked_command_ends_as_the_real_one(args: list[str], command, tmp_path: Path) -> None:
    real = subprocess.run([sys.executable, "-m", "graphmatch.cli.main", *args], capture_output=True, text=True,
                          cwd=tmp_path, timeout=300)
    forked = command.run(args, cwd=tmp_path, timeout=300)
    assert (forked.returncode, forked.stdout, forked.stderr) == (real.returncode, real.stdout, real.stderr)
    assert forked.returncode == (0 if args == ["--version"] else 2)


def test_python_c_code_runs_as_the_interpreter_runs_it(command, tmp_path: Path) -> None:
    code = ("import dataclasses, json, os, sys\n@dataclasses.dataclass\nclass Row:\n    n: int\n"
            "print(json.dumps([__name__, sys.argv, sys.path[0], os.getcwd(), dataclasses.asdict(Row(1)), "
            "'__file__' in globals(), sorted(k for k in globals() if not k.startswith('__'))]))\n"
            "sys.exit(3)")
    real = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    forked = command.run([code], cwd=tmp_path, timeout=60, how="code")
    assert (forked.returncode, forked.stdout, forked.stderr) == (real.returncode, real.stdout, real.stderr) == (
        3, real.stdout, "")
    assert '"__main__", ["-c"], ""' in forked.stdout and '["Row", "dataclasses", "json", "os", "sys"]' in forked.stdout


def test_a_forked_command_is_a_process_of_its_own(command, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(HERE)]), "TOY_STEP_DELAY": "5"}
    proc = command(["train", str(TOY), "--out", str(tmp_path / "run")], env)
    assert proc.pid != os.getpid() and proc.poll() is None
    os.kill(proc.pid, 0)  # a live process with that pid
    deadline = time.monotonic() + 120
    while not (tmp_path / "run" / "config.yaml").is_file() and time.monotonic() < deadline:  # toy_task found
        time.sleep(0.05)
    proc.kill()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL and (tmp_path / "run" / "config.yaml").is_file(), err
    with pytest.raises(ProcessLookupError):
        os.kill(proc.pid, 0)  # reaped by the server
    slow = command(["train", str(TOY), "--out", str(tmp_path / "slow")], env)
    with pytest.raises(subprocess.TimeoutExpired):
        slow.wait(timeout=0.5)
    slow.send_signal(signal.SIGTERM)
    assert slow.wait(timeout=60) in (-signal.SIGTERM, 128 + signal.SIGTERM)  # before or after the CLI took SIGTERM
