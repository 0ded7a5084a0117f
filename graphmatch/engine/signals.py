"""Stopping a training run cleanly when a scheduler (SIGTERM) or a user (SIGINT, Ctrl-C) says
stop: the signal handler only sets a flag; at the next step boundary :class:`StopOnSignal`
saves a resumable ``last.ckpt`` through the trainer and raises :class:`TrainingStopped`, which
the command line reports in one line and exits with :math:`128 + \\text{signal number}`."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lightning.pytorch as pl
from lightning.pytorch.callbacks import Callback

#: the signals a run stops on
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class TrainingStopped(Exception):
    """Training stopped on a signal after saving a resumable checkpoint in ``run_dir``."""

    def __init__(self, signum: int, epoch: int, step: int, run_dir: Path):
        super().__init__()
        self.signum, self.epoch, self.step, self.run_dir = signum, epoch, step, run_dir

    @property
    def exit_status(self) -> int:
        """What a shell reports for a process killed by the signal: 128 + its number."""
        return 128 + self.signum

    def __str__(self) -> str:
        return (f"stopped by {signal.Signals(self.signum).name} at epoch {self.epoch} step {self.step}; "
                f"resume with: graphmatch train --resume {self.run_dir}")


class StopOnSignal(Callback):
    """Saves ``run_dir/last.ckpt`` and stops at the end of the training step during which a
    signal of :data:`STOP_SIGNALS` arrived (:meth:`catching` installs the handlers)."""

    def __init__(self, run_dir: Path):
        self.run_dir = Path(run_dir)
        self.received: int | None = None

    @contextlib.contextmanager
    def catching(self) -> Iterator[None]:
        """While the block runs, a stop signal only sets :attr:`received` (main thread only; the
        previous handlers come back afterwards)."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {s: signal.getsignal(s) for s in STOP_SIGNALS}

        def handler(signum: int, frame: Any) -> None:
            self.received = signum

        for s in STOP_SIGNALS:
            signal.signal(s, handler)
        try:
            yield
        finally:
            for s, h in previous.items():
                signal.signal(s, h)

    def on_train_batch_end(self, trainer: pl.Trainer, module: pl.LightningModule, *args: Any) -> None:
        if self.received is None:
            return
        trainer.save_checkpoint(self.run_dir / "last.ckpt")
        raise TrainingStopped(self.received, trainer.current_epoch + 1, trainer.global_step, self.run_dir)
