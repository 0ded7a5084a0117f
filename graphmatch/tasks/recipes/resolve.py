"""Recipes: reading YAML, inheriting with ``base:``, ``--set key=value`` overrides, validation.

A recipe has the sections ``data`` and ``model`` (owned by the task, declared by ``Task.Data`` and
``Task.Model``), ``optim`` and ``train`` (owned by the engine, declared by :class:`Optim` and
:class:`Train`), plus ``task`` (a registered task name, or ``"package.module:name"``
for a task defined outside graphmatch), and optionally ``name``, ``description`` and ``base``
(a recipe file, relative to this one, whose values this one overrides). :func:`resolve` returns
the complete configuration: every key present, every value checked (:mod:`graphmatch.tasks.recipes.keys`),
each error one line naming the key and the recipe file; :func:`resolve_recipe` (or
:meth:`Recipe.of <graphmatch.tasks.recipes.sections.Recipe.of>` of it) gives its typed sections, which the
engine and the task read. Keys of the previous release are renamed
with a warning (:func:`graphmatch.tasks.recipes.keys.upgrade`). Every key: ``docs/recipes.md``
(:func:`key_reference`).
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from graphmatch.io.datafiles import package_folder
from graphmatch.io.text_files import read_text
from graphmatch.io.yaml_values import check_expansion
from graphmatch.tasks.keys import BUILTIN_TASKS, SampleLimits, TaskKeys, declared_names, keys_of
from graphmatch.tasks.recipes.keys import Renamed, check, defaults, specs, suggest, upgrade
from graphmatch.tasks.recipes.sections import Optim, Recipe, Train
from graphmatch.tasks.recipes.shorten import shorten

if TYPE_CHECKING:
    from graphmatch.tasks.base import Task

#: the engine's sections
ENGINE_SECTIONS: dict[str, type] = {"optim": Optim, "train": Train}
#: the engine's plain defaults (derived from the declarations)
ENGINE_DEFAULTS: dict[str, dict[str, Any]] = {name: defaults(cls) for name, cls in ENGINE_SECTIONS.items()}
#: engine keys of the previous release
ENGINE_RENAMED = (
    Renamed("train.limit_train", ("data.limit.train",)),
    Renamed("train.limit_eval", ("data.limit.dev", "data.limit.test")),
)
TOP_LEVEL = ("task", "name", "description", "base", "data", "model", "optim", "train")
SECTIONS = ("data", "model", "optim", "train")
#: keys that may differ between an interrupted run and its resumption
RUNTIME_KEYS = {("train", "resume"), ("train", "progress"), ("train", "num_workers"), ("train", "threads"),
                ("train", "keep_last")}


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


def shipped_recipes() -> list[tuple[str, str]]:
    """``(name, description)`` of every recipe in :func:`recipe_dirs` (``./recipes`` first, then
    the project's or the installed package's), sorted by name; a description a recipe does not
    set comes from its ``base:``, on one line."""
    found: dict[str, Path] = {}
    for d in recipe_dirs():
        if d.is_dir():
            for p in sorted(d.rglob("*.yaml")):
                found.setdefault(p.relative_to(d).with_suffix("").as_posix(), p)
    rows = []
    for name, path in sorted(found.items()):
        said = [str(m["description"]) for _, m in read_chain(path) if m.get("description")]
        rows.append((name, " ".join(said[-1].split()) if said else ""))
    return rows


def find_recipe(name: str | os.PathLike) -> Path:
    """A recipe path: ``name`` itself, ``name.yaml``, or ``<recipes dir>/name[.yaml]``; a checkout's
    path ``recipes/<name>.yaml`` that does not exist here is the packaged recipe ``<name>``."""
    candidates = [Path(name), Path(f"{name}.yaml")]
    packaged = Path(name).as_posix().split("recipes/", 1)[1] if "recipes/" in Path(name).as_posix() else None
    for d in recipe_dirs():
        candidates += [d / name, d / f"{name}.yaml"] + ([d / packaged] if packaged else [])
    for c in candidates:
        if c.is_file():
            return c
    folder = next((c for c in candidates if c.is_dir()), None)
    if folder is not None:
        inside = sorted(str(p.relative_to(folder)) for p in folder.rglob("*.yaml"))
        listed = f"; the recipes in it: {', '.join(inside[:8])}{', ...' if len(inside) > 8 else ''}" if inside else ""
        raise ValueError(f"recipe {folder} is a folder, not a recipe file{listed}")
    known = sorted(
        {p.relative_to(d).with_suffix("").as_posix() for d in recipe_dirs() if d.is_dir() for p in d.rglob("*.yaml")}
    )
    asked = Path(name).as_posix().removesuffix(".yaml")
    asked = asked.split("recipes/", 1)[1] if "recipes/" in asked else asked  # a checkout's path
    near = suggest(asked, known)
    hint = f"did you mean {near}? " if near else ""
    raise FileNotFoundError(f"recipe {str(name)!r} not found; {hint}known recipes: {', '.join(known) or '(none)'}")


def read_chain(path: str | os.PathLike, _seen: tuple[Path, ...] = ()) -> list[tuple[str, dict[str, Any]]]:
    """``(file, mapping)`` of a recipe and of the recipes it inherits from with ``base:`` (a file,
    or a list of files merged in order, each over the one before), the farthest base first (each
    mapping without ``base``; the recipe's own ``name`` defaults to its file name)."""
    path = find_recipe(path)
    real = path.resolve()
    if real in _seen:
        raise ValueError(f"recipe {path} inherits from itself through 'base:'")
    try:
        raw = check_expansion(load_yaml(read_text(path)), f"recipe {path}")
    except yaml.YAMLError as err:  # one line: where and what
        mark = getattr(err, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise ValueError(f"recipe {where} is not valid YAML: {problem}") from err
    if raw is None:
        raise ValueError(f"recipe {path} is empty; a recipe is a mapping with 'task' (or 'base') and the sections "
                         f"{', '.join(SECTIONS)}")
    if not isinstance(raw, dict):
        raise ValueError(f"recipe {path} must be a mapping with sections {', '.join(SECTIONS)}")
    base = raw.pop("base", None)
    bases = [base] if isinstance(base, (str, os.PathLike)) else base if base is not None else []
    if not isinstance(bases, list) or not all(isinstance(b, (str, os.PathLike)) and str(b) for b in bases):
        raise ValueError(f"recipe {path}: 'base' is a recipe file, or a list of them (merged in order), "
                         f"got {base!r}")
    parents = [link for b in bases for link in read_chain(_base_path(real.parent, b), _seen + (real,))]
    for _, parent in parents:
        parent.pop("name", None)
    raw.setdefault("name", path.stem)
    return [*parents, (str(path), raw)]


def _base_path(folder: Path, base: str | os.PathLike) -> Path | str | os.PathLike:
    """A ``base:`` entry: the file beside the recipe (with or without ``.yaml``) if there is one,
    else a recipe name (``kbert/chnsenticorp_hownet_quick``: a packaged recipe)."""
    near = folder / base
    return near if near.is_file() or Path(f"{near}.yaml").is_file() or Path(base).is_absolute() else base


def read_recipe(path: str | os.PathLike) -> dict[str, Any]:
    """Load a recipe file, merging it over its ``base:`` recipe(s) (recursively)."""
    merged: dict[str, Any] = {}
    for _, raw in read_chain(path):
        merged = deep_merge(merged, raw)
    return merged


def deep_merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` updated by ``over``; nested mappings merge, everything else is replaced."""
    out = copy.deepcopy(dict(base))
    for name, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(name), Mapping):
            out[name] = deep_merge(out[name], value)
        else:
            out[name] = copy.deepcopy(value)
    return out


# --------------------------------------------------------------------------- tasks
def task_class(name: str) -> type[Task]:
    """The task registered as ``name`` (``"package.module:name"``: ``name``, which :func:`resolve`
    registered by importing the module of a recipe's task). This loads the task (torch); a recipe
    is checked with :func:`~graphmatch.tasks.keys.keys_of` alone. It imports no module."""
    from graphmatch.tasks.base import get_task

    keys_of(name)  # the same errors as resolve() for a bad name
    return get_task(name.partition(":")[2] if ":" in name else name)


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
            value = check_expansion(load_yaml(text), f"--set {key.strip()}") if text.strip() else None
        except yaml.YAMLError:
            value = text
        out.append((key.strip().split("."), value))
    return out


def check_run_overrides(overrides: Sequence[str], task: str) -> None:
    """``--set`` on a trained run (``evaluate``): ``task`` is the run's own and cannot change (a
    ``module:name`` of the run's own task name may be given: it imports an outside task's code).

    Raises:
        ValueError: naming the key, before the rest of the recipe is checked against another task.
    """
    def name(spec: Any) -> str:  # a registered name, or the name of a ``module:name`` the run's task was made from
        return str(spec).rpartition(":")[2]

    for path, value in parse_overrides(overrides):
        if path == ["task"] and name(value) != name(task):
            raise ValueError(f"--set task={value}: task cannot change on a run (this run's is {task!r}); "
                             "train a new run for another task")


def _override_layer(parsed: list[tuple[list[str], Any]]) -> dict[str, Any]:
    """The ``--set`` keys as one more recipe layer (a nested mapping)."""
    layer: dict[str, Any] = {}
    for path, value in parsed:
        node = layer
        for part in path[:-1]:
            if not isinstance(node.get(part), dict):
                node[part] = {}
            node = node[part]
        node[path[-1]] = value
    return layer


def declarations(cls: type[TaskKeys], model: type | None = None) -> dict[str, type]:
    """The section dataclasses of a recipe of task ``cls``; ``model``: its variant's model section
    (:meth:`~graphmatch.tasks.keys.TaskKeys.model_section`), default ``cls.Model``."""
    return {"data": cls.Data, "model": model or cls.Model, **ENGINE_SECTIONS}


def model_sections(cls: type[TaskKeys], layers: Sequence[tuple[str, Mapping[str, Any]]]) -> list[type]:
    """The model section each recipe layer ``(source, mapping)`` is checked against: that of the
    ``model.name`` in effect there (the layer's own, or the nearest one before it; before any, the
    last layer's). A ``model.name`` is checked first, against ``cls.Model``, naming its file."""
    names: list[Any] = []
    for source, raw in layers:
        model = raw.get("model")
        name = model.get("name") if isinstance(model, Mapping) and cls.variants else None
        if name is not None:
            check(cls.Model, {"name": name}, "model.", source or None)
        names.append(name)
    final = next((n for n in reversed(names) if n is not None), None)
    out, current = [], None
    for name in names:
        current = name if name is not None else current
        out.append(cls.model_section(final if current is None else current))
    return out


def _leave_other_variants(layer: dict[str, Any], keep: type, variants: Sequence[type]) -> None:
    """Remove from ``layer``'s ``model`` mapping, in place, the keys another of ``variants``
    declares and the section ``keep`` does not."""
    model = layer.get("model")
    if isinstance(model, Mapping) and variants:
        kept, others = specs(keep), {name for variant in variants for name in specs(variant)}
        layer["model"] = {k: v for k, v in model.items() if k in kept or k not in others}


def _check_layer(layer: dict[str, Any], sections: Mapping[str, type], source: str | None) -> None:
    """Check one recipe file (or the ``--set`` keys) in place: sections, keys, values."""
    for name in list(layer):
        if name not in TOP_LEVEL:
            near = suggest(str(name), list(TOP_LEVEL))
            raise ValueError(f"unknown recipe section {name!r}{' in ' + source if source else ''}; "
                             + (f"did you mean {near!r}?" if near else f"valid: {', '.join(TOP_LEVEL)}"))
    for section, cls in sections.items():
        value = layer.get(section)
        if value is None:
            continue
        if not isinstance(value, Mapping):
            raise ValueError(f"recipe section {section!r}{' in ' + source if source else ''} must be a mapping, "
                             f"got {value!r}")
        layer[section] = check(cls, value, f"{section}.", source)


def resolve(recipe: str | os.PathLike | Mapping[str, Any], overrides: Sequence[str] = (), *,
            stored: bool = False) -> dict[str, Any]:
    """The complete, checked configuration of a recipe (path, name or mapping) with overrides.

    Each recipe file (and the ``--set`` keys) is checked against the declarations before they are
    merged, so an error names the file the key was written in. ``stored``: ``recipe`` is a
    configuration a run stored (``config.yaml``, a checkpoint's); old key names in it are renamed
    without a warning, and its task is looked up among the registered tasks: a
    ``package.module:name`` it names is not imported (a recipe's is, and one given as ``--set task=``).

    Raises:
        ValueError: unknown key (with the nearest known key), a value of the wrong type, outside
            its choices or range, or an old key beside its new name with another value.
        KeyError: unknown task.
    """
    if isinstance(recipe, (str, os.PathLike)):
        chain = read_chain(recipe)
    else:
        chain = [("", copy.deepcopy(dict(recipe)))]
        chain[0][1].pop("base", None)
    parsed = parse_overrides(overrides)
    sets = _override_layer([(p, v) for p, v in parsed if p != ["task"]])
    given = next((v for p, v in reversed(parsed) if p == ["task"]), None)
    task = given if given is not None else next((raw["task"] for _, raw in reversed(chain)
                                                 if raw.get("task") is not None), None)
    if task is None:
        raise ValueError(f"the recipe names no 'task'; known tasks: {', '.join(declared_names())}")
    cls = keys_of(task, load=given is not None or not stored)  # a run's own task imports no module
    layers = [*chain, ("", sets)]
    models = model_sections(cls, layers)
    sections = declarations(cls, models[-1])
    renamed = [*ENGINE_RENAMED, *cls.renamed]
    merged: dict[str, Any] = {}
    for (source, raw), model in zip(layers, models, strict=True):
        upgrade(raw, renamed, source or None, stored=stored and raw is not sets)
        if stored and raw is not sets:  # a run of an earlier release lists every variant's keys
            _leave_other_variants(raw, model, cls.variants)
        _check_layer(raw, {**sections, "model": model}, source or None)
        _leave_other_variants(raw, sections["model"], cls.variants)  # those of a variant a later layer replaced
        merged = deep_merge(merged, raw)
    config: dict[str, Any] = {"task": task, "name": str(merged.get("name") or task)}
    if merged.get("description"):
        config["description"] = merged["description"]
    for section, decl in sections.items():
        config[section] = deep_merge(defaults(decl), merged.get(section) or {})
    try:
        cls.sections(config["data"], config["model"])
    except ValueError as err:
        source = chain[-1][0]
        raise ValueError(f"{err}{f' ({source})' if source else ''}") from err
    return config if stored else shorten(config)


def resolve_recipe(recipe: str | os.PathLike | Mapping[str, Any], overrides: Sequence[str] = (), *,
                   stored: bool = False) -> Recipe:
    """:func:`resolve`, typed: the :class:`~graphmatch.tasks.recipes.sections.Recipe` of its checked sections."""
    return Recipe.of(resolve(recipe, overrides, stored=stored))


def sample_limit(recipe: Recipe | Mapping[str, Any], split: str) -> int | float | None:
    """``data.limit.<split>`` (a count or a fraction) of a task that declares ``data.limit``
    (:class:`~graphmatch.tasks.keys.SampleLimits`), else None: the engine cuts the split to it."""
    limits = getattr(Recipe.of(recipe).data, "limit", None)
    return getattr(limits, split) if isinstance(limits, SampleLimits) else None


def _doc(cls: type) -> str:
    return (cls.__doc__ or "").strip().replace("``", "`")


def key_reference(task_names_: Sequence[str] | None = None) -> str:
    """``docs/recipes.md``: every key of the engine's sections and of each task's, generated from
    the declarations (``graphmatch recipe --keys [TASK]``); default: graphmatch's own tasks."""
    from graphmatch.tasks.recipes.keys import describe

    names = list(task_names_) if task_names_ else list(BUILTIN_TASKS)
    lines = ["# Recipe keys", "",
             "Generated from the declarations (`graphmatch recipe --keys > docs/recipes.md`); do not edit by hand.",
             "A recipe is described in `docs/engine.md` (Recipes); how to add a key in `CONTRIBUTING.md`.", ""]

    def table(title: str, cls: type, prefix: str, doc: str, leave_out: Sequence[tuple[str, ...]] = ()) -> None:
        lines.extend([f"## {title}", "", doc, "", "| key | type | default | allowed | meaning |",
                      "|---|---|---|---|---|"])
        for row in describe(cls, prefix):
            if row not in leave_out:
                lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in (f"`{row[0]}`", *row[1:]))
                             + " |")
        lines.append("")

    for section, cls in ENGINE_SECTIONS.items():
        table(f"`{section}` (every task)", cls, f"{section}.", _doc(cls))
    for name in names:
        task = keys_of(name, load=True)
        for section, cls in (("data", task.Data), ("model", task.Model)):
            table(f"`{section}` of `{name}`", cls, f"{section}.", _doc(cls))
        shared = describe(task.Model, "model.")
        for variant in task.variants:  # each variant's own keys, besides the shared ones above
            names_ = ", ".join(f"`{n}`" for n in specs(variant)["name"].choices or ())
            table(f"`model` of `{name}` with `model.name` {names_}", variant, "model.", _doc(variant), shared)
        if task.renamed:
            lines.extend([f"Old keys of `{name}` (still read, with a warning): "
                          + ", ".join(f"`{r.old}` → {' and '.join(f'`{n}`' for n in r.new)}" for r in task.renamed),
                          ""])
    lines.extend(["Old engine keys (still read, with a warning): "
                  + ", ".join(f"`{r.old}` → {' and '.join(f'`{n}`' for n in r.new)}" for r in ENGINE_RENAMED), ""])
    return "\n".join(lines)


def diff(a: Mapping[str, Any], b: Mapping[str, Any], prefix: str = "") -> list[str]:
    """Dotted keys whose values differ between two configurations."""
    out = []
    for k in sorted(set(a) | set(b), key=str):
        name = f"{prefix}{k}"
        va, vb = a.get(k), b.get(k)
        if isinstance(va, Mapping) and isinstance(vb, Mapping):
            out += diff(va, vb, f"{name}.")
        elif va != vb:
            out.append(name)
    return out
