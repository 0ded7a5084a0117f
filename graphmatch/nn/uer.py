r"""UER checkpoints (the official K-BERT code's; their files: :mod:`graphmatch.pretrained.uer`) as
:class:`~graphmatch.nn.mask_transformer.MaskTransformerEncoder` reads them.

* :func:`uer_names`: our name → UER name. UER's per-layer ``self_attn.linear_layers.{0,1,2}``
  are Q, K, V, ``final_linear`` the attention output, ``feed_forward.linear_{1,2}`` the
  feed-forward, ``layer_norm_{1,2}`` (``gamma``/``beta``) the two LayerNorms; BERT's pooler is
  UER's ``target.nsp_linear_1`` (UER's Google→UER conversion puts ``bert/pooler/dense`` there).
  A fine-tuned classifier has no ``target.*``: the pooler is then initialised fresh, which the
  ``uer`` head does not use.
* :class:`UERLayerNorm`: UER's LayerNorm, which is not BERT's (below).
Everything else in the official forward pass is what our encoder computes: embeddings summed
then normalised, post-LayerNorm layers, attention scores divided by :math:`\sqrt{d_{head}}`, the
erf GELU :math:`x\,\Phi(x)`, dropout in the same places, and the visible matrix added as
:math:`(1 - \mathbf{M}) \cdot (-10000)`, where we use the dtype's minimum: for a token that sees
anything, :math:`e^{-10000}` is exactly 0 in float32, so the two agree; the rows that see nothing
are padding, which the official code averages over every token and we zero (the
``uer`` head reads ``[CLS]`` only; see ``docs/kbert_reference.md``).
"""

from __future__ import annotations

from torch import Tensor, nn

#: UER checkpoint names an encoder may find missing: the pooler (a fine-tuned classifier has no target)
UER_MISSING_OK: tuple[str, ...] = ("target.nsp_linear_1.*",)
#: UER checkpoint names an encoder may leave unused: pretraining heads, a fine-tuned K-BERT's head
UER_UNUSED_OK: tuple[str, ...] = ("target.*", "output_layer.*", "output_layer_1.*", "output_layer_2.*")
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
