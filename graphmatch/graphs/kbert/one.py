r"""One K-BERT sentence tree at a time, in plain Python: what ``predict``, ``show`` and ``inspect``
build.

The vectorised core (:mod:`~graphmatch.graphs.kbert.core`) sets up some hundred arrays per call,
whatever the number of inputs, and PyG's ``HeteroData.from_dict`` sets every attribute through
its storage's ``__setattr__``. For one input both cost more than the tree itself. :class:`OneTree`
builds the same graph, attribute for attribute, for characters queried by the trie (the
:attr:`~graphmatch.graphs.kbert.TreeCore.plain_characters` settings, default and reference
mode, single texts and pairs, with or without a label):

1. K-Query walks the query trie's prefix table (:meth:`~graphmatch.knowledge.FlatTrie.prefixes`)
   from every offset: the longest subject of the folded text, text by text (default mode), or
   pkuseg's forced word of each whitespace-free piece of ``[CLS]a[SEP]b[SEP]`` (reference mode);
   matches are taken greedily left to right.
2. The flattened tree is written out in order, each word's branch tokens right after its last
   trunk token (soft position :math:`p + k` for the :math:`k`-th token of a value on a word
   whose last token has position :math:`p`), and cut to ``max_length``: a value stays while its
   first token does, a word while its first branch token does. Positions and the cut are the
   rules of :mod:`~graphmatch.graphs.kbert.rules`, which the vectorised core calls too.
3. All integers go into one array, and every attribute is a view of it (a slice, reshaped); the
   graph and its storages are made from their states, as unpickling makes them (no attribute
   goes through a storage's ``__setattr__``).

``tests/graphs/test_kbert_one.py`` holds it equal to the core on thousands of inputs.
"""

from __future__ import annotations

import re
import weakref
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from itertools import accumulate, compress

import numpy as np
import torch
from torch_geometric.data import HeteroData

from graphmatch.graphs.kbert import rules
from graphmatch.graphs.kbert.core import TreeCore
from graphmatch.graphs.kbert.folding import fold
from graphmatch.graphs.kbert.records import ANCHOR_EDGE, CLS, ENTITY_EDGE, SEP, SPECIAL_TAGS, WORD_EDGE

_PIECE = re.compile(r"\S+")  # whitespace as ``str.isspace`` sees it
_KEYS = ("token", "word", "entity", WORD_EDGE, ENTITY_EDGE, ANCHOR_EDGE)
_ROWS = ("input_ids", "pos", "seg", "char_index")
_tensor = torch.from_numpy


class _CharIds(dict):
    """Character -> token id (-1: whitespace), each looked up once."""

    def __init__(self, char_id: Callable[[str], int]):
        super().__init__()
        self.char_id = char_id

    def __missing__(self, ch: str) -> int:
        i = self[ch] = self.char_id(ch)
        return i


