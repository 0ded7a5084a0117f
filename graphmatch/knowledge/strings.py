"""Many strings as two arrays: their code points end to end and where each starts (``ptr``).

A KG of millions of subjects held as Python strings costs ~60 bytes of object header a string and
seconds to build; as arrays it is 4 bytes a character, saved with ``np.save`` and read back
memory-mapped in no time.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np


def encode_strings(strings: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, ptr)``: the ``uint32`` code points of ``strings`` end to end and ``[len + 1]``
    offsets, string ``i`` being ``codes[ptr[i]:ptr[i + 1]]``."""
    lengths = np.fromiter(map(len, strings), dtype=np.int64, count=len(strings))
    ptr = np.zeros(len(strings) + 1, dtype=np.int64)
    np.cumsum(lengths, out=ptr[1:])
    codes = np.frombuffer("".join(strings).encode("utf-32-le", "surrogatepass"), dtype="<u4")
    return codes, ptr


def prefix_levels(codes: np.ndarray, ptr: np.ndarray, shift: int = 21) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""The prefix tree of the strings ``codes[ptr[i]:ptr[i + 1]]``, level by level: the prefixes
    of length :math:`d` are numbered (after those of length :math:`d - 1`; the empty prefix is 0)
    by the distinct keys :math:`(\text{id of the prefix of length } d - 1) \ll 21 \,|\, c_d`.

    Returns:
        ``(node, keys, level_ptr)``: the id of each whole string, the key of every prefix
        ``1 .. n`` in id order, and where each length's ids start (``level_ptr[d]``).
    """
    lengths = np.diff(ptr)
    node = np.zeros(len(lengths), dtype=np.int64)
    alive = np.arange(len(lengths))
    keys, level_ptr = [], [0, 1]
    d = 0
    while True:
        alive = alive[lengths[alive] > d]
        if not alive.size:
            break
        key = (node[alive] << shift) | codes[ptr[alive] + d].astype(np.int64)
        distinct, inverse = np.unique(key, return_inverse=True)
        node[alive] = level_ptr[-1] + inverse.reshape(-1)
        keys.append(distinct)
        level_ptr.append(level_ptr[-1] + len(distinct))
        d += 1
    key = np.concatenate(keys) if keys else np.zeros(0, dtype=np.int64)
    return node, key, np.asarray(level_ptr, dtype=np.int64)


def first_of(node: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(ids, first)`` of labels ``node``: ids numbered in order of first occurrence, ``first[k]``
    the first position of id ``k``."""
    _, first, inverse = np.unique(node, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return rank[inverse.reshape(-1)], first[order]


class Strings(Sequence[str]):
    """A read-only sequence of strings stored as :func:`encode_strings` arrays (which may be
    memory-mapped): each is decoded when it is asked for."""

    def __init__(self, codes: np.ndarray, ptr: np.ndarray):
        self.codes, self.ptr = codes, ptr

    @classmethod
    def of(cls, strings: Sequence[str]) -> Strings:
        return cls(*encode_strings(strings))

    def __len__(self) -> int:
        return len(self.ptr) - 1

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self.codes[self.ptr[i]:self.ptr[i + 1]].tobytes().decode("utf-32-le", "surrogatepass")

    def take(self, ids: Sequence[int]) -> list[str]:
        """``[self[i] for i in ids]`` (ids in range, not negative), decoded at once: one gather of
        their code points, one bytes object, one ``str`` cut into the strings."""
        ids = np.asarray(ids, dtype=np.int64)
        if not ids.size:
            return []
        starts, lengths = self.ptr[ids], self.ptr[ids + 1] - self.ptr[ids]
        bounds = np.zeros(len(ids) + 1, dtype=np.int64)
        np.cumsum(lengths, out=bounds[1:])
        index = np.arange(int(bounds[-1])) + np.repeat(starts - bounds[:-1], lengths)
        text = self.codes[index].tobytes().decode("utf-32-le", "surrogatepass")
        ends = bounds.tolist()
        return [text[a:b] for a, b in zip(ends[:-1], ends[1:], strict=True)]

    def __iter__(self) -> Iterator[str]:
        step = 65536  # decode in blocks: one bytes object and one str per block
        for lo in range(0, len(self), step):
            hi = min(lo + step, len(self))
            start = int(self.ptr[lo])
            text = self.codes[start:self.ptr[hi]].tobytes().decode("utf-32-le", "surrogatepass")
            ends = (self.ptr[lo:hi + 1] - start).tolist()
            yield from (text[a:b] for a, b in zip(ends[:-1], ends[1:], strict=True))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Strings):
            return np.array_equal(self.ptr - self.ptr[0], other.ptr - other.ptr[0]) and np.array_equal(
                self.codes[self.ptr[0]:self.ptr[-1]], other.codes[other.ptr[0]:other.ptr[-1]])
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]


def take(strings: Sequence[str], ids: Sequence[int]) -> list[str]:
    """``[strings[i] for i in ids]``; :meth:`Strings.take` when they are arrays."""
    return strings.take(ids) if isinstance(strings, Strings) else [strings[i] for i in ids]
