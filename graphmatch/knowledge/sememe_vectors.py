"""Pretrained sememe embeddings in word2vec text format (``N d`` header, then ``name v1 … vd``)."""

from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np

from graphmatch.io.datafiles import locate


class SememeVectors(NamedTuple):
    names: list[str]
    vectors: np.ndarray  # [N, d] float32
    index: dict[str, int]


def load_sememe_vectors(path: str | os.PathLike | None = None,
                        root: str | os.PathLike | None = None) -> SememeVectors:
    """Read word2vec text vectors; by default LET's 200-d SAT sememe vectors."""
    path = path or locate("hownet/sememe_vec.txt", root)
    with open(path, encoding="utf-8") as f:
        header = f.readline().split()
        if len(header) != 2:
            raise ValueError(f"{path}:1: expected a word2vec header 'count dim', got {' '.join(header)!r}")
        count, dim = map(int, header)
        names, rows = [], []
        for lineno, line in enumerate(f, 2):
            fields = line.rstrip().split(" ")
            if len(fields) != dim + 1:
                raise ValueError(f"{path}:{lineno}: expected a name and {dim} numbers")
            names.append(fields[0])
            rows.append(fields[1:])
    if len(names) != count:
        raise ValueError(f"{path}: header says {count} vectors, found {len(names)}")
    vectors = np.asarray(rows, dtype=np.float32).reshape(len(names), dim)
    return SememeVectors(names, vectors, {n: i for i, n in enumerate(names)})
