"""One training run inside a folder already chosen: the task, its data and model
(:func:`prepare`), Lightning's fit, the selected checkpoint's dev and test figures, and the
files that report them (:func:`fit`). Which folder, resuming and ranks are
:mod:`graphmatch.engine.runs.folder`'s business."""

from __future__ import annotations

import math
import sys
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import lightning.pytorch as pl
import torch
from lightning.pytorch.callbacks import Callback

from graphmatch.engine import runs
from graphmatch.engine.runs.checkpoint import check_state_dict, model_state, read_checkpoint
from graphmatch.engine.runs.files import store_run_files
from graphmatch.engine.runs.provenance import provenance
from graphmatch.engine.training.callbacks import EpochLines, EvaluateLastStep
from graphmatch.engine.training.datamodule import GraphDataModule, IndexedDataset
from graphmatch.engine.training.disk_full import disk_full_said
from graphmatch.engine.training.module import TaskModule
from graphmatch.engine.training.precision import precision_record
from graphmatch.engine.training.signals import SignalStop, StopOnSignal, TrainingStopped
from graphmatch.engine.training.trainer import build_trainer, progress_bars
from graphmatch.tasks.base import Task
from graphmatch.tasks.recipes.resolve import diff, resolve, sample_limit, task_class
from graphmatch.tasks.recipes.sections import Recipe


@dataclass
class Setup:
    """What a run trains: the recipe, the task, its datasets by split (as the task gave them), the
    views the engine trains and evaluates on (``splits``, limited by the recipe), the model, its
    Lightning module and the task's :meth:`~graphmatch.tasks.base.Task.report` on the data."""

    recipe: Recipe
    task: Task
    datasets: dict[str, Any]
    splits: dict[str, IndexedDataset]
    model: torch.nn.Module
    module: TaskModule
    monitor: str
    report: list[str] = field(default_factory=list)


def limited(datasets: Mapping[str, Any], recipe: Recipe) -> dict[str, IndexedDataset]:
    """The splits the engine uses, each cut to ``data.limit.<split>``; a split the task does not
    have is left out."""
    return {split: IndexedDataset(datasets[split], sample_limit(recipe, split)) for split in ("train", "dev", "test")
            if datasets.get(split) is not None}


def datamodule(recipe: Recipe, splits: Mapping[str, IndexedDataset]) -> GraphDataModule:
    """The batches of ``splits`` (any of train, dev, test) as the recipe's ``train`` section says."""
    t = recipe.train
    return GraphDataModule(
        splits.get("train"),
        splits.get("dev"),
        splits.get("test"),
        batch_size=t.batch_size,
        eval_batch_size=t.eval_batch_size or t.batch_size,
        seed=t.seed,
        num_workers=t.num_workers,
        bucket=t.bucket,
    )


def cache_keys(datasets: Mapping[str, Any]) -> dict[str, str]:
    """The cache key (``cache_digest``) of each split's processed dataset, where it has one."""
    keys = {split: getattr(dataset, "cache_digest", None) for split, dataset in datasets.items()}
    return {split: str(key) for split, key in keys.items() if key is not None}


def choose_monitor(task: Task, recipe: Recipe) -> str:
    """The dev metric that selects the checkpoint: ``train.monitor``, one of the task's metrics,
    else the task's default. Reading ``task.metrics`` here lets a task's metric options fail
    before a run folder is made."""
    names = [m if isinstance(m, str) else m[0] for m in task.metrics]
    chosen = recipe.train.monitor
    if chosen is None:
        return task.monitor
    if chosen not in names:
        raise ValueError(f"train.monitor={chosen} is not a metric of task {task.name!r}; choose one of "
                         f"{', '.join(names)}")
    return chosen


def prepare(recipe: Recipe, *, fresh: bool) -> Setup:
    """Seed everything, build the task, its data and model (a ``fresh`` start: with the task's
    pretrained weights, :meth:`~graphmatch.tasks.base.Task.init_weights`; not when the run
    continues from a checkpoint) and the Lightning module. Any bad input fails here,
    before a run folder is made."""
    pl.seed_everything(recipe.train.seed, workers=True, verbose=False)
    task = task_class(recipe.task)(recipe)
    datasets = task.datasets()
    for split in ("train", "dev"):
        if datasets.get(split) is None:
            raise ValueError(
                f"task {task.name!r} gave no {split!r} split; the engine trains on train and selects "
                "checkpoints on dev (never on test)"
            )
    monitor = choose_monitor(task, recipe)
    splits = limited(datasets, recipe)
    model = task.build_model()
    if fresh:
        task.init_weights(model)
    report = task.report(dict(datasets))  # once every input has been accepted
    for line in report:
        print(line, file=sys.stderr)
    return Setup(recipe, task, dict(datasets), splits, model, TaskModule(task, model, recipe), monitor, report)


