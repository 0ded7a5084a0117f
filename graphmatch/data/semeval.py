"""SemEval-2010 Task 8 relation classification as a PyG dataset of relation sentence graphs.

The organisers' files hold one block per example::

    8001<TAB>"The most common <e1>audits</e1> were about <e2>waste</e2> and recycling."
    Message-Topic(e1,e2)
    Comment: Assuming an audit = an audit document.
    <blank line>

``train`` and ``dev`` come from ``TRAIN_FILE.TXT`` (8,000 examples; ``dev_size`` of them, drawn
with a fixed seed, are held out as dev), ``test`` from ``TEST_FILE_FULL.TXT`` (2,717, ids
8001–10717). The vocabulary is built on the train split only and saved with the processed
graphs, in a folder named after every option that changes them.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

import torch
from torch_geometric.data import HeteroData, InMemoryDataset

from graphmatch.data.cache import write_atomically
from graphmatch.data.relation_formats import SEMEVAL_LABELS as LABELS
from graphmatch.datafiles import CACHE_DIR, locate
from graphmatch.graphs.relation import (
    DEFAULT_MAX_DISTANCE,
    DEFAULT_MAX_LENGTH,
    RelationGraphBuilder,
    RelationSentence,
    parse_relation,
    with_markers,
)
from graphmatch.text.vocab import Vocab

TRAIN_FILE = "semeval2010_task8/TRAIN_FILE.TXT"
TEST_FILE = "semeval2010_task8/TEST_FILE_FULL.TXT"
SPLITS = ("train", "dev", "test")
LABEL_INDEX = {name: i for i, name in enumerate(LABELS)}
_SENTENCE_LINE = re.compile(r'(\d+)\t"(.*)"')


@dataclass(frozen=True)
class SemEvalExample:
    """One example of an organisers' file; ``line`` is the 1-based line of its sentence."""

    sid: int
    sentence: RelationSentence
    label: str | None
    line: int


def read_semeval_file(path: str | os.PathLike, labelled: bool = True) -> list[SemEvalExample]:
    """Parse an organisers' file (``TRAIN_FILE.TXT``, ``TEST_FILE_FULL.TXT`` or, with
    ``labelled=False``, ``TEST_FILE.txt``). Errors name ``path:line``."""
    path = Path(path)
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    examples: list[SemEvalExample] = []
    n = 0
    while n < len(lines):
        line = lines[n].strip()
        n += 1
        if not line:
            continue
        where, sent_line = f"{path}:{n}", n
        m = _SENTENCE_LINE.fullmatch(line)
        if m is None:
            raise ValueError(f'{where}: expected ID<TAB>"sentence with <e1>..</e1> and <e2>..</e2>", got {line[:80]!r}')
        sid, sentence = int(m.group(1)), parse_relation(m.group(2), where)
        label = None
        if labelled:
            if n >= len(lines) or not lines[n].strip() or _SENTENCE_LINE.fullmatch(lines[n].strip()):
                raise ValueError(f"{where}: example {sid} has no label line after its sentence")
            label = lines[n].strip()
            n += 1
            if label not in LABEL_INDEX:
                raise ValueError(f"{path}:{n}: unknown label {label!r}; valid labels: {', '.join(LABELS)}")
            if n < len(lines) and lines[n].startswith("Comment"):
                n += 1
        examples.append(SemEvalExample(sid, sentence, label, sent_line))
    if not examples:
        raise ValueError(f"{path}: empty file, no SemEval examples in it")
    return examples


def dev_ids(train: list[SemEvalExample], dev_size: int, seed: int) -> set[int]:
    """Ids of the ``dev_size`` training examples held out as dev (a seeded permutation)."""
    if not 0 < dev_size < len(train):
        raise ValueError(f"dev_size must be between 1 and {len(train) - 1}, got {dev_size}")
    perm = torch.randperm(len(train), generator=torch.Generator().manual_seed(seed))
    return {train[i].sid for i in perm[:dev_size].tolist()}


