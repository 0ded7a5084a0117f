"""One file per paper model, each composed of :mod:`graphmatch.nn` layers and made from one config
object beside it (``KBert(encoder, KBertConfig(...))``, as HF's ``BertLayer(config)``).

The models are imported when first named (``graphmatch.models.KBert``, or from their modules), so
that ``graphmatch.models.choices`` can be read without torch."""

from __future__ import annotations

from graphmatch.utils.lazy_exports import lazy_exports

#: each public name and the module that defines it
_WHERE = {"AttBLSTM": "att_blstm", "AttBLSTMConfig": "att_blstm", "EntityAttentionBiLSTM": "entity_attention",
          "EntityAttentionConfig": "entity_attention", "KBert": "kbert", "KBertConfig": "kbert",
          "LETConfig": "let", "LETMatcher": "let", "RelationTransformer": "relation_transformer",
          "RelationTransformerConfig": "relation_transformer"}
__all__ = sorted(_WHERE)


__getattr__, __dir__ = lazy_exports("graphmatch.models", globals(), _WHERE)
