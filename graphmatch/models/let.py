r"""LET (Lyu et al., AAAI 2021): lattice + HowNet short-text matcher over batched PyG pair graphs.

`"LET: Linguistic Knowledge Enhanced Graph Transformer for Chinese Short Text Matching"
<https://arxiv.org/abs/2102.12671>`_. Input: a batch of graphs from
:class:`graphmatch.graphs.let.LatticePairBuilder`. The whole batch runs in one pass:

1. **characters**: a character encoder over ``[CLS] a [SEP] b [SEP]`` (a local HuggingFace BERT
   for LET-BERT, or a small transformer trained from scratch), projected to :math:`d`; or, where the
   graphs hold the checkpoint's own pieces, the encoder over the pieces, each character taking the
   state of the piece it sits in;
2. **words**: :math:`\mathbf{w}_i = \text{att-pool}\{\mathbf{c}_t : t \in w_i\}`;
   **sememes**: :math:`\mathbf{o}_k = \text{SememeAttn}(\mathbf{W}_e\mathbf{e}_k)` over the
   (trainable, pretrained 200-d) sememe embeddings, attending within each sense
   (:class:`~graphmatch.nn.SememeAttention`; ``sememe_scope="sentence"``: within each sentence,
   as the released code; ``sememe_attention=False``: :math:`\mathbf{o}_k = \mathbf{W}_e\mathbf{e}_k`);
   **senses**: :math:`\mathbf{s} = \text{att-pool}\{\mathbf{o}_k : k \in s\}`;
3. **SaGT** (:class:`~graphmatch.nn.SaGT`) updates senses and words;
4. **word → character**: :math:`\hat{\mathbf{c}}_t = \operatorname{LayerNorm}(\mathbf{c}_t +
   \text{att-pool}\{\mathbf{w}_i : t \in w_i\})`;
5. **matching**: one :class:`~graphmatch.nn.MDGATConv` (shared parameters) over the characters
   of the same sentence (:math:`\mathbf{m}^{self}_t`) and of the other sentence
   (:math:`\mathbf{m}^{cross}_t`); multi-perspective cosine
   :math:`d_k = \cos(\mathbf{v}_k \odot \mathbf{m}^{self}_t, \mathbf{v}_k \odot \mathbf{m}^{cross}_t)`,
   :math:`k = 1..P`; :math:`\mathbf{y}_t = \operatorname{LayerNorm}(\hat{\mathbf{c}}_t +
   \operatorname{FFN}([\mathbf{m}^{self}_t ; \mathbf{d}_t]))`;
6. **prediction**: :math:`\mathbf{r}_a, \mathbf{r}_b` = att-pool of each sentence's
   :math:`\mathbf{y}_t`; :math:`p = \sigma(\operatorname{FFN}([\mathbf{c}_{CLS}; \mathbf{r}_a;
   \mathbf{r}_b; |\mathbf{r}_a - \mathbf{r}_b|; \mathbf{r}_a \circ \mathbf{r}_b]))` with binary
   cross-entropy (paper), or a 2-way softmax (released code); :math:`\mathbf{c}_{CLS}` is the
   encoder's pooled output :math:`\tanh(\mathbf{W}_p\mathbf{h}_{CLS} + \mathbf{b}_p)` as in the
   released code (``cls="first"``: the raw :math:`\mathbf{h}_{CLS}`; ``cls="mean"``: the mean of
   the pair's token states, as multilingual-e5 was trained, whose checkpoint has no pooler), and the
   FFN has the released code's widths :math:`2d \to d \to` out.

The token types are 0 for ``[CLS] a [SEP]`` and 1 for ``b [SEP]`` (BERT's segments); with
``segments=False`` every token takes type 0, for a checkpoint that trained type row 0 only (XLM-R,
multilingual-e5: its tokenizer's pair template gives both texts type 0).

Where this follows the paper, the released code (``lbe0613/LET``) or neither is tabulated in
``docs/let_reference.md``.

The cross-sentence character pairs are formed per batch on the batch's device from
``token.sent`` (:func:`graphmatch.graphs.let.char_pair_edges`), so nothing quadratic is stored per sample.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch_geometric.data import HeteroData
from torch_geometric.utils import to_dense_batch

from graphmatch.graphs.let import char_pair_edges
from graphmatch.models.choices import ClsVector, Encoder, Objective, SememeScope
from graphmatch.nn.featurewise_pooling import FeatureWiseAttentionPooling
from graphmatch.nn.loss_precision import fp32_logits
from graphmatch.nn.mask_transformer import MaskTransformerConfig, MaskTransformerEncoder
from graphmatch.nn.mdgat_conv import MDGATConv
from graphmatch.nn.mp_cosine import MultiPerspectiveCosine
from graphmatch.nn.sagt import SaGT
from graphmatch.nn.sememe_attention import SememeAttention
from graphmatch.pretrained import Pretrained, resolve_pretrained
from graphmatch.utils.ragged import batch_vector


@dataclass
class LETConfig:
    """Sizes and switches of :class:`LETMatcher` (defaults: the published setting, no BERT)."""

    #: ``"transformer"`` (own character transformer, trained from scratch) or ``"bert"``
    encoder: Encoder = "transformer"
    #: the BERT checkpoint (``encoder="bert"``): resolved (:class:`~graphmatch.nn.pretrained.Pretrained`, as the
    #: task passes it), or a local directory, ``minilm`` or a hub id; its config fixes the encoder sizes
    bert_path: str | Pretrained | None = None
    vocab_size: int = 21128
    encoder_hidden: int = 128
    encoder_layers: int = 2
    encoder_heads: int = 4
    encoder_ffn: int = 512
    max_positions: int = 512
    hidden: int = 128
    sagt_layers: int = 2
    sagt_heads: int = 1
    #: MD-GAT heads of the sememe attention and of the character-level self/cross attention
    heads: int = 4
    perspectives: int = 20
    dropout: float = 0.2
    senses: bool = True
    #: attention among sememes before they are pooled into senses (:class:`SememeAttention`)
    sememe_attention: bool = True
    sememe_scope: SememeScope = "sense"
    #: the MLP between SaGT's word attention and its word update (released code)
    sagt_mlp: bool = True
    update: str = "gru"
    objective: Objective = "bce"
    cls: ClsVector = "pooled"
    #: token types 0 / 1 for the two sentences (BERT); ``False``: all 0 (a checkpoint with one trained type row)
    segments: bool = True
    #: keep the encoder's word-embedding table as loaded (e5-small: 250,002 rows, 96 M of its 118 M weights)
    freeze_word_embeddings: bool = False
    #: the character encoder skips the padding (:attr:`MaskTransformerConfig.unpadded`)
    unpadded: bool = False
    #: its attention product in fp32 under autocast (:attr:`MaskTransformerConfig.attention_fp32`)
    attention_fp32: bool = False
    #: size of the sememe vocabulary (:func:`graphmatch.graphs.let.sememe_vocabulary`: 1,984 sememes
    #: with a SAT vector + 208 more of the HowNet files = 2,192)
    num_sememes: int = 2192
    sememe_dim: int = 200

    def __post_init__(self) -> None:
        checks = [
            (self.hidden % self.heads == 0, f"hidden ({self.hidden}) must be divisible by heads ({self.heads})"),
            (self.encoder != "bert" or self.bert_path, "encoder='bert' needs bert_path (a local directory)"),
        ]
        for ok, message in checks:
            if not ok:
                raise ValueError(f"LETConfig: {message}")

    def encoder_config(self) -> MaskTransformerConfig:
        """The character encoder's configuration (read from ``bert_path`` for LET-BERT)."""
        if self.encoder == "bert":
            source = self.bert_path
            return MaskTransformerConfig.from_pretrained(
                source if isinstance(source, Pretrained) else resolve_pretrained(str(source), "bert_path"),
                unpadded=self.unpadded, attention_fp32=self.attention_fp32)
        return MaskTransformerConfig(
            vocab_size=self.vocab_size, hidden_size=self.encoder_hidden,
            num_hidden_layers=self.encoder_layers, num_attention_heads=self.encoder_heads,
            intermediate_size=self.encoder_ffn, hidden_dropout_prob=self.dropout,
            attention_probs_dropout_prob=0.0, max_position_embeddings=self.max_positions,
            attention_mode="dense", unpadded=self.unpadded, attention_fp32=self.attention_fp32,
        )


