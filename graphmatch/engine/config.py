"""Recipes: reading YAML, inheriting with ``base:``, ``--set key=value`` overrides, validation.

A recipe has the sections ``data`` and ``model`` (owned by the task; every valid key and its
default is in ``Task.defaults``), ``optim`` and ``train`` (owned by the engine; defaults in
:data:`ENGINE_DEFAULTS`), plus ``task`` (a registered task name, or ``"package.module:name"``
for a task defined outside graphmatch), and optionally ``name``, ``description`` and ``base``
(a recipe file, relative to this one, whose values this one overrides). :func:`resolve` returns
the complete configuration: every key present, every value checked.
"""

from __future__ import annotations

import copy
import importlib
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from graphmatch.datafiles import package_folder
from graphmatch.tasks.base import Task, get_task, task_names

OPTIMIZERS = ("adamw", "adam", "rmsprop", "adadelta", "sgd")
SCHEDULES = ("linear", "constant")
PRECISIONS = ("auto", "32-true", "16-mixed", "bf16-mixed", "bf16-true", "16-true", "64-true")
ACCELERATORS = ("auto", "cpu", "gpu", "cuda", "mps")

ENGINE_DEFAULTS: dict[str, dict[str, Any]] = {
    "optim": {
        "optimizer": "adamw",  # adamw | adam | rmsprop | adadelta | sgd
        "lr": 1e-3,
        "encoder_lr": None,  # learning rate of task.encoder_parameters(); null = lr
        "layer_decay": None,  # encoder layer k of L trains at encoder_lr * layer_decay^(L - k); null = off
        "weight_decay": 0.0,  # on weight matrices only, never on biases or norm gains
        "momentum": 0.0,  # rmsprop and sgd
        "warmup": 0.0,  # fraction of the optimisation steps with a linear warm-up
        "schedule": "linear",  # after warm-up: linear decay to 0 | constant
        "clip": None,  # max global gradient norm; null = no clipping
    },
    "train": {
        "batch_size": 32,
        "eval_batch_size": None,  # null = batch_size
        "epochs": 3,
        "max_steps": None,  # stop after this many optimiser steps (the schedule spans them)
        "patience": None,  # early stopping after this many evaluations without a better dev score
        "seed": 42,
        "precision": "auto",  # auto = bf16-mixed (or 16-mixed) on a GPU, 32-true on CPU
        "accelerator": "auto",
        "devices": 1,
        "strategy": "auto",  # e.g. ddp
        "num_nodes": 1,
        "val_every_steps": None,  # evaluate on dev every N steps; null = after every epoch
        "limit_train": None,  # first N training samples (int) or a fraction (float in (0, 1])
        "limit_eval": None,  # same for dev and test
        "num_workers": 0,
        "threads": 2,  # torch CPU threads per process
        "deterministic": False,  # torch.use_deterministic_algorithms
        "progress": True,  # progress bars
        "resume": None,  # a run folder or a .ckpt to continue from
        "bucket": False,  # batches of samples of similar size (token nodes): less padding
    },
}
TOP_LEVEL = ("task", "name", "description", "base", "data", "model", "optim", "train")
SECTIONS = ("data", "model", "optim", "train")
#: engine keys that take values of several kinds (checked by _check_engine instead)
FLEXIBLE = {"train.precision", "train.devices"}
#: keys that may differ between an interrupted run and its resumption
RUNTIME_KEYS = {("train", "resume"), ("train", "progress"), ("train", "num_workers"), ("train", "threads")}


