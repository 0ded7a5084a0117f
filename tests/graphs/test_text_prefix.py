"""``prefix``: an encoder's instruction (e5's ``query: ``) written before each text as tags."""

from __future__ import annotations

import pytest

from graphmatch.graphs.kbert import SentenceTreeBuilder
from graphmatch.graphs.kbert.options import TreeOptions
from graphmatch.knowledge import KnowledgeGraph
from graphmatch.text import CharTokenizer
from graphmatch.text.pretrained import tokenizer_for


@pytest.fixture(scope="module")
def e5_tokenizer(e5_small):
    return tokenizer_for(e5_small / "tokenizer.json", "sentencepiece")


def test_prefixed_pairs_are_the_checkpoints_own_ids(e5_small, e5_tokenizer, shared_data):
    """Without knowledge, the tree of a prefixed pair is what e5's tokenizer makes of
    ``query: a`` and ``query: b`` (its pair template), on 300 LCQMC pairs."""
    from transformers import PreTrainedTokenizerFast

    hf = PreTrainedTokenizerFast(tokenizer_file=str(e5_small / "tokenizer.json"))
    builder = SentenceTreeBuilder(None, e5_tokenizer, TreeOptions(tokenization="sentencepiece", text_prefix="query: "))
    rows = (shared_data / "lcqmc" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:301]
    for row in rows:
        a, b, _ = row.split("\t")
        assert builder(a, b)["token"].input_ids.tolist() == hf(f"query: {a}", f"query: {b}")["input_ids"], row
        assert builder(a)["token"].input_ids.tolist() == hf(f"query: {a}")["input_ids"][:-1]  # K-BERT: no final </s>


def test_prefix_pieces_are_tags_never_queried(e5_tokenizer):
    kg = KnowledgeGraph([("北京", "是", "首都"), ("ry", "是", "字母")])
    options = TreeOptions(max_length=64, tokenization="sentencepiece", text_prefix="query: ")
    tree = SentenceTreeBuilder(kg, e5_tokenizer, options, keep_text=True)("北京很好")
    tok = tree["token"]
    assert tok.text[:4] == ["[CLS]", "▁que", "ry", ":"]
    assert tok.char_index[:4].tolist() == [-1, -1, -1, -1] and tok.pos[:4].tolist() == [0, 1, 2, 3]
    assert tree["entity"].text == ["是首都"]  # 北京's branch; the prefix's "ry" is not a word


def test_prefix_needs_subword_pieces_it_knows():
    vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *"北京"])}
    with pytest.raises(ValueError, match="subword tokenizer's pieces"):
        SentenceTreeBuilder(None, CharTokenizer(vocab), TreeOptions(tokenization="wordpiece", text_prefix="query: "))
    with pytest.raises(ValueError, match="data.text_prefix is written as a checkpoint's pieces"):
        TreeOptions(tokenization="chars", text_prefix="query: ")
    with pytest.raises(ValueError, match="data.text_prefix"):
        TreeOptions(tokenization="sentencepiece", mode="reference", text_prefix="query: ")
    # caches made without a prefix keep their keys
    assert "prefix" not in TreeOptions(tokenization="sentencepiece").cache_key()
    assert TreeOptions(tokenization="sentencepiece", text_prefix="query: ").cache_key()["prefix"] == "query: "


def test_unknown_prefix_pieces_are_refused(minilm):
    from graphmatch.text import WordPieceTokenizer

    tok = WordPieceTokenizer(minilm / "vocab.txt")
    prefixed = TreeOptions(tokenization="wordpiece", text_prefix="query:")
    assert SentenceTreeBuilder(None, tok, prefixed)("a cat")["token"].input_ids.tolist()[:3] == [
        tok.cls_id, tok.exact_id("query"), tok.exact_id(":")]
    with pytest.raises(ValueError, match="pieces the vocabulary lacks"):
        SentenceTreeBuilder(None, tok, TreeOptions(tokenization="wordpiece", text_prefix="\u4e00\u4e01\U0001f600"))
