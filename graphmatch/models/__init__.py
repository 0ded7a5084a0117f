"""One file per paper model, each composed of :mod:`graphmatch.nn` layers."""

from graphmatch.models.att_blstm import AttBLSTM
from graphmatch.models.entity_attention import EntityAttentionBiLSTM
from graphmatch.models.kbert import KBert
from graphmatch.models.let import LETMatcher
from graphmatch.models.relation_transformer import RelationTransformer

__all__ = ["AttBLSTM", "EntityAttentionBiLSTM", "KBert", "LETMatcher", "RelationTransformer"]