class OneTree:
    """The graph of one input, equal to :func:`~graphmatch.graphs.kbert.tree_graph` of the core's
    trees. ``core`` must have :attr:`~graphmatch.graphs.kbert.TreeCore.plain_characters`."""

    def __init__(self, core: TreeCore):
        if not core.plain_characters:
            raise ValueError("the one-input fast path needs characters queried by the trie, nothing else on")
        self.core = core
        self.reference = core.mode == "reference"
        self.limit = core.max_length
        self.seps, self.seg_b = core.pair_layout()
        self._prefix: Callable[[str], bool | None] | None = None  # the query trie's prefix table's get
        self._ids = _CharIds(core.char_id)
        self._tag_ids = {tag: core.tag_id(tag) for tag in SPECIAL_TAGS}
        self._head = [(CLS, True, 0)] if core.add_cls else []
        self._between = [(SEP, True, 0)] * self.seps
        self._end = (SEP, True, self.seg_b)
        self._values: dict[str, tuple[list[int], list[int]] | None] = {}
        empty = {key: {"edge_index": torch.zeros(2, 0, dtype=torch.long)} for key in _KEYS[3:]}
        self._template = HeteroData.from_dict({"token": {"num_nodes": 0}, "word": {"num_nodes": 0},
                                               "entity": {"num_nodes": 0}, **empty})
        state = self._template.__getstate__()
        self._stores = {key: type(self._template[key]) for key in _KEYS}
        self._global = type(state["_global_store"])
        self._state = {k: v for k, v in state.items()
                       if k not in ("_global_store", "_node_store_dict", "_edge_store_dict")}

    # ---------------------------------------------------------------- K-Query
    def _matches(self, string: str, texts: list[tuple[int, int]]) -> list[tuple[int, int, str]]:
        """``(start, end, word)`` of the taken K-Query matches in ``string``."""
        if not self.core.inject and not self.reference:
            return []
        if self._prefix is None:
            self._prefix = self.core.query_trie().prefixes().get
        prefix, reference = self._prefix, self.reference
        out = []
        if reference:
            spans = [m.span() for m in _PIECE.finditer(string)]
            folded = string
        else:
            spans, folded = texts, fold(string)
        for lo, stop in spans:
            i = lo
            while i < stop:
                k, length = i + 1, 0
                while k <= stop:
                    word = prefix(folded[i:k])
                    if word is None:
                        break
                    if word:
                        length = k
                    k += 1
                if length:  # reference: all it walked, unless the walk ran to the end of the piece
                    end = k - 1 if reference and k - 1 < stop else length
                    out.append((i, end, folded[i:end]))
                    i = end
                else:
                    i += 1
        return out

    def _value(self, word: str) -> tuple[list[int], list[int]] | None:
        found = self._values.get(word, self)
        if found is self:
            found = self._values[word] = self.core.subject_values(word) if self.core.inject else None
        return found

    # ------------------------------------------------------------------ trunk
    def _trunk(self, parts: list[tuple[str, bool, int]]) -> tuple[list[int], list[int], list[int], list[int]]:
        """Default mode: token ids, segments and character offsets of the trunk, and the trunk
        tokens before each character of the joined parts (and after the last)."""
        ids: list[int] = []
        seg: list[int] = []
        origin: list[int] = []
        before: list[int] = []
        known, tag_ids = self._ids, self._tag_ids
        for text, tag, part_seg in parts:
            n0 = len(ids)
            if tag:  # one token; the characters after its first see it before them
                ids.append(tag_ids[text])
                seg.append(part_seg)
                origin.append(-1)
                before += [n0] + [n0 + 1] * (len(text) - 1)
                continue
            part = list(map(known.__getitem__, text))
            if -1 in part:  # whitespace: no token, no position
                kept = [i >= 0 for i in part]
                before += list(accumulate(kept, initial=n0))[:-1]
                part = list(compress(part, kept))
                origin += compress(range(len(text)), kept)
            else:
                before += range(n0, n0 + len(part))
                origin += range(len(part))
            ids += part
            seg += [part_seg] * len(part)
        before.append(len(ids))
        return ids, seg, origin, before

    def _reference_trunk(self, string: str, parts: list[tuple[str, bool, int]], starts: list[int],
                         tags: dict[int, tuple[int, str]], pair: bool
                         ) -> tuple[list[int], list[int], list[int], list[int]]:
        """Reference mode: :meth:`_trunk` where ``tags`` (start -> end, tag) are the forced words
        that are special tags, and a pair's segment is counted over the separators."""
        ids, seg, origin = [], [], []
        before = [0] * (len(string) + 1)  # trunk tokens before each character
        known = self._ids
        seps_seen = 0
        for (text, tag, part_seg), start in zip(parts, starts, strict=True):
            j = 0
            while j < len(text):
                c = start + j
                before[c] = len(ids)
                hit = tags.get(c)
                if hit is not None:
                    end, name = hit
                    ids.append(self._tag_ids[name])
                    seg.append(min(seps_seen, 1) if pair else part_seg)
                    origin.append(-1 if tag else j)
                    seps_seen += name == SEP
                    for k in range(c + 1, end):  # a tag ends inside its part (it is one)
                        before[k] = len(ids)
                    j += end - c
                    continue
                ch = text[j]
                i = known[ch]
                if i >= 0:
                    ids.append(i)
                    seg.append(min(seps_seen, 1) if pair else part_seg)
                    origin.append(j)
                j += 1
        before[len(string)] = len(ids)
        return ids, seg, origin, before

    # ------------------------------------------------------------------ build
    def __call__(self, text_a: str, text_b: str | None = None, label: int | None = None) -> HeteroData:
        """The graph of ``text_a`` (and ``text_b``), with ``data.y`` when ``label`` is given.
        The input is not checked here (:meth:`~graphmatch.graphs.kbert.TreeCore.check`)."""
        parts: list[tuple[str, bool, int]] = [*self._head, (text_a, False, 0)]
        if text_b is not None:
            parts += [*self._between, (text_b, False, self.seg_b), self._end]
        string = "".join([p[0] for p in parts])
        starts, texts, lo = [], [], 0
        for text, tag, _ in parts:
            starts.append(lo)
            if not tag:
                texts.append((lo, lo + len(text)))
            lo += len(text)
        matches = self._matches(string, texts)
        # trunk: every character that is not whitespace, each tag one token (in reference mode the
        # tags are the forced words that are special tags)
        if self.reference:
            tags = {s: (e, w) for s, e, w in matches if w in SPECIAL_TAGS}
            ids, seg, origin, before = self._reference_trunk(string, parts, starts, tags, text_b is not None)
        else:
            ids, seg, origin, before = self._trunk(parts)

        # words with values that hold a trunk token, and the flattened tree in order
        words = []  # (first, end, span start, span end, lengths, ids)
        for s, e, w in matches:
            first, end = before[s], before[e]
            if end > first:
                values = self._value(w)
                if values is not None:
                    p = bisect_right(starts, s) - 1
                    words.append((first, end, -1 if parts[p][1] else s - starts[p], e - s, *values))
        limit = self.limit
        kept, kept_length, branch_position = rules.kept, rules.kept_length, rules.branch_position
        tok_ids, pos, tok_seg, index, branch = [], [], [], [], []
        w_src, w_dst, e_src, e_dst, a_src, a_dst, spans, lengths = [], [], [], [], [], [], [], []
        cursor, n_values = 0, 0
        for w, (first, end, span_lo, span_len, value_lengths, value_ids) in enumerate(words):
            shift = len(tok_ids) - cursor  # branch tokens before trunk token ``cursor``
            tok_ids += ids[cursor:end]
            pos += range(cursor, end)
            tok_seg += seg[cursor:end]
            index += origin[cursor:end]
            branch += [0] * (end - cursor)
            cursor = end
            if not kept(len(tok_ids), limit):  # a word stays while its first branch token does
                break
            w_src += range(first + shift, end + shift)
            w_dst += [w] * (end - first)
            spans += (span_lo, span_lo + span_len)
            first_position, s, t = branch_position(end - 1, 0), seg[end - 1], 0  # every sibling starts there
            for length in value_lengths:
                if not kept(len(tok_ids), limit):  # a value stays while its first token does
                    break
                a_src.append(n_values), a_dst.append(w)
                lengths.append(kept_length(length, len(tok_ids), limit))
                e_src += range(len(tok_ids), len(tok_ids) + length)
                e_dst += [n_values] * length
                tok_ids += value_ids[t:t + length]
                pos += range(first_position, first_position + length)
                tok_seg += [s] * length
                index += [-1] * length
                branch += [1] * length
                t += length
                n_values += 1
        if kept(len(tok_ids), limit):
            tok_ids += ids[cursor:]
            pos += range(cursor, len(ids))
            tok_seg += seg[cursor:]
            index += origin[cursor:]
            branch += [0] * (len(ids) - cursor)
        n = rules.tree_size(len(tok_ids), limit)
        e_keep = bisect_left(e_src, limit)  # the branch tokens kept: e_src ascends
        flat = np.array([*tok_ids[:n], *pos[:n], *tok_seg[:n], *index[:n], *branch[:n], *w_src, *w_dst, *e_src[:e_keep],
                         *e_dst[:e_keep], *a_src, *a_dst, *spans, *lengths], dtype=np.int64)  # one list: no list per +
        # every tensor a view of ``flat`` (slicing and reshaping the array costs less than torch's)
        at = list(accumulate((n, n, n, n, n, 2 * len(w_src), 2 * e_keep, 2 * len(a_src), len(spans)), initial=0))
        token = {name: _tensor(flat[at[i]:at[i + 1]]) for i, name in enumerate(_ROWS)}
        token.update(branch=_tensor(flat[at[4]:at[5]].astype(bool)), num_nodes=n)
        mapping = {"token": token,
                   WORD_EDGE: {"edge_index": _tensor(flat[at[5]:at[6]].reshape(2, -1))},
                   ENTITY_EDGE: {"edge_index": _tensor(flat[at[6]:at[7]].reshape(2, -1))},
                   ANCHOR_EDGE: {"edge_index": _tensor(flat[at[7]:at[8]].reshape(2, -1))},
                   "word": {"span": _tensor(flat[at[8]:at[9]].reshape(-1, 2)), "num_nodes": len(spans) // 2},
                   "entity": {"length": _tensor(flat[at[9]:]), "num_nodes": len(lengths)}}
        # the graph and its storages made as unpickling makes them (``__setstate__``, here its two
        # lines inline): no attribute goes through a storage's ``__setattr__``
        graph = HeteroData.__new__(HeteroData)
        parent = weakref.ref(graph)
        stores = {}
        for key in _KEYS:
            store = stores[key] = self._stores[key].__new__(self._stores[key])
            store.__dict__.update(_mapping=mapping[key], _parent=parent, _key=key)
        top = self._global.__new__(self._global)
        y = {} if label is None else {"y": _tensor(np.array([int(label)], dtype=np.int64))}
        top.__dict__.update(_mapping=y, _parent=parent)
        graph.__dict__.update(self._state, _global_store=top,
                              _node_store_dict={key: stores[key] for key in _KEYS[:3]},
                              _edge_store_dict={key: stores[key] for key in _KEYS[3:]})
        return graph


__all__ = ["OneTree"]
