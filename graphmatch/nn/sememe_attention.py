r"""LET's sememe attention: multi-dimensional self-attention among the sememes of a group (a
sense, or a sentence), before the sememes are pooled into sense vectors."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from graphmatch.nn.mdgat_conv import MDGATConv
from graphmatch.utils.ragged import group_pairs


def group_edges(group: Tensor, num_groups: int | None = None) -> Tensor:
    r"""Every ordered pair :math:`k \to n` of elements in the same group, self-loops included,
    as ``[2, E]`` (source, destination) edges with :math:`E = \sum_g n_g^2` (vectorised).

    Args:
        group: ``[N]`` group of each element (any order).
        num_groups: number of groups (default: ``group.max() + 1``).
    """
    if num_groups is None:
        num_groups = int(group.max()) + 1 if group.numel() else 0
    idx = torch.arange(group.numel(), device=group.device)
    dst, src = group_pairs(idx, group, idx, group, num_groups)
    return torch.stack([src, dst])


class SememeAttention(nn.Module):
    r"""The sememe attention of LET (`"LET: Linguistic Knowledge Enhanced Graph Transformer for
    Chinese Short Text Matching" <https://arxiv.org/abs/2102.12671>`_, Lyu et al., AAAI 2021):
    every sememe attends over the sememes of its group with multi-dimensional attention
    (:class:`MDGATConv`), followed by a two-layer MLP, a residual connection and LayerNorm. The
    released code (``lbe0613/LET``, ``AttentionBlock``: ``FastDiSA`` with ``has_mlp=True``, then
    ``LayerNorm(V + H)``) runs it before pooling the sememes into sense vectors.

    .. math::
        \mathbf{m}_n &= \text{MD-GAT}\big(\mathbf{e}_n,\ \{\mathbf{e}_k : k \in g(n)\}\big)

        \mathbf{e}'_n &= \operatorname{LayerNorm}\big(\mathbf{e}_n + \mathbf{W}_4\,
        \operatorname{ReLU}(\mathbf{W}_3 \mathbf{m}_n + \mathbf{b}_3) + \mathbf{b}_4\big)

    where :math:`g(n)` is the group of sememe :math:`n` (itself included): the sememes of its
    sense (the paper) or of its sentence (the released code). The MD-GAT weights are normalised
    over :math:`g(n)` separately for every head and feature; as in the released code the MD-GAT
    has no output bias. With ``mlp=False`` the MLP is left out:
    :math:`\mathbf{e}'_n = \operatorname{LayerNorm}(\mathbf{e}_n + \mathbf{m}_n)`.

    Args:
        channels (int): width :math:`d` of the sememe vectors.
        heads (int, optional): MD-GAT heads (must divide :math:`d`). (default: :obj:`4`)
        dropout (float, optional): dropout of the attention weights and inside the MLP.
            (default: :obj:`0.`)
        mlp (bool, optional): the MLP :math:`d \to 2d \to d` after the attention.
            (default: :obj:`True`)

    Shapes:
        - **input:** sememes :math:`(N, d)`, ``group`` :math:`(N)` (the group of each sememe,
          e.g. the target row of the ``(sememe, of, sense)`` edges), ``num_groups`` :math:`G`
        - **output:** :math:`(N, d)`; with ``return_attention_weights=True`` also
          ``(edge_index, alpha)``, ``edge_index`` :math:`(2, \sum_g n_g^2)` and ``alpha``
          :math:`(\sum_g n_g^2, H, d/H)`, summing to one over each destination's group
    """

    def __init__(self, channels: int, heads: int = 4, dropout: float = 0.0, mlp: bool = True) -> None:
        super().__init__()
        if channels % heads:
            raise ValueError(f"SememeAttention: channels ({channels}) must be divisible by heads ({heads})")
        self.channels, self.heads = channels, heads
        self.attention = MDGATConv(channels, channels // heads, heads=heads, dropout=dropout, bias=False)
        self.mlp: nn.Module | None = None
        if mlp:
            self.mlp = nn.Sequential(nn.Linear(channels, 2 * channels), nn.ReLU(), nn.Dropout(dropout),
                                     nn.Linear(2 * channels, channels))
        self.dropout = nn.Dropout(dropout)
        self.norm = nn.LayerNorm(channels)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        self.attention.reset_parameters()
        if self.mlp is not None:
            for layer in self.mlp:
                if isinstance(layer, nn.Linear):
                    layer.reset_parameters()
        self.norm.reset_parameters()

    def forward(self, x: Tensor, group: Tensor, num_groups: int | None = None,
                return_attention_weights: bool = False) -> Tensor | tuple[Tensor, tuple[Tensor, Tensor]]:
        """Attend within each group, then MLP, residual and LayerNorm.

        Args:
            x: ``[N, d]`` sememe vectors.
            group: ``[N]`` group of each sememe.
            num_groups: number of groups (default: ``group.max() + 1``).
            return_attention_weights: also return ``(edge_index, alpha)``.
        """
        edge_index = group_edges(group, num_groups)
        m, (edge_index, alpha) = self.attention(x, edge_index, return_attention_weights=True)
        if self.mlp is not None:
            m = self.mlp(m)
        out = self.norm(x + self.dropout(m))
        return (out, (edge_index, alpha)) if return_attention_weights else out

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.channels}, heads={self.heads}, mlp={self.mlp is not None})"