def load_weights_only(setup: Setup, ckpt: Path) -> bool:
    """Load the weights of ``ckpt`` into the setup's model when it holds weights only (a
    ``best.ckpt``: no optimiser state to continue from), saying on stderr that training starts
    again from them with a fresh optimiser and schedule; ``False`` (nothing loaded) for a
    resumable checkpoint (``last.ckpt``), which Lightning restores whole."""
    saved = read_checkpoint(ckpt)
    if "optimizer_states" in saved:
        return False
    state = setup.task.upgrade_state_dict(setup.model, model_state(saved))
    check_state_dict(setup.model, state, str(ckpt))
    setup.model.load_state_dict(state)
    print(f"{ckpt} holds the weights only (no optimiser state): training starts from them, with a fresh "
          "optimiser and schedule", file=sys.stderr)
    return True


def fit(setup: Setup, run_dir: Path, *, ckpt: Path | None, callbacks: Sequence[Callback]) -> dict[str, Any] | None:
    """Train (from ``ckpt`` when given), select the checkpoint on dev, evaluate dev and test once
    with it, and write the run's results into ``run_dir``: predictions, ``history.json``,
    ``curve.png``, ``metrics.json`` (with :func:`~graphmatch.engine.runs.provenance.provenance`) and
    ``summary.md``. Returns the metrics in the process that wrote them (global rank 0), else ``None``."""
    recipe, module, splits, monitor = setup.recipe, setup.module, setup.splits, setup.monitor
    t = recipe.train
    data = datamodule(recipe, splits)
    shard = math.ceil(len(splits["train"]) / (t.devices if isinstance(t.devices, int) else 1))
    steps_per_epoch = math.ceil(shard / t.batch_size)
    total_steps = t.epochs * steps_per_epoch
    if t.max_steps:
        total_steps = min(total_steps, t.max_steps)
    stop = StopOnSignal(run_dir, total_steps)
    extra: list[Callback] = [EvaluateLastStep(total_steps)]
    if not progress_bars(t):
        extra.append(EpochLines(monitor, t.epochs))
    trainer = build_trainer(recipe, run_dir, monitor, [*callbacks, *extra, stop], steps_per_epoch)
    with stop.catching():
        trainer.fit(module, datamodule=data, ckpt_path=ckpt)
    if trainer.interrupted:
        raise runs.RunError(f"training was interrupted; continue with: graphmatch train --resume {run_dir}")
    try:
        if stop.received is not None:  # after the last dev evaluation, before fit returned
            raise SignalStop(stop.received)
        return _evaluate_selected(setup, run_dir, trainer, data)
    except SignalStop as signalled:  # last.ckpt holds the last step: --resume evaluates and writes the results
        raise TrainingStopped(signalled.signum, max(trainer.current_epoch, 1), trainer.global_step, run_dir,
                              phase="results") from None


def _evaluate_selected(setup: Setup, run_dir: Path, trainer: pl.Trainer,
                       data: GraphDataModule) -> dict[str, Any] | None:
    """Evaluate dev and test with the checkpoint selected on dev and write the run's results."""
    module, splits = setup.module, setup.splits
    best = trainer.checkpoint_callback.best_model_path if trainer.checkpoint_callback else ""
    if not best:
        raise runs.RunError(f"no checkpoint was selected: dev was never evaluated: {never_evaluated(splits, trainer)}")
    train_time = module.elapsed()
    history = list(module.history)

    trainer.validate(module, datamodule=data, ckpt_path=best, verbose=False)
    selected = dict(module.loaded_step)
    if "test" in splits:  # the module holds the selected weights now: read once (e5-small's: 0.47 GB)
        trainer.test(module, datamodule=data, verbose=False)
    if not trainer.is_global_zero:
        return None
    with disk_full_said(run_dir, run_dir=run_dir):  # a full disk keeps the checkpoints and says how to go on
        return write_results(setup, run_dir, trainer, train_time, history, selected)


