r"""K-BERT: a mask-transformer over the sentence tree, with a sentence (pair) classification head
or a token tagging head.

`"K-BERT: Enabling Language Representation with Knowledge Graph"
<https://arxiv.org/abs/1909.07606>`_ (Liu et al., AAAI 2020). The input graph
(:mod:`graphmatch.graphs.kbert`) is turned into dense ``[B, L]`` tensors and a ``[B, L, L]``
visibility on the batch's device (:func:`graphmatch.graphs.kbert.dense_inputs`); the encoder is
:class:`~graphmatch.nn.MaskTransformerEncoder` or :class:`~graphmatch.nn.HFBertEncoder`.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from graphmatch.graphs.kbert import dense_inputs

POOLINGS = ("first", "mean", "max")


class KBert(nn.Module):
    r"""K-BERT model.

    Classification (single sentences and pairs, as UER/K-BERT's classifier):

    .. math::
        \mathbf{v} = \operatorname{pool}(\mathbf{H}), \qquad
        \mathbf{z} = \mathbf{W}_c\, \operatorname{Dropout}(\tanh(\mathbf{W}_p \mathbf{v} + \mathbf{b}_p)) + \mathbf{b}_c

    where :math:`\operatorname{pool}` takes the ``[CLS]`` state (``"first"``) or the mean / max
    over the real tokens, and :math:`\mathbf{W}_p` is the encoder's (BERT's) pooler.
    Tagging (NER): :math:`\mathbf{z}_i = \mathbf{W}_c\, \operatorname{Dropout}(\mathbf{h}_i) + \mathbf{b}_c`
    for every token; injected (branch) tokens carry no label (``y = -100``).

    Args:
        encoder (nn.Module): ``encoder(input_ids, pos, seg, visible) -> [B, L, F]`` with
            ``hidden_size`` and ``pool(vec)``.
        num_labels (int): number of classes or tags.
        tagging (bool, optional): token tagging instead of classification. (default: :obj:`False`)
        pooling (str, optional): ``"first"``, ``"mean"`` or ``"max"``. (default: :obj:`"first"`)
        dropout (float, optional): dropout before the output layer. (default: :obj:`0.1`)
        visible_matrix (bool, optional): ablation; ``False`` lets every real token see every
            other one (injected tokens included). (default: :obj:`True`)
        soft_positions (bool, optional): ablation; ``False`` uses hard positions
            :math:`0, \dots, L-1`. (default: :obj:`True`)

    Shapes:
        - **input:** a batch of K-BERT sentence-tree graphs, or dense ``[B, L]`` tensors for
          :meth:`forward_dense`
        - **output:** classification :math:`(B, C)`; tagging :math:`(N_{token}, C)` in the
          batch's token-node order
    """

    def __init__(self, encoder: nn.Module, num_labels: int, tagging: bool = False, pooling: str = "first",
                 dropout: float = 0.1, visible_matrix: bool = True, soft_positions: bool = True):
        super().__init__()
        if pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {POOLINGS}, got {pooling!r}")
        if num_labels < 1:
            raise ValueError(f"num_labels must be positive, got {num_labels}")
        self.encoder = encoder
        self.num_labels = num_labels
        self.tagging = tagging
        self.pooling = pooling
        self.visible_matrix = visible_matrix
        self.soft_positions = soft_positions
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(encoder.hidden_size, num_labels)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.normal_(self.classifier.weight, 0.0, 0.02)
        nn.init.zeros_(self.classifier.bias)

    def forward(self, batch, return_attention_weights: bool = False):
        inputs = dense_inputs(batch)
        return self.forward_dense(inputs["input_ids"], inputs["pos"], inputs["seg"], inputs["token_mask"],
                                  inputs["visible"], return_attention_weights=return_attention_weights)

    def attention_inputs(self, pos: Tensor, token_mask: Tensor, visible: Tensor) -> tuple[Tensor, Tensor]:
        """Positions and visibility after the ablations."""
        if not self.soft_positions:
            pos = torch.arange(pos.size(1), device=pos.device).expand_as(pos)
        if not self.visible_matrix:
            visible = token_mask.unsqueeze(1)  # [B, 1, L]: every real token sees every real token
        return pos, visible

    def forward_dense(self, input_ids: Tensor, pos: Tensor, seg: Tensor, token_mask: Tensor, visible: Tensor,
                      return_attention_weights: bool = False):
        pos, visible = self.attention_inputs(pos, token_mask, visible)
        hidden = self.encoder(input_ids, pos, seg, visible, return_attention_weights=return_attention_weights)
        hidden, weights = hidden if return_attention_weights else (hidden, None)
        if self.tagging:
            logits = self.classifier(self.dropout(hidden[token_mask]))
        else:
            logits = self.classifier(self.dropout(self.encoder.pool(self.pool(hidden, token_mask))))
        return (logits, weights) if return_attention_weights else logits

    def pool(self, hidden: Tensor, token_mask: Tensor) -> Tensor:
        """``[B, L, F]`` → ``[B, F]``: the first token, or the mean / max over real tokens."""
        if self.pooling == "first":
            return hidden[:, 0]
        mask = token_mask.unsqueeze(-1)
        if self.pooling == "mean":
            return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1)
        return hidden.masked_fill(~mask, float("-inf")).amax(1)
