"""The tokenizer of a checkpoint, without importing torch: its folder (a packaged short name such
as ``minilm``: :func:`graphmatch.datafiles.packaged_checkpoint`), and the rule that tells a
Chinese character vocabulary from an English word-piece one.

``tokenization="auto"`` reads the vocabulary and takes word pieces when under half of its
entries are single CJK characters (bare or ``##``-continued): Google's Chinese BERT vocabulary
has 14,644 of 21,128 (69 %), MiniLM's (English, uncased) 492 of 30,522 (1.6 %).
"""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

from graphmatch.datafiles import SHORT_NAMES, packaged_checkpoint
from graphmatch.text.tokenizer import CharTokenizer
from graphmatch.text.wordpiece import WordPieceTokenizer

TOKENIZATIONS = ("auto", "chars", "wordpiece")


def checkpoint_folder(name_or_path: str | os.PathLike, key: str = "--pretrained") -> Path:
    """A short name's folder, or ``name_or_path`` when it is a folder (no weights are checked)."""
    text = os.fspath(name_or_path)
    if text in SHORT_NAMES:
        return packaged_checkpoint(text, key)
    path = Path(text).expanduser()
    if not path.is_dir():
        raise FileNotFoundError(f"{key}: no checkpoint folder {path} (give a local checkpoint folder or one of "
                                f"{', '.join(SHORT_NAMES)})")
    return path


def _cjk(entry: str) -> bool:
    entry = entry[2:] if entry.startswith("##") else entry
    return len(entry) == 1 and unicodedata.name(entry, "").startswith("CJK")


def is_wordpiece_vocab(vocab: str | os.PathLike) -> bool:
    """Whether a ``vocab.txt`` is a word-piece one: under half of its entries are single CJK characters."""
    with open(vocab, encoding="utf-8") as f:
        entries = [line.rstrip("\n") for line in f]
    return 2 * sum(map(_cjk, entries)) < len(entries)


def tokenization_of(vocab: str | os.PathLike, tokenization: str = "auto") -> str:
    """``"chars"`` or ``"wordpiece"``: ``tokenization`` itself, or for ``"auto"`` what the
    vocabulary is (:func:`is_wordpiece_vocab`)."""
    if tokenization not in TOKENIZATIONS:
        raise ValueError(f"tokenization must be one of {', '.join(TOKENIZATIONS)}, got {tokenization!r}")
    if tokenization != "auto":
        return tokenization
    return "wordpiece" if is_wordpiece_vocab(vocab) else "chars"


def checkpoint_vocab(folder: str | os.PathLike) -> Path:
    """``folder/vocab.txt``; a folder without one is a one-line error."""
    vocab = Path(folder) / "vocab.txt"
    if not vocab.is_file():
        raise FileNotFoundError(f"no vocab.txt (a BERT vocabulary) in the checkpoint folder {folder}")
    return vocab


def checkpoint_tokenizer(name_or_path: str | os.PathLike, tokenization: str = "auto",
                         key: str = "--pretrained") -> CharTokenizer | WordPieceTokenizer:
    """The K-BERT tokenizer of a checkpoint folder or short name: its ``vocab.txt`` as
    :func:`tokenizer_for` says, uncased as its ``tokenizer_config.json`` says."""
    folder = checkpoint_folder(name_or_path, key)
    return tokenizer_for(checkpoint_vocab(folder), tokenization, WordPieceTokenizer.lowercase_of(folder))


def tokenizer_for(vocab: str | os.PathLike, tokenization: str = "auto",
                  lowercase: bool = True) -> CharTokenizer | WordPieceTokenizer:
    """The K-BERT tokenizer of a vocabulary: characters or word pieces (:func:`tokenization_of`)."""
    if tokenization_of(vocab, tokenization) == "wordpiece":
        return WordPieceTokenizer(vocab, lowercase=lowercase)
    return CharTokenizer(vocab)


__all__ = ["TOKENIZATIONS", "checkpoint_folder", "checkpoint_tokenizer", "checkpoint_vocab", "is_wordpiece_vocab",
           "tokenization_of", "tokenizer_for"]
