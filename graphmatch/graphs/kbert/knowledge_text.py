r"""Knowledge written out as text (``knowledge_as="text"``): the cheapest competitor of K-BERT's tree.

The same branches the tree would hang on its words (the same K-Query, ``max_entities`` and branch
selection) go after the input as plain text, in a second segment, with ordinary positions and full
visibility ("metadata shaping", Arora et al. 2021). An input with knowledge becomes

.. code-block:: text

    [CLS] a [SEP] w1：v11，v12；w2：v21 [SEP]            one text (NER: no [CLS])
    [CLS] a [SEP] b [SEP] w1：v11；w2：v21 [SEP]         a pair: one knowledge segment after both texts

each matched word :math:`w` (its trunk tokens again), a colon, its values separated by ``，``, the
words separated by ``；`` (``: ``, ``, `` and ``; `` for word pieces and SentencePiece). A pair's
layout puts the checkpoint's separators between the input and the knowledge (``</s></s>`` for
XLM-R / e5). The knowledge takes the segment of a pair's text b (1 for BERT, 0 for e5); after one
text, the first ``[SEP]`` closes text a in segment 0. Token
:math:`i` of an input has position :math:`i`. Every token is a trunk token: no branch flag, no
words, no entities, so every token sees every other. The input comes first and is cut to
``max_length`` like the tree; the knowledge fills what is left. Its tokens have no character
(``char_index`` -1) and no NER tag (``y`` = -100), so they never count in a tag metric. An input
without knowledge is the same as without a KG.
"""

from __future__ import annotations

from itertools import chain
from typing import TYPE_CHECKING, Any

import numpy as np

from graphmatch.graphs.kbert.layout import _trunk_text
from graphmatch.graphs.kbert.rules import tree_size
from graphmatch.utils.ragged_np import ptr

if TYPE_CHECKING:
    from graphmatch.graphs.kbert.core import TreeCore
    from graphmatch.graphs.kbert.records import Trees, _Layout, _Spans, _Trunk, _Words

#: the builder's two ways of writing the branches
KNOWLEDGE_AS = ("tree", "text")
#: the colon, the separator between a word's values and between words: characters, and subword text
PUNCTUATION = {True: ("：", "，", "；"), False: (": ", ", ", "; ")}


def punctuation_ids(core: TreeCore) -> tuple[list[int], list[int], list[int]]:
    """The token ids of the colon, the value separator and the word separator in ``core``'s vocabulary."""
    chars = core.finder.tokenization == "chars"
    marks = PUNCTUATION[chars]
    if chars:
        return tuple([core.char_id(m)] for m in marks)  # type: ignore[return-value]
    pieces = core.tokenizer.encode_many([m.strip() for m in marks])
    return tuple(pieces.ids[lo:hi].tolist() for lo, hi in zip(pieces.piece_ptr[:-1], pieces.piece_ptr[1:],
                                                              strict=True))  # type: ignore[return-value]


