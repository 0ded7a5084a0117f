"""The tokenizer of a checkpoint, without importing torch: its folder (a packaged short name such
as ``minilm``: :func:`graphmatch.pretrained.packaged.packaged_pretrained`), and the rule that tells a
Chinese character vocabulary from an English word-piece one.

``tokenization="auto"`` reads the vocabulary and takes word pieces when under half of its
entries are single CJK characters (bare or ``##``-continued): Google's Chinese BERT vocabulary
has 14,644 of 21,128 (69 %), MiniLM's (English, uncased) 492 of 30,522 (1.6 %). A checkpoint
without ``vocab.txt`` whose ``tokenizer.json`` is a SentencePiece one (XLM-R, multilingual-e5:
:func:`~graphmatch.text.sentencepiece.is_sentencepiece`) is read as ``"sentencepiece"``.
"""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

from graphmatch.pretrained.packaged import SHORT_NAMES, packaged_pretrained
from graphmatch.text.sentencepiece import SentencePieceTokenizer, is_sentencepiece
from graphmatch.text.tokenizer import CharTokenizer
from graphmatch.text.wordpiece import WordPieceTokenizer
from graphmatch.utils.deprecated import renamed

TOKENIZATIONS = ("auto", "chars", "wordpiece", "sentencepiece")


def pretrained_folder(name_or_path: str | os.PathLike, key: str = "--pretrained") -> Path:
    """A short name's folder, or ``name_or_path`` when it is a folder (no weights are checked)."""
    text = os.fspath(name_or_path)
    if text in SHORT_NAMES:
        return packaged_pretrained(text, key)
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


def tokenization_of(vocab: str | os.PathLike, tokenization: str = "auto", tagging: bool = False) -> str:
    """``"chars"``, ``"wordpiece"`` or ``"sentencepiece"``: ``tokenization`` itself, or for ``"auto"``
    what the vocabulary is (a ``tokenizer.json``: SentencePiece; a ``vocab.txt``: :func:`is_wordpiece_vocab`).
    A ``tokenizer.json`` reads as its pieces, or as characters looked up among its pieces
    (``"chars"``; ``"auto"`` with ``tagging``, for data tagged per character)."""
    if tokenization not in TOKENIZATIONS:
        raise ValueError(f"tokenization must be one of {', '.join(TOKENIZATIONS)}, got {tokenization!r}")
    if Path(vocab).name == "tokenizer.json":
        if not is_sentencepiece(vocab):
            raise ValueError(f"{vocab}: not a SentencePiece tokenizer (no Metaspace pre-tokenizer) and no vocab.txt "
                             "beside it")
        if tokenization == "wordpiece":
            raise ValueError(f"tokenization 'wordpiece' needs a vocab.txt; {vocab} is a SentencePiece "
                             "tokenizer: use sentencepiece, chars (or auto)")
        if tokenization == "auto":
            return "chars" if tagging else "sentencepiece"
        return tokenization
    if tokenization == "sentencepiece":
        raise ValueError(f"tokenization 'sentencepiece' needs a SentencePiece tokenizer.json; {vocab} is a vocab.txt")
    if tokenization != "auto":
        return tokenization
    return "wordpiece" if is_wordpiece_vocab(vocab) else "chars"


def pretrained_vocab(folder: str | os.PathLike) -> Path:
    """``folder/vocab.txt``, else a SentencePiece ``folder/tokenizer.json``; a folder with neither is
    a one-line error."""
    vocab = Path(folder) / "vocab.txt"
    if vocab.is_file():
        return vocab
    spm = Path(folder) / "tokenizer.json"
    if spm.is_file() and is_sentencepiece(spm):
        return spm
    raise FileNotFoundError(f"no vocab.txt (a BERT vocabulary) in the checkpoint folder {folder} (nor a "
                            "SentencePiece tokenizer.json)")


def pretrained_tokenizer(name_or_path: str | os.PathLike, tokenization: str = "auto",
                         key: str = "--pretrained") -> CharTokenizer | WordPieceTokenizer | SentencePieceTokenizer:
    """The K-BERT tokenizer of a checkpoint folder or short name: its ``vocab.txt`` as
    :func:`tokenizer_for` says, uncased as its ``tokenizer_config.json`` says."""
    folder = pretrained_folder(name_or_path, key)
    return tokenizer_for(pretrained_vocab(folder), tokenization, WordPieceTokenizer.lowercase_of(folder))


