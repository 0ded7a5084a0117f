"""Relation classification: Att-BLSTM, the entity-aware BiLSTM, and a pretrained transformer with
an entity-start or an entity-aware attention head, on SemEval-2010 Task 8 or any relation files.

Recipe keys: :class:`~graphmatch.tasks.relation_keys.RelationData` and
:class:`~graphmatch.tasks.relation_keys.RelationModel`, with each variant's own model section
(:class:`~graphmatch.tasks.relation_keys.BiLSTMModel`, :class:`~graphmatch.tasks.relation_keys.TransformerModel`;
declared without torch, :mod:`graphmatch.tasks.keys`;
every key, its default and allowed values: ``docs/recipes.md``).

The label set is the training file's. Labels that are SemEval's are scored with the official
``semeval2010`` metric; others with ``relation_f1`` (macro-F1 without the negative labels). Both
come with ``accuracy``. The BiLSTM loss is cross-entropy plus an L2 term :math:`\\lambda \\cdot
\\tfrac12 \\sum \\lVert \\theta \\rVert^2` (TensorFlow's ``l2_loss``, as the papers' code) over every
parameter but the word and position embedding tables, or, with ``model.l2_embeddings: true``,
over every parameter as the papers' code does (:meth:`RelationTask.penalty`, which the engine adds
to :meth:`RelationTask.loss`). Predictions are written as JSON lines and, for
SemEval labels, in the official ``ID<TAB>LABEL`` format (``<stem>.semeval.txt``, with
``<stem>.semeval_key.txt`` from the gold labels) for
``perl semeval2010_task8_scorer-v1.2.pl PROPOSED KEY``.

One class per variant, chosen once from ``model.name`` when the task is made: ``RelationTask(config)``
is the class :data:`VARIANTS` holds for that name (:class:`~graphmatch.tasks.relation.bilstm.BiLSTMRelationTask`
or :class:`~graphmatch.tasks.relation.transformer.TransformerRelationTask`, each registered by its own
module with :func:`variant`). This module imports none of them; it holds what they share: the data,
labels, metrics, loss, decoding and outputs.
"""

from __future__ import annotations

import abc
import dataclasses
import os
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import torch
import torch.nn.functional as F
from torch import Tensor
from torch_geometric.data import Batch, Dataset, HeteroData

from graphmatch.data.file_split import split_line
from graphmatch.data.relation import SPLITS, RelationDataset
from graphmatch.data.relation_formats import NEGATIVE_LABELS, is_semeval
from graphmatch.data.semeval import SemEval2010Task8
from graphmatch.data.semeval_inputs import read_relation_inputs
from graphmatch.errors import InputError
from graphmatch.graphs.branch_selection import BranchSelection
from graphmatch.graphs.relation import RelationGraphBuilder, split_input_line, tokens_of
from graphmatch.graphs.relation_markup import MarkedSentence, parse_markup
from graphmatch.graphs.relation_options import RelationOptions
from graphmatch.io.datafiles import resolve_path
from graphmatch.io.input_files import InputLine
from graphmatch.knowledge import KnowledgeGraph, is_own_kg, resolve_kg
from graphmatch.nn.loss_precision import fp32_logits
from graphmatch.tasks.base import Task, register
from graphmatch.tasks.keys import split_of
from graphmatch.tasks.knowledge_selection import selection_lines
from graphmatch.tasks.recipes.keys import specs
from graphmatch.tasks.recipes.sections import Recipe
from graphmatch.tasks.relation_keys import (  # noqa: F401 - re-exported
    BiLSTMModel,
    RelationData,
    RelationKeys,
    RelationModel,
    TransformerModel,
)
from graphmatch.text.vocab import Vocab

#: digits each label's probability keeps in a row's ``probs``
PROBS_DIGITS = 6
#: percent of unknown training tokens above which a run warns
UNKNOWN_WARNING = 5

R = TypeVar("R", bound="RelationTask")


#: ``model.name`` -> the task class of that variant (filled by :func:`variant` in each variant's module)
VARIANTS: dict[str, type[RelationTask]] = {}


def variant(section: type[RelationModel]) -> Callable[[type[R]], type[R]]:
    """Class decorator: the relation task of the model section ``section`` (one of
    :attr:`RelationKeys.variants`), for the ``model.name`` values its ``name`` key allows."""
    names = tuple(specs(section)["name"].choices or ())

    def add(cls: type[R]) -> type[R]:
        for name in names:
            VARIANTS[name] = cls
        cls.model_names = names
        return cls

    return add


