r"""BERT-style encoder whose self-attention follows a visibility mask (K-BERT's mask-transformer).

Parameters map one to one onto HuggingFace's ``BertModel``: :meth:`MaskTransformerEncoder.save_pretrained_hf`
writes a checkpoint ``BertModel.from_pretrained`` reads, and :meth:`MaskTransformerEncoder.from_pretrained`
reads any local BERT checkpoint (e.g. Google's Chinese BERT converted to HF format) strictly,
through :mod:`graphmatch.nn.pretrained`: a weight missing from the checkpoint is an error, not a
random value (a missing pooler is initialised fresh and reported). It reads the official K-BERT
code's UER checkpoints too (``google_model.bin``; :mod:`graphmatch.nn.uer`), recognised by their
tensor names, and then computes UER's LayerNorm (``layer_norm="uer"``), so that its outputs are
the official code's.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn

from graphmatch.nn.branch_marking import BranchMarking
from graphmatch.nn.mask_attention import MaskSelfAttention, additive_attention_mask, pad_rows
from graphmatch.nn.pretrained import (
    BERT_MISSING_OK,
    BERT_UNUSED_OK,
    LoadReport,
    as_pretrained,
    layer_groups,
    load_state_strict,
)
from graphmatch.nn.uer import LAYER_NORMS, UER_MISSING_OK, UER_UNUSED_OK, uer_names
from graphmatch.pretrained import Pretrained, PretrainedWeights, read_json
from graphmatch.pretrained.files import normalise_names
from graphmatch.pretrained.uer import normalise_uer, uer_config
from graphmatch.utils.deprecated import renamed_method

ACTIVATIONS = {
    "gelu": lambda: nn.GELU(),
    "gelu_new": lambda: nn.GELU(approximate="tanh"),
    "gelu_pytorch_tanh": lambda: nn.GELU(approximate="tanh"),
    "relu": lambda: nn.ReLU(),
}


@dataclass
class MaskTransformerConfig:
    """Sizes of a :class:`MaskTransformerEncoder`; the defaults are BERT-base (Google Chinese vocab).

    Field names follow ``transformers.BertConfig`` so that :meth:`to_hf` / :meth:`from_hf`
    are plain copies. ``layer_norm`` is ``"bert"`` (:class:`torch.nn.LayerNorm`) or ``"uer"``
    (:class:`~graphmatch.nn.uer.UERLayerNorm`, the official K-BERT code's; :meth:`from_uer`
    chooses it, with ``layer_norm_eps=1e-6``), used by the embeddings and every layer.
    """

    vocab_size: int = 21128
    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    hidden_act: str = "gelu"
    hidden_dropout_prob: float = 0.1
    attention_probs_dropout_prob: float = 0.1
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    initializer_range: float = 0.02
    layer_norm_eps: float = 1e-12
    pad_token_id: int = 0
    #: ``"auto" | "dense" | "sparse"`` attention path (see :class:`MaskSelfAttention`)
    attention_mode: str = "auto"
    sparse_threshold: float = 0.02
    #: ``"bert" | "uer"`` LayerNorm (see :class:`~graphmatch.nn.uer.UERLayerNorm`)
    layer_norm: str = "bert"
    #: position-table row of position 0: 0 for BERT, ``pad_token_id + 1`` for RoBERTa / XLM-R checkpoints
    #: (:func:`graphmatch.pretrained.position_offset`); kept in :meth:`to_hf`'s config
    position_offset: int = 0
    #: the linear layers, LayerNorms and dropout run on the real tokens only (``[N, F]``, no padding
    #: rows), scattered into ``[B, L, ·]`` for the attention alone: the same function, fewer rows
    #: (:meth:`MaskTransformerEncoder.forward` with ``token_mask``; dense attention only)
    unpadded: bool = False
    #: under bf16 / fp16 autocast the attention product takes Q, K, V in fp32
    #: (:class:`~graphmatch.nn.mask_attention.MaskSelfAttention`'s ``attention_fp32``)
    attention_fp32: bool = False

    def __post_init__(self) -> None:
        if self.hidden_act not in ACTIVATIONS:
            raise ValueError(f"hidden_act must be one of {sorted(ACTIVATIONS)}, got {self.hidden_act!r}")
        if self.layer_norm not in LAYER_NORMS:
            raise ValueError(f"layer_norm must be one of {', '.join(LAYER_NORMS)}, got {self.layer_norm!r}")
        if not 0 <= self.position_offset < self.max_position_embeddings:
            raise ValueError(f"position_offset ({self.position_offset}) must lie in the position table "
                             f"(max_position_embeddings {self.max_position_embeddings})")
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(f"hidden_size ({self.hidden_size}) must be divisible by "
                             f"num_attention_heads ({self.num_attention_heads})")

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> MaskTransformerConfig:
        """Build from a dict, ignoring keys this config does not have (e.g. a BERT config.json)."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in names})

    def to_hf(self, **kwargs: Any):
        """The equivalent ``transformers.BertConfig`` (``kwargs`` are passed on)."""
        from transformers import BertConfig

        if self.layer_norm != "bert":
            raise ValueError(f"transformers' BertModel has no {self.layer_norm!r} LayerNorm (layer_norm "
                             f"{self.layer_norm!r}); use the mask-transformer encoder")
        values = dataclasses.asdict(self)
        for key in ("attention_mode", "sparse_threshold", "layer_norm", "unpadded", "attention_fp32"):
            values.pop(key)
        if not values["position_offset"]:  # BERT's convention, the config says nothing
            values.pop("position_offset")
        return BertConfig(**values, **kwargs)

    @classmethod
    def from_hf(cls, config) -> MaskTransformerConfig:
        """From a ``transformers.BertConfig``; only absolute position embeddings are supported."""
        kind = getattr(config, "position_embedding_type", "absolute")
        if kind != "absolute":
            raise ValueError(f"only absolute position embeddings are supported, got {kind!r}")
        return cls.from_dict(config.to_dict())

    @classmethod
    def from_uer(cls, values: dict[str, Any] | str | os.PathLike, vocab_size: int = 21128,
                 max_positions: int = 512) -> MaskTransformerConfig:
        """From the official K-BERT code's ``google_config.json`` (a path or its dict): sizes, dropout,
        ``layer_norm="uer"`` (eps 1e-6) and the erf GELU (:func:`graphmatch.nn.uer.uer_config`).
        The vocabulary size is not in that file (default: Google's Chinese vocabulary)."""
        source = "the UER config" if isinstance(values, dict) else os.fspath(values)
        if not isinstance(values, dict):
            values = read_json(Path(values))
        return cls.from_dict(uer_config(values, vocab_size, max_positions, source=source))

    @classmethod
    def from_pretrained(cls, found: str | os.PathLike | Pretrained, **overrides: Any) -> MaskTransformerConfig:
        """The config of a resolved :class:`~graphmatch.pretrained.Pretrained` (HuggingFace or UER;
        not read again), ``overrides`` replacing fields."""
        found = as_pretrained(found)
        values = dict(found.config)
        # a UER checkpoint's config is already in our names (with layer_norm); a HF one goes through BertConfig
        config = cls.from_dict(values) if "layer_norm" in values else cls.from_hf(found.bert_config())
        return dataclasses.replace(config, **overrides)

    @property
    def positions(self) -> int:
        """How many positions a sequence may use: the table's rows from :attr:`position_offset` on."""
        return self.max_position_embeddings - self.position_offset


