"""Text processing: segmenters with character spans, a character tokenizer and a word-piece tokenizer."""

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
from graphmatch.text.sentencepiece import SentencePieceTokenizer
from graphmatch.text.tokenizer import CharTokenizer, Encoding
from graphmatch.text.vocab import Vocab, load_word_vectors
from graphmatch.text.wordpiece import Pieces, WordPieceTokenizer

__all__ = [
    "CharTokenizer",
    "Encoding",
    "JiebaSegmenter",
    "Pieces",
    "PkusegSegmenter",
    "Segmenter",
    "SentencePieceTokenizer",
    "Span",
    "ThulacSegmenter",
    "Vocab",
    "WordPieceTokenizer",
    "align_words",
    "get_segmenter",
    "lattice",
    "load_word_vectors",
]
