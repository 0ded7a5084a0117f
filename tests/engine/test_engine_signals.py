"""A real ``graphmatch train`` process stopped by SIGTERM or SIGINT: one line, exit 128 + the
signal's number, a resumable ``last.ckpt``, and ``--resume`` ends as an uninterrupted run."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from engine_helpers import HERE, TOY

from graphmatch.engine import train
from graphmatch.engine.checkpoint import read_checkpoint

ROOT = HERE.parents[1]
SETS = ["model.dropout=0.3", "train.epochs=3", "train.threads=1"]


def read_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_saves_a_checkpoint_and_resume_finishes_the_run(tmp_path: Path, signum: int) -> None:
    straight = train(TOY, SETS, tmp_path / "straight")
    broken = tmp_path / "broken"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(HERE)]), "TOY_STEP_DELAY": "0.15"}
    proc = subprocess.Popen([sys.executable, "-m", "graphmatch.cli.main", "train", str(TOY), "--out", str(broken),
                             "--set", *SETS], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (broken / "last.ckpt").is_file() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)  # the end of epoch 1 (8 steps) writes the first checkpoint
    assert proc.poll() is None, "the run ended before it could be stopped"
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signum, err
    name = signal.Signals(signum).name
    lines = err.strip().splitlines()
    assert re.fullmatch(rf"graphmatch train: stopped by {name} at epoch \d step (\d+); resume with: "
                        rf"graphmatch train --resume {re.escape(str(broken))}", lines[-1]), err
    step = int(re.search(r"step (\d+)", lines[-1]).group(1))
    assert 8 <= step < 24 and read_checkpoint(broken / "last.ckpt")["global_step"] == step
    assert not (broken / "COMPLETE").exists() and not (broken / "metrics.json").exists()

    assert train(resume=broken) == broken
    a, b = read_json(straight / "metrics.json"), read_json(broken / "metrics.json")
    for key in ("dev", "test", "best_step", "epochs", "steps"):
        assert a[key] == b[key], key
    assert read_json(straight / "history.json") == read_json(broken / "history.json")
