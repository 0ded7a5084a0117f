"""Stopping a training run cleanly when a scheduler (SIGTERM) or a user (SIGINT, Ctrl-C) says
stop: the signal handler only sets a flag; :class:`StopOnSignal` looks at it after every
training step and before every batch of a dev evaluation, saves a resumable ``last.ckpt``
through the trainer and raises :class:`TrainingStopped`, which the command line reports in one
line and exits with :math:`128 + \\text{signal number}`. A run therefore stops within one
training step or one evaluation batch, never after a whole dev pass.

Where the checkpoint is taken decides what ``--resume`` does first:

* after a training step that no dev evaluation follows: the next step;
* during a dev evaluation (or after the step that one follows, which is then stopped at the
  evaluation's first batch): that evaluation again from its first batch, so that the resumed run
  evaluates, selects and continues exactly as an uninterrupted one. The checkpoint holds the
  state before the evaluation (the random generators as they were when it began) and says
  "stopped in the middle of an evaluation" as Lightning's loops read it;
* during the evaluation after the last step, or after that step: no new checkpoint (Lightning
  cannot resume into that evaluation); ``--resume`` trains again from the ``last.ckpt`` already
  saved, and the line says from which step.

Outside Lightning's fit loop (while the data and model are built, and after the last dev
evaluation, while the selected checkpoint is evaluated and the results are written) there is no
step to finish: :func:`stop_signals`, which :func:`graphmatch.engine.train` holds for the whole
run, makes a stop signal raise :class:`SignalStop` at once, which the engine turns into a
:class:`TrainingStopped` whose line says how the run goes on; the folder's claim is always given
back.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lightning.pytorch as pl
from lightning.pytorch.callbacks import Callback
from lightning.pytorch.trainer.states import TrainerFn

from graphmatch.engine.runs.checkpoint import rng_states, set_rng_states

#: the signals a run stops on
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class SignalStop(BaseException):
    """A stop signal outside the fit loop (raised by the handler of :func:`stop_signals`; a
    ``BaseException``, as ``KeyboardInterrupt`` is, so that no ``except Exception`` takes it)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


class TrainingStopped(Exception):
    """Training stopped on a signal after saving a resumable checkpoint in ``run_dir``; or, with
    ``phase``, outside the fit loop: ``"build"`` (while the data and model were prepared) or
    ``"results"`` (after the last dev evaluation). ``ckpt``: the checkpoint a run continued from
    into ``run_dir``, when the line must name it again (``run_dir`` holds no ``last.ckpt``)."""

    def __init__(self, signum: int, epoch: int, step: int, run_dir: Path, resumes_at: int | None = None, *,
                 phase: str | None = None, ckpt: Path | None = None):
        super().__init__()
        self.signum, self.epoch, self.step, self.run_dir = signum, epoch, step, run_dir
        #: the step ``last.ckpt`` holds when no checkpoint was saved on stopping (0: none yet)
        self.resumes_at = resumes_at
        self.phase, self.ckpt = phase, ckpt

    @property
    def exit_status(self) -> int:
        """What a shell reports for a process killed by the signal: 128 + its number."""
        return 128 + self.signum

    def __str__(self) -> str:
        name = signal.Signals(self.signum).name
        if self.phase == "build":
            again = f"--resume {self.ckpt} --out {self.run_dir}" if self.ckpt else f"--resume {self.run_dir}"
            return f"stopped by {name} while preparing the data and model; resume with: graphmatch train {again}"
        if self.phase == "results":
            return (f"stopped by {name} at epoch {self.epoch} step {self.step}, after the last dev evaluation; resume "
                    f"with: graphmatch train --resume {self.run_dir} (it evaluates the selected checkpoint again and "
                    "writes the results)")
        if self.resumes_at is None:
            return (f"stopped by {name} at epoch {self.epoch} step {self.step}; resume with: graphmatch train "
                    f"--resume {self.run_dir}")
        since = (f"from last.ckpt, step {self.resumes_at}" if self.resumes_at else "from the start: no checkpoint "
                 "was saved yet")
        return (f"stopped by {name} at epoch {self.epoch} step {self.step}, at the last dev evaluation; resume with: "
                f"graphmatch train --resume {self.run_dir} (it trains again {since})")


class SignalLatch:
    """What :func:`stop_signals` received: the first stop signal (later ones are ignored while the
    run stops). While :attr:`deferred`, the signal is only recorded; :meth:`arm` raises it then."""

    def __init__(self) -> None:
        self.received: int | None = None
        self.deferred = True
        self._raised = False

    def handler(self, signum: int, frame: Any) -> None:
        if self.received is not None:
            return
        self.received = signum
        if not self.deferred:
            self._raise()

    def _raise(self) -> None:
        assert self.received is not None
        self._raised = True
        raise SignalStop(self.received)

    def arm(self) -> None:
        """From now on a stop signal raises :class:`SignalStop` at once (one received while
        deferred is raised now)."""
        self.deferred = False
        if self.received is not None and not self._raised:
            self._raise()

    def defer(self) -> None:
        """From now on a stop signal is only recorded (while the folder's claim is given back)."""
        self.deferred = True


