"""The vectorised English K-Query (:func:`graphmatch.graphs.piece_query.word_runs`) against a
plain word-by-word scan of its definition: the same runs and subjects, and the same lemmas asked
for, on real SST-2 and SemEval sentences with WordNet (with and without noun readings) and on
hand-made edge cases (glued stop words, runs at a text's end, one-word texts)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graphmatch.graphs.kbert import STOP_WORDS
from graphmatch.graphs.piece_query import SENTENCE_ENDS, LemmaMemo, word_runs
from graphmatch.knowledge import KnowledgeGraph, Lemmatizer
from graphmatch.knowledge.noun_reading import NounReadings
from graphmatch.text import WordPieceTokenizer

EDGE_CASES = [
    "The a-list of x-rays and ice creams in the city.",
    "dogs", "a", "it is in a box of boxes", "Ice cream cones, ice-cream cone; the 3-d x ray!",
    "looking for the city of geese", "New York's firemen ate it", "is",
]


class Recorder(LemmaMemo):
    """A memo that records every text it is asked for, in order of first request."""

    def __init__(self, lemmatizer: Lemmatizer):
        super().__init__(lemmatizer)
        self.asked: set[str] = set()

    def __call__(self, text: str) -> str | None:
        self.asked.add(text)
        return super().__call__(text)

    def many(self, texts):
        self.asked.update(texts)
        return super().many(texts)


def scan(string, start, end, first, last, lemma, stop_words, max_words, readings):
    """The definition, word by word: at every word the longest run with a subject."""
    start, end, first, last = (a.tolist() for a in (start, end, first, last))
    content = [string[lo:hi].lower() not in stop_words for lo, hi in zip(start, end, strict=True)]
    glued = [hi == lo for hi, lo in zip(end, start[1:], strict=False)] + [False]
    runs = []
    for i, lo in enumerate(start):
        opens = content[i] or (i < last[i] and glued[i])
        for j in range(min(i + max_words - 1, last[i]), i - 1, -1):
            ok = content[i] if j == i else opens and (content[j] or glued[j - 1])
            subject = lemma(string[lo:end[j]]) if ok else None
            if subject is not None and j == i and readings is not None:
                previous = string[start[i - 1]:end[i - 1]] if i > first[i] else None
                initial = previous is None or previous in SENTENCE_ENDS
                if not readings.fits(string[lo:end[i]], subject, previous, initial):
                    subject = None
            if subject is not None:
                runs.append((lo, end[j], subject))
                break
    return runs


def words_of(tok: WordPieceTokenizer, texts: list[str]):
    """The texts laid end to end and their words as the core gives them to K-Query."""
    pieces = tok.encode_many(texts)
    offsets = np.cumsum([0] + [len(t) for t in texts])[:-1]
    word_text = np.arange(len(texts)).repeat(np.diff(pieces.text_words))
    at = offsets[word_text]
    return ("".join(texts), at + pieces.word_start, at + pieces.word_end, pieces.text_words[word_text],
            pieces.text_words[word_text + 1] - 1)


def sentences(root: Path, name: str, n: int) -> list[str]:
    """The first ``n`` training sentences of SST-2 or SemEval in the real data folder ``root``."""
    if name == "sst2":
        lines = (root / "sst2" / "train.tsv").read_text(encoding="utf-8").splitlines()[1:n + 1]
        return [line.split("\t")[0] for line in lines]
    from graphmatch.data.relation_formats import read_semeval_file

    return [ex.sentence.text for ex in read_semeval_file(root / "semeval2010_task8" / "TRAIN_FILE.TXT")[:n]]


@pytest.fixture(scope="module")
def tok(minilm) -> WordPieceTokenizer:
    return WordPieceTokenizer.from_pretrained(minilm)


@pytest.fixture(scope="module")
def wordnet() -> KnowledgeGraph:
    return KnowledgeGraph.load("wordnet")


@pytest.mark.parametrize("corpus", ["edge", "sst2", "semeval"])
@pytest.mark.parametrize("nouns", [False, True])
@pytest.mark.parametrize("max_words", [1, 3])
def test_word_runs_equal_the_word_by_word_scan(request, tok, wordnet, corpus, nouns, max_words):
    texts = EDGE_CASES if corpus == "edge" else sentences(request.getfixturevalue("shared_data"), corpus, 600)
    string, start, end, first, last = words_of(tok, texts)
    readings = NounReadings() if nouns else None
    lemmatizer = Lemmatizer(wordnet.subjects)
    ours, theirs = Recorder(lemmatizer), Recorder(lemmatizer)
    got_start, got_end, got = word_runs(string, start, end, first, last, ours, STOP_WORDS, max_words, readings)
    expected = scan(string, start, end, first, last, theirs, STOP_WORDS, max_words, readings)
    assert list(zip(got_start.tolist(), got_end.tolist(), got, strict=True)) == expected
    assert ours.asked == theirs.asked  # the same lemmas looked up: no run tried that the scan skips
    assert len(expected) > (2 if corpus == "edge" else 300)  # the corpora do match words
    if max_words > 1:
        assert any(" " in s or "-" in s for _, _, s in expected)  # and runs of several words


def test_the_memo_answers_as_the_lemmatizer(wordnet):
    memo = LemmaMemo(Lemmatizer(wordnet.subjects))
    texts = ["Ice  Creams", "ice creams", "geese", "xyzzy", "Geese"]
    assert memo.many(texts) == ["ice cream", "ice cream", "goose", None, "goose"]
    assert memo.memo["ice creams"] == "ice cream" and memo.memo["xyzzy"] is None
    assert memo.many(texts) == [memo(t) for t in texts]
