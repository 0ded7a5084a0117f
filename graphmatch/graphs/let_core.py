"""The arrays of LET's lattice pair graph, in NumPy: the core of
:class:`~graphmatch.graphs.let.LatticePairBuilder` (whose module documents the graph), kept free
of torch so that ``graphmatch inspect let`` starts without loading it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from graphmatch.graphs.let_options import ALL_SEGMENTERS, LatticeOptions, old_lattice_keywords, parse_segmenters
from graphmatch.knowledge import HowNetLexicon, SememeVectors
from graphmatch.text import CharTokenizer, Span, lattice
from graphmatch.text.segmenters import installed_segmenters, segmenter_version

#: node types and edge types of every LET pair graph (empty ones included, so batches agree)
NODE_TYPES = ("token", "word", "sense", "sememe")
EDGE_TYPES = (
    ("word", "contains", "token"),
    ("word", "next", "word"),
    ("word", "reach_fwd", "word"),
    ("sense", "of", "word"),
    ("sememe", "of", "sense"),
)
#: what a builder with ``pieces`` adds: the encoder's pieces, and the piece each token sits in
PIECE_EDGE = ("piece", "covers", "token")


def sememe_vocabulary(lexicon: HowNetLexicon | None, vectors: SememeVectors | None) -> list[str]:
    """Sememe names in index order: those with a pretrained vector first (in the vector file's
    order, so row ``i`` of the vectors is sememe ``i``), then the lexicon's remaining sememes."""
    names = list(vectors.names) if vectors is not None else []
    known = set(names)
    if lexicon is not None:
        names += [n for n in lexicon.sememe_names if n not in known]
    return names


