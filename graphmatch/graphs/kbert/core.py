r"""K-Query, K-Inject and the cut of K-BERT sentence trees, for any number of inputs at once.

This is the one implementation behind :class:`~graphmatch.graphs.kbert.SentenceTreeBuilder`
(one input is a corpus of one) and
:class:`~graphmatch.graphs.kbert.TreeCorpusBuilder` (a whole corpus). Each step is an
array operation over all inputs together. Python-level work is per input only to join the
strings, per match candidate for the greedy left-to-right choice, per matched word for its
(memoised) values and, with ``query="words"``, per text the segmenter reads. Lookups by code
point (vocabulary ids, :func:`fold`) go through tables over all of Unicode that each builder
fills as it meets new characters.

1. **Layout.** Every input is written out as one string, ``[CLS]a`` or
   ``[CLS]a[SEP]b[SEP]`` (``[CLS]`` only with ``add_cls``), or with :meth:`TreeCore.build_parts`
   as any sequence of texts and tags (a relation sentence: ``[CLS]``, its text cut at the entity
   boundaries with the markers between, ``[SEP]``), and all of them are laid end to
   end as one array of code points. Each character knows its input, its offset in its own
   text (-1 inside an added tag) and its segment (0 up to the first ``[SEP]`` included, 1 for
   text b and the final ``[SEP]``).
2. **K-Query** gives character spans: the *words* to look up in the KG and the *tags*, spans
   that become a single token. Each way below is a :class:`WordFinder` (:data:`FINDERS`:
   :class:`CharTrie`, :class:`CharWords`, :class:`WordPieceWords`, :class:`SentencePieceTrie`,
   :class:`ReferenceChars`), chosen once from the tokenizer, the mode and the query
   (:func:`word_finder`); it does steps 2 and 3 and tokenizes the values of step 4.

   * ``mode="default"``, ``query="trie"``: the longest KG subject at every offset of the
     folded text (:func:`fold`), within each text, taken greedily left to right; the tags are
     the added ``[CLS]``/``[SEP]``.
   * ``query="words"``: the words of a segmenter that are KG subjects, text by text.
   * a :class:`~graphmatch.text.WordPieceTokenizer` (*word-piece mode*, English): the words of
     its basic tokenizer, lower-cased; at every word the longest run of up to ``max_words``
     words whose text (spaces collapsed) WordNet's morphology
     (:class:`~graphmatch.knowledge.Lemmatizer`) maps to a KG subject (``ice creams`` →
     ``ice cream``), taken greedily left to right. A word of ``stop_words``
     (:data:`STOP_WORDS`) never makes a run alone, nor starts or ends one unless glued to
     its neighbour in the run (``a-list``): function words get no branch. The tags are the
     added ``[CLS]``/``[SEP]``.
   * :meth:`TreeCore.build_parts` sets the K-Query of each text part (:data:`QUERIES`):
     every match, only the match that ends where the part's text ends (its head word), or none.
   * ``mode="reference"``: pkuseg's forced-word scan of each whitespace-free piece of the
     whole string over the stripped subjects and :data:`SPECIAL_TAGS`. From offset
     :math:`i` the trie walk stops after :math:`r_i` characters; if it passed a complete
     word, the forced word is :math:`[i, i + r_i)` (everything walked), or, when the walk
     ran to the end of the piece, :math:`[i, i + \ell_i)` with :math:`\ell_i` the longest
     word; taken greedily left to right. The forced words that are special tags are the
     tags; token ids are exact vocabulary lookups.
3. **Trunk.** The characters that are not whitespace, each tag one token; in word-piece mode
   the word pieces of each text and the tags, in the order of their first characters. Either
   way a trunk token starts at a character of the layout, and a queried span covers the trunk
   tokens that start inside it. The :math:`o`-th trunk token of an input has position
   :math:`o`. ``seg`` is the character's segment (the reference counts the ``[SEP]`` tokens
   before it instead, capped at 1).
4. **K-Inject.** A word :math:`w` that is a subject with values covers trunk tokens
   :math:`[f_w, e_w)` and carries :math:`n_w` branch tokens, the characters of its first
   ``max_entities`` values. Within an input

   .. math::
       \text{trunk token } o &\mapsto o + \textstyle\sum_{w:\, e_w \le o} n_w,
           \qquad \text{position } o \\
       \text{branch token } k \text{ of } w &\mapsto e_w + \textstyle\sum_{w' < w} n_{w'}
           + k, \qquad \text{position } e_w - 1 + k'

   with :math:`k` counted from 0 over the word's branch tokens and :math:`k'` from 1 within
   its value; a branch token takes the segment of its word's last token. With ``hang_after``
   tags, :math:`e_w` in the index (not in the position) moves past such tags right after the
   word: a branch follows a closing entity marker. A branch token is a
   character of the value, or in word-piece mode a piece of the value tokenized as a text
   (predicate, a space, object: ``is a institution`` → ``is a institution``).
5. **Cut.** Every token at index :math:`\ge` ``max_length`` goes. A value (entity) stays while
   its first token does, with the tokens it kept; a word stays while its first branch token
   does (its trunk tokens come before, so they stay too). Positions and the cut are the functions of
   :mod:`~graphmatch.graphs.kbert.rules`, which the one-input path calls too.
6. **Tables.** Every kept token's attributes at its index (above) in its input's rows of one
   token table; the edges, local to each input: ``(token, in, word)`` from every kept word's
   trunk tokens, ``(token, in, entity)`` from every kept branch token, ``(entity, on, word)``
   from every kept value.

The result, :class:`Trees`, is every attribute of all inputs concatenated with the count of
each node and edge type per input: one graph for a single input, the
:class:`~torch_geometric.data.InMemoryDataset` storage for a corpus.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import chain, repeat
from typing import Any

import numpy as np

from graphmatch.graphs.branch_selection import BranchSelection
from graphmatch.graphs.kbert import rules
from graphmatch.graphs.kbert.finders import (
    WordFinder,
    word_finder,
)
from graphmatch.graphs.kbert.folding import STOP_WORDS, _CodeTable, _fold_char
from graphmatch.graphs.kbert.knowledge_text import KNOWLEDGE_AS, text_trees
from graphmatch.graphs.kbert.layout import _ordinals, _template, _trunk_text, _written
from graphmatch.graphs.kbert.options import TreeOptions, old_tree_keywords
from graphmatch.graphs.kbert.records import (
    _ALL,
    _HEAD,
    _TAG,
    _TEXT_A,
    _TEXT_B,
    ANCHOR_EDGE,
    CLS,
    ENTITY_EDGE,
    IGNORE_INDEX,
    QUERIES,
    SEP,
    SPECIAL_TAGS,
    WORD_EDGE,
    Part,
    Trees,
    _Branches,
    _Kept,
    _Layout,
    _Placed,
    _Spans,
    _Trunk,
    _Values,
    _Words,
)
from graphmatch.knowledge import FlatTrie, KnowledgeGraph
from graphmatch.knowledge.noun_reading import NounReadings
from graphmatch.text import CharTokenizer, Pieces, SentencePieceTokenizer, WordPieceTokenizer
from graphmatch.utils.ragged_np import ptr, ranges


class TreeCore:
    r"""Builds K-BERT sentence trees, one or many at once (see the module documentation).

    Args:
        kg (KnowledgeGraph, optional): the knowledge graph; ``None`` gives plain BERT input.
        tokenizer (CharTokenizer, WordPieceTokenizer or SentencePieceTokenizer): the character
            vocabulary, or the pieces of a checkpoint (the tree's tokenization is the tokenizer's).
        options (TreeOptions, optional): every setting of the tree
            (:class:`~graphmatch.graphs.kbert.TreeOptions`: ``max_length``, ``max_entities``, the
            ``kind``'s ``[CLS]`` and predicate rule, ``mode``, ``query``, ``segmenter``,
            ``stop_words``, ``max_words``, ``hang_after``, ``noun_reading``, ``text_prefix``,
            ``knowledge_as``). (default: ``TreeOptions()``)
        labels (Sequence[str], optional): the NER tags, in id order; needed to pass ``tags``.
        keep_text (bool, optional): also give the ``text`` of every node (for inspection).
            (default: :obj:`False`)
        selection (BranchSelection, optional): knowledge that fits the sentence: every value of
            a matched word is a candidate, scored against its input's texts; a word keeps its
            ``max_entities`` best (:mod:`~graphmatch.graphs.branch_selection`). Default mode only.
            (default: :obj:`None`, K-BERT's first ``max_entities`` in file order)

    The builder's keywords of old (``max_length=``, ``add_cls=``, ``tag_to_id=``, ...) still work
    for one release, with a ``DeprecationWarning`` (:func:`old_tree_keywords`).

    What the options mean here: the tree is built in full, then cut to ``max_length`` tokens; a
    word gets its first ``max_entities`` values in file order; a value is predicate + object
    glued (K-BERT's classification input) or the object alone (its NER input, which has no
    ``[CLS]``); ``mode="reference"`` reproduces the official knowledge layer, quirks included
    (``docs/kbert_reference.md``); K-Query by a greedy longest-match ``"trie"`` scan over the KG
    subjects, or by the ``"words"`` of the segmenter (word pieces query the tokenizer's words).
    Word pieces only: ``stop_words`` are never a match alone, nor start or end one standing apart,
    a match is at most ``max_words`` words, and with ``noun_reading`` a single word matches only
    where it reads as a noun (:class:`~graphmatch.knowledge.noun_reading.NounReadings`). A
    ``hang_after`` tag of :meth:`build_parts` that follows a span's last token is skipped by its
    branch (whose soft positions still continue from the span's end). ``text_prefix`` is written
    before each text as the tokenizer's pieces, read as tags (subword tokenizers in the default mode;
    every piece must be in the vocabulary). ``knowledge_as="text"`` writes the branches after the
    input as plain text (:mod:`~graphmatch.graphs.kbert.knowledge_text`; :meth:`build` only).
    """

    def __init__(
        self,
        kg: KnowledgeGraph | None,
        tokenizer: CharTokenizer | WordPieceTokenizer | SentencePieceTokenizer,
        options: TreeOptions | None = None,
        *,
        labels: Sequence[str] | None = None,
        keep_text: bool = False,
        selection: BranchSelection | None = None,
        **old: Any,
    ):
        options, labels = old_tree_keywords(type(self).__name__, tokenizer, options, labels, old)
        #: every setting of the tree, as given
        self.options = options
        mode, query, max_length, max_entities = options.mode, options.query, options.max_length, options.max_entities
        prefix, knowledge_as, max_words = options.text_prefix, options.knowledge_as, options.max_words
        add_cls = options.add_cls
        finder = word_finder(tokenizer, mode, query)
        if knowledge_as not in KNOWLEDGE_AS:
            raise ValueError(f"knowledge_as must be one of {', '.join(KNOWLEDGE_AS)}, got {knowledge_as!r}")
        if max_length < 1:
            raise ValueError(f"max_length must be at least 1, got {max_length}")
        if max_entities < 0:
            raise ValueError(f"max_entities must be >= 0, got {max_entities}")
        if max_words < 1:
            raise ValueError(f"max_words must be at least 1, got {max_words}")
        if options.noun_reading and not finder.nouns:
            raise ValueError("noun_readings applies to English word pieces (a WordPieceTokenizer)")
        if selection is not None and not finder.selection:
            raise ValueError("a branch selection needs mode='default' (the reference injects K-BERT's first values)")
        self.kg = kg
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.max_entities = max_entities
        self.predicate = options.uses_predicate
        self.mode = finder.mode
        self.query = finder.query
        self.segmenter = options.segmenter
        self.add_cls = add_cls
        self.tag_to_id = {tag: i for i, tag in enumerate(labels)} if labels is not None else None
        self.keep_text = keep_text
        self.stop_words = frozenset(STOP_WORDS if options.stop_words is None else options.stop_words)
        self.max_words = max_words
        self.hang_after = frozenset(options.hang_after)
        self.inject = kg is not None and max_entities > 0
        self.selection = selection
        self.noun_readings = NounReadings() if options.noun_reading else None
        self.prefix = prefix
        self.knowledge_as = knowledge_as
        self._value_limit = None if selection is not None else max_entities  # candidates per subject
        self._token_id = tokenizer.exact_id if finder.exact else tokenizer.token_to_id
        self._char_ids = _CodeTable(lambda ch: -1 if ch.isspace() else self._token_id(ch))  # -1: whitespace
        self._folded = _CodeTable(lambda ch: ord(_fold_char(ch)))
        self._space = _CodeTable(lambda ch: int(ch.isspace()))
        self._values: dict[str, _Values | None] = {}
        self._trie: FlatTrie | None = None
        self._tag_ids = {tag: tokenizer.exact_id(tag) for tag in SPECIAL_TAGS}
        cls = [(CLS, _TAG, 0)] if add_cls else []
        pieces = self._prefix_pieces(prefix, finder)
        if max_length <= len(cls) + len(pieces):
            raise ValueError(f"max_length={max_length} holds only the leading tags "
                             f"({' '.join([t for t, _, _ in cls] + list(pieces))}) and no text token: "
                             f"give at least {len(cls) + len(pieces) + 1}")
        # the checkpoint's pair layout: BERT [CLS] a [SEP] b [SEP] with b in segment 1; XLM-R / e5
        # <s> a </s></s> b </s>, all in segment 0 (its tokenizer's pair template says so)
        seps, seg_b = getattr(tokenizer, "pair_separators", 1), int(getattr(tokenizer, "pair_segments", True))
        self._templates = {  # keyed by "is a pair"
            False: _template(cls + [*((p, _TAG, 0) for p in pieces), ("a", _TEXT_A, 0)]),
            True: _template(cls + [*((p, _TAG, 0) for p in pieces), ("a", _TEXT_A, 0), *[(SEP, _TAG, 0)] * seps,
                                   *((p, _TAG, seg_b) for p in pieces), ("b", _TEXT_B, seg_b), (SEP, _TAG, seg_b)]),
        }
        #: how words and tokens are found (:class:`WordFinder`), chosen once
        self.finder = finder(self)

    # ------------------------------------------------------------------ checks
    def check(self, text_a: str, text_b: str | None = None, tags: Sequence[str] | None = None) -> None:
        """Raise :class:`TypeError` / :class:`ValueError` for an input the builder refuses: an
        empty (or whitespace-only) text, and ``tags`` without ``tag_to_id``, with a pair, of the
        wrong length or with an unknown tag."""
        for name, text in (("text_a", text_a), ("text_b", text_b)):
            if text is not None and not isinstance(text, str):
                raise TypeError(f"{name} must be a str, got {type(text).__name__}")
            if text is not None and not text.strip():
                raise ValueError(f"empty text ({name})")
        if tags is None:
            return
        if self.tag_to_id is None:
            raise ValueError("tags given but the builder has no tag_to_id")
        if not self.finder.tags:
            raise ValueError("NER tags are per character: they need a character tokenizer, not word pieces")
        if text_b is not None:
            raise ValueError("tags apply to a single text, not to a pair")
        if len(tags) != len(text_a):
            raise ValueError(f"{len(tags)} tags for {len(text_a)} characters")
        unknown = sorted({t for t in tags if t not in self.tag_to_id})
        if unknown:
            raise ValueError(f"unknown tag(s) {unknown}; known: {sorted(self.tag_to_id)}")

    # ------------------------------------------------------------------- build
    def build(self, texts_a: Sequence[str], texts_b: Sequence[str] | None = None,
              tags: Sequence[Sequence[str]] | None = None) -> Trees:
        """The trees of ``(texts_a[i], texts_b[i])`` with NER ``tags[i]``, as flat arrays.

        The inputs are not checked here: :meth:`check` them first.
        """
        return self._build(self._layout(texts_a, texts_b), texts_b is not None, tags, self.knowledge_as == "text")

    def build_parts(self, inputs: Sequence[Sequence[Part]]) -> Trees:
        """The trees of inputs written out as parts (segment 0 throughout; ``char_index`` is an
        offset in the token's own part): texts, each tokenized on its own so that no token or
        K-Query match crosses a part, and tags, each one trunk token. A relation sentence is
        ``[CLS]``, its text cut at the entity boundaries and the entity markers between, ``[SEP]``.
        """
        if not self.finder.parts:
            raise ValueError("build_parts needs mode='default'")
        flat = [part for parts in inputs for part in parts]
        for part in flat:
            if part.query not in QUERIES:
                raise ValueError(f"a part's query must be one of {', '.join(QUERIES)}, got {part.query!r}")
            if part.tag and not part.text:
                raise ValueError("a tag part needs its tag")
        count = np.fromiter(map(len, inputs), dtype=np.int64, count=len(inputs))
        kind = np.array([_TAG if part.tag else _TEXT_A for part in flat], dtype=np.int64)
        query = np.array([QUERIES.index(part.query) for part in flat], dtype=np.int64)
        layout = _written([part.text for part in flat], kind, np.zeros(len(flat), dtype=np.int64),
                          np.arange(len(inputs)).repeat(count), len(inputs), query)
        return self._build(layout, False, None)

    def _build(self, layout: _Layout, pair: bool, tags: Sequence[Sequence[str]] | None, text: bool = False) -> Trees:
        """Steps 2-6 over a written-out layout (with ``text``, the knowledge written out instead)."""
        specials, matches, trunk = self.finder.read(layout, pair)
        if layout.part_query is not None:
            matches = self._queried(layout, matches)
        words = self._words(layout, trunk, matches, self._hang_tokens(trunk, specials))
        if text:
            return text_trees(self, layout, trunk, words, specials, pair, tags)
        branches = self._branches(words)
        placed = self._place(trunk, words, branches)
        kept = self._cut(trunk, words, branches, placed)
        stores = {"token": self._token_table(layout, trunk, words, branches, kept, tags),
                  "word": {"span": words.span[kept.word]},
                  "entity": {"length": rules.kept_length(branches.value_length[kept.value], placed.value[kept.value],
                                                   self.max_length, np.minimum)}}
        n = len(layout.input_start) - 1
        counts = {"token": kept.size, "word": np.bincount(words.input[kept.word], minlength=n),
                  "entity": np.bincount(branches.value_input[kept.value], minlength=n)}
        for key, (edge_index, owner) in self._edges(words, branches, placed, kept).items():
            stores[key] = {"edge_index": edge_index}
            counts[key] = np.bincount(owner, minlength=n)
        if self.keep_text:
            self._texts(stores, layout, trunk, words, specials, kept)
        return Trees(stores, counts)

    # step 1 -------------------------------------------------------------------
    def _layout(self, texts_a: Sequence[str], texts_b: Sequence[str] | None) -> _Layout:
        """Every input as ``[CLS]a`` or ``[CLS]a[SEP]b[SEP]``, all laid end to end."""
        template = self._templates[texts_b is not None]
        texts = {_TEXT_A: texts_a, _TEXT_B: texts_b}
        columns: list[Iterable[str]] = [repeat(name) if kind == _TAG else texts[kind]
                                        for name, kind in zip(template.names, template.kind.tolist(), strict=True)]
        parts = list(chain.from_iterable(zip(*columns, strict=False)))  # the tags repeat endlessly
        n, k = len(texts_a), len(template.kind)
        return _written(parts, np.tile(template.kind, n), np.tile(template.seg, n), np.arange(n).repeat(k), n)

    # step 2 -------------------------------------------------------------------
    def _added_tags(self, layout: _Layout) -> _Spans:
        """Default mode: the added ``[CLS]`` and ``[SEP]`` are the tags."""
        part = layout.tag_parts
        return _Spans(layout.part_start[part], layout.part_start[part + 1], layout.tag_names)

    def _queried(self, layout: _Layout, matches: _Spans) -> _Spans:
        """The matches that the K-Query of their part (:data:`QUERIES`) lets through."""
        part = layout.part_start.searchsorted(matches.start, side="right") - 1
        query = layout.part_query[part]
        keep = query == _ALL
        head = (query == _HEAD).nonzero()[0]
        starts = layout.part_start[part[head]].tolist()
        ends = layout.part_start[part[head] + 1].tolist()
        keep[head] = matches.end[head] == [lo + len(layout.string[lo:hi].rstrip()) for lo, hi in
                                           zip(starts, ends, strict=True)]
        index = keep.nonzero()[0]
        return _Spans(matches.start[index], matches.end[index], [matches.text[i] for i in index.tolist()])






    # ------------------------------------------------- for the one-input fast path
    @property
    def plain_characters(self) -> bool:
        """Whether the trees are characters queried by the trie with nothing else on (no word
        pieces, segmenter, selection, ``hang_after`` or ``keep_text``): what
        :mod:`~graphmatch.graphs.kbert.one` builds one input at a time without the arrays."""
        return (self.finder.plain and self.selection is None
                and not self.hang_after and not self.keep_text and self.knowledge_as == "tree")

    def pair_layout(self) -> tuple[int, int]:
        """The ``[SEP]`` tags between the texts of a pair and the segment of text b."""
        template = self._templates[True]
        return int(template.names.count(SEP)) - 1, int(template.seg[-1])

    def query_trie(self) -> FlatTrie:
        """The K-Query trie (:meth:`_flat_trie`): the subjects, or in reference mode the stripped
        subjects and the special tags."""
        return self._flat_trie()

    def char_id(self, ch: str) -> int:
        """The vocabulary id of a trunk character (exact in reference mode), -1 for whitespace."""
        return -1 if ch.isspace() else self._token_id(ch)

    def tag_id(self, tag: str) -> int:
        """The vocabulary id of a tag (memoised)."""
        return self._tag_id(tag)

    def subject_values(self, subject: str) -> tuple[list[int], list[int]] | None:
        """The values injected on ``subject`` as ``(tokens of each value, their ids)``, ``None``
        if none (memoised, as the core injects them)."""
        values = self._subject_values(subject)
        return None if values is None else (values.lengths.tolist(), values.ids.tolist())

    def _flat_trie(self) -> FlatTrie:
        """The K-Query trie: the subjects, or in reference mode the stripped subjects and the
        special tags (pkuseg's user dictionary); built on first use."""
        if self._trie is None:  # one per graph: the builders of every split share it
            words = type(self.finder).trie_words  # the finders that inherit it share one trie
            self._trie = (FlatTrie(self.finder.trie_words(())) if self.kg is None else
                          self.kg.flat_trie() if words is WordFinder.trie_words else  # the subjects: the KG's own
                          self.kg.flat_trie(f"{words.__module__}.{words.__qualname__}", self.finder.trie_words))
        return self._trie



    # step 3 -------------------------------------------------------------------
    def _trunk(self, layout: _Layout, specials: _Spans, sep_segments: bool = False) -> _Trunk:
        """The trunk tokens: every character that is not whitespace, each tag one token; with
        ``sep_segments`` (the reference's pairs) segments counted by the ``[SEP]`` tokens before."""
        ids = self._char_ids(layout.codes).astype(np.int64)  # -1: whitespace
        tail_of, tail_k = ranges(specials.end - specials.start - 1)
        ids[specials.start[tail_of] + tail_k + 1] = -1  # a tag is one token: its first character
        ids[specials.start] = self._tag_ids_of(specials.text)
        is_token = ids >= 0
        chars_before = ptr(is_token)
        char = is_token.nonzero()[0]
        token_input, token_ptr, ordinal = _ordinals(layout, char, chars_before)
        if sep_segments:  # run_kbert_cls's counter: 1, then +1 after each [SEP]; minus 1, capped at 1
            is_sep = np.zeros(len(layout.codes), dtype=bool)
            is_sep[[s for s, t in zip(specials.start.tolist(), specials.text, strict=True) if t == SEP]] = True
            seps_before = ptr(is_sep[char])
            seg = np.minimum(seps_before[:-1] - seps_before[token_ptr[token_input]], 1)
        else:
            seg = layout.char_seg[char]
        return _Trunk(char, token_input, token_ptr, ordinal, ids[char], seg, chars_before)

    def _piece_trunk(self, layout: _Layout, specials: _Spans, offsets: np.ndarray, pieces: Pieces) -> _Trunk:
        """Word-piece and SentencePiece modes: the pieces of every tokenised text (starting at
        ``offsets`` in the layout) and the tags, in layout order."""
        piece_part = np.arange(len(offsets)).repeat(np.diff(pieces.piece_ptr))
        start = np.concatenate((offsets[piece_part] + pieces.start, specials.start))
        order = np.argsort(start, kind="stable")
        char = start[order]
        ids = np.concatenate((pieces.ids, self._tag_ids_of(specials.text))).astype(np.int64)[order]
        chars_before = np.searchsorted(char, np.arange(len(layout.codes) + 1))
        token_input, token_ptr, ordinal = _ordinals(layout, char, chars_before)
        text = np.array(pieces.tokens + specials.text, dtype=object)[order] if self.keep_text else None
        return _Trunk(char, token_input, token_ptr, ordinal, ids, layout.char_seg[char], chars_before, text)

    def _prefix_pieces(self, prefix: str | None, finder: WordFinder) -> list[str]:
        """The pieces of ``prefix`` (checked: a subword tokenizer in the default mode, every piece known)."""
        if not prefix:
            return []
        if finder.tokenization not in ("wordpiece", "sentencepiece") or finder.mode != "default":
            raise ValueError("a text prefix is written as a subword tokenizer's pieces (word pieces or SentencePiece) "
                             f"in the default mode, not {finder.tokenization} in the {finder.mode} mode")
        pieces = self.tokenizer.tokenize(prefix.rstrip())  # the text's first piece marks the word boundary
        unknown = [p for p in pieces if self._tag_id(p) == self.tokenizer.unk_id]
        if unknown or not pieces:
            raise ValueError(f"the text prefix {prefix!r} has pieces the vocabulary lacks: {', '.join(unknown)}"
                             if unknown else f"the text prefix {prefix!r} has no pieces")
        return pieces

    def _tag_ids_of(self, tags: list[str]) -> list[int]:
        """The vocabulary ids of tags, one dict lookup each (a tag met for the first time: :meth:`_tag_id`)."""
        known = self._tag_ids
        return [known[t] if t in known else self._tag_id(t) for t in tags]

    def _tag_id(self, tag: str) -> int:
        """The vocabulary id of a tag (memoised)."""
        if tag not in self._tag_ids:
            self._tag_ids[tag] = self.tokenizer.exact_id(tag)
        return self._tag_ids[tag]

    def _hang_tokens(self, trunk: _Trunk, specials: _Spans) -> np.ndarray:
        """The trunk tokens of the tags of :attr:`hang_after`."""
        if not self.hang_after:
            return np.zeros(0, dtype=np.int64)
        is_hang = np.fromiter((t in self.hang_after for t in specials.text), dtype=bool, count=len(specials.text))
        return trunk.chars_before[specials.start[is_hang]]

    # step 4 -------------------------------------------------------------------
    def _words(self, layout: _Layout, trunk: _Trunk, matches: _Spans, hang_tokens: np.ndarray) -> _Words:
        """The queried words whose subject has values and that hold a trunk token; each word's
        branches go after its last trunk token and the :attr:`hang_after` tags that follow it."""
        values = [self._subject_values(s) for s in matches.text] if self.inject else [None] * len(matches.text)
        first, end = trunk.chars_before[matches.start], trunk.chars_before[matches.end]
        keep = np.fromiter((v is not None for v in values), dtype=bool, count=len(values)) & (end > first)
        if self.selection is not None and keep.any():
            values = self._selected(layout, matches, values, keep)
            keep &= np.fromiter((v is not None for v in values), dtype=bool, count=len(values))
        index = keep.nonzero()[0]
        first, end, values = first[index], end[index], [values[i] for i in index.tolist()]
        span = np.empty((len(index), 2), dtype=np.int64)  # offsets in the word's own text
        span[:, 0] = layout.origin[matches.start[index]]
        span[:, 1] = span[:, 0] + matches.end[index] - matches.start[index]
        width = np.fromiter((v.ids.size for v in values), dtype=np.int64, count=len(values))
        hang = end
        if len(hang_tokens):
            skip = np.zeros(len(trunk.char) + 1, dtype=bool)
            skip[hang_tokens] = True
            stops = (~skip).nonzero()[0]
            hang = stops[stops.searchsorted(end)]  # the first token at or after the end that is not skipped
        return _Words(trunk.input[first], first, end, hang, span, [matches.text[i] for i in index.tolist()], values,
                      width, first.searchsorted(trunk.ptr))

    def _selected(self, layout: _Layout, matches: _Spans, values: list[_Values | None],
                  keep: np.ndarray) -> list[_Values | None]:
        """:attr:`selection` over the candidates of the matches where ``keep`` is set: each keeps
        its best values (``None`` where none is left)."""
        index = keep.nonzero()[0]
        word_input = layout.char_input[matches.start[index]]
        inputs, word_input = np.unique(word_input, return_inverse=True)
        texts = [(layout.char_input[layout.part_start[p]], layout.string[layout.part_start[p]:layout.part_start[p + 1]])
                 for p in layout.text_parts.tolist() if layout.part_start[p + 1] > layout.part_start[p]]
        joined: dict[int, list[str]] = {}
        for i, text in texts:
            joined.setdefault(int(i), []).append(text)
        sentences = [" ".join(joined[i]) for i in inputs.tolist()]
        chosen = [values[i] for i in index.tolist()]
        width = np.fromiter((len(v.texts) for v in chosen), dtype=np.int64, count=len(chosen))
        kept = self.selection.keep(sentences, word_input, width, list(chain.from_iterable(v.objects for v in chosen)),
                                   self.max_entities, [matches.text[i] for i in index.tolist()])
        out = list(values)
        for i, v, mask in zip(index.tolist(), chosen, np.split(kept, ptr(width)[1:-1]), strict=True):
            out[i] = v.taken(mask)
        return out

    def _subject_values(self, subject: str) -> _Values | None:
        """The values injected on ``subject`` (memoised; :meth:`WordFinder.values`), ``None`` if none."""
        if subject in self._values:
            return self._values[subject]
        result = self._values[subject] = self.finder.values(subject)
        return result


    @staticmethod
    def _branches(words: _Words) -> _Branches:
        """The values of every word and their tokens as flat arrays."""
        count = np.fromiter((len(v.texts) for v in words.values), dtype=np.int64, count=len(words.values))
        word_ptr = ptr(count)
        value_word = np.arange(len(count)).repeat(count)
        empty = np.zeros(0, dtype=np.int64)
        length = np.concatenate([v.lengths for v in words.values]) if words.values else empty
        token_value, token_offset = ranges(length)
        ids = np.concatenate([v.ids for v in words.values]) if words.values else empty
        return _Branches(word_ptr, value_word, words.input[value_word], length, word_ptr[words.ptr], token_value,
                         token_offset, ids)

    @staticmethod
    def _place(trunk: _Trunk, words: _Words, branches: _Branches) -> _Placed:
        """Where every token goes in its input's flattened tree (the equations of step 4)."""
        widths_before = ptr(words.width)  # branch tokens of all earlier words
        # ... of the earlier words of the same input
        same_input_before = widths_before[:-1] - widths_before[words.ptr[words.input]]
        word_at = words.hang - trunk.ptr[words.input] + same_input_before
        lengths_before = ptr(branches.value_length)  # tokens of all earlier values
        # ... of the earlier values of the same word
        same_word_before = lengths_before[:-1] - lengths_before[branches.word_ptr[branches.value_word]]
        value_at = word_at[branches.value_word] + same_word_before
        words_ended = words.hang.searchsorted(np.arange(len(trunk.char)), side="right")
        trunk_at = trunk.ordinal + widths_before[words_ended] - widths_before[words.ptr[trunk.input]]
        return _Placed(trunk_at, word_at, value_at, value_at[branches.token_value] + branches.token_offset)

    # step 5 -------------------------------------------------------------------
    def _cut(self, trunk: _Trunk, words: _Words, branches: _Branches, placed: _Placed) -> _Kept:
        """What survives ``max_length``, and where each kept token goes in the token table."""
        limit = self.max_length
        branch_input = branches.value_input[branches.token_value]
        size = rules.tree_size(trunk.ptr[1:] - trunk.ptr[:-1] + np.bincount(branch_input, minlength=len(trunk.ptr) - 1),
                               limit, np.minimum)
        first_token = ptr(size)
        kept_trunk = rules.kept(placed.trunk, limit).nonzero()[0]
        kept_branch = rules.kept(placed.branch, limit).nonzero()[0]
        return _Kept(size, kept_trunk, rules.kept(placed.word, limit).nonzero()[0],
                     rules.kept(placed.value, limit).nonzero()[0],
                     kept_branch, first_token[trunk.input[kept_trunk]] + placed.trunk[kept_trunk],
                     first_token[branch_input[kept_branch]] + placed.branch[kept_branch])

    # step 6 -------------------------------------------------------------------
    def _token_table(self, layout: _Layout, trunk: _Trunk, words: _Words, branches: _Branches, kept: _Kept,
                     tags: Sequence[Sequence[str]] | None) -> dict[str, np.ndarray]:
        """The token attributes of all inputs: trunk and branch tokens put where they go."""
        names = ["input_ids", "pos", "seg", "char_index"]
        trunk_rows = [trunk.ids, trunk.ordinal, trunk.seg, layout.origin[trunk.char]]
        if tags is not None:
            names.append("y")
            tag_ids = np.fromiter(map(self.tag_to_id.__getitem__, chain.from_iterable(tags)), dtype=np.int64)
            char_tag = np.full(len(layout.codes), IGNORE_INDEX, dtype=np.int64)
            char_tag[layout.char_kind == _TEXT_A] = tag_ids
            trunk_rows.append(char_tag[trunk.char])
        table = np.empty((len(names), int(kept.size.sum())), dtype=np.int64)
        whole = len(kept.trunk) == len(trunk.char)  # no trunk token cut by max_length
        for row, values in zip(table, trunk_rows, strict=True):  # row by row: 5x faster than one 2-D gather
            row[kept.trunk_dest] = values if whole else values[kept.trunk]
        offset = branches.token_offset[kept.branch]
        last = words.end[branches.value_word[branches.token_value[kept.branch]]] - 1  # the word's last character
        table[0, kept.branch_dest] = branches.token_ids[kept.branch]
        table[1, kept.branch_dest] = rules.branch_position(trunk.ordinal[last], offset)
        table[2, kept.branch_dest] = trunk.seg[last]
        table[3:, kept.branch_dest] = np.array([[-1], [IGNORE_INDEX]])[:len(names) - 3]  # char_index, y
        token = dict(zip(names, table, strict=True))
        token["branch"] = np.zeros(table.shape[1], dtype=bool)
        token["branch"][kept.branch_dest] = True
        return token

    @staticmethod
    def _edges(words: _Words, branches: _Branches, placed: _Placed,
               kept: _Kept) -> dict[tuple[str, str, str], tuple[np.ndarray, np.ndarray]]:
        """Each edge type's ``[2, E]`` index, local to its input (kept words and values are a
        prefix of their input's, in order), and the input of every edge."""
        word_local = np.arange(len(words.end)) - words.ptr[words.input]
        value_local = np.arange(len(branches.value_word)) - branches.value_ptr[branches.value_input]
        token_word, k = ranges(words.end[kept.word] - words.first[kept.word])
        token_word = kept.word[token_word]
        token_value = branches.token_value[kept.branch]
        return {
            WORD_EDGE: (np.array((placed.trunk[words.first[token_word] + k], word_local[token_word])),
                        words.input[token_word]),
            ENTITY_EDGE: (np.array((placed.branch[kept.branch], value_local[token_value])),
                          branches.value_input[token_value]),
            ANCHOR_EDGE: (np.array((value_local[kept.value], word_local[branches.value_word[kept.value]])),
                          branches.value_input[kept.value]),
        }

    @staticmethod
    def _texts(stores: dict[Any, dict[str, Any]], layout: _Layout, trunk: _Trunk, words: _Words, specials: _Spans,
               kept: _Kept) -> None:
        """The ``text`` of every kept node: token strings as written, subjects, values (and each
        value's ``object`` alone)."""
        trunk_text = _trunk_text(layout, trunk, specials)
        branch_text = np.array(list(chain.from_iterable(v.chars for v in words.values)), dtype=object)
        token_text = np.empty(len(stores["token"]["input_ids"]), dtype=object)
        token_text[kept.trunk_dest] = trunk_text[kept.trunk]
        token_text[kept.branch_dest] = branch_text[kept.branch]
        value_text = list(chain.from_iterable(v.texts for v in words.values))
        value_object = list(chain.from_iterable(v.objects for v in words.values))
        stores["token"]["text"] = token_text.tolist()
        stores["word"]["text"] = [words.subject[w] for w in kept.word.tolist()]
        stores["entity"]["text"] = [value_text[v] for v in kept.value.tolist()]
        stores["entity"]["object"] = [value_object[v] for v in kept.value.tolist()]  # pictures part it off


__all__ = ["TreeCore"]
