"""Relation classification data in either file format as a PyG dataset of relation sentence graphs.

:class:`RelationDataset` reads train, dev and test files (:mod:`graphmatch.data.relation_formats`:
SemEval markup or ``head<TAB>tail<TAB>relation<TAB>sentence``), takes the label set from the
training file, tokenises as asked (English words, Chinese characters, a segmenter's words, or a
pretrained tokenizer's word pieces) and builds one :mod:`graphmatch.graphs.relation` graph per
example; with a knowledge graph (``kg``, word pieces only) a
:mod:`graphmatch.graphs.relation_kbert` graph with K-BERT branches. Without a dev file,
``dev_size`` training examples drawn with ``split_seed`` are held out as dev. The vocabulary
(not for word pieces) is built on the train split only. Processed graphs, the labels and the
vocabulary are cached as :mod:`graphmatch.data.cached` says (keyed by every option that changes
them, the builder's format version and the files' sha256: the knowledge graph's too).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import torch
from torch_geometric.data import HeteroData

from graphmatch.data.cached import CachedDataset
from graphmatch.data.kbert import resolve_kg
from graphmatch.data.relation_formats import RelationExample, check_labels, label_set, read_relation_file
from graphmatch.datafiles import write_atomically
from graphmatch.graphs.relation import (
    DEFAULT_MAX_DISTANCE,
    DEFAULT_MAX_LENGTH,
    POSITION_ANCHORS,
    TOKENIZATIONS,
    RelationGraphBuilder,
    WordPieces,
    splitter,
    tokenize_marked,
    with_markers,
)
from graphmatch.graphs.relation import FORMAT_VERSION as GRAPHS_FORMAT
from graphmatch.graphs.relation_kbert import FORMAT_VERSION as TREES_FORMAT
from graphmatch.graphs.relation_kbert import INJECT, RelationCoverage, RelationTreeBuilder
from graphmatch.knowledge import KnowledgeGraph
from graphmatch.text.vocab import Vocab

SPLITS = ("train", "dev", "test")


def dev_ids(train: list[RelationExample], dev_size: int, seed: int) -> set[int]:
    """Ids of the ``dev_size`` training examples held out as dev (a seeded permutation)."""
    if not 0 < dev_size < len(train):
        raise ValueError(f"dev_size must be between 1 and {len(train) - 1}, got {dev_size}")
    perm = torch.randperm(len(train), generator=torch.Generator().manual_seed(seed))
    return {train[i].sid for i in perm[:dev_size].tolist()}


class RelationDataset(CachedDataset):
    r"""Relation sentence graphs (see :mod:`graphmatch.graphs.relation`) of any relation files.

    Every graph has ``y`` (the index of its label in :attr:`label_names`) and ``sid`` (the
    example's id: SemEval's sentence id, else its line number; ``[1]`` long). The splits share
    one cache folder (one key).

    Args:
        split (str): ``"train"``, ``"dev"`` or ``"test"``. (default: ``"train"``)
        train_file (str): the training file.
        dev_file (str, optional): the dev file; :obj:`None` holds ``dev_size`` training examples out.
        test_file (str, optional): the test file; :obj:`None` = no test split (empty).
        format (str): ``"auto"`` (told by each file's first line), ``"semeval"`` or ``"tsv"``.
        tokenization (str): ``"words"``, ``"chars"``, ``"jieba"``, ``"thulac"``, ``"pkuseg"``
            (see :func:`~graphmatch.graphs.relation.splitter`) or ``"pieces"`` (the word pieces
            of the tokenizer in ``pretrained``). (default: ``"words"``)
        pretrained (str, optional): a local checkpoint folder whose tokenizer gives the word pieces.
        max_distance (int): relative positions are clipped to ±``max_distance``. (default: 50)
        max_length (int): tokens kept per sentence. (default: 90)
        dev_size (int): training examples held out as dev when there is no dev file. (default: 800)
        split_seed (int): seed of the dev draw. (default: 1)
        min_freq (int): training count a token needs to enter the vocabulary. (default: 1)
        markers (bool): keep the entity markers as tokens. (default: True)
        position_anchor (str): relative positions to each entity's ``"span"`` (0 inside it) or
            to its ``"last"`` token. (default: ``"span"``)
        kg (str, optional): a knowledge graph (``"wordnet"``, another name of
            :data:`~graphmatch.knowledge.BUILTIN_KGS` or a ``.spo`` file) whose values are hung
            on the sentences as K-BERT branches (word pieces only); :obj:`None` = none.
        inject (str): with ``kg``: branches on the entities' head words (``"entities"``) or on
            every matched word (``"all"``). (default: ``"entities"``)
        max_entities (int): with ``kg``: values per matched word. (default: 2)
        predicate (bool): with ``kg``: a value is its predicate and object (``type group``), or
            its object alone (``group``). (default: :obj:`True`)
        root (str, optional): the data root (see :class:`~graphmatch.data.cached.CachedDataset`).
        cache (str, optional): folder of processed graphs (default
            ``$GRAPHMATCH_CACHE/processed/relation``).
    """

    family = "relation"

    def __init__(
        self,
        split: str = "train",
        train_file: str | os.PathLike | None = None,
        dev_file: str | os.PathLike | None = None,
        test_file: str | os.PathLike | None = None,
        format: str = "auto",  # noqa: A002 - the recipe key's name
        tokenization: str = "words",
        pretrained: str | os.PathLike | None = None,
        max_distance: int = DEFAULT_MAX_DISTANCE,
        max_length: int = DEFAULT_MAX_LENGTH,
        dev_size: int = 800,
        split_seed: int = 1,
        min_freq: int = 1,
        markers: bool = True,
        position_anchor: str = "span",
        kg: str | os.PathLike | None = None,
        inject: str = "entities",
        max_entities: int = 2,
        predicate: bool = True,
        root: str | os.PathLike | None = None,
        cache: str | os.PathLike | None = None,
        transform=None,
        force_reload: bool = False,
    ):
        if split not in SPLITS:
            raise ValueError(f"unknown split {split!r}; choose one of {', '.join(SPLITS)}")
        if tokenization not in (*TOKENIZATIONS, "pieces"):
            raise ValueError(f"unknown tokenization {tokenization!r}; choose one of {', '.join(TOKENIZATIONS)}, pieces")
        if (tokenization == "pieces") != (pretrained is not None):
            raise ValueError("tokenization 'pieces' needs a pretrained tokenizer folder, and only it takes one")
        if position_anchor not in POSITION_ANCHORS:
            raise ValueError(f"unknown position_anchor {position_anchor!r}; choose one of "
                             f"{', '.join(POSITION_ANCHORS)}")
        if train_file is None:
            raise ValueError("a relation dataset needs a training file (data.train_file)")
        if inject not in INJECT:
            raise ValueError(f"unknown inject {inject!r}; choose one of {', '.join(INJECT)}")
        self.kg_path = resolve_kg(kg, root)
        if self.kg_path is not None and tokenization != "pieces":
            raise ValueError("a knowledge graph (data.kg) needs word pieces: a transformer model")
        self.split = split
        self.files = {"train": _existing(train_file), "dev": _existing(dev_file), "test": _existing(test_file)}
        self.format = format
        self.pieces = WordPieces.from_pretrained(pretrained) if pretrained is not None else None
        self.settings = dict(tokenization=tokenization, max_distance=max_distance, max_length=max_length,
                             dev_size=dev_size, split_seed=split_seed, min_freq=min_freq, markers=markers,
                             position_anchor=position_anchor, inject=inject, max_entities=max_entities,
                             predicate=predicate)
        if split not in self.splits:
            raise ValueError(f"no {split} split: no {split} file was given")
        super().__init__(root, cache, transform=transform, force_reload=force_reload, log=True)

    # ----------------------------------------------------------------- cache
    def builder_key(self) -> dict[str, Any]:
        o = self.settings
        options = {k: o[k] for k in ("tokenization", "max_distance", "max_length", "markers", "position_anchor")}
        if self.pieces is not None:
            options["pieces"] = self.pieces.digest
        builder, version = RelationGraphBuilder, GRAPHS_FORMAT
        if self.kg_path is not None:  # the knowledge graph itself is an input file
            options.update(inject=o["inject"], max_entities=o["max_entities"], predicate=o["predicate"])
            builder, version = RelationTreeBuilder, {"graphs": GRAPHS_FORMAT, "trees": TREES_FORMAT}
        return {"name": f"{builder.__module__}.{builder.__qualname__}", "format": version, "options": options}

    def input_files(self) -> dict[str, Path | None]:
        return dict(self.files) if self.kg_path is None else {**self.files, "kg": self.kg_path}

    def options(self) -> dict[str, Any]:
        o = self.settings
        held_out = self.files["dev"] is None
        return {"format": self.format, "min_freq": o["min_freq"],
                "dev_size": o["dev_size"] if held_out else None, "split_seed": o["split_seed"] if held_out else None}

    def stem(self) -> str:
        """Readable: the tokenization and the options."""
        o = self.settings
        tok = o["tokenization"] if self.pieces is None else f"pieces-{self.pieces.digest}"
        dev = "devfile" if self.files["dev"] is not None else f"dev{o['dev_size']}_s{o['split_seed']}"
        kg = "" if self.kg_path is None else (f"_kg-{self.kg_path.name.split('.')[0]}-{o['inject']}{o['max_entities']}"
                                              f"{'' if o['predicate'] else '-objects'}")
        return (f"{tok}_d{o['max_distance']}_l{o['max_length']}_{dev}_f{o['min_freq']}"
                f"{'_m' if o['markers'] else ''}{'' if o['position_anchor'] == 'span' else '_alast'}{kg}")

    def stored_files(self) -> list[str]:
        return [f"{s}.pt" for s in self.splits] + ["meta.json"]

    def load_cache(self) -> None:
        self.load(self.processed_paths[self.splits.index(self.split)], data_cls=HeteroData)
        meta = json.loads(Path(self.processed_dir, "meta.json").read_text(encoding="utf-8"))
        self.label_names: list[str] = meta["labels"]
        self.vocab = Vocab(meta["vocab"]) if meta["vocab"] is not None else None

    @property
    def splits(self) -> tuple[str, ...]:
        """The splits this dataset has: train, dev, and test when there is a test file."""
        return SPLITS if self.files["test"] is not None else SPLITS[:2]

    def read_splits(self) -> tuple[dict[str, list[RelationExample]], list[str]]:
        """The examples of each split and the label set (that of the training file); dev and
        test labels outside it are errors naming file and line."""
        o = self.settings
        train_all = read_relation_file(self.files["train"], self.format)
        labels = label_set(train_all)
        parts = {"train": train_all, "dev": [], "test": []}
        if self.files["dev"] is None:
            held_out = dev_ids(train_all, o["dev_size"], o["split_seed"])
            parts["train"] = [ex for ex in train_all if ex.sid not in held_out]
            parts["dev"] = [ex for ex in train_all if ex.sid in held_out]
        for split in ("dev", "test"):
            if self.files[split] is not None:
                parts[split] = read_relation_file(self.files[split], self.format)
                check_labels(parts[split], labels, self.files[split])
        return parts, labels

    def write(self) -> None:
        o = self.settings
        parts, labels = self.read_splits()
        index = {name: i for i, name in enumerate(labels)}
        vocab = None
        if self.pieces is None:
            split = splitter(o["tokenization"])
            mark = with_markers if o["markers"] else (lambda sent: sent)
            vocab = Vocab.build(
                (mark(tokenize_marked(ex.sentence, split, self._where("train", ex))).tokens for ex in parts["train"]),
                min_freq=o["min_freq"],
            )
        kg = None if self.kg_path is None else KnowledgeGraph.from_spo(self.kg_path)
        builder = make_builder(o, vocab, self.pieces, kg=kg)
        for split, path in zip(self.splits, self.processed_paths, strict=False):
            ys = [None if ex.label is None else index[ex.label] for ex in parts[split]]
            wheres = [self._where(split, ex) for ex in parts[split]]
            if isinstance(builder, RelationTreeBuilder):  # the trees of a split at once
                graphs = builder.graphs([ex.sentence for ex in parts[split]], ys, wheres)
            else:
                graphs = [builder(ex.sentence, y, where) for ex, y, where in zip(parts[split], ys, wheres,
                                                                                  strict=True)]
            for ex, data in zip(parts[split], graphs, strict=True):
                data.sid = torch.tensor([ex.sid])
            write_atomically(path, lambda tmp, graphs=graphs: self.save(graphs, tmp))
        meta = {"labels": labels, "vocab": None if vocab is None else vocab.itos}
        write_atomically(os.path.join(self.processed_dir, "meta.json"),
                         lambda tmp: Path(tmp).write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8"))

    def coverage(self) -> RelationCoverage | None:
        """How much knowledge this split's sentences got (:class:`RelationCoverage`: sentences
        with a branch, whose e1 / e2 got one, branches and tokens per sentence); :obj:`None`
        without a knowledge graph."""
        if self.kg_path is None:
            return None
        return RelationCoverage.of(self._data, self.slices)

    def _where(self, split: str, ex: RelationExample) -> str:
        source = self.files[split] if self.files[split] is not None else self.files["train"]
        return f"{source}:{ex.line}"

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.split}, {len(self)} sentences)"


def make_builder(options: dict[str, Any], vocab: Vocab | None, pieces: WordPieces | None = None,
                 keep_text: bool = False, kg: KnowledgeGraph | None = None) -> RelationGraphBuilder:
    """The relation graph builder of a dataset's options (``tokenization``, ``max_distance``,
    ``max_length``, ``markers``, ``position_anchor``; with ``kg``, ``inject``,
    ``max_entities`` and ``predicate``): over ``pieces`` when given, else over ``vocab`` (the one place it is made);
    with a knowledge graph, a :class:`~graphmatch.graphs.relation_kbert.RelationTreeBuilder`."""
    common = dict(max_distance=options["max_distance"], max_length=options["max_length"], markers=options["markers"],
                  position_anchor=options["position_anchor"], keep_text=keep_text)
    if kg is not None:
        if pieces is None:
            raise ValueError("a knowledge graph (data.kg) needs word pieces: a transformer model")
        return RelationTreeBuilder(pieces, kg, inject=options.get("inject", "entities"),
                                   max_entities=options.get("max_entities", 2),
                                   predicate=options.get("predicate", True), **common)
    if pieces is not None:
        return RelationGraphBuilder.for_pieces(pieces, **common)
    return RelationGraphBuilder(vocab, split=splitter(options["tokenization"]), **common)


def _existing(path: str | os.PathLike | None) -> Path | None:
    if path is None:
        return None
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"relation file {path} does not exist" + (" (it is a folder)" if path.is_dir() else ""))
    return path
