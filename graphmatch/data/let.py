"""Sentence-pair matching data (LCQMC, BQ, any ``text_a<TAB>text_b<TAB>label`` file) as a PyG
dataset of LET lattice pair graphs.

File formats:

* **TSV** (LCQMC and any other file): ``text_a<TAB>text_b<TAB>label``, optional header row;
* **CSV** (BQ as distributed): ``sentence1,sentence2,label`` with a header, quoted as usual.

A row with two fields is unlabelled (for prediction); a file mixes none of the two. The label
is ``0`` or ``1`` (see :mod:`graphmatch.data.labels` for the rule every loader follows). Files
are UTF-8; a byte-order mark is ignored, invalid UTF-8 names the file and line. Errors name
``file:line``. Processed graphs are cached as :mod:`graphmatch.data.cached` says (keyed by the
builder's options and format version, the sha256 of the source file and of the builder's input
files, ``limit`` and the format).

Building is mostly word segmentation (thulac, pkuseg and jieba run on every sentence), so the
graphs are built in ``workers`` processes (default: one per CPU core), in chunks, with a progress
bar; the stored graphs are the same, bit for bit, whatever the number of workers.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import multiprocessing
import os
import pickle
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from torch_geometric.data import HeteroData
from tqdm.auto import tqdm

from graphmatch.data.cached import CachedDataset, builder_format
from graphmatch.data.file_split import split_rows
from graphmatch.data.labels import warn_rare_labels
from graphmatch.graphs.let import LatticePairBuilder, pair_graph
from graphmatch.io.atomic import write_atomically
from graphmatch.io.datafiles import DataFileMissing, locate
from graphmatch.io.text_files import read_text
from graphmatch.knowledge.hownet import SENSE_FILE, WORD_FILE

FORMATS = ("auto", "tsv", "csv")
LCQMC_FILES = {split: f"lcqmc/{split}.tsv" for split in ("train", "dev", "test")}
_HEADER_FIRST = {"text_a", "sentence1", "query1", "question1", "s1"}


class PairExample(NamedTuple):
    text_a: str
    text_b: str
    label: int | None
    line: int


def read_pairs(path: str | os.PathLike, fmt: str = "auto", limit: int | None = None) -> list[PairExample]:
    """Read sentence pairs from a TSV or CSV file (see the module docstring).

    Args:
        path: the file.
        fmt: ``"tsv"``, ``"csv"`` or ``"auto"`` (``.csv`` files are CSV, everything else TSV).
        limit: keep the first ``limit`` pairs.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown pair file format {fmt!r}; choose one of {', '.join(FORMATS)}")
    path = Path(path)
    if fmt == "auto":
        fmt = "csv" if path.suffix.lower() == ".csv" else "tsv"
    out: list[PairExample] = []
    labelled: bool | None = None
    text = read_text(path)
    if fmt == "csv":
        reader = csv.reader(io.StringIO(text, newline=""))
        rows: Any = ((reader.line_num, fields) for fields in reader)  # a quoted field may span lines
    else:
        rows = enumerate((line.rstrip("\r").split("\t") for line in text.split("\n")), 1)
    for lineno, fields in rows:
        if limit is not None and len(out) >= limit:
            break
        where = f"{path}:{lineno}"
        if not fields or (len(fields) == 1 and not fields[0].strip()):
            continue
        if lineno == 1 and fields[0].strip().lower() in _HEADER_FIRST:
            continue
        if len(fields) not in (2, 3):
            sep = "<TAB>" if fmt == "tsv" else ","
            raise ValueError(f"{where}: expected text_a{sep}text_b{sep}label, got {len(fields)} fields")
        a, b = fields[0].strip(), fields[1].strip()
        for name, sentence in (("text_a", a), ("text_b", b)):
            if not sentence:
                raise ValueError(f"{where}: {name} is empty; every pair needs two sentences")
        label = None
        if len(fields) == 3:
            value = fields[2].strip()
            if value not in ("0", "1"):
                raise ValueError(f"{where}: label must be 0 or 1, got {value!r}")
            label = int(value)
        if labelled is not None and labelled != (label is not None):
            raise ValueError(f"{where}: some rows have a label and some do not")
        labelled = label is not None
        out.append(PairExample(a, b, label, lineno))
    if not out:
        raise ValueError(f"{path}: no sentence pairs in it")
    return out