def text_trees(core: TreeCore, layout: _Layout, trunk: _Trunk, words: _Words, specials: _Spans,
               pair: bool, tags: Any) -> Trees:
    """The :class:`~graphmatch.graphs.kbert.Trees` of every input with its knowledge as text
    (the module documentation), from the core's trunk and matched words (steps 1-4)."""
    from graphmatch.graphs.kbert.records import _TEXT_A, ANCHOR_EDGE, ENTITY_EDGE, IGNORE_INDEX, SEP, WORD_EDGE, Trees

    n = len(trunk.ptr) - 1
    colon, comma, semicolon = punctuation_ids(core)
    seps, seg_b = core.pair_layout()
    sep = core.tag_id(SEP)
    # the knowledge tokens of each input, matched word by matched word (preprocessing only)
    knowledge: list[list[int]] = [[] for _ in range(n)]
    trunk_ids = trunk.ids.tolist()
    for w, values in enumerate(words.values):
        i = int(words.input[w])
        ids = knowledge[i]
        ids += semicolon if ids else [sep] * (seps - 1 if pair else seps)  # a pair ends in its [SEP] already
        ids += trunk_ids[words.first[w]:words.end[w]] + colon
        value_ptr = ptr(values.lengths).tolist()
        value_ids = values.ids.tolist()
        for v in range(len(values.lengths)):
            ids += (comma if v else []) + value_ids[value_ptr[v]:value_ptr[v + 1]]
    for ids in knowledge:
        if ids:
            ids.append(sep)
    trunk_count = np.diff(trunk.ptr)
    known = np.fromiter(map(len, knowledge), dtype=np.int64, count=n)
    size = tree_size(trunk_count + known, core.max_length, np.minimum)
    kept_trunk = np.minimum(trunk_count, size)
    kept_known = size - kept_trunk
    first = ptr(size)
    local = np.arange(len(trunk.char)) - trunk.ptr[trunk.input]
    keep = local < kept_trunk[trunk.input]
    dest = first[trunk.input[keep]] + local[keep]
    known_input = np.arange(n).repeat(kept_known)
    known_local = np.arange(int(kept_known.sum())) - ptr(kept_known)[known_input]
    known_dest = first[known_input] + kept_trunk[known_input] + known_local
    known_ids = np.fromiter(chain.from_iterable(ids[:k] for ids, k in zip(knowledge, kept_known.tolist(),
                                                                           strict=True)),
                            dtype=np.int64, count=len(known_input))
    total = int(size.sum())
    token = {"input_ids": np.empty(total, dtype=np.int64), "pos": np.arange(total, dtype=np.int64) - first[
        np.arange(n).repeat(size)], "seg": np.empty(total, dtype=np.int64), "char_index": np.full(total, -1, np.int64)}
    token["input_ids"][dest], token["input_ids"][known_dest] = trunk.ids[keep], known_ids
    token["seg"][dest], token["seg"][known_dest] = trunk.seg[keep], seg_b if pair else seg_b * (known_local > 0)
    token["char_index"][dest] = layout.origin[trunk.char[keep]]
    if tags is not None:
        tag_ids = np.fromiter(map(core.tag_to_id.__getitem__, chain.from_iterable(tags)), dtype=np.int64)
        char_tag = np.full(len(layout.codes), IGNORE_INDEX, dtype=np.int64)
        char_tag[layout.char_kind == _TEXT_A] = tag_ids
        token["y"] = np.full(total, IGNORE_INDEX, dtype=np.int64)
        token["y"][dest] = char_tag[trunk.char[keep]]
    token["branch"] = np.zeros(total, dtype=bool)
    empty = np.zeros((2, 0), dtype=np.int64)
    stores: dict[Any, dict[str, Any]] = {"token": token, "word": {"span": np.zeros((0, 2), dtype=np.int64)},
                                         "entity": {"length": np.zeros(0, dtype=np.int64)},
                                         WORD_EDGE: {"edge_index": empty}, ENTITY_EDGE: {"edge_index": empty.copy()},
                                         ANCHOR_EDGE: {"edge_index": empty.copy()}}
    none = np.zeros(n, dtype=np.int64)
    counts = {"token": size, "word": none, "entity": none.copy(), WORD_EDGE: none.copy(), ENTITY_EDGE: none.copy(),
              ANCHOR_EDGE: none.copy()}
    if core.keep_text:
        _texts(core, stores, layout, trunk, specials, keep, dest, known_dest, knowledge, kept_known)
    return Trees(stores, counts)


def _texts(core: TreeCore, stores: dict[Any, dict[str, Any]], layout: _Layout, trunk: _Trunk, specials: _Spans,
           keep: np.ndarray, dest: np.ndarray, known_dest: np.ndarray, knowledge: list[list[int]],
           kept_known: np.ndarray) -> None:
    """The ``text`` of every token (for inspection): the trunk as written, the knowledge's tokens."""
    trunk_text = _trunk_text(layout, trunk, specials)
    text = np.empty(len(stores["token"]["input_ids"]), dtype=object)
    text[dest] = trunk_text[keep]
    known = chain.from_iterable(ids[:k] for ids, k in zip(knowledge, kept_known.tolist(), strict=True))
    text[known_dest] = [core.tokenizer.id_to_token(i) for i in known]
    stores["token"]["text"] = text.tolist()
    stores["word"]["text"], stores["entity"]["text"] = [], []


__all__ = ["KNOWLEDGE_AS", "PUNCTUATION", "punctuation_ids", "text_trees"]