class LatticePairCore:
    """Builds the arrays of LET's lattice pair graph for ``(text_a, text_b)`` (NumPy only; the
    graph itself is :class:`~graphmatch.graphs.let.LatticePairBuilder`'s).

    Args:
        tokenizer: character tokenizer over the encoder's vocabulary.
        lexicon: HowNet lexicon (word → senses → sememes); ``None`` builds no senses.
        options: every setting of the lattice (:class:`~graphmatch.graphs.let_options.LatticeOptions`,
            default ``LatticeOptions()``): the ``segmenters`` whose words form the lattice (their
            union keyed by ``(start, end)``); ``max_length``, the most tokens for the pair
            including ``[CLS]`` and two ``[SEP]`` (the longer sentence loses its last characters
            first: BERT's longest-first truncation); ``senses``, sense and sememe nodes (the
            "senses off" ablation when False). The keywords of old (``segmenters=``,
            ``max_length=``, ``senses=``) still work for one release, with a ``DeprecationWarning``.
        missing: a segmenter that is not installed is an error (``"error"``) or left out of
            the lattice with one warning (``"skip"``); :meth:`options` names those used.
        sememe_index: sememe name → vocabulary index; sememes outside it are dropped, and so is
            a sense left without sememes. Default: the lexicon's sememes in sorted order.
        keep_text: store human-readable labels in ``data[node_type].text`` (for inspect/show).
        pieces: the encoder checkpoint's own subword tokenizer (SentencePiece or WordPiece, with
            ``encode_many``): the graph then also holds the pair as the encoder's pieces,
            ``<s> a </s> b </s>`` (``piece`` nodes), and a ``piece covers token`` edge from the
            piece each character sits in, so that the encoder reads pieces and a character takes
            its piece's state. ``None``: the encoder reads the characters themselves.
    """

    def __init__(
        self,
        tokenizer: CharTokenizer,
        lexicon: HowNetLexicon | None = None,
        options: LatticeOptions | None = None,
        *,
        sememe_index: dict[str, int] | None = None,
        keep_text: bool = False,
        missing: str = "error",
        pieces: Any = None,
        **old: Any,
    ) -> None:
        options = old_lattice_keywords(type(self).__name__, options, old)
        #: every setting of the lattice, as given (:meth:`options` is what keys a cache)
        self.lattice_options = options
        max_length, senses = options.max_length, options.senses
        if max_length < 5:
            raise ValueError(f"max_length must leave room for [CLS], [SEP], [SEP] and one character "
                             f"per sentence (>= 5), got {max_length}")
        self.tokenizer = tokenizer
        self.lexicon = lexicon
        self.segmenters = installed_segmenters(options.segmenters, missing)
        if not self.segmenters:
            raise ValueError("none of the segmenters is installed: the lattice would have no words")
        self.max_length = max_length
        self.senses = bool(senses) and lexicon is not None
        if sememe_index is None and lexicon is not None:
            sememe_index = {name: i for i, name in enumerate(lexicon.sememe_names)}
        self.sememe_index = sememe_index or {}
        self.keep_text = keep_text
        self.pieces = pieces
        self._sememe_names = {i: n for n, i in self.sememe_index.items()} if keep_text else {}

    def options(self) -> dict[str, Any]:
        """Everything that changes the graphs (used to key processed caches)."""
        options = {
            "builder": "let-lattice-pair/1",
            "segmenters": self.segmenter_versions(),
            "max_length": self.max_length,
            "senses": self.senses,
            "vocab_size": self.tokenizer.vocab_size,
            "normalize": self.tokenizer.normalize,
            "lexicon_words": len(self.lexicon) if self.lexicon is not None else 0,
            "sememes": len(self.sememe_index),
            "keep_text": self.keep_text,
        }
        if self.pieces is not None:  # only then: the character graphs keep their cache keys
            options["pieces"] = {"tokenizer": type(self.pieces).__name__, "vocab_size": len(self.pieces.vocab)}
        return options

    def segmenter_versions(self) -> dict[str, str | None]:
        """The segmenters the lattice is made of, with their libraries' versions."""
        return {name: segmenter_version(name) for name in self.segmenters}

    # ------------------------------------------------------------------ build
    def check(self, text_a: str, text_b: str, label: int | None = None) -> None:
        """Raise :class:`ValueError` for an empty text or a label other than 0 / 1."""
        for name, text in (("text_a", text_a), ("text_b", text_b)):
            if not isinstance(text, str) or not text.strip():
                raise ValueError(f"{name} is empty: LET matches two non-empty sentences")
        if label is not None and label not in (0, 1):
            raise ValueError(f"label must be 0 or 1, got {label!r}")

    def arrays(self, text_a: str, text_b: str, label: int | None = None) -> dict[Any, dict[str, Any]]:
        """The pair graph's stores as NumPy arrays (``int64``; ``text`` as lists), keyed by node
        type, edge type and ``"_global_store"`` (the label), in the layout of the module
        documentation: :class:`~graphmatch.graphs.let.LatticePairBuilder` turns them into a
        graph."""
        self.check(text_a, text_b, label)
        enc_a, enc_b = self.tokenizer.encode(text_a), self.tokenizer.encode(text_b)
        na, nb = _truncate(len(enc_a.ids), len(enc_b.ids), self.max_length - 3)
        tok = self.tokenizer
        ids = [tok.cls_id, *enc_a.ids[:na], tok.sep_id, *enc_b.ids[:nb], tok.sep_id]
        sent = [0] * (na + 2) + [1] * (nb + 1)
        char_index = [-1, *enc_a.char_index[:na], -1, *enc_b.char_index[:nb], -1]

        words: list[Span] = []
        word_sent: list[int] = []
        word_tokens: list[tuple[int, int]] = []  # [first, last + 1) token node of each word
        for s, (text, enc, n, first) in enumerate(((text_a, enc_a, na, 1), (text_b, enc_b, nb, na + 2))):
            cut = _end(enc, n)
            token_of = {c: first + k for k, c in enumerate(enc.char_index[:n])}
            for span in lattice(text[:cut], self.segmenters):
                inside = [token_of[c] for c in range(span.start, span.end) if c in token_of]
                if inside:
                    words.append(span)
                    word_sent.append(s)
                    word_tokens.append((inside[0], inside[-1] + 1))

        nxt, reach = _lattice_edges(word_tokens, word_sent)
        senses, sense_text = self._senses(words)
        sense_word = [w for w, _ in senses]
        occ = [(k, sid) for k, (_, ids_) in enumerate(senses) for sid in ids_]
        stores: dict[Any, dict[str, Any]] = {
            "token": {"input_ids": _long(ids), "sent": _long(sent), "char_index": _long(char_index),
                      "num_nodes": len(ids)},
            "word": {"span": _long([[w.start, w.end] for w in words]).reshape(len(words), 2),
                     "sent": _long(word_sent), "num_nodes": len(words)},
            ("word", "contains", "token"): {"edge_index": _edges(
                (i, t) for i, (s, e) in enumerate(word_tokens) for t in range(s, e))},
            ("word", "next", "word"): {"edge_index": _edges(nxt)},
            ("word", "reach_fwd", "word"): {"edge_index": reach[::-1].copy()},
            "sense": {"sent": _long([word_sent[w] for w in sense_word]), "num_nodes": len(senses)},
            ("sense", "of", "word"): {"edge_index": _edges(enumerate(sense_word))},
            "sememe": {"sememe_id": _long([sid for _, sid in occ]),
                       "sent": _long([word_sent[sense_word[k]] for k, _ in occ]), "num_nodes": len(occ)},
            ("sememe", "of", "sense"): {"edge_index": _edges((m, k) for m, (k, _) in enumerate(occ))},
        }
        if self.pieces is not None:
            stores.update(self._piece_stores((text_a[:_end(enc_a, na)], text_b[:_end(enc_b, nb)]),
                                             (enc_a.char_index[:na], enc_b.char_index[:nb])))
        if label is not None:
            stores["_global_store"] = {"y": _long([label])}
        if self.keep_text:
            stores["token"]["text"] = [tok.id_to_token(ids[0]), *enc_a.tokens[:na], tok.id_to_token(tok.sep_id),
                                       *enc_b.tokens[:nb], tok.id_to_token(tok.sep_id)]
            stores["word"]["text"] = [w.word for w in words]
            stores["sense"]["text"] = sense_text
            stores["sememe"]["text"] = [self._sememe_names[sid] for _, sid in occ]
        return stores

    def _piece_stores(self, texts: tuple[str, str], chars: tuple[Sequence[int], Sequence[int]]) -> dict[Any, dict]:
        """The ``piece`` nodes (``input_ids``, ``sent``; ``text`` with ``keep_text``) of the pair
        ``<s> a </s> b </s>`` as the encoder's tokenizer cuts the two (already shortened) texts, and
        the ``piece covers token`` edges: every token ``[CLS] a [SEP] b [SEP]`` from the piece it
        sits in (a character covered by no piece, such as a character the tokenizer drops, takes
        the piece before it)."""
        tok = self.pieces
        cut = tok.encode_many(list(texts))
        bounds = cut.piece_ptr.tolist()
        ids: list[int] = [tok.cls_id]
        sent: list[int] = [0]
        text: list[str] = [tok.id_to_token(tok.cls_id)]
        covers: list[int] = [0]  # the piece of each token, in token order
        for s, offsets in enumerate(chars):
            first = len(ids)
            lo, hi = bounds[s], bounds[s + 1]
            owner = np.full(len(texts[s]) + 1, -1, dtype=np.int64)
            for j in range(lo, hi):  # a later piece wins where two cover a character (a lone ▁ first)
                owner[cut.start[j]:cut.end[j]] = first + j - lo
            owner = np.maximum.accumulate(owner)  # uncovered: the piece before (pieces are in order)
            owner[owner < 0] = first  # before the first piece: that piece (no piece at all: the </s>)
            ids += cut.ids[lo:hi].tolist() + [tok.sep_id]
            text += list(cut.tokens[lo:hi]) + [tok.id_to_token(tok.sep_id)]
            sent += [s] * (hi - lo + 1)
            covers += owner[np.asarray(offsets, dtype=np.int64)].tolist() + [len(ids) - 1]
        piece: dict[str, Any] = {"input_ids": _long(ids), "sent": _long(sent), "num_nodes": len(ids)}
        if self.keep_text:
            piece["text"] = text
        return {"piece": piece, PIECE_EDGE: {"edge_index": np.stack([_long(covers), np.arange(len(covers))])}}

    def _senses(self, words: Sequence[Span]) -> tuple[list[tuple[int, list[int]]], list[str]]:
        """``[(word index, [sememe ids])]`` for every sense with at least one known sememe."""
        out: list[tuple[int, list[int]]] = []
        text: list[str] = []
        if not self.senses:
            return out, text
        index = self.sememe_index
        for w, span in enumerate(words):
            seen: set[tuple[int, ...]] = set()
            for sense in self.lexicon.senses(span.word):
                ids = tuple(dict.fromkeys(index[s] for s in sense if s in index))
                if ids and ids not in seen:
                    seen.add(ids)
                    out.append((w, list(ids)))
                    text.append("|".join(s for s in sense if s in index))
        return out, text


