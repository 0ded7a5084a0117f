"""The pieces of a SentencePiece checkpoint (XLM-R, multilingual-e5: ``tokenizer.json``), with offsets.

A SentencePiece tokenizer writes the text with ``▁`` for every space (and one before the text)
and cuts the whole string into the pieces of highest probability (Unigram) or by merges
(BPE); a piece may hold several Chinese characters (``进一步加强``). :class:`SentencePieceTokenizer`
runs the checkpoint's own fast tokenizer (``tokenizers``) and keeps, for every piece, the
characters it covers in the original text: a piece that starts with ``▁`` starts at its first
character that is not a space.

:meth:`SentencePieceTokenizer.encode_many` with ``prefix=False`` reads each text as the
continuation of a text (no ``▁`` before it): the pieces of a text cut at given offsets, and
injected K-BERT branches, which follow their word without a space.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from itertools import chain
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from graphmatch.pretrained.files import read_tokenizer_json
from graphmatch.text.tokenizer import SPECIAL_TOKENS, VocabLookup
from graphmatch.text.wordpiece import Pieces
from graphmatch.utils.ragged_np import ptr
from graphmatch.utils.read_once import read_once

_META = "\u2581"
#: the parts of a ``tokenizer.json`` besides its model and added tokens
_PARTS = ("normalizer", "pre_tokenizer", "post_processor", "decoder")
#: the checkpoint's names of BERT's special tokens, looked up in ``special_tokens_map.json``
_ROLES = {"[PAD]": "pad_token", "[UNK]": "unk_token", "[CLS]": "cls_token", "[SEP]": "sep_token",
          "[MASK]": "mask_token"}
_DEFAULTS = {"[PAD]": "<pad>", "[UNK]": "<unk>", "[CLS]": "<s>", "[SEP]": "</s>", "[MASK]": "<mask>"}


def is_sentencepiece(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a ``tokenizer.json`` whose pre-tokenizer is SentencePiece's ``Metaspace``."""
    try:
        found = read_tokenizer_json(path).pre_tokenizer or {}
    except (OSError, ValueError):
        return False
    steps = found.get("pretokenizers", [found]) if isinstance(found, dict) else []
    return any(isinstance(s, dict) and s.get("type") == "Metaspace" for s in steps)


