"""How a :class:`~graphmatch.graphs.kbert.core.TreeCore` finds the words it queries and its trunk
tokens (K-Query, steps 2 and 3): one :class:`WordFinder` per way, chosen by :func:`word_finder`."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import chain
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from graphmatch.graphs.kbert.folding import fold
from graphmatch.graphs.kbert.records import (
    _TAG,
    SPECIAL_TAGS,
    _Layout,
    _Spans,
    _Trunk,
    _Values,
)
from graphmatch.graphs.piece_query import LemmaMemo, word_runs
from graphmatch.knowledge import Lemmatizer
from graphmatch.knowledge.strings import take
from graphmatch.text import Pieces, SentencePieceTokenizer, WordPieceTokenizer, get_segmenter
from graphmatch.utils.ragged_np import ptr

if TYPE_CHECKING:
    from graphmatch.graphs.kbert.core import TreeCore


class WordFinder:
    """How a :class:`TreeCore` finds the words it queries and the tokens of its trunk (steps 2 and 3)
    and tokenizes the values it injects: one subclass per way, chosen once from the tokenizer, the
    mode and the query (:func:`word_finder`). A new tokenizer is a new subclass in :data:`FINDERS`.

    Class attributes say what a way is and what it allows: the ``tokenizer`` type it reads (``None``:
    any character vocabulary), its ``mode`` and ``query``, the ``tokenization`` a dataset names it
    by, whether NER ``tags`` (one per character) and :meth:`TreeCore.build_parts` work with it,
    whether vocabulary lookups are ``exact``, whether the one-input fast path builds its trees
    (``plain``, :mod:`~graphmatch.graphs.kbert.one`), a branch ``selection`` and noun readings
    (``nouns``) apply.
    """

    tokenizer: ClassVar[type | None] = None
    mode: ClassVar[str] = "default"
    query: ClassVar[str] = "trie"
    tokenization: ClassVar[str] = "chars"
    tags: ClassVar[bool] = True
    parts: ClassVar[bool] = True
    exact: ClassVar[bool] = False
    plain: ClassVar[bool] = False
    selection: ClassVar[bool] = True
    nouns: ClassVar[bool] = False

    def __init__(self, core: TreeCore):
        self.core = core

    @classmethod
    def refusal(cls, mode: str, query: str) -> str:
        """Why no way of this tokenizer has ``mode`` and ``query`` (one line)."""
        return f"{cls.__name__} has mode={cls.mode!r}, query={cls.query!r} only"

    def read(self, layout: _Layout, pair: bool) -> tuple[_Spans, _Spans, _Trunk]:
        """The tags, the K-Query matches and the trunk of a written-out layout."""
        raise NotImplementedError

    def trie_words(self, subjects: Iterable[str]) -> Iterable[str]:
        """The words of the K-Query trie: the KG subjects."""
        return subjects

    def values(self, subject: str) -> _Values | None:
        """The values injected on ``subject``, as characters of the vocabulary: whitespace is
        dropped (the reference keeps every code point); ``None`` if none."""
        core = self.core
        texts, chars, objects = [], [], []
        found = (zip(core.kg.values(subject, core._value_limit, core.predicate),
                     core.kg.values(subject, core._value_limit, False), strict=True) if subject in core.kg else ())
        for value, obj in found:
            kept = list(value) if self.exact else [ch for ch in value if not ch.isspace()]
            if kept:
                texts.append(value)
                chars.append(kept)
                objects.append(obj)
        if not texts:
            return None
        flat = list(chain.from_iterable(chars))
        return _Values(np.fromiter(map(len, chars), dtype=np.int64, count=len(chars)),
                       np.fromiter(map(core._token_id, flat), dtype=np.int64, count=len(flat)), texts, flat, objects)


def _no_spans() -> _Spans:
    return _Spans(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), [])


def _trie_matches(core: TreeCore, layout: _Layout) -> _Spans:
    """The longest KG subject at every offset of each folded text, taken greedily left to right."""
    if not core.inject:
        return _no_spans()
    trie = core._flat_trie()
    length, word = trie.longest(core._folded(layout.codes), layout.char_stop)
    length[layout.char_kind == _TAG] = 0
    start = length.nonzero()[0]
    taken = start[_greedy(start, start + length[start])]
    return _Spans(taken, taken + length[taken], take(trie.words, word[taken].tolist()))


class CharTrie(WordFinder):
    """Characters, K-Query by the longest KG subject at every offset of the folded text, within
    each text, taken greedily left to right; the tags are the added ``[CLS]``/``[SEP]``."""

    plain = True

    @classmethod
    def refusal(cls, mode: str, query: str) -> str:
        return "mode='reference' queries by the reference's own trie scan; use query='trie'"

    def read(self, layout: _Layout, pair: bool) -> tuple[_Spans, _Spans, _Trunk]:
        specials = self.core._added_tags(layout)
        return specials, self.matches(layout), self.core._trunk(layout, specials)

    def matches(self, layout: _Layout) -> _Spans:
        """The KG subjects found in each text (folded)."""
        return _trie_matches(self.core, layout)


class CharWords(CharTrie):
    """Characters, K-Query by the words of a segmenter (``TreeCore.segmenter``, run on each folded
    text) that are KG subjects."""

    query = "words"
    plain = False

    def matches(self, layout: _Layout) -> _Spans:
        core = self.core
        if not core.inject:
            return _no_spans()
        segment = get_segmenter(core.segmenter).segment
        start, end, subject = [], [], []
        part = layout.text_parts
        for offset, stop in zip(layout.part_start[part].tolist(), layout.part_start[part + 1].tolist(), strict=True):
            for span in core.kg.query(segment(fold(layout.string[offset:stop]))):
                start.append(offset + span.start)
                end.append(offset + span.end)
                subject.append(span.word)
        return _Spans(np.asarray(start, dtype=np.int64), np.asarray(end, dtype=np.int64), subject)


class ReferenceChars(WordFinder):
    """K-BERT's own knowledge layer, quirks included (``mode="reference"``): pkuseg's forced words
    over the stripped subjects and :data:`SPECIAL_TAGS` in each whitespace-free piece of the whole
    string, exact vocabulary ids, segments counted by the ``[SEP]`` tokens before."""

    mode = "reference"
    exact = True
    plain = True
    parts = False
    selection = False

    def read(self, layout: _Layout, pair: bool) -> tuple[_Spans, _Spans, _Trunk]:
        specials, matches = self.forced_words(layout)
        return specials, matches, self.core._trunk(layout, specials, sep_segments=pair)

    def trie_words(self, subjects: Iterable[str]) -> Iterable[str]:
        """The stripped subjects and the special tags (pkuseg's user dictionary)."""
        return chain((s.strip() for s in subjects), SPECIAL_TAGS)

    def forced_words(self, layout: _Layout) -> tuple[_Spans, _Spans]:
        """pkuseg's forced words over the subjects and the special tags, in each whitespace-free
        piece of the whole string; the special tags among them are the tags."""
        core = self.core
        space = core._char_ids(layout.codes) < 0
        bounds = np.sort(np.concatenate((space.nonzero()[0], layout.input_start[1:])))
        stop = bounds[bounds.searchsorted(np.arange(len(layout.codes)), side="right")]  # end of each piece
        length, _, reach = core._flat_trie().walk(layout.codes, stop)
        start = length.nonzero()[0]
        end = np.where(start + reach[start] == stop[start], start + length[start], start + reach[start])
        taken = _greedy(start, end)
        start, end = start[taken], end[taken]
        words = [layout.string[s:e] for s, e in zip(start.tolist(), end.tolist(), strict=True)]
        is_tag = np.fromiter((w in SPECIAL_TAGS for w in words), dtype=bool, count=len(words))
        specials = _Spans(start[is_tag], end[is_tag], [w for w in words if w in SPECIAL_TAGS])
        return specials, _Spans(start, end, words)


class _Pieces(WordFinder):
    """What the two subword ways share: no NER tags, values tokenized by the tokenizer."""

    tags = False

    def piece_values(self, subject: str, joiner: str, prefix: bool) -> _Values | None:
        """The values of ``subject`` (predicate and object joined by ``joiner``) as pieces."""
        core = self.core
        objects = core.kg.values(subject, core._value_limit, False)
        texts = core.kg.values(subject, core._value_limit, core.predicate, joiner=joiner)
        pieces = core.tokenizer.encode_many(texts, **({} if prefix else {"prefix": False}))
        lengths = np.diff(pieces.piece_ptr)
        if not lengths.any():
            return None
        kept = lengths > 0
        return _Values(lengths[kept], pieces.ids, [t for t, k in zip(texts, kept.tolist(), strict=True) if k],
                       pieces.tokens, [o for o, k in zip(objects, kept.tolist(), strict=True) if k])


class WordPieceWords(_Pieces):
    """An English checkpoint's word pieces (:class:`~graphmatch.text.WordPieceTokenizer`): K-Query
    over the words of its basic tokenizer, lower-cased, at every word the longest run of up to
    ``max_words`` words whose lemma is a KG subject; the trunk is the pieces and the added tags."""

    tokenizer = WordPieceTokenizer
    query = "words"
    tokenization = "wordpiece"
    nouns = True

    def __init__(self, core: TreeCore):
        super().__init__(core)
        self._lemmas = LemmaMemo(Lemmatizer(core.kg.subjects)) if core.kg is not None else None  # text -> subject

    @classmethod
    def refusal(cls, mode: str, query: str) -> str:
        if mode == "reference":
            return "mode='reference' is K-BERT's character layer; word pieces have the default mode only"
        return "a word-piece tokenizer queries the KG over its words: query='words'"

    def read(self, layout: _Layout, pair: bool) -> tuple[_Spans, _Spans, _Trunk]:
        core = self.core
        part = layout.text_parts
        texts = [layout.string[lo:hi] for lo, hi in zip(layout.part_start[part].tolist(),
                                                         layout.part_start[part + 1].tolist(), strict=True)]
        pieces = core.tokenizer.encode_many(texts)
        specials = core._added_tags(layout)
        return specials, self.matches(layout, part, pieces), core._piece_trunk(layout, specials,
                                                                               layout.part_start[part], pieces)

    def values(self, subject: str) -> _Values | None:
        """The values (predicate, space, object) as pieces."""
        return self.piece_values(subject, " ", True)

    def matches(self, layout: _Layout, part: np.ndarray, pieces: Pieces) -> _Spans:
        """At every word the longest run of at most ``max_words`` words of its text whose lemma
        is a KG subject, taken greedily left to right. A stop word neither makes a run alone nor
        starts or ends one, unless glued to the next (previous) word of the run without a space
        (``the city`` and ``looking for`` are refused, ``a-list`` and ``3-d`` are not)."""
        core = self.core
        if not core.inject:
            return _no_spans()
        word_part = np.arange(len(part)).repeat(np.diff(pieces.text_words))
        offset = layout.part_start[part][word_part]
        found_start, found_end, subjects = word_runs(
            layout.string, offset + pieces.word_start, offset + pieces.word_end, pieces.text_words[word_part],
            pieces.text_words[word_part + 1] - 1, self._lemmas, core.stop_words, core.max_words, core.noun_readings)
        taken = _greedy(found_start, found_end)
        return _Spans(found_start[taken], found_end[taken], [subjects[t] for t in taken.tolist()])


class SentencePieceTrie(_Pieces):
    """A SentencePiece checkpoint's pieces (:class:`~graphmatch.text.SentencePieceTokenizer`, e5):
    K-Query by the trie over characters (whole words only for ASCII letters and digits), each text
    tokenized so that every match starts and ends on a piece boundary."""

    tokenizer = SentencePieceTokenizer
    tokenization = "sentencepiece"

    def __init__(self, core: TreeCore):
        super().__init__(core)
        #: K-Query matches seen and those that cut through a piece (re-tokenised)
        self.cut_counts = [0, 0]

    @classmethod
    def refusal(cls, mode: str, query: str) -> str:
        return ("a SentencePiece tokenizer queries the KG by the trie over characters in the default mode "
                "(query='trie', mode='default')")

    def read(self, layout: _Layout, pair: bool) -> tuple[_Spans, _Spans, _Trunk]:
        core = self.core
        specials, matches = core._added_tags(layout), self.whole_words(layout, _trie_matches(core, layout))
        return specials, matches, core._piece_trunk(layout, specials, *self.cut_pieces(layout, matches))

    def values(self, subject: str) -> _Values | None:
        """Predicate and object glued, as the continuation of the word (no ``▁``)."""
        return self.piece_values(subject, "", False)

    @staticmethod
    def whole_words(layout: _Layout, matches: _Spans) -> _Spans:
        """The matches that do not start or end inside a run of ASCII letters and digits (``cat``
        is not matched in ``category``; Chinese is matched anywhere)."""
        if not len(matches.start):
            return matches
        codes = np.append(layout.codes, 0)
        word = ((codes >= 48) & (codes <= 57)) | ((codes | 32) >= 97) & ((codes | 32) <= 122)
        inside = (word[matches.start] & word[matches.start - 1] & (matches.start > 0)) | (
            word[matches.end - 1] & word[matches.end])
        index = (~inside).nonzero()[0]
        return _Spans(matches.start[index], matches.end[index], [matches.text[i] for i in index.tolist()])

    def cut_pieces(self, layout: _Layout, matches: _Spans) -> tuple[np.ndarray, Pieces]:
        """The pieces of every text such that every match starts and ends on a
        piece boundary. A text is tokenised whole; where a match starts or ends inside a piece
        (``进一步`` in ``进一步加强``), the text is cut there and each part tokenised on its own, the
        parts after the first as continuations (no ``▁``). Returns the layout offset of every
        tokenised part and the parts' pieces."""
        part = layout.text_parts
        lo, hi = layout.part_start[part], layout.part_start[part + 1]
        texts = [layout.string[a:b] for a, b in zip(lo.tolist(), hi.tolist(), strict=True)]
        pieces = self.core.tokenizer.encode_many(texts)
        bound = np.zeros(len(layout.codes) + 1, dtype=bool)
        bound[lo.repeat(np.diff(pieces.piece_ptr)) + pieces.start] = True
        bound[hi] = True
        space = self.core._space(layout.codes).astype(bool)
        bound[:-1] |= space
        bound[1:] |= space
        cuts = np.concatenate((matches.start, matches.end))
        cuts = np.unique(cuts[~bound[cuts]])
        self.cut_counts[0] += len(matches.start)
        self.cut_counts[1] += int((~bound[matches.start] | ~bound[matches.end]).sum())
        if not len(cuts):
            return lo, pieces
        seg_lo = np.sort(np.concatenate((lo, cuts)))
        seg_text = lo.searchsorted(seg_lo, side="right") - 1
        seg_hi = np.append(seg_lo[1:], 0)
        last = np.append(seg_text[1:] != seg_text[:-1], True)
        seg_hi[last] = hi[seg_text[last]]
        first = seg_lo == lo[seg_text]
        parts = [layout.string[a:b] for a, b in zip(seg_lo.tolist(), seg_hi.tolist(), strict=True)]
        out = [(np.flatnonzero(flag), self.core.tokenizer.encode_many([parts[i] for i in np.flatnonzero(flag).tolist()],
                                                                 prefix=bool(prefix)))
               for prefix, flag in ((True, first), (False, ~first))]
        piece_seg = np.concatenate([which.repeat(np.diff(p.piece_ptr)) for which, p in out])
        order = np.argsort(piece_seg, kind="stable")
        ids, start, end = (np.concatenate([getattr(p, f) for _, p in out])[order] for f in ("ids", "start", "end"))
        tokens = np.array([t for _, p in out for t in p.tokens] or [""], dtype=object)[order].tolist()
        counts = np.bincount(piece_seg, minlength=len(seg_lo))
        return seg_lo, Pieces(ids, start, end, tokens, ptr(counts), start, end, np.arange(len(ids) + 1), ptr(counts))


#: every way of finding words, the default of each tokenizer first
FINDERS: tuple[type[WordFinder], ...] = (WordPieceWords, SentencePieceTrie, CharTrie, CharWords, ReferenceChars)


def word_finder(tokenizer: Any, mode: str = "default", query: str | None = None) -> type[WordFinder]:
    """The way of finding words of ``tokenizer`` with ``mode`` and ``query`` (``None``: the
    tokenizer's own), or a one-line :class:`ValueError` naming what does not go together."""
    if mode not in ("default", "reference"):
        raise ValueError(f"mode must be 'default' or 'reference', got {mode!r}")
    if query not in (None, "trie", "words"):
        raise ValueError(f"query must be 'trie' or 'words', got {query!r}")
    kind = next((f.tokenizer for f in FINDERS if f.tokenizer is not None and isinstance(tokenizer, f.tokenizer)), None)
    ways = [f for f in FINDERS if f.tokenizer is kind]
    for finder in ways:
        if finder.mode == mode and query in (None, finder.query):
            return finder
    raise ValueError(ways[0].refusal(mode, query))



def _greedy(start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Which of the spans ``[start, end)`` (sorted by start) a left-to-right scan takes: each one
    whose start no span taken before covers."""
    taken, reach = [], -1
    for i, (s, e) in enumerate(zip(start.tolist(), end.tolist(), strict=True)):
        if s >= reach:
            taken.append(i)
            reach = e
    return np.asarray(taken, dtype=np.int64)


__all__ = ["FINDERS", "CharTrie", "CharWords", "ReferenceChars", "SentencePieceTrie", "WordFinder", "WordPieceWords",
           "word_finder"]
