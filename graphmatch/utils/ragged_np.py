"""The NumPy half of :mod:`graphmatch.utils.ragged` (prefix sums and ranges of ragged arrays), without
importing torch: the graph builders' array cores use it, so that ``graphmatch inspect`` starts
without loading torch."""

from __future__ import annotations

import numpy as np


def ptr(counts: np.ndarray) -> np.ndarray:
    """``[0, c0, c0 + c1, ...]`` (int64, one longer than ``counts``)."""
    out = np.zeros(len(counts) + 1, dtype=np.int64)
    np.add.accumulate(counts, out=out[1:], dtype=np.int64)  # np.cumsum, without its Python-level overhead
    return out


def ranges(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """NumPy: the range and the offset within it of every element of ranges of ``counts``."""
    counts = np.asarray(counts, dtype=np.int64)
    owner = np.arange(len(counts)).repeat(counts)
    return owner, np.arange(owner.size) - ptr(counts)[:-1].repeat(counts)
