"""Word pieces of a BERT checkpoint's ``vocab.txt``, with the words they come from.

English BERT-style checkpoints read WordPiece tokens: a basic tokenizer splits the text into
words (at whitespace and around every punctuation mark and CJK character, lower-casing and
stripping accents for an uncased vocabulary), then each word is split greedily into the longest
vocabulary entries (``geese`` → ``gee ##se``). :class:`WordPieceTokenizer` runs the fast
tokenizer of the ``tokenizers`` library built from the vocabulary (the one HuggingFace's
``BertTokenizerFast`` uses) and keeps for every piece its word and its character offsets in
the original text, for many texts at once (:class:`Pieces`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from itertools import chain
from pathlib import Path
from typing import NamedTuple

import numpy as np
from tokenizers import BertWordPieceTokenizer

from graphmatch.text.segmenters import Span
from graphmatch.text.tokenizer import SPECIAL_TOKENS, VocabLookup
from graphmatch.utils.ragged_np import ptr


class Pieces(NamedTuple):
    """The word pieces and words of ``n`` texts, flat; offsets are in each piece's own text.

    A word is a word of the basic tokenizer; its pieces are consecutive.
    """

    ids: np.ndarray  # [P] vocabulary id of each piece
    start: np.ndarray  # [P] its first character in its text
    end: np.ndarray  # [P] one past its last character
    tokens: list[str]  # [P] the pieces as written in the vocabulary (``##se``)
    piece_ptr: np.ndarray  # [n + 1] the first piece of each text
    word_start: np.ndarray  # [W] first character of each word in its text
    word_end: np.ndarray  # [W] one past its last character
    word_ptr: np.ndarray  # [W + 1] the first piece of each word
    text_words: np.ndarray  # [n + 1] the first word of each text


class WordPieceTokenizer(VocabLookup):
    """A BERT WordPiece vocabulary read by the fast tokenizer of ``tokenizers``.

    Args:
        vocab: path of a ``vocab.txt`` (one piece per line, id = line number) or a
            ``{piece: id}`` mapping.
        lowercase: the vocabulary is uncased: lower-case the text and strip its accents
            (``do_lower_case`` of the checkpoint's ``tokenizer_config.json``).
    """

    def __init__(self, vocab: str | os.PathLike | Mapping[str, int], lowercase: bool = True):
        if isinstance(vocab, Mapping):
            self.vocab = dict(vocab)
        else:
            with open(vocab, encoding="utf-8") as f:
                self.vocab = {line.rstrip("\n"): i for i, line in enumerate(f)}
        missing = [t for t in SPECIAL_TOKENS if t not in self.vocab]
        if missing:
            where = "" if isinstance(vocab, Mapping) else f"{vocab}: "
            raise ValueError(f"{where}vocabulary lacks the special tokens {missing}")
        self.lowercase = lowercase
        self._fast = BertWordPieceTokenizer(self.vocab, lowercase=lowercase)
        self._itos = {i: t for t, i in self.vocab.items()}
        self.pad_id, self.unk_id, self.cls_id, self.sep_id, self.mask_id = (self.vocab[t] for t in SPECIAL_TOKENS)

    @classmethod
    def from_pretrained(cls, path: str | os.PathLike) -> WordPieceTokenizer:
        """The tokenizer of a local checkpoint folder: its ``vocab.txt``, cased or not as its
        ``tokenizer_config.json`` says (``do_lower_case``, default :obj:`True`)."""
        path = Path(path)
        vocab = path / "vocab.txt"
        if not vocab.is_file():
            raise FileNotFoundError(f"no vocab.txt (a WordPiece vocabulary) in {path}")
        lowercase = cls.lowercase_of(path)
        return cls(vocab, lowercase=lowercase)

    @staticmethod
    def lowercase_of(folder: str | os.PathLike) -> bool:
        """``do_lower_case`` of ``folder/tokenizer_config.json`` (default :obj:`True`, also without the file)."""
        config = Path(folder) / "tokenizer_config.json"
        if not config.is_file():
            return True
        try:
            return bool(json.loads(config.read_text(encoding="utf-8")).get("do_lower_case", True))
        except json.JSONDecodeError as err:
            raise ValueError(f"{config}: not JSON ({err.msg}, line {err.lineno})") from None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self.vocab)} pieces, lowercase={self.lowercase})"

    def exact_id(self, token: str) -> int:
        """The id of a vocabulary entry (a piece or a tag such as ``[CLS]``), ``[UNK]`` on a miss."""
        return self.vocab.get(token, self.unk_id)

    token_to_id = exact_id

    def encode_many(self, texts: Sequence[str]) -> Pieces:
        """The pieces and words of every text (no ``[CLS]``/``[SEP]`` added)."""
        encodings = self._fast.encode_batch(list(texts), add_special_tokens=False)
        counts = np.fromiter(map(len, encodings), dtype=np.int64, count=len(encodings))
        total = int(counts.sum())
        ids = np.fromiter(chain.from_iterable(e.ids for e in encodings), dtype=np.int64, count=total)
        offsets = np.fromiter(chain.from_iterable(chain.from_iterable(e.offsets for e in encodings)),
                              dtype=np.int64, count=2 * total).reshape(total, 2)
        word_id = np.fromiter(chain.from_iterable(e.word_ids for e in encodings), dtype=np.int64, count=total)
        piece_ptr = ptr(counts)
        text_of = np.arange(len(encodings)).repeat(counts)
        # a new word where the word id changes or a new text begins
        first = np.ones(total, dtype=bool)
        first[1:] = (word_id[1:] != word_id[:-1]) | (text_of[1:] != text_of[:-1])
        word_ptr = np.append(first.nonzero()[0], total)
        word_text = text_of[word_ptr[:-1]]
        return Pieces(ids, offsets[:, 0].copy(), offsets[:, 1].copy(),
                      list(chain.from_iterable(e.tokens for e in encodings)), piece_ptr,
                      offsets[word_ptr[:-1], 0], offsets[word_ptr[1:] - 1, 1], word_ptr,
                      np.searchsorted(word_text, np.arange(len(encodings) + 1)))

    def tokenize(self, text: str) -> list[str]:
        """The pieces of ``text``."""
        return self._fast.encode(text, add_special_tokens=False).tokens

    def words(self, text: str) -> list[Span]:
        """The basic tokenizer's words of ``text`` as written there, with their offsets."""
        pieces = self.encode_many([text])
        return [Span(text[s:e], s, e) for s, e in zip(pieces.word_start.tolist(), pieces.word_end.tolist(),
                                                      strict=True)]


__all__ = ["Pieces", "WordPieceTokenizer"]