@register
class RelationTask(RelationKeys, Task):
    """Relation classification over relation sentence graphs: what the BiLSTM and the transformer
    variants share. ``RelationTask(config)`` makes the variant ``model.name`` names (:meth:`variant_of`)."""

    #: the ``model.name`` values of a variant (set by :func:`variant`)
    model_names: tuple[str, ...] = ()

    DESCRIBED_KEYS = ("data.train_file", "data.dev_file", "data.test_file", "data.kg", "model.name",
                      "model.pretrained", "model.word_vectors")

    def __new__(cls, config: Recipe | Mapping[str, Any] | None = None):
        if cls is RelationTask and config is not None:  # the one place the variant is chosen
            cls = cls.variant_of(Recipe.of(config, cls).model.name)
        return super().__new__(cls)

    @staticmethod
    def variant_of(name: str) -> type[RelationTask]:
        """The task class registered for ``model.name`` (a one-line error naming the registered ones)."""
        if name not in VARIANTS:
            raise ValueError(f"model.name: unknown relation model {name!r}; registered: {', '.join(sorted(VARIANTS))}")
        return VARIANTS[name]

    def __init__(self, config: dict[str, Any]):
        super().__init__(config)
        self.labels: list[str] | None = None  # from a checkpoint, or the training split's (label_names)
        self._train: Dataset | None = None
        #: the graph builder's settings, made once from the data section; ``max_length: auto`` is
        #: decided on them once (:meth:`max_length`: the training split's choice, or a checkpoint's)
        self.options = RelationOptions.of(self.data, tokenization=self.tokenization)
        self._kg: KnowledgeGraph | None = None

    @property
    def metrics(self) -> tuple[Any, ...]:  # type: ignore[override]
        """``semeval2010`` for SemEval's labels, else ``relation_f1`` (macro-F1); both with
        ``accuracy`` and the relation corpora's figures over every label but the negative ones:
        ``micro_precision``, ``micro_recall``, ``micro_f1``, ``pr_auc`` (every (sentence,
        relation) pair ranked by its probability, from each row's ``probs``: OpenNRE's figure) and
        ``pr_auc_top1`` (each sentence's predicted relation ranked by ``prob``: the figure the
        SanWen and FinRE papers report)."""
        negative = {"negative": self.negative_labels()}
        micro = tuple((name, negative) for name in ("micro_precision", "micro_recall", "micro_f1"))
        pr_auc = ("pr_auc", {**negative, "labels": self.label_names()})
        first = "semeval2010" if is_semeval(self.label_names()) else ("relation_f1", negative)
        return (first, "accuracy", *micro, pr_auc, ("pr_auc_top1", negative))

    @property
    def monitor(self) -> str:  # type: ignore[override]
        """SemEval's official metric for SemEval's labels, else ``micro_f1`` (``train.monitor`` overrides)."""
        return "semeval2010" if is_semeval(self.label_names()) else "micro_f1"

    def negative_labels(self) -> list[str]:
        """``data.negative_labels`` (default :data:`NEGATIVE_LABELS`); labels named there that the
        training file lacks are an error naming those it has (a typo would score the real negative
        label as a relation)."""
        negative = self.data.negative_labels
        if negative is None:
            return list(NEGATIVE_LABELS)
        labels = self.label_names()
        missing = [n for n in negative if n not in labels]
        if missing:
            raise ValueError(f"data.negative_labels: {', '.join(missing)} not in the label set; the labels are "
                             f"{', '.join(labels)}")
        return list(negative)

    # ------------------------------------------------------- the variant's
    @property
    @abc.abstractmethod
    def tokenization(self) -> str:
        """How sentences are split into tokens (``data.tokenization`` as the variant reads it)."""

    @abc.abstractmethod
    def tokenizer_folder(self) -> Path | None:
        """The folder of the pretrained tokenizer whose word pieces the data are made of (None: no pieces)."""

    @abc.abstractmethod
    def vocabulary_name(self, training: bool = False) -> str:
        """What the model's vocabulary is called in report lines (``training``: beside the splits')."""

    @abc.abstractmethod
    def unk_id(self) -> int:
        """The id of an unknown token."""

    @abc.abstractmethod
    def builder(self, keep_text: bool = True) -> RelationGraphBuilder:
        """The graph builder of one input (:meth:`encode`)."""

    @abc.abstractmethod
    def l2_parameters(self, model: torch.nn.Module) -> list[torch.nn.Parameter]:
        """What ``model.l2`` covers."""

    def selection(self) -> BranchSelection | None:
        """``data.select``'s branch selection (default none: only a transformer hangs branches)."""
        return None

    def vocabulary_state(self) -> dict[str, Any]:
        """What a checkpoint keeps of the variant's vocabulary (default nothing)."""
        return {}

    def token_vocab(self) -> Vocab | None:
        """The vocabulary that names a graph's tokens when it keeps no text (default none)."""
        return None

    def builder_options(self) -> RelationOptions:
        """The graph builder's settings, the length decided."""
        self.max_length()
        return self.options

    # ----------------------------------------------------------------- data

    def _split(self, split: str) -> Dataset | None:
        """One split (None: no test file)."""
        d = self.data
        options = dict(  # the length as asked: the data decide auto on their training split (their cache's key)
            options=dataclasses.replace(self.options, max_length=d.max_length), dev_size=d.dev_size,
            split_seed=d.split_seed, min_freq=d.min_freq, on_bad_line=d.on_bad_line,
            pretrained=self.tokenizer_folder(), kg=d.kg, selection=self.selection(),
            limits={s: d.limit.count(s) for s in SPLITS}, split_of=split_of(d.split),
        )
        given = {key: getattr(d, key) for key in ("train_file", "dev_file", "test_file")}
        files = {key: None if path is None else resolve_path(Path(path).expanduser(), d.root, f"data.{key}")
                 for key, path in given.items()}
        if files["train_file"] is None:
            if files["dev_file"] is not None:
                raise ValueError("data.dev_file needs a data.train_file (SemEval's dev is held out of its train file)")
            return SemEval2010Task8(split, root=d.root, cache=d.cache_dir, test_file=files["test_file"],
                                    **options)
        if split == "test" and files["test_file"] is None and d.split is None:
            return None
        return RelationDataset(split, train_file=files["train_file"], dev_file=files["dev_file"],
                               test_file=files["test_file"], format=d.format, root=d.root,
                               cache=d.cache_dir, **options)

    def train_split(self) -> Dataset:
        """The training split, built (or read from its cache) once: its labels and vocabulary are
        the task's (unless a checkpoint gave them)."""
        if self._train is None:
            self._train = self._split("train")
        return self._train

    def datasets(self) -> dict[str, Dataset]:
        out: dict[str, Dataset] = {"train": self.train_split()}
        for split in SPLITS[1:]:
            dataset = self._split(split)
            if dataset is not None:
                out[split] = dataset
        self.labels = list(out["train"].label_names)
        if self.data.split is not None:
            print(split_line(out["train"].files["train"], out["train"].file_examples, split_of(self.data.split)),
                  file=sys.stderr)
        return out

    def unknown_lines(self, unknown: dict[str, Any] | None) -> list[str]:
        """The share of unknown tokens of the training set as a report line (none when there are
        none); above :data:`UNKNOWN_WARNING` percent also one warning naming the share and the most
        frequent unknown tokens or characters."""
        if not unknown or not unknown["share"]:
            return []
        share, top = unknown["share"], unknown["top"]
        what = self.vocabulary_name()
        if share > UNKNOWN_WARNING:
            shown = ", ".join(f"{t} ({n})" for t, n in top)
            warnings.warn(f"{share:.1f} % of the training tokens are unknown to {what} (more than "
                          f"{UNKNOWN_WARNING} %); most frequent unknown: {shown}", stacklevel=2)
        return [f"unknown tokens: {share:.1f} % of the training tokens are not in {what}"]

    def split_unknown_share(self, dataset: Dataset) -> float | None:
        """Percent of a split's tokens that are unknown to the model (``<unk>`` of the training
        vocabulary, or ``[UNK]`` of the pretrained tokenizer), from its stored graphs; ``None``
        for a dataset without stored graphs."""
        store = getattr(dataset, "_data", None)
        if store is None or "token" not in store.node_types or "word_id" not in store["token"]:
            return None
        ids = store["token"].word_id
        unk = self.unk_id()
        return 100.0 * float((ids == unk).sum()) / ids.numel() if ids.numel() else 0.0

    @staticmethod
    def shared_entity_lines(dataset: Dataset) -> int | None:
        """How many of a split's sentences have entities that nest or overlap (a token in both
        e1 and e2), from its stored graphs; ``None`` without them."""
        store = getattr(dataset, "_data", None)
        slices = getattr(dataset, "slices", None)
        edge = ("token", "in", "entity")
        if store is None or slices is None or edge not in store.edge_types:
            return None
        index = store[edge].edge_index
        bounds = slices[edge]["edge_index"]
        graph = torch.repeat_interleave(torch.arange(len(bounds) - 1), bounds.diff())
        tokens = torch.stack([graph, index[0]], 1)
        pairs, counts = tokens.unique(dim=0, return_counts=True)
        return int(pairs[counts > 1, 0].unique().numel())

    def data_lines(self, datasets: dict[str, Dataset]) -> list[str]:
        """The unknown share of every split against what the model knows (train, dev and test:
        the vocabulary is the training set's, so train's is 0 with ``min_freq: 1`` while dev and
        test show how much the model has never seen), and how many sentences of each split have
        nested or overlapping entities."""
        what = self.vocabulary_name(training=True)
        shares = {split: self.split_unknown_share(ds) for split, ds in datasets.items() if ds is not None}
        nested = {split: self.shared_entity_lines(ds) for split, ds in datasets.items() if ds is not None}
        lines = []
        if all(v is not None for v in shares.values()) and shares:
            lines.append("unknown tokens per split (not in " + what + "): "
                         + ", ".join(f"{split} {v:.1f} %" for split, v in shares.items()))
        if all(v is not None for v in nested.values()) and nested:
            lines.append("sentences with nested or overlapping entities (sharing tokens): "
                         + ", ".join(f"{split} {n} of {len(datasets[split])}" for split, n in nested.items()))
        return lines

    def report(self, datasets: dict[str, Dataset]) -> list[str]:
        """The length ``data.max_length: auto`` chose, the share of unknown training tokens
        (:meth:`unknown_lines`), the unknown share and nested-entity sentences of every split
        (:meth:`data_lines`), what the two precision-recall areas rank, and, with ``data.kg``,
        one line per split saying how much knowledge
        its sentences got (:meth:`RelationDataset.coverage
        <graphmatch.data.relation.RelationDataset.coverage>`), with a warning when the graph
        matched almost nothing of the training split (another language); with ``data.select``,
        the candidate branches each split kept
        (:func:`~graphmatch.tasks.knowledge_selection.selection_lines`)."""
        lines = [f"warning: {line}" for line in [self.optimiser_warning()] if line]
        if self.data.max_length == "auto":
            lines.append(f"data.max_length=auto: {self.max_length()} tokens, the longest training sentence")
        lines += self.unknown_lines(getattr(datasets["train"], "unknown", None))
        lines += self.data_lines(datasets)
        lines.append("pr_auc ranks every (sentence, relation) pair by its probability (OpenNRE); pr_auc_top1 ranks "
                     "each sentence's predicted relation (SanWen / FinRE papers)")
        for split, dataset in datasets.items():
            coverage = dataset.coverage() if isinstance(dataset, RelationDataset) else None
            if coverage is not None:
                lines.append(f"{split} {coverage}")
                warning = coverage.knowledge.warning(str(self.data.kg)) if split == "train" else None
                if warning is not None:
                    lines.append(f"warning: {warning}")
        return lines + selection_lines(self.data.select.by, datasets)

    def optimiser_warning(self) -> str | None:
        """One line when the model trains with an optimiser meant for another variant (a variant
        that has one overrides this); ``None`` here."""
        return None

    def starts_from(self) -> str | None:
        """What the model's weights start from, for :meth:`used` (``model.pretrained``, word vectors), or None."""
        return None

    def used(self) -> str:
        """The model (with its pretrained encoder or word vectors) and the data files."""
        m, d = self.model, self.data
        encoder = self.starts_from()
        files = [f for f in (d.train_file, d.dev_file, d.test_file) if f]
        return (f"{m.name}" + (f" over {encoder}" if encoder else "") + "; data: "
                + (", ".join(str(f) for f in files) if files else "SemEval-2010 Task 8"))

    def label_names(self) -> list[str]:
        """The labels of a checkpoint (:meth:`set_extra_state`), else of the training split (built
        for this; dev and test are not)."""
        if self.labels is None:
            self.labels = list(self.train_split().label_names)
        return list(self.labels)

    def max_length(self) -> int:
        """``data.max_length``, or the length ``auto`` chose on the training split (or a checkpoint's)."""
        if self.options.auto:
            self.options = self.options.decided(self.train_split().max_length)
        return int(self.options.max_length)

    def knowledge_graph(self) -> KnowledgeGraph | None:
        """The knowledge graph of ``data.kg`` (read once), :obj:`None` without one."""
        path = resolve_kg(self.data.kg, self.data.root) if self._kg is None else None
        if path is not None:
            self._kg = KnowledgeGraph.shared(path)
        return self._kg

    def encode(self, text: str, text_b: str | None = None) -> HeteroData:
        """A marked sentence (``… <e1>…</e1> … <e2>…</e2> …``, optionally ``ID<TAB>"…"``), or a
        ``head<TAB>tail<TAB>sentence`` line."""
        sentence, sid = self._sentence(text, text_b)
        return _with_sid(self.builder()(sentence), sid)

    def encode_many(self, inputs: Sequence[tuple[str, str | None]]) -> tuple[list[HeteroData], list[dict[str, Any]]]:
        """:meth:`encode` of every input, their text pieces cut by one tokenizer call where the
        builder can (:meth:`~graphmatch.graphs.relation.RelationGraphBuilder.many`)."""
        sentences = []
        for i, (text, text_b) in enumerate(inputs):
            try:
                sentences.append(self._sentence(text, text_b))
            except ValueError as err:
                raise InputError(i, str(err)) from err
        graphs = self.builder().many([sentence for sentence, _ in sentences])
        return [_with_sid(data, sid) for data, (_, sid) in zip(graphs, sentences, strict=True)], [{} for _ in graphs]

    @staticmethod
    def _sentence(text: str, text_b: str | None) -> tuple[MarkedSentence, str | None]:
        """The marked sentence of one :meth:`encode` input, and its ID when the line has one."""
        from graphmatch.graphs.relation_markup import locate_entities

        if text_b is not None:
            raise ValueError("relation classification takes one marked sentence, not a pair")
        fields = text.strip("\r\n").split("\t")
        if len(fields) == 3 and "<e1>" not in text:
            return locate_entities(*(f.strip() for f in (fields[2], fields[0], fields[1]))), None
        sid, sentence = split_input_line(text)
        return parse_markup(sentence), sid

    def input_columns(self) -> tuple[str, ...]:
        """The relation corpora's columns (a SemEval file is recognised by its own layout)."""
        return ("head", "tail", "relation", "sentence")

    def read_inputs(self, path: str | os.PathLike) -> list[InputLine]:
        return read_relation_inputs(path, self.input_columns(), self.input_fields, self.dataset_fields)

    def input_fields(self, fields: list[str]) -> tuple[str, ...]:
        """A marked sentence, ``ID<TAB>"sentence"`` or ``head<TAB>tail<TAB>sentence`` (one :meth:`encode` text)."""
        if len(fields) not in (1, 2, 3):
            raise ValueError(f"{len(fields)} columns; expected a marked sentence, ID and sentence, or head, tail "
                             "and sentence")
        return ("\t".join(fields),)

    def get_extra_state(self) -> dict[str, Any]:
        state: dict[str, Any] = {"labels": self.label_names(), **self.vocabulary_state()}
        if self.data.max_length == "auto":
            state["max_length"] = self.max_length()
        return state

    def set_extra_state(self, state: dict[str, Any]) -> None:
        if "max_length" in state and self.options.auto:
            self.options = self.options.decided(state["max_length"])
        from graphmatch.data.relation_formats import SEMEVAL_LABELS

        self.labels = list(state.get("labels", SEMEVAL_LABELS))  # checkpoints before labels were stored

    # ---------------------------------------------------------------- model
    def input_files(self) -> dict[str, str]:
        """The knowledge graph of ``data.kg``, where given (a BiLSTM adds its word vectors)."""
        kg = resolve_kg(self.data.kg, self.data.root)
        return {"kg": str(kg)} if kg is not None else {}

    def user_files(self) -> dict[str, str]:
        """A ``.spo`` file given as ``data.kg``, which a loaded run reads again. Word vectors are only
        recorded: the checkpoint holds the embeddings they started, and they can be gigabytes."""
        return {"kg": "data.kg"} if is_own_kg(self.data.kg) else {}

    def loss(self, out: Tensor, batch: Batch) -> Tensor:
        """Cross-entropy, weighted per label as ``model.class_weight`` says (the engine adds :meth:`penalty`)."""
        out = fp32_logits(out)  # fp32 under mixed precision
        weight = self.class_weights()
        return F.cross_entropy(out, batch.y, weight=None if weight is None else weight.to(out))

    def training_labels(self) -> Tensor:
        return self.train_split()._data.y

    def penalty(self, model: torch.nn.Module) -> Tensor | None:
        r"""The L2 term :math:`\lambda \cdot \tfrac12 \sum \lVert \theta \rVert^2` over
        :meth:`l2_parameters` (None when ``model.l2`` is 0)."""
        params = self.l2_parameters(model)
        if not self.model.l2 or not params:
            return None
        return 0.5 * self.model.l2 * sum(p.pow(2).sum() for p in params)

    def decode(self, out: Tensor, batch: Batch) -> list[dict[str, Any]]:
        """One row per sentence: ``pred``, ``gold``, ``prob`` (of ``pred``) and ``probs`` (every
        label's probability in :meth:`label_names` order, rounded to :data:`PROBS_DIGITS` digits;
        ``pr_auc`` reads them, :meth:`write_predictions` leaves them out)."""
        labels = self.label_names()
        probs = torch.softmax(out.detach().float(), dim=-1)
        prob, pred = probs.max(dim=-1)
        gold = batch.y.tolist() if "y" in batch else [None] * len(pred)
        ids = batch.sid.tolist() if "sid" in batch else [None] * len(pred)
        every = probs.mul(10**PROBS_DIGITS).round().div(10**PROBS_DIGITS).tolist()
        return [
            {"id": i, "pred": labels[p], "gold": None if g is None else labels[g], "prob": float(q), "probs": ps}
            for i, p, g, q, ps in zip(ids, pred.tolist(), gold, prob.tolist(), every, strict=True)
        ]

    # -------------------------------------------------------------- outputs
    def write_predictions(self, path: str, rows: list[dict[str, Any]]) -> None:
        """JSON lines at ``path``, plus (SemEval labels) the official ``ID<TAB>LABEL`` answer file and key."""
        super().write_predictions(path, [{k: v for k, v in r.items() if k != "probs"} for r in rows])
        if not is_semeval(self.label_names()):
            return
        stem = Path(path).with_suffix("")
        ids = [r.get("id") if r.get("id") is not None else k + 1 for k, r in enumerate(rows)]
        write_answers(f"{stem}.semeval.txt", ids, [r["pred"] for r in rows])
        if rows and all(r.get("gold") is not None for r in rows):
            write_answers(f"{stem}.semeval_key.txt", ids, [r["gold"] for r in rows])

    def explain(self, model: torch.nn.Module, data: HeteroData) -> dict[str, Any]:
        """Attention over the tokens (and, for the entity-aware models, over the latent types),
        as the arguments of :func:`graphmatch.viz.attention.draw_token_attention`."""
        batch = data if isinstance(data, Batch) else Batch.from_data_list([data])
        if batch.num_graphs != 1:
            raise ValueError(f"explain draws one sentence, got a batch of {batch.num_graphs}")
        model.eval()
        with torch.no_grad():
            logits, att = model(batch, return_attention=True)
        if "token" not in att:
            raise ValueError(f"model.name={self.model.name} has no attention to draw; --explain needs an "
                             "attention model")
        prob, pred = torch.softmax(logits[0], -1).max(-1)
        ent = batch["token", "in", "entity"].edge_index
        return {
            "tokens": list(tokens_of(data, self.token_vocab())),
            "weights": att["token"].tolist(),
            "entity_tokens": [ent[0, ent[1] == k].tolist() for k in range(2)],
            "type_weights": None if "types" not in att else att["types"][0].tolist(),
            "title": f"{self.label_names()[int(pred)]}  (p = {float(prob):.2f})",
        }


def write_answers(path: str | os.PathLike, ids: list[int], labels: list[str]) -> None:
    """An ``ID<TAB>LABEL`` file, every line ending in a newline, as the official scorer reads it."""
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.writelines(f"{i}\t{label}\n" for i, label in zip(ids, labels, strict=True))


def _with_sid(data: HeteroData, sid: str | None) -> HeteroData:
    """``data`` with the sentence ID of its input line (SemEval's ``8001``), where it has one."""
    if sid is not None:
        data.sid = torch.tensor([int(sid)])
    return data
