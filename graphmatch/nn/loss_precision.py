"""Losses in fp32 under mixed precision: :func:`fp32_logits`."""

from __future__ import annotations

import torch
from torch import Tensor


def fp32_logits(logits: Tensor) -> Tensor:
    r"""``logits`` in fp32 when they are bf16 or fp16 (a model run under ``torch.autocast`` or in
    ``bf16-true``), else as they are (fp32 and fp64 untouched, so fp32 runs are bit for bit the same).

    A loss must stay fp32: :math:`\log \sum_j e^{z_j}` and the mean over a batch lose digits in bf16's
    8-bit mantissa, and class weights cast to the logits' dtype (``weight.to(logits)``) would be
    rounded to three significant digits. The gradient flows back to the bf16 logits through the cast.
    """
    return logits.float() if logits.dtype in (torch.bfloat16, torch.float16) else logits