class MaskTransformerEmbeddings(nn.Module):
    r"""Token, (soft-)position and segment embeddings, summed, layer-normalised and dropped out:

    .. math::
        \mathbf{e}_i = \operatorname{LayerNorm}\left(\mathbf{E}^{tok}_{t_i} + \mathbf{E}^{pos}_{p_i + o}
        + \mathbf{E}^{seg}_{s_i}\right)

    K-BERT's soft positions :math:`p_i` give an injected token the position it would have
    if its branch continued the sentence; :math:`o` is the checkpoint's ``position_offset``
    (0 for BERT, 2 for XLM-R).
    """

    def __init__(self, config: MaskTransformerConfig):
        super().__init__()
        self.word = nn.Embedding(config.vocab_size, config.hidden_size, padding_idx=config.pad_token_id)
        self.position = nn.Embedding(config.max_position_embeddings, config.hidden_size)
        self.segment = nn.Embedding(config.type_vocab_size, config.hidden_size)
        self.norm = LAYER_NORMS[config.layer_norm](config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.position_offset = config.position_offset

    def forward(self, input_ids: Tensor, pos: Tensor, seg: Tensor, inputs_embeds: Tensor | None = None) -> Tensor:
        r"""``inputs_embeds`` (``[B, L, F]``) replaces the token embeddings :math:`\mathbf{E}^{tok}_{t_i}`
        (e.g. with the branch embedding added: :class:`~graphmatch.nn.branch_marking.BranchMarking`)."""
        pos = pos + self.position_offset if self.position_offset else pos
        word = self.word(input_ids) if inputs_embeds is None else inputs_embeds
        return self.dropout(self.norm(word + self.position(pos) + self.segment(seg)))


class MaskTransformerLayer(nn.Module):
    r"""One post-LayerNorm transformer layer (as BERT) with :class:`MaskSelfAttention`:

    .. math::
        \mathbf{h} &= \operatorname{LayerNorm}(\mathbf{x} + \operatorname{MaskAttn}(\mathbf{x}, \mathbf{M})) \\
        \mathbf{x}' &= \operatorname{LayerNorm}(\mathbf{h} + \mathbf{W}_2\, \sigma(\mathbf{W}_1 \mathbf{h}))

    Under ``torch.autocast("cpu", torch.bfloat16)`` (``train.precision=bf16-mixed``) the linear
    products run in bf16 but the residual stream :math:`\mathbf{x}` stays fp32 (the embeddings are
    fp32, and fp32 plus bf16 is fp32), so both LayerNorms normalise in fp32 and give fp32
    (``tests/nn/test_bf16_fp32_layers.py``).

    Shapes:
        - **input:** :math:`(B, L, F)`, visibility :math:`(B, L, L)` or :math:`(B, 1, L)` bool
        - **output:** :math:`(B, L, F)`
    """

    def __init__(self, config: MaskTransformerConfig):
        super().__init__()
        h = config.hidden_size
        self.attention = MaskSelfAttention(h, config.num_attention_heads,
                                           attention_dropout=config.attention_probs_dropout_prob,
                                           mode=config.attention_mode,
                                           sparse_threshold=config.sparse_threshold,
                                           attention_fp32=config.attention_fp32)
        norm = LAYER_NORMS[config.layer_norm]
        self.attention_norm = norm(h, eps=config.layer_norm_eps)
        self.intermediate = nn.Linear(h, config.intermediate_size)
        self.activation = ACTIVATIONS[config.hidden_act]()
        self.output = nn.Linear(config.intermediate_size, h)
        self.output_norm = norm(h, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, x: Tensor, visible: Tensor, mode: str | None = None,
                return_attention_weights: bool = False, attn_mask: tuple[Tensor, Tensor] | None = None,
                rows: tuple[Tensor, int, int] | None = None):
        """``rows`` (``(index, B, L)``: each real token's row of the flattened ``[B·L]``) takes ``x`` as
        the real tokens only, ``[N, F]``, and returns them so (dense attention)."""
        a = self.attention(x, visible, mode=mode, return_attention_weights=return_attention_weights,
                           attn_mask=attn_mask, rows=rows)
        a, weights = a if return_attention_weights else (a, None)
        x = self.attention_norm(x + self.dropout(a))
        x = self.output_norm(x + self.dropout(self.output(self.activation(self.intermediate(x)))))
        return (x, weights) if return_attention_weights else x


class MaskTransformerEncoder(nn.Module):
    r"""K-BERT's encoder: :class:`MaskTransformerEmbeddings` followed by ``num_hidden_layers``
    :class:`MaskTransformerLayer` s that all use the same visibility, plus BERT's pooler
    (:math:`\tanh(\mathbf{W}\mathbf{v} + \mathbf{b})`, applied by :meth:`pool` to a pooled vector).

    Args:
        config (MaskTransformerConfig): sizes and dropout.

    Shapes:
        - **input:** ``input_ids``, ``pos``, ``seg`` :math:`(B, L)` long; ``visible``
          :math:`(B, L, L)` bool (or a key-padding mask :math:`(B, 1, L)`)
        - **output:** :math:`(B, L, F)`; with ``return_attention_weights=True`` also a list
          of per-layer weights :math:`(B, H, L, L)`
    """

    #: checkpoint names (per format) the checkpoint may lack: the pooler keeps its fresh initialisation
    checkpoint_keys_missing_ok = {"hf": BERT_MISSING_OK, "uer": UER_MISSING_OK}
    #: checkpoint names (per format) this encoder leaves unused: pretraining heads, a fine-tuned head
    checkpoint_keys_unused_ok = {"hf": BERT_UNUSED_OK, "uer": UER_UNUSED_OK}

    def __init__(self, config: MaskTransformerConfig):
        super().__init__()
        self.config = config
        self.embeddings = MaskTransformerEmbeddings(config)
        self.layers = nn.ModuleList(MaskTransformerLayer(config) for _ in range(config.num_hidden_layers))
        self.pooler = nn.Linear(config.hidden_size, config.hidden_size)
        self.reset_parameters()

    @property
    def num_layers(self) -> int:
        return self.config.num_hidden_layers

    @property
    def num_heads(self) -> int:
        return self.config.num_attention_heads

    @property
    def hidden_size(self) -> int:
        return self.config.hidden_size

    def reset_parameters(self) -> None:
        """BERT's initialisation: normal(0, initializer_range) weights, zero biases, unit LayerNorm."""
        std = self.config.initializer_range
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, 0.0, std)
                if isinstance(module, nn.Linear) and module.bias is not None:
                    nn.init.zeros_(module.bias)
            elif isinstance(module, nn.LayerNorm):
                nn.init.ones_(module.weight)
                nn.init.zeros_(module.bias)
        with torch.no_grad():
            self.embeddings.word.weight[self.config.pad_token_id].zero_()

    def forward(self, input_ids: Tensor, pos: Tensor, seg: Tensor, visible: Tensor,
                return_attention_weights: bool = False, marking: BranchMarking | None = None,
                branch: Tensor | None = None, token_mask: Tensor | None = None):
        """``marking`` (with ``branch``, ``[B, L]`` bool: the injected tokens) adds the branch
        embedding and each layer's branch bias (:class:`~graphmatch.nn.branch_marking.BranchMarking`;
        the bias takes the dense attention path). With ``config.unpadded``, ``token_mask`` (``[B, L]``
        bool, the real tokens) has every layer but the attention's product run on the real tokens
        only; the padding's output rows are then zero."""
        if pos.max() >= self.config.max_position_embeddings:
            raise ValueError(f"position {int(pos.max())} exceeds max_position_embeddings "
                             f"({self.config.max_position_embeddings}); shorten max_length")
        embeds = None if marking is None or marking.embedding is None else \
            marking.embed(self.embeddings.word(input_ids), branch)
        x = self.embeddings(input_ids, pos, seg, inputs_embeds=embeds)
        cross = None if marking is None else marking.cross(branch, visible, x.dtype)
        mode = self.layers[0].attention.resolve_mode(visible) if len(self.layers) else "dense"
        mode = "dense" if cross is not None else mode
        attn_mask = additive_attention_mask(visible, x.dtype) if mode == "dense" else None
        rows = None
        if self.config.unpadded and token_mask is not None and mode == "dense":
            B, L, F = x.shape
            rows = (token_mask.reshape(-1).nonzero().squeeze(1), B, L)
            x = x.reshape(B * L, F)[rows[0]]
        weights = []
        for i, layer in enumerate(self.layers):
            layer_mask = attn_mask if cross is None else (marking.layer_mask(i, attn_mask[0], cross), attn_mask[1])
            x = layer(x, visible, mode=mode, return_attention_weights=return_attention_weights,
                      attn_mask=layer_mask, rows=rows)
            if return_attention_weights:
                x, w = x
                weights.append(w)
        if rows is not None:  # padding rows are zero
            x = pad_rows(x, rows)
        return (x, weights) if return_attention_weights else x

    def pool(self, vec: Tensor) -> Tensor:
        """BERT's pooler on an already pooled vector: ``tanh(W vec + b)``, :math:`(B, F)`."""
        return torch.tanh(self.pooler(vec))

    # ------------------------------------------------------ HuggingFace checkpoints
    def hf_state_dict(self) -> dict[str, Tensor]:
        """This encoder's weights under ``transformers.BertModel`` parameter names."""
        ours = self.state_dict()
        return {hf: ours[name] for name, hf in _hf_names(self.config.num_hidden_layers).items()}

    def load_hf_state_dict(self, state: dict[str, Tensor], source: str = "a BERT state dict") -> LoadReport:
        """Load weights named as in ``transformers.BertModel`` (a ``bert.`` prefix is accepted),
        strictly (:func:`~graphmatch.nn.pretrained.load_state_strict`): a missing or unexpected
        weight outside the allowances is a ValueError naming it."""
        return load_state_strict(self, normalise_names(state), source=source,
                                 name_map=_hf_names(self.config.num_hidden_layers))

    def load_uer_state_dict(self, state: dict[str, Tensor], source: str = "a UER state dict") -> LoadReport:
        """Load weights named as in the official K-BERT code (UER: ``embedding.*``, ``encoder.transformer.*``,
        ``target.nsp_linear_1`` as the pooler; :func:`graphmatch.nn.uer.uer_names`), strictly; a
        ``module.`` prefix is dropped and the 3-row segment table cut to ours
        (:func:`graphmatch.nn.uer.normalise_uer`). Pretraining heads (``target.*``) and a fine-tuned
        K-BERT's ``output_layer*`` are allowed unused, the pooler allowed missing."""
        return self._load_uer(normalise_uer(state, source), source)

    def _load_uer(self, state: dict[str, Tensor], source: str) -> LoadReport:
        return load_state_strict(self, state, source=source, name_map=uer_names(self.config.num_hidden_layers),
                                 format="uer")

    def load_weights(self, source: str | os.PathLike | PretrainedWeights | Pretrained, log: bool = True) -> LoadReport:
        """The weights of a resolved HF BERT or UER checkpoint (:class:`~graphmatch.pretrained.Pretrained`),
        or of an already read :class:`~graphmatch.pretrained.PretrainedWeights`, strictly; the report goes to
        stderr when ``log``."""
        source = as_pretrained(source)
        ckpt = source if isinstance(source, PretrainedWeights) else source.read_weights()
        if ckpt.format == "uer":
            report = self._load_uer(ckpt.state, ckpt.source)
        else:
            report = load_state_strict(self, ckpt.state, source=ckpt.source,
                                       name_map=_hf_names(self.config.num_hidden_layers))
        if log:
            report.log()
        return report

    load_checkpoint = renamed_method("load_checkpoint", load_weights)

    def load_hf(self, source: str | os.PathLike | PretrainedWeights | Pretrained, log: bool = True) -> LoadReport:
        """:meth:`load_weights` (kept for callers of the HF-only name; a UER checkpoint loads too)."""
        return self.load_weights(source, log=log)

    def layer_groups(self) -> list[list[nn.Parameter]]:
        """Parameters from the bottom up: the embeddings, then each layer (the pooler with the
        top layer), for layer-wise learning rates."""
        return layer_groups(self.embeddings, self.layers, self.pooler)

    def save_pretrained_hf(self, directory: str | os.PathLike,
                           vocab: str | os.PathLike | None = None) -> Path:
        """Write a checkpoint that ``transformers.BertModel.from_pretrained(directory)`` loads
        (``config.json`` + weights); ``vocab`` (a ``vocab.txt``) is copied beside it."""
        from transformers import BertModel

        directory = Path(directory)
        model = BertModel(self.config.to_hf(), add_pooling_layer=True)
        model.load_state_dict(self.hf_state_dict(), strict=True)
        model.save_pretrained(directory)
        if vocab is not None:
            shutil.copyfile(vocab, directory / "vocab.txt")
        return directory

    @classmethod
    def from_hf(cls, source, log: bool = True, **overrides: Any) -> MaskTransformerEncoder:
        """An encoder with the weights of a ``BertModel``, or of a checkpoint (:meth:`from_pretrained`).

        ``overrides`` replace config fields that do not change shapes (dropout, attention_mode).
        """
        from transformers import BertModel

        if isinstance(source, BertModel):
            config = dataclasses.replace(MaskTransformerConfig.from_hf(source.config), **overrides)
            encoder = cls(config)
            encoder.load_hf_state_dict(source.state_dict(), source="a BertModel")
            return encoder
        return cls.from_pretrained(source, log=log, **overrides)

    @classmethod
    def from_pretrained(cls, source: str | os.PathLike | Pretrained, log: bool = True,
                        **overrides: Any) -> MaskTransformerEncoder:
        """An encoder built from the config of a local HF BERT checkpoint folder or of a UER checkpoint
        (``layer_norm="uer"`` then) and loaded with its weights strictly (:meth:`load_weights`).

        ``overrides`` replace config fields that do not change shapes (dropout, attention_mode).
        """
        source = as_pretrained(source)
        encoder = cls(MaskTransformerConfig.from_pretrained(source, **overrides))
        encoder.load_weights(source.read_weights(), log=log)
        return encoder


def _hf_names(num_layers: int) -> dict[str, str]:
    """Our parameter name → ``transformers.BertModel`` parameter name."""
    names = {
        "embeddings.word.weight": "embeddings.word_embeddings.weight",
        "embeddings.position.weight": "embeddings.position_embeddings.weight",
        "embeddings.segment.weight": "embeddings.token_type_embeddings.weight",
        "embeddings.norm.weight": "embeddings.LayerNorm.weight",
        "embeddings.norm.bias": "embeddings.LayerNorm.bias",
        "pooler.weight": "pooler.dense.weight",
        "pooler.bias": "pooler.dense.bias",
    }
    per_layer = {
        "attention.query": "attention.self.query",
        "attention.key": "attention.self.key",
        "attention.value": "attention.self.value",
        "attention.out": "attention.output.dense",
        "attention_norm": "attention.output.LayerNorm",
        "intermediate": "intermediate.dense",
        "output": "output.dense",
        "output_norm": "output.LayerNorm",
    }
    for i in range(num_layers):
        for ours, hf in per_layer.items():
            for p in ("weight", "bias"):
                names[f"layers.{i}.{ours}.{p}"] = f"encoder.layer.{i}.{hf}.{p}"
    return names
