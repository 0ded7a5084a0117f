"""Whether an English word reads as a noun where it stands (WordNet's branches are nouns')."""

from __future__ import annotations

import pytest
from tool_guard import require_tool

from graphmatch.knowledge.noun_reading import PACKAGED_SHARES, NounReadings, noun_shares, read_shares, write_shares
from graphmatch.knowledge.wordnet import find_wordnet_dir


@pytest.fixture(scope="module")
def readings() -> NounReadings:
    return NounReadings()


def test_the_rules(readings):
    fits = readings.fits
    assert not fits("born", "born", "was", False)  # never tagged as a noun
    assert not fits("old", "old", "an", False)  # not even after a determiner
    assert fits("die", "die", "the", False) and not fits("die", "die", "they", False)
    assert not fits("die", "die", None, True)  # mostly a verb, no cue
    assert fits("capital", "capital", "the", False) and fits("bank", "bank", None, True)  # nouns only / mostly
    assert not fits("u", "u", None, True) and not fits("B", "b", "Lyndon", False)  # single letters
    assert fits("Yugoslavia", "yugoslavia", "of", False)  # a name WordNet knows
    assert not fits("Cast", "cast", "the", False)  # capitalised inside a sentence: a name, and no such name
    assert readings.share("company") == 1.0 and 0 < readings.share("love") < 0.5


def test_packaged_file_rebuilds_from_wordnet(tmp_path):
    try:
        folder = find_wordnet_dir()
    except FileNotFoundError as err:
        require_tool(f"WordNet 3.0 ({err})", False, "apt-get install wordnet-base, or make setup")
    shares, names = noun_shares(folder)
    write_shares(shares, names, tmp_path / "noun_share.tsv.gz")
    assert (tmp_path / "noun_share.tsv.gz").read_bytes() == PACKAGED_SHARES.read_bytes()
    again, again_names = read_shares(tmp_path / "noun_share.tsv.gz")
    assert again == {w: s for w, s in shares.items() if s != 1.0} and again_names == names


def test_word_query_keeps_nouns_only(minilm):
    from graphmatch.graphs.kbert import SentenceTreeBuilder, TreeOptions
    from graphmatch.knowledge import KnowledgeGraph
    from graphmatch.text.pretrained import pretrained_tokenizer

    kg, tok = KnowledgeGraph.load("wordnet"), pretrained_tokenizer("minilm")
    plain = SentenceTreeBuilder(kg, tok, keep_text=True)
    fit = SentenceTreeBuilder(kg, tok, TreeOptions(tokenization="wordpiece", noun_reading=True), keep_text=True)
    cases = {"He was born in the capital of Yugoslavia.": (["born", "capital", "yugoslavia"],
                                                           ["capital", "yugoslavia"]),
             "The die was cast, and they die young.": (["die", "cast", "die", "young"], ["die"]),
             "U.S. troops met Lyndon B. Johnson.": (["u", "troops", "b", "johnson"], ["troops", "johnson"])}
    for text, (before, after) in cases.items():
        assert plain.build([text]).stores["word"]["text"] == before
        assert fit.build([text]).stores["word"]["text"] == after
    with pytest.raises(ValueError, match="English word pieces"):
        SentenceTreeBuilder(kg, _chars(), TreeOptions(tokenization="wordpiece", noun_reading=True))


def _chars():
    from graphmatch.text import CharTokenizer

    return CharTokenizer.from_texts(["abc"])
