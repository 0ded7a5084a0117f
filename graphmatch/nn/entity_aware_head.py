r"""Entity-aware attention relation head with latent entity types."""

from __future__ import annotations

import torch
from torch import Tensor

from graphmatch.nn.attention_aggr import AttentionPooling
from graphmatch.nn.latent_types import LatentEntityTyping


class EntityAwareAttentionHead(torch.nn.Module):
    r"""The entity-aware attention with latent entity types from the `"Semantic Relation
    Classification via Bidirectional LSTM Networks with Entity-aware Attention using Latent
    Entity Typing" <https://arxiv.org/abs/1901.08163>`_ paper (Lee, Seo and Choi, 2019), as a
    head over any token states (a transformer's instead of the paper's BiLSTM):

    .. math::
        \mathbf{t}_k &= \sum_{j=1}^{K} \mathrm{softmax}_j(\mathbf{h}_{e_k}^{\top}\mathbf{c}_j)\,\mathbf{c}_j

        \mathbf{u}_i &= \tanh\big(\mathbf{W}^{H}[\mathbf{h}_i; \mathbf{p}^{e_1}_i; \mathbf{p}^{e_2}_i]
        + \mathbf{W}^{E}[\mathbf{h}_{e_1}; \mathbf{t}_1; \mathbf{h}_{e_2}; \mathbf{t}_2]\big), \qquad
        \alpha_i = \mathrm{softmax}_i(\mathbf{v}^{\top}\mathbf{u}_i)

        \mathbf{z} &= \sum_i \alpha_i \mathbf{h}_i, \qquad
        p(y \mid S) = \mathrm{softmax}\big(\mathbf{W}\,\mathrm{dropout}(\mathbf{z}) + \mathbf{b}\big)

    :math:`\mathbf{h}_{e_k}` is entity :math:`k`'s state (the mean of its tokens' states),
    :math:`\mathbf{c}_j` the :math:`K` latent types (:class:`~graphmatch.nn.LatentEntityTyping`),
    :math:`\mathbf{p}^{e_k}_i` the embedding of token :math:`i`'s relative position to entity
    :math:`k` (one table for both), and the attention an :class:`~graphmatch.nn.AttentionPooling`
    over each sentence's tokens.

    Args:
        channels (int): size :math:`F` of the token states.
        num_classes (int): number of relation labels.
        num_positions (int): rows of the relative-position table (:math:`2D + 1`).
        position_dim (int): relative-position embedding size. (default: 50)
        latent_types (int): number of latent entity types :math:`K`. (default: 3)
        attention_size (int): size of :math:`\mathbf{u}_i`. (default: 50)
        dropout (float): dropout on :math:`\mathbf{z}`. (default: 0.1)

    Shapes:
        - **input:** token states ``x`` :math:`(N, F)`, ``pos1``, ``pos2`` :math:`(N)`, entity
          states ``entity`` :math:`(2B, F)` (rows :math:`2g`, :math:`2g + 1`: sentence :math:`g`'s
          e1, e2), ``index`` :math:`(N)` (each token's sentence)
        - **output:** logits :math:`(B, C)`; with ``return_attention=True`` also the token
          weights :math:`(N)` and the type weights :math:`(B, 2, K)`
    """

    def __init__(
        self,
        channels: int,
        num_classes: int,
        num_positions: int,
        position_dim: int = 50,
        latent_types: int = 3,
        attention_size: int = 50,
        dropout: float = 0.1,
    ):
        super().__init__()
        self.position = torch.nn.Embedding(num_positions, position_dim)
        self.typing = LatentEntityTyping(channels, latent_types)
        self.pool = AttentionPooling(channels + 2 * position_dim, attention_size, query_channels=4 * channels)
        self.dropout = torch.nn.Dropout(dropout)
        self.classifier = torch.nn.Linear(channels, num_classes)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for module in (self.position, self.typing, self.pool, self.classifier):
            module.reset_parameters()

    def forward(
        self, x: Tensor, pos1: Tensor, pos2: Tensor, entity: Tensor, index: Tensor, return_attention: bool = False
    ) -> Tensor | tuple[Tensor, Tensor, Tensor]:
        num_graphs = entity.size(0) // 2
        if entity.size(0) != 2 * num_graphs or entity.size(1) != x.size(1):
            raise ValueError(f"EntityAwareAttentionHead: expected entity states [2B, {x.size(1)}], "
                             f"got {list(entity.shape)}")
        types, type_weights = self.typing(entity, return_attention_weights=True)
        query = torch.cat([entity, types], dim=-1).view(num_graphs, -1)  # [B, (h_e1; t1; h_e2; t2)]
        key = torch.cat([x, self.position(pos1), self.position(pos2)], dim=-1)
        z, alpha = self.pool(x, index=index, dim_size=num_graphs, key=key, query=query, return_attention_weights=True)
        logits = self.classifier(self.dropout(z))
        if not return_attention:
            return logits
        return logits, alpha, type_weights.view(num_graphs, 2, -1)
