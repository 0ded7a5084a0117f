"""What a recipe of each task may say, without the task: its ``data`` and ``model`` sections,
old key names and the rules between keys, importable without torch.

Each of graphmatch's families declares these in ``graphmatch/tasks/<family>_keys.py`` (a
:class:`TaskKeys` subclass, registered with :func:`register_keys`), which imports neither torch nor
NumPy; its :class:`~graphmatch.tasks.base.Task` inherits them. So a command reads and checks a
recipe (:func:`graphmatch.tasks.recipes.resolve.resolve`) in a fraction of a second, before the task, torch
and Lightning are loaded. A task defined outside graphmatch (``package.module:name``) is imported
whole: its :class:`~graphmatch.tasks.base.Task` is its own declaration.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Literal

from graphmatch.tasks.recipes.keys import Renamed, build, defaults, key, specs

#: the tasks of graphmatch itself (each in the module of its name, its keys in ``<name>_keys``)
BUILTIN_TASKS = ("kbert", "let", "relation")

#: ``package.module`` of a task defined outside graphmatch
_MODULE = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")

_LIMIT = "a count >= 1 (int), a fraction in (0, 1] (float) or null"


def _limit(value: Any) -> str | None:
    ok = (isinstance(value, int) and value >= 1) or (isinstance(value, float) and 0 < value <= 1)
    return None if ok else _LIMIT


@dataclass(frozen=True)
class SampleLimits:
    """``data.limit``: how many samples of each split are used (quick runs). The engine keeps the
    first ``N`` (an int) or that fraction (a float); a task whose datasets can read fewer lines
    also passes an int count to them, so that graphs are built for those samples only."""

    train: int | float | None = key(None, "training samples: the first N, or a fraction; null = all",
                                    check=_limit, allowed=_LIMIT)
    dev: int | float | None = key(None, "dev samples, the same way", check=_limit, allowed=_LIMIT)
    test: int | float | None = key(None, "test samples, the same way", check=_limit, allowed=_LIMIT)

    def count(self, split: str) -> int | None:
        """The limit of ``split`` when it is a count (what a dataset can read), else None."""
        value = getattr(self, split)
        return value if isinstance(value, int) else None


_PART = "a count >= 1 (int) or a fraction in (0, 1) (float)"


def _part(value: Any) -> str | None:
    ok = (isinstance(value, int) and value >= 1) or (isinstance(value, float) and 0 < value < 1)
    return None if ok else _PART


@dataclass(frozen=True)
class DataSplit:
    """``data.split``: one data file cut into train, dev and test (:mod:`graphmatch.data.file_split`):
    ``dev`` and ``test`` lines drawn at random, the rest trains; the same seed and file give the
    same split (``evaluate`` and ``resume`` read it again)."""

    dev: int | float = key(0.1, "dev lines: a count, or a fraction of the file's", check=_part, allowed=_PART)
    test: int | float = key(0.1, "test lines, the same way", check=_part, allowed=_PART)
    seed: int = key(1, "the seed of the draw")


def check_split(split: DataSplit | None) -> None:
    """A one-line ValueError naming ``data.split`` when its fractions leave no training line."""
    fractions = [getattr(split, part) for part in ("dev", "test") if split is not None
                 and isinstance(getattr(split, part), float)]
    if sum(fractions) >= 1:
        raise ValueError(f"data.split: dev + test = {sum(fractions):g} of the file leaves nothing to train on; "
                         "the fractions must sum to less than 1")


def split_of(split: DataSplit | None) -> dict[str, Any] | None:
    """``data.split`` as the datasets take it (``{"dev", "test", "seed"}``), or None."""
    return None if split is None else asdict(split)


def split_key() -> Any:
    """The ``data.split`` key, the same in every family that reads one file as three splits."""
    return key(None, "one data file cut into dev, test and train (e.g. {dev: 0.1, test: 0.1, seed: 1}); null = "
                     "the splits are files of their own")


@dataclass(frozen=True)
class BranchSelect:
    """``data.select``: knowledge that fits the sentence (``docs/knowledge_selection.md``), the same
    keys in every family that hangs KG branches (K-BERT, relation)."""

    by: Literal["none", "encoder"] = key(
        "none", "none: K-BERT's injection (a word's first max_entities values in file order); encoder: every value "
                "scored by the cosine of its object and the sentence in model.pretrained's mean-pooled embeddings "
                "(before fine-tuning), a word keeping its max_entities best")
    top_k: int | None = key(None, "branches kept per sentence, the best over all its words; null = no cap",
                            interval="[0, inf)")
    threshold: float = key(0.0, "the lowest cosine a branch keeps", interval="[-1, 1]")
    noun_reading: bool = key(False, "English word pieces (WordNet): a single word matches only where it reads as a "
                                    "noun (WordNet's tag counts, case and the word before it; no single letters)")


#: ``model.class_weight``: how the loss weighs each label (:meth:`graphmatch.tasks.base.Task.class_weights`)
ClassWeight = Literal["none", "balanced", "sqrt"]


def class_weight_key() -> Any:
    """The ``model.class_weight`` key, the same in every family that has it."""
    return key("none", "cross-entropy weight of label c: none (1), balanced (N / (C n_c) over the training labels, "
                       "so that the training prior does not decide) or its square root")


def knowledge_keys(data_keys: Mapping[str, bool] | None = None, model_keys: Mapping[str, bool] | None = None) -> None:
    """On a recipe without a knowledge graph: a ValueError naming the first key that is set
    (``True``) and acts on branches (``data.<name>`` / ``model.<name>``)."""
    for section, keys in (("data", data_keys or {}), ("model", model_keys or {})):
        for name, is_set in keys.items():
            if is_set:
                raise ValueError(f"{section}.{name} acts on the branches of a knowledge graph; give data.kg "
                                 f"(or leave {section}.{name} off)")


@dataclass(frozen=True)
class TaskData:
    """The ``data`` keys every task has, declared here once: a family's ``Data`` subclasses it (they
    come first in its table)."""

    root: str | None = key(None, "data root, where the family's built-in data are looked up; null = $GRAPHMATCH_DATA "
                                 "(or a checked download)")
    cache_dir: str | None = key(None, "where processed graphs go; null = $GRAPHMATCH_CACHE/processed/<family>")


@dataclass(frozen=True)
class CommonModel:
    """The ``model`` key every model has, declared here once: the section of a model without a
    pretrained encoder subclasses it (a relation BiLSTM's), any other :class:`TaskModel`."""

    class_weight: ClassWeight = class_weight_key()


@dataclass(frozen=True)
class TaskModel(CommonModel):
    """The ``model`` keys every task has, declared here once: a family's ``Model`` subclasses it
    (a family whose variants differ: the section of each variant that takes a pretrained encoder).
    (``dropout`` is not one of them: each family's default and meaning differ.)"""

    pretrained: str | None = key(None, "a pretrained encoder: a local checkpoint folder, a packaged name (minilm, "
                                       "e5-small) or a HuggingFace hub id; its config sets the sizes (loaded "
                                       "strictly); null = none (what the family's model takes: see its checks)")


@dataclass(frozen=True)
class NoKeys:
    """A section without keys."""


class TaskKeys:
    """The recipe sections of one task: ``name``, ``Data`` and ``Model`` (frozen dataclasses of
    :func:`graphmatch.tasks.recipes.keys.key` fields), ``renamed`` keys and :meth:`check_sections`."""

    name: ClassVar[str]
    Data: ClassVar[type] = NoKeys
    Model: ClassVar[type] = NoKeys
    #: a family whose variants take different model keys: one section per variant (subclasses of
    #: ``Model``), each naming its variants in the choices of its ``name`` key (:meth:`model_section`)
    variants: ClassVar[tuple[type, ...]] = ()
    #: old key names and where their values go now (one release of grace)
    renamed: ClassVar[tuple[Renamed, ...]] = ()
    #: the plain defaults of both sections, derived from ``Data`` and ``Model``
    defaults: ClassVar[dict[str, dict[str, Any]]] = {"data": {}, "model": {}}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.defaults = {"data": defaults(cls.Data), "model": defaults(cls.Model)}

    @classmethod
    def model_section(cls, name: Any = None) -> type:
        """The ``model`` section of a recipe whose ``model.name`` is ``name`` (None: its default):
        the variant section that names it, else ``Model`` (which checks the name)."""
        name = cls.defaults["model"].get("name") if name is None else name
        return next((v for v in cls.variants if name in (specs(v)["name"].choices or ())), cls.Model)

    @classmethod
    def sections(cls, data: Mapping[str, Any], model: Mapping[str, Any]) -> tuple[Any, Any]:
        """The typed ``data`` and ``model`` sections of a resolved configuration's plain ones, after
        the checks that involve several keys (:meth:`check_sections`)."""
        data, model = build(cls.Data, data), build(cls.model_section(model.get("name")), model)
        cls.check_sections(data, model)
        return data, model

    @classmethod
    def check_sections(cls, data: Any, model: Any) -> None:
        """Raise a one-line ValueError for a combination of keys that cannot work (optional)."""
        return None


_KEYS: dict[str, type[TaskKeys]] = {}


def register_keys(cls: type[TaskKeys]) -> type[TaskKeys]:
    """Class decorator: the sections of task ``cls.name`` (a registered task registers its own)."""
    _KEYS[cls.name] = cls
    return cls


def declared_names() -> list[str]:
    """The names of graphmatch's tasks and of every task registered so far."""
    return sorted({*BUILTIN_TASKS, *_KEYS})


def keys_of(name: str, *, load: bool = False) -> type[TaskKeys]:
    """The sections of the task ``name``: a built-in one from its ``<name>_keys`` module (no torch),
    else one registered so far (:func:`register_keys`).

    ``"package.module:name"`` is a task defined outside graphmatch. Only with ``load`` (the name
    comes from a recipe or the command line) is its module imported, after the name is checked;
    a name read from a run folder or a checkpoint never imports anything: its ``name`` part is
    looked up among the registered tasks.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"the recipe's 'task' must be a task name; known tasks: {', '.join(declared_names())}")
    registered = name
    if ":" in name:
        module, _, registered = name.partition(":")
        if not (_MODULE.fullmatch(module) and registered and ":" not in registered):
            raise ValueError(f"task {name!r} is neither a task name nor 'package.module:name'; "
                             f"known tasks: {', '.join(declared_names())}")
        if registered in BUILTIN_TASKS:
            raise ValueError(f"task {name!r}: {registered!r} is a graphmatch task; write task: {registered}")
        if load:
            try:
                importlib.import_module(module)
            except ModuleNotFoundError as err:
                raise ValueError(f"task {name!r}: cannot import module {module!r} ({err})") from err
        elif registered not in _KEYS:
            raise ValueError(
                f"task {name!r} is not a registered task (known tasks: {', '.join(declared_names())}); a module that "
                f"a run folder or checkpoint names is never imported: give --set task={name}, or import {module} "
                "before loading the run from Python")
    elif name in BUILTIN_TASKS and name not in _KEYS:
        importlib.import_module(f"graphmatch.tasks.{name}_keys")
    if registered not in _KEYS:
        raise KeyError(f"unknown task {registered!r}; known tasks: {', '.join(declared_names())}")
    return _KEYS[registered]
