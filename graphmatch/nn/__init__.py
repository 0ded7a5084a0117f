"""Layers over batched graphs (no datasets, no training)."""

from graphmatch.nn.attention_aggr import AttentionPooling  # noqa: F401
from graphmatch.nn.attentive_pooling import AttentivePooling  # noqa: F401
from graphmatch.nn.bilstm import PackedBiLSTM  # noqa: F401
from graphmatch.nn.entity_aware_head import EntityAwareAttentionHead  # noqa: F401
from graphmatch.nn.entity_start import EntityStartHead  # noqa: F401
from graphmatch.nn.hf_bert import HFBertEncoder, additive_mask  # noqa: F401
from graphmatch.nn.latent_types import LatentEntityTyping  # noqa: F401
from graphmatch.nn.mask_attention import MaskSelfAttention, visibility_density  # noqa: F401
from graphmatch.nn.mask_transformer import MaskTransformerConfig, MaskTransformerEncoder  # noqa: F401
from graphmatch.nn.mdgat_conv import MDGATConv  # noqa: F401
from graphmatch.nn.mp_cosine import MultiPerspectiveCosine  # noqa: F401
from graphmatch.nn.sagt import SaGT, SaGTLayer, expand_to_senses  # noqa: F401
from graphmatch.nn.sememe_attention import SememeAttention, group_edges  # noqa: F401
