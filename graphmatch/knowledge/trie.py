"""A character trie over dictionary words (KG subjects)."""

from __future__ import annotations

import hashlib
import os
import zipfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np

from graphmatch.io import datafiles
from graphmatch.io.atomic import write_atomically
from graphmatch.knowledge.strings import encode_strings, first_of, prefix_levels

_END = ""  # key marking the end of a word; never a character of a word


class Trie:
    """Nested ``dict`` trie with a left-to-right walk that reports every word end."""

    def __init__(self, words: Iterable[str] = ()):
        self.root: dict = {}
        self._size = 0
        for word in words:
            self.insert(word)

    def insert(self, word: str) -> None:
        if not word:
            return
        node = self.root
        for ch in word:
            node = node.setdefault(ch, {})
        if _END not in node:
            node[_END] = True
            self._size += 1

    def __len__(self) -> int:
        return self._size

    def __contains__(self, word: str) -> bool:
        node = self.root
        for ch in word:
            node = node.get(ch)
            if node is None:
                return False
        return _END in node

    def walk(self, text: str, start: int) -> tuple[list[int], int]:
        """Follow the trie along ``text`` from ``start`` as far as it goes.

        Returns the end offsets of every dictionary word that starts at ``start`` (shortest
        first) and the offset the walk reached: where the text ran out, or the first
        character with no child.
        """
        node = self.root
        ends: list[int] = []
        i = start
        while i < len(text):
            node = node.get(text[i])
            if node is None:
                break
            i += 1
            if _END in node:
                ends.append(i)
        return ends, i


_SHIFT = 21  # every code point is below 2**21, so (node << 21) | code is a unique transition key
_CODES = 0x110000
#: a trie of at least this many words is kept compiled under ``$GRAPHMATCH_CACHE/tries`` (a smaller one
#: builds in milliseconds)
CACHE_MIN_WORDS = 5000
#: a trie of more nodes answers :meth:`FlatTrie.prefixes` by walks, not a ``dict`` of every prefix
PREFIX_TABLE_NODES = 2_000_000
#: bump when the compiled arrays change
CACHE_FORMAT = 5
_ARRAYS = ("_depth", "_best_word", "_best_length", "_slots", "_child")
_GOLDEN_INT, _U64 = 0x9E3779B97F4A7C15, (1 << 64) - 1
_GOLDEN = np.uint64(_GOLDEN_INT)  # Fibonacci hashing: the top bits of key × 2^64 / φ


def _home(keys: np.ndarray, bits: int) -> np.ndarray:
    """The first slot of each (non-negative ``int64``) key in a table of ``2 ** bits`` slots."""
    return ((keys.view(np.uint64) * _GOLDEN) >> np.uint64(64 - bits)).view(np.int64)


