r"""Entity-start relation head."""

from __future__ import annotations

import torch
from torch import Tensor


class EntityStartHead(torch.nn.Module):
    r"""The entity-start relation representation from the `"Matching the Blanks: Distributional
    Similarity for Relation Learning" <https://aclanthology.org/P19-1279>`_ paper (Baldini Soares
    et al., ACL 2019), with the `"Enriching Pre-trained Language Model with Entity Information
    for Relation Classification" <https://arxiv.org/abs/1905.08284>`_ paper's (R-BERT, Wu and He,
    2019) ``[CLS]`` state beside the two entity states:

    .. math::
        \mathbf{r} = [\mathbf{h}_{\mathrm{[CLS]}};\, \mathbf{h}_{e_1};\, \mathbf{h}_{e_2}], \qquad
        p(y \mid S) = \mathrm{softmax}\big(\mathbf{W}\, \mathrm{dropout}(\mathbf{r}) + \mathbf{b}\big)

    :math:`\mathbf{h}_{e_k}` is the state of the marker that opens entity :math:`k` (Matching the
    Blanks' ``ENTITY START``). With ``hidden_channels``, as in R-BERT, each of the three parts
    first goes through its own :math:`\tanh(\mathbf{W}_j\, \mathrm{dropout}(\cdot) + \mathbf{b}_j)`.

    Args:
        channels (int): size :math:`F` of the encoder states.
        num_classes (int): number of relation labels.
        dropout (float): dropout on the representation. (default: 0.1)
        hidden_channels (int, optional): size of R-BERT's per-part projections; :obj:`None`
            classifies :math:`\mathbf{r}` directly. (default: :obj:`None`)

    Shapes:
        - **input:** ``cls`` :math:`(B, F)`, ``entity`` :math:`(2B, F)` (rows :math:`2g` and
          :math:`2g + 1` are sentence :math:`g`'s e1 and e2)
        - **output:** logits :math:`(B, C)`
    """

    def __init__(self, channels: int, num_classes: int, dropout: float = 0.1, hidden_channels: int | None = None):
        super().__init__()
        self.channels = channels
        self.dropout = torch.nn.Dropout(dropout)
        self.project = (
            torch.nn.ModuleList(torch.nn.Linear(channels, hidden_channels) for _ in range(3))
            if hidden_channels else None
        )
        self.classifier = torch.nn.Linear(3 * (hidden_channels or channels), num_classes)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for lin in [*(self.project or []), self.classifier]:
            lin.reset_parameters()

    def forward(self, cls: Tensor, entity: Tensor) -> Tensor:
        if cls.dim() != 2 or entity.shape != (2 * cls.size(0), cls.size(1)) or cls.size(1) != self.channels:
            raise ValueError(
                f"EntityStartHead: expected cls [B, {self.channels}] and entity [2B, {self.channels}], "
                f"got {list(cls.shape)} and {list(entity.shape)}"
            )
        parts = [cls, entity[0::2], entity[1::2]]
        if self.project is not None:
            parts = [torch.tanh(lin(self.dropout(p))) for lin, p in zip(self.project, parts, strict=True)]
        return self.classifier(self.dropout(torch.cat(parts, dim=-1)))

    def __repr__(self) -> str:
        hidden = None if self.project is None else self.project[0].out_features
        return (f"{self.__class__.__name__}({self.channels}, num_classes={self.classifier.out_features}, "
                f"hidden_channels={hidden})")
