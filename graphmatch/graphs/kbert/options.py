"""The K-BERT sentence-tree builder's settings as one frozen object, made once from a recipe's
``data`` section (or a command line's flags) and handed to the dataset, the task, ``inspect`` and
``show`` alike; every default is the builder's own, written once in :mod:`graphmatch.graphs.defaults`.

:meth:`TreeOptions.builder_options` turns them into the builder's keyword arguments, the form that
keys a dataset's cache (so caches made before these options existed stay valid)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from graphmatch.graphs.defaults import KBERT_MAX_ENTITIES, KBERT_MAX_LENGTH, KBERT_MAX_WORDS, KBERT_SEGMENTER

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
    (``"text"``, :mod:`~graphmatch.graphs.kbert.knowledge_text`).
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

    def builder_options(self, labels: list[str] | None = None) -> dict[str, Any]:
        """The :class:`~graphmatch.graphs.kbert.SentenceTreeBuilder` options (``tokenizer`` and
        ``lowercase`` say which tokenizer :func:`~graphmatch.data.kbert.tree_builder` makes), NER's
        tag ids from ``labels``; the form that keys a dataset's cache."""
        common = {"max_length": self.max_length, "max_entities": self.max_entities, "mode": self.mode,
                  **({"prefix": self.text_prefix} if self.text_prefix else {}),
                  **({"knowledge_as": self.knowledge_as} if self.knowledge_as != "tree" else {})}
        predicate = (not self.ner) if self.predicate is None else self.predicate
        if self.tokenization == "sentencepiece":
            return {**common, "query": self.query or "trie", "predicate": predicate, "add_cls": True,
                    "tokenizer": "sentencepiece"}
        if self.tokenization == "wordpiece":
            from graphmatch.graphs.kbert import STOP_WORDS

            return {**common, **({"query": self.query} if self.query is not None else {}), "predicate": predicate,
                    "add_cls": True, "tokenizer": "wordpiece", "lowercase": self.lowercase,
                    "stop_words": sorted(STOP_WORDS), "max_words": KBERT_MAX_WORDS,
                    **({"noun_readings": True} if self.noun_reading else {})}
        return {**common, "query": self.query or "trie", "segmenter": self.segmenter, "predicate": predicate,
                "add_cls": not self.ner,
                "tag_to_id": {t: i for i, t in enumerate(labels)} if self.ner and labels is not None else None}

    def core_arguments(self) -> dict[str, Any]:
        """The keyword arguments of a :class:`~graphmatch.graphs.kbert.TreeCore` over a
        tokenizer made already (no tag ids, no noun readings)."""
        options = self.builder_options()
        for name in ("tokenizer", "lowercase", "noun_readings"):
            options.pop(name, None)
        return options


__all__ = ["KINDS", "TOKENIZATIONS", "TreeOptions"]