class LETMatcher(nn.Module):
    """LET over a batch of lattice pair graphs; ``forward(batch)`` → logits ``[B]`` (BCE) or
    ``[B, 2]`` (softmax).

    Args:
        config: sizes and switches (:class:`LETConfig`).
        sememe_vectors: ``[num_sememes, sememe_dim]`` initial sememe embeddings (rows of zeros
            are re-initialised randomly, e.g. sememes without a pretrained vector); trainable.
    """

    def __init__(self, config: LETConfig, sememe_vectors: Tensor | None = None) -> None:
        super().__init__()
        self.config = c = config
        enc = c.encoder_config()
        self.encoder = MaskTransformerEncoder(enc)
        self.encoder.embeddings.word.weight.requires_grad_(not c.freeze_word_embeddings)
        self.pad_id = enc.pad_token_id
        d = c.hidden
        self.char_proj = nn.Linear(enc.hidden_size, d)
        self.word_pool = FeatureWiseAttentionPooling(d, d, dropout=c.dropout)
        if c.senses:
            self.sememe_emb = nn.Embedding(c.num_sememes, c.sememe_dim)
            self.sememe_proj = nn.Linear(c.sememe_dim, d)
            if c.sememe_attention:
                self.sememe_attention = SememeAttention(d, heads=c.heads, dropout=c.dropout)
            self.sense_pool = FeatureWiseAttentionPooling(d, d, dropout=c.dropout)
            self.sagt = SaGT(d, c.sagt_layers, heads=c.sagt_heads, dropout=c.dropout, update=c.update,
                             mlp=c.sagt_mlp)
            self.init_sememes(sememe_vectors)
        self.char_pool = FeatureWiseAttentionPooling(d, d, dropout=c.dropout)
        self.fuse_norm = nn.LayerNorm(d)
        self.interact = MDGATConv(d, d // c.heads, heads=c.heads, dropout=c.dropout, bias=False)
        self.mpcos = MultiPerspectiveCosine(d, c.perspectives)
        self.ffn = nn.Sequential(nn.Linear(d + c.perspectives, 2 * d), nn.ReLU(), nn.Dropout(c.dropout),
                                 nn.Linear(2 * d, d))
        self.match_norm = nn.LayerNorm(d)
        self.sent_pool = FeatureWiseAttentionPooling(d, d, dropout=c.dropout)
        out = 1 if c.objective == "bce" else 2
        self.score = nn.Sequential(
            nn.Dropout(c.dropout), nn.Linear(enc.hidden_size + 4 * d, 2 * d), nn.ReLU(),
            nn.Dropout(c.dropout), nn.Linear(2 * d, d), nn.ReLU(), nn.Dropout(c.dropout),
            nn.Linear(d, out, bias=False),
        )
        self.dropout = nn.Dropout(c.dropout)

    def init_sememes(self, vectors: Tensor | None) -> None:
        """Copy pretrained sememe vectors into the embedding; all-zero rows get random values."""
        if vectors is None:
            return
        c = self.config
        if tuple(vectors.shape) != (c.num_sememes, c.sememe_dim):
            raise ValueError(f"sememe_vectors must be [{c.num_sememes}, {c.sememe_dim}], "
                             f"got {list(vectors.shape)}")
        with torch.no_grad():
            known = vectors.abs().sum(-1) > 0
            std = float(vectors[known].std()) if known.any() else 1.0
            self.sememe_emb.weight.normal_(0.0, std)
            self.sememe_emb.weight[known] = vectors[known].to(self.sememe_emb.weight.dtype)

    # ---------------------------------------------------------------- forward
    def encode_chars(self, data: HeteroData) -> tuple[Tensor, Tensor]:
        r"""Character encoder over each pair: token vectors ``[N, E]`` and :math:`\mathbf{c}_{CLS}`
        ``[B, E]`` (the pooled output; the raw first state with ``cls="first"``; the mean of the
        pair's token states with ``cls="mean"``).

        Where the graphs hold the encoder's own pieces (``piece`` nodes, a builder with
        ``pieces``), the encoder reads those and a token takes the state of the piece it sits in,
        :math:`\mathbf{c}_t = \mathbf{h}_{p(t)}` (``piece covers token``); ``mean`` is then over
        the pieces."""
        pieces = "piece" in data.node_types
        read = data["piece"] if pieces else data["token"]
        batch = batch_vector(read)
        ids, mask = to_dense_batch(read.input_ids, batch, fill_value=self.pad_id)
        seg, _ = to_dense_batch(read.sent if self.config.segments else torch.zeros_like(read.sent), batch)
        pos = torch.arange(ids.size(1), device=ids.device).expand_as(ids)
        h = self.encoder(ids, pos, seg, mask.unsqueeze(1), token_mask=mask)
        if self.config.cls == "mean":
            weight = mask.unsqueeze(-1).to(h.dtype)
            cls = (h * weight).sum(1) / weight.sum(1).clamp_min(1.0)
        else:
            cls = h[:, 0] if self.config.cls == "first" else self.encoder.pool(h[:, 0])
        h = h[mask]
        if pieces:
            piece, token = data["piece", "covers", "token"].edge_index
            h = h[piece.new_empty(data["token"].num_nodes).index_copy_(0, token, piece)]
        return h, cls

    def forward(self, data: HeteroData) -> Tensor:
        tok = data["token"]
        batch = batch_vector(tok)
        num_graphs = int(getattr(data, "num_graphs", 1))
        h_tok, h_cls = self.encode_chars(data)
        c = self.dropout(self.char_proj(h_tok))  # [N, d]

        contains = data["word", "contains", "token"].edge_index  # word -> token
        W = data["word"].num_nodes
        x_word = self.word_pool(c[contains[1]], contains[0], dim_size=W)
        if self.config.senses:
            x_word = self._sagt(data, x_word)
        y = self.char_pool(x_word[contains[0]], contains[1], dim_size=c.size(0))
        c_hat = self.fuse_norm(c + y)

        is_char = tok.char_index >= 0
        self_edges, cross_edges = char_pair_edges(batch, tok.sent, is_char)
        m_self = self.interact(c_hat, self_edges)
        m_cross = self.interact(c_hat, cross_edges)
        cos = self.mpcos(m_self, m_cross)
        out = self.match_norm(c_hat + self.dropout(self.ffn(torch.cat([m_self, cos], dim=-1))))

        group = batch * 2 + tok.sent
        r = self.sent_pool(out[is_char], group[is_char], dim_size=2 * num_graphs).view(num_graphs, 2, -1)
        r_a, r_b = r[:, 0], r[:, 1]
        logits = self.score(torch.cat([h_cls, r_a, r_b, (r_a - r_b).abs(), r_a * r_b], dim=-1))
        return logits.squeeze(-1) if self.config.objective == "bce" else logits

    def _sagt(self, data: HeteroData, x_word: Tensor) -> Tensor:
        S = data["sense"].num_nodes
        sememe_sense = data["sememe", "of", "sense"].edge_index[1]
        e = self.dropout(self.sememe_proj(self.sememe_emb(data["sememe"].sememe_id)))
        if self.config.sememe_attention:
            e = self._attend_sememes(data, e, sememe_sense, S)
        x_sense = self.sense_pool(e, sememe_sense, dim_size=S)
        x_word, _ = self.sagt(x_word, x_sense, data["word", "reach_fwd", "word"].edge_index,
                              data["sense", "of", "word"].edge_index[1])
        return x_word

    def _attend_sememes(self, data: HeteroData, e: Tensor, sememe_sense: Tensor, num_senses: int) -> Tensor:
        """Sememe attention within each sense, or (``sememe_scope="sentence"``) among the distinct
        sememes of each sentence (the released code's set of sememes), shared by their occurrences."""
        if self.config.sememe_scope == "sense":
            return self.sememe_attention(e, sememe_sense, num_senses)
        sem = data["sememe"]
        sentence = batch_vector(sem) * 2 + sem.sent
        key = sentence * self.config.num_sememes + sem.sememe_id
        distinct, occurrence = torch.unique(key, return_inverse=True)
        first = torch.full((distinct.numel(),), e.size(0), dtype=torch.long, device=e.device)
        first = first.scatter_reduce(0, occurrence, torch.arange(e.size(0), device=e.device), "amin")
        out = self.sememe_attention(e[first], distinct // self.config.num_sememes)
        return out[occurrence]

    @classmethod
    def from_dict(cls, values: dict[str, Any], sememe_vectors: Tensor | None = None) -> LETMatcher:
        """Build from a plain dict of :class:`LETConfig` fields (unknown keys are an error)."""
        names = {f.name for f in dataclasses.fields(LETConfig)}
        unknown = sorted(set(values) - names)
        if unknown:
            raise ValueError(f"unknown LET model option(s) {unknown}; valid: {sorted(names)}")
        return cls(LETConfig(**values), sememe_vectors)


def match_loss(logits: Tensor, y: Tensor, weight: Tensor | None = None) -> Tensor:
    r"""Binary cross-entropy on the sigmoid for ``[B]`` logits, cross-entropy for ``[B, 2]``; with
    ``weight`` (``[2]``, per label) the weighted mean :math:`\sum_i w_{y_i} \ell_i / \sum_i w_{y_i}`
    in both, computed in fp32 under mixed precision (:func:`~graphmatch.nn.loss_precision.fp32_logits`)."""
    logits = fp32_logits(logits)
    if logits.dim() == 2:
        return F.cross_entropy(logits, y, weight=weight)
    if weight is None:
        return F.binary_cross_entropy_with_logits(logits, y.to(logits.dtype))
    w = weight.to(logits)[y]
    return F.binary_cross_entropy_with_logits(logits, y.to(logits.dtype), weight=w, reduction="sum") / w.sum()


def match_probability(logits: Tensor) -> Tensor:
    """The probability that each pair matches, ``[B]``, from ``[B]`` or ``[B, 2]`` logits."""
    return torch.sigmoid(logits) if logits.dim() == 1 else torch.softmax(logits, dim=-1)[:, 1]

