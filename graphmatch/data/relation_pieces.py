"""A checkpoint's tokenizer as relation word pieces, for BERT's WordPiece and for SentencePiece
(XLM-R, multilingual-e5) checkpoints alike.

A BERT vocabulary has ``[unusedN]`` slots: the entity markers take the first four
(:class:`~graphmatch.graphs.relation.WordPieces`) and the embedding table keeps its size. A
SentencePiece vocabulary (e5-small: 250,002 pieces) has none: :class:`SentencePieces` adds
``<e1>`` ``</e1>`` ``<e2>`` ``</e2>`` to it as four new tokens (ids 250,002-250,005 for e5), so the
encoder's embedding table needs four more rows (the task grows it when it loads the checkpoint).

SentencePiece writes ``▁`` for a space and before the text; cut at the entity boundaries and read
piece by piece, ``我的<e1>母亲</e1>`` would put a ``▁`` before ``母亲`` that e5 never puts there.
:class:`SentencePieceRelationBuilder` reads the first text piece of a sentence as e5 reads a text and
every other piece as a continuation (no ``▁`` before it), a piece's trailing spaces moved to the next
one, so the pieces between the markers are e5's own wherever e5 itself cuts at the entity boundaries.
"""

from __future__ import annotations

import os
from pathlib import Path

from graphmatch.graphs.relation import RelationGraphBuilder, RelationSentence, WordPieces, tokenize_marked
from graphmatch.graphs.relation_markup import MARKERS, MarkedSentence, parse_markup
from graphmatch.graphs.relation_options import RelationOptions
from graphmatch.text.sentencepiece import SentencePieceTokenizer, is_sentencepiece
from graphmatch.utils.read_once import read_once


class SentencePieces(WordPieces):
    """A SentencePiece checkpoint's tokenizer with the entity markers added as tokens; ``<s>`` …
    ``</s>`` around the sentence, pad ``<pad>``.

    Args:
        pieces: the folder's :class:`~graphmatch.text.sentencepiece.SentencePieceTokenizer`, which
            also reads a text piece as a continuation.
        name: the folder (named in errors).
    """

    def __init__(self, pieces: SentencePieceTokenizer, name: str):
        super().__init__(_MarkedTokenizer(pieces, MARKERS, name), markers=MARKERS)
        self.pieces = pieces

    def split_piece(self, text: str, first: bool) -> list[str]:
        """The pieces of ``text``: read as a text (``▁`` before it) when it begins the sentence, else as
        a continuation of the text before it."""
        return self.pieces.encode_many([text], prefix=first).tokens


class SentencePieceRelationBuilder(RelationGraphBuilder):
    """:class:`~graphmatch.graphs.relation.RelationGraphBuilder` over :class:`SentencePieces`: the text
    pieces between the entity boundaries read as one text (module docstring), one sentence at a time."""

    def __init__(self, vocab: SentencePieces, options: RelationOptions | None = None, **kwargs):
        super().__init__(vocab, options, **{**kwargs, "split_many": None})

    def tokenized(self, sentence: str | MarkedSentence | RelationSentence, where: str = "input") -> RelationSentence:
        if isinstance(sentence, str):
            sentence = parse_markup(sentence, where)
        if isinstance(sentence, MarkedSentence):
            sentence = tokenize_marked(sentence, _Continuing(self.vocab), where)
        return super().tokenized(sentence, where)


