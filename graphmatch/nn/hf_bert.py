r"""HuggingFace ``BertModel`` as a K-BERT encoder: visibility as a 4D additive mask, soft positions
as ``position_ids``.

In transformers 5.x ``BertModel`` takes a ``[B, 1, L, L]`` mask as given: an additive float
mask (0 visible, ``torch.finfo(dtype).min`` hidden) is right under both ``eager`` and ``sdpa``
attention, a boolean one is silently wrong under ``eager`` (added as 1.0/0.0), and 3D masks
raise. :func:`additive_mask` builds the float form.
"""

from __future__ import annotations

import os
from contextlib import nullcontext

import torch
from torch import Tensor, nn

from graphmatch.nn.branch_marking import BranchMarking
from graphmatch.nn.pretrained import LoadReport, as_pretrained, layer_groups, load_bert, load_weights
from graphmatch.pretrained import Pretrained, PretrainedWeights


def additive_mask(visible: Tensor, dtype: torch.dtype) -> Tensor:
    r"""Bool visibility ``[B, L, L]`` (or key padding ``[B, 1, L]``) → additive ``[B, 1, L, L]``
    (or ``[B, 1, 1, L]``) float mask: :math:`0` where visible, :math:`\min(\text{dtype})` elsewhere."""
    if visible.dtype != torch.bool or visible.dim() != 3:
        raise ValueError(f"visible must be a 3D bool tensor, got {visible.dtype} {tuple(visible.shape)}")
    mask = torch.zeros(visible.shape, dtype=dtype, device=visible.device)
    return mask.masked_fill_(~visible, torch.finfo(dtype).min).unsqueeze(1)


class HFBertEncoder(nn.Module):
    """A ``transformers.BertModel`` behind the interface of
    :class:`~graphmatch.nn.mask_transformer.MaskTransformerEncoder` (``forward(input_ids, pos, seg,
    visible)`` → ``[B, L, F]``, :meth:`pool`).

    Rows that see nothing (padding) get a uniform average instead of zeros (the additive mask
    never yields NaN); their outputs are meaningless and must be ignored by the caller.

    Args:
        bert: the wrapped model (with its pooler).
    """

    def __init__(self, bert):
        super().__init__()
        self.bert = bert

    @classmethod
    def from_pretrained(cls, found: str | os.PathLike | Pretrained, attn_implementation: str = "sdpa", log: bool = True,
                        **config_overrides) -> HFBertEncoder:
        """Weights of a resolved checkpoint (:class:`~graphmatch.pretrained.Pretrained`), loaded strictly by
        :func:`graphmatch.nn.pretrained.load_bert` (a missing weight is an error, not a random
        value); no download. The load report goes to stderr when ``log``."""
        bert, report = load_bert(found, attn_implementation=attn_implementation, **config_overrides)
        if log:
            report.log()
        return cls(bert)

    def load_hf(self, source: str | os.PathLike | PretrainedWeights | Pretrained, log: bool = True) -> LoadReport:
        """The weights of a resolved (or read) HF BERT checkpoint into this (already built) model, strictly."""
        source = as_pretrained(source)
        weights = source if isinstance(source, PretrainedWeights) else source.read_weights()
        return load_weights(self.bert, weights, log=log)

    def layer_groups(self) -> list[list[nn.Parameter]]:
        """Parameters from the bottom up: the embeddings, then each layer (the pooler with the
        top layer), for layer-wise learning rates."""
        return layer_groups(self.bert.embeddings, self.bert.encoder.layer, self.bert.pooler)

    @classmethod
    def from_config(cls, config, attn_implementation: str = "sdpa") -> HFBertEncoder:
        """Randomly initialised from a ``BertConfig`` or a ``MaskTransformerConfig`` (not initialised
        inside :func:`~graphmatch.utils.unset_weights.weights_loaded_later`: its weights are loaded next)."""
        from graphmatch.nn.mask_transformer import MaskTransformerConfig
        from graphmatch.utils.unset_weights import bert_model

        if isinstance(config, MaskTransformerConfig):
            config = config.to_hf()
        bert = bert_model(config, add_pooling_layer=True)
        bert.set_attn_implementation(attn_implementation)
        return cls(bert)

    @property
    def num_layers(self) -> int:
        return self.bert.config.num_hidden_layers

    @property
    def num_heads(self) -> int:
        return self.bert.config.num_attention_heads

    @property
    def hidden_size(self) -> int:
        return self.bert.config.hidden_size

    @property
    def position_offset(self) -> int:
        """The position-table row of position 0 (2 for XLM-R; :func:`graphmatch.pretrained.position_offset`)."""
        return getattr(self.bert.config, "position_offset", 0)

    @property
    def max_positions(self) -> int:
        return self.bert.config.max_position_embeddings - self.position_offset

    def forward(self, input_ids: Tensor, pos: Tensor, seg: Tensor, visible: Tensor,
                return_attention_weights: bool = False, marking: BranchMarking | None = None,
                branch: Tensor | None = None, token_mask: Tensor | None = None):
        """``marking`` (with ``branch``, ``[B, L]`` bool: the injected tokens) adds the branch
        embedding to the token embeddings (as ``inputs_embeds``) and gives each ``BertLayer`` its own
        mask with its branch bias (:meth:`~graphmatch.nn.branch_marking.BranchMarking.hf_layer_masks`).
        ``token_mask`` is accepted for the mask transformer's interface: HF's layers run padded."""
        if pos.max() >= self.max_positions:
            table = self.bert.config.max_position_embeddings
            raise ValueError(f"position {int(pos.max())} exceeds the encoder's {self.max_positions} positions "
                             f"(max_position_embeddings {table}); shorten max_length")
        mask = additive_mask(visible, self.bert.dtype)
        tokens: dict[str, Tensor] = {"input_ids": input_ids}
        if marking is not None and marking.embedding is not None:
            tokens = {"inputs_embeds": marking.embed(self.bert.embeddings.word_embeddings(input_ids), branch)}
        with marking.hf_layer_masks(self.bert.encoder.layer, mask, branch, visible) if marking is not None \
                else nullcontext():
            out = self.bert(**tokens, attention_mask=mask, token_type_ids=seg,
                            position_ids=pos + self.position_offset,
                            output_attentions=return_attention_weights)
        if return_attention_weights:
            return out.last_hidden_state, list(out.attentions)
        return out.last_hidden_state

    def pool(self, vec: Tensor) -> Tensor:
        """BERT's pooler on an already pooled vector: ``tanh(W vec + b)``."""
        return torch.tanh(self.bert.pooler.dense(vec))
