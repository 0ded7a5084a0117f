"""Shared helpers of the engine tests: the toy recipes and two Lightning callbacks."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import lightning.pytorch as pl

HERE = Path(__file__).resolve().parent
TOY = HERE / "toy.yaml"
TOY_QUICK = HERE / "toy_quick.yaml"


class Crash(pl.Callback):
    """Simulates a crash at the start of epoch ``at_epoch`` (0-based)."""

    def __init__(self, at_epoch: int):
        self.at_epoch = at_epoch

    def on_train_epoch_start(self, trainer: pl.Trainer, module: pl.LightningModule) -> None:
        if trainer.current_epoch == self.at_epoch:
            raise RuntimeError(f"simulated crash at epoch {self.at_epoch}")


class Recorder(pl.Callback):
    """Records the learning rate of every parameter group at every step, and test evaluations."""

    def __init__(self) -> None:
        self.lrs: list[dict[str, float]] = []
        self.tests = 0
        self.fn_at_test: list[str] = []

    def on_train_batch_start(self, trainer: pl.Trainer, module: pl.LightningModule, batch: Any, idx: int) -> None:
        self.lrs.append({g["name"]: g["lr"] for g in trainer.optimizers[0].param_groups})

    def on_test_epoch_start(self, trainer: pl.Trainer, module: pl.LightningModule) -> None:
        self.tests += 1
        self.fn_at_test.append(trainer.state.fn.value)


class Terminal(io.StringIO):
    """A stderr that says it is a terminal (progress bars are drawn only there)."""

    def isatty(self) -> bool:
        return True


def predict_json(capsys: Any, *args: str) -> tuple[int, str, str]:
    """``graphmatch predict ARGS --json`` in this process: its exit code, stdout and stderr."""
    from graphmatch.cli.main import main

    capsys.readouterr()
    code = main(["predict", *args, "--json"])
    out, err = capsys.readouterr()
    return code, out, err
