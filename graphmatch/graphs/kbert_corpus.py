r"""Many K-BERT sentence trees at once, straight into :class:`~torch_geometric.data.InMemoryDataset`
storage.

:class:`TreeCorpusBuilder` gives exactly what collating the graphs of
:class:`~graphmatch.graphs.kbert.SentenceTreeBuilder` one by one gives
(``InMemoryDataset.collate``: one graph of concatenated tensors with local edge indices, and
the ``slices`` of every sample), but every step runs over the whole corpus as numpy arrays:

1. all texts become one array of code points; folding and vocabulary ids are table lookups;
2. K-Query finds the longest subject at every offset with :class:`~graphmatch.knowledge.FlatTrie`
   and keeps the greedy left-to-right choice (a candidate is taken when no taken match covers it);
3. K-Inject: a trunk token with ordinal :math:`o` moves to :math:`o + \sum_{w:\,e_w \le o} n_w`
   (the branch tokens of the words that end before it); the :math:`k`-th branch token of word
   :math:`w` goes to :math:`e_w + \sum_{w' < w} n_{w'} + k` and gets position :math:`e_w - 1 + k'`
   (:math:`k'` counted from 1 within its value);
4. everything at or beyond ``max_length`` is cut: a word whose first branch token is cut is
   dropped, a value is kept while its first token is.

The vectorised path covers ``mode="default"`` with ``query="trie"`` (what the datasets use);
other settings fall back to building the graphs one by one, with the same result.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from typing import Any, NamedTuple

import numpy as np
import torch
from torch import Tensor
from torch_geometric.data import HeteroData
from torch_geometric.data.collate import collate
from tqdm.auto import tqdm

from graphmatch import ragged
from graphmatch.graphs.kbert import _FOLD, ANCHOR_EDGE, ENTITY_EDGE, IGNORE_INDEX, WORD_EDGE, SentenceTreeBuilder
from graphmatch.knowledge import FlatTrie

_UNSET = np.iinfo(np.int64).min
_NODE_TYPES = ("token", "word", "entity")

Slices = dict[Any, Any]


class _Stream(NamedTuple):
    """All inputs laid end to end as raw items: the characters of their texts and the added
    ``[CLS]``/``[SEP]`` tags (whitespace still in, with id -1)."""

    codes: np.ndarray  # [C] code points of every text
    text_start: np.ndarray  # [T + 1] where each text starts in ``codes``
    char_text: np.ndarray  # [C] the text of each character
    char_dest: np.ndarray  # [C] the raw offset of each character
    ids: np.ndarray  # [R] vocabulary ids (-1: whitespace)
    seg: np.ndarray  # [R] segment ids
    char_index: np.ndarray  # [R] offset in its own text, -1 for a tag
    y: np.ndarray | None  # [R] NER tag ids, -100 for a tag
    owner: np.ndarray  # [R] the input of each raw item


class InputError(ValueError):
    """A bad input; :attr:`index` is its position in the lists given."""

    def __init__(self, index: int, reason: str):
        super().__init__(f"input {index}: {reason}")
        self.index, self.reason = index, reason


class TreeCorpusBuilder:
    """Builds the sentence trees of many inputs as one collated graph and its slices.

    Args:
        builder (SentenceTreeBuilder): the settings (KG, vocabulary, ``max_length`` ...).

    Call it with lists of texts; the result ``(data, slices)`` is what
    ``InMemoryDataset.collate([builder(...) for ...])`` returns (with ``slices`` also for a
    single input), ready for ``InMemoryDataset.data`` / ``slices`` or ``torch.save``.
    """

    def __init__(self, builder: SentenceTreeBuilder):
        self.builder = builder
        self.vectorised = builder.mode == "default" and builder.query == "trie" and not builder.keep_text
        self._id_table = np.full(0x110000, _UNSET, dtype=np.int64)
        inject = builder.kg is not None and builder.max_entities > 0 and self.vectorised
        self._trie = FlatTrie(builder.kg.subjects) if inject else None
        self._fold_table = np.full(0x110000, _UNSET, dtype=np.int64) if inject else None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.builder!r}, vectorised={self.vectorised})"

    def __call__(
        self,
        texts_a: Sequence[str],
        texts_b: Sequence[str] | None = None,
        labels: Sequence[int] | None = None,
        tags: Sequence[Sequence[str]] | None = None,
        chunk_size: int = 20_000,
        progress: bool = False,
        desc: str = "K-BERT graphs",
    ) -> tuple[HeteroData, Slices]:
        """The collated graphs of ``builder(texts_a[i], texts_b[i], labels[i], tags[i])``.

        Args:
            texts_a: the texts (or first texts of pairs).
            texts_b: the second texts of pairs.
            labels: one label id per input (``data.y``).
            tags: NER tags per input, one per character of ``texts_a[i]``.
            chunk_size: inputs built per vectorised step (bounds the memory).
            progress: show a progress bar over the inputs.

        Raises :class:`InputError` (a :class:`ValueError` with the input's ``index``) for an
        input :meth:`SentenceTreeBuilder.check` refuses.
        """
        n = len(texts_a)
        if n == 0:
            raise ValueError("no inputs")
        for name, column in (("texts_b", texts_b), ("labels", labels), ("tags", tags)):
            if column is not None and len(column) != n:
                raise ValueError(f"{len(column)} {name} for {n} texts_a")
        self._check(texts_a, texts_b, tags)
        parts = []
        bar = tqdm(total=n, desc=desc, unit="sent", disable=not progress, mininterval=1.0)
        step = chunk_size if self.vectorised else n
        for lo in range(0, n, step):
            hi = min(lo + step, n)
            args = [None if column is None else column[lo:hi] for column in (texts_a, texts_b, labels, tags)]
            parts.append(self._chunk(*args) if self.vectorised else self._one_by_one(*args, bar))
            if self.vectorised:
                bar.update(hi - lo)
        bar.close()
        return concat_collated(parts)

    # ------------------------------------------------------------------ checks
    def _check(self, texts_a, texts_b, tags) -> None:
        """The builder's own checks of every input, naming the input that fails."""
        check = self.builder.check
        for i, text in enumerate(texts_a):
            try:
                if texts_b is not None and texts_b[i] is None:  # the builder would read None as "no pair"
                    raise TypeError("text_b must be a str, got NoneType")
                check(text, None if texts_b is None else texts_b[i], None if tags is None else tags[i])
            except TypeError as err:
                raise TypeError(f"input {i}: {err}") from err
            except ValueError as err:
                raise InputError(i, str(err)) from err

    def _one_by_one(self, texts_a, texts_b, labels, tags, bar) -> tuple[HeteroData, Slices]:
        graphs = []
        for i, text in enumerate(texts_a):
            graphs.append(self.builder(text, None if texts_b is None else texts_b[i],
                                       None if labels is None else labels[i], None if tags is None else tags[i]))
            bar.update(1)
        data, slices, _ = collate(HeteroData, graphs, increment=False, add_batch=False)
        return data, slices

    # ------------------------------------------------------------ vectorised
    def _lookup(self, table: np.ndarray, codes: np.ndarray, fill) -> np.ndarray:
        """``table[codes]``, filling entries never seen before with ``fill(code)``."""
        out = table[codes]
        new = out == _UNSET
        if new.any():
            for code in np.unique(codes[new]).tolist():
                table[code] = fill(code)
            out = table[codes]
        return out

    def _stream(self, texts_a, texts_b, tags) -> _Stream:
        """All inputs as one raw stream: ``[CLS]? a`` or ``[CLS]? a [SEP] b [SEP]`` each."""
        b = self.builder
        pair = texts_b is not None
        n, per = len(texts_a), 2 if pair else 1
        texts = list(chain.from_iterable(zip(texts_a, texts_b, strict=True))) if pair else list(texts_a)
        text_len = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        text_start = ragged.ptr(text_len)
        codes = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.int64)
        char_text = np.repeat(np.arange(len(texts)), text_len)
        cls = int(b.add_cls)
        markers = cls + 2 * pair  # tags added per input
        marks_before = cls + (np.arange(len(texts)) % 2 if pair else 0)  # tags of its input before a text
        char_dest = np.arange(codes.size) + np.repeat(marks_before + (np.arange(len(texts)) // per) * markers, text_len)
        size = codes.size + n * markers
        ids = np.empty(size, dtype=np.int64)
        char_index = np.full(size, -1, dtype=np.int64)
        seg = np.zeros(size, dtype=np.int64)
        ids[char_dest] = self._lookup(self._id_table, codes, lambda c: b._ids[chr(c)])  # -1 for whitespace
        char_index[char_dest] = np.arange(codes.size) - text_start[char_text]
        input_start = text_start[:-1:per] + np.arange(n) * markers
        if cls:
            ids[input_start] = b.tokenizer.cls_id
        if pair:
            sep1 = input_start + cls + text_len[0::2]
            sep2 = sep1 + 1 + text_len[1::2]
            ids[sep1] = ids[sep2] = b.tokenizer.sep_id
            seg[char_dest[char_text % 2 == 1]] = 1
            seg[sep2] = 1
        y = None
        if tags is not None:
            y = np.full(size, IGNORE_INDEX, dtype=np.int64)
            y[char_dest] = np.fromiter(map(b.tag_to_id.__getitem__, chain.from_iterable(tags)), dtype=np.int64,
                                       count=codes.size)
        owner = np.repeat(np.arange(n), text_len.reshape(n, per).sum(1) + markers)
        return _Stream(codes, text_start, char_text, char_dest, ids, seg, char_index, y, owner)

    def _words(self, stream: _Stream, kept_before: np.ndarray) -> tuple[np.ndarray, ...]:
        """K-Query: the matched words that get branches, as ``(char start, char end, first trunk
        token, end trunk token, row in the branch table)``, and the branch table."""
        empty = np.zeros(0, dtype=np.int64)
        if self._trie is None:
            return empty, empty, empty, empty, empty, self._branch_table(empty)
        folded = self._lookup(self._fold_table, stream.codes, _FOLD.__getitem__)
        text_len = np.diff(stream.text_start)
        length, subject = self._trie.longest(folded, np.repeat(stream.text_start[1:], text_len))
        start = np.flatnonzero(length)
        taken, reach = [], -1  # greedy left to right: a match is taken unless a taken one covers it
        for s, e in zip(start.tolist(), (start + length[start]).tolist(), strict=True):
            if s >= reach:
                taken.append(s)
                reach = e
        cs = np.asarray(taken, dtype=np.int64)
        ce = cs + length[cs]
        table = self._branch_table(subject[cs])
        row = table["row"]
        first = kept_before[stream.char_dest[cs]]
        end = kept_before[stream.char_dest[ce - 1] + 1]
        good = (row >= 0) & (end > first)
        return cs[good], ce[good], first[good], end[good], row[good], table

    def _chunk(self, texts_a, texts_b, labels, tags) -> tuple[HeteroData, Slices]:
        limit = self.builder.max_length
        n = len(texts_a)
        stream = self._stream(texts_a, texts_b, tags)
        keep = stream.ids >= 0
        kept_before = ragged.ptr(keep)  # trunk tokens before each raw offset
        trunk = np.flatnonzero(keep)
        t_input = stream.owner[trunk]
        t_ptr = ragged.ptr(np.bincount(t_input, minlength=n))
        t_ord = np.arange(trunk.size) - t_ptr[t_input]
        w_cs, w_ce, w_first, w_end, w_sub, table = self._words(stream, kept_before)
        w_input = t_input[w_end - 1]
        w_ptr = ragged.ptr(np.bincount(w_input, minlength=n))
        w_width = table["width"][w_sub]
        w_cum = ragged.ptr(w_width)
        inserted_before = w_cum[:-1] - w_cum[w_ptr[w_input]]
        w_start = (w_end - t_ptr[w_input]) + inserted_before  # local index of the word's first branch token

        # -- trunk tokens move right by the branches of the words that end before them
        shift = w_cum[np.searchsorted(w_end, np.arange(trunk.size), side="right")] - w_cum[w_ptr[t_input]]
        t_local = t_ord + shift
        full = np.bincount(t_input, minlength=n) + np.bincount(w_input, weights=w_width, minlength=n).astype(np.int64)
        size = np.minimum(full, limit)
        out_ptr = ragged.ptr(size)

        # -- values (entities) and their tokens
        v_word, v_j = ragged.ranges(table["values"][w_sub])
        v_len = table["val_len"][table["val_ptr"][w_sub[v_word]] + v_j]
        v_cum = ragged.ptr(v_len)
        v_off = v_cum[:-1] - v_cum[ragged.ptr(table["values"][w_sub])[:-1][v_word]]  # offset within the word's block
        v_start = w_start[v_word] + v_off
        v_keep = v_start < limit
        v_input = w_input[v_word]
        e_count = np.bincount(v_input[v_keep], minlength=n)
        e_ptr = ragged.ptr(e_count)
        e_local = np.cumsum(v_keep) - 1 - e_ptr[v_input]  # rank among kept values of its input
        b_val, b_k = ragged.ranges(v_len)
        b_local = v_start[b_val] + b_k
        b_keep = b_local < limit
        b_val, b_k, b_local = b_val[b_keep], b_k[b_keep], b_local[b_keep]
        b_word = v_word[b_val]
        b_input = w_input[b_word]
        b_src = table["tok_ptr"][w_sub[b_word]] + v_off[b_val] + b_k

        # -- the token table
        total = int(out_ptr[-1])
        cols = np.empty((4, total), dtype=np.int64)  # input_ids, pos, seg, char_index
        t_keep = t_local < limit
        dest = out_ptr[t_input[t_keep]] + t_local[t_keep]
        kept_trunk = trunk[t_keep]
        cols[0, dest] = stream.ids[kept_trunk]
        cols[1, dest] = t_ord[t_keep]
        cols[2, dest] = stream.seg[kept_trunk]
        cols[3, dest] = stream.char_index[kept_trunk]
        branch = np.zeros(total, dtype=bool)
        bdest = out_ptr[b_input] + b_local
        branch[bdest] = True
        cols[0, bdest] = table["tok_ids"][b_src]
        last = w_end[b_word] - 1  # global trunk index of the word's last token
        cols[1, bdest] = t_ord[last] + b_k + 1
        cols[2, bdest] = stream.seg[trunk[last]]
        cols[3, bdest] = -1

        # -- words, entities and edges (local indices)
        w_keep = w_start < limit
        kw = np.flatnonzero(w_keep)
        word_count = np.bincount(w_input[kw], minlength=n)
        tw_word, tw_tok = ragged.ranges(w_end[kw] - w_first[kw])
        tw_tok += w_first[kw][tw_word]
        tw_word = kw[tw_word]
        word_edge = np.stack([t_local[tw_tok], tw_word - w_ptr[w_input[tw_word]]])
        entity_edge = np.stack([b_local, e_local[b_val]])
        kv = np.flatnonzero(v_keep)
        anchor_edge = np.stack([e_local[kv], v_word[kv] - w_ptr[w_input[v_word[kv]]]])
        e_len = np.minimum(v_len[kv], limit - v_start[kv])
        text_offset = stream.text_start[stream.char_text[w_cs[kw]]]
        spans = np.stack([w_cs[kw] - text_offset, w_ce[kw] - text_offset], 1)

        token: dict[str, Any] = {"input_ids": cols[0], "pos": cols[1], "seg": cols[2], "branch": branch,
                                 "char_index": cols[3]}
        if stream.y is not None:
            y = np.full(total, IGNORE_INDEX, dtype=np.int64)
            y[dest] = stream.y[kept_trunk]
            token["y"] = y
        stores: dict[Any, dict[str, Any]] = {"token": token, "word": {"span": spans.reshape(-1, 2)},
                                             "entity": {"length": e_len}}
        counts = {"token": size, "word": word_count, "entity": e_count}
        edges = {WORD_EDGE: (word_edge, w_input[tw_word]), ENTITY_EDGE: (entity_edge, b_input),
                 ANCHOR_EDGE: (anchor_edge, v_input[kv])}
        return _storage(stores, counts, edges, labels, n)

    def _branch_table(self, subjects: np.ndarray) -> dict[str, np.ndarray]:
        """The values of the matched subjects as flat arrays: ``row`` (per match, -1 if the
        subject injects nothing), and per row its token ``width``, value count, value lengths
        and token ids."""
        b = self.builder
        uniq, inverse = np.unique(subjects, return_inverse=True)
        blocks = [b._branches(self._trie.words[s]) for s in uniq.tolist()]
        present = np.fromiter((x is not None for x in blocks), dtype=bool, count=len(blocks))
        blocks = [x for x in blocks if x is not None]
        row_of = np.full(len(uniq), -1, dtype=np.int64)
        row_of[present] = np.arange(len(blocks))
        width = np.fromiter((x.block.shape[1] for x in blocks), dtype=np.int64, count=len(blocks))
        values = np.fromiter((len(x.lengths) for x in blocks), dtype=np.int64, count=len(blocks))
        val_len = np.fromiter(chain.from_iterable(x.lengths for x in blocks), dtype=np.int64, count=int(values.sum()))
        tok_ids = np.concatenate([x.block[0] for x in blocks]) if blocks else np.zeros(0, dtype=np.int64)
        return {"row": row_of[inverse.reshape(-1)], "width": width, "values": values, "val_len": val_len,
                "val_ptr": ragged.ptr(values)[:-1], "tok_ptr": ragged.ptr(width)[:-1], "tok_ids": tok_ids}


def _storage(stores: dict[Any, dict[str, Any]], counts: dict[str, np.ndarray],
             edges: dict[tuple[str, str, str], tuple[np.ndarray, np.ndarray]], labels: Sequence[int] | None,
             n: int) -> tuple[HeteroData, Slices]:
    """``(data, slices)`` in ``InMemoryDataset.collate``'s layout from flat arrays."""
    mapping: dict[Any, dict[str, Any]] = {}
    slices: Slices = {}
    for key in _NODE_TYPES:
        count = counts[key]
        ptr = torch.from_numpy(ragged.ptr(count))
        mapping[key] = {name: torch.from_numpy(np.ascontiguousarray(value)) for name, value in stores[key].items()}
        mapping[key].update(num_nodes=int(count.sum()), _num_nodes=count.tolist())
        slices[key] = dict.fromkeys(stores[key], ptr)
    for key, (index, owner) in edges.items():
        mapping[key] = {"edge_index": torch.from_numpy(np.ascontiguousarray(index, dtype=np.int64))}
        slices[key] = {"edge_index": torch.from_numpy(ragged.ptr(np.bincount(owner, minlength=n)))}
    if labels is not None:
        mapping["_global_store"] = {"y": torch.as_tensor(np.asarray(labels, dtype=np.int64))}
        slices["y"] = torch.arange(n + 1)
    return HeteroData.from_dict(mapping), slices


def concat_collated(parts: Sequence[tuple[HeteroData, Slices]]) -> tuple[HeteroData, Slices]:
    """Join the ``(data, slices)`` of consecutive chunks of one dataset into one pair."""
    if len(parts) == 1:
        return parts[0]

    def join(tensors: list[Tensor], ptrs: list[Tensor], dim: int) -> tuple[Tensor, Tensor]:
        shifts = np.cumsum([int(p[-1]) for p in ptrs[:-1]]).tolist()
        ptr = torch.cat([ptrs[0]] + [p[1:] + shift for p, shift in zip(ptrs[1:], shifts, strict=True)])
        return torch.cat(tensors, dim), ptr

    mapping: dict[Any, dict[str, Any]] = {}
    slices: Slices = {}
    for key, value in parts[0][1].items():
        if not isinstance(value, dict):  # an attribute of the graph itself, such as ``y``
            mapping.setdefault("_global_store", {})[key], slices[key] = join(
                [data[key] for data, _ in parts], [s[key] for _, s in parts], 0)
            continue
        mapping[key], slices[key] = {}, {}
        for name in value:
            dim = -1 if name == "edge_index" else 0
            mapping[key][name], slices[key][name] = join(
                [data[key][name] for data, _ in parts], [s[key][name] for _, s in parts], dim)
        if key in _NODE_TYPES:
            counts = list(chain.from_iterable(data[key]._num_nodes for data, _ in parts))
            mapping[key].update(num_nodes=sum(counts), _num_nodes=counts)
    return HeteroData.from_dict(mapping), slices


__all__ = ["InputError", "TreeCorpusBuilder", "concat_collated"]
