"""Knowledge sources: KG triples, the HowNet lexicon and sememe vectors (no torch models here)."""

from graphmatch.knowledge.hownet import HowNetLexicon, load_lexicon
from graphmatch.knowledge.kg import BUILTIN_KGS, KnowledgeGraph
from graphmatch.knowledge.sememe_vectors import SememeVectors, load_sememe_vectors
from graphmatch.knowledge.trie import FlatTrie, Trie

__all__ = [
    "BUILTIN_KGS",
    "HowNetLexicon",
    "KnowledgeGraph",
    "SememeVectors",
    "FlatTrie",
    "Trie",
    "load_lexicon",
    "load_sememe_vectors",
]
