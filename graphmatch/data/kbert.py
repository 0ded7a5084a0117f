"""K-BERT's datasets as PyG datasets of sentence-tree graphs (:mod:`graphmatch.graphs.kbert`).

Three file formats, each a TSV with a header row naming its columns:

* sentence classification (``book_review``, ``chnsenticorp``, ``shopping``, ``sst2``): ``label  text_a``
  (GLUE's ``sentence`` column is read as ``text_a``);
* sentence pairs (``lcqmc``): ``text_a  text_b  label``;
* NER (``msra_ner``, ``medical_ner``): ``text_a  label``, space-separated characters and as many
  space-separated BIO tags.

Files are UTF-8 (a byte-order mark is ignored; invalid UTF-8 names the file and line). The label
set is read from the training file (or given, for dev and test: a label outside it is an error
naming ``file:line``); rare labels, unused columns and extra fields follow the rule of
:mod:`graphmatch.data.labels`. A dataset folder given by a relative path is looked up as
:func:`graphmatch.io.datafiles.resolve_path` says (working folder, then the data roots). Processed
graphs are cached as :mod:`graphmatch.data.cached` says: keyed by every option that changes them,
the builder's format version and the sha256 of the source, KG and vocabulary files.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import torch
from torch_geometric.data import HeteroData
from torch_geometric.utils import cumsum

from graphmatch.data.cached import CachedDataset
from graphmatch.data.file_split import split_rows, split_sizes
from graphmatch.data.labels import check_label_spellings, warn_rare_labels, warn_unused_columns
from graphmatch.errors import InputError
from graphmatch.graphs.branch_selection import BranchSelection
from graphmatch.graphs.kbert import FORMAT_VERSION as GRAPHS_FORMAT
from graphmatch.graphs.kbert import SentenceTreeBuilder
from graphmatch.graphs.kbert.corpus import Slices, TreeCorpusBuilder
from graphmatch.graphs.kbert.options import TreeOptions
from graphmatch.io.atomic import write_atomically
from graphmatch.io.datafiles import locate, resolve_path
from graphmatch.io.text_files import iter_lines
from graphmatch.knowledge import KnowledgeGraph, resolve_kg
from graphmatch.text.pretrained import tokenization_of, tokenizer_for
from graphmatch.utils.deprecated import old_keywords, options_given

#: bump when what this module stores beside the builder's graphs (tags, num_chars, labels) changes
FORMAT_VERSION = 1
SPLITS = ("train", "dev", "test")
#: built-in dataset name -> (file pattern relative to the data root, kind)
DATASETS: dict[str, tuple[str, str]] = {
    "book_review": ("kbert/datasets/book_review/{split}.tsv", "classification"),
    "chnsenticorp": ("kbert/datasets/chnsenticorp/{split}.tsv", "classification"),
    "shopping": ("kbert/datasets/shopping/{split}.tsv", "classification"),
    "sst2": ("sst2/{split}.tsv", "classification"),
    "lcqmc": ("lcqmc/{split}.tsv", "pair"),
    "msra_ner": ("kbert/datasets/msra_ner/{split}.tsv", "ner"),
    "medical_ner": ("kbert/datasets/medical_ner/{split}.tsv", "ner"),
}


@dataclass(frozen=True)
class Example:
    """One parsed data line; ``line`` is its 1-based line number in ``path``."""

    text_a: str
    text_b: str | None
    label: str | list[str]
    path: str
    line: int

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


def read_header(path: str | os.PathLike, required: tuple[str, ...]) -> tuple[dict[str, int], list[str]]:
    """Column indices of a TSV's header and its data lines; a missing column names the file.
    The file is read with :func:`~graphmatch.io.text_files.iter_lines` (UTF-8, BOM ignored)."""
    lines = list(iter_lines(path))
    if lines and lines[-1] == "":
        lines.pop()  # the end of the last line
    if not lines:
        raise ValueError(f"{path}: empty file (expected a header with columns {', '.join(required)})")
    columns = {name.strip(): i for i, name in enumerate(lines[0].split("\t"))}
    if "sentence" in columns and "text_a" not in columns:  # GLUE's name of the text column
        columns["text_a"] = columns.pop("sentence")
    missing = [c for c in required if c not in columns]
    if missing:
        raise ValueError(f"{path}:1: header {lines[0]!r} lacks column(s) {', '.join(missing)}")
    return columns, lines[1:]


def data_lines(path: str | os.PathLike, required: tuple[str, ...]) -> list[tuple[int, str]]:
    """The non-blank data lines of a TSV with a header, each with its 1-based line number."""
    return [(n, line) for n, line in enumerate(read_header(path, required)[1], 2) if line.strip()]


class KBertDataset(CachedDataset):
    r"""Base class of the K-BERT datasets: one split of one TSV file as sentence-tree graphs.

    Args:
        name (str): a built-in dataset (``book_review``, ``chnsenticorp``, ``shopping``, ``lcqmc``,
            ``msra_ner``, ``medical_ner``) or a folder holding ``{train,dev,test}.tsv``.
        split (str): ``"train"``, ``"dev"`` or ``"test"``. (default: ``"train"``)
        root (str, optional): data root (else ``$GRAPHMATCH_DATA``, else a checked download).
        cache (str, optional): where processed graphs go (default
            ``$GRAPHMATCH_CACHE/processed/kbert``).
        kg (str, optional): ``"hownet"``, ``"medical"``, a ``.spo`` path, or ``None`` for no
            knowledge (plain BERT input). (default: ``"hownet"``)
        vocab (str, optional): a ``vocab.txt`` (default: Google's Chinese BERT vocabulary).
        labels (list[str], optional): the label (tag) set, index = id; ``None`` reads it from the
            file (do that for train only and pass train's labels to dev and test).
        limit (int, optional): read only the first ``limit`` data lines (quick runs).
        split_of (Mapping, optional): ``{"dev", "test", "seed"}`` of ``data.split``: ``name`` is one
            file (or a folder holding only ``train.tsv``) cut into the three splits
            (:mod:`graphmatch.data.file_split`).
        force_reload (bool): rebuild even when a cache exists.
        builder (SentenceTreeBuilder, optional): the builder, made from ``kg`` and ``vocab`` (its
            options key the cache); by default :func:`tree_builder` makes it when graphs are built.
        options (TreeOptions, optional): everything about the trees, made once (the task's:
            :meth:`TreeOptions.of <graphmatch.graphs.kbert.options.TreeOptions.of>` a recipe's ``data``);
            by default the builder's defaults for this kind of data, in the tokenization the
            vocabulary implies (:func:`graphmatch.text.checkpoint.tokenization_of`). The loose
            keywords of old calls (``max_length=``, ``mode=``, ...) still work, with a
            ``DeprecationWarning``, until the next release.
        selection (BranchSelection, optional): the branches that fit the sentence
            (:mod:`~graphmatch.graphs.branch_selection`); its settings key the cache.

    Graphs carry ``y`` (``[1]``, classification) or ``token.y`` (NER tag ids, -100 on branch
    tokens), and ``entity.length`` (tokens of each branch kept after the cut). NER graphs also
    carry ``tags`` (gold tag ids of every original character, ``[C]``) and ``num_chars``
    (``[1]``), so predictions map back to characters, including those cut by truncation.
    """

    family = "kbert"
    format_version = FORMAT_VERSION
    kind: ClassVar[str]
    required: ClassVar[tuple[str, ...]]

    def __init__(self, name: str, split: str = "train", root: str | os.PathLike | None = None,
                 cache: str | os.PathLike | None = None, kg: str | os.PathLike | None = "hownet",
                 vocab: str | os.PathLike | None = None, labels: list[str] | None = None, limit: int | None = None,
                 options: TreeOptions | None = None, selection: BranchSelection | None = None,
                 builder: SentenceTreeBuilder | None = None, transform=None, force_reload: bool = False,
                 progress: bool = True, split_of: Mapping[str, Any] | None = None,
                 **old: Any):
        if split not in SPLITS:
            raise ValueError(f"unknown split {split!r}; choose one of {', '.join(SPLITS)}")
        if limit is not None and limit < 1:
            raise ValueError(f"limit must be a positive number of lines or None, got {limit}")
        self.name, self.split = name, split
        self.split_of = dict(split_of) if split_of is not None else None
        self.source = source_file(name, split, root, self.split_of)
        self.kg_path = resolve_kg(kg, root)
        self.vocab_path = (resolve_path(vocab, root, "vocabulary") if vocab is not None
                           else locate("kbert/vocab/google_vocab.txt", root))
        self.limit, self.progress = limit, progress
        self.given_labels = list(labels) if labels is not None else None
        self.labels: list[str] = list(labels) if labels is not None else []
        self._given, self._builder = builder is not None, builder
        if options is None:
            options = self._old_options(old)
        else:  # a TypeError for other options, or options and old keywords both
            options_given(type(self).__name__, TreeOptions, options, old)
        if options.kind != self.kind:
            raise ValueError(f"tree options of {options.kind} data for a {self.kind} dataset")
        #: what the trees are built with
        self.tree_options = options
        self._tree_options = options.cache_key(labels)
        self._selection = selection
        if selection is not None:  # only then: the keys of caches without a selection stay as they were
            self._tree_options["selection"] = selection.options()
        #: the candidate branches seen and kept, and a sample of those dropped (``selection.json``)
        self.selection_report: dict[str, Any] | None = None
        super().__init__(root, cache, transform=transform, force_reload=force_reload)

    def _old_options(self, old: dict[str, Any]) -> TreeOptions:
        """The tree options of a call without ``options=``: the defaults for this kind of data, the
        tokenization its vocabulary implies, and the loose keywords of old calls (``max_length``,
        ``max_entities``, ``mode``, ``tokenization``, ``lowercase``, ``noun_reading``; deprecated)."""
        tokenization = tokenization_of(self.vocab_path, old.get("tokenization", "auto"), tagging=self.kind == "ner")
        given = {**old, "tokenization": tokenization} if "tokenization" in old else old
        return old_keywords(type(self).__name__, TreeOptions(self.kind, tokenization=tokenization), given)

    # ----------------------------------------------------------------- cache
    def builder_key(self) -> dict[str, Any]:
        options = (self._tree_options if not self._given
                   else builder_options(self._builder, self._tree_options))
        return {"name": f"{SentenceTreeBuilder.__module__}.{SentenceTreeBuilder.__qualname__}",
                "format": GRAPHS_FORMAT, "options": options}

    def input_files(self) -> dict[str, Path | None]:
        return {"source": self.source, "kg": self.kg_path, "vocab": self.vocab_path}

    def options(self) -> dict[str, Any]:
        options = {"kind": self.kind, "limit": self.limit, "labels": self.given_labels}
        return options if self.split_of is None else {**options, "split": self.split_of}

    def stem(self) -> str:
        return f"{self.name if self.name in DATASETS else Path(self.name).name}-{self.split}"

    def stored_files(self) -> list[str]:
        return ["data.pt", "labels.json"] + (["selection.json"] if self._selection is not None else [])

    def load_cache(self) -> None:
        self.load(self.processed_paths[0], data_cls=HeteroData)
        with open(self.processed_paths[1], encoding="utf-8") as f:
            self.labels = json.load(f)
        if self._selection is not None:
            self.selection_report = json.loads(Path(self.processed_paths[2]).read_text(encoding="utf-8"))

    # ------------------------------------------------------------- building
    @property
    def builder(self) -> SentenceTreeBuilder:
        """The sentence-tree builder these graphs are made with (made on first use; NER tag ids
        from :attr:`labels`)."""
        if self._builder is None:
            self._builder = tree_builder(self.kg_path, self.vocab_path, self.tree_options,
                                         labels=self.labels if self.kind == "ner" else None, selection=self._selection)
        return self._builder

    def write(self) -> None:
        examples = self.read()
        if not examples:
            raise ValueError(f"{self.source}: no data lines")
        if not self.labels:
            if self.kind != "ner":
                check_label_spellings([ex.label for ex in examples], [ex.where for ex in examples])
            self.labels = label_set(examples, self.kind)
            warn_rare_labels([[ex.label] if isinstance(ex.label, str) else ex.label for ex in examples],
                             [ex.where for ex in examples])
        self.check_labels(examples)
        corpus = TreeCorpusBuilder(self.builder)
        index = {label: i for i, label in enumerate(self.labels)}
        selection = self.builder.selection
        seen = selection.mark() if selection is not None else None
        try:
            data, slices = self.build(corpus, examples, index)
        except InputError as err:
            raise ValueError(f"{examples[err.index].where}: {err.reason}") from err
        stored = (data.to_dict(), slices, HeteroData)  # the layout of InMemoryDataset.save
        write_atomically(self.processed_paths[0], lambda tmp: torch.save(stored, tmp))
        text = json.dumps(self.labels, indent=1, ensure_ascii=False)
        write_atomically(self.processed_paths[1], lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
        if seen is not None:
            self.selection_report = selection.report(seen)
            report = json.dumps(self.selection_report, indent=1, ensure_ascii=False)
            write_atomically(self.processed_paths[2], lambda tmp: Path(tmp).write_text(report, encoding="utf-8"))

    def read(self) -> list[Example]:
        """Parse the source file (the first ``limit`` data lines); bad lines name ``file:line``."""
        columns, lines = read_header(self.source, self.required)
        if self.split == "train":
            warn_unused_columns(str(self.source), columns, self.required)
        numbered = [(n, line) for n, line in enumerate(lines, 2) if line.strip()]
        if self.split_of is not None:
            numbered = [numbered[i] for i in split_rows(len(numbered), self.split, where=self.source,
                                                        **self.split_of)]
        out = []
        for n, line in numbered[:self.limit]:
            fields = line.split("\t")
            if len(fields) != len(columns):
                raise ValueError(f"{self.source}:{n}: expected {len(columns)} tab-separated fields "
                                 f"({', '.join(columns)}), got {len(fields)}"
                                 + (" (a tab inside a text?)" if len(fields) > len(columns) else ""))
            out.append(self.parse(fields, columns, str(self.source), n))
        return out

    def parse(self, fields: list[str], columns: dict[str, int], path: str, line: int) -> Example:
        raise NotImplementedError

    def build(self, corpus: TreeCorpusBuilder, examples: list[Example],
              index: dict[str, int]) -> tuple[HeteroData, Slices]:
        """All graphs at once, collated (see :class:`~graphmatch.graphs.kbert.TreeCorpusBuilder`)."""
        texts_b = [ex.text_b for ex in examples] if self.kind == "pair" else None
        ner = self.kind == "ner"
        return corpus([ex.text_a for ex in examples], texts_b,
                      labels=None if ner else [index[ex.label] for ex in examples],
                      tags=[ex.label for ex in examples] if ner else None,
                      progress=self.progress, desc=f"K-BERT graphs {self.name}/{self.split}")

    def check_labels(self, examples: list[Example]) -> None:
        known = set(self.labels)
        for ex in examples:
            bad = [t for t in ([ex.label] if isinstance(ex.label, str) else ex.label) if t not in known]
            if bad:
                raise ValueError(f"{ex.where}: label {bad[0]!r} is not in the label set of the training data "
                                 f"({', '.join(self.labels)})")

    def label_ids(self) -> torch.Tensor:
        """Every label id of the split at once: ``y`` (one a graph), or for NER ``token.y`` (tag ids,
        -100 on branch tokens)."""
        return self._data["token"].y if self.kind == "ner" else self._data.y

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name}/{self.split}, {len(self)} graphs, {len(self.labels)} labels)"


class KBertClassificationDataset(KBertDataset):
    """Sentence classification: ``label<TAB>text_a`` with a header row."""

    kind = "classification"
    required = ("label", "text_a")

    def parse(self, fields, columns, path, line) -> Example:
        text, label = fields[columns["text_a"]], fields[columns["label"]].strip()
        if not text.strip() or not label:
            raise ValueError(f"{path}:{line}: empty text or label")
        return Example(text, None, label, path, line)


class KBertPairDataset(KBertDataset):
    """Sentence pairs (LCQMC): ``text_a<TAB>text_b<TAB>label`` with a header row."""

    kind = "pair"
    required = ("text_a", "text_b", "label")

    def parse(self, fields, columns, path, line) -> Example:
        a, b, label = (fields[columns[c]] for c in ("text_a", "text_b", "label"))
        if not a.strip() or not b.strip() or not label.strip():
            raise ValueError(f"{path}:{line}: empty text_a, text_b or label")
        return Example(a, b, label.strip(), path, line)


class KBertNERDataset(KBertDataset):
    """NER: ``text_a<TAB>label``, space-separated characters and as many BIO tags. As in K-BERT's
    NER script, no ``[CLS]`` is added and a branch is the object alone (no predicate)."""

    kind = "ner"
    required = ("text_a", "label")

    def parse(self, fields, columns, path, line) -> Example:
        chars = fields[columns["text_a"]].split(" ")
        tags = fields[columns["label"]].strip().split(" ")
        if len(chars) != len(tags):
            raise ValueError(f"{path}:{line}: {len(chars)} characters but {len(tags)} tags")
        long = [c for c in chars if len(c) != 1]
        if long:
            raise ValueError(f"{path}:{line}: expected one character per space-separated item, got {long[0]!r}")
        return Example("".join(chars), None, tags, path, line)

    def build(self, corpus, examples, index) -> tuple[HeteroData, Slices]:
        data, slices = super().build(corpus, examples, index)
        counts = torch.tensor([len(ex.label) for ex in examples])
        data.tags = torch.tensor([index[t] for ex in examples for t in ex.label], dtype=torch.long)
        data.num_chars = counts
        slices["tags"] = cumsum(counts)
        slices["num_chars"] = torch.arange(len(examples) + 1)
        return data, slices


KINDS: dict[str, type[KBertDataset]] = {
    "classification": KBertClassificationDataset, "pair": KBertPairDataset, "ner": KBertNERDataset,
}


def dataset_kind(name: str, root: str | os.PathLike | None = None, split_of: Mapping[str, Any] | None = None) -> str:
    """``"classification"``, ``"pair"`` or ``"ner"`` for a built-in name, a folder or one file cut by
    ``split_of`` (by its train header: ``text_b`` → pair; ``text_a`` first and ``label`` with BIO tags → ner)."""
    if name in DATASETS:
        return DATASETS[name][1]
    columns, lines = read_header(source_file(name, "train", root, split_of), ("text_a", "label"))
    if "text_b" in columns:
        return "pair"
    first = next((ln.split("\t") for ln in lines if ln.strip()), None)
    return "ner" if first is not None and " " in first[columns["text_a"]].strip() and \
        len(first[columns["text_a"]].split(" ")) == len(first[columns["label"]].split(" ")) else "classification"


def check_files(name: str, kind: str, root: str | os.PathLike | None = None,
                limits: dict[str, int | None] | None = None, split_of: Mapping[str, Any] | None = None) -> None:
    """Check a dataset folder's three files before any graph is built: each there, readable, with
    the columns of ``kind`` in its header and that many fields on each data line (the first
    ``limits[split]`` lines; with ``split_of``, every line of the one file, and that it leaves lines
    to train on). Every problem found is named in one ValueError (a built-in name is not read here).

    Raises:
        ValueError: ``file:line`` and what is wrong, for every file, joined by ``; ``.
    """
    if name in DATASETS and split_of is None:
        return
    problems = []
    for split in SPLITS if split_of is None else ("train",):
        try:
            path = source_file(name, split, root, split_of)
            columns, lines = read_header(path, KINDS[kind].required)
            limit, seen = (limits or {}).get(split) if split_of is None else None, 0
            for n, line in enumerate(lines, 2):
                if limit is not None and seen >= limit:
                    break
                if not line.strip():
                    continue
                seen += 1
                if len(line.split("\t")) != len(columns):
                    raise ValueError(f"{path}:{n}: expected {len(columns)} tab-separated fields "
                                     f"({', '.join(columns)}), got {len(line.split(chr(9)))}")
            if seen == 0:
                raise ValueError(f"{path}: no data lines")
            if split_of is not None:
                split_sizes(seen, split_of["dev"], split_of["test"], path)
        except (OSError, ValueError) as err:
            problems.append(str(err).removeprefix(f"dataset {name!r} is neither one of {', '.join(DATASETS)} "))
    if problems:
        raise ValueError("; ".join(dict.fromkeys(problems)))


def source_file(name: str, split: str, root: str | os.PathLike | None = None,
                split_of: Mapping[str, Any] | None = None) -> Path:
    """The TSV of ``split`` for a built-in dataset name or a folder of ``{split}.tsv`` files; with
    ``split_of`` (``data.split``), the one file every split is cut from: ``name`` itself, or a
    folder's ``train.tsv`` when the folder holds no ``dev.tsv`` or ``test.tsv``."""
    if name in DATASETS:
        if split_of is not None:
            raise ValueError(f"data.split: {name} has its own train, dev and test files; leave data.split off")
        return locate(DATASETS[name][0].format(split=split), root)
    try:
        folder = resolve_path(name, root, "dataset folder")
    except FileNotFoundError as err:
        raise FileNotFoundError(f"dataset {name!r} is neither one of {', '.join(DATASETS)} nor a folder "
                                f"or file ({err})") from None
    if folder.is_file():
        if split_of is None:
            raise ValueError(f"data.dataset: {folder} is one file; give data.split (e.g. {{dev: 0.1, test: 0.1, "
                             "seed: 1}) to cut it into train, dev and test, or a folder of train/dev/test.tsv")
        return folder
    if split_of is not None:
        held = [f"{s}.tsv" for s in ("dev", "test") if (folder / f"{s}.tsv").is_file()]
        if held:
            raise ValueError(f"data.split: the folder {folder} already holds {' and '.join(held)}; leave data.split "
                             "off, or give one file")
        split = "train"
    path = folder / f"{split}.tsv"
    if not path.is_file():
        raise FileNotFoundError(f"dataset folder {folder} holds no {split}.tsv")
    return path


def label_set(examples: list[Example], kind: str) -> list[str]:
    """Sorted labels of the examples; for NER ``O`` first, then the tags sorted."""
    if kind == "ner":
        tags = {t for ex in examples for t in ex.label}
        return (["O"] if "O" in tags else []) + sorted(tags - {"O"})
    labels = {ex.label for ex in examples}
    return sorted(labels, key=lambda s: (0, int(s)) if s.lstrip("-").isdigit() else (1, s))


def tree_builder(kg_path: str | os.PathLike | None, vocab_path: str | os.PathLike, options: TreeOptions,
                 labels: list[str] | None = None, keep_text: bool = False,
                 selection: BranchSelection | None = None) -> SentenceTreeBuilder:
    """The sentence-tree builder over a ``.spo`` file (``None``: no knowledge) and a vocabulary read
    as ``options`` say (its tokenization and case), with NER's ``labels`` and a branch ``selection``:
    the one place K-BERT's builder is made from files."""
    kg = KnowledgeGraph.shared(kg_path) if kg_path is not None else None
    tokenizer = tokenizer_for(vocab_path, options.tokenization, options.lowercase)
    return SentenceTreeBuilder(kg, tokenizer, options, labels=labels, keep_text=keep_text, selection=selection)


def builder_options(builder: SentenceTreeBuilder, names: Iterable[str]) -> dict[str, Any]:
    """The settings ``names`` (of :meth:`~graphmatch.graphs.kbert.options.TreeOptions.cache_key`) of a
    builder made already, as they key a cache: its tokenizer's, its tag ids, its selection's, and
    the rest from its options."""
    derived = {"tokenizer": lambda: builder.finder.tokenization,
               "lowercase": lambda: builder.tokenizer.lowercase, "stop_words": lambda: sorted(builder.stop_words),
               "selection": lambda: builder.selection.options() if builder.selection is not None else None,
               "noun_readings": lambda: builder.noun_readings is not None,
               "prefix": lambda: builder.prefix, "tag_to_id": lambda: builder.tag_to_id}
    return {name: derived[name]() if name in derived else getattr(builder, name, None)
            if name in _BUILDER_KEYS else getattr(builder.options, name) for name in names}


#: the settings of a cache key that a builder holds as its own attributes (the rest are its options' fields)
_BUILDER_KEYS = frozenset({"max_length", "max_entities", "mode", "query", "segmenter", "predicate", "add_cls",
                           "max_words", "knowledge_as"})


def kbert_dataset(name: str, split: str = "train", root: str | os.PathLike | None = None,
                  options: TreeOptions | None = None, **kwargs: Any) -> KBertDataset:
    """The dataset class that fits ``name`` (see :data:`DATASETS`), built with ``kwargs`` and the
    tree ``options``, their ``kind`` set to the data's."""
    kind = dataset_kind(name, root, kwargs.get("split_of"))
    if options is not None:
        options = dataclasses.replace(options, kind=kind)
    return KINDS[kind](name, split, root=root, options=options, **kwargs)

