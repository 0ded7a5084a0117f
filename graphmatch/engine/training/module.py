"""The LightningModule that trains any :class:`~graphmatch.tasks.base.Task`.

Training calls ``task.loss(model(batch), batch)`` on ``task.training_batch(batch)``, plus
``task.penalty(model)``; evaluation collects ``task.decode`` rows, gathers them from every process,
puts them back in dataset order and computes
``task.metrics`` on the whole split, logged as ``dev/<metric>`` (or ``test/<metric>``). The
checkpoint callback selects on ``dev/<task.monitor>``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import lightning.pytorch as pl
import torch
import torch.distributed as dist
from lightning.pytorch.trainer.states import TrainerFn
from torch import Tensor

from graphmatch.engine.runs import to_plain
from graphmatch.engine.runs.checkpoint import META, check_state_dict, model_state, rng_states, set_rng_states
from graphmatch.engine.training.optim import build_optimizer, build_scheduler, param_groups
from graphmatch.metrics import compute
from graphmatch.tasks.base import Task
from graphmatch.tasks.recipes.sections import Recipe

#: version of the ``graphmatch`` entry of a checkpoint; 2: ``history`` epochs count from 1 (they counted from 0)
META_VERSION = 2


def upgrade_history(history: list[dict[str, Any]], version: int) -> list[dict[str, Any]]:
    """A checkpoint's evaluation history with epochs counted from 1, whatever release wrote it."""
    if version >= 2:
        return list(history)
    return [{**h, "epoch": h["epoch"] + 1} if isinstance(h.get("epoch"), int) else dict(h) for h in history]


