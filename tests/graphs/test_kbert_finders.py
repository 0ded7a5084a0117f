"""TreeCore's ways of finding words are classes chosen once (:func:`word_finder`), not flags: each
tokenizer, mode and query picks one :class:`WordFinder`, what does not go together is one line
naming it, and the core keeps no variant flag of its own."""

from __future__ import annotations

import pytest

from graphmatch.graphs.kbert import (
    FINDERS,
    CharTrie,
    CharWords,
    ReferenceChars,
    SentencePieceTrie,
    TreeCore,
    TreeOptions,
    WordFinder,
    WordPieceWords,
    word_finder,
)
from graphmatch.knowledge import KnowledgeGraph
from graphmatch.text import CharTokenizer, WordPieceTokenizer


@pytest.fixture(scope="module")
def kg() -> KnowledgeGraph:
    return KnowledgeGraph([("ice cream", "type", "food"), ("洗手间", "属性", "地方")])


@pytest.fixture(scope="module")
def chars() -> CharTokenizer:
    return CharTokenizer.from_texts(["洗手间很干净 ice cream 属性地方"])


def test_each_tokenizer_mode_and_query_is_one_class(chars, minilm):
    pieces = WordPieceTokenizer.from_pretrained(minilm)
    assert word_finder(chars) is CharTrie and word_finder(chars, query="trie") is CharTrie
    assert word_finder(chars, query="words") is CharWords
    assert word_finder(chars, "reference") is ReferenceChars is word_finder(chars, "reference", "trie")
    assert word_finder(pieces) is WordPieceWords is word_finder(pieces, query="words")
    assert {f.tokenization for f in FINDERS} == {"chars", "wordpiece", "sentencepiece"}
    assert all(issubclass(f, WordFinder) for f in FINDERS) and SentencePieceTrie.tokenizer.__name__ == \
        "SentencePieceTokenizer"


@pytest.mark.parametrize("mode, query, message", [
    ("reference", "words", "mode='reference' queries by the reference's own trie scan"),
    ("official", None, "mode must be 'default' or 'reference', got 'official'"),
    ("default", "regex", "query must be 'trie' or 'words', got 'regex'"),
])
def test_what_does_not_go_together_is_one_line(chars, mode, query, message):
    with pytest.raises(ValueError, match=message):
        word_finder(chars, mode, query)


def test_the_core_holds_its_finder_and_no_variant_flags(kg, chars, minilm):
    pieces = WordPieceTokenizer.from_pretrained(minilm)
    for tokenizer, mode, query, finder in ((chars, "default", None, CharTrie), (chars, "default", "words", CharWords),
                                          (chars, "reference", None, ReferenceChars),
                                          (pieces, "default", None, WordPieceWords)):
        core = TreeCore(kg, tokenizer, TreeOptions(mode=mode, query=query))
        assert type(core.finder) is finder and core.finder.core is core
        assert (core.mode, core.query) == (finder.mode, finder.query)
        assert not {"pieces", "subword", "_reference", "_lemmatizer", "cut_counts"} & set(vars(core))
        assert core.plain_characters is finder.plain
    # what a way allows is the class's to say
    with pytest.raises(ValueError, match="build_parts needs mode='default'"):
        TreeCore(kg, chars, TreeOptions(mode="reference")).build_parts([])
    with pytest.raises(ValueError, match="noun_readings applies to English word pieces"):
        TreeCore(kg, chars, TreeOptions(tokenization="wordpiece", noun_reading=True))
    assert [f.__name__ for f in FINDERS if f.tags] == ["CharTrie", "CharWords", "ReferenceChars"]
