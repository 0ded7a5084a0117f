"""Character-level tokenizer over a BERT vocabulary that keeps the character alignment.

Chinese BERT vocabularies hold one entry per Chinese character; K-BERT and LET feed one
token per character. ``encode`` drops whitespace (as K-BERT's reference does) and records,
for every token, the offset of its character in the input text.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from graphmatch.io.datafiles import locate

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


class VocabLookup:
    """What every tokenizer of a ``{token: id}`` vocabulary answers alike: its size and the token
    of an id. A subclass sets ``vocab`` (token -> id) and ``_itos`` (id -> token)."""

    vocab: dict[str, int]
    _itos: dict[int, str]

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def __len__(self) -> int:
        return len(self.vocab)

    def id_to_token(self, index: int) -> str:
        return self._itos[index]


class Encoding(NamedTuple):
    tokens: list[str]
    ids: list[int]
    char_index: list[int]


class CharTokenizer(VocabLookup):
    """One token per non-whitespace character, looked up in a BERT ``vocab.txt``.

    Args:
        vocab: path of a ``vocab.txt`` (one token per line, id = line number) or a
            ``{token: id}`` mapping.
        normalize: on an exact miss, retry the lowercase and the NFKC (full-width →
            half-width) form before falling back to ``[UNK]``. K-BERT's reference does no
            normalisation (``DVD`` becomes three ``[UNK]``); :meth:`exact_id` keeps that.
    """

    def __init__(self, vocab: str | os.PathLike | dict[str, int], normalize: bool = True):
        if isinstance(vocab, dict):
            self.vocab = dict(vocab)
        else:
            with open(vocab, encoding="utf-8") as f:
                self.vocab = {line.rstrip("\n"): i for i, line in enumerate(f)}
        missing = [t for t in SPECIAL_TOKENS if t not in self.vocab]
        if missing:
            raise ValueError(f"vocabulary lacks the special tokens {missing}")
        self.normalize = normalize
        self._itos = {i: t for t, i in self.vocab.items()}
        self.pad_id, self.unk_id, self.cls_id, self.sep_id, self.mask_id = (
            self.vocab[t] for t in SPECIAL_TOKENS
        )
        self._cache: dict[str, int] = {}

    @classmethod
    def default(cls, root: str | os.PathLike | None = None, normalize: bool = True) -> CharTokenizer:
        """Google's Chinese BERT vocabulary (21,128 entries)."""
        return cls(locate("kbert/vocab/google_vocab.txt", root), normalize=normalize)

    @classmethod
    def from_texts(cls, texts: Iterable[str], normalize: bool = True) -> CharTokenizer:
        """A vocabulary of the special tokens plus every character of ``texts`` (for offline
        demos and tests without a BERT vocabulary file)."""
        chars = sorted({ch for text in texts for ch in text if not ch.isspace()} - set(SPECIAL_TOKENS))
        return cls({t: i for i, t in enumerate([*SPECIAL_TOKENS, *chars])}, normalize=normalize)

    @classmethod
    def from_pretrained(cls, path: str | os.PathLike, normalize: bool = True) -> CharTokenizer:
        """The vocabulary of a local pretrained model: ``path/vocab.txt``, else its HF tokenizer's
        (a SentencePiece folder: :func:`graphmatch.text.pretrained.char_tokenizer_of`)."""
        path = Path(path)
        if (path / "vocab.txt").is_file():
            return cls(path / "vocab.txt", normalize=normalize)
        from transformers import AutoTokenizer

        hf = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        return cls(hf.get_vocab(), normalize=normalize)

    def exact_id(self, token: str) -> int:
        """Exact vocabulary lookup, ``[UNK]`` on a miss (K-BERT reference behaviour)."""
        return self.vocab.get(token, self.unk_id)

    def token_to_id(self, token: str) -> int:
        """Vocabulary id, normalising the token on a miss when ``normalize`` is set."""
        found = self.vocab.get(token)
        if found is not None:
            return found
        if not self.normalize:
            return self.unk_id
        cached = self._cache.get(token)
        if cached is None:
            cached = self.unk_id
            for form in (token.lower(), unicodedata.normalize("NFKC", token).lower()):
                if form in self.vocab:
                    cached = self.vocab[form]
                    break
            self._cache[token] = cached
        return cached

    def encode(self, text: str) -> Encoding:
        """Tokens, ids and character offsets for every non-whitespace character of ``text``."""
        tokens, ids, index = [], [], []
        for i, ch in enumerate(text):
            if ch.isspace():
                continue
            tokens.append(ch)
            ids.append(self.token_to_id(ch))
            index.append(i)
        return Encoding(tokens, ids, index)
