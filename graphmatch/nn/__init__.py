"""Layers over batched graphs (no datasets, no training).

The layers are imported when first named (``graphmatch.nn.SaGT``, or from their modules), so that
``graphmatch.nn.choices`` can be read without torch."""

from __future__ import annotations

import importlib
import warnings
from typing import Any

#: each public name and the module that defines it
_WHERE = {
    "AdditiveAttentionPooling": "additive_pooling",
    "PackedBiLSTM": "bilstm",
    "EntityAwareAttentionHead": "entity_aware_head",
    "EntityStartHead": "entity_start",
    "FeatureWiseAttentionPooling": "featurewise_pooling",
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


def __getattr__(name: str) -> Any:
    if name in RENAMED:
        new = RENAMED[name]
        warnings.warn(f"graphmatch.nn.{name} is renamed {new}; the old name goes in the next release",
                      DeprecationWarning, stacklevel=2)
        return __getattr__(new)
    if name in _WHERE:
        value = getattr(importlib.import_module(f"graphmatch.nn.{_WHERE[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'graphmatch.nn' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})
