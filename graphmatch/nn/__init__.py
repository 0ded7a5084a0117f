"""Layers over batched graphs (no datasets, no training)."""

import warnings
from typing import Any

from graphmatch.nn.additive_pooling import AdditiveAttentionPooling  # noqa: F401
from graphmatch.nn.bilstm import PackedBiLSTM  # noqa: F401
from graphmatch.nn.entity_aware_head import EntityAwareAttentionHead  # noqa: F401
from graphmatch.nn.entity_start import EntityStartHead  # noqa: F401
from graphmatch.nn.featurewise_pooling import FeatureWiseAttentionPooling  # noqa: F401
from graphmatch.nn.hf_bert import HFBertEncoder, additive_mask  # noqa: F401
from graphmatch.nn.latent_types import LatentEntityTyping  # noqa: F401
from graphmatch.nn.mask_attention import MaskSelfAttention, visibility_density  # noqa: F401
from graphmatch.nn.mask_transformer import MaskTransformerConfig, MaskTransformerEncoder  # noqa: F401
from graphmatch.nn.mdgat_conv import MDGATConv  # noqa: F401
from graphmatch.nn.mp_cosine import MultiPerspectiveCosine  # noqa: F401
from graphmatch.nn.sagt import SaGT, SaGTLayer, expand_to_senses  # noqa: F401
from graphmatch.nn.sememe_attention import SememeAttention, group_edges  # noqa: F401

#: names of the release before, kept for one release: old name -> new name
RENAMED = {"AttentionPooling": "AdditiveAttentionPooling", "AttentivePooling": "FeatureWiseAttentionPooling"}


def __getattr__(name: str) -> Any:
    if name in RENAMED:
        new = RENAMED[name]
        warnings.warn(f"graphmatch.nn.{name} is renamed {new}; the old name goes in the next release",
                      DeprecationWarning, stacklevel=2)
        return globals()[new]
    raise AttributeError(f"module 'graphmatch.nn' has no attribute {name!r}")
