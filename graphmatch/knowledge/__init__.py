"""Knowledge sources: KG triples, the HowNet lexicon and sememe vectors, WordNet's nouns and their
morphology (no torch models here).

The names are imported when first used (``graphmatch.knowledge.KnowledgeGraph``, or from their
modules), so that importing one module of the package does not load the others."""

from __future__ import annotations

from graphmatch.utils.lazy_exports import lazy_exports

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
    "is_own_kg": "kg",
    "resolve_kg": "kg",
    "load_lexicon": "hownet",
    "load_sememe_vectors": "sememe_vectors",
}
__all__ = list(_WHERE)


__getattr__, __dir__ = lazy_exports("graphmatch.knowledge", globals(), _WHERE)
