r"""Additive attention pooling: one scalar weight per element of each set."""

from __future__ import annotations

import torch
from torch import Tensor
from torch_geometric.index import ptr2index
from torch_geometric.nn.aggr import Aggregation
from torch_geometric.utils import softmax

from graphmatch.nn.inits import check_init, glorot_normal_


class AdditiveAttentionPooling(Aggregation):
    r"""Additive attention pooling of each set's elements (one scalar weight per element), from
    the `"Attention-Based Bidirectional Long Short-Term Memory Networks for Relation Classification"
    <https://aclanthology.org/P16-2034>`_ paper (no projection) and the `"Semantic Relation
    Classification via Bidirectional LSTM Networks with Entity-aware Attention using Latent
    Entity Typing" <https://arxiv.org/abs/1901.08163>`_ paper (projected keys plus a per-set query).

    With ``attention_channels=None`` (Att-BLSTM):

    .. math::
        \alpha_i = \mathrm{softmax}_{i \in g}\big(\mathbf{w}^{\top} \tanh(\mathbf{k}_i)\big),
        \qquad \mathbf{r}_g = \sum_{i \in g} \alpha_i \mathbf{x}_i

    otherwise (entity-aware attention, :math:`\mathbf{q}_g` one query per set):

    .. math::
        \mathbf{u}_i = \tanh\big(\mathbf{W}_K \mathbf{k}_i + \mathbf{W}_Q \mathbf{q}_{g(i)}
        + \mathbf{b}\big), \qquad
        \alpha_i = \mathrm{softmax}_{i \in g}(\mathbf{v}^{\top} \mathbf{u}_i), \qquad
        \mathbf{r}_g = \sum_{i \in g} \alpha_i \mathbf{x}_i

    (:math:`\mathbf{b} = 0` with ``bias=False``, as in Lee et al.'s equation and code). The keys
    :math:`\mathbf{k}_i` default to the pooled values :math:`\mathbf{x}_i`. The softmax
    runs over each set (``index`` or ``ptr``) with :func:`torch_geometric.utils.softmax`; an empty
    set pools to zeros.

    Args:
        key_channels (int): size of the keys :math:`\mathbf{k}_i`.
        attention_channels (int, optional): size of :math:`\mathbf{u}_i`; :obj:`None` scores
            :math:`\tanh(\mathbf{k}_i)` directly. (default: :obj:`None`)
        query_channels (int, optional): size of the per-set query :math:`\mathbf{q}_g`; needs
            ``attention_channels``. (default: :obj:`None`)
        bias (bool): learn :math:`\mathbf{b}`. (default: :obj:`True`)
        init (str): ``"default"`` (PyTorch's ``Linear`` init, :math:`\mathbf{w}` uniform in
            :math:`\pm 1/\sqrt{F}`) or ``"glorot"`` (Glorot-normal matrices and :math:`\mathbf{w}`,
            zero bias, as the papers' TensorFlow code). (default: ``"default"``)

    Shapes:
        - **input:** values :math:`(N, F)`, ``index`` :math:`(N)` or ``ptr`` :math:`(G + 1)`,
          ``key`` :math:`(N, F_k)` (optional), ``query`` :math:`(G, F_q)`
        - **output:** :math:`(G, F)`, and with ``return_attention_weights=True`` also the
          weights :math:`(N)`
    """

    def __init__(
        self,
        key_channels: int,
        attention_channels: int | None = None,
        query_channels: int | None = None,
        bias: bool = True,
        init: str = "default",
    ):
        super().__init__()
        if query_channels is not None and attention_channels is None:
            raise ValueError("AdditiveAttentionPooling: a query needs attention_channels (the size of u_i)")
        self.key_channels = key_channels
        self.attention_channels = attention_channels
        self.query_channels = query_channels
        self.init = check_init(init, "AdditiveAttentionPooling")
        score_channels = key_channels if attention_channels is None else attention_channels
        self.key_lin = (
            torch.nn.Linear(key_channels, attention_channels, bias=bias) if attention_channels else None
        )
        self.query_lin = (
            torch.nn.Linear(query_channels, attention_channels, bias=False) if query_channels else None
        )
        self.score = torch.nn.Parameter(torch.empty(score_channels))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for lin in (self.key_lin, self.query_lin):
            if lin is not None:
                lin.reset_parameters()
                if self.init == "glorot":
                    glorot_normal_(lin.weight)
                    if lin.bias is not None:
                        torch.nn.init.zeros_(lin.bias)
        if self.init == "glorot":
            glorot_normal_(self.score)
        else:
            bound = self.score.numel() ** -0.5
            torch.nn.init.uniform_(self.score, -bound, bound)

    def forward(
        self,
        x: Tensor,
        index: Tensor | None = None,
        ptr: Tensor | None = None,
        dim_size: int | None = None,
        dim: int = -2,
        key: Tensor | None = None,
        query: Tensor | None = None,
        return_attention_weights: bool = False,
    ) -> Tensor | tuple[Tensor, Tensor]:
        self.assert_two_dimensional_input(x, dim)
        key = x if key is None else key
        if key.dim() != 2 or key.size(0) != x.size(0) or key.size(1) != self.key_channels:
            raise ValueError(
                f"AdditiveAttentionPooling: key must be [{x.size(0)}, {self.key_channels}], got {list(key.shape)}"
            )
        if (query is None) != (self.query_lin is None):
            raise ValueError(
                "AdditiveAttentionPooling: pass a query exactly when built with query_channels "
                f"(query_channels={self.query_channels}, query given: {query is not None})"
            )
        if self.key_lin is None:
            u = torch.tanh(key)
        else:
            u = self.key_lin(key)
            if query is not None:
                if index is None:
                    index = ptr2index(ptr, x.size(0)) if ptr is not None else x.new_zeros(
                        x.size(0), dtype=torch.long)
                if query.size(0) != dim_size:
                    raise ValueError(
                        f"AdditiveAttentionPooling: query has {query.size(0)} rows for {dim_size} sets"
                    )
                u = u + self.query_lin(query)[index]
            u = torch.tanh(u)
        alpha = softmax(u @ self.score, index, ptr, dim_size, dim=0)
        out = self.reduce(alpha.unsqueeze(-1) * x, index, ptr, dim_size, dim, reduce="sum")
        return (out, alpha) if return_attention_weights else out

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}({self.key_channels}, attention_channels={self.attention_channels}, "
            f"query_channels={self.query_channels}, init={self.init!r})"
        )

