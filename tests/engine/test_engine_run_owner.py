"""One owner per run folder: two trainings started at once on one ``--out`` never both run, a
second training of a claimed folder is one line naming the owner and writes nothing, and the
claim a killed run leaves is taken over by ``--resume``."""

from __future__ import annotations

import json
import multiprocessing
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from engine_helpers import HERE, TOY_QUICK

from graphmatch.cli.main import main
from graphmatch.engine.runs import owner as run_owner
from graphmatch.engine.runs import read_yaml
from graphmatch.engine.runs.owner import OWNER_FILE, FolderInUse, claim

ROOT = HERE.parents[1]
FORK = multiprocessing.get_context("fork")


def at_once(task: Callable[[int], int], logs: list[Path]) -> list[int]:
    """Run ``task(0)``, ``task(1)``, ... each in a forked process, all released at the same moment
    and all alive until every one has finished; their exit codes (process ``i``'s stdout and
    stderr go to ``logs[i]``)."""
    barrier, finished = FORK.Barrier(len(logs)), FORK.Barrier(len(logs))
    pids = []
    for i, log in enumerate(logs):
        pid = os.fork()
        if pid == 0:  # the child
            code = 1
            try:
                with open(log, "w", buffering=1, encoding="utf-8") as out:
                    sys.stdout = sys.stderr = out
                    barrier.wait()
                    code = task(i)
                    finished.wait()
            finally:
                os._exit(code)
        pids.append(pid)
    return [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in pids]


def dead_pid() -> int:
    """The pid of a process that has exited."""
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(proc.stdout)


def test_claims_made_at_once_have_one_winner(tmp_path: Path) -> None:
    for round_ in range(25):
        folder = tmp_path / f"r{round_}" / "run"  # missing, parents too: made by whoever comes first
        logs = [tmp_path / f"r{round_}-{i}.log" for i in range(4)]

        def take(i: int, folder: Path = folder) -> int:
            try:
                claim(folder)
            except FolderInUse as err:
                print(err)
                return 2
            print(os.getpid())
            return 0

        codes = at_once(take, logs)
        assert sorted(codes) == [0, 2, 2, 2], codes
        winner = int(logs[codes.index(0)].read_text())
        assert json.loads((folder / OWNER_FILE).read_text())["pid"] == winner  # the winner's claim is kept
        for log, code in zip(logs, codes, strict=True):
            if code == 2:
                assert f"is in use by another training (pid {winner} on {socket.gethostname()}" in log.read_text()


def test_two_trainings_at_once_on_one_folder(tmp_path: Path) -> None:
    """What a scheduler launching an array does: the same --out, started together, many times."""
    for round_ in range(10):
        run = tmp_path / f"run{round_}"
        logs = [tmp_path / f"{round_}-{i}.log" for i in range(2)]

        def start(i: int, run: Path = run) -> int:  # run i: seed i + 1, i + 1 epochs
            return main(["train", str(TOY_QUICK), "--out", str(run), "--set", f"train.seed={i + 1}",
                         f"train.epochs={i + 1}"])

        codes = at_once(start, logs)
        assert sorted(codes) == [0, 2], (codes, [log.read_text() for log in logs])
        won, lost = codes.index(0), codes.index(2)
        refusal = logs[lost].read_text().splitlines()
        assert len(refusal) == 1 and refusal[0].startswith(f"graphmatch train: error: run folder {run} is in use by")
        config = read_yaml(run / "config.yaml")["train"]
        assert (config["seed"], config["epochs"]) == (won + 1, won + 1)  # one run's folder, whole
        history = json.loads((run / "history.json").read_text())
        assert max(row["epoch"] for row in history) == won + 1
        assert (run / "COMPLETE").is_file() and not (run / OWNER_FILE).exists()  # given back at the end


def test_two_commands_at_once(tmp_path: Path, command) -> None:
    """The same through the ``graphmatch`` command, as two separate processes."""
    run = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(HERE)]), "OMP_NUM_THREADS": "1"}
    cmd = ["train", str(TOY_QUICK), "--out", str(run), "--set"]
    procs = [command([*cmd, f"train.seed={seed}", "train.epochs=1"], env) for seed in (1, 2)]
    outs = [(p.wait(timeout=300), p.stderr.read()) for p in procs]
    assert sorted(code for code, _ in outs) == [0, 2], outs
    refused = next(err for code, err in outs if code == 2)
    winner = procs[[code for code, _ in outs].index(0)]
    # started together, but each spends seconds importing: on a loaded machine the winner may have
    # finished before the other looks, which then refuses a finished folder (the forked test above
    # releases both at one moment, so there the claim always decides)
    assert refused.strip().splitlines()[-1].startswith((
        f"graphmatch train: error: run folder {run} is in use by another training (pid {winner.pid} on ",
        f"graphmatch train: error: run folder {run} already exists")), refused
    assert read_yaml(run / "config.yaml")["train"]["seed"] == [1, 2][procs.index(winner)]


