"""Multi-dimensional graph attention (MD-GAT), the attention operator of LET."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor
from torch_geometric.nn.conv import MessagePassing
from torch_geometric.nn.dense.linear import Linear
from torch_geometric.utils import is_torch_sparse_tensor, softmax, to_edge_index

PairTensor = tuple[Tensor, Tensor]


class MDGATConv(MessagePassing):
    r"""The multi-dimensional graph attention operator from the `"LET: Linguistic Knowledge
    Enhanced Graph Transformer for Chinese Short Text Matching"
    <https://arxiv.org/abs/2102.12671>`_ paper (Lyu et al., AAAI 2021).

    Every edge :math:`j \to i` gets a scalar score from the projected query and key, plus a
    score *vector* that depends on the source alone; the sum is normalised over the
    neighbours of :math:`i` separately for every feature (and head :math:`h`):

    .. math::
        \hat{\alpha}^h_{i,j} &= \frac{(\mathbf{W}^h_q \mathbf{x}_i)^{\top}
        (\mathbf{W}^h_k \mathbf{x}_j)}{\sqrt{C}}

        \big\Vert_{h=1}^{H} \mathbf{f}^h_m(\mathbf{x}_j) &= \mathbf{W}_2\,\sigma(\mathbf{W}_1
        \mathbf{x}_j + \mathbf{b}_1) + \mathbf{b}_2

        \boldsymbol{\alpha}^h_{i,j} &= \frac{\exp\big(\hat{\alpha}^h_{i,j}\mathbf{1}
        + \mathbf{f}^h_m(\mathbf{x}_j)\big)}{\sum_{k \in \mathcal{N}(i)}
        \exp\big(\hat{\alpha}^h_{i,k}\mathbf{1} + \mathbf{f}^h_m(\mathbf{x}_k)\big)}
        \in \mathbb{R}^{C}

        \mathbf{x}'_i &= \big\Vert_{h=1}^{H} \sum_{j \in \mathcal{N}(i)}
        \boldsymbol{\alpha}^h_{i,j} \odot \mathbf{W}^h_v \mathbf{x}_j

    with :math:`\sigma` = ReLU and :math:`\Vert` concatenation (or the mean over heads when
    ``concat=False``). A node without incoming edges receives :math:`\mathbf{0}` (plus the bias).

    Args:
        in_channels (int or tuple): Size of each input sample, or ``(source, destination)``
            sizes for a bipartite graph (source type different from destination type).
        out_channels (int): Size :math:`C` of each output sample per head.
        heads (int, optional): Number of attention heads :math:`H`. (default: :obj:`1`)
        concat (bool, optional): Concatenate the heads (else average them).
            (default: :obj:`True`)
        dropout (float, optional): Dropout probability of the normalised attention
            coefficients. (default: :obj:`0.`)
        bias (bool, optional): Learn an additive output bias. (default: :obj:`True`)
        **kwargs (optional): Additional arguments of
            :class:`torch_geometric.nn.conv.MessagePassing`.

    Shapes:
        - **input:**
          node features :math:`(|\mathcal{V}|, F_{in})` or
          :math:`((|\mathcal{V_s}|, F_{s}), (|\mathcal{V_t}|, F_{t}))` if bipartite,
          edge indices :math:`(2, |\mathcal{E}|)` (row 0 source, row 1 destination) or a
          transposed sparse adjacency :math:`(|\mathcal{V_t}|, |\mathcal{V_s}|)`
        - **output:** node features :math:`(|\mathcal{V}_t|, H * C)` (or :math:`C` when
          ``concat=False``); with ``return_attention_weights=True`` also
          ``(edge_index, alpha)`` with ``edge_index`` :math:`(2, |\mathcal{E}|)` (source,
          destination) and ``alpha`` :math:`(|\mathcal{E}|, H, C)`, which sums to one over the
          incoming edges of each destination for every head and feature.
    """

    def __init__(
        self,
        in_channels: int | tuple[int, int],
        out_channels: int,
        heads: int = 1,
        concat: bool = True,
        dropout: float = 0.0,
        bias: bool = True,
        **kwargs,
    ) -> None:
        kwargs.setdefault("aggr", "add")
        super().__init__(node_dim=0, **kwargs)
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.heads = heads
        self.concat = concat
        self.dropout = dropout
        if isinstance(in_channels, int):
            in_channels = (in_channels, in_channels)
        src, dst = in_channels
        width = heads * out_channels
        self.lin_query = Linear(dst, width, bias=False)
        self.lin_key = Linear(src, width, bias=False)
        self.lin_value = Linear(src, width, bias=False)
        self.lin_score1 = Linear(src, width)
        self.lin_score2 = Linear(width, width)
        out = width if concat else out_channels
        self.bias = torch.nn.Parameter(torch.empty(out)) if bias else None
        self._alpha: Tensor | None = None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        super().reset_parameters()
        for lin in (self.lin_query, self.lin_key, self.lin_value, self.lin_score1, self.lin_score2):
            lin.reset_parameters()
        if self.bias is not None:
            torch.nn.init.zeros_(self.bias)

    def forward(
        self,
        x: Tensor | PairTensor,
        edge_index: Tensor,
        return_attention_weights: bool = False,
    ) -> Tensor | tuple[Tensor, PairTensor]:
        """Attend from every destination node over its incoming edges.

        Args:
            x: node features, or ``(source, destination)`` features.
            edge_index: ``[2, E]`` (source, destination) or a transposed torch sparse adjacency.
            return_attention_weights: also return ``(edge_index, alpha)``.
        """
        x_src, x_dst = (x, x) if isinstance(x, Tensor) else x
        H, C = self.heads, self.out_channels
        query = self.lin_query(x_dst).view(-1, H, C)
        key = self.lin_key(x_src).view(-1, H, C)
        value = self.lin_value(x_src).view(-1, H, C)
        score = self.lin_score2(F.relu(self.lin_score1(x_src))).view(-1, H, C)
        size = (x_src.size(0), x_dst.size(0))
        out = self.propagate(edge_index, query=query, key=key, value=value, score=score, size=size)
        out = out.reshape(-1, H * C) if self.concat else out.mean(dim=1)
        if self.bias is not None:
            out = out + self.bias
        alpha, self._alpha = self._alpha, None
        if not return_attention_weights:
            return out
        assert alpha is not None
        if is_torch_sparse_tensor(edge_index):
            index, _ = to_edge_index(edge_index)  # (destination, source) of the transposed adjacency
            edge_index = index.flip(0)
        return out, (edge_index, alpha)

    def message(
        self,
        query_i: Tensor,
        key_j: Tensor,
        value_j: Tensor,
        score_j: Tensor,
        index: Tensor,
        ptr: Tensor | None,
        size_i: int | None,
    ) -> Tensor:
        pair = (query_i * key_j).sum(dim=-1, keepdim=True) / math.sqrt(self.out_channels)
        alpha = softmax(pair + score_j, index, ptr, size_i)  # [E, H, C]: per feature
        self._alpha = alpha
        alpha = F.dropout(alpha, p=self.dropout, training=self.training)
        return alpha * value_j

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.in_channels}, {self.out_channels}, heads={self.heads})"
