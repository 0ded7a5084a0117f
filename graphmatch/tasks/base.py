"""The small interface through which the engine knows a model family.

A :class:`Task` turns a resolved recipe (a nested dict) into datasets of PyG graphs, a model,
a loss and per-sample predictions. The engine (``graphmatch.engine``) trains, evaluates and
predicts any registered task without knowing what is inside it.

Recipe layout (YAML)::

    task: kbert            # a name registered with @register
    data:  {...}           # task-owned: dataset files, builder options
    model: {...}           # task-owned: sizes, ablations
    optim: {...}           # engine-owned: optimizer, lr, encoder_lr, warmup, clip, ...
    train: {...}           # engine-owned: batch_size, epochs, seed, patience, ...

A task declares its ``data`` and ``model`` sections as dataclasses (``Task.Data``,
``Task.Model``; :mod:`graphmatch.tasks.recipes.keys`): every key once, with its type, default, allowed
values and doc. The engine checks a recipe against them when it is read
(:func:`graphmatch.tasks.recipes.resolve.resolve`), and the task gets the checked sections as
``self.data`` and ``self.model``. The reference of every key is ``docs/recipes.md``.
"""

from __future__ import annotations

import abc
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import torch
from torch import Tensor
from torch_geometric.data import Batch, Dataset, HeteroData

from graphmatch.errors import InputError  # the interface's error for an input a task refuses
from graphmatch.io.input_files import InputLine, read_input_file
from graphmatch.pretrained import STORED_FILE, Pretrained, stored_files
from graphmatch.tasks.keys import BUILTIN_TASKS, NoKeys, SampleLimits, TaskKeys, register_keys
from graphmatch.tasks.recipes.sections import Recipe

__all__ = ["BUILTIN_TASKS", "InputError", "NoKeys", "SampleLimits", "Task", "get_task", "register", "task_names"]

_REGISTRY: dict[str, type[Task]] = {}


def register(cls: type[Task]) -> type[Task]:
    """Class decorator: make a task available to recipes under ``cls.name``."""
    _REGISTRY[cls.name] = cls
    register_keys(cls)
    return cls


