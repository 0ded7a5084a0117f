r"""K-BERT sentence trees as heterogeneous graphs.

From `"K-BERT: Enabling Language Representation with Knowledge Graph"
<https://arxiv.org/abs/1909.07606>`_ (Liu et al., AAAI 2020). K-Query finds the words of a
sentence that are subjects of a knowledge graph; K-Inject hangs up to ``max_entities`` of their
values (branches) right after them. The flattened tree is one token sequence:

.. code-block:: text

    data["token"].input_ids  [L] long   trunk and branch tokens (characters, or word pieces), in K-BERT order
    data["token"].pos        [L] long   soft positions
    data["token"].seg        [L] long   0 for text a ([CLS], first [SEP]), 1 for text b (final [SEP])
    data["token"].branch     [L] bool   True for injected (branch) tokens
    data["token"].char_index [L] long   offset of the token's (first) character in its own text (a or b),
                                        -1 for branch tokens and added [CLS]/[SEP]
    data["token"].y          [L] long   NER tag ids (only with ``tags``), -100 where none applies
    data["word"].span        [W, 2]     (start, end) character offsets of each word (span) that got a branch
    data["entity"].length    [E] long   one node per injected branch: its tokens kept after the cut
    ("token", "in", "word")             trunk token -> its word
    ("token", "in", "entity")           branch token -> its branch
    ("entity", "on", "word")            branch -> the word it hangs on
    data.y                   [1] long   the label, when given

Soft positions number the trunk :math:`0, 1, 2, \dots` as if no branch existed; the
:math:`k`-th character of a branch on a word whose last character has position :math:`p`
gets :math:`p + k` (siblings reuse the same positions). Visibility follows from the edges:

.. math::
    V_{ij} = \begin{cases}
        1 & i, j \text{ trunk} \\
        1 & i, j \text{ in the same branch} \\
        1 & \text{one is in a branch } b \text{, the other a trunk token of the word } b
            \text{ hangs on} \\
        0 & \text{otherwise.}
    \end{cases}

Default mode runs K-Query on :func:`fold` of the text (lowercase, NFKC: ``ＤＶＤ`` finds ``dvd``).
With a :class:`~graphmatch.text.WordPieceTokenizer` the trunk is the checkpoint's word pieces,
K-Query runs over its words, lemmatised, and a branch follows its span's last piece
(``docs/kbert_english.md``).
The whole tree is built first and then cut to ``max_length``; a branch may be cut in the
middle and nothing is put back. One input is built as a corpus of one by the same vectorised
core as a whole corpus (:mod:`graphmatch.graphs.kbert.core`, whose documentation gives every
step with its equations; :class:`~graphmatch.graphs.kbert.TreeCorpusBuilder` builds
many at once), or, for characters queried by the trie, by the same steps in plain Python
(:mod:`graphmatch.graphs.kbert.one`: the same graph without the core's array set-up).

What is stored per sample is :math:`O(L)`; :func:`visibility_mask` expands a batch into the
dense ``[B, L, L]`` mask on the batch's device, :func:`visible_edge_index` lists the
``(token, sees, token)`` pairs.

``mode="reference"`` reproduces the official knowledge layer (``brain/knowgraph.py`` driven
by ``run_kbert_cls.py``) token for token; ``mode="default"`` fixes what it gets wrong. Every
difference is listed in ``docs/kbert_reference.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor
from torch_geometric.data import HeteroData
from torch_geometric.utils import cumsum

from graphmatch.graphs.kbert.core import TreeCore
from graphmatch.graphs.kbert.folding import fold
from graphmatch.graphs.kbert.one import OneTree
from graphmatch.graphs.kbert.records import IGNORE_INDEX, SPECIAL_TAGS, WORD_EDGE, Trees
from graphmatch.utils.ragged import batch_vector, group_pairs


class SentenceTreeBuilder(TreeCore):
    r"""Builds the K-BERT sentence tree of a text (or a text pair) as a :class:`HeteroData`.

    Takes the arguments of :class:`~graphmatch.graphs.kbert.TreeCore`:
    ``SentenceTreeBuilder(kg, tokenizer, options=TreeOptions(...), *, labels=None, keep_text=False,
    selection=None)``, every setting of the tree in the
    :class:`~graphmatch.graphs.kbert.TreeOptions` (``max_length``, ``max_entities``, ``kind``,
    ``mode``, ``query``, ...), NER's tag ``labels`` in id order, ``keep_text`` (store ``text``
    lists on every node type, for inspection). ``tokenizer`` is a
    :class:`~graphmatch.text.CharTokenizer` (Chinese characters), a
    :class:`~graphmatch.text.WordPieceTokenizer` (English word pieces: K-Query over its words)
    or a :class:`~graphmatch.text.SentencePieceTokenizer`.
    """

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(mode={self.mode!r}, query={self.query!r}, max_length={self.max_length}, "
                f"max_entities={self.max_entities}, predicate={self.predicate}, kg={self.kg is not None}"
                + (f", tokenizer={self.tokenizer!r})" if self.finder.tokenization == "wordpiece" else ")"))

    def __call__(
        self,
        text_a: str,
        text_b: str | None = None,
        label: int | None = None,
        tags: Sequence[str] | None = None,
    ) -> HeteroData:
        """The sentence tree of ``text_a`` (and ``text_b``) as a graph.

        Args:
            text_a (str): the text; whitespace gives no token and no position.
            text_b (str, optional): the second text of a pair.
            label (int, optional): stored as ``data.y``.
            tags (Sequence[str], optional): NER tags, one per character of ``text_a``
                (whitespace included; characters only); stored as ``data["token"].y``.

        Raises :class:`ValueError` for an empty (or whitespace-only) text, and for ``tags``
        without ``tag_to_id``, with a pair, of the wrong length or with an unknown tag.
        """
        self.check(text_a, text_b, tags)
        if tags is None and self.plain_characters:  # one input in plain Python, the same graph
            one = self.__dict__.get("_one")
            if one is None:
                one = self._one = OneTree(self)
            return one(text_a, text_b, label)
        trees = self.build([text_a], None if text_b is None else [text_b], None if tags is None else [tags])
        return tree_graph(trees, label)


# caches are keyed by the builder's class and its module's FORMAT_VERSION (graphmatch.data.cached):
# the class is named by its public path, the package, where FORMAT_VERSION is
SentenceTreeBuilder.__module__ = "graphmatch.graphs.kbert"


def tree_graph(trees: Trees, label: int | None = None) -> HeteroData:
    """The graph of a :class:`~graphmatch.graphs.kbert.Trees` of one input."""
    mapping: dict[Any, dict[str, Any]] = {}
    for key, store in trees.stores.items():
        mapping[key] = {name: value if isinstance(value, list) else torch.from_numpy(value)
                        for name, value in store.items()}
        if isinstance(key, str):
            mapping[key]["num_nodes"] = int(trees.counts[key][0])
    if label is not None:
        mapping["_global_store"] = {"y": torch.tensor([int(label)])}
    return HeteroData.from_dict(mapping)


# ---------------------------------------------------------------- batch-level
def _token_layout(data: HeteroData) -> tuple[Tensor, Tensor, Tensor, int]:
    """Graph index and position inside its graph of every token, the graphs' first-token
    offsets ``ptr`` ``[B + 1]`` and the longest graph's length."""
    store = data["token"]
    graph = batch_vector(store)
    ptr = getattr(store, "ptr", None)
    if ptr is None:
        ptr = cumsum(torch.bincount(graph, minlength=1))
    sizes = ptr[1:] - ptr[:-1]
    local = torch.arange(graph.numel(), device=graph.device) - ptr[graph]
    return graph, local, ptr, int(sizes.max()) if len(sizes) else 0