class SentencePieceTokenizer(VocabLookup):
    """A checkpoint's SentencePiece ``tokenizer.json``, with BERT's special-token names as aliases.

    Args:
        path: the ``tokenizer.json``; ``special_tokens_map.json`` beside it names the special
            tokens (default ``<s>``, ``</s>``, ``<pad>``, ``<unk>``, ``<mask>``).

    Attributes:
        pair_separators: separator tokens between the texts of a pair, from the pair template of
            the tokenizer (XLM-R: ``<s> A </s></s> B </s>``, 2).
        pair_segments: whether the second text of a pair has segment (type) id 1 in that template.
        vocab: piece → id, added tokens included; shared by every tokenizer read from the same
            content in this process (read-only, as the tokenizers are).
    """

    lowercase = False

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        try:
            content = self.path.read_bytes()
        except OSError as err:
            raise ValueError(f"{self.path}: not a readable tokenizer.json ({err.strerror})") from None
        self._fast, self._inner, self.vocab, self._itos = read_once("sentencepiece_tokenizers", content, self._read)
        names = dict(_DEFAULTS)
        special_map = self.path.parent / "special_tokens_map.json"
        if special_map.is_file():
            declared = json.loads(special_map.read_text(encoding="utf-8"))
            for bert, role in _ROLES.items():
                value = declared.get(role)
                value = value.get("content") if isinstance(value, dict) else value
                if isinstance(value, str):
                    names[bert] = value
        missing = [names[t] for t in SPECIAL_TOKENS if names[t] not in self.vocab]
        if missing:
            raise ValueError(f"{self.path}: the tokenizer lacks the special tokens {missing}")
        self.aliases = {t: self.vocab[names[t]] for t in SPECIAL_TOKENS}
        self.pad_id, self.unk_id, self.cls_id, self.sep_id, self.mask_id = (self.aliases[t] for t in SPECIAL_TOKENS)
        a, b = (self._fast.encode(t, add_special_tokens=False) for t in ("a", "b"))
        single, pair = self._fast.post_process(a), self._fast.post_process(a, b)
        self.pair_separators = max(1, pair.ids.count(self.sep_id) - single.ids.count(self.sep_id))
        self.pair_segments = bool(pair.type_ids) and pair.type_ids[-2] != 0  # B's last piece, before its </s>

    def _read(self) -> tuple[Tokenizer, Tokenizer, dict[str, int], dict[int, str]]:
        """The file's tokenizer, its twin for continuations (a text cut at an offset, an injected
        branch: no ``▁`` before the text), and its vocabulary both ways (e5-small's: 250,002 pieces,
        a quarter of a second to list)."""
        try:
            fast = Tokenizer.from_file(str(self.path))
        except Exception as err:  # a file the tokenizers library cannot read: one line naming it
            raise ValueError(f"{self.path}: not a readable tokenizer.json ({str(err).splitlines()[0]})") from None
        vocab = fast.get_vocab(with_added_tokens=True)
        return fast, _twin(fast, prefix=False), vocab, {i: t for t, i in vocab.items()}

    @classmethod
    def from_pretrained(cls, path: str | os.PathLike) -> SentencePieceTokenizer:
        """The tokenizer of a checkpoint folder (its ``tokenizer.json``)."""
        file = Path(path) / "tokenizer.json"
        if not file.is_file():
            raise FileNotFoundError(f"no tokenizer.json in {path}")
        return cls(file)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self.vocab)} pieces)"

    def exact_id(self, token: str) -> int:
        """The id of a piece, or of a BERT tag (``[CLS]`` → ``<s>``, ``[SEP]`` → ``</s>``); ``<unk>`` on a miss."""
        found = self.aliases.get(token)
        return found if found is not None else self.vocab.get(token, self.unk_id)

    token_to_id = exact_id

    def encode_many(self, texts: Sequence[str], prefix: bool = True) -> Pieces:
        """The pieces of every text (no special tokens), offsets in each text; with ``prefix=False``
        each text is read as a continuation (no ``▁`` before it). Every piece is its own word."""
        fast = self._fast if prefix else self._inner
        encodings = fast.encode_batch(list(texts), add_special_tokens=False)
        counts = np.fromiter(map(len, encodings), dtype=np.int64, count=len(encodings))
        total = int(counts.sum())
        ids = np.fromiter(chain.from_iterable(e.ids for e in encodings), dtype=np.int64, count=total)
        offsets = np.fromiter(chain.from_iterable(chain.from_iterable(e.offsets for e in encodings)),
                              dtype=np.int64, count=2 * total).reshape(total, 2)
        tokens = list(chain.from_iterable(e.tokens for e in encodings))
        start, end = offsets[:, 0].copy(), offsets[:, 1].copy()
        text_of = np.arange(len(encodings)).repeat(counts)
        for i in (np.char.startswith(np.array(tokens, dtype=str), _META) & (end - start > 1)).nonzero()[0].tolist():
            text = texts[text_of[i]]
            while start[i] < end[i] - 1 and text[start[i]].isspace():  # the ▁ stands for a space: skip it
                start[i] += 1
        piece_ptr = ptr(counts)
        word_ptr = np.arange(total + 1)
        return Pieces(ids, start, end, tokens, piece_ptr, start, end, word_ptr, piece_ptr)

    def char_vocab(self) -> dict[str, int]:
        """A character vocabulary over the pieces, for data tagged per character (K-BERT NER):
        every single-character piece (the bare one, else its ``▁`` form) and BERT's special-token
        names as aliases (``[CLS]`` → ``<s>``)."""
        chars = {t[1]: i for t, i in self.vocab.items() if len(t) == 2 and t[0] == _META}
        chars.update((t, i) for t, i in self.vocab.items() if len(t) == 1 and t != _META)
        chars.update(self.aliases)
        return chars

    def tokenize(self, text: str) -> list[str]:
        """The pieces of ``text``."""
        return self._fast.encode(text, add_special_tokens=False).tokens

    def copy(self) -> Tokenizer:
        """The file's ``tokenizers.Tokenizer``, a copy of its own: tokens may be added to it and its
        truncation set without changing the shared reading (made in milliseconds: the pieces are shared)."""
        return _twin(self._fast)

    def token_of(self, role: str) -> str:
        """The checkpoint's name of a BERT special token (``"[CLS]"`` → ``"<s>"``)."""
        return self._itos[self.aliases[role]]


def _twin(fast: Tokenizer, prefix: bool = True) -> Tokenizer:
    """A copy of ``fast`` that shares its model (e5-small's 250,002 pieces, a second or more to
    serialise and parse again); only the small parts (normaliser, pre-tokeniser, post-processor,
    decoder) go through their JSON, and the added tokens and limits are set again. With
    ``prefix=False`` every ``Metaspace`` of the copy puts no ``▁`` before the text."""
    keep = (lambda node: node) if prefix else _without_prefix
    parts = {name: getattr(fast, name) for name in _PARTS}
    spec = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
            "model": {"type": "WordLevel", "vocab": {"<unk>": 0}, "unk_token": "<unk>"},
            **{name: None if part is None else keep(json.loads(part.__getstate__())) for name, part in parts.items()}}
    small = Tokenizer.from_str(json.dumps(spec))
    twin = Tokenizer(fast.model)
    for name, part in parts.items():
        if part is not None:
            setattr(twin, name, getattr(small, name))
    for _, token in sorted(fast.get_added_tokens_decoder().items()):  # in id order: the same ids
        (twin.add_special_tokens if token.special else twin.add_tokens)([token])
    if fast.truncation:
        twin.enable_truncation(**fast.truncation)
    if fast.padding:
        twin.enable_padding(**fast.padding)
    return twin


def _without_prefix(node):
    """The JSON of a tokenizer (or a part of it) with every ``Metaspace`` putting no ``▁`` before the text."""
    if isinstance(node, dict):
        if node.get("type") == "Metaspace":
            node = {**node, "prepend_scheme": "never"}
            node.pop("add_prefix_space", None)
        return {k: _without_prefix(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_without_prefix(v) for v in node]
    return node


__all__ = ["SentencePieceTokenizer", "is_sentencepiece"]