def test_a_running_owner_is_named_and_nothing_is_written(tmp_path: Path, capsys) -> None:
    run = tmp_path / "run"
    assert main(["train", str(TOY_QUICK), "--out", str(run), "--set", "train.epochs=1"]) == 0
    capsys.readouterr()
    (run / "COMPLETE").unlink()  # as if it were still running: its last checkpoint is being written
    owner = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        claim_text = json.dumps({"pid": owner.pid, "host": socket.gethostname(), "started": "2024-05-01T10:00:00+00:00",
                                 "tick": run_owner._start_tick(owner.pid)})
        (run / OWNER_FILE).write_text(claim_text)
        before = {p.name: p.stat().st_mtime_ns for p in run.iterdir()}
        for argv in (["train", str(TOY_QUICK), "--out", str(run)], ["train", "--resume", str(run)]):
            assert main(argv) == 2
            err = capsys.readouterr().err.splitlines()
            assert err == [f"graphmatch train: error: run folder {run} is in use by another training (pid {owner.pid} "
                           f"on {socket.gethostname()}, started 2024-05-01T10:00:00+00:00); wait for it to finish, "
                           f"or choose another --out (it resumes with --resume {run})"]
            assert {p.name: p.stat().st_mtime_ns for p in run.iterdir()} == before
        assert (run / OWNER_FILE).read_text() == claim_text
    finally:
        owner.kill()
        owner.wait()


def test_a_claim_from_another_host_is_respected(tmp_path: Path, capsys) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / OWNER_FILE).write_text(json.dumps({"pid": dead_pid(), "host": "node-17", "started": "then"}))
    assert main(["train", str(TOY_QUICK), "--out", str(run)]) == 2
    err = capsys.readouterr().err
    assert f"on node-17, started then); if that run is no longer running, remove {run / OWNER_FILE}" in err
    assert sorted(p.name for p in run.iterdir()) == [OWNER_FILE]


@pytest.mark.parametrize("claim_text", ["stale", "reused", "unreadable"])
def test_a_killed_runs_claim_is_taken_over_by_resume(tmp_path: Path, capsys, claim_text: str) -> None:
    run = tmp_path / "run"
    assert main(["train", str(TOY_QUICK), "--out", str(run), "--set", "train.epochs=1"]) == 0
    expected = json.loads((run / "metrics.json").read_text())["test"]
    for name in ("COMPLETE", "metrics.json", "summary.md"):  # killed after its last checkpoint
        (run / name).unlink()
    capsys.readouterr()
    pid = {"stale": dead_pid(), "reused": os.getpid(), "unreadable": 0}[claim_text]
    text = json.dumps({"pid": pid, "host": socket.gethostname(), "started": "2024-05-01T10:00:00+00:00",
                       "tick": -1 if claim_text == "reused" else None})  # this pid, but a process started before
    (run / OWNER_FILE).write_text(text if claim_text != "unreadable" else '{"pid": 12')  # killed while writing it
    assert main(["train", str(TOY_QUICK), "--out", str(run)]) == 2  # a new run: the folder is not free
    assert "already exists and is not empty" in capsys.readouterr().err
    (run / OWNER_FILE).write_text(text if claim_text != "unreadable" else '{"pid": 12')
    assert main(["train", "--resume", str(run)]) == 0
    err = capsys.readouterr().err
    if claim_text != "unreadable":
        assert f"warning: run folder {run} was claimed by pid {pid}, started 2024-05-01T10:00:00+00:00, which no " \
               "longer runs; this run takes it over" in err
    assert json.loads((run / "metrics.json").read_text())["test"] == expected
    assert (run / "COMPLETE").is_file() and not (run / OWNER_FILE).exists()


def test_a_claim_is_given_back_whatever_happens(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "deep" / "bad"  # fails on its data: the claim and the folders it made go
    assert main(["train", str(TOY_QUICK), "--out", str(bad), "--set", "data.file=toy/missing.tsv",
                 f"data.root={tmp_path}"]) == 2
    assert "toy/missing.tsv" in capsys.readouterr().err and not (tmp_path / "deep").exists()
    mine = tmp_path / "mine"
    mine.mkdir()  # a folder the user made stays
    assert main(["train", str(TOY_QUICK), "--out", str(mine), "--set", "data.file=toy/missing.tsv",
                 f"data.root={tmp_path}"]) == 2
    assert mine.is_dir() and not any(mine.iterdir())