def visibility_mask(batch: HeteroData, value: str = "entity") -> tuple[Tensor, Tensor]:
    r"""Expand sentence trees into the dense visibility mask, on the batch's device.

    Trunk tokens see each other (one outer product); the branch links are few and are set
    from the ``(token, in, entity)``, ``(token, in, word)`` and ``(entity, on, word)`` edges.

    Args:
        batch (HeteroData): one graph or a PyG batch of K-BERT sentence trees.
        value (str): the node type of the injected values (branches): ``"entity"`` in K-BERT's
            trees, ``"value"`` in relation graphs, whose entities are the relation's.

    Returns:
        ``(visible [B, L, L] bool, token_mask [B, L] bool)``; padding rows and columns are all
        :obj:`False`, real tokens always see themselves.
    """
    graph, local, ptr, length = _token_layout(batch)
    num_graphs = len(ptr) - 1
    tok = batch["token"]
    device = tok.branch.device
    real = torch.zeros(num_graphs, length, dtype=torch.bool, device=device)
    real[graph, local] = True
    trunk = torch.zeros(num_graphs, length, dtype=torch.uint8, device=device)
    trunk[graph, local] = (~tok.branch).to(torch.uint8)
    # a uint8 product viewed as bool: the same 0/1 cells, many times faster than a bool "&" on CPU
    visible = (trunk.unsqueeze(2) * trunk.unsqueeze(1)).view(torch.bool)
    ent_edge = batch["token", "in", value].edge_index
    if ent_edge.numel():
        word_edge = batch[WORD_EDGE].edge_index
        anchor = batch[value, "on", "word"].edge_index
        num_entities = batch[value].num_nodes
        num_words = batch["word"].num_nodes
        word_of = torch.full((num_entities,), -1, dtype=torch.long, device=device)
        word_of[anchor[0]] = anchor[1]
        src, dst = group_pairs(ent_edge[0], ent_edge[1], ent_edge[0], ent_edge[1], num_entities)
        wsrc, wdst = group_pairs(ent_edge[0], word_of[ent_edge[1]], word_edge[0], word_edge[1], num_words)
        rows = torch.cat([src, wsrc, wdst])
        cols = torch.cat([dst, wdst, wsrc])
        visible[graph[rows], local[rows], local[cols]] = True
    return visible, real