class _MarkedTokenizer:
    """What :class:`~graphmatch.graphs.relation.WordPieces` reads of a ``transformers`` tokenizer, for a
    SentencePiece ``tokenizer.json`` with ``markers`` added as special tokens after its pieces, as
    ``tokenizer.add_tokens(markers, special_tokens=True)`` adds them (the same ids and pieces), without
    loading ``transformers``' tokenizer (seconds for e5-small): a copy of the file's tokenizer that
    shares its pieces."""

    def __init__(self, pieces: SentencePieceTokenizer, markers: tuple[str, ...], name: str):
        self.name_or_path = name
        self._fast = pieces.copy()
        self._fast.add_special_tokens(list(markers))
        self.cls_token, self.sep_token, self.pad_token, self.unk_token, self.mask_token = (
            pieces.token_of(role) for role in ("[CLS]", "[SEP]", "[PAD]", "[UNK]", "[MASK]"))
        self.cls_token_id, self.sep_token_id, self.pad_token_id, self.unk_token_id, self.mask_token_id = (
            pieces.cls_id, pieces.sep_id, pieces.pad_id, pieces.unk_id, pieces.mask_id)

    def __len__(self) -> int:
        return self._fast.get_vocab_size(with_added_tokens=True)

    def get_vocab(self) -> dict[str, int]:
        return self._fast.get_vocab(with_added_tokens=True)

    def tokenize(self, text: str) -> list[str]:
        return self._fast.encode(text, add_special_tokens=False).tokens

    def convert_tokens_to_ids(self, tokens: str | list[str]) -> int | list[int]:
        """The id of a token, or of each (``<unk>``'s for a token not in the vocabulary)."""
        if isinstance(tokens, str):
            found = self._fast.token_to_id(tokens)
            return self.unk_token_id if found is None else found
        return [self.convert_tokens_to_ids(t) for t in tokens]


class _Continuing:
    """``split`` for the five text pieces of one sentence, in order (:func:`tokenize_marked`): the first
    with text is read as the sentence's start, the others as continuations; trailing spaces go on."""

    def __init__(self, pieces: SentencePieces):
        self.pieces = pieces
        self.first = True
        self.carry = ""

    def __call__(self, piece: str) -> list[str]:
        text = self.carry + piece
        body = text.rstrip()
        self.carry = text[len(body):]
        if not body:
            return []
        tokens = self.pieces.split_piece(body, self.first)
        self.first = False
        return tokens


def relation_pieces(path: str | os.PathLike) -> WordPieces:
    """The relation word pieces of a checkpoint folder: :class:`SentencePieces` for a SentencePiece
    ``tokenizer.json`` without a ``vocab.txt``, else BERT's word pieces with the markers in
    ``[unusedN]`` slots."""
    path = Path(path)
    if not (path / "vocab.txt").is_file() and (path / "tokenizer.json").is_file():
        files = b"\0".join((path / name).read_bytes() if (path / name).is_file() else b"" for name in TOKENIZER_FILES)
        pieces = read_once("relation_pieces", files, lambda: _read_sentence_pieces(path))
        if pieces is not None:
            return pieces
    return WordPieces.from_pretrained(path)


#: the files of a folder that make its SentencePiece tokenizer (:class:`SentencePieceTokenizer` reads
#: them): the same content is read once per process (:func:`~graphmatch.utils.read_once.read_once`; a
#: task, its three splits and a reloaded run with its own copy of the files share one reading, which
#: its readers do not change)
TOKENIZER_FILES = ("tokenizer.json", "special_tokens_map.json")


def _read_sentence_pieces(path: Path) -> SentencePieces | None:
    """The pieces of a folder with a SentencePiece ``tokenizer.json``, else ``None``."""
    if not is_sentencepiece(path / "tokenizer.json"):
        return None
    return SentencePieces(SentencePieceTokenizer(path / "tokenizer.json"), str(path))


def builder_for_pieces(pieces: WordPieces, options: RelationOptions | None = None,
                       keep_text: bool = False) -> RelationGraphBuilder:
    """The relation graph builder over ``pieces`` with ``options`` (:class:`SentencePieceRelationBuilder`
    for SentencePiece)."""
    kind = SentencePieceRelationBuilder if isinstance(pieces, SentencePieces) else RelationGraphBuilder
    return kind.for_pieces(pieces, options, keep_text=keep_text)


__all__ = ["SentencePieceRelationBuilder", "SentencePieces", "builder_for_pieces", "relation_pieces"]
