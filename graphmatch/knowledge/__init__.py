"""Knowledge sources: KG triples, the HowNet lexicon and sememe vectors, WordNet's nouns and their
morphology (no torch models here).

The names are imported when first used (``graphmatch.knowledge.KnowledgeGraph``, or from their
modules), so that importing one module of the package does not load the others."""

from __future__ import annotations

import importlib
from typing import Any

#: each public name and the module that defines it
_WHERE = {
    "BUILTIN_KGS": "kg",
    "HowNetLexicon": "hownet",
    "KnowledgeGraph": "kg",
    "Lemmatizer": "morphy",
    "SememeVectors": "sememe_vectors",
    "FlatTrie": "trie",
    "Trie": "trie",
    "WordNet": "wordnet",
    "builtin_kg_path": "kg",
    "resolve_kg": "kg",
    "load_lexicon": "hownet",
    "load_sememe_vectors": "sememe_vectors",
}
__all__ = list(_WHERE)


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        value = getattr(importlib.import_module(f"graphmatch.knowledge.{_WHERE[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'graphmatch.knowledge' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})
