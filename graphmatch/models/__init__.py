"""One file per paper model, each composed of :mod:`graphmatch.nn` layers.

The models are imported when first named (``graphmatch.models.KBert``, or from their modules), so
that ``graphmatch.models.choices`` can be read without torch."""

from __future__ import annotations

import importlib
from typing import Any

#: each public name and the module that defines it
_WHERE = {"AttBLSTM": "att_blstm", "EntityAttentionBiLSTM": "entity_attention", "KBert": "kbert",
          "LETMatcher": "let", "RelationTransformer": "relation_transformer"}
__all__ = ["AttBLSTM", "EntityAttentionBiLSTM", "KBert", "LETMatcher", "RelationTransformer"]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        value = getattr(importlib.import_module(f"graphmatch.models.{_WHERE[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'graphmatch.models' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})