def _hash_table(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""An open-addressing table (linear probing, at most 60 % full) of distinct non-negative
    ``keys``: ``(slots, values)``, a slot holding its key or -1 (empty). The keys are laid out
    in order of their first slot :math:`h_i`, each in the first free slot from it:
    :math:`\text{at}_i = i + \max_{j \le i} (h_j - j)`. A probe never wraps around: the table
    runs on past its :math:`2^b` first slots as far as the last key went, then one empty slot."""
    bits = max(1, (len(keys) * 5 // 3).bit_length())  # 2^bits > 5/3 of the keys
    home = _home(keys, bits)
    order = np.argsort(home, kind="stable")
    rank = np.arange(len(keys), dtype=np.int64)
    at = np.maximum.accumulate(home[order] - rank) + rank if len(keys) else rank
    size = max(1 << bits, int(at[-1]) + 1 if len(keys) else 0) + 1
    slots = np.full(size, -1, dtype=np.int64)
    out = np.zeros(size, dtype=values.dtype)
    slots[at], out[at] = keys[order], values[order]
    return slots, out


def _bits(slots: np.ndarray) -> int:
    """The :math:`b` of a :func:`_hash_table` of :math:`2^b` slots and its overflow."""
    return (len(slots) - 1).bit_length() - 1


class _WalkedPrefixes(Mapping[str, bool]):
    """:meth:`FlatTrie.prefixes` of a large trie: ``get(prefix)`` walks down the arrays
    (:meth:`FlatTrie.node`), memoised; iterating it is not offered."""

    def __init__(self, trie: FlatTrie):
        self._trie, self._memo = trie, {}

    def get(self, prefix: str, default: bool | None = None) -> bool | None:  # type: ignore[override]
        found = self._memo.get(prefix, self)  # self: not asked yet; None: no prefix
        if found is self:
            node = self._trie.node(prefix) if prefix else -1
            found = self._memo[prefix] = None if node < 0 else int(self._trie._best_length[node]) == len(prefix)
        return default if found is None else found

    def __getitem__(self, prefix: str) -> bool:
        found = self.get(prefix)
        if found is None:
            raise KeyError(prefix)
        return found

    def __iter__(self) -> Iterator[str]:
        raise TypeError("the prefixes of a large trie are walked, not listed")

    def __len__(self) -> int:
        return int(len(self._trie._depth)) - 1


class FlatTrie:
    r"""The trie as flat arrays, for longest-match lookups at every offset of many texts at once.

    A transition ``node --c--> child`` is the key :math:`(\text{node} \ll 21) \,|\, c` in a
    hash table (open addressing, linear probing, at most 60 % full: :func:`_hash_table`); the root's transitions are a
    dense table over all code points. One lookup step advances every still-matching offset by
    one character with a few vectorised probes, so a corpus of :math:`N` characters costs a few
    vectorised passes of at most :math:`N` elements (the number of offsets still inside a word shrinks quickly). A step
    only records the node each offset reached: every node knows its depth and the longest word
    that ends on the path to it, so the walk's results are read off the last nodes at the end.

    A trie of :data:`CACHE_MIN_WORDS` words or more is compiled once: its arrays are kept under
    ``cache_dir`` (default ``$GRAPHMATCH_CACHE/tries``), keyed by the sha256 of its words in
    order, and read back by the next process that builds the same trie (WordNet's: 1.3 s to
    build); ``cache_dir=False`` always builds.
    """

    def __init__(self, words: Iterable[str] = (), cache_dir: str | os.PathLike | bool | None = None):
        words = list(words)
        path = self._cache_path(words, cache_dir)
        if path is not None and path.is_file() and self._read(path, words):
            return
        self._build(words)
        if path is not None:
            write_atomically(path, self._write)

    @staticmethod
    def _cache_path(words: list[str], cache_dir: str | os.PathLike | bool | None) -> Path | None:
        if cache_dir is False or len(words) < CACHE_MIN_WORDS:
            return None
        folder = Path(datafiles.CACHE_DIR / "tries" if cache_dir in (None, True) else cache_dir)  # type: ignore[arg-type]
        digest = hashlib.sha256(f"{CACHE_FORMAT}|".encode())
        digest.update(np.fromiter(map(len, words), dtype=np.int64, count=len(words)).tobytes())
        digest.update("".join(words).encode("utf-8", "surrogatepass"))
        return folder / f"{digest.hexdigest()[:32]}.npz"

    def _write(self, tmp: str) -> None:
        top = (self._root >= 0).nonzero()[0]
        with open(tmp, "wb") as f:
            np.savez(f, **{name: getattr(self, name) for name in _ARRAYS}, root_codes=top,
                     root_children=self._root[top], text=np.array("".join(self.words)),
                     lengths=np.fromiter(map(len, self.words), dtype=np.int64, count=len(self.words)))

    def _read(self, path: Path, given: list[str] | None = None) -> bool:
        """The compiled arrays of ``path``; False (the trie is built again) for a damaged file.
        The words are ``given`` (their strings shared with the caller's: a KG's subjects) when
        they are the stored ones, as they are when none repeats."""
        try:
            with np.load(path, allow_pickle=False) as z:
                arrays = {name: z[name] for name in (*_ARRAYS, "root_codes", "root_children", "text", "lengths")}
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
            return False
        for name in _ARRAYS:
            setattr(self, name, arrays[name])
        self._root = np.full(_CODES, -1, dtype=np.int64)
        self._root[arrays["root_codes"]] = arrays["root_children"]
        text, lengths = str(arrays["text"]), arrays["lengths"]
        if given is not None and len(given) == len(lengths) and "".join(given) == text and np.array_equal(
                np.fromiter(map(len, given), dtype=np.int64, count=len(given)), lengths):
            self.words = given
            return True
        ends = np.cumsum(lengths).tolist()
        self.words = [text[lo:hi] for lo, hi in zip([0, *ends[:-1]], ends, strict=True)] if ends else []
        return True

    def _build(self, words: list[str]) -> None:
        codes, ptr = encode_strings(words)
        node, keys, level_ptr = prefix_levels(codes, ptr, _SHIFT)
        nonempty = (ptr[1:] > ptr[:-1]).nonzero()[0]
        kept = nonempty[first_of(node[nonempty])[1]]  # the first word ending on each node, in order
        self._compile(keys, level_ptr, node[kept], [words[i] for i in kept.tolist()])

    @classmethod
    def from_levels(cls, keys: np.ndarray, level_ptr: np.ndarray, ends: np.ndarray,
                    words: Sequence[str]) -> FlatTrie:
        """The trie of :func:`~graphmatch.knowledge.strings.prefix_levels`' ``keys`` and
        ``level_ptr``, whose distinct, non-empty ``words`` end on the nodes ``ends``."""
        trie = cls.__new__(cls)
        trie._compile(keys, level_ptr, ends, words)
        return trie

    def _compile(self, keys: np.ndarray, level_ptr: np.ndarray, ends: np.ndarray, words: Sequence[str]) -> None:
        """The lookup tables of a trie whose node ``k + 1`` is reached by the transition key
        ``keys[k]`` (nodes of depth :math:`d` from ``level_ptr[d]``) and whose word ``w`` ends
        on node ``ends[w]``."""
        self.words = words
        parent, code = keys >> _SHIFT, keys & ((1 << _SHIFT) - 1)
        child = np.arange(1, len(keys) + 1, dtype=np.int64)
        self._depth = np.repeat(np.arange(len(level_ptr) - 1, dtype=np.int32), np.diff(level_ptr))
        # per node, the longest word ending on the path to it: its own, else its parent's (level by level)
        best_word = np.full(len(self._depth), -1, dtype=np.int32)
        best_word[ends] = np.arange(len(ends), dtype=np.int32)
        up = np.concatenate(([0], parent))
        for lo, hi in zip(level_ptr[1:-1].tolist(), level_ptr[2:].tolist(), strict=True):
            level = best_word[lo:hi]
            unset = level < 0
            level[unset] = best_word[up[lo:hi][unset]]
        self._best_word = best_word
        self._best_length = np.append(self._depth[ends], 0)[best_word]  # -1 (no word): the 0 appended
        del up
        self._slots, self._child = _hash_table(keys, child.astype(np.int32))
        self._root = np.full(_CODES, -1, dtype=np.int64)
        top = parent == 0
        self._root[code[top]] = child[top]

    def save(self, folder: Path) -> None:
        """The lookup tables as ``.npy`` files in ``folder`` (the words are the caller's to keep)."""
        for name in (*_ARRAYS, "_root"):
            np.save(folder / f"trie{name}.npy", getattr(self, name), allow_pickle=False)

    @classmethod
    def load(cls, folder: Path, words: Sequence[str]) -> FlatTrie:
        """A trie :meth:`save` wrote, memory-mapped (pages are read as lookups touch them)."""
        trie = cls.__new__(cls)
        for name in (*_ARRAYS, "_root"):
            setattr(trie, name, np.asarray(np.load(folder / f"trie{name}.npy", mmap_mode="r", allow_pickle=False)))
        trie.words = words
        return trie

    def __len__(self) -> int:
        return len(self.words)

    def prefixes(self) -> Mapping[str, bool]:
        """Every prefix of every word, mapped to whether it is a word itself (built on first use):
        a walk along one short text in plain Python, one ``dict`` lookup per character. A trie
        of more than :data:`PREFIX_TABLE_NODES` nodes (a KG of millions of subjects: the table
        would take gigabytes) answers by a walk down its arrays instead, memoised."""
        table = self.__dict__.get("_prefixes")
        if table is None and len(self._depth) > PREFIX_TABLE_NODES:
            table = self._prefixes = _WalkedPrefixes(self)
        elif table is None:
            table = {}
            for word in self.words:
                for k in range(1, len(word)):
                    table.setdefault(word[:k], False)
            table.update(dict.fromkeys(self.words, True))
            self._prefixes = table
        return table

    def index(self, word: str) -> int:
        """The index of ``word`` in :attr:`words`, -1 if it is none."""
        node = self.node(word)
        return int(self._best_word[node]) if node > 0 and int(self._best_length[node]) == len(word) else -1

    def node(self, word: str) -> int:
        """The node ``word`` leads to from the root, -1 if it leads nowhere (0: the empty word):
        a walk in plain Python, one probe of the transition table per character."""
        if not word:
            return 0
        node = int(self._root[ord(word[0])])
        slots = self._slots
        shift = 64 - _bits(slots)
        for ch in word[1:]:
            if node < 0:
                return -1
            key = (node << _SHIFT) | ord(ch)
            at = ((key * _GOLDEN_INT) & _U64) >> shift
            while True:
                held = int(slots[at])
                if held == key:
                    node = int(self._child[at])
                    break
                if held < 0:
                    return -1
                at += 1
        return node

    def longest(self, codes: np.ndarray, stop: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The longest word starting at every offset.

        Args:
            codes: ``[N]`` code points of one or more texts laid end to end.
            stop: ``[N]`` for every offset, the end of the text it belongs to (a word never
                runs past it).

        Returns:
            ``(length, word)``, both ``[N]``: the length of the longest word ``w`` with
            ``codes[i:i + len(w)] == w`` (0 if none) and its index in :attr:`words` (-1 if none).
        """
        length, word, _ = self.walk(codes, stop)
        return length, word

    def walk(self, codes: np.ndarray, stop: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`longest`, and how far the walk from every offset went: :meth:`Trie.walk` at
        every offset at once.

        Returns:
            ``(length, word, reach)``, all ``[N]``: ``length`` and ``word`` as :meth:`longest`
            gives them, and ``reach``, the characters walked from the offset before the text
            ended (at ``stop``) or a character had no child in the trie.
        """
        last = np.zeros(len(codes), dtype=np.int64)  # the deepest node reached from each offset (0: the root)
        state = self._root[codes]
        start = (state >= 0).nonzero()[0]
        state = state[start]
        k = 1
        while start.size:
            last[start] = state
            at = start + k
            inside = at < stop[start]
            start, state = start[inside], state[inside]
            state = self._children((state << _SHIFT) | codes[at[inside]])
            hit = state > 0
            start, state = start[hit], state[hit]
            k += 1
        return (self._best_length[last].astype(np.int64), self._best_word[last].astype(np.int64),
                self._depth[last].astype(np.int64))

    def _children(self, keys: np.ndarray) -> np.ndarray:
        """The child node of each transition key, 0 where the trie has no such transition."""
        slots = self._slots
        at = _home(keys, _bits(slots))
        held = slots[at]  # the first probe, for every key at once
        found = held == keys
        child = np.where(found, self._child[at], 0).astype(np.int64)
        todo = (~found & (held >= 0)).nonzero()[0]
        at = at[todo] + 1
        while todo.size:
            held = slots[at]
            found = held == keys[todo]
            child[todo[found]] = self._child[at[found]]
            going = ~found & (held >= 0)
            todo, at = todo[going], at[going] + 1
        return child
