"""The callbacks of every training run besides checkpoints and signals: a dev evaluation after
the last step (:class:`EvaluateLastStep`) and, with the progress bars off, one line per epoch on
stderr (:class:`EpochLines`)."""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

import lightning.pytorch as pl
from lightning.pytorch.callbacks import Callback


class EvaluateLastStep(Callback):
    """Makes the last training step (``train.epochs`` or ``train.max_steps``, whichever ends the
    run) a dev evaluation, whatever ``train.val_every_steps`` is: the steps after the last regular
    evaluation can be selected too. Lightning evaluates after a step that sets ``should_stop``;
    at the last step the run ends anyway, so nothing else changes."""

    def __init__(self, total_steps: int):
        self.total_steps = total_steps

    def on_train_batch_end(self, trainer: pl.Trainer, module: pl.LightningModule, *args: Any) -> None:
        if trainer.global_step >= self.total_steps:
            trainer.should_stop = True


class EpochLines(Callback):
    """One line per epoch, on ``stream`` (stderr) from the first process: the epoch, the latest
    dev ``monitor`` with the best so far, the mean training loss of that evaluation, and the
    epoch's time (its dev evaluation included) with the total so far."""

    def __init__(self, monitor: str, epochs: int, stream: TextIO | None = None):
        self.monitor, self.epochs = monitor, epochs
        self.stream = stream
        self._start = time.monotonic()
        #: the step the selecting checkpoint callback took as the best in this process (``None``:
        #: none yet, the best of the history is shown, as a callback restored with it selects)
        self.best_step: int | None = None
        self._score: Any = None
        self._validated_at: int | None = None

    def on_train_start(self, trainer: pl.Trainer, module: pl.LightningModule) -> None:
        self._score = getattr(trainer.checkpoint_callback, "best_model_score", None)  # restored, or None

    def on_validation_end(self, trainer: pl.Trainer, module: pl.LightningModule) -> None:
        self._validated_at = trainer.global_step

    def _follow_selection(self, trainer: pl.Trainer) -> None:
        """A new best of the selecting callback (which Lightning runs after the other callbacks)
        is the step of the last dev evaluation: a run continued into a new folder selects among its
        own steps, as ``metrics.json``'s ``best_step`` says."""
        score = getattr(trainer.checkpoint_callback, "best_model_score", None)
        if score is not None and score is not self._score and self._validated_at is not None:
            self.best_step, self._score = self._validated_at, score

    def on_validation_start(self, trainer: pl.Trainer, module: pl.LightningModule) -> None:
        self._follow_selection(trainer)

    def on_train_epoch_start(self, trainer: pl.Trainer, module: pl.LightningModule) -> None:
        self._start = time.monotonic()

    def line(self, epoch: int, step: int, history: list[dict[str, Any]], seconds: float, total: float,
             best_step: int | None = None) -> str:
        """``epoch 2/4 (step 16): dev accuracy 81.25 (best 82.81, step 8), train loss 0.4123; 3.1 s, 6.0 s in all``."""
        head = f"epoch {epoch}/{self.epochs} (step {step})"
        scored = [h for h in history if self.monitor in h.get("dev", {})]
        if not scored:
            dev = f"dev {self.monitor} not evaluated yet"
        else:
            latest = scored[-1]
            chosen = [h for h in scored if h["step"] == best_step]
            best = chosen[-1] if chosen else max(scored, key=lambda h: h["dev"][self.monitor])  # the first best
            where = "" if latest["step"] == step else f" at step {latest['step']}"
            dev = (f"dev {self.monitor} {latest['dev'][self.monitor]:.2f}{where} "
                   f"(best {best['dev'][self.monitor]:.2f}, step {best['step']})")
            if "train_loss" in latest:
                dev += f", train loss {latest['train_loss']:.4f}"
        return f"{head}: {dev}; {seconds:.1f} s, {total:.1f} s in all"

    def on_train_epoch_end(self, trainer: pl.Trainer, module: pl.LightningModule) -> None:
        if not trainer.is_global_zero:
            return
        self._follow_selection(trainer)
        history = list(getattr(module, "history", []))
        elapsed = module.elapsed() if hasattr(module, "elapsed") else 0.0
        text = self.line(trainer.current_epoch + 1, trainer.global_step, history,
                         time.monotonic() - self._start, elapsed, self.best_step)
        print(text, file=self.stream or sys.stderr, flush=True)
