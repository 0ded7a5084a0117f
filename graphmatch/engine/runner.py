"""Train, evaluate, predict and load: the engine's public entry points.

:func:`train` runs one recipe through a Lightning ``Trainer`` (or several seeds of it) and
writes a run folder (see :mod:`graphmatch.engine.runs`); the checkpoint is selected on dev and
test is evaluated once, with it. :func:`evaluate`, :func:`predict` and :func:`load` rebuild the
task and model from a checkpoint's own configuration.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import lightning.pytorch as pl
import torch
from lightning.fabric.utilities.exceptions import MisconfigurationException
from lightning.pytorch.callbacks import Callback, EarlyStopping, ModelCheckpoint, TQDMProgressBar
from torch_geometric.data import Batch

from graphmatch.engine import runs
from graphmatch.engine.checkpoint import (
    META,
    AtomicCheckpointIO,
    check_state_dict,
    find_checkpoint,
    model_state,
    read_checkpoint,
)
from graphmatch.engine.config import RUNTIME_KEYS, diff, resolve, sample_limit, task_class
from graphmatch.engine.datamodule import GraphDataModule, IndexedDataset
from graphmatch.engine.module import TaskModule
from graphmatch.tasks.base import Task

RUN_DIR_ENV = "GRAPHMATCH_RUN_DIR"  # set by rank 0 so the processes Lightning launches agree

_QUIET = (
    r".*does not have many workers.*",
    r".*Checkpoint directory .* exists and is not empty.*",
    r".*smaller than the logging interval.*",
    r".*LightningDataset.*",
    r".*`isinstance\(treespec, LeafSpec\)` is deprecated.*",
    r".*when logging on epoch level in distributed setting.*",  # our figures are gathered already
)


class _NoAdvertising(logging.Filter):
    """Drops Lightning's "💡 Tip: ... try installing litlogger / litmodels" lines."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not ("Tip:" in message and ("litlogger" in message or "litmodels" in message))


_NO_ADVERTISING = _NoAdvertising()


def _quiet(progress: bool) -> None:
    for pattern in _QUIET:
        warnings.filterwarnings("ignore", message=pattern)
    level = logging.INFO if progress else logging.WARNING
    for name in ("lightning.pytorch", "lightning.fabric", "lightning"):
        logging.getLogger(name).setLevel(level)
    # the tips are logged through lightning's rank-zero helpers (one logger per package)
    for name in ("lightning.pytorch.utilities.rank_zero", "lightning.fabric.utilities.rank_zero"):
        logger = logging.getLogger(name)
        if _NO_ADVERTISING not in logger.filters:
            logger.addFilter(_NO_ADVERTISING)


def _env_rank() -> int:
    """This process's global rank as the launcher announced it (0 when not distributed)."""
    for var in ("RANK", "SLURM_PROCID"):
        if var in os.environ:
            return int(os.environ[var])
    local, node = int(os.environ.get("LOCAL_RANK", 0)), int(os.environ.get("NODE_RANK", 0))
    return local + node  # nonzero exactly when not the first process


def _uses_gpu(train_cfg: Mapping[str, Any]) -> bool:
    return train_cfg["accelerator"] in ("gpu", "cuda", "auto") and torch.cuda.is_available()


def _check_accelerator(train_cfg: Mapping[str, Any]) -> None:
    """A GPU asked for on a machine without one is the user's error, said before anything runs."""
    accelerator = train_cfg["accelerator"]
    if accelerator in ("gpu", "cuda") and not torch.cuda.is_available():
        raise ValueError(f"train.accelerator={accelerator}, but torch sees no CUDA GPU on this machine; "
                         "use train.accelerator=auto (or cpu)")
    if accelerator == "mps" and not torch.backends.mps.is_available():
        raise ValueError("train.accelerator=mps, but this machine has no Apple GPU; use train.accelerator=auto")


def _trainer(**kwargs: Any) -> pl.Trainer:
    """``pl.Trainer(**kwargs)``; Lightning's rejection of the settings (devices, strategy,
    precision) is a ValueError, which the command line shows as one line."""
    try:
        return pl.Trainer(**kwargs)
    except MisconfigurationException as err:
        raise ValueError(f"the train settings do not work on this machine: {err}") from err


