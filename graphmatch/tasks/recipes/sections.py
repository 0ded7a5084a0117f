"""A resolved recipe as the engine and its task read it: typed sections, one object each.

:func:`graphmatch.tasks.recipes.resolve.resolve` checks a recipe and gives its plain form (nested
mappings, what a run writes as ``config.yaml`` and keeps in its checkpoints);
:meth:`Recipe.of` turns that form into a :class:`Recipe` once: the engine's ``optim`` and
``train`` sections (:class:`Optim`, :class:`Train`, declared here, below the tasks, so that a task
reads them too) and the task's ``data`` and ``model`` (``Task.Data``, ``Task.Model``). Everything
after that reads attributes (``recipe.train.batch_size``); the plain form stays at the edges.
Importable without torch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeVar

from graphmatch.tasks.keys import TaskKeys, keys_of
from graphmatch.tasks.recipes.keys import build, key

OPTIMIZERS = ("adamw", "adam", "rmsprop", "adadelta", "sgd")
SCHEDULES = ("linear", "constant")
PRECISIONS = ("auto", "32-true", "16-mixed", "bf16-mixed", "bf16-true", "16-true", "64-true")
ACCELERATORS = ("auto", "cpu", "gpu", "cuda", "mps")
S = TypeVar("S")


@dataclass(frozen=True)
class Optim:
    """The ``optim`` section: optimiser, learning rates, schedule, clipping."""

    optimizer: Literal["adamw", "adam", "rmsprop", "adadelta", "sgd"] = key("adamw", "the optimiser")
    lr: float = key(1e-3, "learning rate of everything but the encoder", interval="(0, inf)")
    encoder_lr: float | None = key(None, "learning rate of Task.encoder_parameters() (a pretrained encoder); "
                                         "null = lr", interval="(0, inf)")
    layer_decay: float | None = key(None, "encoder layer k of L trains at encoder_lr × layer_decay^(L − k); "
                                          "null = off", interval="(0, 1]")
    weight_decay: float = key(0.0, "on weight matrices only, never on biases or norm gains", interval="[0, inf)")
    momentum: float = key(0.0, "momentum of rmsprop and sgd")
    fused: bool = key(True, "adamw, adam and sgd update every tensor in one fused kernel (on the CPU about 8x "
                            "faster than one tensor at a time; the same update to rounding); false = torch's "
                            "loop over tensors, which the documented tables were trained with")
    warmup: float = key(0.0, "fraction of the optimiser steps with a linear warm-up from 0", interval="[0, 1)")
    schedule: Literal["linear", "constant"] = key("linear", "after warm-up: linear decay to 0 at the last step, "
                                                            "or constant")
    clip: float | None = key(None, "clip the global gradient norm to this; null = no clipping", interval="(0, inf)")


def _devices(value: Any) -> str | None:
    ok = (value == "auto" or (isinstance(value, int) and not isinstance(value, bool) and value >= 1)
          or (isinstance(value, list) and all(isinstance(i, int) and not isinstance(i, bool) and i >= 0
                                              for i in value)))
    return None if ok else "'auto', a count >= 1 or a list of device ids"


@dataclass(frozen=True)
class Train:
    """The ``train`` section: batches, epochs, devices, seeds, run-time switches."""

    batch_size: int = key(32, "training batch size per process", interval="[1, inf)")
    eval_batch_size: int | None = key(None, "dev/test batch size; null = batch_size", interval="[1, inf)")
    epochs: int = key(3, "training epochs", interval="[1, inf)")
    max_steps: int | None = key(None, "stop after this many optimiser steps (the schedule spans them)",
                                interval="[1, inf)")
    patience: int | None = key(None, "early stopping after this many dev evaluations without a better score",
                               interval="[1, inf)")
    seed: int = key(42, "pl.seed_everything(seed, workers=True); also seeds the training order", interval="[0, inf)")
    precision: str | int = key("auto", "auto = bf16-mixed (or 16-mixed) on a GPU; on a CPU bf16-mixed where it has "
                                       "bf16 units (avx512_bf16, amx_bf16), else 32-true; or a Lightning "
                                       "precision (32 = 32-true)", choices=PRECISIONS,
                               convert=lambda v: f"{v}-true" if isinstance(v, int) else v)
    accelerator: Literal["auto", "cpu", "gpu", "cuda", "mps"] = key("auto", "the device kind")
    devices: int | str | list[int] = key(1, "devices per node: a count, auto, or a list of ids", check=_devices,
                                         allowed="`auto`, a count >= 1, a list of ids")
    strategy: str = key("auto", "Lightning strategy, e.g. ddp")
    num_nodes: int = key(1, "nodes for multi-node DDP", interval="[1, inf)")
    val_every_steps: int | None = key(None, "evaluate on dev every N optimiser steps; null = after every epoch",
                                      interval="[1, inf)")
    num_workers: int = key(0, "data loader worker processes", interval="[0, inf)")
    threads: int = key(2, "torch CPU threads per process", interval="[1, inf)")
    deterministic: bool = key(False, "torch.use_deterministic_algorithms (Lightning's deterministic)")
    progress: bool = key(True, "progress bars (data building and training) and the model summary")
    resume: str | None = key(None, "a run folder or .ckpt to continue from (as --resume)")
    monitor: str | None = key(None, "the dev metric that selects the checkpoint (higher is better); null = the "
                                    "task's default")
    bucket: bool = key(False, "training batches of samples of similar size (token nodes): less padding")
    keep_last: bool = key(False, "keep last.ckpt (weights and optimiser state) once the run completes; it is "
                                 "removed then by default (best.ckpt holds the weights only)")



@dataclass(frozen=True)
class Recipe:
    """A resolved recipe: its task, name, description and checked sections. ``config`` is the
    plain form it was made from (``config.yaml``, a checkpoint's ``config``)."""

    task: str
    name: str
    description: str
    data: Any
    model: Any
    optim: Optim
    train: Train
    config: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def of(cls, config: Recipe | Mapping[str, Any], keys: type[TaskKeys] | None = None) -> Recipe:
        """The typed form of a resolved configuration (a :class:`Recipe` is returned as it is);
        ``keys``: the task's declarations (default: those of the task ``config`` names)."""
        if isinstance(config, Recipe):
            return config
        plain = dict(config)
        keys = keys if keys is not None else keys_of(plain["task"])
        data, model = keys.sections(plain["data"], plain["model"])
        return cls(task=plain["task"], name=plain["name"], description=plain.get("description") or "", data=data,
                   model=model, optim=build(Optim, plain["optim"]), train=build(Train, plain["train"]), config=plain)

    def with_train(self, **values: Any) -> Recipe:
        """This recipe with the ``train`` keys ``values`` changed (in both forms)."""
        return self._with("train", values)

    def with_model(self, **values: Any) -> Recipe:
        """This recipe with the ``model`` keys ``values`` changed (in both forms)."""
        return self._with("model", values)

    def _with(self, section: str, values: dict[str, Any]) -> Recipe:
        plain = {**self.config, section: {**self.config[section], **values}}
        return replace(self, **{section: replace(getattr(self, section), **values)}, config=plain)


def typed(cls: type[S], section: S | Mapping[str, Any]) -> S:
    """``section`` as its dataclass ``cls``: a plain, checked mapping built, an instance as it is."""
    return section if isinstance(section, cls) else build(cls, section)
