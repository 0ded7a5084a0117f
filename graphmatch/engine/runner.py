"""Train, evaluate, predict and load: the engine's public entry points.

:func:`train` runs one recipe (or several seeds of it) through a Lightning ``Trainer`` and
writes a run folder (see :mod:`graphmatch.engine.runs`); the checkpoint is selected on dev and
test is evaluated once, with it. Which folder and when (new, resumed, rank 0) is
:mod:`graphmatch.engine.runs.folder`'s policy; one run's training is
:mod:`graphmatch.engine.training.fitting`'s; the trainer of every run is
:func:`~graphmatch.engine.training.trainer.build_trainer`. :func:`evaluate`, :func:`predict` and
:func:`load` (:mod:`graphmatch.engine.runs.restore`) rebuild the task and model from a checkpoint's
own configuration.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lightning.pytorch.callbacks import Callback

from graphmatch.engine import runs
from graphmatch.engine.runs import folder as run_folder
from graphmatch.engine.runs.files import warn_changed_inputs, write_inputs
from graphmatch.engine.runs.folder import env_rank
from graphmatch.engine.runs.restore import evaluate, load, predict, predict_graph
from graphmatch.engine.training import fitting
from graphmatch.engine.training.signals import SignalStop, TrainingStopped, stop_signals
from graphmatch.engine.training.trainer import build_trainer, check_accelerator, cpu_threads, quiet
from graphmatch.tasks.recipes.sections import Recipe

__all__ = ["train", "train_plan", "evaluate", "load", "predict", "predict_graph", "build_trainer", "cpu_threads",
           "env_rank"]


def train(
    recipe: str | os.PathLike | Mapping[str, Any] | None = None,
    overrides: Sequence[str] = (),
    run_dir: str | os.PathLike | None = None,
    *,
    seeds: int = 1,
    resume: str | os.PathLike | None = None,
    callbacks: Sequence[Callback] = (),
) -> Path:
    """Train a recipe and write its run folder; returns the folder.

    Args:
        recipe: recipe path or name (``kbert/chnsenticorp_hownet_quick``) or a config mapping;
            may be ``None`` when resuming (the run's own configuration is used).
        overrides: ``"section.key=value"`` strings (``--set``).
        run_dir: output folder; default ``runs/<task>-<recipe>-<timestamp>``.
        seeds: train seeds ``seed, seed + 1, ...`` in ``seed-<n>/`` sub-folders and report
            mean ± std in ``run_dir``.
        resume: a run folder (continue it in place from ``last.ckpt``; finished seeds are kept)
            or a ``.ckpt`` file (continue from it into ``run_dir``). ``train.resume`` does the same.
            A folder whose run stopped before it saved anything (:func:`run_folder.nothing_saved`)
            starts again in place, with ``recipe``/``overrides`` when given, else its own
            configuration; ``run_dir`` may also name such a folder.
        callbacks: extra Lightning callbacks.
    """
    return train_plan(run_folder.plan(recipe, overrides, run_dir, seeds, resume), callbacks)


def train_plan(plan: run_folder.Plan, callbacks: Sequence[Callback] = ()) -> Path:
    """:func:`train` of a checked :class:`~graphmatch.engine.runs.folder.Plan` (``graphmatch train``
    makes the plan, which reads and checks the recipe, before torch and Lightning are imported)."""
    recipe = plan.recipe
    check_accelerator(recipe.train)
    quiet(recipe.train.progress)
    with stop_signals() as latch:  # SIGTERM / SIGINT anywhere: one line, the claim given back
        base, claim = run_folder.claim_folder(recipe, plan.run_dir, resume=plan.resume_dir)  # before any build
        with cpu_threads(recipe.train):
            try:
                latch.arm()
                if plan.seeds == 1 and not run_folder.has_seeds(base):
                    return _train_one(recipe, base, ckpt=plan.ckpt, resume_dir=plan.resume_dir, callbacks=callbacks)
                return _train_seeds(recipe, base, plan.seeds, resume_dir=plan.resume_dir, callbacks=callbacks)
            except SignalStop as stop:  # outside Lightning's fit: the data and model were being prepared
                raise _stopped_preparing(stop.signum, plan, base) from None
            except TrainingStopped as stopped:
                stopped.run_dir = base  # a several-seed run resumes from its base folder
                raise
            finally:
                latch.defer()  # a signal now cannot cut the release short
                if claim is not None:
                    claim.release()


def _stopped_preparing(signum: int, plan: run_folder.Plan, base: Path) -> TrainingStopped:
    """The stop of a run before its training went on, leaving ``base`` resumable: a folder that
    saved nothing gets its ``config.yaml`` (and ``seeds.json``), so that ``--resume`` starts it
    again; a run continued from a checkpoint into a folder without ``last.ckpt`` is resumed from
    that checkpoint again."""
    continued = plan.ckpt is not None and not (base / "last.ckpt").is_file()
    unsaved = not (base / "config.yaml").is_file() or run_folder.nothing_saved(base)
    if plan.ckpt is None and env_rank() == 0 and unsaved:
        seeds = plan.seeds > 1 or run_folder.has_seeds(base)
        first = plan.recipe.train.seed
        run_folder.open_folder(base, plan.recipe, seeds=list(range(first, first + plan.seeds)) if seeds else None)
    return TrainingStopped(signum, 0, 0, base, phase="build", ckpt=plan.ckpt if continued else None)


def _train_seeds(
    recipe: Recipe, base: Path, seeds: int, *, resume_dir: bool, callbacks: Sequence[Callback]
) -> Path:
    first = recipe.train.seed
    seed_list = list(range(first, first + seeds))
    if resume_dir and run_folder.finished(base):
        return base
    if not resume_dir:
        run_folder.check_free(base)
    run_folder.open_folder(base, recipe, seeds=seed_list)
    dirs = []
    for seed in seed_list:
        sub = run_folder.seed_dir(base, seed)
        dirs.append(_train_one(recipe.with_train(seed=seed), sub, ckpt=None, resume_dir=resume_dir and sub.exists(),
                               callbacks=callbacks))
    if env_rank() == 0:
        runs.aggregate(dirs, base, recipe)
        run_folder.close_folder(base)
    return base


def _train_one(
    recipe: Recipe, run_dir: Path, *, ckpt: Path | None, resume_dir: bool, callbacks: Sequence[Callback]
) -> Path:
    if resume_dir:
        if run_folder.finished(run_dir):
            return run_dir
        ckpt = run_folder.resume_point(run_dir)
    else:
        run_folder.check_free(run_dir)
    setup = fitting.prepare(recipe, fresh=ckpt is None)
    if ckpt is not None and env_rank() == 0:
        warn_changed_inputs(setup.task, Path(ckpt).parent, setup.datasets)
    if ckpt is not None and not resume_dir and fitting.load_weights_only(setup, ckpt):
        ckpt = None  # a best.ckpt: its weights, then a new training
    run_folder.open_folder(run_dir, recipe)  # once data, model and pretrained weights are ready
    if env_rank() == 0:
        write_inputs(setup.task, run_dir, setup.datasets)
    metrics = fitting.fit(setup, run_dir, ckpt=ckpt, callbacks=callbacks)
    if metrics is not None:
        try:
            run_folder.close_folder(run_dir)
        except SignalStop as signalled:  # the results are written: --resume writes them again, or finds it complete
            raise TrainingStopped(signalled.signum, metrics["epochs"], metrics["steps"], run_dir,
                                  phase="results") from None
        run_folder.drop_last(run_dir, recipe.train.keep_last)
    return run_dir
