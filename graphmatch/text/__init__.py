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

__all__ = [
    "CharTokenizer",
    "Encoding",
    "JiebaSegmenter",
    "PkusegSegmenter",
    "Segmenter",
    "Span",
    "ThulacSegmenter",
    "align_words",
    "get_segmenter",
    "lattice",
]
