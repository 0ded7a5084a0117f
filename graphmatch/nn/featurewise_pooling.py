r"""Feature-wise attention pooling: one softmax per output feature (LET's ``att-pooling``)."""

from __future__ import annotations

from torch import nn
from torch_geometric.nn.aggr import AttentionalAggregation


class FeatureWiseAttentionPooling(AttentionalAggregation):
    r"""Multi-dimensional source-to-token attention pooling of each set, as used by LET
    (`"LET: Linguistic Knowledge Enhanced Graph Transformer for Chinese Short Text Matching"
    <https://arxiv.org/abs/2102.12671>`_) for words from characters, senses from sememes,
    characters from words and sentences from characters (after `"DiSAN"
    <https://arxiv.org/abs/1709.04696>`_'s multi-dimensional attention).

    Every element :math:`\mathbf{x}_n` of a set :math:`g` scores each output feature on its own,
    and the scores are normalised over the set separately per feature:

    .. math::
        \mathbf{s}_n &= \mathbf{W}_2\,\sigma(\mathbf{W}_1 \mathbf{x}_n + \mathbf{b}_1) + \mathbf{b}_2

        \boldsymbol{\alpha}_n &= \operatorname{softmax}_{n \in g}(\mathbf{s}_n)
        \quad\text{(per feature)}

        \mathbf{r}_g &= \sum_{n \in g} \boldsymbol{\alpha}_n \odot \mathbf{W}_v \mathbf{x}_n

    with :math:`\sigma` = ReLU. It is PyG's :class:`~torch_geometric.nn.aggr.AttentionalAggregation`
    with feature-level gating; an empty set pools to zeros.

    Args:
        in_channels (int): size of each element.
        out_channels (int): size of each pooled vector.
        hidden_channels (int, optional): width of the scoring MLP (default: ``in_channels``).
        dropout (float, optional): dropout inside the scoring MLP. (default: :obj:`0.`)

    Shapes:
        - **input:** elements :math:`(N, F_{in})`, ``index`` :math:`(N)` (set of each element)
          or ``ptr`` :math:`(G + 1)`, ``dim_size`` :math:`G`
        - **output:** :math:`(G, F_{out})`
    """

    def __init__(self, in_channels: int, out_channels: int, hidden_channels: int | None = None,
                 dropout: float = 0.0) -> None:
        hidden = hidden_channels or in_channels
        gate = nn.Sequential(nn.Linear(in_channels, hidden), nn.ReLU(), nn.Dropout(dropout),
                             nn.Linear(hidden, out_channels))
        super().__init__(gate_nn=gate, nn=nn.Linear(in_channels, out_channels, bias=False))
        self.in_channels = in_channels
        self.out_channels = out_channels

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.in_channels}, {self.out_channels})"
