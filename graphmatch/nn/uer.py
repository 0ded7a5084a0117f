r"""UER checkpoints: the format of the official K-BERT code (``autoliuweijie/K-BERT``, built on UER).

Its users hold ``google_model.bin`` (a ``torch.save``'d state dict) with ``google_config.json``
and ``google_vocab.txt``, and the classifiers (taggers) that ``run_kbert_cls.py``
(``run_kbert_ner.py``) fine-tune and save. This module says what those files mean for
:class:`~graphmatch.nn.mask_transformer.MaskTransformerEncoder`; the files are read, and the
weights loaded strictly, by :mod:`graphmatch.nn.pretrained` (``read_checkpoint`` recognises a
UER folder or file by its tensor names).

* :func:`uer_names`: our name → UER name. UER's per-layer ``self_attn.linear_layers.{0,1,2}``
  are Q, K, V, ``final_linear`` the attention output, ``feed_forward.linear_{1,2}`` the
  feed-forward, ``layer_norm_{1,2}`` (``gamma``/``beta``) the two LayerNorms; BERT's pooler is
  UER's ``target.nsp_linear_1`` (UER's Google→UER conversion puts ``bert/pooler/dense`` there).
  A fine-tuned classifier has no ``target.*``: the pooler is then initialised fresh, which the
  ``uer`` head does not use.
* :func:`normalise_uer`: a ``module.`` prefix (``nn.DataParallel``) dropped, and the segment
  table cut to our two rows. UER's ``embedding.segment_embedding`` has **3 rows**: 0 padding,
  1 sentence A, 2 sentence B (``run_kbert_cls.py`` feeds ``seg + 1`` for real tokens, 0 for
  padding; its NER script feeds 1 everywhere). Our segments are 0 (text a) and 1 (text b), as
  HuggingFace's, so **our row 0 ← UER row 1, our row 1 ← UER row 2**; UER's row 0 (zeros in a
  converted Google model) only ever reaches padding, which our encoder masks out, and is dropped.
* :class:`UERLayerNorm`: UER's LayerNorm, which is not BERT's (below).
* :func:`uer_config`: ``google_config.json`` (``emb_size``, ``hidden_size``, ``feedforward_size``,
  ``heads_num``, ``layers_num``, ``dropout``) in ``transformers.BertConfig`` field names, with
  ``layer_norm="uer"``, ``layer_norm_eps=1e-6`` and the exact (erf) GELU.

Everything else in the official forward pass is what our encoder computes: embeddings summed
then normalised, post-LayerNorm layers, attention scores divided by :math:`\sqrt{d_{head}}`, the
erf GELU :math:`x\,\Phi(x)`, dropout in the same places, and the visible matrix added as
:math:`(1 - \mathbf{M}) \cdot (-10000)`, where we use the dtype's minimum: for a token that sees
anything, :math:`e^{-10000}` is exactly 0 in float32, so the two agree; the rows that see nothing
are padding, which the official code averages over every token and we zero (the
``uer`` head reads ``[CLS]`` only; see ``docs/kbert_reference.md``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from torch import Tensor, nn

#: the official file names (``run_kbert_cls.py``'s defaults), looked for first in a folder
CONFIG_FILE, WEIGHT_FILE, VOCAB_FILE = "google_config.json", "google_model.bin", "google_vocab.txt"
#: the tensor that marks a state dict as UER's
MARKER = "embedding.word_embedding.weight"
#: rows of UER's segment table (0 padding, 1 sentence A, 2 sentence B)
SEGMENT_ROWS = 3
#: UER checkpoint names an encoder may find missing: the pooler (a fine-tuned classifier has no target)
ALLOW_MISSING: tuple[str, ...] = ("target.nsp_linear_1.*",)
#: UER checkpoint names an encoder may leave unused: pretraining heads, a fine-tuned K-BERT's head
ALLOW_UNEXPECTED: tuple[str, ...] = ("target.*", "output_layer.*", "output_layer_1.*", "output_layer_2.*")
#: keys that only a UER config has (a HuggingFace ``config.json`` has none of them)
CONFIG_KEYS = ("emb_size", "feedforward_size", "heads_num", "layers_num")
_PER_LAYER = {
    "attention.query": "self_attn.linear_layers.0",
    "attention.key": "self_attn.linear_layers.1",
    "attention.value": "self_attn.linear_layers.2",
    "attention.out": "self_attn.final_linear",
    "intermediate": "feed_forward.linear_1",
    "output": "feed_forward.linear_2",
}


class UERLayerNorm(nn.LayerNorm):
    r"""UER's LayerNorm: the *unbiased* standard deviation, :math:`\epsilon` outside the root:

    .. math::
        \operatorname{LN}(\mathbf{x}) = \boldsymbol{\gamma} \odot
        \frac{\mathbf{x} - \mu}{\sigma + \epsilon} + \boldsymbol{\beta}, \qquad
        \sigma = \sqrt{\tfrac{1}{F-1} \textstyle\sum_k (x_k - \mu)^2}

    (BERT's: :math:`\sqrt{\tfrac{1}{F} \sum_k (x_k - \mu)^2 + \epsilon}`). Parameters are named as
    :class:`torch.nn.LayerNorm`'s (``weight`` = :math:`\boldsymbol{\gamma}`, ``bias`` =
    :math:`\boldsymbol{\beta}`), so both kinds share one name map.

    Shapes:
        - **input:** :math:`(*, F)`
        - **output:** :math:`(*, F)`
    """

    def __init__(self, hidden_size: int, eps: float = 1e-6):
        super().__init__(hidden_size, eps=eps)

    def forward(self, x: Tensor) -> Tensor:
        mean = x.mean(-1, keepdim=True)
        return self.weight * (x - mean) / (x.std(-1, keepdim=True) + self.eps) + self.bias


#: LayerNorm kinds of the mask-transformer (``MaskTransformerConfig.layer_norm``)
LAYER_NORMS: dict[str, type[nn.LayerNorm]] = {"bert": nn.LayerNorm, "uer": UERLayerNorm}


def uer_names(num_layers: int) -> dict[str, str]:
    """Our :class:`~graphmatch.nn.mask_transformer.MaskTransformerEncoder` name → UER name."""
    names = {
        "embeddings.word.weight": "embedding.word_embedding.weight",
        "embeddings.position.weight": "embedding.position_embedding.weight",
        "embeddings.segment.weight": "embedding.segment_embedding.weight",
        "embeddings.norm.weight": "embedding.layer_norm.gamma",
        "embeddings.norm.bias": "embedding.layer_norm.beta",
        "pooler.weight": "target.nsp_linear_1.weight",
        "pooler.bias": "target.nsp_linear_1.bias",
    }
    for i in range(num_layers):
        layer = f"encoder.transformer.{i}"
        for ours, uer in _PER_LAYER.items():
            for p in ("weight", "bias"):
                names[f"layers.{i}.{ours}.{p}"] = f"{layer}.{uer}.{p}"
        for ours, uer in (("attention_norm", "layer_norm_1"), ("output_norm", "layer_norm_2")):
            names[f"layers.{i}.{ours}.weight"] = f"{layer}.{uer}.gamma"
            names[f"layers.{i}.{ours}.bias"] = f"{layer}.{uer}.beta"
    return names


def is_uer_state(names: Iterable[str]) -> bool:
    """Whether tensor names are UER's (``embedding.word_embedding.weight``, maybe ``module.``-prefixed)."""
    return any(n in (MARKER, "module." + MARKER) for n in names)


