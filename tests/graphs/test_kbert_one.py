"""The one-input fast path (graphmatch/graphs/kbert/one.py) gives the graph the vectorised core gives,
attribute for attribute, on real sentences, pairs and edge cases, in both modes."""

from __future__ import annotations

import pytest
import torch

from graphmatch.graphs.kbert import OneTree, SentenceTreeBuilder, TreeOptions, tree_graph
from graphmatch.knowledge import KnowledgeGraph
from graphmatch.text import CharTokenizer

MODES = ("default", "reference")


def same(fast, slow) -> None:
    """Every store of both graphs has the same keys, tensors (values and dtypes) and node counts."""
    assert fast.node_types == slow.node_types and fast.edge_types == slow.edge_types
    for a, b in zip(fast.stores, slow.stores, strict=True):
        assert sorted(a.keys()) == sorted(b.keys())
        for name in b:
            x, y = a[name], b[name]
            if isinstance(y, torch.Tensor):
                assert x.dtype == y.dtype and torch.equal(x, y), name
            else:
                assert x == y, name


def core_graph(builder, text_a, text_b=None, label=None):
    return tree_graph(builder.build([text_a], None if text_b is None else [text_b]), label)


def check_all(builder, inputs) -> None:
    fast = OneTree(builder)
    for i, (a, b) in enumerate(inputs):
        label = i % 3 if i % 2 else None
        same(fast(a, b, label), core_graph(builder, a, b, label))


def read(path, columns, limit):
    lines = path.read_text(encoding="utf-8").splitlines()
    head = lines[0].split("\t")
    rows = [line.split("\t") for line in lines[1:limit + 1]]
    return [tuple(row[head.index(c)] for c in columns) for row in rows]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("max_length", [256, 40])
def test_book_review(shared_data, tokenizer, hownet_kg, mode, max_length):
    texts = read(shared_data / "kbert/datasets/book_review/test.tsv", ["text_a"], 1500)
    check_all(SentenceTreeBuilder(hownet_kg, tokenizer, TreeOptions(max_length=max_length, mode=mode)),
              [(t, None) for (t,) in texts])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("max_length", [128, 24])
def test_lcqmc_pairs(shared_data, tokenizer, hownet_kg, mode, max_length):
    pairs = read(shared_data / "lcqmc/test.tsv", ["text_a", "text_b"], 1500)
    check_all(SentenceTreeBuilder(hownet_kg, tokenizer, TreeOptions(max_length=max_length, mode=mode)), pairs)


EDGE_CASES = [
    ("我爱北京天安门", None), ("  我 爱\t北京　天安门 ", None), ("ＤＶＤ播放机 dvd", "CPU cpu"),
    ("[CLS]北京[SEP]天安门[UNK]", "[MASK] [SEP]北京"), ("北京天安门", "天安门北京"), ("a", "b"),
    ("x[SEP", "[SE]"), ("北京" * 40, "天安门" * 30), ("[SEP]", "[CLS]"), ("\u00a0北京\u2003", " 门 "),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("max_length", [1, 2, 5, 12, 256])
def test_edge_cases(tokenizer, hownet_kg, mode, max_length):
    kg = KnowledgeGraph([("北京", "是", "首都"), ("北京", "有", "天安门"), ("天安门", "在", "北京市"),
                         ("北京天安门", "r", "x"), ("dvd播放机", "r", "机器"), ("cpu", "r", "芯 片"),
                         ("[SEP]", "r", "y"), ("门", "r", "m")])
    for options in ({}, {"max_entities": 1}, {"max_entities": 0}, {"kind": "ner", "predicate": True},
                    {"predicate": False}):
        tree = TreeOptions(max_length=max_length, mode=mode, **options)
        if max_length == 1 and tree.add_cls:  # [CLS] alone, no text token: refused
            with pytest.raises(ValueError, match=r"max_length=1 holds only the leading tags"):
                SentenceTreeBuilder(kg, tokenizer, tree)
            continue
        builder = SentenceTreeBuilder(kg, tokenizer, tree)
        check_all(builder, EDGE_CASES + [(a, None) for a, _ in EDGE_CASES])
    if max_length > 1:
        check_all(SentenceTreeBuilder(None, tokenizer, TreeOptions(max_length=max_length, mode=mode)), EDGE_CASES)


def test_builder_uses_it_and_falls_back():
    tok = CharTokenizer({t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *"abxyz"])})
    kg = KnowledgeGraph([("ab", "r", "xy")])
    builder = SentenceTreeBuilder(kg, tok)
    assert builder.plain_characters
    same(builder("ab x", "y ab", label=1), core_graph(builder, "ab x", "y ab", 1))
    assert not SentenceTreeBuilder(kg, tok, keep_text=True).plain_characters  # the core builds it
    assert "text" in SentenceTreeBuilder(kg, tok, keep_text=True)("ab")["token"]
    with pytest.raises(ValueError, match="fast path"):
        OneTree(SentenceTreeBuilder(kg, tok, TreeOptions(query="words")))
