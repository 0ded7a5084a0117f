"""A trained model back from its run folder or checkpoint: :func:`load`, :func:`evaluate` and
:func:`predict` (``load`` and ``predict`` without importing Lightning). The task and model are
rebuilt from the checkpoint's own configuration and the task's stored state (label names,
vocabularies), the pretrained encoder from the run folder's stored files."""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
from torch_geometric.data import Batch

from graphmatch.engine import runs
from graphmatch.engine.arguments import check_output, check_precision
from graphmatch.engine.runs.checkpoint import META, check_state_dict, find_checkpoint, model_state, read_checkpoint
from graphmatch.engine.runs.files import check_run_inputs, stored_inputs
from graphmatch.engine.runs.folder import check_complete, has_seeds, is_complete
from graphmatch.engine.training.precision import autocast, inference_precision, to_fp32
from graphmatch.tasks.base import Task
from graphmatch.tasks.recipes.resolve import check_run_overrides, diff, resolve, task_class
from graphmatch.tasks.recipes.sections import Recipe
from graphmatch.utils.unset_weights import weights_loaded_later


def checkpoint_of(run_or_ckpt: str | os.PathLike) -> Path:
    """The selected checkpoint of a complete single-seed run folder, or the checkpoint file given."""
    path = Path(run_or_ckpt)
    if path.is_dir():
        check_complete(path)
        if has_seeds(path):
            raise ValueError(f"{path} holds several seeds; give one of its seed-<n> folders")
    return find_checkpoint(path, "best")


def best_so_far(run_or_ckpt: str | os.PathLike) -> Path:
    """What :func:`evaluate` scores: :func:`checkpoint_of`, or, for a single-seed run folder that
    was interrupted (no ``COMPLETE``) but has a ``best.ckpt``, that checkpoint (the best on dev of
    the steps trained so far), with one warning saying so and how to finish the run."""
    path = Path(run_or_ckpt)
    if path.is_dir() and not is_complete(path) and not has_seeds(path) and (path / "best.ckpt").is_file():
        warnings.warn(f"run folder {path} is incomplete (interrupted: no COMPLETE marker); evaluating its best.ckpt, "
                      f"the best on dev of the steps trained so far; finish the run with: graphmatch train --resume "
                      f"{path}", stacklevel=2)
        return path / "best.ckpt"
    return checkpoint_of(path)


def _restore(meta: Mapping[str, Any], config: dict[str, Any], with_data: bool,
             run_dir: Path) -> tuple[Task, dict[str, Any]]:
    """The task of a checkpoint, rebuilt from what it stored in the run folder
    (:meth:`Task.from_run_folder <graphmatch.tasks.base.Task.from_run_folder>`)."""
    recipe = Recipe.of(config)
    task = task_class(recipe.task).from_run_folder(recipe, run_dir)
    if meta.get("task_state") is not None:
        task.set_extra_state(meta["task_state"])
    data = task.datasets() if with_data or meta.get("task_state") is None else {}
    if list(task.label_names()) != list(meta["label_names"]):
        raise ValueError(
            f"the labels of the data ({task.label_names()}) differ from the checkpoint's ({meta['label_names']})"
        )
    check_run_inputs(task, run_dir)
    return task, data


def _model_from(ckpt: Mapping[str, Any], task: Task, source: Path) -> torch.nn.Module:
    """The task's model with the checkpoint's weights, built without drawing initial weights (every
    parameter is loaded, strictly: :mod:`graphmatch.utils.unset_weights`)."""
    with weights_loaded_later():
        model = task.build_model()
    state = model_state(ckpt)
    check_state_dict(model, task.upgrade_state_dict(model, state), str(source))
    model.load_state_dict(state)
    return model.eval()


def load(run_or_ckpt: str | os.PathLike) -> tuple[Task, torch.nn.Module]:
    """The task and the model (eval mode, selected weights) of a run folder or checkpoint.

    The task is rebuilt from the checkpoint's configuration and its stored state (label names,
    vocabularies, via ``Task.set_extra_state``).
    A checkpoint that does not fit the model its configuration builds is a ValueError.
    """
    path = checkpoint_of(run_or_ckpt)
    ckpt = read_checkpoint(path)
    meta = ckpt[META]
    config = resolve(stored_inputs(meta["config"], path.parent), stored=True)  # the run's copies of user files
    task, _ = _restore(meta, config, with_data=False, run_dir=path.parent)
    return task, _model_from(ckpt, task, path)


