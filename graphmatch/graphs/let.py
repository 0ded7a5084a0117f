"""LET's lattice pair graph: two sentences, their word lattice, HowNet senses and sememes.

One :class:`~torch_geometric.data.HeteroData` per sentence pair (schema in ``docs/let.md``)::

    token   input_ids, sent (0 for [CLS] a [SEP], 1 for b [SEP]; also BERT's segment id),
            char_index (offset in its sentence, -1 for [CLS]/[SEP]); in order [CLS] a [SEP] b [SEP],
            so a token's position is its index in the graph
    word    span [W, 2] (start, end) character offsets in its sentence, end exclusive; sent
    sense   sent
    sememe  sememe_id (index into the sememe vocabulary), sent
    (word, contains, token)    a word → each of its characters
    (word, next, word)         A → B when B starts where A ends (same sentence)
    (word, reach_fwd, word)    j → i for every j in N⁺(i): j is i or lies after i on a lattice path
    (sense, of, word)          a sense → its word
    (sememe, of, sense)        a sememe occurrence → its sense

The backward closure N⁻ is ``reach_fwd`` reversed (i → j for every j ∈ N⁺(i)), so it is
not stored. Edges are oriented the way messages flow (source → destination). Cross-sentence character
pairs are not stored: the model forms them per batch from ``token.sent`` (O(n) storage here).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch_geometric.data import HeteroData

from graphmatch.graphs.let_core import (
    ALL_SEGMENTERS,
    EDGE_TYPES,
    NODE_TYPES,
    LatticePairCore,
    parse_segmenters,
    sememe_vocabulary,
)
from graphmatch.utils.ragged import group_pairs

#: version of the lattice pair graphs (this module, let_core) this builder writes: bump it whenever
#: they change (tests/data/test_builder_formats.py fails until the checksum recorded there is updated)
FORMAT_VERSION = 1


class LatticePairBuilder(LatticePairCore):
    """Builds LET's lattice pair graph for ``(text_a, text_b)`` as a :class:`HeteroData`.

    Takes the arguments of :class:`~graphmatch.graphs.let_core.LatticePairCore`:
    ``LatticePairBuilder(tokenizer, lexicon, options=LatticeOptions(...), *, sememe_index=None,
    keep_text=False, missing="error", pieces=None)``, every setting of the lattice
    (``segmenters``, ``max_length``, ``senses``) in the
    :class:`~graphmatch.graphs.let_options.LatticeOptions`.
    """

    def __call__(self, text_a: str, text_b: str, label: int | None = None) -> HeteroData:
        """The pair graph; :class:`ValueError` for an empty text or a label other than 0 / 1."""
        return pair_graph(self.arrays(text_a, text_b, label))


def pair_graph(stores: dict[Any, dict[str, Any]]) -> HeteroData:
    """The :class:`HeteroData` of :meth:`LatticePairCore.arrays` (NumPy arrays become tensors)."""
    return HeteroData.from_dict({
        key: {name: torch.from_numpy(v) if isinstance(v, np.ndarray) else v for name, v in store.items()}
        for key, store in stores.items()
    })


def char_pair_edges(
    batch: torch.Tensor, sent: torch.Tensor, is_char: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Character → character edges of every pair graph in a batch, built on the batch's device.

    Args:
        batch: ``[N]`` graph of each token (sorted, as PyG batches are).
        sent: ``[N]`` sentence id (0/1) of each token.
        is_char: ``[N]`` True for characters (False for ``[CLS]``/``[SEP]``).

    Returns:
        ``(self_edges, cross_edges)``, each ``[2, E]`` (source, destination): every ordered pair of
        characters of one graph in the same sentence (self-loops included), and in different ones.
    """
    idx = is_char.nonzero().view(-1)
    graph = batch[idx]
    dst, src = group_pairs(idx, graph, idx, graph, int(graph.max()) + 1 if idx.numel() else 0)
    edges = torch.stack([src, dst])
    same = sent[edges[0]] == sent[edges[1]]
    return edges[:, same], edges[:, ~same]


__all__ = ["ALL_SEGMENTERS", "EDGE_TYPES", "FORMAT_VERSION", "NODE_TYPES", "LatticePairBuilder", "char_pair_edges",
           "pair_graph", "parse_segmenters", "sememe_vocabulary"]
