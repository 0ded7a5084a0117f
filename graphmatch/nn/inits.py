r"""Initialisers of the TensorFlow 1.x code that published models were trained with.

The official code of Att-BLSTM (Zhou et al., 2016) and of the entity-aware BiLSTM (Lee et al.,
2019) initialises every kernel with ``tf.keras.initializers.glorot_normal``: a normal
distribution truncated at two standard deviations, rescaled so that its standard deviation is

.. math::
    \sigma = \sqrt{\frac{2}{\mathrm{fan}_{in} + \mathrm{fan}_{out}}}

(for a vector of length :math:`n`, :math:`\mathrm{fan}_{in} = \mathrm{fan}_{out} = n`).
PyTorch's own defaults differ (``nn.Embedding`` :math:`\mathcal{N}(0, 1)`, ``nn.Linear`` and
``nn.LSTM`` uniform in :math:`\pm 1/\sqrt{\mathrm{fan}_{in}}`, no forget-gate bias).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

INITS = ("default", "glorot")
#: std of a standard normal truncated to [-2, 2]; Keras divides by it to keep the requested std
_TRUNCATED_STD = 0.87962566103423978


def check_choice(value: str, choices: tuple[str, ...], name: str) -> str:
    """``value`` when it is one of ``choices``, else a one-line :class:`ValueError` naming ``name``."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


def check_init(init: str, where: str) -> str:
    """``init`` when it is one of :data:`INITS`, else a one-line :class:`ValueError`."""
    return check_choice(init, INITS, f"{where}: init")


@torch.no_grad()
def glorot_normal_(tensor: Tensor, fan_in: int | None = None, fan_out: int | None = None) -> Tensor:
    """Fill ``tensor`` in place as Keras' ``glorot_normal`` does.

    Args:
        tensor: any tensor; a ``[out, in]`` weight has ``fan_in = in``, ``fan_out = out``.
        fan_in, fan_out: override the fans (e.g. for a TensorFlow kernel stored in several
            PyTorch tensors); a vector of length :math:`n` has both equal to :math:`n`.
    """
    if fan_in is None or fan_out is None:
        if tensor.dim() == 1:
            fan_in = fan_out = tensor.numel()
        else:
            receptive = tensor[0][0].numel() if tensor.dim() > 2 else 1
            fan_in, fan_out = tensor.size(1) * receptive, tensor.size(0) * receptive
    std = math.sqrt(2.0 / (fan_in + fan_out)) / _TRUNCATED_STD
    return torch.nn.init.trunc_normal_(tensor, 0.0, std, -2.0 * std, 2.0 * std)


def glorot_linear_(linear: torch.nn.Linear) -> None:
    """A dense layer as TensorFlow's ``tf.layers.dense`` with a Glorot-normal kernel: zero bias."""
    glorot_normal_(linear.weight)
    if linear.bias is not None:
        torch.nn.init.zeros_(linear.bias)


@torch.no_grad()
def uniform_embedding_(embedding: torch.nn.Embedding, bound: float = 0.25) -> None:
    """Word embeddings uniform in :math:`\\pm` ``bound`` (the papers' code: 0.25); the padding row stays 0."""
    torch.nn.init.uniform_(embedding.weight, -bound, bound)
    if embedding.padding_idx is not None:
        embedding.weight[embedding.padding_idx] = 0.0
