"""Text processing: segmenters with character spans and a character tokenizer."""

from graphmatch.text.segmenters import (
    JiebaSegmenter,
    PkusegSegmenter,
    Segmenter,
    Span,
    ThulacSegmenter,
    align_words,
    get_segmenter,
    lattice,
)
from graphmatch.text.tokenizer import CharTokenizer, Encoding
from graphmatch.text.vocab import Vocab, load_word_vectors

__all__ = [
    "CharTokenizer",
    "Encoding",
    "JiebaSegmenter",
    "PkusegSegmenter",
    "Segmenter",
    "Span",
    "ThulacSegmenter",
    "Vocab",
    "align_words",
    "get_segmenter",
    "lattice",
    "load_word_vectors",
]
