"""Layers over batched graphs (no datasets, no training).

The layers are imported when first named (``graphmatch.nn.SaGT``, or from their modules), so that
``graphmatch.nn.choices`` can be read without torch."""

from __future__ import annotations

from graphmatch.utils.lazy_exports import lazy_exports

#: each public name and the module that defines it
_WHERE = {
    "AdditiveAttentionPooling": "additive_pooling",
    "PackedBiLSTM": "bilstm",
    "EntityAwareAttentionHead": "entity_aware_head",
    "EntityStartHead": "entity_start",
    "FeatureWiseAttentionPooling": "featurewise_pooling",
    "BranchMarking": "branch_marking",
    "HFBertEncoder": "hf_bert",
    "additive_mask": "hf_bert",
    "LatentEntityTyping": "latent_types",
    "MaskSelfAttention": "mask_attention",
    "visibility_density": "mask_attention",
    "MaskTransformerConfig": "mask_transformer",
    "MaskTransformerEncoder": "mask_transformer",
    "MDGATConv": "mdgat_conv",
    "MultiPerspectiveCosine": "mp_cosine",
    "SaGT": "sagt",
    "SaGTLayer": "sagt",
    "expand_to_senses": "sagt",
    "SememeAttention": "sememe_attention",
    "group_edges": "sememe_attention",
}
__all__ = sorted(_WHERE)

#: names of the release before, kept for one release: old name -> new name
RENAMED = {"AttentionPooling": "AdditiveAttentionPooling", "AttentivePooling": "FeatureWiseAttentionPooling"}


__getattr__, __dir__ = lazy_exports("graphmatch.nn", globals(), _WHERE, RENAMED)
