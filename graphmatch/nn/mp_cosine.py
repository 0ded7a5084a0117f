r"""BiMPM's multi-perspective cosine matching, used by LET's matching layer."""

from __future__ import annotations

import torch
from torch import Tensor, nn


class MultiPerspectiveCosine(nn.Module):
    r"""The multi-perspective cosine of `"Bilateral Multi-Perspective Matching for Natural Language
    Sentences" <https://arxiv.org/abs/1702.03814>`_ (Wang et al., 2017), as used by LET's matching
    layer, with :math:`P` trainable perspectives :math:`\mathbf{v}_k`:

    .. math::
        d_k = \cos(\mathbf{v}_k \odot \mathbf{a}, \mathbf{v}_k \odot \mathbf{b}), \qquad k = 1, \dots, P

    Args:
        channels (int): size :math:`d` of the compared vectors.
        perspectives (int): number of perspectives :math:`P`. (default: 20)
        eps (float): floor of the squared norms. (default: 1e-8)

    Shapes:
        - **input:** :math:`(N, d)`, :math:`(N, d)`
        - **output:** :math:`(N, P)`
    """

    def __init__(self, channels: int, perspectives: int = 20, eps: float = 1e-8) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(perspectives, channels))
        self.eps = eps
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.uniform_(self.weight, 0.0, 1.0)

    def forward(self, a: Tensor, b: Tensor) -> Tensor:
        w2 = (self.weight * self.weight).t()  # [d, P]
        dot = (a * b) @ w2
        norm = ((a * a) @ w2).clamp_min(self.eps).sqrt() * ((b * b) @ w2).clamp_min(self.eps).sqrt()
        return dot / norm
