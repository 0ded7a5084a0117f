r"""Latent entity typing."""

from __future__ import annotations

import torch
from torch import Tensor

from graphmatch.nn.inits import check_init, glorot_normal_


class LatentEntityTyping(torch.nn.Module):
    r"""Latent entity types from the `"Semantic Relation Classification via Bidirectional LSTM
    Networks with Entity-aware Attention using Latent Entity Typing"
    <https://arxiv.org/abs/1901.08163>`_ paper: each entity state attends over :math:`K` learned
    type vectors :math:`\mathbf{c}_1, \dots, \mathbf{c}_K` and is typed by their mixture

    .. math::
        a_{j} = \mathrm{softmax}_{j}\big(\mathbf{h}_e^{\top} \mathbf{c}_j\big), \qquad
        \mathbf{t}_e = \sum_{j=1}^{K} a_{j} \mathbf{c}_j

    Args:
        channels (int): size of entity states and type vectors.
        num_types (int): number of latent types :math:`K`. (default: 3)
        init (str): ``"default"`` (Glorot-uniform type vectors) or ``"glorot"`` (Glorot-normal,
            truncated, as the paper's TensorFlow code). (default: ``"default"``)

    Shapes:
        - **input:** entity states :math:`(M, F)`
        - **output:** types :math:`(M, F)`, and with ``return_attention_weights=True`` the
          weights over the types :math:`(M, K)`
    """

    def __init__(self, channels: int, num_types: int = 3, init: str = "default"):
        super().__init__()
        if num_types < 1:
            raise ValueError(f"LatentEntityTyping: num_types must be at least 1, got {num_types}")
        self.channels = channels
        self.num_types = num_types
        self.init = check_init(init, "LatentEntityTyping")
        self.types = torch.nn.Parameter(torch.empty(num_types, channels))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.init == "glorot":
            glorot_normal_(self.types)
        else:
            torch.nn.init.xavier_uniform_(self.types)

    def forward(self, h: Tensor, return_attention_weights: bool = False) -> Tensor | tuple[Tensor, Tensor]:
        if h.dim() != 2 or h.size(-1) != self.channels:
            raise ValueError(f"LatentEntityTyping: expected [M, {self.channels}] states, got {list(h.shape)}")
        a = torch.softmax(h @ self.types.t(), dim=-1)
        t = a @ self.types
        return (t, a) if return_attention_weights else t

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.channels}, num_types={self.num_types})"
