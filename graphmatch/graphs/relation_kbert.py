r"""Relation sentence graphs with knowledge: K-BERT branches on the word-piece relation graph.

:class:`RelationTreeBuilder` builds the graph of
:class:`~graphmatch.graphs.relation.RelationGraphBuilder` over a checkpoint's word pieces and
hangs K-BERT branches on it with the one K-Query/K-Inject core
(:meth:`graphmatch.graphs.kbert.TreeCore.build_parts`). The sentence is written out as the
core's parts: ``[CLS]``, the text cut at the entity boundaries with the four markers between as
tags, ``[SEP]``. Each piece of text is tokenised on its own, as without knowledge, so the trunk is
the token sequence of the graph without knowledge, and no K-Query match crosses an entity boundary.

- **Where** (``inject``): ``"entities"`` (default) queries each entity's last piece of text
  only, and keeps the match that ends where the entity ends: its head word (``desk drawer`` →
  ``drawer``; ``ice cream`` whole), as :meth:`~graphmatch.knowledge.Lemmatizer.match` does.
  ``"all"`` also queries the text outside the entities, every match there (K-BERT over a
  sentence); inside an entity it is the head word still.
- **How much**: the head word gets the first ``max_entities`` values of its KG subject, so an
  entity gets at most ``max_entities`` branches (2). With a ``selection``
  (:class:`~graphmatch.graphs.branch_selection.BranchSelection`) every value of the subject is a
  candidate, scored by the cosine of its object and the sentence (the text without the markers),
  and the head word keeps its ``max_entities`` best at or above the threshold; with
  ``noun_reading`` a single word matches only where it reads as a noun
  (:class:`~graphmatch.knowledge.noun_reading.NounReadings`; an entity's first word counts as
  the start of its text).
- **Where the branch goes**: after the closing marker, ``<e1> company </e1> type group is a
  institution``: the core hangs it after the span's last piece and the closing markers that
  follow it (``hang_after``). The markers stay where they are, and the tokens between ``<ek>``
  and ``</ek>`` remain exactly the entity's pieces. That is what the entity edges, the
  entity-start head (the opening marker's state) and the entity-aware head (the mean over the
  entity's pieces) read. A branch is never an entity token, and it does not split the entity.
- **Positions and visibility**, as K-BERT defines them: the trunk is numbered as if no branch
  existed; piece *k* of a value gets the position of the span's last piece plus *k*; a branch
  piece sees its own value and its span's pieces, and those see it; nothing else sees it.

On top of the relation graph's stores (whose ``pos1``/``pos2`` are measured on the soft
positions, so a branch piece lies *k* after its entity):

.. code-block:: text

    data["token"].pos      [L] long   soft positions
    data["token"].branch   [L] bool   True for branch pieces
    data["word"].in_entity [W] long   each matched word (span) that got a branch: 1 in e1, 2 in e2, 3 both, 0 outside
    data["value"].length   [V] long   one node per branch (a value): its pieces
    ("token", "in", "word")           trunk piece -> its word
    ("token", "in", "value")          branch piece -> its value
    ("value", "on", "word")           value -> the word it hangs on

:func:`graphmatch.graphs.kbert.visibility_mask` (``value="value"``) expands a batch into the
``[B, L, L]`` visibility. ``max_length`` bounds the trunk as without knowledge (a window around
the entities; a sentence that does not fit is cut at whole words); the branches come on top.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import torch
from torch_geometric.data import HeteroData
from torch_geometric.utils import cumsum

from graphmatch.graphs.branch_selection import BranchSelection
from graphmatch.graphs.defaults import INJECT
from graphmatch.graphs.kbert import (
    ANCHOR_EDGE,
    ENTITY_EDGE,
    WORD_EDGE,
    Coverage,
    Part,
    TreeCore,
    TreeOptions,
    Trees,
    mask_groups,
)
from graphmatch.graphs.relation import (
    RelationGraphBuilder,
    RelationSentence,
    WordPieces,
    relative_positions,
    tokenize_marked,
    with_markers,
)
from graphmatch.graphs.relation_markup import MarkedSentence, parse_markup
from graphmatch.graphs.relation_options import RelationOptions, old_relation_keywords
from graphmatch.knowledge import KnowledgeGraph
from graphmatch.text import WordPieceTokenizer
from graphmatch.utils.ragged import batch_vector
from graphmatch.utils.ragged_np import ptr

#: version of the relation sentence trees this builder writes: bump it whenever they change
FORMAT_VERSION = 1
VALUE = "value"
VALUE_EDGE = ("token", "in", VALUE)
VALUE_ANCHOR = (VALUE, "on", "word")
ENTITY_TOKEN_EDGE = ("token", "in", "entity")
_NO_CUT = 1 << 30  # the trunk is cut to max_length before; the branches are kept whole


class RelationTreeBuilder(RelationGraphBuilder):
    r"""Build the relation sentence graph of one sentence with K-BERT branches (see the module
    documentation); without a match it is the graph of
    :meth:`RelationGraphBuilder.for_pieces <graphmatch.graphs.relation.RelationGraphBuilder.for_pieces>`
    with ``pos``, ``branch`` and empty knowledge stores.

    Args:
        pieces (WordPieces): the checkpoint's tokenizer; the core reads its vocabulary with
            :class:`~graphmatch.text.WordPieceTokenizer`.
        kg (KnowledgeGraph): the knowledge graph (``KnowledgeGraph.load("wordnet")``).
        options (RelationOptions, optional): every setting of the graph
            (:class:`~graphmatch.graphs.relation_options.RelationOptions`): the geometry of
            :class:`~graphmatch.graphs.relation.RelationGraphBuilder`, and ``inject``
            (``"entities"`` or ``"all"``), ``max_entities`` values per matched word, whether a
            value is its ``predicate`` and object (``type group``, K-BERT's classification input)
            or its object alone (``group``), and ``noun_reading`` (a single word matches only
            where it reads as a noun). (default: ``RelationOptions()``)
        selection (BranchSelection, optional): the values that fit the sentence, instead of the
            first in file order. (default: :obj:`None`)
        keep_text (bool): store the strings of every node, for inspection. (default: :obj:`False`)

    The keywords of old (``max_distance=``, ``inject=``, ``noun_readings=``, ...) still work for
    one release, with a ``DeprecationWarning``.
    """

    def __init__(self, pieces: WordPieces, kg: KnowledgeGraph, options: RelationOptions | None = None, *,
                 selection: BranchSelection | None = None, keep_text: bool = False, **old: Any):
        options = old_relation_keywords(type(self).__name__, options, old)
        if options.inject not in INJECT:
            raise ValueError(f"inject must be one of {', '.join(INJECT)}, got {options.inject!r}")
        tokenizer = WordPieceTokenizer(pieces.tokenizer.get_vocab(),
                                       lowercase=getattr(pieces.tokenizer, "do_lower_case", True))
        super().__init__(pieces, options, keep_text=keep_text, split=tokenizer.tokenize, marker_tokens=pieces.markers,
                         wrap=pieces.wrap)
        self.tokenizer = tokenizer
        self.inject = options.inject
        self.selection = selection
        tree = TreeOptions(max_length=_NO_CUT, max_entities=options.max_entities, predicate=options.predicate,
                           tokenization="wordpiece", noun_reading=options.noun_reading,
                           hang_after=tuple(self.marker_tokens[1::2]) if self.markers else ())
        self.core = TreeCore(kg, tokenizer, tree, keep_text=self.keep_text, selection=selection)

    def __call__(self, sentence: str | MarkedSentence, label: int | None = None,
                 where: str = "input") -> HeteroData:
        return self.graphs([sentence], [label], [where])[0]

    def graphs(self, sentences: Sequence[str | MarkedSentence], labels: Sequence[int | None] | None = None,
               wheres: Sequence[str] | None = None) -> list[HeteroData]:
        """The graphs of many sentences, their trees built by the core at once."""
        n = len(sentences)
        labels = [None] * n if labels is None else labels
        wheres = ["input"] * n if wheres is None else wheres
        fitted = [self.fit(s, w) for s, w in zip(sentences, wheres, strict=True)]
        trees = self.core.build_parts([self.parts(marked, sent) for marked, sent in fitted])
        at = {key: ptr(count) for key, count in trees.counts.items()}
        return [self._graph(trees, at, i, sent, label)
                for i, ((_, sent), label) in enumerate(zip(fitted, labels, strict=True))]

    # -------------------------------------------------------------- the trunk
    def fit(self, sentence: str | MarkedSentence, where: str = "input") -> tuple[MarkedSentence, RelationSentence]:
        """The sentence whose trunk fits ``max_length`` (cut at whole words around the entities
        when it does not) and its tokens: marked, wrapped, as without knowledge."""
        marked = parse_markup(sentence, where) if isinstance(sentence, str) else sentence
        if not isinstance(marked, MarkedSentence):
            raise TypeError(f"knowledge needs the sentence's text, got {type(sentence).__name__}")
        base = tokenize_marked(marked, self.split, where)
        sent = self.tokenized(base, where)
        cut = len(base.tokens) + 4 * self.markers + 2 - len(sent.tokens)
        if cut:  # the crop's window, at whole words
            first = (with_markers(base, self.marker_tokens) if self.markers else base).e1[0]
            front = first - (sent.e1[0] - 1)
            marked = self._trim(marked, front, cut - front)
            sent = self.tokenized(tokenize_marked(marked, self.split, where), where)
        return marked, sent

    def _trim(self, marked: MarkedSentence, front: int, back: int) -> MarkedSentence:
        """``marked`` less the fewest whole words before the first entity boundary that hold
        ``front`` pieces and after the last one that hold ``back``."""
        head, tail = marked.pieces()[0][0], marked.pieces()[-1][0]
        enc = self.tokenizer.encode_many([head, tail])
        first_piece = enc.word_ptr[:-1] - enc.piece_ptr[np.repeat([0, 1], np.diff(enc.text_words))]
        head_words = range(enc.text_words[0], enc.text_words[1])
        start = next((int(enc.word_start[w]) for w in head_words if first_piece[w] >= front), len(head))
        keep = enc.piece_ptr[2] - enc.piece_ptr[1] - back
        tail_words = range(enc.text_words[1], enc.text_words[2])
        offset = len(marked.text) - len(tail)
        end = offset + max((int(enc.word_end[w]) for w in tail_words
                            if enc.word_ptr[w + 1] - enc.piece_ptr[1] <= keep), default=0)
        (s1, t1), (s2, t2) = marked.e1, marked.e2
        return MarkedSentence(marked.text[start:end], (s1 - start, t1 - start), (s2 - start, t2 - start))

    def parts(self, marked: MarkedSentence, sent: RelationSentence) -> list[Part]:
        """``[CLS]``, the pieces of text between the entity boundaries with the markers between
        (in the order of ``sent``), ``[SEP]``; K-Query on each entity's last piece (its head)
        and, with ``inject="all"``, outside the entities."""
        pieces = marked.pieces()
        heads = {max(j for j, (_, k) in enumerate(pieces) if k & e) for e in (1, 2)}
        outside = "all" if self.inject == "all" else "none"
        markers = [self.marker_tokens[m] for m in sorted(range(4), key=sent.marks.__getitem__)] if self.markers else []
        parts = [Part(self.wrap[0], tag=True)]
        for j, (text, k) in enumerate(pieces):
            parts.append(Part(text, query="head" if j in heads else "none" if k else outside))
            if j < len(markers):
                parts.append(Part(markers[j], tag=True))
        parts.append(Part(self.wrap[1], tag=True))
        return parts

    # -------------------------------------------------------------- the graph
    def _graph(self, trees: Trees, at: Mapping[Any, np.ndarray], i: int, sent: RelationSentence,
               label: int | None) -> HeteroData:
        """The graph of input ``i`` of ``trees``, whose trunk is ``sent``."""
        def rows(key, name: str) -> Any:
            value = trees.stores[key][name]
            return value[..., at[key][i]:at[key][i + 1]]

        tok = {name: rows("token", name) for name in ("input_ids", "pos", "branch")}
        trunk = (~tok["branch"]).nonzero()[0]
        ids = [self.tokenizer.exact_id(t) for t in sent.tokens]
        if len(trunk) != len(ids) or not np.array_equal(tok["input_ids"][trunk], ids):
            raise RuntimeError(f"the sentence tree's trunk differs from the sentence's pieces: {sent.text!r}")
        n = len(tok["pos"])
        positions = tok["pos"].tolist()
        ent1, ent2 = trunk[sent.entity_tokens(1)], trunk[sent.entity_tokens(2)]
        word_edge = rows(WORD_EDGE, "edge_index")
        in_entity = np.zeros(n, dtype=np.int64)
        in_entity[ent1] |= 1
        in_entity[ent2] |= 2
        num_words = int(trees.counts["word"][i])
        word_entity = np.zeros(num_words, dtype=np.int64)
        np.bitwise_or.at(word_entity, word_edge[1], in_entity[word_edge[0]])
        tensor = lambda a: torch.from_numpy(np.ascontiguousarray(a, dtype=np.int64))  # noqa: E731
        data = HeteroData({
            "token": {"word_id": tensor(tok["input_ids"]),
                      "pos1": torch.tensor(relative_positions(positions, sent.e1, self.max_distance,
                                                              self.position_anchor)),
                      "pos2": torch.tensor(relative_positions(positions, sent.e2, self.max_distance,
                                                              self.position_anchor)),
                      "pos": tensor(tok["pos"]), "branch": torch.from_numpy(tok["branch"].copy()), "num_nodes": n},
            "entity": {"kind": torch.tensor([0, 1]), "num_nodes": 2},
            "sentence": {"num_tokens": torch.tensor([n]), "num_nodes": 1},
            "word": {"in_entity": tensor(word_entity), "num_nodes": num_words},
            VALUE: {"length": tensor(rows("entity", "length")), "num_nodes": int(trees.counts["entity"][i])},
            ("token", "in", "entity"): {"edge_index": tensor([np.concatenate((ent1, ent2)),
                                                              [0] * len(ent1) + [1] * len(ent2)])},
            ("token", "in", "sentence"): {"edge_index": tensor([np.arange(n), np.zeros(n)])},
            WORD_EDGE: {"edge_index": tensor(word_edge)},
            VALUE_EDGE: {"edge_index": tensor(rows(ENTITY_EDGE, "edge_index"))},
            VALUE_ANCHOR: {"edge_index": tensor(rows(ANCHOR_EDGE, "edge_index"))},
        })
        if self.markers:
            data["token", "starts", "entity"].edge_index = tensor([trunk[[sent.marks[0], sent.marks[2]]], [0, 1]])
        if label is not None:
            data.y = torch.tensor([label], dtype=torch.long)
        if self.keep_text:
            data["token"].text = trees.stores["token"]["text"][at["token"][i]:at["token"][i + 1]]
            data["entity"].text = [sent.entity_text(1), sent.entity_text(2)]
            data["sentence"].text = [sent.text]
            data["word"].text = trees.stores["word"]["text"][at["word"][i]:at["word"][i + 1]]
            data[VALUE].text = trees.stores["entity"]["text"][at["entity"][i]:at["entity"][i + 1]]
        return data


def mask_entities(batch: HeteroData, p: float, mask_id: int) -> HeteroData:
    r"""Entity masking of relation trees (``data.entity_mask``): each entity mention :math:`e`
    (``e1``, ``e2`` of every sentence) whose head word kept a branch (a ``word`` node whose
    ``in_entity`` names it) is drawn with probability ``p``, independently, and its trunk pieces
    (the ``(token, in, entity)`` edges: the markers are not among them) get ``mask_id``:

    .. math::
        z_e \sim \operatorname{Bernoulli}(p) \cdot [e \text{ has a branch}], \qquad
        t_i' = \texttt{mask\_id} \text{ for the pieces } i \text{ of } e \text{ when } z_e = 1.

    The branch, the markers, the positions ``pos``/``pos1``/``pos2`` and every edge stay as they
    are, so the heads read the entity where it was (:func:`~graphmatch.graphs.kbert.mask_groups`
    over ``(token, in, entity)`` on ``token.word_id``). Returns ``batch``.
    """
    word = batch["word"]
    if p <= 0 or not word.num_nodes:
        return batch
    # [B, 2]: does a word with a branch lie in the sentence's e1, e2 (in_entity's bits 1, 2)?
    bits = (word.in_entity.unsqueeze(1) >> torch.arange(2, device=word.in_entity.device)) & 1
    has = torch.zeros((batch["sentence"].num_nodes, 2), dtype=torch.bool, device=bits.device)
    g, k = bits.nonzero(as_tuple=True)
    has[batch_vector(word)[g], k] = True
    entity = batch["entity"]
    return mask_groups(batch, p, mask_id, ENTITY_TOKEN_EDGE, has[batch_vector(entity), entity.kind], ids="word_id")


def trunk_only(batch: HeteroData) -> HeteroData:
    """The sentence trees of ``batch`` (a PyG batch) without their branch pieces: with soft
    positions, each sentence exactly as without knowledge (the probe's cut). The trunk's edges are
    renumbered, the branches' dropped; the ``word`` and ``value`` nodes stay, with no branch piece."""
    tok = batch["token"]
    cut = batch.subgraph({"token": ~tok.branch})
    graph = batch_vector(cut["token"])
    cut["token"].ptr = cumsum(torch.bincount(graph, minlength=batch["sentence"].num_nodes))
    cut["sentence"].num_tokens = torch.bincount(graph, minlength=batch["sentence"].num_nodes)
    return cut


class RelationCoverage(NamedTuple):
    """How much knowledge relation sentences got: the core's :class:`Coverage` (sentences with a
    branch, branches per sentence, share of trunk pieces matched), the sentences whose ``e1``,
    ``e2`` and ``both`` entities got a branch, and their ``tokens`` with and ``trunk`` without
    the branches."""

    knowledge: Coverage
    e1: int
    e2: int
    both: int
    tokens: int
    trunk: int

    @classmethod
    def of(cls, data: HeteroData, slices: Mapping[Any, Any]) -> RelationCoverage:
        """Of collated graphs (an ``InMemoryDataset``'s ``_data`` and ``slices``)."""
        count = {key: np.diff(np.asarray(slices[key][name])) for key, name in
                 (("token", "word_id"), (VALUE, "length"), (VALUE_EDGE, "edge_index"), (WORD_EDGE, "edge_index"),
                  ("word", "in_entity"))}
        knowledge = Coverage.of({"token": count["token"], "entity": count[VALUE], ENTITY_EDGE: count[VALUE_EDGE],
                                 WORD_EDGE: count[WORD_EDGE]})
        sentence = np.arange(len(count["word"])).repeat(count["word"])
        got = np.zeros((len(count["word"]), 4), dtype=bool)
        got[sentence, data["word"].in_entity.numpy()] = True
        e1, e2 = got[:, 1] | got[:, 3], got[:, 2] | got[:, 3]
        tokens = int(count["token"].sum())
        return cls(knowledge, int(e1.sum()), int(e2.sum()), int((e1 & e2).sum()), tokens,
                   tokens - int(count[VALUE_EDGE].sum()))

    def __str__(self) -> str:
        n = self.knowledge.inputs or 1
        return (f"{self.knowledge}; e1 has a branch in {100 * self.e1 / n:.1f} %, e2 in {100 * self.e2 / n:.1f} %, "
                f"both in {100 * self.both / n:.1f} % of the sentences; {self.tokens / n:.1f} tokens per sentence "
                f"({self.trunk / n:.1f} without the branches)")


__all__ = ["ENTITY_TOKEN_EDGE", "INJECT", "VALUE", "VALUE_ANCHOR", "VALUE_EDGE", "RelationCoverage",
           "RelationTreeBuilder", "mask_entities", "trunk_only"]