class SemEval2010Task8(InMemoryDataset):
    r"""SemEval-2010 Task 8 as relation sentence graphs (see :mod:`graphmatch.graphs.relation`).

    Every graph has ``y`` (the index of its label in :data:`LABELS`) and ``sid`` (the
    organisers' sentence id, ``[1]`` long).

    Args:
        root (str, optional): cache folder for processed graphs (default
            ``$GRAPHMATCH_CACHE/processed/semeval2010_task8``).
        split (str): ``"train"``, ``"dev"`` or ``"test"``. (default: ``"train"``)
        data_dir (str, optional): the data root holding ``semeval2010_task8/`` (else
            ``$GRAPHMATCH_DATA`` or a checked download).
        max_distance (int): relative positions are clipped to ±``max_distance``. (default: 50)
        max_length (int): tokens kept per sentence. (default: 90)
        dev_size (int): training examples held out as dev. (default: 800)
        split_seed (int): seed of the dev draw. (default: 1)
        min_freq (int): training count a word needs to enter the vocabulary. (default: 1)
        markers (bool): keep ``<e1>``, ``</e1>``, ``<e2>``, ``</e2>`` as tokens. (default: True)
        position_anchor (str): relative positions to the entity's ``"span"`` or ``"last"`` token.
            (default: ``"span"``)
        train_file, test_file (str, optional): files in the organisers' format to use instead of
            ``TRAIN_FILE.TXT`` / ``TEST_FILE_FULL.TXT`` (e.g. a small sample set).
    """

    def __init__(
        self,
        root: str | os.PathLike | None = None,
        split: str = "train",
        data_dir: str | os.PathLike | None = None,
        max_distance: int = DEFAULT_MAX_DISTANCE,
        max_length: int = DEFAULT_MAX_LENGTH,
        dev_size: int = 800,
        split_seed: int = 1,
        min_freq: int = 1,
        markers: bool = True,
        position_anchor: str = "span",
        train_file: str | os.PathLike | None = None,
        test_file: str | os.PathLike | None = None,
        transform=None,
        force_reload: bool = False,
    ):
        if split not in SPLITS:
            raise ValueError(f"unknown split {split!r}; choose one of {', '.join(SPLITS)}")
        self.split = split
        self.train_file = _given(train_file) or locate(TRAIN_FILE, data_dir)
        self.test_file = _given(test_file) or locate(TEST_FILE, data_dir)
        self.options = dict(max_distance=max_distance, max_length=max_length, dev_size=dev_size,
                            split_seed=split_seed, min_freq=min_freq, markers=markers,
                            position_anchor=position_anchor)
        root = Path(root) if root is not None else CACHE_DIR / "processed" / "semeval2010_task8"
        super().__init__(str(root), transform=transform, force_reload=force_reload)
        self.load(self.processed_paths[SPLITS.index(split)], data_cls=HeteroData)
        self.vocab = Vocab.load(self.processed_paths[-1])

    @property
    def key(self) -> str:
        """Folder name: the options and a digest of the two data files."""
        digest = hashlib.sha256()
        for path in (self.train_file, self.test_file):
            digest.update(Path(path).read_bytes())
        o = self.options
        return (f"d{o['max_distance']}_l{o['max_length']}_dev{o['dev_size']}_s{o['split_seed']}"
                f"_f{o['min_freq']}{'_m' if o['markers'] else ''}"
                f"{'' if o['position_anchor'] == 'span' else '_a' + o['position_anchor']}_{digest.hexdigest()[:10]}")

    @property
    def processed_dir(self) -> str:
        return os.path.join(self.root, self.key)

    @property
    def raw_file_names(self) -> list[str]:
        return []

    @property
    def processed_file_names(self) -> list[str]:
        return [f"{s}.pt" for s in SPLITS] + ["vocab.json"]

    @property
    def label_names(self) -> list[str]:
        return list(LABELS)

    def process(self) -> None:
        o = self.options
        train_all = read_semeval_file(self.train_file)
        test = read_semeval_file(self.test_file)
        held_out = dev_ids(train_all, o["dev_size"], o["split_seed"])
        parts = {
            "train": [ex for ex in train_all if ex.sid not in held_out],
            "dev": [ex for ex in train_all if ex.sid in held_out],
            "test": test,
        }
        mark = with_markers if o["markers"] else (lambda sent: sent)
        vocab = Vocab.build((mark(ex.sentence).tokens for ex in parts["train"]), min_freq=o["min_freq"])
        builder = RelationGraphBuilder(vocab, max_distance=o["max_distance"], max_length=o["max_length"],
                                       markers=o["markers"], position_anchor=o["position_anchor"])
        for split, path in zip(SPLITS, self.processed_paths, strict=False):
            graphs = [self._graph(builder, ex, path) for ex in parts[split]]
            write_atomically(path, lambda tmp, graphs=graphs: self.save(graphs, tmp))
        write_atomically(self.processed_paths[-1], vocab.save)

    def _graph(self, builder: RelationGraphBuilder, ex: SemEvalExample, path: str) -> HeteroData:
        src = self.test_file if path.endswith("test.pt") else self.train_file
        data = builder(ex.sentence, LABEL_INDEX[ex.label], where=f"{src}:{ex.line}")
        data.sid = torch.tensor([ex.sid])
        return data

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.split}, {len(self)} sentences)"


def _given(path: str | os.PathLike | None) -> Path | None:
    if path is None:
        return None
    if not Path(path).is_file():
        raise FileNotFoundError(f"SemEval file {path} does not exist")
    return Path(path)