def tokenizer_for(vocab: str | os.PathLike, tokenization: str = "auto",
                  lowercase: bool = True) -> CharTokenizer | WordPieceTokenizer | SentencePieceTokenizer:
    """The K-BERT tokenizer of a vocabulary: characters, word pieces or SentencePiece pieces
    (:func:`tokenization_of`); characters of a ``tokenizer.json`` are looked up among its pieces
    (:meth:`~graphmatch.text.sentencepiece.SentencePieceTokenizer.char_vocab`)."""
    kind = tokenization_of(vocab, tokenization)
    if kind == "wordpiece":
        return WordPieceTokenizer(vocab, lowercase=lowercase)
    if kind == "sentencepiece":
        return SentencePieceTokenizer(vocab)
    if Path(vocab).name == "tokenizer.json":
        return CharTokenizer(SentencePieceTokenizer(vocab).char_vocab())
    return CharTokenizer(vocab)


def pair_segments(folder: str | os.PathLike) -> bool:
    """Whether a checkpoint gives the second text of a pair token type 1: BERT (a ``vocab.txt``) does;
    a SentencePiece checkpoint as its ``tokenizer.json``'s pair template says (XLM-R, multilingual-e5:
    type 0 for both texts, :attr:`~graphmatch.text.sentencepiece.SentencePieceTokenizer.pair_segments`)."""
    folder = Path(folder)
    spm = folder / "tokenizer.json"
    if (folder / "vocab.txt").is_file() or not is_sentencepiece(spm):
        return True
    return SentencePieceTokenizer(spm).pair_segments


def piece_tokenizer_of(folder: str | os.PathLike, key: str) -> WordPieceTokenizer | SentencePieceTokenizer:
    """A checkpoint folder's own subword tokenizer (word pieces or SentencePiece pieces); a folder
    whose vocabulary is characters (a Chinese BERT's) is a ValueError naming ``key``: its pieces
    are its characters."""
    tokenizer = pretrained_tokenizer(folder, key=key)
    if isinstance(tokenizer, CharTokenizer):
        raise ValueError(f"{key}=pieces: {folder} reads one character a token (a character vocabulary); "
                         "its pieces are the characters, read characters instead")
    return tokenizer


def char_tokenizer_of(folder: str | os.PathLike) -> CharTokenizer:
    """One token per character over a checkpoint folder: its ``vocab.txt``; else the single-character
    pieces of a SentencePiece ``tokenizer.json`` (XLM-R, multilingual-e5:
    :meth:`~graphmatch.text.sentencepiece.SentencePieceTokenizer.char_vocab`, ``[CLS]`` → ``<s>``);
    else its HF tokenizer's vocabulary."""
    spm = Path(folder) / "tokenizer.json"
    if not (Path(folder) / "vocab.txt").is_file() and is_sentencepiece(spm):
        return CharTokenizer(SentencePieceTokenizer(spm).char_vocab())
    return CharTokenizer.from_pretrained(folder)


def vocab_size(vocab: str | os.PathLike) -> int:
    """Entries of a ``vocab.txt`` (its lines) or of a ``tokenizer.json`` (pieces and added tokens)."""
    if Path(vocab).name == "tokenizer.json":
        return len(SentencePieceTokenizer(vocab))
    with open(vocab, encoding="utf-8") as f:
        return sum(1 for _ in f)


__all__ = [
    "TOKENIZATIONS",
    "char_tokenizer_of",
    "pretrained_folder",
    "pretrained_tokenizer",
    "pretrained_vocab",
    "is_wordpiece_vocab",
    "pair_segments",
    "piece_tokenizer_of",
    "tokenization_of",
    "tokenizer_for",
    "vocab_size",
]


#: names of the previous release, kept for one release with a warning
__getattr__ = renamed(__name__, {
    "checkpoint_folder": "pretrained_folder",
    "checkpoint_vocab": "pretrained_vocab",
    "checkpoint_tokenizer": "pretrained_tokenizer",
}, globals())
