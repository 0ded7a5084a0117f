"""The Lightning ``Trainer`` of every run, evaluation included, and the process settings around it
(torch CPU threads, Lightning's messages, the accelerator check)."""

from __future__ import annotations

import contextlib
import logging
import sys
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import lightning.pytorch as pl
import torch
from lightning.fabric.utilities.exceptions import MisconfigurationException
from lightning.pytorch.callbacks import Callback, EarlyStopping, ModelCheckpoint, ModelSummary, TQDMProgressBar
from lightning.pytorch.plugins.io import TorchCheckpointIO

from graphmatch.engine.runs.checkpoint import refused_global, unreadable
from graphmatch.engine.training.disk_full import disk_full_said
from graphmatch.engine.training.precision import cpu_precision
from graphmatch.io.atomic import write_atomically
from graphmatch.tasks.recipes.sections import Recipe, Train, typed


class _ByteCounter:
    """A write-only stream that only counts what is written to it."""

    def __init__(self) -> None:
        self.size = 0

    def write(self, data: bytes) -> int:
        self.size += len(data)
        return len(data)

    def flush(self) -> None:
        pass


def serialized_size(checkpoint: dict[str, Any]) -> int:
    """The bytes ``torch.save`` writes for ``checkpoint`` (counted, not stored)."""
    counter = _ByteCounter()
    torch.save(checkpoint, counter)  # type: ignore[arg-type]
    return counter.size


def damaged_checkpoint(path: Path, err: Exception) -> ValueError:
    """One line for a checkpoint Lightning cannot read (truncated by a full disk or a copy, say),
    offering the run's other checkpoint where there is one."""
    if refused_global(err) is not None:
        return ValueError(unreadable(path, err))
    reason = (str(err).strip().splitlines() or [type(err).__name__])[0][:160]
    message = f"{path} cannot be read: it is truncated or damaged ({type(err).__name__}: {reason})"
    best = path.with_name("best.ckpt")
    if path.name == "last.ckpt" and best.is_file():
        message += (f"; its best.ckpt is there: evaluate it with: graphmatch evaluate {path.parent}, or train again "
                    f"from its weights into a new folder with: graphmatch train --resume {best} --out NEW_FOLDER")
    return ValueError(message)


