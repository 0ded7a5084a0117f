"""The K-BERT sentence-tree builder's settings as one frozen object, made once from a recipe's
``data`` section (or a command line's flags) and handed to the builder, the dataset, the task,
``inspect`` and ``show`` alike; every default is written once in :mod:`graphmatch.graphs.defaults`.

The builder reads its options directly (:class:`~graphmatch.graphs.kbert.TreeCore`);
:meth:`TreeOptions.cache_key` is the form that keys a dataset's cache (the keyword arguments the
builder took before it took options, so that caches made then stay valid)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from graphmatch.graphs.defaults import KBERT_MAX_ENTITIES, KBERT_MAX_LENGTH, KBERT_MAX_WORDS, KBERT_SEGMENTER
from graphmatch.utils.deprecated import old_keywords, options_given, renamed_method

#: the kinds of K-BERT data, and the tokens a tree is made of
KINDS = ("classification", "pair", "ner")
TOKENIZATIONS = ("chars", "wordpiece", "sentencepiece")


@dataclass(frozen=True)
class TreeOptions:
    """What a K-BERT sentence tree is built with.

    ``kind`` of data (``classification``, ``pair`` or ``ner``: K-BERT's NER rule, a branch is the
    object alone, no ``[CLS]``), ``max_length`` tokens kept after injection, ``max_entities`` values
    per matched word, the builder's ``mode`` (``default`` or ``reference``), the ``tokenization``
    (``chars``, ``wordpiece``: an English checkpoint's word pieces, uncased when ``lowercase``;
    ``sentencepiece``), ``noun_reading`` (word pieces: a single word matches where it reads as a
    noun); K-Query by the ``query`` (``None``: the tokenization's own, the trie over characters or
    the words of word pieces) with ``segmenter`` for ``query="words"``; ``predicate``
    (``None``: the kind's rule, every kind but NER glues the predicate to the object); and a
    ``text_prefix`` written before each text as pieces (subword tokenizations, default mode); the
    branches hung on their words (``knowledge_as="tree"``) or written after the input as text
    (``"text"``, :mod:`~graphmatch.graphs.kbert.knowledge_text`). For word pieces, the
    ``stop_words`` that never make a match alone (``None``: :data:`~graphmatch.graphs.kbert.STOP_WORDS`)
    and the longest match in words, ``max_words``; ``hang_after``, the tags of
    :meth:`~graphmatch.graphs.kbert.TreeCore.build_parts` that a branch hangs after (a relation's
    closing entity markers).

    ``tokenization`` and ``lowercase`` say which tokenizer a dataset makes; a builder reads both
    from the tokenizer it is given. What follows from the kind is derived: :attr:`add_cls` (every
    kind but NER starts with ``[CLS]``), :attr:`uses_predicate`, and the NER tag ids from the
    builder's ``labels``.
    """

    kind: str = "classification"
    max_length: int = KBERT_MAX_LENGTH
    max_entities: int = KBERT_MAX_ENTITIES
    mode: str = "default"
    tokenization: str = "chars"
    lowercase: bool = True
    noun_reading: bool = False
    query: str | None = None
    segmenter: str = KBERT_SEGMENTER
    predicate: bool | None = None
    text_prefix: str | None = None
    knowledge_as: str = "tree"
    stop_words: tuple[str, ...] | None = None
    max_words: int = KBERT_MAX_WORDS
    hang_after: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if self.tokenization not in TOKENIZATIONS:
            raise ValueError(f"tokenization must be one of {', '.join(TOKENIZATIONS)}, got {self.tokenization!r}")
        if self.noun_reading and self.tokenization != "wordpiece":
            raise ValueError("data.select.noun_reading reads English words as nouns (WordNet): it needs word pieces "
                             f"(an English checkpoint), not {self.tokenization}")
        if self.kind == "ner" and self.tokenization == "sentencepiece":
            raise ValueError("K-BERT NER tags characters; SentencePiece pieces (e5, XLM-R) take classification and "
                             "pair data only")
        if self.text_prefix and (self.tokenization == "chars" or self.mode != "default"):
            raise ValueError(f"data.text_prefix is written as a checkpoint's pieces: it needs a word-piece or "
                             f"SentencePiece tokenization and data.mode: default, not {self.tokenization} in the "
                             f"{self.mode} mode")
        if self.kind == "ner" and self.tokenization == "wordpiece":
            raise ValueError("K-BERT NER tags characters; word pieces (an English checkpoint) take classification "
                             "and pair data only")

    @classmethod
    def of(cls, section: Any, **given: Any) -> TreeOptions:
        """The options of a ``data`` section (:class:`~graphmatch.tasks.kbert_keys.KBertData`, or an
        object with these attributes), ``given`` overriding it (the data's kind, the tokenization
        its vocabulary implies, the checkpoint's case)."""
        select = getattr(section, "select", None)
        values = {f.name: getattr(section, f.name, f.default) for f in dataclasses.fields(cls)
                  if f.name not in ("kind", "tokenization", "lowercase")}
        values["noun_reading"] = bool(getattr(select, "noun_reading", False))
        return cls(**{**values, **given})

    @classmethod
    def for_tokenizer(cls, tokenizer: Any, **given: Any) -> TreeOptions:
        """The options of a builder over ``tokenizer`` (made already: ``inspect``, ``show``), its
        tokenization read from its type."""
        from graphmatch.text import SentencePieceTokenizer, WordPieceTokenizer

        tokenization = ("wordpiece" if isinstance(tokenizer, WordPieceTokenizer) else
                        "sentencepiece" if isinstance(tokenizer, SentencePieceTokenizer) else "chars")
        return cls(tokenization=tokenization, **given)

    @property
    def ner(self) -> bool:
        return self.kind == "ner"

    @property
    def add_cls(self) -> bool:
        """Whether a tree starts with ``[CLS]``: every kind but NER (K-BERT's NER input has none)."""
        return not self.ner

    @property
    def uses_predicate(self) -> bool:
        """Whether a branch is predicate + object: :attr:`predicate`, or the kind's rule (all but NER)."""
        return (not self.ner) if self.predicate is None else self.predicate

    def cache_key(self, labels: list[str] | None = None) -> dict[str, Any]:
        """The settings that key a dataset's cache, NER's tag ids from ``labels``: the keyword
        arguments the builder took before it took options (so caches made then stay valid), and
        every other field under its own name where it differs from its default (a new option keys
        the caches made with it and no other)."""
        common = {"max_length": self.max_length, "max_entities": self.max_entities, "mode": self.mode,
                  **({"prefix": self.text_prefix} if self.text_prefix else {}),
                  **({"knowledge_as": self.knowledge_as} if self.knowledge_as != "tree" else {})}
        if self.tokenization == "sentencepiece":
            key = {**common, "query": self.query or "trie", "predicate": self.uses_predicate, "add_cls": True,
                   "tokenizer": "sentencepiece"}
        elif self.tokenization == "wordpiece":
            from graphmatch.graphs.kbert.folding import STOP_WORDS

            stop_words = STOP_WORDS if self.stop_words is None else self.stop_words
            key = {**common, **({"query": self.query} if self.query is not None else {}),
                   "predicate": self.uses_predicate, "add_cls": True, "tokenizer": "wordpiece",
                   "lowercase": self.lowercase, "stop_words": sorted(stop_words), "max_words": self.max_words,
                   **({"noun_readings": True} if self.noun_reading else {})}
        else:
            key = {**common, "query": self.query or "trie", "segmenter": self.segmenter,
                   "predicate": self.uses_predicate, "add_cls": self.add_cls,
                   "tag_to_id": {t: i for i, t in enumerate(labels)} if self.ner and labels is not None else None}
        return {**key, **{f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                          if f.name not in _KEYED and getattr(self, f.name) != f.default}}

    builder_options = renamed_method("builder_options", cache_key)


#: the fields :meth:`TreeOptions.cache_key` writes in the builder's old keywords (or leaves out)
_KEYED = frozenset({"kind", "max_length", "max_entities", "mode", "tokenization", "lowercase", "noun_reading",
                    "query", "segmenter", "predicate", "text_prefix", "knowledge_as", "stop_words", "max_words"})


def old_tree_keywords(where: str, tokenizer: Any, options: TreeOptions | None, labels: Sequence[str] | None,
                      old: dict[str, Any]) -> tuple[TreeOptions, Sequence[str] | None]:
    """The options and NER labels of a builder ``where`` called with the keywords it took before it took
    :class:`TreeOptions` (``max_length=``, ``prefix=``, ``add_cls=``, ``tag_to_id=``, ``noun_readings=``, ...),
    with one ``DeprecationWarning`` (:func:`~graphmatch.utils.deprecated.old_keywords`); without them
    ``options`` (``None``: the defaults) and ``labels`` as given."""
    found = options_given(where, TreeOptions, options, old)
    if found is not None:
        return found, labels
    given = dict(old)
    for name, new in (("prefix", "text_prefix"), ("noun_readings", "noun_reading")):
        if name in given:
            given[new] = given.pop(name)
    if "noun_reading" in given:
        given["noun_reading"] = given["noun_reading"] is not None
    for name in ("stop_words", "hang_after"):
        if given.get(name) is not None:
            given[name] = tuple(given[name])
    if "add_cls" in given:  # K-BERT's NER input is the one without [CLS]; the old predicate default was True
        given["kind"] = "classification" if given.pop("add_cls") else "ner"
        given.setdefault("predicate", True)
    tag_to_id = given.pop("tag_to_id", None)
    if tag_to_id is not None:
        labels = sorted(tag_to_id, key=tag_to_id.__getitem__)
        if [tag_to_id[t] for t in labels] != list(range(len(labels))):
            raise ValueError(f"{where}(): tag_to_id's ids must be 0 to {len(labels) - 1}, "
                             f"got {sorted(tag_to_id.values())}")
    base = TreeOptions.for_tokenizer(tokenizer) if given.get("kind") != "ner" else TreeOptions()
    return old_keywords(where, base, given or {"kind": base.kind}, names=list(old), stacklevel=5), labels


__all__ = ["KINDS", "TOKENIZATIONS", "TreeOptions", "old_tree_keywords"]
