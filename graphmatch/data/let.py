"""Sentence-pair matching data (LCQMC, BQ, any ``text_a<TAB>text_b<TAB>label`` file) as a PyG
dataset of LET lattice pair graphs.

File formats:

* **TSV** (LCQMC and any other file): ``text_a<TAB>text_b<TAB>label``, optional header row;
* **CSV** (BQ as distributed): ``sentence1,sentence2,label`` with a header, quoted as usual.

A row with two fields is unlabelled (for prediction); a file mixes none of the two. The label
is ``0`` or ``1``. Errors name ``file:line``. Processed graphs are cached in a file keyed by a
hash of the builder options, the source file's content and ``limit``.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
from pathlib import Path
from typing import NamedTuple

import torch
from torch_geometric.data import HeteroData, InMemoryDataset
from tqdm.auto import tqdm

from graphmatch.data.cache import write_atomically
from graphmatch.datafiles import CACHE_DIR, locate, sha256
from graphmatch.graphs.let import LatticePairBuilder

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
    with open(path, encoding="utf-8-sig", newline="") as f:
        rows = csv.reader(f) if fmt == "csv" else (line.rstrip("\r\n").split("\t") for line in f)
        for lineno, fields in enumerate(rows, 1):
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
            for name, text in (("text_a", a), ("text_b", b)):
                if not text:
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


class PairMatchingDataset(InMemoryDataset):
    r"""Sentence pairs of one file as LET lattice pair graphs (:class:`LatticePairBuilder`),
    each with ``y`` (``[1]``, 0/1) when the file is labelled and ``line`` (``[1]``, its line in
    the file).

    Args:
        source: the pair file (TSV or CSV, see :func:`read_pairs`).
        builder: the graph builder; its :meth:`~LatticePairBuilder.options` key the cache.
        root: cache folder (default ``$GRAPHMATCH_CACHE/processed/let``).
        limit: keep the first ``limit`` pairs of the file.
        fmt: ``"auto"``, ``"tsv"`` or ``"csv"``.
        progress: show a progress bar while building.
    """

    def __init__(
        self,
        source: str | os.PathLike,
        builder: LatticePairBuilder,
        root: str | os.PathLike | None = None,
        limit: int | None = None,
        fmt: str = "auto",
        progress: bool = True,
        transform=None,
        force_reload: bool = False,
    ) -> None:
        self.source = Path(source)
        if not self.source.is_file():
            raise FileNotFoundError(f"pair file {self.source} does not exist")
        if limit is not None and limit < 1:
            raise ValueError(f"limit must be >= 1 or None, got {limit}")
        self.builder, self.limit, self.fmt, self.progress = builder, limit, fmt, progress
        parts = {"options": builder.options(), "source": sha256(self.source), "limit": limit, "fmt": fmt}
        #: hash of the builder options, the source file's content, ``limit`` and the format
        self.key = hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]
        root = Path(root) if root is not None else CACHE_DIR / "processed" / "let"
        super().__init__(str(root), transform=transform, force_reload=force_reload, log=progress)
        self.load(self.processed_paths[0], data_cls=HeteroData)

    @property
    def raw_file_names(self) -> list[str]:
        return []

    @property
    def processed_dir(self) -> str:
        return self.root

    @property
    def processed_file_names(self) -> list[str]:
        return [f"{self.source.stem}-{self.key}.pt"]

    def download(self) -> None:  # the source file is read where it is
        pass

    def process(self) -> None:
        pairs = read_pairs(self.source, self.fmt, self.limit)
        graphs = []
        for ex in tqdm(pairs, desc=f"LET graphs {self.source.name}", disable=not self.progress,
                       mininterval=1.0, unit="pair"):
            try:
                data = self.builder(ex.text_a, ex.text_b, ex.label)
            except ValueError as err:
                raise ValueError(f"{self.source}:{ex.line}: {err}") from err
            data.line = torch.tensor([ex.line])
            graphs.append(data)
        write_atomically(self.processed_paths[0], lambda tmp: self.save(graphs, tmp))
        meta = {"source": str(self.source), "pairs": len(graphs), "options": self.builder.options(),
                "limit": self.limit}
        Path(self.processed_paths[0]).with_suffix(".json").write_text(json.dumps(meta, indent=1))