class AtomicCheckpointIO(TorchCheckpointIO):
    """Lightning's torch checkpoint writer through :func:`~graphmatch.io.atomic.write_atomically`,
    so a crash never leaves a truncated checkpoint under the real name; a full disk is one line
    (:class:`~graphmatch.engine.training.disk_full.DiskFull`) and a checkpoint that cannot be read too.

    ``torch.save`` writes straight into the temporary file. Lightning's own writer first serialises
    the whole checkpoint into memory: for e5-small with AdamW's state (1.4 GB) that is 1.4 GB more
    memory and 3-5 times the time (docs/benchmarks.md)."""

    def save_checkpoint(self, checkpoint: dict[str, Any], path: Any, storage_options: Any = None) -> None:
        if storage_options is not None:
            raise TypeError(f"{type(self).__name__} takes no storage_options (a local checkpoint file)")
        with disk_full_said(path, lambda: serialized_size(checkpoint)):
            write_atomically(path, lambda tmp: torch.save(checkpoint, tmp))

    def load_checkpoint(self, path: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
        try:
            return super().load_checkpoint(path, *args, **kwargs)
        except FileNotFoundError:
            raise
        except Exception as err:  # noqa: BLE001 - whatever torch says, the file is unreadable
            raise damaged_checkpoint(Path(path), err) from err


class StderrProgressBar(TQDMProgressBar):
    """Lightning's progress bars on stderr (Lightning writes them to stdout), so that stdout
    carries only a command's results (``graphmatch evaluate RUN > out.txt``)."""

    def init_sanity_tqdm(self) -> Any:
        with contextlib.redirect_stdout(sys.stderr):
            return super().init_sanity_tqdm()

    def init_train_tqdm(self) -> Any:
        with contextlib.redirect_stdout(sys.stderr):
            return super().init_train_tqdm()

    def init_validation_tqdm(self) -> Any:
        with contextlib.redirect_stdout(sys.stderr):
            return super().init_validation_tqdm()

    def init_test_tqdm(self) -> Any:
        with contextlib.redirect_stdout(sys.stderr):
            return super().init_test_tqdm()

    def init_predict_tqdm(self) -> Any:
        with contextlib.redirect_stdout(sys.stderr):
            return super().init_predict_tqdm()


_QUIET = (
    r".*does not have many workers.*",
    r".*Checkpoint directory .* exists and is not empty.*",
    r".*smaller than the logging interval.*",
    r".*LightningDataset.*",
    r".*`isinstance\(treespec, LeafSpec\)` is deprecated.*",
    r".*when logging on epoch level in distributed setting.*",  # our figures are gathered already
    r".*is not supported by the model summary.*",  # bf16 on the CPU: its size estimate in 32 bits
)


class _NoAdvertising(logging.Filter):
    """Drops Lightning's "💡 Tip: ... try installing litlogger / litmodels" lines."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not ("Tip:" in message and ("litlogger" in message or "litmodels" in message))


_NO_ADVERTISING = _NoAdvertising()


def quiet(progress: bool) -> None:
    """Silence Lightning's warnings that say nothing to a graphmatch user, its advertising and its
    information lines (accelerators available, checkpoints restored, callbacks configured); the
    model summary stays with ``train.progress``."""
    for pattern in _QUIET:
        warnings.filterwarnings("ignore", message=pattern)
    for name in ("lightning.pytorch", "lightning.fabric", "lightning"):
        logging.getLogger(name).setLevel(logging.WARNING)
    summary = logging.getLogger("lightning.pytorch.callbacks.model_summary")
    summary.setLevel(logging.INFO if progress else logging.WARNING)
    # the tips are logged through lightning's rank-zero helpers (one logger per package)
    for name in ("lightning.pytorch.utilities.rank_zero", "lightning.fabric.utilities.rank_zero"):
        logger = logging.getLogger(name)
        if _NO_ADVERTISING not in logger.filters:
            logger.addFilter(_NO_ADVERTISING)


def progress_bars(train: Train | Mapping[str, Any]) -> bool:
    """Progress bars only where a person watches them: ``train.progress`` and stderr a terminal
    (a redirected log gets :class:`~graphmatch.engine.training.callbacks.EpochLines` instead)."""
    return typed(Train, train).progress and sys.stderr.isatty()


def uses_gpu(train: Train | Mapping[str, Any]) -> bool:
    return typed(Train, train).accelerator in ("gpu", "cuda", "auto") and torch.cuda.is_available()


def check_accelerator(train: Train | Mapping[str, Any]) -> None:
    """A GPU asked for on a machine without one is the user's error, said before anything runs."""
    accelerator = typed(Train, train).accelerator
    if accelerator in ("gpu", "cuda") and not torch.cuda.is_available():
        raise ValueError(f"train.accelerator={accelerator}, but torch sees no CUDA GPU on this machine; "
                         "use train.accelerator=auto (or cpu)")
    if accelerator == "mps" and not torch.backends.mps.is_available():
        raise ValueError("train.accelerator=mps, but this machine has no Apple GPU; use train.accelerator=auto")


@contextlib.contextmanager
def cpu_threads(train: Train | Mapping[str, Any]) -> Iterator[None]:
    """Use ``train.threads`` torch CPU threads (on a CPU run) for the duration of the block, and
    give the caller's process its own thread count back afterwards."""
    train = typed(Train, train)
    before = torch.get_num_threads()
    if not uses_gpu(train):
        torch.set_num_threads(train.threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def precision(train: Train) -> str:
    """``train.precision``; ``auto`` is bf16 (else fp16) mixed precision on a GPU, and on a CPU
    bf16 mixed precision where it has bf16 units, else fp32
    (:func:`~graphmatch.engine.training.precision.cpu_precision`,
    which also warns of bf16 asked for on a CPU without them)."""
    if train.accelerator == "mps":
        return "32-true" if train.precision == "auto" else str(train.precision)
    if not uses_gpu(train):
        return cpu_precision(train.precision)
    if train.precision != "auto":
        return str(train.precision)
    return "bf16-mixed" if torch.cuda.is_bf16_supported() else "16-mixed"


def build_trainer(
    recipe: Recipe | Mapping[str, Any],
    run_dir: Path | None,
    monitor: str | None = None,
    callbacks: Sequence[Callback] = (),
    steps_per_epoch: int | None = None,
) -> pl.Trainer:
    """A Lightning ``Trainer`` for the recipe's ``train`` and ``optim`` sections.

    Every trainer has the recipe's accelerator, precision, determinism, progress bar and atomic
    checkpoint writes. One that trains (``run_dir`` given) also has the recipe's devices, nodes
    and strategy, best-on-dev (``dev/<monitor>``) and latest checkpoints in ``run_dir``, optional
    early stopping, gradient clipping and the epoch/step budget; a ``max_steps`` shorter than an
    epoch evaluates on dev when it is reached. One that only evaluates (``run_dir=None``) runs in
    this process on one device, so that evaluating a run trained with DDP starts no processes.
    """
    recipe = Recipe.of(recipe)
    t, o = recipe.train, recipe.optim
    cbs: list[Callback] = list(callbacks)
    settings: dict[str, Any] = {"devices": 1}
    if run_dir is not None:
        if monitor is None:
            raise ValueError("build_trainer: a trainer that trains needs the metric it selects on (monitor)")
        select = ModelCheckpoint(
            dirpath=run_dir,
            filename="best",
            monitor=f"dev/{monitor}",
            mode="max",
            save_top_k=1,
            auto_insert_metric_name=False,
            enable_version_counter=False,
            save_weights_only=True,  # what evaluate / predict read; a run resumes from last.ckpt
        )
        # Lightning's save_last only writes when a new best is saved; a run resumes from the latest
        # state, so last.ckpt has its own callback, listed after `select` so it stores its updated state
        latest = ModelCheckpoint(dirpath=run_dir, filename="last", save_top_k=1, enable_version_counter=False)
        cbs = [select, latest, *cbs]
        if t.progress:  # the plain summary is logged (stderr); the rich one Lightning prefers prints on stdout
            cbs.append(ModelSummary())
        if progress_bars(t):
            cbs.append(StderrProgressBar())
        if t.patience:
            cbs.append(EarlyStopping(monitor=f"dev/{monitor}", mode="max", patience=t.patience))
        settings = {
            "devices": t.devices,
            "num_nodes": t.num_nodes,
            "strategy": t.strategy,
            "max_epochs": t.epochs,
            "max_steps": t.max_steps or -1,
            "gradient_clip_val": o.clip,
            "gradient_clip_algorithm": "norm" if o.clip else None,
            "enable_model_summary": False,  # ours above, if any: Lightning's default would say it skips itself
            "num_sanity_val_steps": 0,
            "default_root_dir": run_dir,
        }
        if t.val_every_steps:
            settings.update(val_check_interval=t.val_every_steps, check_val_every_n_epoch=None)
        elif t.max_steps and steps_per_epoch and t.max_steps < steps_per_epoch:
            settings.update(val_check_interval=t.max_steps)
    else:
        settings["enable_model_summary"] = False
        if progress_bars(t):
            cbs.append(StderrProgressBar())
    try:
        return pl.Trainer(
            accelerator=t.accelerator,
            precision=precision(t),
            callbacks=cbs,
            logger=False,
            enable_progress_bar=progress_bars(t),
            use_distributed_sampler=False,
            deterministic=t.deterministic,
            plugins=[AtomicCheckpointIO()],
            **settings,
        )
    except MisconfigurationException as err:  # devices, strategy, precision: one line on the command line
        raise ValueError(f"the train settings do not work on this machine: {err}") from err
