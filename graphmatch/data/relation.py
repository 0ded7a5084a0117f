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

import dataclasses
import json
import os
import warnings
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch
from torch_geometric.data import HeteroData

from graphmatch.data.cached import CachedDataset
from graphmatch.data.file_split import split_rows
from graphmatch.data.relation_formats import RelationExample, check_labels, label_set, read_relation_file
from graphmatch.data.relation_pieces import (
    SentencePieceRelationBuilder,
    SentencePieces,
    builder_for_pieces,
    relation_pieces,
)
from graphmatch.graphs.branch_selection import BranchSelection
from graphmatch.graphs.relation import FORMAT_VERSION as GRAPHS_FORMAT
from graphmatch.graphs.relation import (
    POSITION_ANCHORS,
    TOKENIZATIONS,
    RelationGraphBuilder,
    WordPieces,
    splitter,
    tokenize_marked,
    with_markers,
)
from graphmatch.graphs.relation_kbert import FORMAT_VERSION as TREES_FORMAT
from graphmatch.graphs.relation_kbert import INJECT, RelationCoverage, RelationTreeBuilder
from graphmatch.graphs.relation_markup import UnrepresentableExample
from graphmatch.graphs.relation_options import RelationOptions
from graphmatch.io.atomic import write_atomically
from graphmatch.knowledge import KnowledgeGraph, resolve_kg
from graphmatch.text.vocab import Vocab
from graphmatch.utils.deprecated import old_keywords, options_given