def never_evaluated(splits: Mapping[str, IndexedDataset], trainer: pl.Trainer) -> str:
    """Why a run ended without a dev evaluation, from what it had."""
    train, dev = len(splits["train"]), len(splits["dev"])
    if train == 0:
        return "the training split has no samples (look at the training file and data.limit.train)"
    if dev == 0:
        return "the dev split has no samples (look at the dev file and data.limit.dev)"
    if trainer.global_step == 0:
        return f"no training step was taken ({train} training samples; look at train.max_steps and train.epochs)"
    return (f"{trainer.global_step} training steps were taken on {train} samples, but no dev evaluation gave "
            f"dev/{trainer.checkpoint_callback.monitor if trainer.checkpoint_callback else '?'} (are the dev labels "
            "missing?)")


def as_described(recipe: Recipe, task: Task) -> bool:
    """Whether the recipe's ``description`` still describes the run: none of the keys it speaks of
    (:attr:`Task.DESCRIBED_KEYS <graphmatch.tasks.base.Task.DESCRIBED_KEYS>`, else every ``data`` and
    ``model`` key) differs from the named recipe's own (a user's own recipe file: yes, as it was written)."""
    try:
        with warnings.catch_warnings():  # its old keys were named once already
            warnings.simplefilter("ignore")
            own = resolve(f"{recipe.task}/{recipe.name}")  # a packaged recipe's name
    except (OSError, ValueError, KeyError):
        return True
    if own.get("description") != recipe.description:
        return True
    described = task.DESCRIBED_KEYS or ("data.", "model.")
    return not any(k in described if task.DESCRIBED_KEYS else k.startswith(described) for k in diff(own, recipe.config))


def write_results(setup: Setup, run_dir: Path, trainer: pl.Trainer, train_time: float,
                  history: list[dict[str, Any]], selected: Mapping[str, int]) -> dict[str, Any]:
    """The files of a finished run (rank 0) from the selected checkpoint's evaluations."""
    recipe, task, module, splits, monitor = setup.recipe, setup.task, setup.module, setup.splits, setup.monitor
    store_run_files(task, run_dir, setup.datasets)  # the encoder's config and tokenizer, the input files' identity

    metrics = {
        "task": recipe.task,
        "recipe": recipe.name,
        "seed": recipe.train.seed,
        "monitor": monitor,
        "dev": module.metrics["dev"],
        "test": module.metrics.get("test"),
        "best_step": selected.get("step"),
        "best_epoch": selected.get("epoch", 0) + 1,
        "epochs": trainer.fit_loop.epoch_progress.current.completed,
        "steps": trainer.global_step,
        "time_s": round(train_time, 3),
        "device": f"{trainer.num_devices}x {type(trainer.accelerator).__name__.replace('Accelerator', '')}"
        f" ({trainer.strategy.__class__.__name__}, precision {trainer.precision})",
        "samples": {split: len(ds) for split, ds in splits.items()},
        "provenance": provenance(cache_keys(setup.datasets), environment=task.environment(),
                                 precision=precision_record(recipe.train.precision, trainer.precision)),
    }
    labels = task.label_names()
    negatives = [label for label in task.negative_labels() if label in labels]
    if negatives:  # the share of no-relation predictions against gold, the relations never predicted
        metrics["negative_share"] = {"labels": negatives, "relations": len(labels) - len(negatives), "splits": {
            split: runs.negative_share(module.rows[split], negatives, labels)
            for split in ("dev", "test") if module.rows.get(split)}}
    for split in ("dev", "test"):
        if split in module.rows:
            runs.write_predictions(task, run_dir, split, module.rows[split])
    runs.write_json(run_dir / "history.json", history)
    runs.plot_curve({recipe.name: history}, monitor, run_dir / "curve.png", {recipe.name: metrics["best_step"]})
    runs.write_json(run_dir / "metrics.json", metrics)
    runs.write_summary(run_dir, recipe, metrics, setup.report, used=task.used(), described=as_described(recipe, task))
    if task.branch_kg() is not None and len(splits.get("dev") or ()):  # does the model read its branches?
        from graphmatch.engine.inference.probe import SUMMARY_INPUTS, probe_graphs, report

        dev = splits["dev"]
        figures = probe_graphs(task, module.model, [dev[i] for i in range(min(SUMMARY_INPUTS, len(dev)))])
        probed = report(figures, f"Knowledge probe (the dev split's first {figures['inputs']} inputs, "
                                 "`graphmatch probe`)")
        runs.write_summary(run_dir, recipe, metrics, setup.report, extra=["", probed], used=task.used(),
                           described=as_described(recipe, task))
    return metrics
