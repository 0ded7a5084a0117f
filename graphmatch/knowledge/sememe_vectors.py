"""Pretrained sememe embeddings in word2vec text format (``N d`` header, then ``name v1 … vd``)."""

from __future__ import annotations

import io
import os
from typing import NamedTuple

import numpy as np

from graphmatch.io.datafiles import locate
from graphmatch.utils.read_once import read_once


class SememeVectors(NamedTuple):
    names: list[str]
    vectors: np.ndarray  # [N, d] float32
    index: dict[str, int]


def load_sememe_vectors(path: str | os.PathLike | None = None,
                        root: str | os.PathLike | None = None) -> SememeVectors:
    """Read word2vec text vectors; by default LET's 200-d SAT sememe vectors. Read once per process
    for the same content (:func:`~graphmatch.utils.read_once.read_once`: a task asks for them for its
    sememe vocabulary and again for the model's table); the vectors are read-only."""
    path = path or locate("hownet/sememe_vec.txt", root)
    with open(path, "rb") as f:
        content = f.read()
    return read_once("sememe_vectors", content, lambda: _parse(content.decode("utf-8"), path))


def _parse(text: str, path: str | os.PathLike) -> SememeVectors:
    lines = io.StringIO(text, newline=None)  # read as the file in text mode: universal newlines
    header = lines.readline().split()
    if len(header) != 2:
        raise ValueError(f"{path}:1: expected a word2vec header 'count dim', got {' '.join(header)!r}")
    count, dim = map(int, header)
    names, rows = [], []
    for lineno, line in enumerate(lines, 2):
        fields = line.rstrip().split(" ")
        if len(fields) != dim + 1:
            raise ValueError(f"{path}:{lineno}: expected a name and {dim} numbers")
        names.append(fields[0])
        rows.append(fields[1:])
    if len(names) != count:
        raise ValueError(f"{path}: header says {count} vectors, found {len(names)}")
    vectors = np.asarray(rows, dtype=np.float32).reshape(len(names), dim)
    vectors.flags.writeable = False  # shared by every reader of the same content
    return SememeVectors(names, vectors, {n: i for i, n in enumerate(names)})