def dense_inputs(batch: HeteroData, pad_id: int = 0) -> dict[str, Tensor]:
    """Padded ``[B, L]`` inputs and the ``[B, L, L]`` visibility of a batch of sentence trees.

    Returns ``input_ids`` (padding ``pad_id``), ``pos``, ``seg`` (padding 0), ``branch``
    (padding :obj:`False`), ``char_index`` (padding -1), ``token_mask``, ``visible`` and, when
    the graphs carry NER tags, ``labels`` (padding -100).
    """
    graph, local, ptr, length = _token_layout(batch)
    num_graphs = len(ptr) - 1
    tok = batch["token"]
    columns = [tok.input_ids, tok.pos, tok.seg, tok.char_index, tok.branch.long()]
    fills = [pad_id, 0, 0, -1, 0]
    if "y" in tok:
        columns.append(tok.y)
        fills.append(IGNORE_INDEX)
    stacked = torch.stack(columns, dim=1)
    dense = torch.tensor(fills, dtype=torch.long, device=stacked.device).repeat(num_graphs, length, 1)
    dense[graph, local] = stacked
    visible, real = visibility_mask(batch)
    out = {"input_ids": dense[..., 0], "pos": dense[..., 1], "seg": dense[..., 2],
           "char_index": dense[..., 3], "branch": dense[..., 4].bool(), "token_mask": real, "visible": visible}
    if "y" in tok:
        out["labels"] = dense[..., 5]
    return out


