r"""pkuseg's feature lookup from memory-mapped tables instead of its 2.6-million-entry dict.

pkuseg labels each character with a linear-chain CRF. Character :math:`i` of the normalised
text :math:`x` (digits → ``**Num``, Latin letters → ``**Letter``, ``-._,|/*:`` → ``&``) gets
the feature ``$$`` (index 0) and the indices of those of its feature strings that were seen in
training:

- characters and character pairs around it: ``c.``:math:`x_i`, ``c-1.``:math:`x_{i-1}`,
  ``c-1c.``:math:`x_{i-1}.x_i`, ``c1.``:math:`x_{i+1}`, ``cc1.``:math:`x_i.x_{i+1}`,
  ``c-2.``:math:`x_{i-2}`, ``c-2c-1.``:math:`x_{i-2}.x_{i-1}`, ``c2.``:math:`x_{i+2}`;
- for :math:`\ell = 6, \dots, 2`: ``w-1.``:math:`x_{i-\ell+1..i}` and ``w1.``:math:`x_{i..i+\ell-1}`
  where that substring is a training word;
- ``ww.l.``:math:`p\ast q` for every word (or ``**noWord``) :math:`p` ending at :math:`i-1` and
  :math:`q` starting at :math:`i`, and ``ww.r.``:math:`p\ast q` for :math:`p` ending at :math:`i`
  and :math:`q` starting at :math:`i + 1`.

A substring that reaches outside the text is the empty string, which is a training word where
``""`` is in the model's word list (as in pkuseg's default model), and ``**noWord`` otherwise.

pkuseg keeps the feature → index map in ``features.pkl``, a pickled dict that takes seconds and
~0.6 GB to load in every process. :func:`feature_tables` converts it once into an uncompressed
``.npz`` in the cache folder: for each UTF-8 length :math:`n`, the sorted keys of that length as
``S{n}`` and their indices. A text's feature strings are then looked up together by binary
search in the memory-mapped arrays (:class:`FeatureTables`), an exact match, so the indices
equal pkuseg's. The CRF weights and the Viterbi decoding stay pkuseg's own.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from graphmatch.io.atomic import write_atomically
from graphmatch.io.datafiles import CACHE_DIR
from graphmatch.text.mapped_files import mapped_npz_array

#: bump when the tables' layout changes
FORMAT = 2
NO_WORD = "**noWord"


def feature_tables(model_dir: str | os.PathLike, cache_dir: str | os.PathLike | None = None) -> Path:
    """The ``.npz`` tables of ``model_dir/features.pkl``, built on first use (keyed by the pickle's
    path, size and modification time) under ``cache_dir`` (default: ``$GRAPHMATCH_CACHE/pkuseg``)."""
    source = Path(model_dir, "features.pkl").resolve()
    stat = source.stat()
    key = hashlib.sha256(f"{source}|{stat.st_size}|{stat.st_mtime_ns}|{FORMAT}".encode()).hexdigest()[:16]
    path = Path(cache_dir or CACHE_DIR / "pkuseg") / f"features-{key}.npz"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(source, "rb") as f:
            data = pickle.load(f)
        write_atomically(path, lambda tmp: _write_tables(tmp, data, str(source)))
    return path


def _write_tables(tmp: str, data: dict[str, Any], source: str) -> None:
    unigram = sorted(w for w in data["unigram"] if w)  # "" is kept as a flag in meta
    if NO_WORD in data["unigram"] or any("\n" in w for w in unigram):
        raise ValueError(f"{source}: a pkuseg word is {NO_WORD!r} or holds a line break; no tables are built")
    # every key's UTF-8 bytes end to end, cut per length into fixed-width rows: no Python object per key
    features = data["feature_to_idx"]
    sizes = np.fromiter((len(k.encode("utf-8")) for k in features), dtype=np.int64, count=len(features))
    ids = np.fromiter(features.values(), dtype=np.int32, count=len(features))
    raw = np.frombuffer("".join(features).encode("utf-8"), dtype=np.uint8)
    starts = np.cumsum(sizes) - sizes
    arrays: dict[str, np.ndarray] = {}
    for n in np.unique(sizes[sizes > 0]).tolist():
        rows = np.flatnonzero(sizes == n)
        keys = raw[starts[rows, None] + np.arange(n)].view(f"S{n}").ravel()
        order = np.argsort(keys)
        arrays[f"k{n}"], arrays[f"i{n}"] = keys[order], ids[rows[order]]
    arrays["unigram"] = np.frombuffer("\n".join(unigram).encode("utf-8"), dtype=np.uint8)
    meta = {"format": FORMAT, "size": len(data["feature_to_idx"]), "tag_to_idx": data["tag_to_idx"],
            "empty_word": "" in data["unigram"]}
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)
    with open(tmp, "wb") as f:
        np.savez(f, **arrays)  # uncompressed: the arrays can be memory-mapped


class FeatureTables:
    """pkuseg's feature → index map and training words, read from :func:`feature_tables`'s file
    (the key arrays memory-mapped)."""

    #: most feature strings remembered between texts
    MEMO = 500_000

    def __init__(self, path: str | os.PathLike):
        path = str(path)
        with np.load(path) as npz:
            names = npz.files
            meta = json.loads(npz["meta"].tobytes().decode("utf-8"))
            text = npz["unigram"].tobytes().decode("utf-8")
        self.unigram = frozenset((text.split("\n") if text else []) + ([""] if meta["empty_word"] else []))
        self.tag_to_idx: dict[str, int] = meta["tag_to_idx"]
        self.size: int = meta["size"]
        self._keys: dict[int, np.ndarray] = {}
        self._ids: dict[int, np.ndarray] = {}
        self._memo: dict[str, int] = {}
        self._blocks: dict[tuple[str, ...], list[int]] = {}
        for name in names:
            if name.startswith("k"):
                n = int(name[1:])
                self._keys[n] = _mapped(path, name)
                self._ids[n] = _mapped(path, f"i{n}")

    def __len__(self) -> int:
        return self.size

    def lookup(self, features: Sequence[str]) -> np.ndarray:
        """The index of each feature string, -1 for one pkuseg does not know."""
        raw = [f.encode("utf-8") for f in features]
        lengths = np.fromiter(map(len, raw), dtype=np.int64, count=len(raw))
        out = np.full(len(raw), -1, dtype=np.int64)
        for n in np.unique(lengths).tolist():
            keys = self._keys.get(n)
            if keys is None:
                continue
            where = np.flatnonzero(lengths == n)
            queries = np.array([raw[k] for k in where.tolist()], dtype=f"S{n}")
            pos = np.minimum(np.searchsorted(keys, queries), len(keys) - 1)
            hit = keys[pos] == queries
            out[where[hit]] = self._ids[n][pos[hit]]
        return out

    def text_features(self, nodes: Sequence[str], word_min: int = 2, word_max: int = 6,
                      word_features: bool = True) -> list[list[int]]:
        """The feature indices of every character of the normalised text ``nodes``, in pkuseg's
        order (module documentation). Strings looked up before are answered from a memo (at most
        :attr:`MEMO` of them), and so are the ``ww.`` indices of each (words before, words after)
        pair: a corpus costs a few dict lookups per character."""
        n = len(nodes)
        lengths = range(word_max, word_min - 1, -1)
        # words[k][a + word_max]: the training word nodes[a:a + k] or NO_WORD, for a in [-word_max, n]
        # (pkuseg's get_slice_str gives "" outside the text, a word where "" is in the unigram, as it
        # is in pkuseg's default model)
        unigram = self.unigram
        words = {k: [""] * word_max + ["".join(nodes[a:a + k]) if a + k <= n else "" for a in range(n)] + [""]
                 for k in lengths}
        words = {k: [w if w in unigram else NO_WORD for w in row] for k, row in words.items()}
        memo, blocks = self._memo, self._blocks
        if len(memo) > self.MEMO or len(blocks) > self.MEMO:
            memo.clear()
            blocks.clear()
        chars: list[list[str]] = []  # per character: its c., w-1. and w1. strings
        pairs: list[tuple[tuple[str, ...], tuple[str, ...]]] = []  # per character: its ww.l. and ww.r. keys
        for i, c in enumerate(nodes):
            own = ["c." + c]
            if i > 0:
                own += ["c-1." + nodes[i - 1], "c-1c." + nodes[i - 1] + "." + c]
            if i + 1 < n:
                own += ["c1." + nodes[i + 1], "cc1." + c + "." + nodes[i + 1]]
            if i > 1:
                own += ["c-2." + nodes[i - 2], "c-2c-1." + nodes[i - 2] + "." + nodes[i - 1]]
            if i + 2 < n:
                own.append("c2." + nodes[i + 2])
            if word_features:
                a = i + word_max
                pre_in = tuple(words[k][a - k + 1] for k in lengths)
                post_in = tuple(words[k][a] for k in lengths)
                own += ["w-1." + w for w in pre_in if w != NO_WORD]
                own += ["w1." + w for w in post_in if w != NO_WORD]
                pre_ex = tuple(words[k][a - k] for k in lengths)
                post_ex = tuple(words[k][a + 1] for k in lengths)
                pairs.append((("ww.l.", *pre_ex, "*", *post_in), ("ww.r.", *pre_in, "*", *post_ex)))
            chars.append(own)
        # the ww. features of a (words before, words after) pair: every combination, memoised as a block
        m = len(lengths)  # a key is (prefix, m words before, "*", m words after)
        new_blocks = {key: [key[0] + p + "*" + q for p in key[1:1 + m] for q in key[2 + m:]]
                      for two in pairs for key in two if key not in blocks}
        pending = {s for own in chars for s in own if s not in memo}
        pending.update(s for block in new_blocks.values() for s in block if s not in memo)
        if pending:
            new = list(pending)
            memo.update(zip(new, self.lookup(new).tolist(), strict=True))
        for key, block in new_blocks.items():
            blocks[key] = [index for index in map(memo.__getitem__, block) if index >= 0]
        out: list[list[int]] = []
        for i, own in enumerate(chars):
            features = [0]  # "$$" starts every character's list
            features += [index for index in map(memo.__getitem__, own) if index >= 0]
            if word_features:
                left, right = pairs[i]
                features += blocks[left] + blocks[right]
            out.append(features)
        return out


def _mapped(path: str, name: str) -> np.ndarray:
    array = mapped_npz_array(path, name)
    if array is None:  # written by np.savez, so never compressed; kept for a hand-made file
        with np.load(path) as npz:
            return npz[name]
    return array.view(np.ndarray)  # a plain view: np.memmap's indexing is slow


__all__ = ["FeatureTables", "feature_tables"]
