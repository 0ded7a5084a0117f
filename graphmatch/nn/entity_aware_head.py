r"""Entity-aware attention relation head with latent entity types."""

from __future__ import annotations

import torch
from torch import Tensor

from graphmatch.nn.additive_pooling import AdditiveAttentionPooling
from graphmatch.nn.latent_types import LatentEntityTyping


class EntityAwareAttentionHead(torch.nn.Module):
    r"""The entity-aware attention with latent entity types from the `"Semantic Relation
    Classification via Bidirectional LSTM Networks with Entity-aware Attention using Latent
    Entity Typing" <https://arxiv.org/abs/1901.08163>`_ paper (Lee, Seo and Choi, 2019), as a
    head over any token states: the paper's BiLSTM
    (:class:`~graphmatch.models.entity_attention.EntityAttentionBiLSTM`) or a transformer
    (:class:`~graphmatch.models.relation_transformer.RelationTransformer`):

    .. math::
        \mathbf{t}_k &= \sum_{j=1}^{K} \mathrm{softmax}_j(\mathbf{h}_{e_k}^{\top}\mathbf{c}_j)\,\mathbf{c}_j

        \mathbf{u}_i &= \tanh\big(\mathbf{W}^{H}[\mathbf{h}_i; \mathbf{p}_i]
        + \mathbf{W}^{E}[\mathbf{h}_{e_1}; \mathbf{t}_1; \mathbf{h}_{e_2}; \mathbf{t}_2] + \mathbf{b}\big), \qquad
        \alpha_i = \mathrm{softmax}_i(\mathbf{v}^{\top}\mathbf{u}_i)

        \mathbf{z} &= \sum_i \alpha_i \mathbf{h}_i, \qquad
        p(y \mid S) = \mathrm{softmax}\big(\mathbf{W}\,\mathrm{dropout}(\mathbf{z}) + \mathbf{c}\big)

    :math:`\mathbf{h}_{e_k}` is entity :math:`k`'s state (given), :math:`\mathbf{c}_j` the
    :math:`K` latent types (:class:`~graphmatch.nn.LatentEntityTyping`), :math:`\mathbf{p}_i`
    token :math:`i`'s position features (the models pass :math:`[\mathbf{p}^{e_1}_i;
    \mathbf{p}^{e_2}_i]`, its relative positions to both entities, embedded), and the attention
    an :class:`~graphmatch.nn.AdditiveAttentionPooling` over each sentence's tokens
    (:math:`\mathbf{b} = 0` with ``bias=False``, as Lee et al.).

    Args:
        channels (int): size :math:`F` of the token and entity states.
        num_classes (int): number of relation labels.
        position_channels (int): size :math:`P` of the position features :math:`\mathbf{p}_i`.
        latent_types (int): number of latent entity types :math:`K`. (default: 3)
        attention_size (int): size of :math:`\mathbf{u}_i`. (default: 50)
        dropout (float): dropout on :math:`\mathbf{z}`. (default: 0.1)
        bias (bool): learn :math:`\mathbf{b}`. (default: :obj:`True`)
        init (str): ``"default"`` or ``"glorot"``, the types' and the attention's initialisation
            (see :class:`~graphmatch.nn.AdditiveAttentionPooling`); the classifier is a PyTorch
            ``Linear``. (default: ``"default"``)

    Shapes:
        - **input:** token states ``x`` :math:`(N, F)`, ``positions`` :math:`(N, P)`, entity
          states ``entity`` :math:`(2B, F)` (rows :math:`2g`, :math:`2g + 1`: sentence :math:`g`'s
          e1, e2), ``index`` :math:`(N)` (each row's sentence; rows may come in any order)
        - **output:** logits :math:`(B, C)`; with ``return_attention=True`` also the weights of
          the rows :math:`(N)` and the type weights :math:`(B, 2, K)`
    """

    def __init__(
        self,
        channels: int,
        num_classes: int,
        position_channels: int,
        latent_types: int = 3,
        attention_size: int = 50,
        dropout: float = 0.1,
        bias: bool = True,
        init: str = "default",
    ):
        super().__init__()
        # every part initialises itself when built: the models that hold this head draw their
        # random numbers in the order they always have (tests/models/test_entity_head_checkpoints.py)
        self.typing = LatentEntityTyping(channels, latent_types, init=init)
        self.pool = AdditiveAttentionPooling(channels + position_channels, attention_size,
                                             query_channels=4 * channels, bias=bias, init=init)
        self.dropout = torch.nn.Dropout(dropout)
        self.classifier = torch.nn.Linear(channels, num_classes)

    def reset_parameters(self) -> None:
        for module in (self.typing, self.pool, self.classifier):
            module.reset_parameters()

    def forward(
        self, x: Tensor, positions: Tensor, entity: Tensor, index: Tensor, return_attention: bool = False
    ) -> Tensor | tuple[Tensor, Tensor, Tensor]:
        num_graphs = entity.size(0) // 2
        if entity.size(0) != 2 * num_graphs or entity.size(1) != x.size(1):
            raise ValueError(f"EntityAwareAttentionHead: expected entity states [2B, {x.size(1)}], "
                             f"got {list(entity.shape)}")
        types, type_weights = self.typing(entity, return_attention_weights=True)
        query = torch.cat([entity, types], dim=-1).view(num_graphs, -1)  # [B, (h_e1; t1; h_e2; t2)]
        key = torch.cat([x, positions], dim=-1)
        z, alpha = self.pool(x, index=index, dim_size=num_graphs, key=key, query=query, return_attention_weights=True)
        logits = self.classifier(self.dropout(z))
        if not return_attention:
            return logits
        return logits, alpha, type_weights.view(num_graphs, 2, -1)
