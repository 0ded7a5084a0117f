"""Knowledge sources: KG triples, the HowNet lexicon and sememe vectors, WordNet's nouns and their
morphology (no torch models here)."""

from graphmatch.knowledge.hownet import HowNetLexicon, load_lexicon
from graphmatch.knowledge.kg import BUILTIN_KGS, KnowledgeGraph, builtin_kg_path, resolve_kg
from graphmatch.knowledge.morphy import Lemmatizer
from graphmatch.knowledge.sememe_vectors import SememeVectors, load_sememe_vectors
from graphmatch.knowledge.trie import FlatTrie, Trie
from graphmatch.knowledge.wordnet import WordNet

__all__ = [
    "BUILTIN_KGS",
    "HowNetLexicon",
    "KnowledgeGraph",
    "Lemmatizer",
    "SememeVectors",
    "FlatTrie",
    "Trie",
    "WordNet",
    "builtin_kg_path",
    "resolve_kg",
    "load_lexicon",
    "load_sememe_vectors",
]
