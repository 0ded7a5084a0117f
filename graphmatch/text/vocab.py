"""A word vocabulary (``<pad>`` = 0, ``<unk>`` = 1) and a reader for pretrained word vectors.

:func:`load_word_vectors` reads the two common text formats: GloVe (``word v1 … vd`` per line)
and word2vec text (the same, after a ``count dim`` header line).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # torch is imported where vectors are read: the tokenizers and segmenters need none
    from torch import Tensor

PAD, UNK = "<pad>", "<unk>"


class Vocab:
    """Token ↔ id map with a padding id 0 and an unknown id 1."""

    pad_id = 0
    unk_id = 1

    def __init__(self, itos: list[str]):
        if itos[:2] != [PAD, UNK]:
            raise ValueError(f"a vocabulary must start with {PAD!r}, {UNK!r}; got {itos[:2]}")
        self.itos = list(itos)
        self.stoi = {tok: i for i, tok in enumerate(self.itos)}
        if len(self.stoi) != len(self.itos):
            raise ValueError("a vocabulary may not list a token twice")

    @classmethod
    def build(cls, token_lists: Iterable[Iterable[str]], min_freq: int = 1) -> Vocab:
        """Tokens seen at least ``min_freq`` times, most frequent first (ties: first seen)."""
        counts: Counter[str] = Counter()
        for tokens in token_lists:
            counts.update(tokens)
        words = [w for w, c in counts.most_common() if c >= min_freq and w not in (PAD, UNK)]
        return cls([PAD, UNK, *words])

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, token: str) -> bool:
        return token in self.stoi

    def __getitem__(self, token: str) -> int:
        return self.stoi.get(token, self.unk_id)

    def lookup(self, tokens: Iterable[str]) -> list[int]:
        get, unk = self.stoi.get, self.unk_id
        return [get(t, unk) for t in tokens]

    def save(self, path: str | os.PathLike) -> None:
        Path(path).write_text(json.dumps(self.itos, ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, path: str | os.PathLike) -> Vocab:
        return cls(json.loads(Path(path).read_text(encoding="utf-8")))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vocab) and self.itos == other.itos

    def __repr__(self) -> str:
        return f"Vocab({len(self)} tokens)"


def load_word_vectors(path: str | os.PathLike, vocab: Vocab, dim: int | None = None) -> tuple[Tensor, Tensor]:
    """Read a GloVe or word2vec text file for the words of ``vocab``.

    Returns ``(vectors [V, d], found [V] bool)``; rows of words absent from the file are zero
    and ``found`` is False there. A word is matched as written, else lowercased. Raises
    :class:`ValueError` naming ``path:line`` on a malformed line or a dimension other than ``dim``.
    """
    import torch

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"word vector file {path} does not exist")
    vectors: Tensor | None = None
    found = torch.zeros(len(vocab), dtype=torch.bool)
    exact = torch.zeros(len(vocab), dtype=torch.bool)
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, start=1):
            parts = line.rstrip().split(" ")
            if n == 1 and len(parts) == 2 and all(p.isdigit() for p in parts):
                continue  # word2vec header "count dim"
            if len(parts) < 2:
                if line.strip():
                    raise ValueError(f"{path}:{n}: expected 'word v1 ... vd', got {line[:60]!r}")
                continue
            word, values = parts[0], parts[1:]
            if vectors is None:
                dim = dim or len(values)
                vectors = torch.zeros(len(vocab), dim)
            if len(values) != dim:
                raise ValueError(f"{path}:{n}: vector of {word!r} has {len(values)} values, expected {dim}")
            is_exact = word in vocab.stoi
            idx = vocab.stoi.get(word, vocab.stoi.get(word.lower()))
            if idx is None or exact[idx] or (found[idx] and not is_exact):
                continue
            try:
                vectors[idx] = torch.tensor([float(v) for v in values])
            except ValueError as err:
                raise ValueError(f"{path}:{n}: {err}") from None
            found[idx] = True
            exact[idx] = is_exact
    if vectors is None:
        raise ValueError(f"{path}: no word vectors in the file")
    return vectors, found