@contextlib.contextmanager
def stop_signals() -> Iterator[SignalLatch]:
    """While the block runs, the signals of :data:`STOP_SIGNALS` go to a :class:`SignalLatch`,
    deferred until :meth:`SignalLatch.arm` (main thread only; the previous handlers come back
    afterwards). :class:`StopOnSignal` takes them over inside Lightning's fit."""
    latch = SignalLatch()
    if threading.current_thread() is not threading.main_thread():
        yield latch
        return
    previous = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    for s in STOP_SIGNALS:
        signal.signal(s, latch.handler)
    try:
        yield latch
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def validation_follows(trainer: pl.Trainer) -> bool:
    """Whether Lightning evaluates dev right after the training step that just ended (asked of
    the epoch loop, whose rule covers epoch ends, ``val_check_interval`` and ``should_stop``)."""
    return bool(trainer.fit_loop.epoch_loop._should_check_val_fx(trainer.fit_loop._data_fetcher))


class StopOnSignal(Callback):
    """Saves ``run_dir/last.ckpt`` and stops at the end of the training step during which a
    signal of :data:`STOP_SIGNALS` arrived, or at the next batch of a dev evaluation
    (:meth:`catching` installs the handlers)."""

    def __init__(self, run_dir: Path, total_steps: int | None = None):
        self.run_dir = Path(run_dir)
        self.total_steps = total_steps
        self.received: int | None = None
        self.saved_step = 0  # of the latest checkpoint written
        self._rng_before_eval: dict[str, Any] | None = None
        self._evaluated_batches = 0

    @contextlib.contextmanager
    def catching(self) -> Iterator[None]:
        """While the block runs, a stop signal only sets :attr:`received` (main thread only; the
        previous handlers come back afterwards)."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {s: signal.getsignal(s) for s in STOP_SIGNALS}
        for s in STOP_SIGNALS:
            signal.signal(s, self._handler)
        try:
            yield
        finally:
            for s, h in previous.items():
                signal.signal(s, h)

    def _handler(self, signum: int, frame: Any) -> None:
        self.received = signum

    def on_train_start(self, trainer: pl.Trainer, module: pl.LightningModule) -> None:
        """Take SIGTERM back from Lightning, which installs its own once ``fit`` runs: its
        handler ends the process after the current batch with exit status 0 and no checkpoint
        (``SIGTERMException``, a ``SystemExit``). Under DDP Lightning's stays: it tells the other
        processes."""
        if trainer.world_size == 1 and threading.current_thread() is threading.main_thread() \
                and signal.getsignal(signal.SIGTERM) is not self._handler:
            signal.signal(signal.SIGTERM, self._handler)

    def _stop(self, trainer: pl.Trainer) -> None:
        assert self.received is not None
        trainer.save_checkpoint(self.run_dir / "last.ckpt")
        raise TrainingStopped(self.received, trainer.current_epoch + 1, trainer.global_step, self.run_dir)

    def on_save_checkpoint(self, trainer: pl.Trainer, module: pl.LightningModule, checkpoint: dict[str, Any]) -> None:
        self.saved_step = int(checkpoint.get("global_step", trainer.global_step))

    def _at_last_step(self, trainer: pl.Trainer) -> bool:
        return self.total_steps is not None and trainer.global_step >= self.total_steps

    def _stop_unsaved(self, trainer: pl.Trainer) -> None:
        assert self.received is not None
        resumes_at = self.saved_step if (self.run_dir / "last.ckpt").is_file() else 0
        raise TrainingStopped(self.received, trainer.current_epoch + 1, trainer.global_step, self.run_dir, resumes_at)

    def on_train_batch_end(self, trainer: pl.Trainer, module: pl.LightningModule, *args: Any) -> None:
        if self.received is None:
            return
        if self._at_last_step(trainer):
            self._stop_unsaved(trainer)
        if validation_follows(trainer):
            return  # stopped at the evaluation's first batch, so that --resume evaluates first
        self._stop(trainer)

    @staticmethod
    def _during_fit(trainer: pl.Trainer) -> bool:
        return trainer.state.fn == TrainerFn.FITTING and not trainer.sanity_checking

    def on_validation_start(self, trainer: pl.Trainer, module: pl.LightningModule) -> None:
        if not self._during_fit(trainer):
            return
        self._rng_before_eval = rng_states()
        total = trainer.fit_loop.epoch_loop.val_loop.batch_progress.total
        if total.ready == total.started == total.processed + 1 == total.completed + 1:
            # resumed from a checkpoint of ours taken during an evaluation (see _stop_evaluation):
            # the counters get back in step now that this evaluation runs again
            total.ready = total.started = total.processed

    def on_validation_batch_start(self, trainer: pl.Trainer, module: pl.LightningModule, *args: Any) -> None:
        self._in_evaluation(trainer)

    def on_validation_batch_end(self, trainer: pl.Trainer, module: pl.LightningModule, *args: Any) -> None:
        self._in_evaluation(trainer)

    def _in_evaluation(self, trainer: pl.Trainer) -> None:
        if self.received is None or not self._during_fit(trainer):
            return
        if self._at_last_step(trainer):
            self._stop_unsaved(trainer)
        self._stop_evaluation(trainer)

    def _stop_evaluation(self, trainer: pl.Trainer) -> None:
        """Save the state before this dev evaluation, marked (in Lightning's loop counters) as
        stopped in the middle of an evaluation whose first batch had started: a resumed run then
        runs the evaluation again from its first batch before it trains on."""
        progress = trainer.fit_loop.epoch_loop.val_loop.batch_progress
        done = progress.total.completed - progress.current.completed  # evaluation batches before this one
        progress.total.ready = progress.total.started = done + 1
        progress.total.processed = progress.total.completed = done
        progress.current.ready = progress.current.started = 1
        progress.current.processed = progress.current.completed = 0
        if self._rng_before_eval is not None:
            set_rng_states(self._rng_before_eval)  # as they were when the evaluation began
        self._stop(trainer)
