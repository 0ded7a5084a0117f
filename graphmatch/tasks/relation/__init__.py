"""The relation family (``task: relation``): :mod:`~graphmatch.tasks.relation.base` holds what its
variants share and the ``{model.name: class}`` registry :data:`~graphmatch.tasks.relation.base.VARIANTS`;
each variant module registers itself: :mod:`~graphmatch.tasks.relation.bilstm` (Att-BLSTM, the
entity-aware BiLSTM) and :mod:`~graphmatch.tasks.relation.transformer` (a pretrained transformer with
an entity-start or an entity-aware attention head). Importing this package registers both."""

from graphmatch.tasks.relation.base import (
    PROBS_DIGITS,
    UNKNOWN_WARNING,
    VARIANTS,
    BiLSTMModel,
    RelationData,
    RelationKeys,
    RelationModel,
    RelationTask,
    TransformerModel,
    variant,
    write_answers,
)
from graphmatch.tasks.relation.bilstm import BiLSTMRelationTask
from graphmatch.tasks.relation.transformer import TransformerRelationTask, grown_embeddings

__all__ = ["PROBS_DIGITS", "UNKNOWN_WARNING", "VARIANTS", "BiLSTMModel", "BiLSTMRelationTask", "RelationData",
           "RelationKeys", "RelationModel", "RelationTask", "TransformerModel", "TransformerRelationTask",
           "grown_embeddings", "variant", "write_answers"]