def get_task(name: str) -> type[Task]:
    _import_builtin_tasks()
    if name not in _REGISTRY:
        raise KeyError(f"unknown task {name!r}; known tasks: {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[name]


def task_names() -> list[str]:
    _import_builtin_tasks()
    return sorted(_REGISTRY)


def _import_builtin_tasks() -> None:
    import importlib

    for module in BUILTIN_TASKS:
        try:
            importlib.import_module(f"graphmatch.tasks.{module}")
        except ModuleNotFoundError as err:  # a family not built yet
            if err.name != f"graphmatch.tasks.{module}":
                raise


class Task(TaskKeys, abc.ABC):
    """One model family as the engine sees it.

    Subclasses set ``name``, declare their recipe sections ``Data`` and ``Model`` (frozen
    dataclasses of :func:`graphmatch.tasks.recipes.keys.key` fields; a ``limit: SampleLimits`` data key
    lets the engine cut the splits) and may list ``renamed`` keys (old names still accepted for one
    release). ``metrics`` (names in :mod:`graphmatch.metrics`, or ``(name, options)`` pairs
    such as ``("f1", {"positive": "same"})``) and ``monitor`` (the dev metric that selects the
    checkpoint; higher is better) are fixed by the configuration: a subclass whose metrics depend on
    it sets them in ``__init__``.

    **Required** (abstract; a task is these eight methods):

    * data: :meth:`datasets`, :meth:`label_names`, :meth:`encode`;
    * model: :meth:`build_model`, :meth:`loss`, :meth:`decode`;
    * checkpoint: :meth:`get_extra_state`, :meth:`set_extra_state`.

    **Optional hooks**, each with a default, grouped by purpose (as Lightning documents
    ``LightningModule``'s hooks):

    * inputs a user gives (``predict``, ``evaluate --input``, ``probe``): :meth:`read_inputs`,
      :meth:`input_columns`, :meth:`input_fields`, :meth:`dataset_fields`,
      :meth:`encode_for_prediction`, :meth:`encode_many`, :meth:`encode_with_text`;
    * training: :meth:`init_weights`, :meth:`training_batch`, :meth:`training_labels`,
      :meth:`class_weights`, :meth:`penalty`, :meth:`encoder_parameters`, :meth:`encoder_layers`;
    * evaluation: ``metrics``, ``monitor``, :meth:`negative_labels`, :meth:`report`;
    * run folder: :meth:`store_run_files`, :meth:`from_run_folder`, :meth:`upgrade_state_dict`,
      :meth:`environment`, :meth:`input_files`, :meth:`user_files`, :meth:`used`;
    * outputs: :meth:`write_predictions`, :meth:`explain`, :meth:`branch_kg`,
      :meth:`probe_batch`.
    """

    metrics: Sequence[str | tuple[str, dict[str, Any]]] = ("accuracy",)
    monitor: str = "accuracy"
    #: the pretrained encoder, resolved once from ``model.pretrained`` in ``__init__`` (None without one);
    #: its config and tokenizer files are stored in the run folder (:meth:`store_run_files`)
    pretrained: Pretrained | None = None
    #: the run folder's copy of the encoder's config and tokenizer files (:meth:`store_run_files`)
    ENCODER_DIR: ClassVar[str] = "pretrained"
    #: the recipe keys a recipe's ``description`` speaks of (model, encoder, data): a run that changes
    #: one gets no description in its ``summary.md``, only :meth:`used`; empty: every data and model key
    DESCRIBED_KEYS: ClassVar[tuple[str, ...]] = ()

    def __init__(self, config: Recipe | Mapping[str, Any]):
        #: the resolved recipe, typed (:class:`~graphmatch.tasks.recipes.sections.Recipe`): ``recipe.train.progress``
        self.recipe = Recipe.of(config, type(self))
        #: its plain form (what a checkpoint stores)
        self.config = self.recipe.config
        self.data, self.model = self.recipe.data, self.recipe.model
        self._class_weights: Tensor | None = None

    # ----------------------------------------------------------- run folder
    def store_run_files(self, run_dir: Path) -> None:
        """Write into ``run_dir`` what :meth:`from_run_folder` needs besides the checkpoint to
        rebuild this task anywhere; default: the config and tokenizer files of :attr:`pretrained`
        (never its weights, which are in the checkpoint) in :attr:`ENCODER_DIR`, unless they are
        that folder already."""
        folder = run_dir / self.ENCODER_DIR
        if self.pretrained is not None and not (self.pretrained.stored and
                                                self.pretrained.path.resolve() == folder.resolve()):
            self.pretrained.store(folder)

    @classmethod
    def from_run_folder(cls, config: Recipe | Mapping[str, Any], run_dir: Path) -> Task:
        """The task of a run's configuration, rebuilt from what :meth:`store_run_files` wrote:
        ``model.pretrained`` is the stored encoder folder, so that the run works after the original
        is gone and after the run folder has moved. A folder without it (made by an older release)
        uses the original; when that cannot be loaded either, a one-line ValueError names both."""
        recipe = Recipe.of(config, cls)
        original = getattr(recipe.model, "pretrained", None)
        if original is None:
            return cls(recipe)
        folder = run_dir / cls.ENCODER_DIR
        missing = stored_files(folder)
        if not missing:
            return cls(recipe.with_model(pretrained=str(folder)))
        try:
            return cls(recipe)
        except (FileNotFoundError, ValueError) as err:
            files = ", ".join(f"{cls.ENCODER_DIR}/{name}" for name in missing)
            raise ValueError(f"the original model.pretrained {original!r} is needed (the run folder lacks the "
                             f"stored encoder files {files}: made by an older graphmatch, or {STORED_FILE} "
                             f"removed), and it cannot be loaded: {err}") from err

    def upgrade_state_dict(self, model: torch.nn.Module, state: Mapping[str, Tensor]) -> dict[str, Tensor]:
        """``state`` (a checkpoint's weights) with the parameter names an earlier release used
        replaced by ``model``'s current ones, as ``model.load_state_dict`` reads them; default:
        the ``RENAMED_KEYS`` of ``model`` and its submodules (:mod:`graphmatch.models.renamed_keys`)."""
        from graphmatch.models.renamed_keys import upgrade_state_dict

        return upgrade_state_dict(model, state)

    # ----------------------------------------------------------------- data
    @abc.abstractmethod
    def datasets(self) -> dict[str, Dataset]:
        """``{"train": ..., "dev": ..., "test": ...}`` PyG datasets of ``HeteroData`` (cached)."""

    @abc.abstractmethod
    def label_names(self) -> list[str]:
        """Class (or tag) names, index = class id. Fixed after :meth:`datasets` has run."""

    @abc.abstractmethod
    def get_extra_state(self) -> dict[str, Any]:
        """What a checkpoint must keep to rebuild this task without its data (label names,
        vocabularies); plain Python values."""

    @abc.abstractmethod
    def set_extra_state(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`get_extra_state` returned."""

    @abc.abstractmethod
    def encode(self, text: str, text_b: str | None = None) -> HeteroData:
        """One raw input as the graph the model is given (used by ``graphmatch predict``)."""

    def encode_with_text(self, text: str, text_b: str | None = None) -> HeteroData:
        """:meth:`encode` with every node's text kept (``data[t].text``), for pictures
        (``graphmatch predict --show``); the default is :meth:`encode`, for families whose graphs
        always keep their text."""
        return self.encode(text, text_b)

    def negative_labels(self) -> list[str]:
        """The labels that mean "nothing to find" (a relation corpus' ``no_relation``), which the
        metrics that take ``negative`` leave out (:func:`graphmatch.metrics.compute`);
        default none."""
        return []

    def input_columns(self) -> tuple[str, ...]:
        """The columns of the task's own data files, in their order (``label``/``relation``: the gold);
        ``predict --input`` knows a header by them (:mod:`graphmatch.io.input_files`)."""
        return ("text_a", "text_b", "label")

    def read_inputs(self, path: str | os.PathLike) -> list[InputLine]:
        """The inputs of a file ``predict --input``, ``--calibrate`` and ``probe`` read (``-``:
        stdin), each with its line and gold label: by default the task's own data files or bare
        inputs (:func:`~graphmatch.io.input_files.read_input_file` with :meth:`input_columns`,
        :meth:`input_fields` and :meth:`dataset_fields`). A family whose corpora have a format of
        their own reads it here (the relation family's SemEval files).

        Raises:
            ValueError: ``file:line`` and what is wrong with the line, or a file without inputs.
        """
        return read_input_file(path, self.input_columns(), self.input_fields, self.dataset_fields)

    def dataset_fields(self, fields: Sequence[str]) -> tuple[str, ...]:
        """The input columns of a line of the task's own data files as :meth:`input_fields` takes
        them (default as they are)."""
        return tuple(fields)

    def input_fields(self, fields: Sequence[str]) -> tuple[str, ...]:
        """One line of a ``predict --input`` file (its columns) as :meth:`encode`'s arguments: one
        column (text) or two (text, text_b); a ValueError saying what is expected otherwise."""
        if len(fields) not in (1, 2):
            raise ValueError(f"{len(fields)} columns; expected 1 (text) or 2 (text, text_b)")
        return tuple(fields)

    def encode_for_prediction(self, text: str, text_b: str | None = None) -> tuple[HeteroData, dict[str, Any]]:
        """:meth:`encode`, and what a prediction row reports about the input (default nothing)."""
        return self.encode(text, text_b), {}

    def encode_many(self, inputs: Sequence[tuple[str, str | None]]
                    ) -> tuple[Sequence[HeteroData], list[dict[str, Any]]]:
        """:meth:`encode_for_prediction` of every ``(text, text_b)``: the graphs (a list, or an
        in-memory dataset of them stored collated, from which batches are cut without separating
        them, :func:`~graphmatch.data.batching.gather_batch`) and one report per input. The default
        encodes one input at a time; a task that builds many graphs at once overrides it (the graphs
        must equal the one-at-a-time ones).

        Raises :class:`~graphmatch.errors.InputError` (a ValueError whose ``index``
        is the input's position) for an input the task refuses.
        """
        graphs, extras = [], []
        for i, (text, text_b) in enumerate(inputs):
            try:
                data, extra = self.encode_for_prediction(text, text_b)
            except ValueError as err:
                raise InputError(i, str(err)) from err
            graphs.append(data)
            extras.append(extra)
        return graphs, extras

    def report(self, datasets: dict[str, Dataset]) -> list[str]:
        """Lines about the built ``datasets`` that a run reports (e.g. K-BERT's knowledge coverage):
        the engine prints each on stderr once the data are built and lists them in ``summary.md``;
        default none."""
        return []

    # ---------------------------------------------------------------- model
    @abc.abstractmethod
    def build_model(self) -> torch.nn.Module:
        """A fresh model; ``model(batch)`` returns what :meth:`loss` and :meth:`decode` take."""

    def encoder_parameters(self, model: torch.nn.Module) -> list[torch.nn.Parameter]:
        """Parameters trained with ``optim.encoder_lr`` (a pretrained encoder); default none."""
        return []

    def encoder_layers(self, model: torch.nn.Module) -> list[list[torch.nn.Parameter]]:
        """The encoder's parameters layer by layer, bottom to top (embeddings first, the top layer
        last), for ``optim.layer_decay``: layer :math:`k` of :math:`L` trains at
        ``encoder_lr × layer_decay^(L − k)``. Every listed parameter must be among
        :meth:`encoder_parameters`; default: none (the task does not support layer decay)."""
        return []

    def environment(self) -> dict[str, Any]:
        """What of the environment shapes this task's data beyond :data:`~graphmatch.engine.runs.provenance.LIBRARIES`
        (LET: the segmenters used, with their versions); recorded in a run's provenance."""
        return {}

    def input_files(self) -> dict[str, str]:
        """Input files besides the datasets whose identity a run records (e.g. ``{"kg": path}``);
        default none."""
        return {}

    def used(self) -> str:
        """One line naming the model, its encoder and the data the run really used (from the resolved
        configuration), for the run's ``summary.md``; default: none."""
        return ""

    def user_files(self) -> dict[str, str]:
        """Which of :meth:`input_files` a user gave by path, each with the recipe key that names it
        (e.g. ``{"kg": "data.kg"}`` for a ``.spo`` file, not a built-in name): the run folder keeps a
        copy of each, which ``predict`` and ``evaluate`` read (:mod:`graphmatch.engine.runs.files`);
        default none."""
        return {}

    def init_weights(self, model: torch.nn.Module) -> None:  # noqa: B027 - optional hook
        """What a fresh model starts from before training, never a restored one (optional): the
        pretrained encoder ``model.pretrained`` names, word vectors, a tag layer's prior."""

    def training_batch(self, batch: Batch) -> Batch:
        """The batch a training step reads (never an evaluation's or a prediction's): e.g. with
        tokens masked at random (K-BERT's ``data.entity_mask``). The default: ``batch`` as it is."""
        return batch

    @abc.abstractmethod
    def loss(self, out: Any, batch: Batch) -> Tensor:
        """Training loss of one batch (without :meth:`penalty`)."""

    def training_labels(self) -> Tensor:
        """Every label id of the training split (``[N]``; a negative id is no label, e.g. a branch
        token's tag): what ``model.class_weight`` counts. A task with that key defines it."""
        raise NotImplementedError(f"{type(self).__name__} does not weigh its labels")

    def class_weights(self) -> Tensor | None:
        r"""``model.class_weight``: ``balanced`` weighs label :math:`c` by :math:`w_c = N / (C\,n_c)`
        (:math:`n_c` of the :math:`N` labelled training examples, :math:`C` labels; a label without
        an example gets weight 0), so that the training split's label prior does not decide;
        ``sqrt`` by :math:`\sqrt{w_c}`; ``none`` (or a task without the key): None, every label 1.
        Counted once."""
        mode = getattr(self.model, "class_weight", "none")
        if mode == "none":
            return None
        if self._class_weights is None:
            y = self.training_labels()
            counts = torch.bincount(y[y >= 0], minlength=len(self.label_names())).double()
            w = torch.where(counts > 0, counts.sum() / (len(counts) * counts.clamp_min(1)), 0.0)
            self._class_weights = (w.sqrt() if mode == "sqrt" else w).float()
        return self._class_weights

    def penalty(self, model: torch.nn.Module) -> Tensor | None:
        """A term on the parameters (e.g. L2) that training adds to :meth:`loss`; default none."""
        return None

    @abc.abstractmethod
    def decode(self, out: Any, batch: Batch) -> list[dict[str, Any]]:
        """One dict per sample: ``{"pred": ..., "gold": ..., "prob": float}``.

        ``pred``/``gold`` are label names (or lists of tag names for tagging). ``gold`` is
        ``None`` when the batch has no labels.
        """

    # -------------------------------------------------------------- outputs
    def write_predictions(self, path: str, rows: list[dict[str, Any]]) -> None:
        """Write predictions; default one JSON object per line. Tasks may add official formats."""
        import json

        with open(path, "w", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")

    def explain(self, model: torch.nn.Module, data: HeteroData) -> dict[str, Any]:
        """What the model attends to for one input (optional), as the keyword arguments of
        :func:`graphmatch.viz.attention.draw_token_attention`: ``tokens``, ``weights`` (one per
        token), ``entity_tokens`` (token indices to highlight), ``type_weights`` and ``title``."""
        raise NotImplementedError(f"task {self.name!r} has no --explain picture")

    def branch_kg(self) -> str | None:
        """The knowledge graph whose branches the model reads (its path), ``None`` without one;
        a task that has one answers :meth:`probe_batch` (``graphmatch probe``)."""
        return None

    def probe_batch(self, model: torch.nn.Module, batch: Any) -> dict[str, Any]:
        """What :mod:`graphmatch.engine.inference.probe` reads of one batch (optional): ``out`` and
        ``out_cut``, the model's output (as :meth:`decode` takes it) with its knowledge and with
        every branch cut out; ``[B, L]`` ``branch`` and ``token_mask``, ``[B, L, L]`` ``visible``,
        ``weights`` (one ``[B, H, L, L]`` attention per layer, or ``None``) and ``spans``, the
        character spans ``(start, end)`` of each input's words that got a branch."""
        raise NotImplementedError(f"task {self.name!r} has no knowledge probe")