class _Loader(yaml.SafeLoader):
    """YAML loader that also reads ``2e-5`` (no dot) as a float, as people write learning rates."""


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?[0-9][0-9_]*(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def load_yaml(text: str) -> Any:
    """Parse YAML text the way recipes are read."""
    return yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass


# --------------------------------------------------------------------------- files
def recipe_dirs() -> list[Path]:
    """Folders searched for a recipe given by name: ``./recipes``, then the project's recipes
    (``recipes/`` of a checkout, or those the installed package carries)."""
    return list(dict.fromkeys([Path.cwd() / "recipes", package_folder("recipes", "recipes")]))


def find_recipe(name: str | os.PathLike) -> Path:
    """A recipe path: ``name`` itself, ``name.yaml``, or ``<recipes dir>/name[.yaml]``."""
    candidates = [Path(name), Path(f"{name}.yaml")]
    for d in recipe_dirs():
        candidates += [d / name, d / f"{name}.yaml"]
    for c in candidates:
        if c.is_file():
            return c
    known = sorted(
        {str(p.relative_to(d).with_suffix("")) for d in recipe_dirs() if d.is_dir() for p in d.rglob("*.yaml")}
    )
    raise FileNotFoundError(f"recipe {str(name)!r} not found; known recipes: {', '.join(known) or '(none)'}")


def read_recipe(path: str | os.PathLike, _seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """Load a recipe file, merging it over its ``base:`` recipe (recursively)."""
    path = find_recipe(path)
    real = path.resolve()
    if real in _seen:
        raise ValueError(f"recipe {path} inherits from itself through 'base:'")
    with open(path, encoding="utf-8") as f:
        try:
            raw = load_yaml(f.read()) or {}
        except yaml.YAMLError as err:
            raise ValueError(f"recipe {path} is not valid YAML: {err}") from err
    if not isinstance(raw, dict):
        raise ValueError(f"recipe {path} must be a mapping with sections {', '.join(SECTIONS)}")
    raw.setdefault("name", path.stem)
    base = raw.pop("base", None)
    if base is None:
        return raw
    parent = read_recipe(real.parent / base, _seen + (real,))
    parent.pop("name", None)
    return deep_merge(parent, raw)


def deep_merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` updated by ``over``; nested mappings merge, everything else is replaced."""
    out = copy.deepcopy(dict(base))
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


# --------------------------------------------------------------------------- tasks
def task_class(name: str) -> type[Task]:
    """The task registered as ``name``; ``"package.module:name"`` imports the module first."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"the recipe's 'task' must be a task name; known tasks: {', '.join(task_names())}")
    if ":" in name:
        module, _, registered = name.partition(":")
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as err:
            raise ValueError(f"task {name!r}: cannot import module {module!r} ({err})") from err
        return get_task(registered)
    return get_task(name)


# --------------------------------------------------------------------------- overrides
def parse_overrides(items: Sequence[str]) -> list[tuple[list[str], Any]]:
    """``["train.epochs=2", "model.hidden=64"]`` → ``[(["train", "epochs"], 2), ...]``;
    values are read as YAML (numbers, booleans, null, lists)."""
    out = []
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--set expects key=value (e.g. train.epochs=2), got {item!r}")
        try:
            value = load_yaml(text) if text.strip() else None
        except yaml.YAMLError:
            value = text
        out.append((key.strip().split("."), value))
    return out


def _set(config: dict[str, Any], path: list[str], value: Any, defaults: Mapping[str, Any]) -> None:
    if path[0] in ("task", "name", "description") and len(path) == 1:
        config[path[0]] = value
        return
    node, spec = config, defaults
    for depth, key in enumerate(path):
        where = ".".join(path[:depth]) or "top level"
        if not isinstance(spec, Mapping) or key not in spec:
            valid = sorted(spec) if isinstance(spec, Mapping) else []
            raise ValueError(f"unknown recipe key {'.'.join(path)!r}; valid keys of {where}: {', '.join(valid)}")
        if depth == len(path) - 1:
            node[key] = value
        else:
            if not isinstance(node.get(key), dict):
                node[key] = {}
            node, spec = node[key], spec[key]


# --------------------------------------------------------------------------- checks
def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "list"
    if isinstance(value, Mapping):
        return "mapping"
    return type(value).__name__


def _check_like_defaults(
    config: Mapping[str, Any], defaults: Mapping[str, Any], where: str, kinds: Mapping[str, str] | None = None
) -> None:
    """Unknown keys are errors; a value must have its default's kind. A null default takes a
    value of the kind ``kinds`` names for it (``Task.kinds``), else any value."""
    kinds = kinds or {}
    for key, value in config.items():
        name = f"{where}.{key}"
        if key not in defaults:
            raise ValueError(f"unknown recipe key {name!r}; valid keys of {where}: {', '.join(sorted(defaults))}")
        default = defaults[key]
        if default is None and value is not None and key in kinds:
            _check_kind(name, value, kinds[key])
        if default is None or value is None or name in FLEXIBLE:
            continue
        if isinstance(default, Mapping) and isinstance(value, Mapping):
            _check_like_defaults(value, default, name)
        elif _kind(value) != _kind(default):
            raise ValueError(f"{name} must be a {_kind(default)} like its default {default!r}, got {value!r}")
        elif isinstance(default, int) and not isinstance(default, bool) and isinstance(value, float):
            raise ValueError(f"{name} must be an integer, got {value!r}")


def _check_kind(name: str, value: Any, kind: str) -> None:
    """``value`` of a null-default key must be of ``kind`` (a :func:`_kind` name, or ``integer``)."""
    if kind == "integer":
        if not _int_at_least(value, -(2**63)):
            raise ValueError(f"{name} must be an integer or null, got {value!r}")
    elif _kind(value) != kind:
        raise ValueError(f"{name} must be a {kind} or null, got {value!r}")


def _require(ok: bool, message: str) -> None:
    if not ok:
        raise ValueError(message)


def _int_at_least(value: Any, low: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= low


def _check_engine(config: dict[str, Any]) -> None:
    o, t = config["optim"], config["train"]
    _require(o["optimizer"] in OPTIMIZERS, f"optim.optimizer must be one of {OPTIMIZERS}, got {o['optimizer']!r}")
    _require(o["schedule"] in SCHEDULES, f"optim.schedule must be one of {SCHEDULES}, got {o['schedule']!r}")
    _require(o["lr"] > 0, f"optim.lr must be positive, got {o['lr']}")
    _require(o["encoder_lr"] is None or o["encoder_lr"] > 0, "optim.encoder_lr must be positive or null")
    _require(o["layer_decay"] is None or (_kind(o["layer_decay"]) == "number" and 0 < o["layer_decay"] <= 1),
             f"optim.layer_decay must be in (0, 1] or null, got {o['layer_decay']!r}")
    _require(0 <= o["warmup"] < 1, f"optim.warmup is a fraction of the steps in [0, 1), got {o['warmup']}")
    _require(o["weight_decay"] >= 0, "optim.weight_decay must be >= 0")
    _require(o["clip"] is None or o["clip"] > 0, "optim.clip must be positive or null")
    for key in ("batch_size", "epochs", "num_nodes", "threads"):
        _require(_int_at_least(t[key], 1), f"train.{key} must be an integer >= 1, got {t[key]!r}")
    for key in ("eval_batch_size", "max_steps", "patience", "val_every_steps"):
        _require(t[key] is None or _int_at_least(t[key], 1), f"train.{key} must be an integer >= 1 or null")
    _require(_int_at_least(t["num_workers"], 0), "train.num_workers must be an integer >= 0")
    _require(_int_at_least(t["seed"], 0), "train.seed must be an integer >= 0")
    for key in ("limit_train", "limit_eval"):
        v = t[key]
        ok = v is None or _int_at_least(v, 1) or (isinstance(v, float) and 0 < v <= 1)
        _require(ok, f"train.{key} must be a sample count >= 1, a fraction in (0, 1] or null, got {v!r}")
    if isinstance(t["precision"], int):
        t["precision"] = f"{t['precision']}-true"
    _require(t["precision"] in PRECISIONS, f"train.precision must be one of {PRECISIONS}, got {t['precision']!r}")
    _require(t["accelerator"] in ACCELERATORS, f"train.accelerator must be one of {ACCELERATORS}")
    d = t["devices"]
    ok = d == "auto" or _int_at_least(d, 1) or (isinstance(d, list) and all(_int_at_least(i, 0) for i in d))
    _require(ok, f"train.devices must be 'auto', a count >= 1 or a list of device ids, got {d!r}")


def resolve(recipe: str | os.PathLike | Mapping[str, Any], overrides: Sequence[str] = ()) -> dict[str, Any]:
    """The complete, checked configuration of a recipe (path, name or mapping) with overrides.

    Raises:
        ValueError: unknown key (the message lists the valid keys of its section), a value of
            the wrong kind, or an engine option out of range.
        KeyError: unknown task.
    """
    raw = read_recipe(recipe) if isinstance(recipe, (str, os.PathLike)) else copy.deepcopy(dict(recipe))
    raw.pop("base", None)
    unknown = [k for k in raw if k not in TOP_LEVEL]
    if unknown:
        raise ValueError(f"unknown recipe section(s) {unknown}; valid: {', '.join(TOP_LEVEL)}")
    parsed = parse_overrides(overrides)
    for path, value in parsed:
        if path == ["task"]:
            raw["task"] = value
    if "task" not in raw:
        raise ValueError(f"the recipe names no 'task'; known tasks: {', '.join(task_names())}")
    cls = task_class(raw["task"])
    defaults = {"data": cls.defaults.get("data", {}), "model": cls.defaults.get("model", {}), **ENGINE_DEFAULTS}
    for section in SECTIONS:
        value = raw.get(section) or {}
        if not isinstance(value, Mapping):
            raise ValueError(f"recipe section {section!r} must be a mapping, got {value!r}")
        _check_like_defaults(value, defaults[section], section, cls.kinds.get(section))
    config: dict[str, Any] = {"task": raw["task"], "name": str(raw.get("name") or raw["task"])}
    if raw.get("description"):
        config["description"] = raw["description"]
    for section in SECTIONS:
        config[section] = deep_merge(defaults[section], raw.get(section) or {})
    for path, value in parsed:
        if path != ["task"]:
            _set(config, path, value, defaults)
    for section in SECTIONS:
        _check_like_defaults(config[section], defaults[section], section, cls.kinds.get(section))
    _check_engine(config)
    return config


def diff(a: Mapping[str, Any], b: Mapping[str, Any], prefix: str = "") -> list[str]:
    """Dotted keys whose values differ between two configurations."""
    out = []
    for key in sorted(set(a) | set(b), key=str):
        name = f"{prefix}{key}"
        va, vb = a.get(key), b.get(key)
        if isinstance(va, Mapping) and isinstance(vb, Mapping):
            out += diff(va, vb, f"{name}.")
        elif va != vb:
            out.append(name)
    return out