def _precision(train_cfg: Mapping[str, Any]) -> str:
    if train_cfg["precision"] != "auto":
        return train_cfg["precision"]
    if _uses_gpu(train_cfg):
        return "bf16-mixed" if torch.cuda.is_bf16_supported() else "16-mixed"
    return "32-true"


def build_trainer(
    config: Mapping[str, Any],
    run_dir: Path,
    monitor: str,
    callbacks: Sequence[Callback] = (),
    steps_per_epoch: int | None = None,
) -> pl.Trainer:
    """A Lightning ``Trainer`` for ``config``: best-on-dev + last checkpoints in ``run_dir``
    (atomic writes), optional early stopping, clipping, precision, devices and strategy.
    A ``max_steps`` shorter than an epoch evaluates on dev when it is reached."""
    t, o = config["train"], config["optim"]
    select = ModelCheckpoint(
        dirpath=run_dir,
        filename="best",
        monitor=f"dev/{monitor}",
        mode="max",
        save_top_k=1,
        auto_insert_metric_name=False,
        enable_version_counter=False,
    )
    # Lightning's save_last only writes when a new best is saved; a run resumes from the latest
    # state, so last.ckpt has its own callback, listed after `select` so it stores its updated state
    latest = ModelCheckpoint(dirpath=run_dir, filename="last", save_top_k=1, enable_version_counter=False)
    cbs: list[Callback] = [select, latest, *callbacks]
    if t["progress"]:
        cbs.append(TQDMProgressBar())
    if t["patience"]:
        cbs.append(EarlyStopping(monitor=f"dev/{monitor}", mode="max", patience=t["patience"]))
    every: dict[str, Any] = {}
    if t["val_every_steps"]:
        every = {"val_check_interval": t["val_every_steps"], "check_val_every_n_epoch": None}
    elif t["max_steps"] and steps_per_epoch and t["max_steps"] < steps_per_epoch:
        every = {"val_check_interval": t["max_steps"]}
    return _trainer(
        accelerator=t["accelerator"],
        devices=t["devices"],
        num_nodes=t["num_nodes"],
        strategy=t["strategy"],
        precision=_precision(t),
        max_epochs=t["epochs"],
        max_steps=t["max_steps"] or -1,
        gradient_clip_val=o["clip"],
        gradient_clip_algorithm="norm" if o["clip"] else None,
        callbacks=cbs,
        logger=False,
        enable_progress_bar=t["progress"],
        enable_model_summary=t["progress"],
        num_sanity_val_steps=0,
        use_distributed_sampler=False,
        deterministic=t["deterministic"],
        default_root_dir=run_dir,
        plugins=[AtomicCheckpointIO()],
        **every,
    )


def _splits(task: Task, config: Mapping[str, Any]) -> dict[str, IndexedDataset]:
    data = task.datasets()
    for split in ("train", "dev"):
        if split not in data or data[split] is None:
            raise ValueError(
                f"task {task.name!r} gave no {split!r} split; the engine trains on train and selects "
                "checkpoints on dev (never on test)"
            )
    out = {"train": IndexedDataset(data["train"], sample_limit(config, "train"))}
    for split in ("dev", "test"):
        if data.get(split) is not None:
            out[split] = IndexedDataset(data[split], sample_limit(config, split))
    return out


@contextlib.contextmanager
def cpu_threads(train_cfg: Mapping[str, Any]) -> Iterator[None]:
    """Use ``train.threads`` torch CPU threads (on a CPU run) for the duration of the block, and
    give the caller's process its own thread count back afterwards."""
    before = torch.get_num_threads()
    if not _uses_gpu(train_cfg):
        torch.set_num_threads(train_cfg["threads"])
    try:
        yield
    finally:
        torch.set_num_threads(before)


