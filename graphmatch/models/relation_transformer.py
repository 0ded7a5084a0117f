r"""Relation classifier over a pretrained transformer, on word-piece relation sentence graphs."""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor
from torch_geometric.data import HeteroData
from torch_geometric.utils import cumsum, scatter, to_dense_batch

from graphmatch.graphs.kbert import visibility_mask
from graphmatch.graphs.relation_kbert import VALUE
from graphmatch.models.renamed_keys import accept_renamed_keys
from graphmatch.nn.branch_marking import BranchMarking
from graphmatch.nn.entity_aware_head import EntityAwareAttentionHead
from graphmatch.nn.entity_start import EntityStartHead
from graphmatch.utils.deprecated import old_arguments
from graphmatch.utils.ragged import batch_vector

HEADS = ("entity_start", "entity_attention")


def pack_pairs(counts: Tensor) -> tuple[Tensor, Tensor, int]:
    """Two sentences per row: the :math:`k`-th longest shares a row with the :math:`k`-th
    shortest (the middle one of an odd count is alone). Returns each sentence's row and column
    offset, and the row width (the longest row)."""
    b = counts.numel()
    order = torch.argsort(counts, descending=True, stable=True)
    rank = torch.empty_like(order)
    rank[order] = torch.arange(b, device=counts.device)
    rows = (b + 1) // 2
    first = rank < rows
    row = torch.where(first, rank, b - 1 - rank)
    offset = torch.where(first, 0, counts[order[row]])
    width = int(scatter(counts, row, dim=0, dim_size=rows, reduce="sum").max()) if b else 0
    return row, offset, width


@dataclass(frozen=True)
class RelationTransformerConfig:
    """The settings of :class:`RelationTransformer` (its encoder is a module of its own).

    Args:
        num_classes (int): number of relation labels.
        head (str): ``"entity_start"`` or ``"entity_attention"``. (default: ``"entity_start"``)
        dropout (float): the head's dropout. (default: 0.1)
        num_positions (int): relative-position table size of ``entity_attention``. (default: 101)
        position_dim, latent_types, attention_size (int): ``entity_attention``'s sizes.
            (default: 50, 3, 50)
        hidden_channels (int, optional): R-BERT's per-part projection of ``entity_start``.
        pack (bool): two sentences per encoder row. (default: :obj:`True`)
        pad_id (int): id of the padding piece. (default: 0)
        branch_embedding, branch_bias (bool): with sentence trees, K-BERT's branch tokens marked by a
            learned embedding and a per-layer, per-head attention bias between trunk and branch tokens
            (:class:`~graphmatch.nn.branch_marking.BranchMarking`, zero-initialised). (default: :obj:`False`)
    """

    num_classes: int
    head: str = "entity_start"
    dropout: float = 0.1
    num_positions: int = 101
    position_dim: int = 50
    latent_types: int = 3
    attention_size: int = 50
    hidden_channels: int | None = None
    pack: bool = True
    pad_id: int = 0
    branch_embedding: bool = False
    branch_bias: bool = False