def lcqmc_file(split: str, root: str | os.PathLike | None = None) -> Path:
    """The local LCQMC file of ``split`` (``train``, ``dev`` or ``test``) under the data root."""
    if split not in LCQMC_FILES:
        raise ValueError(f"unknown LCQMC split {split!r}; choose one of {', '.join(LCQMC_FILES)}")
    return locate(LCQMC_FILES[split], root)


def lexicon_files(root: str | os.PathLike | None = None) -> dict[str, Path | None]:
    """The HowNet files :func:`~graphmatch.knowledge.load_lexicon` reads under the data root
    (``None`` where it is not there, e.g. when the lexicon comes from OpenHowNet)."""
    out: dict[str, Path | None] = {}
    for name, relpath in (("lexicon_words", WORD_FILE), ("lexicon_senses", SENSE_FILE)):
        try:
            out[name] = locate(relpath, root, download=False)
        except DataFileMissing:
            out[name] = None
    return out


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, ensure_ascii=False).encode("utf-8")).hexdigest()


def default_workers() -> int:
    """The CPU cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


#: the builder of a worker process (set by the pool's initializer)
_WORKER_BUILDER: LatticePairBuilder | None = None


def _set_worker_builder(builder: LatticePairBuilder | None) -> None:
    global _WORKER_BUILDER
    _WORKER_BUILDER = builder


def _build_chunk(job: tuple[str, Sequence[PairExample]]) -> bytes:
    """A worker's job: the graphs of some pairs, sent as their pickled NumPy arrays (20× cheaper
    to pickle than ``HeteroData``; torch's multiprocessing pickler would even send every tensor as
    a shared-memory file descriptor)."""
    source, pairs = job
    assert _WORKER_BUILDER is not None
    return pickle.dumps(pair_arrays(_WORKER_BUILDER, pairs, source), protocol=pickle.HIGHEST_PROTOCOL)


def pair_arrays(builder: LatticePairBuilder, pairs: Sequence[PairExample], source: str) -> list[dict[Any, dict]]:
    """The arrays of each pair's graph (:meth:`~graphmatch.graphs.let_core.LatticePairCore.arrays`)
    with ``line``; a bad pair is a ValueError naming ``source:line``."""
    out = []
    for ex in pairs:
        try:
            stores = builder.arrays(ex.text_a, ex.text_b, ex.label)
        except ValueError as err:
            raise ValueError(f"{source}:{ex.line}: {err}") from err
        stores.setdefault("_global_store", {})["line"] = np.array([ex.line], dtype=np.int64)
        out.append(stores)
    return out


def build_graphs(builder: LatticePairBuilder, pairs: Sequence[PairExample], source: str) -> list[HeteroData]:
    """The graph of each pair, with ``line``; a bad pair is a ValueError naming ``source:line``."""
    return [pair_graph(stores) for stores in pair_arrays(builder, pairs, source)]


class PairMatchingDataset(CachedDataset):
    r"""Sentence pairs of one file as LET lattice pair graphs (:class:`LatticePairBuilder`),
    each with ``y`` (``[1]``, 0/1) when the file is labelled and ``line`` (``[1]``, its line in
    the file).

    Args:
        source: the pair file (TSV or CSV, see :func:`read_pairs`).
        builder: the graph builder; its :meth:`~LatticePairBuilder.options` and sememe index key
            the cache.
        root: the data root (see :class:`~graphmatch.data.cached.CachedDataset`).
        cache: folder of processed files (default ``$GRAPHMATCH_CACHE/processed/let``).
        inputs: name → path of the files the builder was made from (vocabulary, lexicon, sememe
            vectors): their sha256 key the cache.
        limit: keep the first ``limit`` pairs of the file.
        fmt: ``"auto"``, ``"tsv"`` or ``"csv"``.
        progress: show a progress bar while building.
        require_labels: an unlabelled file is an error naming it (training and dev files);
            its labels are checked for rare ones (:mod:`graphmatch.data.labels`).
        workers: processes that build the graphs (default: the CPU cores; 1 builds them in
            this process). The result does not depend on it.
        split_of: ``{"dev", "test", "seed"}`` of ``data.split``: the pairs of ``split`` among those
            the file is cut into (:mod:`graphmatch.data.file_split`), ``limit`` applied after.
        split: ``"train"``, ``"dev"`` or ``"test"``, with ``split_of``.
    """

    family = "let"
    #: pairs per job of a worker process
    CHUNK = 256

    def __init__(
        self,
        source: str | os.PathLike,
        builder: LatticePairBuilder,
        root: str | os.PathLike | None = None,
        cache: str | os.PathLike | None = None,
        inputs: Mapping[str, str | os.PathLike | None] | None = None,
        limit: int | None = None,
        fmt: str = "auto",
        progress: bool = True,
        transform=None,
        force_reload: bool = False,
        require_labels: bool = False,
        workers: int | None = None,
        split_of: Mapping[str, Any] | None = None,
        split: str = "train",
    ) -> None:
        self.source = Path(source)
        self.split_of, self.split = (dict(split_of), split) if split_of is not None else (None, None)
        if self.source.is_dir():
            raise ValueError(f"pair file {self.source} is a folder; give the file")
        if not self.source.is_file():
            raise FileNotFoundError(f"pair file {self.source} does not exist")
        if limit is not None and limit < 1:
            raise ValueError(f"limit must be >= 1 or None, got {limit}")
        if workers is not None and workers < 1:
            raise ValueError(f"data.workers must be >= 1 or null (the CPU cores), got {workers}")
        self.require_labels = require_labels
        self.workers = workers or default_workers()
        self.builder, self.limit, self.fmt, self.progress = builder, limit, fmt, progress
        self.inputs = dict(inputs or {})
        super().__init__(root, cache, transform=transform, force_reload=force_reload, log=progress)

    def builder_key(self) -> dict[str, Any]:
        """The builder's options, and digests of its vocabulary and sememe index (their
        contents, wherever they were read from)."""
        return {**builder_format(self.builder), "options": self.builder.options(),
                "vocab": _digest(sorted(self.builder.tokenizer.vocab.items())),
                "sememe_index": _digest(sorted(self.builder.sememe_index.items()))}

    def input_files(self) -> dict[str, str | os.PathLike | None]:
        return {**self.inputs, "source": self.source}

    def options(self) -> dict[str, Any]:
        options = {"limit": self.limit, "fmt": self.fmt}
        return options if self.split_of is None else {**options, "split": self.split_of, "part": self.split}

    def stem(self) -> str:
        return self.source.stem if self.split is None else f"{self.source.stem}-{self.split}"

    def stored_files(self) -> list[str]:
        return ["data.pt"]

    def load_cache(self) -> None:
        self.load(self.processed_paths[0], data_cls=HeteroData)

    def write(self) -> None:
        pairs = read_pairs(self.source, self.fmt, self.limit if self.split_of is None else None)
        if self.split_of is not None:
            rows = split_rows(len(pairs), self.split, where=self.source, **self.split_of)[:self.limit]
            pairs = [pairs[i] for i in rows]
        if self.require_labels:
            if pairs[0].label is None:
                raise ValueError(f"{self.source}: the pairs have no label column; training and dev files need "
                                 "text_a<TAB>text_b<TAB>label (0 or 1)")
            warn_rare_labels([[str(ex.label)] for ex in pairs], [f"{self.source}:{ex.line}" for ex in pairs])
        graphs = self.build(pairs)
        write_atomically(self.processed_paths[0], lambda tmp: self.save(graphs, tmp))

    def build(self, pairs: Sequence[PairExample]) -> list[HeteroData]:
        """The graphs of ``pairs`` in order, in :attr:`workers` processes when there is enough to share."""
        bar = tqdm(total=len(pairs), desc=f"LET graphs {self.source.name}", mininterval=1.0, unit="pair",
                   disable=None if self.progress else True)  # None: on a terminal only
        with bar:
            if self.workers == 1 or len(pairs) <= self.CHUNK:
                graphs = []
                for start in range(0, len(pairs), self.CHUNK):
                    graphs += build_graphs(self.builder, pairs[start:start + self.CHUNK], str(self.source))
                    bar.update(len(pairs[start:start + self.CHUNK]))
                return graphs
            # the first chunk here: it loads the segmenters before the workers are forked (shared)
            graphs = build_graphs(self.builder, pairs[:self.CHUNK], str(self.source))
            bar.update(len(graphs))
            jobs = [(str(self.source), pairs[s:s + self.CHUNK]) for s in range(self.CHUNK, len(pairs), self.CHUNK)]
            methods = multiprocessing.get_all_start_methods()
            context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
            # forked workers inherit the builder (and the loaded segmenters); spawned ones unpickle it
            with context.Pool(min(self.workers, len(jobs)), initializer=_set_worker_builder,
                              initargs=(self.builder,)) as pool:
                for done in pool.imap(_build_chunk, jobs):
                    chunk = [pair_graph(stores) for stores in pickle.loads(done)]
                    graphs += chunk
                    bar.update(len(chunk))
            return graphs
