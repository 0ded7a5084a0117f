r"""A bidirectional LSTM over the token sequences of a batch of graphs."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.func import functional_call
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from graphmatch.nn.inits import check_init, glorot_normal_


class PackedBiLSTM(torch.nn.Module):
    r"""A one-layer bidirectional LSTM run on packed sequences, so padding never enters a state,
    as used by Att-BLSTM (`Zhou et al., ACL 2016 <https://aclanthology.org/P16-2034>`_) and the
    entity-aware BiLSTM (`Lee et al., 2019 <https://arxiv.org/abs/1901.08163>`_).

    .. math::
        \overrightarrow{\mathbf{h}}_i = \mathrm{LSTM}(\overrightarrow{\mathbf{m}} \odot \mathbf{x}_i,
        \overrightarrow{\mathbf{h}}_{i-1}),
        \quad
        \overleftarrow{\mathbf{h}}_i = \mathrm{LSTM}(\overleftarrow{\mathbf{m}} \odot \mathbf{x}_i,
        \overleftarrow{\mathbf{h}}_{i+1}),
        \quad
        \mathbf{h}_i = \overrightarrow{\mathbf{h}}_i \oplus \overleftarrow{\mathbf{h}}_i

    where :math:`\oplus` is the element-wise sum (``merge="sum"``, Att-BLSTM) or concatenation
    (``merge="concat"``), and :math:`\overrightarrow{\mathbf{m}}, \overleftarrow{\mathbf{m}}`
    are independent dropout masks on the inputs of each direction during training (``input_dropout``;
    TensorFlow's ``DropoutWrapper(cell, input_keep_prob)`` in the papers' code), all ones otherwise.

    Args:
        in_channels (int): input size.
        hidden_channels (int): hidden size of each direction.
        merge (str): ``"sum"`` or ``"concat"``. (default: ``"concat"``)
        input_dropout (float): dropout rate on each direction's inputs, one mask per direction.
            (default: ``0.0``)
        init (str): ``"default"`` (PyTorch's uniform :math:`\pm 1/\sqrt{H}`) or ``"glorot"`` (the
            papers' TensorFlow ``LSTMCell``: each direction's :math:`[\mathbf{W}_{ih};
            \mathbf{W}_{hh}]` as one Glorot-normal kernel of fans :math:`(F_{in} + H, 4H)`, zero
            biases except a forget-gate bias of 1). (default: ``"default"``)

    Shapes:
        - **input:** padded sequences :math:`(B, L, F_{in})`, real-token mask :math:`(B, L)` (each
          row a prefix of True values, at least one)
        - **output:** :math:`(B, L, H)` or :math:`(B, L, 2H)`, zeros at padding
    """

    def __init__(
        self,
        in_channels: int,
        hidden_channels: int,
        merge: str = "concat",
        input_dropout: float = 0.0,
        init: str = "default",
    ):
        super().__init__()
        if merge not in ("sum", "concat"):
            raise ValueError(f"PackedBiLSTM: merge must be 'sum' or 'concat', got {merge!r}")
        if not 0.0 <= input_dropout < 1.0:
            raise ValueError(f"PackedBiLSTM: input_dropout must be in [0, 1), got {input_dropout}")
        self.in_channels = in_channels
        self.hidden_channels = hidden_channels
        self.merge = merge
        self.input_dropout = input_dropout
        self.init = check_init(init, "PackedBiLSTM")
        self.lstm = torch.nn.LSTM(in_channels, hidden_channels, batch_first=True, bidirectional=True)
        # runs one direction of `self.lstm` with that direction's weights (not a parameter holder)
        object.__setattr__(self, "_one_way", torch.nn.LSTM(in_channels, hidden_channels, batch_first=True))
        self.reset_parameters()

    @property
    def out_channels(self) -> int:
        return self.hidden_channels * (1 if self.merge == "sum" else 2)

    def reset_parameters(self) -> None:
        self.lstm.reset_parameters()
        if self.init == "glorot":
            h = self.hidden_channels
            for name, p in self.lstm.named_parameters():
                if name.startswith("weight"):
                    glorot_normal_(p, fan_in=self.in_channels + h, fan_out=4 * h)
                else:
                    torch.nn.init.zeros_(p)
                    if name.startswith("bias_ih"):
                        torch.nn.init.ones_(p[h : 2 * h])  # gates are (input, forget, cell, output)

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        lengths = mask.sum(dim=1)
        if bool((lengths == 0).any()):
            raise ValueError("PackedBiLSTM: every sequence needs at least one token")
        if self.training and self.input_dropout > 0:
            p = self.input_dropout
            fw = self._direction(F.dropout(x, p), lengths, reverse=False)
            bw = self._direction(F.dropout(x, p), lengths, reverse=True)
        else:
            out = self._run(self.lstm, None, x, lengths)
            fw, bw = out[..., : self.hidden_channels], out[..., self.hidden_channels :]
        return fw + bw if self.merge == "sum" else torch.cat([fw, bw], dim=-1)

    @staticmethod
    def _run(lstm: torch.nn.LSTM, params: dict[str, Tensor] | None, x: Tensor, lengths: Tensor) -> Tensor:
        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out = lstm(packed)[0] if params is None else functional_call(lstm, params, (packed,))[0]
        return pad_packed_sequence(out, batch_first=True, total_length=x.size(1))[0]

    def _direction(self, x: Tensor, lengths: Tensor, reverse: bool) -> Tensor:
        """One direction of ``self.lstm`` over its own input: the backward direction reads each
        sequence reversed within its length and its states are put back in token order."""
        suffix = "_reverse" if reverse else ""
        params = {name: getattr(self.lstm, name + suffix)
                  for name in ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0")}
        if not reverse:
            return self._run(self._one_way, params, x, lengths)
        t = torch.arange(x.size(1), device=x.device)
        order = torch.where(t < lengths[:, None], lengths[:, None] - 1 - t, t)  # [B, L], its own inverse
        flip = lambda y: y.gather(1, order.unsqueeze(-1).expand_as(y))  # noqa: E731
        return flip(self._run(self._one_way, params, flip(x), lengths))

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}({self.in_channels}, {self.hidden_channels}, merge={self.merge!r}, "
                f"input_dropout={self.input_dropout}, init={self.init!r})")