SPLITS = ("train", "dev", "test")
#: what a dataset does with a line the models cannot represent (:class:`UnrepresentableExample`)
ON_BAD_LINE = ("error", "skip")
#: line numbers a skip warning names
SHOWN_BAD_LINES = 5
#: unknown tokens or characters the training set's unknown share names
SHOWN_UNKNOWN = 10


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
        options (RelationOptions, optional): everything about the graphs, made once (the
            task's: :meth:`RelationOptions.of <graphmatch.graphs.relation_options.RelationOptions.of>`
            a recipe's ``data``): the ``tokenization`` (``"words"``, ``"chars"``, ``"jieba"``,
            ``"thulac"``, ``"pkuseg"``, see :func:`~graphmatch.graphs.relation.splitter`, or
            ``"pieces"``: the word pieces of the tokenizer in ``pretrained``), ``max_distance``,
            ``max_length`` (a number, or ``"auto"``: the smallest length no training sentence
            exceeds, markers and ``[CLS]``/``[SEP]`` included, chosen when the graphs are built and
            kept as :attr:`max_length`), ``markers``, ``position_anchor`` and, with ``kg``,
            ``inject``, ``max_entities``, ``predicate`` and ``noun_reading``. (default: its
            defaults) The loose keywords of old calls (``max_distance=``, ...) still work, with a
            ``DeprecationWarning``, until the next release.
        pretrained (str, optional): a local checkpoint folder whose tokenizer gives the word pieces.
        dev_size (int): training examples held out as dev when there is no dev file. (default: 800)
        split_seed (int): seed of the dev draw. (default: 1)
        min_freq (int): training count a token needs to enter the vocabulary. (default: 1)
        on_bad_line (str): a line the models cannot represent (e.g. its entities further apart
            than ``max_length``) stops with an ``"error"`` naming file and line, or is left out
            (``"skip"``): one warning gives the count and the first lines. (default: ``"error"``)
        kg (str, optional): a knowledge graph (``"wordnet"``, another name of
            :data:`~graphmatch.knowledge.BUILTIN_KGS` or a ``.spo`` file) whose values are hung
            on the sentences as K-BERT branches (word pieces only); :obj:`None` = none.
        selection (BranchSelection, optional): with ``kg``: the values that fit the sentence
            (:mod:`~graphmatch.graphs.branch_selection`); its settings key the cache, and each
            split's candidates and kept branches are :attr:`selection_report`.
        split_of (Mapping, optional): ``{"dev", "test", "seed"}`` of ``data.split``: dev and test
            are cut from ``train_file`` (:mod:`graphmatch.data.file_split`; no dev or test file).
        limits (dict, optional): ``{split: N}``: graphs are built for the first ``N`` examples of
            that split only (quick runs; the label set is still the whole training file's).
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
        options: RelationOptions | None = None,
        pretrained: str | os.PathLike | None = None,
        dev_size: int = 800,
        split_seed: int = 1,
        min_freq: int = 1,
        on_bad_line: str = "error",
        kg: str | os.PathLike | None = None,
        selection: BranchSelection | None = None,
        limits: dict[str, int | None] | None = None,
        split_of: Mapping[str, Any] | None = None,
        root: str | os.PathLike | None = None,
        cache: str | os.PathLike | None = None,
        transform=None,
        force_reload: bool = False,
        **old: Any,
    ):
        options = (options_given(type(self).__name__, RelationOptions, options, old)
                   or old_keywords(type(self).__name__, RelationOptions(), old))
        tokenization, position_anchor = options.tokenization, options.position_anchor
        max_length, inject = options.max_length, options.inject
        if split not in SPLITS:
            raise ValueError(f"unknown split {split!r}; choose one of {', '.join(SPLITS)}")
        if tokenization not in (*TOKENIZATIONS, "pieces"):
            raise ValueError(f"unknown tokenization {tokenization!r}; choose one of {', '.join(TOKENIZATIONS)}, pieces")
        if (tokenization == "pieces") != (pretrained is not None):
            raise ValueError("tokenization 'pieces' needs a pretrained tokenizer folder, and only it takes one")
        if position_anchor not in POSITION_ANCHORS:
            raise ValueError(f"unknown position_anchor {position_anchor!r}; choose one of "
                             f"{', '.join(POSITION_ANCHORS)}")
        if on_bad_line not in ON_BAD_LINE:
            raise ValueError(f"unknown on_bad_line {on_bad_line!r}; choose one of {', '.join(ON_BAD_LINE)}")
        if max_length != "auto" and not isinstance(max_length, int):
            raise ValueError(f"max_length must be a number of tokens or 'auto', got {max_length!r}")
        if train_file is None:
            raise ValueError("a relation dataset needs a training file (data.train_file)")
        if inject not in INJECT:
            raise ValueError(f"unknown inject {inject!r}; choose one of {', '.join(INJECT)}")
        self.kg_path = resolve_kg(kg, root)
        if self.kg_path is not None and tokenization != "pieces":
            raise ValueError("a knowledge graph (data.kg) needs word pieces: a transformer model")
        self.split = split
        self.split_of = dict(split_of) if split_of is not None else None
        if self.split_of is not None and (dev_file is not None or test_file is not None):
            raise ValueError("data.split cuts dev and test out of data.train_file; leave data.dev_file and "
                             "data.test_file off")
        self.files = {"train": _existing(train_file), "dev": _existing(dev_file), "test": _existing(test_file)}
        if self.split_of is not None:  # every split is read from the one file
            self.files = {split: self.files["train"] for split in SPLITS}
        #: the examples of the one file ``split_of`` cut (known once its graphs are built or read)
        self.file_examples: int | None = None
        self.format = format
        self.pieces = relation_pieces(pretrained) if pretrained is not None else None
        #: the builder's settings (``max_length`` as asked: ``auto`` is decided in :meth:`write`)
        self.builder_options = options
        self.selection = selection if self.kg_path is not None else None
        #: with a selection: this split's candidate branches and those kept, and a sample of those dropped
        self.selection_report: dict[str, Any] | None = None
        self.settings = dict(dataclasses.asdict(self.builder_options), dev_size=dev_size, split_seed=split_seed,
                             min_freq=min_freq, on_bad_line=on_bad_line)
        self.limits = {s: n for s, n in (limits or {}).items() if n is not None and s in SPLITS}
        if any(not isinstance(n, int) or n < 1 for n in self.limits.values()):
            raise ValueError(f"limits must be positive numbers of examples, got {self.limits}")
        if split not in self.splits:
            raise ValueError(f"no {split} split: no {split} file was given")
        super().__init__(root, cache, transform=transform, force_reload=force_reload, log=False)

    # ----------------------------------------------------------------- cache
    def builder_key(self) -> dict[str, Any]:
        o = self.settings
        options = {k: o[k] for k in ("tokenization", "max_distance", "max_length", "markers", "position_anchor")}
        if self.pieces is not None:
            options["pieces"] = self.pieces.digest
        builder, version = RelationGraphBuilder, GRAPHS_FORMAT
        if isinstance(self.pieces, SentencePieces):
            builder = SentencePieceRelationBuilder
        if self.kg_path is not None:  # the knowledge graph itself is an input file
            options.update(inject=o["inject"], max_entities=o["max_entities"], predicate=o["predicate"])
            if o["noun_reading"]:  # only then: the keys of caches made without them stay as they were
                options["noun_readings"] = True
            if self.selection is not None:
                options["selection"] = self.selection.options()
            builder, version = RelationTreeBuilder, {"graphs": GRAPHS_FORMAT, "trees": TREES_FORMAT}
        return {"name": f"{builder.__module__}.{builder.__qualname__}", "format": version, "options": options}

    def input_files(self) -> dict[str, Path | None]:
        return dict(self.files) if self.kg_path is None else {**self.files, "kg": self.kg_path}

    def options(self) -> dict[str, Any]:
        o = self.settings
        held_out = self.files["dev"] is None
        return {"format": self.format, "min_freq": o["min_freq"],
                "dev_size": o["dev_size"] if held_out else None, "split_seed": o["split_seed"] if held_out else None,
                "on_bad_line": o["on_bad_line"], **({"limits": self.limits} if self.limits else {}),
                **({"split": self.split_of} if self.split_of is not None else {})}

    def stem(self) -> str:
        """Readable: the tokenization and the options."""
        o = self.settings
        tok = o["tokenization"] if self.pieces is None else f"pieces-{self.pieces.digest}"
        dev = "devfile" if self.files["dev"] is not None else f"dev{o['dev_size']}_s{o['split_seed']}"
        if self.split_of is not None:
            dev = "split{dev}-{test}_s{seed}".format(**self.split_of)
        kg = "" if self.kg_path is None else (f"_kg-{self.kg_path.name.split('.')[0]}-{o['inject']}{o['max_entities']}"
                                              f"{'' if o['predicate'] else '-objects'}"
                                              f"{'-nouns' if o['noun_reading'] else ''}"
                                              f"{'-selected' if self.selection is not None else ''}")
        return (f"{tok}_d{o['max_distance']}_l{o['max_length']}_{dev}_f{o['min_freq']}"
                f"{'_m' if o['markers'] else ''}{'' if o['position_anchor'] == 'span' else '_alast'}{kg}")

    def stored_files(self) -> list[str]:
        return [f"{s}.pt" for s in self.splits] + ["meta.json"]

    def load_cache(self) -> None:
        self.load(self.processed_paths[self.splits.index(self.split)], data_cls=HeteroData)
        meta = json.loads(Path(self.processed_dir, "meta.json").read_text(encoding="utf-8"))
        self.label_names: list[str] = meta["labels"]
        self.vocab = Vocab(meta["vocab"]) if meta["vocab"] is not None else None
        #: the tokens kept per sentence (``max_length``, or the length ``"auto"`` chose)
        self.max_length: int = meta.get("max_length", self.builder_options.max_length)
        #: ``{"share": percent, "top": [[token, count], ...]}`` of unknown training tokens (see :meth:`unknown_share`)
        self.unknown: dict[str, Any] | None = meta.get("unknown")
        self.selection_report = (meta.get("selection") or {}).get(self.split)
        self.file_examples = meta.get("file_examples")

    @property
    def splits(self) -> tuple[str, ...]:
        """The splits this dataset has: train, dev, and test when there is a test file."""
        return SPLITS if self.files["test"] is not None else SPLITS[:2]

    def read_splits(self) -> tuple[dict[str, list[RelationExample]], list[str]]:
        """The examples of each split and the label set (that of the training file); dev and
        test labels outside it are errors naming file and line."""
        o = self.settings
        train_all = read_relation_file(self.files["train"], self.format)
        if self.split_of is not None:
            self.file_examples = len(train_all)
            parts = {split: [train_all[i] for i in split_rows(len(train_all), split, where=self.files["train"],
                                                              **self.split_of)] for split in SPLITS}
            labels = label_set(parts["train"])
            for split in ("dev", "test"):
                check_labels(parts[split], labels, self.files[split])
            return parts, labels
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
        parts = {split: examples[:self.limits[split]] if split in self.limits else examples
                 for split, examples in parts.items()}  # only these become graphs
        index = {name: i for i, name in enumerate(labels)}
        skipped: list[UnrepresentableExample] = []
        vocab, tokens, unknown = None, None, None
        if self.pieces is None:
            split = splitter(o["tokenization"])
            mark = with_markers if o["markers"] else (lambda sent: sent)
            tokens = []
            for ex in parts["train"]:
                try:
                    tokens.append(mark(tokenize_marked(ex.sentence, split, self._where("train", ex))).tokens)
                except UnrepresentableExample:
                    if o["on_bad_line"] == "error":
                        raise
            vocab = Vocab.build(tokens, min_freq=o["min_freq"])
        options = self.builder_options
        options = options.decided(self.auto_length(parts["train"])) if options.auto else options
        max_length = options.max_length
        kg = None if self.kg_path is None else KnowledgeGraph.shared(self.kg_path)
        builder = relation_builder(options, vocab, self.pieces, kg=kg, selection=self.selection)
        selected: dict[str, Any] = {}
        for split, path in zip(self.splits, self.processed_paths, strict=False):
            seen = self.selection.mark() if self.selection is not None else None
            stored, graphs = None, []
            if isinstance(builder, RelationTreeBuilder):
                graphs = self.trees(builder, split, parts[split], index, skipped)
                word_ids = torch.cat([g["token"].word_id for g in graphs]) if graphs else torch.zeros(0)
            else:  # a split's graphs at once, as PyG stores them
                kept, sents = [], []
                for ex in parts[split]:
                    try:
                        sents.append(builder.tokenized(ex.sentence, self._where(split, ex)))
                    except UnrepresentableExample as err:
                        self._bad_line(err, skipped)
                        continue
                    kept.append(ex)
                stored = self.collated(builder, sents, kept, index) if kept else None  # none: stored as before
                word_ids = stored[0]["token"]["word_id"] if stored else torch.zeros(0)
            if seen is not None:
                selected[split] = self.selection.report(seen)
            if split == "train":
                unknown = self.unknown_share(word_ids, parts["train"], vocab, tokens if vocab is not None else None)
            if stored is None:
                write_atomically(path, lambda tmp, graphs=graphs: self.save(graphs, tmp))
            else:
                write_atomically(path, lambda tmp, stored=stored: torch.save((*stored, HeteroData), tmp))
        if skipped:
            shown = ", ".join(err.where for err in skipped[:SHOWN_BAD_LINES])
            warnings.warn(f"skipped {len(skipped)} line(s) the models cannot represent (data.on_bad_line=skip): "
                          f"{shown}{', …' if len(skipped) > SHOWN_BAD_LINES else ''}; the first: {skipped[0].reason}",
                          stacklevel=2)
        meta = {"labels": labels, "vocab": None if vocab is None else vocab.itos, "max_length": max_length,
                "skipped": [err.where for err in skipped], "unknown": unknown,
                "selection": selected, "file_examples": self.file_examples}
        write_atomically(os.path.join(self.processed_dir, "meta.json"),
                         lambda tmp: Path(tmp).write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8"))

    def trees(self, builder: RelationTreeBuilder, split: str, examples: list[RelationExample], index: dict[str, int],
              skipped: list[UnrepresentableExample]) -> list[HeteroData]:
        """A split's relation trees, each with its sentence id ``sid``: at once, or one at a time
        when lines the models cannot represent are skipped (``data.on_bad_line: skip``)."""
        if self.settings["on_bad_line"] == "error":
            graphs = builder.graphs([ex.sentence for ex in examples],
                                    [None if ex.label is None else index[ex.label] for ex in examples],
                                    [self._where(split, ex) for ex in examples])
            for ex, data in zip(examples, graphs, strict=True):
                data.sid = torch.tensor([ex.sid])
            return graphs
        graphs = []
        for ex in examples:
            try:
                data = builder(ex.sentence, None if ex.label is None else index[ex.label], self._where(split, ex))
            except UnrepresentableExample as err:
                self._bad_line(err, skipped)
                continue
            data.sid = torch.tensor([ex.sid])
            graphs.append(data)
        return graphs

    @staticmethod
    def collated(builder: RelationGraphBuilder, sents: list[Any], kept: list[RelationExample],
                 index: dict[str, int]) -> tuple[dict[Any, Any], dict[Any, Any]]:
        """A split's graphs as PyG stores them (:meth:`RelationGraphBuilder.collated`), each with
        its sentence id ``sid`` (and label ``y`` when the split has labels)."""
        if any(ex.label is None for ex in kept) and not all(ex.label is None for ex in kept):
            raise ValueError("a split's examples are either all labelled or none")
        labels = None if not kept or kept[0].label is None else [index[ex.label] for ex in kept]
        data, slices = builder.collated(sents, labels)
        data["_global_store"]["sid"], slices["sid"] = torch.tensor([ex.sid for ex in kept]), torch.arange(len(kept) + 1)
        return data, slices

    def unknown_share(self, word_ids: torch.Tensor, train: list[RelationExample], vocab: Vocab | None,
                      tokens: list[list[str]] | None) -> dict[str, Any]:
        """How much of the training set the model sees as unknown: ``share`` (percent of the
        training graphs' tokens, ``word_ids``, that are ``<unk>`` / ``[UNK]``) and ``top``, the most
        frequent unknown tokens (a vocabulary's) or characters (a pretrained tokenizer's), with counts."""
        unk = Vocab.unk_id if vocab is not None else self.pieces.tokenizer.unk_token_id
        total = int(word_ids.numel())
        share = 100.0 * int((word_ids == unk).sum()) / total if total else 0.0
        counts: Counter[str] = Counter()
        if vocab is not None:
            counts.update(t for toks in tokens or [] for t in toks if t not in vocab)
        elif share:
            chars = Counter(c for ex in train for c in ex.sentence.text if not c.isspace())
            counts.update({c: n for c, n in chars.items()
                           if unk in self.pieces.lookup(self.pieces.split(c) or [self.pieces.tokenizer.unk_token])})
        return {"share": share, "top": counts.most_common(SHOWN_UNKNOWN)}

    def _bad_line(self, err: UnrepresentableExample, skipped: list[UnrepresentableExample]) -> None:
        """Raise ``err`` (``on_bad_line: error``) or count it as skipped."""
        if self.settings["on_bad_line"] == "error":
            raise err
        skipped.append(err)

    def auto_length(self, train: list[RelationExample]) -> int:
        """``max_length: auto``: the tokens of the longest training sentence, markers and the
        tokenizer's ``[CLS]``/``[SEP]`` included (lines that cannot be tokenised aside)."""
        o = self.settings
        split = self.pieces.split if self.pieces is not None else splitter(o["tokenization"])
        wrap = 2 if self.pieces is not None else 0
        longest = 2
        for ex in train:
            try:
                n = len(tokenize_marked(ex.sentence, split, self._where("train", ex)).tokens)
            except UnrepresentableExample:
                continue
            longest = max(longest, n + 4 * o["markers"] + wrap)
        return longest

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


def relation_builder(options: RelationOptions | dict[str, Any], vocab: Vocab | None, pieces: WordPieces | None = None,
                 keep_text: bool = False, kg: KnowledgeGraph | None = None,
                 selection: BranchSelection | None = None) -> RelationGraphBuilder:
    """The relation graph builder of ``options`` (a :class:`RelationOptions` whose length is
    decided, or a mapping of its fields): over ``pieces`` when given, else over ``vocab`` (the one
    place it is made); with a knowledge graph, a
    :class:`~graphmatch.graphs.relation_kbert.RelationTreeBuilder` (with the branch ``selection``
    and the options' noun readings)."""
    options = options if isinstance(options, RelationOptions) else RelationOptions.of(options)
    if kg is not None:
        if pieces is None:
            raise ValueError("a knowledge graph (data.kg) needs word pieces: a transformer model")
        return RelationTreeBuilder(pieces, kg, options, selection=selection, keep_text=keep_text)
    if pieces is not None:
        return builder_for_pieces(pieces, options, keep_text=keep_text)
    return RelationGraphBuilder(vocab, options, keep_text=keep_text, split=splitter(options.tokenization))


def _existing(path: str | os.PathLike | None) -> Path | None:
    if path is None:
        return None
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"relation file {path} does not exist" + (" (it is a folder)" if path.is_dir() else ""))
    return path
