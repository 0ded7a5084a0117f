"""Knowledge that fits the sentence: candidate branches scored against their sentence."""

from __future__ import annotations

import numpy as np
import pytest

from graphmatch.graphs.branch_selection import BranchSelection
from graphmatch.graphs.kbert import SentenceTreeBuilder, TreeCorpusBuilder, TreeOptions
from graphmatch.knowledge import KnowledgeGraph
from graphmatch.text import CharTokenizer

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
TOPICS = {"f": np.array([1.0, 0.0, 0.0]), "p": np.array([0.0, 1.0, 0.0]), "c": np.array([0.0, 0.0, 1.0])}


def embed(texts: list[str]) -> np.ndarray:
    """A toy encoder: a text points at the topics (f, p, c) of its letters, at a fixed vector
    without any (so every cosine is defined)."""
    rows = []
    for text in texts:
        v = sum((TOPICS[ch] for ch in text if ch in TOPICS), np.zeros(3)) + 1e-3
        rows.append(v)
    return np.array(rows)


@pytest.fixture(scope="module")
def tok() -> CharTokenizer:
    chars = sorted(set("abcdefghijklmnopqrstuvwxyz"))
    return CharTokenizer({t: i for i, t in enumerate(SPECIAL + chars)})


@pytest.fixture(scope="module")
def kg() -> KnowledgeGraph:
    # "ab" has three values in file order: the first two are off-topic in a sentence about p
    return KnowledgeGraph([("ab", "r", "ff"), ("ab", "r", "cc"), ("ab", "r", "pp"), ("de", "r", "ffx")])


def entity_texts(builder, text: str) -> list[str]:
    return builder.build([text]).stores["entity"]["text"]


def test_file_order_without_selection(tok, kg):
    builder = SentenceTreeBuilder(kg, tok, TreeOptions(max_entities=2, predicate=False), keep_text=True)
    assert entity_texts(builder, "abpp") == ["ff", "cc"]


def test_selection_keeps_the_fitting_values_per_word(tok, kg):
    selection = BranchSelection(embed)
    builder = SentenceTreeBuilder(kg, tok, TreeOptions(max_entities=1, predicate=False),
                                  keep_text=True, selection=selection)
    assert entity_texts(builder, "abpp") == ["pp"]  # the third value in file order, the one that fits
    assert entity_texts(builder, "abcc") == ["cc"]
    assert selection.counts == [6, 2]
    dropped = {(d.sentence, d.value) for d in selection.dropped}
    assert ("abpp", "ff") in dropped and ("abcc", "pp") in dropped
    assert all(d.word == "ab" for d in selection.dropped)


def test_threshold_and_top_k_per_input(tok, kg):
    selection = BranchSelection(embed, threshold=0.5)
    builder = SentenceTreeBuilder(kg, tok, TreeOptions(max_entities=3, predicate=False),
                                  keep_text=True, selection=selection)
    assert entity_texts(builder, "abpp") == ["pp"]  # ff and cc are orthogonal to the sentence
    assert entity_texts(builder, "qq") == []
    # both words match; the sentence is mostly about f: top_k=1 keeps the best branch of the input
    one = SentenceTreeBuilder(kg, tok, TreeOptions(max_entities=3, predicate=False),
                              keep_text=True, selection=BranchSelection(embed, top_k=1))
    assert entity_texts(one, "abfdef") == ["ff"]
    data = one.build(["abfdef"])
    assert data.stores["word"]["text"] == ["ab"]  # the word that lost all its branches has no node


def test_corpus_equals_one_by_one(tok, kg):
    texts = ["abpp", "deff", "abcc", "xyz", "abf de"]
    selection = BranchSelection(embed, threshold=0.1)
    single = SentenceTreeBuilder(kg, tok, TreeOptions(max_entities=2, predicate=False),
                                 keep_text=True, selection=selection)
    corpus = TreeCorpusBuilder(SentenceTreeBuilder(kg, tok, TreeOptions(max_entities=2, predicate=False),
                                                   selection=BranchSelection(embed, threshold=0.1)))
    data, _ = corpus(texts, chunk_size=2)  # selections across chunks
    expected = np.concatenate([single.build([t]).stores["token"]["input_ids"] for t in texts])
    assert np.array_equal(data["token"].input_ids.numpy(), expected)


def test_bad_settings():
    with pytest.raises(ValueError, match="top_k"):
        BranchSelection(embed, top_k=-1)
    with pytest.raises(ValueError, match="cosine"):
        BranchSelection(embed, threshold=2.0)
    with pytest.raises(ValueError, match="shape"):
        BranchSelection(lambda texts: np.zeros((1, 3)), threshold=0.0).vectors(["a", "b"])


def test_reference_mode_refuses_a_selection(tok, kg):
    with pytest.raises(ValueError, match="mode='default'"):
        SentenceTreeBuilder(kg, tok, TreeOptions(mode="reference"), selection=BranchSelection(embed))
