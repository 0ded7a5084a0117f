r"""Entity-aware attention BiLSTM with latent entity typing over relation sentence graphs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor
from torch_geometric.data import HeteroData
from torch_geometric.utils import scatter, to_dense_batch

from graphmatch.models.renamed_keys import accept_renamed_keys
from graphmatch.nn.bilstm import PackedBiLSTM
from graphmatch.nn.entity_aware_head import EntityAwareAttentionHead
from graphmatch.nn.inits import glorot_linear_, glorot_normal_, uniform_embedding_
from graphmatch.utils.deprecated import old_arguments
from graphmatch.utils.ragged import batch_vector


@dataclass(frozen=True)
class EntityAttentionConfig:
    r"""The settings of :class:`EntityAttentionBiLSTM`.

    Args:
        num_words (int): vocabulary size (id 0 is padding).
        num_classes (int): number of relation labels.
        num_positions (int): rows of the relative-position table (:math:`2D + 1`).
        embedding_dim (int): word embedding size, divisible by ``heads``. (default: 300)
        position_dim (int): relative-position embedding size. (default: 50)
        heads (int): self-attention heads. (default: 4)
        hidden_size (int): LSTM size per direction. (default: 300)
        latent_types (int): number of latent entity types :math:`K`. (default: 3)
        attention_size (int): size of :math:`\mathbf{u}_i`. (default: 50)
        emb_dropout (float): dropout on word embeddings. (default: 0.3)
        rnn_dropout (float): dropout on LSTM outputs. (default: 0.3)
        dropout (float): dropout on :math:`\mathbf{z}`. (default: 0.5)
        rnn_dropout_on (str): ``"output"`` or ``"input"`` (the official code). (default: ``"output"``)
        self_attention_relu (bool): ReLU on the self-attention's output projection (the official
            code). (default: :obj:`False`)
        entity_state (str): ``"mean"`` over the entity's tokens or its ``"last"`` token (the
            official code). (default: ``"mean"``)
        init (str): ``"pytorch"`` (PyTorch's defaults) or ``"official"`` (the official code: word
            embeddings uniform in :math:`\pm 0.25`, every kernel, type vector, position table
            and attention vector Glorot-normal, forget-gate bias 1, zero biases). (default: ``"pytorch"``)
    """

    num_words: int
    num_classes: int
    num_positions: int
    embedding_dim: int = 300
    position_dim: int = 50
    heads: int = 4
    hidden_size: int = 300
    latent_types: int = 3
    attention_size: int = 50
    emb_dropout: float = 0.3
    rnn_dropout: float = 0.3
    dropout: float = 0.5
    rnn_dropout_on: str = "output"
    self_attention_relu: bool = False
    entity_state: str = "mean"
    init: str = "pytorch"


class EntityAttentionBiLSTM(torch.nn.Module):
    r"""The BiLSTM with entity-aware attention and latent entity typing from the `"Semantic
    Relation Classification via Bidirectional LSTM Networks with Entity-aware Attention using
    Latent Entity Typing" <https://arxiv.org/abs/1901.08163>`_ paper (Lee, Seo and Choi, 2019).

    .. math::
        \mathbf{X} &= \mathrm{LayerNorm}\big(\mathbf{E} + \phi(\mathrm{MultiHead}(\mathbf{E}, \mathbf{E},
        \mathbf{E}))\big), \qquad
        \mathbf{h}_i = [\overrightarrow{\mathbf{h}}_i; \overleftarrow{\mathbf{h}}_i]

        \mathbf{h}_{e_k} &= \mathrm{mean}_{i \in e_k} \mathbf{h}_i \ \text{or}\ \mathbf{h}_{\mathrm{last}(e_k)},
        \qquad
        \mathbf{t}_k = \sum_{j=1}^{K} \mathrm{softmax}_j(\mathbf{h}_{e_k}^{\top}\mathbf{c}_j)\,\mathbf{c}_j

        \mathbf{u}_i &= \tanh\big(\mathbf{W}^{H}[\mathbf{h}_i; \mathbf{p}^{e_1}_i; \mathbf{p}^{e_2}_i]
        + \mathbf{W}^{E}[\mathbf{h}_{e_1}; \mathbf{t}_1; \mathbf{h}_{e_2}; \mathbf{t}_2]\big), \qquad
        \alpha_i = \mathrm{softmax}_i(\mathbf{v}^{\top}\mathbf{u}_i)

        \mathbf{z} &= \sum_i \alpha_i \mathbf{h}_i, \qquad
        p(y \mid S) = \mathrm{softmax}(\mathbf{W}\mathbf{z} + \mathbf{b})

    :math:`\mathbf{p}^{e_k}_i` embeds token :math:`i`'s relative position to entity :math:`k`
    (the graph's ``pos1``/``pos2``; one table shared by both entities). :math:`\phi` is the
    identity, or a ReLU as on the output projection of the official code's self-attention
    (``self_attention_relu``). Entity states are means over the ``("token", "in", "entity")``
    edges (``entity_state="mean"``) or, as the official code, the state of the entity's last token
    (``"last"``); the attention pools over ``("token", "in", "sentence")``. Dropout is applied to
    the embeddings, the LSTM layer (its outputs, or each direction's inputs with
    ``rnn_dropout_on="input"`` as the official code) and :math:`\mathbf{z}`. Everything from
    :math:`\mathbf{t}_k` on is :class:`~graphmatch.nn.EntityAwareAttentionHead` (``head``, without
    :math:`\mathbf{b}`), the head :class:`~graphmatch.models.relation_transformer.RelationTransformer`
    puts over a transformer.

    Checkpoints of releases before the shared head load unchanged: their parameter names are
    mapped on load by :attr:`RENAMED_KEYS` (old prefix → new: ``typing.`` → ``head.typing.``,
    ``pool.`` → ``head.pool.``, ``classifier.`` → ``head.classifier.``).

    Args:
        config (EntityAttentionConfig): its sizes and switches. (The loose arguments of old calls,
            ``EntityAttentionBiLSTM(num_words, num_classes, num_positions, embedding_dim=...)``, still
            work, with a ``DeprecationWarning``, until the next release.)

    Shapes:
        - **input:** a (batched) relation graph with :math:`N` tokens in :math:`B` sentences
        - **output:** logits :math:`(B, C)`; with ``return_attention=True`` also
          ``{"token": (N,), "types": (B, 2, K)}``
    """

    #: parameter names of releases before the shared head: old prefix -> new prefix
    RENAMED_KEYS = {"typing.": "head.typing.", "pool.": "head.pool.", "classifier.": "head.classifier."}

    def __init__(self, config: EntityAttentionConfig | Any = None, *args: Any, **kwargs: Any):
        super().__init__()
        config = old_arguments("EntityAttentionBiLSTM", EntityAttentionConfig, config, args, kwargs)
        embedding_dim, heads, rnn_dropout = config.embedding_dim, config.heads, config.rnn_dropout
        if embedding_dim % heads:
            raise ValueError(f"embedding_dim ({embedding_dim}) must be divisible by heads ({heads})")
        #: the settings it was made with
        self.config = config
        self.init = init = config.init
        self.rnn_dropout_on = config.rnn_dropout_on
        self.entity_state = config.entity_state
        self.self_attention_relu = bool(config.self_attention_relu)
        layer_init = "glorot" if init == "official" else "default"
        on_input = config.rnn_dropout_on == "input"
        self.embedding = torch.nn.Embedding(config.num_words, embedding_dim, padding_idx=0)
        self.position = torch.nn.Embedding(config.num_positions, config.position_dim)
        self.emb_dropout = torch.nn.Dropout(config.emb_dropout)
        self.self_attn = torch.nn.MultiheadAttention(embedding_dim, heads, batch_first=True)
        self.norm = torch.nn.LayerNorm(embedding_dim)
        self.lstm = PackedBiLSTM(embedding_dim, config.hidden_size, merge="concat", init=layer_init,
                                 input_dropout=rnn_dropout if on_input else 0.0)
        self.rnn_dropout = torch.nn.Dropout(0.0 if on_input else rnn_dropout)
        h = self.lstm.out_channels
        self.head = EntityAwareAttentionHead(h, config.num_classes, 2 * config.position_dim, config.latent_types,
                                             config.attention_size, config.dropout, bias=False, init=layer_init)
        self.reset_parameters()
        accept_renamed_keys(self)

    def reset_parameters(self) -> None:
        for module in (self.embedding, self.position, self.norm, self.lstm, self.head):
            module.reset_parameters()
        self.self_attn._reset_parameters()
        if self.init == "official":
            uniform_embedding_(self.embedding, 0.25)
            glorot_normal_(self.position.weight)
            e = self.self_attn.embed_dim
            for k in range(3):  # the official code has separate query, key and value layers
                glorot_normal_(self.self_attn.in_proj_weight.data[k * e : (k + 1) * e])
            torch.nn.init.zeros_(self.self_attn.in_proj_bias)
            glorot_linear_(self.self_attn.out_proj)
            glorot_linear_(self.head.classifier)

    def forward(self, data: HeteroData, return_attention: bool = False) -> Tensor | tuple[Tensor, dict]:
        tok = data["token"]
        batch, num_graphs = batch_vector(data["token"]), data["sentence"].num_nodes
        if data["entity"].num_nodes != 2 * num_graphs:
            raise ValueError(
                f"expected 2 entity nodes per sentence, got {data['entity'].num_nodes} for {num_graphs}"
            )
        x = self.emb_dropout(self.embedding(tok.word_id))
        dense, mask = to_dense_batch(x, batch, batch_size=num_graphs)
        attn, _ = self.self_attn(dense, dense, dense, key_padding_mask=~mask, need_weights=False)
        dense = self.norm(dense + (torch.relu(attn) if self.self_attention_relu else attn))
        h = self.rnn_dropout(self.lstm(dense, mask)[mask])  # [N, 2H]

        src_e, dst_e = data["token", "in", "entity"].edge_index
        if self.entity_state == "last":
            h_ent = h[scatter(src_e, dst_e, dim=0, dim_size=2 * num_graphs, reduce="max")]  # [2B, 2H]
        else:
            h_ent = scatter(h[src_e], dst_e, dim=0, dim_size=2 * num_graphs, reduce="mean")  # [2B, 2H]
        positions = torch.cat([self.position(tok.pos1), self.position(tok.pos2)], dim=-1)
        src, dst = data["token", "in", "sentence"].edge_index
        out = self.head(h[src], positions[src], h_ent, dst, return_attention=return_attention)
        if not return_attention:
            return out
        logits, alpha, types = out
        return logits, {"token": alpha.new_zeros(h.size(0)).index_add(0, src, alpha), "types": types}
