r"""A bidirectional LSTM over the token sequences of a batch of graphs."""

from __future__ import annotations

import torch
from torch import Tensor
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


class PackedBiLSTM(torch.nn.Module):
    r"""A one-layer bidirectional LSTM run on packed sequences, so padding never enters a state.

    .. math::
        \overrightarrow{\mathbf{h}}_i = \mathrm{LSTM}(\mathbf{x}_i, \overrightarrow{\mathbf{h}}_{i-1}),
        \quad
        \overleftarrow{\mathbf{h}}_i = \mathrm{LSTM}(\mathbf{x}_i, \overleftarrow{\mathbf{h}}_{i+1}),
        \quad
        \mathbf{h}_i = \overrightarrow{\mathbf{h}}_i \oplus \overleftarrow{\mathbf{h}}_i

    where :math:`\oplus` is the element-wise sum (``merge="sum"``, Att-BLSTM) or concatenation
    (``merge="concat"``).

    Args:
        in_channels (int): input size.
        hidden_channels (int): hidden size of each direction.
        merge (str): ``"sum"`` or ``"concat"``. (default: ``"concat"``)

    Shapes:
        - **input:** padded sequences :math:`(B, L, F_{in})`, real-token mask :math:`(B, L)` (each
          row a prefix of True values, at least one)
        - **output:** :math:`(B, L, H)` or :math:`(B, L, 2H)`, zeros at padding
    """

    def __init__(self, in_channels: int, hidden_channels: int, merge: str = "concat"):
        super().__init__()
        if merge not in ("sum", "concat"):
            raise ValueError(f"PackedBiLSTM: merge must be 'sum' or 'concat', got {merge!r}")
        self.in_channels = in_channels
        self.hidden_channels = hidden_channels
        self.merge = merge
        self.lstm = torch.nn.LSTM(in_channels, hidden_channels, batch_first=True, bidirectional=True)
        self.reset_parameters()

    @property
    def out_channels(self) -> int:
        return self.hidden_channels * (1 if self.merge == "sum" else 2)

    def reset_parameters(self) -> None:
        self.lstm.reset_parameters()

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        lengths = mask.sum(dim=1)
        if bool((lengths == 0).any()):
            raise ValueError("PackedBiLSTM: every sequence needs at least one token")
        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, _ = self.lstm(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=x.size(1))
        if self.merge == "sum":
            out = out[..., : self.hidden_channels] + out[..., self.hidden_channels :]
        return out

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.in_channels}, {self.hidden_channels}, merge={self.merge!r})"