def _end(enc: Any, n: int) -> int:
    """One past the last character of a text's first ``n`` tokens."""
    return enc.char_index[n - 1] + 1


def _truncate(na: int, nb: int, budget: int) -> tuple[int, int]:
    """Longest-first truncation of two lengths to ``budget`` (ties cut the second)."""
    if na + nb <= budget:
        return na, nb
    half = budget // 2
    if na <= half:
        return na, budget - na
    if nb <= half:
        return budget - nb, nb
    return budget - half, half


def _long(values: Any) -> np.ndarray:
    return np.asarray(values, dtype=np.int64)


def _edges(pairs: Iterable[tuple[int, int]]) -> np.ndarray:
    """``[2, E]`` int64 from ``(source, destination)`` pairs."""
    return _long(list(pairs)).reshape(-1, 2).T.copy()


def _lattice_edges(word_tokens: Sequence[tuple[int, int]],
                   word_sent: Sequence[int]) -> tuple[list[tuple[int, int]], np.ndarray]:
    """Lattice ``next`` pairs and the reachability pairs ``[2, R]`` (i, j): j ∈ N⁺(i), i ∈ N⁻(j).

    Words are processed per sentence from the last start backwards: a word reaches itself and
    everything its successors reach (the lattice is a DAG ordered by start offset).
    """
    W = len(word_tokens)
    starts: dict[tuple[int, int], list[int]] = {}
    for i, (s, _) in enumerate(word_tokens):
        starts.setdefault((word_sent[i], s), []).append(i)
    nxt = [(i, j) for i, (_, e) in enumerate(word_tokens) for j in starts.get((word_sent[i], e), ())]
    reach = np.eye(W, dtype=bool)
    succ: list[list[int]] = [[] for _ in range(W)]
    for i, j in nxt:
        succ[i].append(j)
    for i in sorted(range(W), key=lambda k: -word_tokens[k][0]):
        if succ[i]:
            reach[i] |= reach[succ[i]].any(axis=0)
    rows, cols = np.nonzero(reach)
    return nxt, np.stack([rows, cols]).astype(np.int64)


__all__ = ["ALL_SEGMENTERS", "EDGE_TYPES", "NODE_TYPES", "PIECE_EDGE", "LatticePairCore", "parse_segmenters",
           "sememe_vocabulary"]