def gather_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every process's rows, on every process, sorted by ``index`` (the sample's position)."""
    if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
        parts: list[Any] = [None] * dist.get_world_size()
        dist.all_gather_object(parts, rows)
        rows = [r for part in parts for r in part]
    return sorted(rows, key=lambda r: r["index"])


class TaskModule(pl.LightningModule):
    """Lightning wrapper of ``task`` and its ``model``.

    Args:
        task: the task (data, loss, decode, metrics).
        model: ``task.build_model()``.
        recipe: the resolved recipe (:class:`~graphmatch.tasks.recipes.sections.Recipe`, or its plain form); its
            ``optim`` section builds the optimiser.

    After an evaluation, ``rows[split]`` and ``metrics[split]`` hold the gathered rows and the
    figures; ``history`` holds one entry per dev evaluation during training (``epoch``
    counts from 1, as ``summary.md`` and ``metrics.json``'s ``best_epoch`` do).
    """

    def __init__(self, task: Task, model: torch.nn.Module, recipe: Recipe | Mapping[str, Any]):
        super().__init__()
        self.task = task
        self.model = model
        self.recipe = Recipe.of(recipe)
        self.rows: dict[str, list[dict[str, Any]]] = {}
        self.metrics: dict[str, dict[str, float]] = {}
        self.history: list[dict[str, Any]] = []
        self.loaded_step: dict[str, int] = {}
        self.time_offset = 0.0
        self._start = time.time()
        self._pending: list[dict[str, Any]] = []
        self._loss_sum: Tensor | None = None
        self._loss_count = 0
        if self.recipe.optim.layer_decay is not None:
            self.param_groups()  # a task without encoder layers fails here, before any training

    def param_groups(self) -> list[dict[str, Any]]:
        """The optimiser's parameter groups (:func:`~graphmatch.engine.training.optim.param_groups`)."""
        task, model = self.task, self.model
        return param_groups(model, task.encoder_parameters(model), self.recipe.optim, task.encoder_layers(model))

    def forward(self, batch: Any) -> Any:
        return self.model(batch)

    # ------------------------------------------------------------------ training
    def on_fit_start(self) -> None:
        self._start = time.time()

    def training_step(self, batch: Any, batch_idx: int) -> Tensor:
        batch = self.task.training_batch(batch)
        loss = self.task.loss(self.model(batch), batch)
        penalty = self.task.penalty(self.model)
        if penalty is not None:
            loss = loss + penalty
        detached = loss.detach().float()
        self._loss_sum = detached if self._loss_sum is None else self._loss_sum + detached
        self._loss_count += 1
        self.log("train/loss", detached, prog_bar=True, batch_size=batch.num_graphs)
        return loss

    def configure_optimizers(self) -> dict[str, Any]:
        optim = self.recipe.optim
        if optim.fused and getattr(self.trainer.precision_plugin, "scaler", None) is not None:
            optim = replace(optim, fused=False)  # fp16's gradient scaler: clipping needs the unscaled gradients
        groups = self.param_groups()
        optimizer = build_optimizer(groups, optim)
        scheduler = build_scheduler(optimizer, self.total_steps(), optim)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}

    def configure_gradient_clipping(self, optimizer: torch.optim.Optimizer, gradient_clip_val: float | None = None,
                                    gradient_clip_algorithm: str | None = None) -> None:
        """``optim.clip``: the global gradient norm of the optimiser's parameters clipped to it, as
        Lightning clips it, without Lightning's refusal of a fused optimiser under mixed precision,
        which is there for fp16's gradient scaler (bf16 and fp32 have none; with one, the optimiser
        is not fused: :meth:`configure_optimizers`)."""
        if gradient_clip_val:
            torch.nn.utils.clip_grad_norm_(self.trainer.precision_plugin.main_params(optimizer), gradient_clip_val)

    def total_steps(self) -> int:
        """Optimiser steps of the whole run (what the schedule spans).

        Computed from the sizes rather than with ``trainer.estimated_stepping_batches``, which
        sets the training loader up before a resumed run restores the loader's position.
        """
        t = self.recipe.train
        shard = math.ceil(len(self.trainer.datamodule.train_dataset) / self.trainer.world_size)
        total = t.epochs * math.ceil(shard / t.batch_size)
        return max(1, min(total, t.max_steps) if t.max_steps else total)

    def elapsed(self) -> float:
        """Training time in seconds, including the time before a resumption."""
        return self.time_offset + time.time() - self._start

    # ---------------------------------------------------------------- evaluation
    def _collect(self, batch: Any) -> None:
        rows = self.task.decode(self.model(batch), batch)
        index = batch.sample_index.tolist()
        if len(rows) != len(index):
            raise ValueError(f"task {self.task.name!r}: decode returned {len(rows)} rows for {len(index)} samples")
        self._pending.extend({"index": i, **to_plain(r)} for i, r in zip(index, rows, strict=True))

    def validation_step(self, batch: Any, batch_idx: int) -> None:
        self._collect(batch)

    def test_step(self, batch: Any, batch_idx: int) -> None:
        self._collect(batch)

    def on_validation_epoch_start(self) -> None:
        self._pending = []

    on_test_epoch_start = on_validation_epoch_start

    def _finish(self, split: str) -> None:
        rows = gather_rows(self._pending)
        self._pending = []
        metrics = compute(self.task.metrics, rows, self.task.negative_labels())
        self.rows[split], self.metrics[split] = rows, metrics
        for name, value in metrics.items():
            self.log(f"{split}/{name}", value, prog_bar=name == self.task.monitor, sync_dist=False)
        if self.trainer.state.fn == TrainerFn.FITTING and not self.trainer.sanity_checking:
            self.history.append(
                {"step": self.global_step, "epoch": self.current_epoch + 1, **self._train_loss(), "dev": metrics}
            )

    def _train_loss(self) -> dict[str, float]:
        """Mean training loss (over all processes) since the previous evaluation."""
        total = self._loss_sum if self._loss_sum is not None else torch.zeros((), device=self.device)
        stats = torch.stack([total.to(self.device), torch.tensor(float(self._loss_count), device=self.device)])
        stats = self.trainer.strategy.reduce(stats, reduce_op="sum")
        self._loss_sum, self._loss_count = None, 0
        return {"train_loss": float(stats[0] / stats[1])} if stats[1] > 0 else {}

    def on_validation_epoch_end(self) -> None:
        self._finish("dev")

    def on_test_epoch_end(self) -> None:
        self._finish("test")

    # --------------------------------------------------------------- checkpoints
    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        checkpoint[META] = {
            "version": META_VERSION,
            "task": self.task.name,
            "config": self.recipe.config,
            "label_names": list(self.task.label_names()),
            "task_state": self.task.get_extra_state(),
            "history": self.history,
            "rng": rng_states(),
            "train_time_s": self.elapsed(),
            # the training loss since the last dev evaluation (a checkpoint saved mid-epoch on a signal)
            "train_loss": [None if self._loss_sum is None else float(self._loss_sum), self._loss_count],
        }

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        meta = checkpoint.get(META)
        if meta is None:
            raise ValueError("not a graphmatch checkpoint (no 'graphmatch' entry); cannot continue from it")
        if meta["task"] != self.task.name:
            raise ValueError(f"the checkpoint is of task {meta['task']!r}, not {self.task.name!r}")
        check_state_dict(self.model, self.task.upgrade_state_dict(self.model, model_state(checkpoint)),
                         f"of task {meta['task']!r}")
        self.loaded_step = {"step": int(checkpoint.get("global_step", 0)), "epoch": int(checkpoint.get("epoch", 0))}
        if self.trainer.state.fn == TrainerFn.FITTING:
            self.history = upgrade_history(meta.get("history", []), meta.get("version", 1))
            self.time_offset = float(meta.get("train_time_s", 0.0))
            loss_sum, self._loss_count = meta.get("train_loss", [None, 0])
            self._loss_sum = None if loss_sum is None else torch.tensor(loss_sum, device=self.device)
            if meta.get("rng") is not None:  # continue the interrupted run's random stream
                set_rng_states(meta["rng"])
