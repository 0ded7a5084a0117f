r"""A pair's match logit from the cosine of its two text vectors (a bi-encoder's head)."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn


class CosineMatchHead(nn.Module):
    r"""The logit of "the two texts match" from the cosine of their vectors:

    .. math::
        z = s\,\big(\cos(\mathbf{u}, \mathbf{v}) - t\big), \qquad s = e^{\rho}

    with a learnt scale :math:`s` and threshold :math:`t`. An embedding model trained
    contrastively (multilingual-e5: temperature 0.01) already separates paraphrases by this
    cosine, so the head starts from the encoder's zero-shot decision: :math:`s` from
    ``init_scale`` and :math:`t` from :meth:`fit_threshold` on training pairs.

    Args:
        init_scale (float, optional): :math:`s` at the start. (default: :obj:`100.0`, e5's
            inverse temperature)

    Shapes:
        - **input:** :math:`(B, F)`, :math:`(B, F)`
        - **output:** :math:`(B,)`
    """

    def __init__(self, init_scale: float = 100.0):
        super().__init__()
        if not init_scale > 0:
            raise ValueError(f"init_scale must be positive, got {init_scale}")
        self.init_scale = init_scale
        self.log_scale = nn.Parameter(torch.empty(()))
        self.threshold = nn.Parameter(torch.empty(()))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        with torch.no_grad():
            self.log_scale.fill_(math.log(self.init_scale))
            self.threshold.zero_()

    @staticmethod
    def cosine(u: Tensor, v: Tensor) -> Tensor:
        return F.cosine_similarity(u, v, dim=-1, eps=1e-8)

    def forward(self, u: Tensor, v: Tensor) -> Tensor:
        return self.log_scale.exp() * (self.cosine(u, v) - self.threshold)

    @torch.no_grad()
    def fit_threshold(self, cos: Tensor, match: Tensor, weight: tuple[float, float] = (1.0, 1.0)) -> float:
        r""":math:`t` where thresholding ``cos`` (``[N]``) classifies ``match`` (``[N]``, bool)
        best: the midpoint between the two cosines around the best cut (ties: the first); a
        one-class sample puts :math:`t` just below (or above) every cosine. "Best" counts a
        non-match right as ``weight[0]`` and a match as ``weight[1]`` (a task's class weights, so
        that the sample's prior need not decide). Returns that weighted accuracy at :math:`t`."""
        if cos.numel() == 0 or cos.shape != match.shape:
            raise ValueError(f"fit_threshold needs as many match labels as cosines, got {list(cos.shape)} "
                             f"and {list(match.shape)}")
        order = cos.double().argsort(descending=True)
        c, y = cos.double()[order], match.bool()[order]
        n = len(c)
        w_no, w_yes = weight
        # weighted right answers when the k highest cosines are called matches, k = 0..n
        hits = torch.cat([y.new_zeros(1, dtype=torch.long), y.long().cumsum(0)])
        misses = torch.arange(n + 1, device=c.device) - hits
        negatives = int((~y).sum())
        correct = w_yes * hits + w_no * (negatives - misses)
        k = int(correct.argmax())
        above = c[k - 1] if k > 0 else c[0] + 1e-3
        below = c[k] if k < n else c[-1] - 1e-3
        self.threshold.fill_(float((above + below) / 2))
        return float(correct[k]) / (w_yes * (n - negatives) + w_no * negatives)

__all__ = ["CosineMatchHead"]
