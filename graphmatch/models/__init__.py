"""One file per paper model, each composed of :mod:`graphmatch.nn` layers.

The models are imported when first named (``graphmatch.models.KBert``, or from their modules), so
that ``graphmatch.models.choices`` can be read without torch."""

from __future__ import annotations

from graphmatch.utils.lazy_exports import lazy_exports

#: each public name and the module that defines it
_WHERE = {"AttBLSTM": "att_blstm", "EntityAttentionBiLSTM": "entity_attention", "KBert": "kbert",
          "LETMatcher": "let", "RelationTransformer": "relation_transformer"}
__all__ = ["AttBLSTM", "EntityAttentionBiLSTM", "KBert", "LETMatcher", "RelationTransformer"]


__getattr__, __dir__ = lazy_exports("graphmatch.models", globals(), _WHERE)