class RelationTransformer(torch.nn.Module):
    r"""A pretrained BERT-family encoder under one of two relation heads, over the word-piece
    relation graph of :class:`~graphmatch.graphs.relation.RelationGraphBuilder` (``[CLS]``, the
    pieces with the four entity markers, ``[SEP]``):

    - ``entity_start``: :class:`~graphmatch.nn.EntityStartHead`, :math:`[\mathbf{h}_{\mathrm{[CLS]}};
      \mathbf{h}_{\langle e_1\rangle}; \mathbf{h}_{\langle e_2\rangle}]` ("Matching the Blanks",
      Baldini Soares et al., 2019; R-BERT, Wu and He, 2019), the marker states read through the
      ``("token", "starts", "entity")`` edges;
    - ``entity_attention``: :class:`~graphmatch.nn.EntityAwareAttentionHead`, the entity-aware
      attention with latent entity types of Lee et al. (2019) over the transformer states (the
      head of :class:`~graphmatch.models.entity_attention.EntityAttentionBiLSTM`), entity states
      the mean over the ``("token", "in", "entity")`` edges, position features
      :math:`[\mathbf{p}^{e_1}_i; \mathbf{p}^{e_2}_i]` from the relative-position table ``position``.

    .. math::
        \mathbf{H} = \mathrm{Encoder}(\text{pieces}), \qquad p(y \mid S) = \mathrm{Head}(\mathbf{H})

    The batch's token nodes become rows of the encoder input either one sentence per row,
    padded to the longest (``pack=False``), or two sentences per row (``pack=True``): the
    longest with the shortest, each attending only to itself through a block-diagonal mask,
    positions counted from each sentence's start. Both give the same states; packing spends
    about a third less work on padding.

    Checkpoints of releases before the shared head load unchanged: their parameter names are
    mapped on load by :attr:`RENAMED_KEYS` (old prefix → new: ``head.position.`` → ``position.``).

    Args:
        encoder: a ``transformers`` ``BertModel`` (any BERT-family encoder taking ``input_ids``,
            a 4D additive ``attention_mask`` and ``position_ids``).
        config (RelationTransformerConfig): the head and its sizes. (The loose arguments of old
            calls, ``RelationTransformer(encoder, num_classes, head=...)``, still work, with a
            ``DeprecationWarning``, until the next release.)

    Shapes:
        - **input:** a (batched) word-piece relation graph with :math:`N` tokens in :math:`B` sentences
        - **output:** logits :math:`(B, C)`; with ``return_attention=True`` also
          ``{"token": (N,), "types": (B, 2, K)}`` for ``entity_attention``
    """

    #: parameter names of releases before the shared head: old prefix -> new prefix
    RENAMED_KEYS = {"head.position.": "position."}

    def __init__(self, encoder: torch.nn.Module, config: RelationTransformerConfig | Any = None, *args: Any,
                 **kwargs: Any):
        super().__init__()
        config = old_arguments("RelationTransformer", RelationTransformerConfig, config, args, kwargs)
        #: the settings it was made with
        self.config = config
        head, num_classes, dropout = config.head, config.num_classes, config.dropout
        self.encoder = encoder
        self.head_name = head
        self.pack = config.pack
        self.pad_id = config.pad_id
        #: the position-table row of position 0 (2 for XLM-R: :func:`graphmatch.pretrained.position_offset`)
        self.position_offset = getattr(encoder.config, "position_offset", 0)
        channels = encoder.config.hidden_size
        if head == "entity_start":
            self.head: torch.nn.Module = EntityStartHead(channels, num_classes, dropout, config.hidden_channels)
        else:
            self.position = torch.nn.Embedding(config.num_positions, config.position_dim)
            self.head = EntityAwareAttentionHead(channels, num_classes, 2 * config.position_dim, config.latent_types,
                                                 config.attention_size, dropout)
            # as the head did when it held the table: every part built, then every part reset
            self.position.reset_parameters()
            self.head.reset_parameters()
        shape = encoder.config
        #: the marks of the branch tokens (``None`` without them)
        self.branch_marking = BranchMarking(channels, shape.num_hidden_layers, shape.num_attention_heads,
                                            config.branch_embedding, config.branch_bias) \
            if config.branch_embedding or config.branch_bias else None
        accept_renamed_keys(self)

    def encode(self, data: HeteroData) -> Tensor:
        """The encoder state of every token node, ``[N, F]``. Sentence trees (graphs with
        knowledge: ``token.branch``) are read with their soft positions ``token.pos`` and their
        visibility (:func:`~graphmatch.graphs.kbert.visibility_mask`)."""
        tok = data["token"]
        batch, num_graphs = batch_vector(tok), data["sentence"].num_nodes
        trees = "branch" in tok
        if not self.pack:
            ids, mask = to_dense_batch(tok.word_id, batch, fill_value=self.pad_id, batch_size=num_graphs)
            if not trees:
                position = torch.arange(ids.shape[1], device=ids.device).expand_as(ids) + self.position_offset
                out = self.encoder(input_ids=ids, attention_mask=mask.long(), position_ids=position)
                return out.last_hidden_state[mask]
            position, _ = to_dense_batch(tok.pos, batch, fill_value=0, batch_size=num_graphs)
            branch, _ = to_dense_batch(tok.branch, batch, fill_value=False, batch_size=num_graphs)
            visible, _ = visibility_mask(data, value=VALUE)
            return self._encode_tree(ids, position, visible, branch)[mask]
        counts = torch.bincount(batch, minlength=num_graphs)
        row, offset, width = pack_pairs(counts)
        local = torch.arange(batch.numel(), device=batch.device) - cumsum(counts)[batch]
        r, c = row[batch], offset[batch] + local
        rows = int(row.max()) + 1
        ids = tok.word_id.new_full((rows, width), self.pad_id)
        ids[r, c] = tok.word_id
        position = torch.zeros_like(ids)
        position[r, c] = tok.pos if trees else local
        if trees:  # each tree's visibility, put where its sentence lies in its row
            seen, _ = visibility_mask(data, value=VALUE)
            g, i, j = seen.nonzero(as_tuple=True)
            visible = torch.zeros((rows, width, width), dtype=torch.bool, device=ids.device)
            visible[row[g], offset[g] + i, offset[g] + j] = True
            branch = torch.zeros_like(ids, dtype=torch.bool)
            branch[r, c] = tok.branch
            return self._encode_tree(ids, position, visible, branch)[r, c]
        owner = torch.full_like(ids, -1)
        owner[r, c] = batch
        visible = (owner.unsqueeze(2) == owner.unsqueeze(1)) & (owner >= 0).unsqueeze(1)
        out = self.encoder(input_ids=ids, attention_mask=self._additive(visible),
                           position_ids=position + self.position_offset)
        return out.last_hidden_state[r, c]

    def _encode_tree(self, ids: Tensor, position: Tensor, visible: Tensor, branch: Tensor,
                     attentions: bool = False) -> Tensor | tuple[Tensor, list[Tensor]]:
        """The encoder's states ``[B, L, F]`` of dense sentence-tree rows, with the branch marks if any;
        with ``attentions`` also each layer's attention weights ``[B, H, L, L]``."""
        mask = self._additive(visible)
        marking = self.branch_marking
        tokens = {"input_ids": ids} if marking is None or marking.embedding is None else \
            {"inputs_embeds": marking.embed(self.encoder.embeddings.word_embeddings(ids), branch)}
        with marking.hf_layer_masks(self.encoder.encoder.layer, mask, branch, visible) if marking is not None \
                else nullcontext():
            out = self.encoder(**tokens, attention_mask=mask, position_ids=position + self.position_offset,
                               output_attentions=attentions)
        return (out.last_hidden_state, list(out.attentions)) if attentions else out.last_hidden_state

    def tree_attention(self, data: HeteroData) -> list[Tensor]:
        """Each layer's attention weights ``[B, H, L, L]`` over sentence trees, one sentence per row
        in its graph's token order (the layout of :func:`~graphmatch.graphs.kbert.visibility_mask`),
        computed with the encoder's eager attention (the fused kernels keep no weights)."""
        tok = data["token"]
        batch, num_graphs = batch_vector(tok), data["sentence"].num_nodes
        ids, _ = to_dense_batch(tok.word_id, batch, fill_value=self.pad_id, batch_size=num_graphs)
        position, _ = to_dense_batch(tok.pos, batch, fill_value=0, batch_size=num_graphs)
        branch, _ = to_dense_batch(tok.branch, batch, fill_value=False, batch_size=num_graphs)
        visible, _ = visibility_mask(data, value=VALUE)
        config = self.encoder.config
        kernel = config._attn_implementation
        self.encoder.set_attn_implementation("eager")
        try:
            _, weights = self._encode_tree(ids, position, visible, branch, attentions=True)
        finally:
            self.encoder.set_attn_implementation(kernel)
        return weights

    def _additive(self, visible: Tensor) -> Tensor:
        """A ``[B, L, L]`` visibility as the encoder's 4D additive mask ``[B, 1, L, L]``: 0 where
        visible, the dtype's lowest value elsewhere (a boolean 4D mask is wrong under eager attention)."""
        dtype = next(self.encoder.parameters()).dtype
        mask = torch.zeros(visible.shape, dtype=dtype, device=visible.device)
        return mask.masked_fill_(~visible, torch.finfo(dtype).min).unsqueeze(1)

    def forward(self, data: HeteroData, return_attention: bool = False) -> Tensor | tuple[Tensor, dict]:
        tok = data["token"]
        batch, num_graphs = batch_vector(tok), data["sentence"].num_nodes
        if data["entity"].num_nodes != 2 * num_graphs:
            raise ValueError(f"expected 2 entity nodes per sentence, got {data['entity'].num_nodes} for {num_graphs}")
        h = self.encode(data)
        if self.head_name == "entity_start":
            if ("token", "starts", "entity") not in data.edge_types:
                raise ValueError("the entity_start head needs graphs built with entity markers (data.markers: true)")
            src, dst = data["token", "starts", "entity"].edge_index
            entity = h.new_zeros(2 * num_graphs, h.size(1)).index_copy(0, dst, h[src])
            first = cumsum(torch.bincount(batch, minlength=num_graphs))[:-1]  # [CLS] opens each sentence
            logits = self.head(h[first], entity)
            return (logits, {}) if return_attention else logits
        src, dst = data["token", "in", "entity"].edge_index
        entity = scatter(h[src], dst, dim=0, dim_size=2 * num_graphs, reduce="mean")
        positions = torch.cat([self.position(tok.pos1), self.position(tok.pos2)], dim=-1)
        out = self.head(h, positions, entity, batch, return_attention=return_attention)
        if not return_attention:
            return out
        logits, alpha, types = out
        return logits, {"token": alpha, "types": types}
