r"""LET's semantic-aware graph transformer (SaGT) over the word lattice and HowNet senses."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from graphmatch.nn.choices import UPDATES
from graphmatch.nn.mdgat_conv import MDGATConv
from graphmatch.utils.ragged import ragged_arange


def expand_to_senses(edge_index: Tensor, sense_word: Tensor, num_words: int) -> Tensor:
    r"""Word → word edges :math:`j \to i` become word → sense edges :math:`j \to s` for every
    sense :math:`s` of word :math:`i` (vectorised; nothing is stored per sample).

    Args:
        edge_index: ``[2, E]`` word → word edges (e.g. ``reach_fwd``: :math:`j \in N^+(i)`).
        sense_word: ``[S]`` the word of each sense.
        num_words: number of words :math:`W`.

    Returns:
        ``[2, E']`` (word, sense) edges, :math:`E' = \sum_{(j,i)} |S(i)|`.
    """
    counts = torch.bincount(sense_word, minlength=num_words)
    order = torch.argsort(sense_word, stable=True)
    start = counts.cumsum(0) - counts
    edge, offset = ragged_arange(counts[edge_index[1]])
    sense = order[start[edge_index[1, edge]] + offset]
    return torch.stack([edge_index[0, edge], sense])


class SaGTLayer(nn.Module):
    r"""One SaGT layer from the `"LET: Linguistic Knowledge Enhanced Graph Transformer for Chinese
    Short Text Matching" <https://arxiv.org/abs/2102.12671>`_ paper.

    A sense :math:`s` of word :math:`w_i` attends (MD-GAT, :class:`MDGATConv`) over the words
    forward-reachable from :math:`w_i` and, separately, the backward-reachable ones; the two
    messages are concatenated. Each word then attends over its (updated) senses:

    .. math::
        \mathbf{m}^{+}_s &= \text{MD-GAT}\big(\mathbf{s},\ \{\mathbf{w}_j : w_j \in N^{+}(w_i)\}\big),
        \qquad
        \mathbf{m}^{-}_s = \text{MD-GAT}\big(\mathbf{s},\ \{\mathbf{w}_j : w_j \in N^{-}(w_i)\}\big)

        \mathbf{s}' &= \operatorname{GRU}\big([\mathbf{m}^{+}_s ; \mathbf{m}^{-}_s],\ \mathbf{s}\big)

        \mathbf{q}_i &= \text{MD-GAT}\big(\mathbf{w}_i,\ \{\mathbf{s}' : s \in S(w_i)\}\big),
        \qquad
        \mathbf{w}'_i = \operatorname{GRU}\big(\operatorname{MLP}(\mathbf{q}_i),\ \mathbf{w}_i\big)

    :math:`\operatorname{GRU}(\mathbf{m}, \mathbf{h})` is a GRU cell with input :math:`\mathbf{m}`
    and state :math:`\mathbf{h}`; with ``update="residual"`` it is
    :math:`\operatorname{LayerNorm}(\mathbf{h} + \mathbf{m})` instead.
    :math:`\operatorname{MLP}(\mathbf{q}) = \mathbf{W}_4\,\operatorname{ReLU}(\mathbf{W}_3\mathbf{q} +
    \mathbf{b}_3) + \mathbf{b}_4` (:math:`d \to 2d \to d`) is the released code's MLP after the
    word attention (``FastDiSA(has_mlp=True)``, beyond the paper's equations); ``mlp=False`` leaves it out
    (:math:`\operatorname{MLP} = \operatorname{id}`). As in the released code the MD-GATs have no
    output bias and no activation. A word without senses keeps its vector.

    Args:
        channels (int): width :math:`d` of word and sense vectors (even; each direction gives
            :math:`d/2`).
        heads (int, optional): MD-GAT heads (must divide :math:`d/2`). (default: :obj:`1`)
        dropout (float, optional): dropout of attention weights and messages. (default: :obj:`0.`)
        update (str, optional): ``"gru"`` or ``"residual"``. (default: :obj:`"gru"`)
        mlp (bool, optional): the MLP between the word attention and the word update.
            (default: :obj:`True`)

    Shapes:
        - **input:** words :math:`(W, d)`, senses :math:`(S, d)`, word → sense edges for
          :math:`N^+` and :math:`N^-` :math:`(2, E^{\pm})`, sense → word edges :math:`(2, S)`
        - **output:** words :math:`(W, d)`, senses :math:`(S, d)`
    """

    def __init__(self, channels: int, heads: int = 1, dropout: float = 0.0, update: str = "gru",
                 mlp: bool = True) -> None:
        super().__init__()
        if channels % 2 or (channels // 2) % heads:
            raise ValueError(f"SaGT: channels ({channels}) must be even and channels/2 divisible by "
                             f"heads ({heads})")
        if update not in UPDATES:
            raise ValueError(f"SaGT: update must be one of {UPDATES}, got {update!r}")
        self.channels, self.heads, self.update = channels, heads, update
        half = channels // 2
        self.sense_fwd = MDGATConv(channels, half // heads, heads=heads, dropout=dropout, bias=False)
        self.sense_bwd = MDGATConv(channels, half // heads, heads=heads, dropout=dropout, bias=False)
        self.word_conv = MDGATConv(channels, channels // heads, heads=heads, dropout=dropout, bias=False)
        self.word_mlp: nn.Module = nn.Identity()
        if mlp:
            self.word_mlp = nn.Sequential(nn.Linear(channels, 2 * channels), nn.ReLU(), nn.Dropout(dropout),
                                          nn.Linear(2 * channels, channels))
        self.dropout = nn.Dropout(dropout)
        if update == "gru":
            self.sense_update: nn.Module = nn.GRUCell(channels, channels)
            self.word_update: nn.Module = nn.GRUCell(channels, channels)
        else:
            self.sense_update = nn.LayerNorm(channels)
            self.word_update = nn.LayerNorm(channels)

    def reset_parameters(self) -> None:
        for m in (self.sense_fwd, self.sense_bwd, self.word_conv, self.sense_update, self.word_update,
                  *self.word_mlp.children()):
            if hasattr(m, "reset_parameters"):
                m.reset_parameters()

    def _update(self, cell: nn.Module, message: Tensor, state: Tensor) -> Tensor:
        message = self.dropout(message)
        return cell(message, state) if self.update == "gru" else cell(state + message)

    def forward(self, x_word: Tensor, x_sense: Tensor, fwd_edge_index: Tensor, bwd_edge_index: Tensor,
                sense_edge_index: Tensor) -> tuple[Tensor, Tensor]:
        """One sense update then one word update (edges from :func:`expand_to_senses`)."""
        m_fwd = self.sense_fwd((x_word, x_sense), fwd_edge_index)
        m_bwd = self.sense_bwd((x_word, x_sense), bwd_edge_index)
        x_sense = self._update(self.sense_update, torch.cat([m_fwd, m_bwd], dim=-1), x_sense)
        q = self.word_mlp(self.word_conv((x_sense, x_word), sense_edge_index))
        has_sense = torch.zeros(x_word.size(0), dtype=torch.bool, device=x_word.device)
        has_sense[sense_edge_index[1]] = True
        x_word = torch.where(has_sense.unsqueeze(-1), self._update(self.word_update, q, x_word), x_word)
        return x_word, x_sense

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}({self.channels}, heads={self.heads}, update={self.update!r}, "
                f"mlp={not isinstance(self.word_mlp, nn.Identity)})")


class SaGT(nn.Module):
    r"""A stack of :class:`SaGTLayer` s (2 in LET) over one batch of lattice graphs.

    Builds the word → sense attention edges once from the lattice closures and the sense → word
    links, then runs every layer.

    Args:
        channels (int): width of word and sense vectors.
        num_layers (int, optional): number of layers. (default: :obj:`2`)
        heads, dropout, update, mlp: as in :class:`SaGTLayer`.

    Shapes:
        - **input:** words :math:`(W, d)`, senses :math:`(S, d)`, ``reach_fwd`` word → word
          edges :math:`(2, R)` (:math:`j \to i` for :math:`j \in N^{+}(i)`; the backward closure
          :math:`N^{-}` is the same edges reversed), ``sense_word`` :math:`(S)` (the word of each sense)
        - **output:** words :math:`(W, d)`, senses :math:`(S, d)`
    """

    def __init__(self, channels: int, num_layers: int = 2, heads: int = 1, dropout: float = 0.0,
                 update: str = "gru", mlp: bool = True) -> None:
        super().__init__()
        self.layers = nn.ModuleList(SaGTLayer(channels, heads, dropout, update, mlp) for _ in range(num_layers))

    def reset_parameters(self) -> None:
        for layer in self.layers:
            layer.reset_parameters()

    def forward(self, x_word: Tensor, x_sense: Tensor, reach_fwd: Tensor, sense_word: Tensor) -> tuple[Tensor, Tensor]:
        W = x_word.size(0)
        fwd = expand_to_senses(reach_fwd, sense_word, W)
        bwd = expand_to_senses(reach_fwd.flip(0), sense_word, W)  # j -> i for j in N-(i): i in N+(j)
        to_word = torch.stack([torch.arange(sense_word.numel(), device=sense_word.device), sense_word])
        for layer in self.layers:
            x_word, x_sense = layer(x_word, x_sense, fwd, bwd, to_word)
        return x_word, x_sense