def is_uer_config(values: Mapping[str, Any]) -> bool:
    """Whether a config dict is UER's (``heads_num``, ``layers_num``, … rather than BERT's names)."""
    return any(k in values for k in CONFIG_KEYS)


def head_kind(names: Iterable[str]) -> str | None:
    """The fine-tuned K-BERT head a UER state dict holds: ``"classifier"`` (``output_layer_1``,
    ``output_layer_2``: ``run_kbert_cls.py``), ``"tagger"`` (``output_layer``: ``run_kbert_ner.py``)
    or ``None`` (a pretrained model)."""
    names = set(names)
    if "output_layer_2.weight" in names:
        return "classifier"
    return "tagger" if "output_layer.weight" in names else None


def normalise_uer(state: Mapping[str, Tensor], source: str) -> dict[str, Tensor]:
    """UER weights as :func:`uer_names` names them: a ``module.`` prefix on every name dropped,
    the 3-row segment table cut to rows 1, 2 (our segments 0, 1). A segment table of another
    size is a :class:`ValueError` naming ``source``."""
    if state and all(n.startswith("module.") for n in state):
        state = {n.removeprefix("module."): v for n, v in state.items()}
    out = dict(state)
    name = "embedding.segment_embedding.weight"
    if name in out:
        rows = out[name].shape[0]
        if rows != SEGMENT_ROWS:
            raise ValueError(f"UER checkpoint {source}: {name} has {rows} rows; UER's has {SEGMENT_ROWS} "
                             "(0 padding, 1 sentence A, 2 sentence B)")
        out[name] = out[name][1:]
    return out


def uer_config(values: Mapping[str, Any], vocab_size: int, max_positions: int = 512,
               source: str = "google_config.json") -> dict[str, Any]:
    """``google_config.json`` values → :class:`~graphmatch.nn.mask_transformer.MaskTransformerConfig`
    fields (``transformers.BertConfig`` names). UER's own defaults apply to a missing key
    (``hidden_size``/``emb_size`` 768, ``layers_num`` 12, ``dropout`` 0.1); ``heads_num`` and
    ``feedforward_size`` have none and must be given. ``vocab_size`` and ``max_positions`` are the
    rows of the word and position tables."""
    hidden, emb = values.get("hidden_size", 768), values.get("emb_size", 768)
    missing = [k for k in ("heads_num", "feedforward_size") if values.get(k) is None]
    if missing:
        raise ValueError(f"UER config {source} has no {' or '.join(missing)} (UER has no default for them)")
    if emb != hidden:
        raise ValueError(f"UER config {source}: emb_size {emb} differs from hidden_size {hidden}; "
                         "the BERT encoder needs them equal")
    dropout = float(values.get("dropout", 0.1))
    return dict(vocab_size=int(vocab_size), hidden_size=int(hidden),
                num_hidden_layers=int(values.get("layers_num", 12)), num_attention_heads=int(values["heads_num"]),
                intermediate_size=int(values["feedforward_size"]), hidden_act="gelu",
                hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout,
                max_position_embeddings=int(max_positions), type_vocab_size=SEGMENT_ROWS - 1,
                layer_norm="uer", layer_norm_eps=1e-6)

