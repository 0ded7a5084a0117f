"""Data-parallel training with Lightning's DDP strategy: two gloo processes on the CPU, launched
through the command line; the figures are those of the full dev and test sets."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import toy_task  # noqa: F401 - registers the toy task (a run folder's task imports no module)
from engine_helpers import HERE, TOY

from graphmatch.engine import evaluate
from graphmatch.metrics import accuracy

REPO = HERE.parents[1]


@pytest.mark.slow
def test_two_process_ddp_on_cpu(tmp_path: Path) -> None:
    run = tmp_path / "ddp"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(HERE)])}
    for var in ("LOCAL_RANK", "NODE_RANK", "RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(var, None)
    sets = ["train.accelerator=cpu", "train.devices=2", "train.strategy=ddp", "train.threads=1", "train.epochs=2"]
    cmd = [sys.executable, "-m", "graphmatch.cli.main", "train", str(TOY), "--set", *sets, "--out", str(run)]
    proc = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.count("run folder:") == 1  # only rank 0 reports

    metrics = json.loads((run / "metrics.json").read_text())
    assert "DDPStrategy" in metrics["device"] and metrics["device"].startswith("2x")
    assert metrics["steps"] == 2 * 4  # 128 samples, 2 processes × batch 16 → 4 steps an epoch
    for split in ("dev", "test"):
        rows = [json.loads(line) for line in (run / f"predictions_{split}.jsonl").read_text().splitlines()]
        assert [r["index"] for r in rows] == list(range(64))  # every sample once, none padded in
        assert accuracy(rows) == pytest.approx(metrics[split]["accuracy"])
    # one process evaluating the selected checkpoint finds the same figures
    assert evaluate(run, "dev") == pytest.approx(metrics["dev"])
    assert evaluate(run, "test") == pytest.approx(metrics["test"])
