r"""Att-BLSTM relation classifier over a batch of relation sentence graphs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor
from torch_geometric.data import HeteroData
from torch_geometric.utils import to_dense_batch

from graphmatch.models.choices import Init, RnnDropoutOn
from graphmatch.nn.additive_pooling import AdditiveAttentionPooling
from graphmatch.nn.bilstm import PackedBiLSTM
from graphmatch.nn.inits import glorot_linear_, uniform_embedding_
from graphmatch.utils.deprecated import old_arguments
from graphmatch.utils.ragged import batch_vector


@dataclass(frozen=True)
class AttBLSTMConfig:
    r"""The settings of :class:`AttBLSTM`.

    Args:
        num_words (int): vocabulary size (id 0 is padding).
        num_classes (int): number of relation labels.
        embedding_dim (int): word embedding size. (default: 100)
        hidden_size (int): LSTM size per direction (= size of :math:`\mathbf{h}^{*}`). (default: 100)
        emb_dropout (float): dropout on word embeddings. (default: 0.3)
        rnn_dropout (float): dropout of the LSTM layer. (default: 0.3)
        dropout (float): dropout on :math:`\mathbf{h}^{*}`. (default: 0.5)
        rnn_dropout_on (str): ``"output"`` or ``"input"`` (the official code). (default: ``"output"``)
        init (str): ``"pytorch"`` (PyTorch's defaults: embeddings :math:`\mathcal{N}(0, 1)`) or
            ``"official"`` (the official code: embeddings uniform in :math:`\pm 0.25`, Glorot-normal
            kernels and attention vector, forget-gate bias 1, zero biases). (default: ``"pytorch"``)
    """

    num_words: int
    num_classes: int
    embedding_dim: int = 100
    hidden_size: int = 100
    emb_dropout: float = 0.3
    rnn_dropout: float = 0.3
    dropout: float = 0.5
    rnn_dropout_on: RnnDropoutOn = "output"
    init: Init = "pytorch"


class AttBLSTM(torch.nn.Module):
    r"""The attention-based BiLSTM from the `"Attention-Based Bidirectional Long Short-Term Memory
    Networks for Relation Classification" <https://aclanthology.org/P16-2034>`_ paper
    (Zhou et al., ACL 2016).

    .. math::
        \mathbf{E} &= \mathrm{drop}_{e}(\mathrm{emb}(w_1 \dots w_T)), \qquad
        \mathbf{H} = \overrightarrow{\mathrm{LSTM}}(\mathbf{E}) + \overleftarrow{\mathrm{LSTM}}(\mathbf{E})

        \boldsymbol{\alpha} &= \mathrm{softmax}\big(\mathbf{w}^{\top} \tanh(\mathbf{H})\big), \qquad
        \mathbf{r} = \mathbf{H} \boldsymbol{\alpha}^{\top}, \qquad \mathbf{h}^{*} = \tanh(\mathbf{r})

        p(y \mid S) &= \mathrm{softmax}\big(\mathbf{W}^{(S)} \mathrm{drop}(\mathbf{h}^{*}) + \mathbf{b}^{(S)}\big)

    The LSTM dropout (``rnn_dropout``) is applied to :math:`\mathbf{H}` (``rnn_dropout_on="output"``)
    or, as the official code's ``DropoutWrapper``, to each direction's inputs with its own mask
    (``"input"``, see :class:`~graphmatch.nn.PackedBiLSTM`). The attention is an
    :class:`~graphmatch.nn.AdditiveAttentionPooling` over the graph's ``("token", "in", "sentence")``
    edges, so padding never takes attention.

    Args:
        config (AttBLSTMConfig): its sizes and switches. (The loose arguments of old calls,
            ``AttBLSTM(num_words, num_classes, embedding_dim=...)``, still work, with a
            ``DeprecationWarning``, until the next release.)

    Shapes:
        - **input:** a (batched) relation graph with :math:`N` tokens in :math:`B` sentences
        - **output:** logits :math:`(B, C)`; with ``return_attention=True`` also
          ``{"token": (N,)}``, each sentence's weights summing to one
    """

    def __init__(self, config: AttBLSTMConfig | Any = None, *args: Any, **kwargs: Any):
        super().__init__()
        config = old_arguments("AttBLSTM", AttBLSTMConfig, config, args, kwargs)
        #: the settings it was made with
        self.config = config
        self.init = init = config.init
        self.rnn_dropout_on = config.rnn_dropout_on
        embedding_dim, hidden_size, rnn_dropout = config.embedding_dim, config.hidden_size, config.rnn_dropout
        layer_init = "glorot" if init == "official" else "default"
        on_input = config.rnn_dropout_on == "input"
        self.embedding = torch.nn.Embedding(config.num_words, embedding_dim, padding_idx=0)
        self.emb_dropout = torch.nn.Dropout(config.emb_dropout)
        self.lstm = PackedBiLSTM(embedding_dim, hidden_size, merge="sum", init=layer_init,
                                 input_dropout=rnn_dropout if on_input else 0.0)
        self.rnn_dropout = torch.nn.Dropout(0.0 if on_input else rnn_dropout)
        self.pool = AdditiveAttentionPooling(hidden_size, init=layer_init)
        self.dropout = torch.nn.Dropout(config.dropout)
        self.classifier = torch.nn.Linear(hidden_size, config.num_classes)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        self.embedding.reset_parameters()
        self.lstm.reset_parameters()
        self.pool.reset_parameters()
        self.classifier.reset_parameters()
        if self.init == "official":
            uniform_embedding_(self.embedding, 0.25)
            glorot_linear_(self.classifier)

    def forward(self, data: HeteroData, return_attention: bool = False) -> Tensor | tuple[Tensor, dict]:
        batch, num_graphs = batch_vector(data["token"]), data["sentence"].num_nodes
        x = self.emb_dropout(self.embedding(data["token"].word_id))
        dense, mask = to_dense_batch(x, batch, batch_size=num_graphs)
        h = self.rnn_dropout(self.lstm(dense, mask)[mask])  # [N, H]
        src, dst = data["token", "in", "sentence"].edge_index
        r, alpha = self.pool(h[src], index=dst, dim_size=num_graphs, return_attention_weights=True)
        logits = self.classifier(self.dropout(torch.tanh(r)))
        if not return_attention:
            return logits
        return logits, {"token": alpha.new_zeros(h.size(0)).index_add(0, src, alpha)}