def evaluate(
    run_or_ckpt: str | os.PathLike,
    split: str = "test",
    overrides: Sequence[str] = (),
    predictions: str | os.PathLike | None = None,
    precision: str | None = None,
) -> dict[str, float]:
    """Metrics of a run's selected checkpoint (or of a checkpoint) on ``split`` (dev or test).

    The batches and the trainer are made as in training (:func:`~graphmatch.engine.training.fitting.datamodule`,
    :func:`~graphmatch.engine.training.trainer.build_trainer`), on one device in this process.

    Args:
        run_or_ckpt: run folder (its ``best.ckpt``; an interrupted one's too, with a warning:
            :func:`best_so_far`) or checkpoint file.
        split: ``"dev"`` or ``"test"``.
        overrides: ``--set`` strings for where and how to read data (e.g. ``data.root=...``,
            ``train.eval_batch_size=64``); the model keys of a checkpoint cannot change.
        predictions: also write the rows to this JSONL file (and the task's official formats).
        precision: ``auto``, ``32-true`` or ``bf16-mixed`` instead of the run's ``train.precision``
            (as ``--set train.precision=...``; the trainer resolves it,
            :func:`~graphmatch.engine.training.trainer.precision`).
    """
    from graphmatch.engine.training.fitting import datamodule, limited  # Lightning: not needed by load / predict
    from graphmatch.engine.training.module import TaskModule
    from graphmatch.engine.training.trainer import build_trainer, check_accelerator, cpu_threads, quiet

    if split not in ("dev", "test"):
        raise ValueError(f"--split must be dev or test, got {split!r}")
    if predictions is not None and Path(predictions).is_dir():
        raise ValueError(f"--predictions {predictions} is a folder; give the file to write (e.g. OUT.jsonl)")
    check_precision(precision)
    if precision is not None:
        overrides = [*overrides, f"train.precision={precision}"]
    path = best_so_far(run_or_ckpt)
    ckpt = read_checkpoint(path)
    meta = ckpt[META]
    check_run_overrides(overrides, meta["config"].get("task"))
    config = resolve(stored_inputs(meta["config"], path.parent), overrides, stored=True)
    changed = [k for k in diff(resolve(meta["config"], stored=True), config) if k.startswith("model.")]
    if changed:
        raise ValueError(f"model keys cannot change when evaluating a checkpoint: {', '.join(changed)}")
    recipe = Recipe.of(config)
    check_accelerator(recipe.train)
    quiet(recipe.train.progress)
    with cpu_threads(recipe.train):
        task, data = _restore(meta, config, with_data=True, run_dir=path.parent)
        if data.get(split) is None:
            raise ValueError(f"task {task.name!r} has no {split!r} split")
        files = getattr(data[split], "input_files", None)  # a cached dataset's source files
        check_output("--predictions", predictions, run_or_ckpt, owned=f"predictions_{split}.jsonl",
                     inputs=[*task.input_files().values(), *(files().values() if callable(files) else ())])
        module = TaskModule(task, _model_from(ckpt, task, path), recipe)
        batches = datamodule(recipe, limited({split: data[split]}, recipe))
        trainer = build_trainer(recipe, None)
        if split == "dev":
            trainer.validate(module, datamodule=batches, verbose=False)
        else:
            trainer.test(module, datamodule=batches, verbose=False)
        if predictions is not None:  # JSON lines, plus the task's official formats beside them
            runs.write_predictions_to(task, Path(predictions), module.rows[split])
        return module.metrics[split]


class PredictedRow(dict):
    """A row of :func:`predict`: ``label`` as :class:`~graphmatch.engine.inference.predictor.Predictor` and
    the JSONL name it; the previous release's ``pred`` still reads it, with a FutureWarning."""

    def __missing__(self, name: str) -> Any:
        if name != "pred":
            raise KeyError(name)
        warnings.warn("predict()'s 'pred' is now 'label' (as Predictor and the JSONL name it); 'pred' goes in the "
                      "next release", FutureWarning, stacklevel=2)
        return self["label"]

    def get(self, name: str, default: Any = None) -> Any:
        return self[name] if name in self or name == "pred" else default


def predict(run_or_ckpt: str | os.PathLike, text: str, text_b: str | None = None) -> dict[str, Any]:
    """The decoded row (``label``, ``prob``, ...) for one raw input (``gold`` is ``None``)."""
    task, model = load(run_or_ckpt)
    row = predict_graph(task, model, task.encode(text, text_b))
    return PredictedRow(label=row.pop("pred"), **row)


def predict_graph(task: Task, model: torch.nn.Module, data: Any, precision: str | None = None) -> dict[str, Any]:
    """The decoded row for one input graph (``task.encode``) with a loaded task and model. One
    sample needs no trainer: the model runs as :func:`load` returned it (CPU, eval mode), in
    ``precision`` (default: the run's ``train.precision`` on this CPU,
    :func:`~graphmatch.engine.training.precision.inference_precision`)."""
    batch = Batch.from_data_list([data])
    with torch.no_grad():
        with autocast(inference_precision(precision or task.recipe.train.precision)):
            out = model(batch)
        row = task.decode(to_fp32(out), batch)[0]
    return runs.to_plain(row)