def mask_groups(batch: HeteroData, p: float, mask_id: int, edge: tuple[str, str, str],
                eligible: Tensor | None = None, ids: str = "input_ids") -> HeteroData:
    r"""Mask groups of tokens at random, vectorised over a batch: each node :math:`g` of ``edge``'s
    destination type (the group; its tokens are the ``edge`` edges ``token -> g``) is drawn with
    probability ``p`` when ``eligible[g]`` (every node without it), and every token of a drawn
    group gets ``mask_id``:

    .. math::
        z_g \sim \operatorname{Bernoulli}(p) \cdot e_g, \qquad
        t_i' = \begin{cases} \texttt{mask\_id} & (i, g) \in \texttt{edge},\ z_g = 1 \\
                             t_i & \text{otherwise.} \end{cases}

    The token ids ``batch["token"][ids]`` are replaced by a new tensor (the stored graphs are not
    touched); one draw per group node from torch's generator (the run's seed), none when ``p`` is 0.
    Returns ``batch``. The entity masking of K-BERT (:func:`mask_matched_words`) and of the relation
    trees (:func:`graphmatch.graphs.relation_kbert.mask_entities`).
    """
    group_type = edge[2]
    if p <= 0 or edge not in batch.edge_types or batch[group_type].num_nodes in (None, 0):
        return batch
    token, group = batch[edge].edge_index
    tok = batch["token"]
    drawn = torch.rand(batch[group_type].num_nodes, device=token.device) < p
    if eligible is not None:
        drawn &= eligible
    masked = tok[ids].clone()
    masked[token[drawn[group]]] = mask_id
    tok[ids] = masked
    return batch


def mask_matched_words(batch: HeteroData, p: float, mask_id: int, ids: str = "input_ids") -> HeteroData:
    r"""Entity masking (``data.entity_mask``): each matched word that kept a branch (a ``word``
    node; its trunk tokens are the ``(token, in, word)`` edges) is drawn with probability ``p``,
    and every trunk token of a drawn word is replaced by ``mask_id``; its branch stays as it was
    (:func:`mask_groups` over ``(token, in, word)``):

    .. math::
        z_w \sim \operatorname{Bernoulli}(p), \qquad
        t_i' = \begin{cases} \texttt{mask\_id} & i \text{ a trunk token of a word } w \text{ with } z_w = 1 \\
                             t_i & \text{otherwise.} \end{cases}
    """
    return mask_groups(batch, p, mask_id, WORD_EDGE, ids=ids)


def second_text(input_ids: Tensor, sep_id: int) -> Tensor:
    """``[B, L]`` bool: the tokens of a pair's text b (and the separators after text a's first),
    counted by the separator tokens before each: BERT's ``[CLS] a [SEP] b [SEP]`` and XLM-R /
    e5's ``<s> a </s></s> b </s>`` alike (a branch follows its word, so it sits in its word's text)."""
    sep = input_ids == sep_id
    return (sep.cumsum(1) - sep.long()) >= 1


def visible_edge_index(data: HeteroData, apart_sep_id: int | None = None) -> Tensor:
    """The ``(token, sees, token)`` pairs of one graph or a batch, as a ``[2, E]`` edge index
    over the (batched) token nodes, self-pairs included. With ``apart_sep_id`` (the separator's
    id) a pair's two texts are read apart, as ``pair_encoding="separate"`` reads them: no pair of
    tokens from different texts (:func:`second_text`)."""
    graph, local, ptr, length = _token_layout(data)
    visible, _ = visibility_mask(data)
    if apart_sep_id is not None:
        ids = torch.full((len(ptr) - 1, length), -1, dtype=torch.long, device=visible.device)
        ids[graph, local] = data["token"].input_ids
        b = second_text(ids, apart_sep_id)
        visible = visible & (b.unsqueeze(2) == b.unsqueeze(1))
    g, i, j = visible.nonzero(as_tuple=True)
    return torch.stack([ptr[g] + i, ptr[g] + j])


__all__ = ["IGNORE_INDEX", "SPECIAL_TAGS", "SentenceTreeBuilder", "dense_inputs", "fold", "mask_groups",
           "mask_matched_words", "second_text",
           "tree_graph", "visibility_mask", "visible_edge_index"]