# ------------------------------------------------------------------------------- train
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
            A folder whose run stopped before it saved anything (:func:`runs.nothing_saved`)
            starts again in place, with ``recipe``/``overrides`` when given, else its own
            configuration; ``run_dir`` may also name such a folder.
        callbacks: extra Lightning callbacks.
    """
    if seeds < 1:
        raise ValueError(f"--seeds must be >= 1, got {seeds}")
    config = resolve(recipe, overrides) if recipe is not None else None
    resume = resume or (config["train"]["resume"] if config else None)
    ckpt: Path | None = None
    resume_dir = False
    if resume is not None:
        resume = Path(resume)
        if resume.is_dir():
            saved = runs.read_yaml(resume / "config.yaml") if (resume / "config.yaml").is_file() else None
            if saved is None:
                raise ValueError(f"cannot resume {resume}: it is not a run folder (no config.yaml)")
            if runs.nothing_saved(resume):  # nothing to continue: start again, with what is given
                config = config if config is not None else resolve(saved, overrides, stored=True)
            else:
                config = _same_config(resume, resolve(saved, stored=True), config, overrides if recipe is None else ())
            run_dir, resume_dir = run_dir or resume, True
            if (resume / "seeds.json").is_file():
                seeds = len(json.loads((resume / "seeds.json").read_text())["seeds"])
        elif resume.is_file():
            ckpt = resume
            saved = read_checkpoint(resume)[META]["config"]
            config = _same_config(resume, resolve(saved, stored=True), config, overrides if recipe is None else ())
        else:
            raise FileNotFoundError(f"nothing to resume at {resume}")
    if config is None:
        raise ValueError("give a recipe to train, or --resume a run folder or checkpoint")
    config["train"]["resume"] = None
    _check_accelerator(config["train"])
    _quiet(config["train"]["progress"])

    if _env_rank() != 0 and os.environ.get(RUN_DIR_ENV):
        base = Path(os.environ[RUN_DIR_ENV])  # a process launched by rank 0: same folder
    elif run_dir is not None:
        base = Path(run_dir)
    elif int(os.environ.get("WORLD_SIZE", 1)) > 1:
        raise ValueError("pass --out DIR (run_dir=) when launching several processes, so they share one run folder")
    else:
        base = runs.default_run_dir(config["task"], config["name"])
    if base.exists() and not base.is_dir():
        raise ValueError(f"the run folder {base} is a file; give --out a folder (new, or a run to --resume)")
    if _env_rank() == 0:
        os.environ[RUN_DIR_ENV] = str(base.resolve())

    with cpu_threads(config["train"]):
        if seeds == 1 and not (base / "seeds.json").is_file():
            return _train_one(config, base, ckpt=ckpt, resume_dir=resume_dir, callbacks=callbacks)
        return _train_seeds(config, base, seeds, resume_dir=resume_dir, callbacks=callbacks)


def _same_config(
    source: Path, saved: dict[str, Any], given: dict[str, Any] | None, overrides: Sequence[str]
) -> dict[str, Any]:
    """The saved configuration of what is resumed; a differing recipe is an error."""
    if given is None:
        given = resolve(saved, overrides, stored=True)
    differ = [k for k in diff(saved, given) if tuple(k.split(".", 1)) not in RUNTIME_KEYS]
    if differ:
        raise ValueError(
            f"cannot resume {source}: the recipe differs from the run's configuration in {', '.join(differ)}; "
            "resume with the same recipe (or without one)"
        )
    for section, key in RUNTIME_KEYS:
        saved[section][key] = given[section][key]
    return saved


def _train_seeds(
    config: dict[str, Any], base: Path, seeds: int, *, resume_dir: bool, callbacks: Sequence[Callback]
) -> Path:
    first = config["train"]["seed"]
    seed_list = list(range(first, first + seeds))
    if _env_rank() == 0:
        if resume_dir:
            if runs.is_complete(base):
                print(f"{base} is already complete; nothing to resume")
                return base
        elif base.exists() and any(base.iterdir()) and not runs.nothing_saved(base):
            raise ValueError(f"run folder {base} already exists and is not empty; choose another --out or --resume it")
        base.mkdir(parents=True, exist_ok=True)
        runs.clear_complete(base)
        runs.write_yaml(base / "config.yaml", config)
        runs.write_json(base / "seeds.json", {"seeds": seed_list})
    dirs = []
    for seed in seed_list:
        cfg = {**config, "train": {**config["train"], "seed": seed}}
        sub = base / f"seed-{seed}"
        dirs.append(_train_one(cfg, sub, ckpt=None, resume_dir=resume_dir and sub.exists(), callbacks=callbacks))
    if _env_rank() == 0:
        runs.aggregate(dirs, base, config)
        runs.mark_complete(base)
    return base


def _train_one(
    config: dict[str, Any], run_dir: Path, *, ckpt: Path | None, resume_dir: bool, callbacks: Sequence[Callback]
) -> Path:
    t = config["train"]
    if resume_dir:
        if runs.is_complete(run_dir):
            if _env_rank() == 0:
                print(f"{run_dir} is already complete; nothing to resume")
            return run_dir
        last = run_dir / "last.ckpt"
        ckpt = last if last.is_file() else None  # stopped before the first checkpoint: start over
    if (_env_rank() == 0 and not resume_dir and run_dir.exists() and any(run_dir.iterdir())
            and not runs.nothing_saved(run_dir)):
        raise ValueError(
            f"run folder {run_dir} already exists and is not empty; choose another --out, "
            f"or continue it with --resume {run_dir}"
        )

    pl.seed_everything(t["seed"], workers=True, verbose=False)
    task = task_class(config["task"])(config)
    splits = _splits(task, config)
    model = task.build_model()
    if ckpt is None:
        task.load_pretrained(model)
    module = TaskModule(task, model, config)
    if _env_rank() == 0:  # made once data, model and pretrained weights are ready: a bad input leaves no folder
        run_dir.mkdir(parents=True, exist_ok=True)
        runs.clear_complete(run_dir)
        runs.write_yaml(run_dir / "config.yaml", config)
    data = GraphDataModule(
        splits["train"],
        splits["dev"],
        splits.get("test"),
        batch_size=t["batch_size"],
        eval_batch_size=t["eval_batch_size"] or t["batch_size"],
        seed=t["seed"],
        num_workers=t["num_workers"],
        bucket=t["bucket"],
    )
    shard = math.ceil(len(splits["train"]) / (t["devices"] if isinstance(t["devices"], int) else 1))
    trainer = build_trainer(config, run_dir, task.monitor, callbacks, math.ceil(shard / t["batch_size"]))
    trainer.fit(module, datamodule=data, ckpt_path=ckpt)
    if trainer.interrupted:
        raise runs.RunError(f"training was interrupted; continue with: graphmatch train --resume {run_dir}")
    best = trainer.checkpoint_callback.best_model_path if trainer.checkpoint_callback else ""
    if not best:
        raise runs.RunError("no checkpoint was selected: dev was never evaluated (is the training set empty?)")
    train_time = module.elapsed()
    history = list(module.history)

    trainer.validate(module, datamodule=data, ckpt_path=best, verbose=False)
    selected = dict(module.loaded_step)
    if "test" in splits:
        trainer.test(module, datamodule=data, ckpt_path=best, verbose=False)

    if trainer.is_global_zero:
        metrics = {
            "task": config["task"],
            "recipe": config["name"],
            "seed": t["seed"],
            "monitor": task.monitor,
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
        }
        for split in ("dev", "test"):
            if split in module.rows:
                runs.write_predictions(task, run_dir, split, module.rows[split])
        runs.write_json(run_dir / "history.json", history)
        runs.plot_curve(
            {config["name"]: history}, task.monitor, run_dir / "curve.png", {config["name"]: metrics["best_step"]}
        )
        runs.write_json(run_dir / "metrics.json", metrics)
        runs.write_summary(run_dir, config, metrics)
        runs.mark_complete(run_dir)
    return run_dir


# ---------------------------------------------------------------------- load / evaluate
def _checkpoint_of(run_or_ckpt: str | os.PathLike) -> Path:
    path = Path(run_or_ckpt)
    if path.is_dir():
        runs.check_complete(path)
        if (path / "seeds.json").is_file():
            raise ValueError(f"{path} holds several seeds; give one of its seed-<n> folders")
    return find_checkpoint(path, "best")


def _restore(meta: Mapping[str, Any], config: dict[str, Any], with_data: bool) -> tuple[Task, dict[str, Any]]:
    task = task_class(config["task"])(config)
    if meta.get("task_state") is not None:
        task.set_extra_state(meta["task_state"])
    data = task.datasets() if with_data or meta.get("task_state") is None else {}
    if list(task.label_names()) != list(meta["label_names"]):
        raise ValueError(
            f"the labels of the data ({task.label_names()}) differ from the checkpoint's ({meta['label_names']})"
        )
    return task, data


def _model_from(ckpt: Mapping[str, Any], task: Task, source: Path) -> torch.nn.Module:
    model = task.build_model()
    state = model_state(ckpt)
    check_state_dict(model, state, str(source))
    model.load_state_dict(state)
    return model.eval()


def load(run_or_ckpt: str | os.PathLike) -> tuple[Task, torch.nn.Module]:
    """The task and the model (eval mode, selected weights) of a run folder or checkpoint.

    The task is rebuilt from the checkpoint's configuration and its stored state (label names,
    vocabularies, via ``Task.set_extra_state``).
    A checkpoint that does not fit the model its configuration builds is a ValueError.
    """
    path = _checkpoint_of(run_or_ckpt)
    ckpt = read_checkpoint(path)
    meta = ckpt[META]
    task, _ = _restore(meta, resolve(meta["config"], stored=True), with_data=False)
    return task, _model_from(ckpt, task, path)


def evaluate(
    run_or_ckpt: str | os.PathLike,
    split: str = "test",
    overrides: Sequence[str] = (),
    predictions: str | os.PathLike | None = None,
) -> dict[str, float]:
    """Metrics of a run's selected checkpoint (or of a checkpoint) on ``split`` (dev or test).

    Args:
        run_or_ckpt: run folder (its ``best.ckpt``) or checkpoint file.
        split: ``"dev"`` or ``"test"``.
        overrides: ``--set`` strings for where and how to read data (e.g. ``data.root=...``,
            ``train.eval_batch_size=64``); the model keys of a checkpoint cannot change.
        predictions: also write the rows to this JSONL file (and the task's official formats).
    """
    if split not in ("dev", "test"):
        raise ValueError(f"--split must be dev or test, got {split!r}")
    if predictions is not None and Path(predictions).is_dir():
        raise ValueError(f"--predictions {predictions} is a folder; give the file to write (e.g. OUT.jsonl)")
    path = _checkpoint_of(run_or_ckpt)
    ckpt = read_checkpoint(path)
    meta = ckpt[META]
    config = resolve(meta["config"], overrides, stored=True)
    changed = [k for k in diff(resolve(meta["config"], stored=True), config) if k.startswith("model.")]
    if changed:
        raise ValueError(f"model keys cannot change when evaluating a checkpoint: {', '.join(changed)}")
    _check_accelerator(config["train"])
    _quiet(config["train"]["progress"])
    with cpu_threads(config["train"]):
        task, data = _restore(meta, config, with_data=True)
        if data.get(split) is None:
            raise ValueError(f"task {task.name!r} has no {split!r} split")
        dataset = IndexedDataset(data[split], sample_limit(config, split))
        module = TaskModule(task, _model_from(ckpt, task, path), config)
        module.split = split
        batch = config["train"]["eval_batch_size"] or config["train"]["batch_size"]
        loaders = GraphDataModule(dataset, dataset, None, batch, batch, seed=0).val_dataloader()
        trainer = _trainer(
            accelerator=config["train"]["accelerator"],
            devices=1,
            precision=_precision(config["train"]),
            logger=False,
            enable_progress_bar=config["train"]["progress"],
            enable_model_summary=False,
            callbacks=[TQDMProgressBar()] if config["train"]["progress"] else [],
        )
        trainer.validate(module, dataloaders=loaders, verbose=False)
        if predictions is not None:  # JSON lines, plus the task's official formats beside them
            Path(predictions).parent.mkdir(parents=True, exist_ok=True)
            task.write_predictions(str(predictions), runs.to_plain(module.rows[split]))
        return module.metrics[split]


def predict(run_or_ckpt: str | os.PathLike, text: str, text_b: str | None = None) -> dict[str, Any]:
    """The decoded row (``pred``, ``prob``, ...) for one raw input (``gold`` is ``None``)."""
    task, model = load(run_or_ckpt)
    return predict_graph(task, model, task.encode(text, text_b))


def predict_graph(task: Task, model: torch.nn.Module, data: Any) -> dict[str, Any]:
    """The decoded row for one input graph (``task.encode``) with a loaded task and model."""
    batch = Batch.from_data_list([data])
    with torch.no_grad():
        row = task.decode(model(batch), batch)[0]
    return runs.to_plain(row)
