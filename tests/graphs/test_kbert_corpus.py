"""Chunked corpus building: TreeCorpusBuilder gives exactly the collated graphs of the one-by-one builder (chunks
joined, text lists, slices, errors naming the input). Both run the same core; it is checked against an independent
per-sentence oracle in test_kbert_oracle.py."""

from __future__ import annotations

import random

import pytest
import torch
from torch_geometric.data import HeteroData, InMemoryDataset
from torch_geometric.data.collate import collate

from graphmatch.graphs.kbert import SentenceTreeBuilder, TreeCorpusBuilder, TreeOptions
from graphmatch.knowledge import KnowledgeGraph
from graphmatch.text import CharTokenizer

# pieces that hit subjects, overlap them, fold into them (ＡＢ -> ab), or are whitespace
PIECES = ["ab", "abc", "bcd", "de", "天安门", "ex", "a b", "qqqqqqqq", "x", "c", " ", "\t", "ＡＢ", "门", "z"]


@pytest.fixture(scope="module")
def tok() -> CharTokenizer:
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    return CharTokenizer({t: i for i, t in enumerate(specials + list("abcdexyzqr天安门"))})


@pytest.fixture(scope="module")
def kg() -> KnowledgeGraph:
    # nested subjects, a value of unknown characters only, one with a space, one longer than short limits
    return KnowledgeGraph([("ab", "r", "xy"), ("ab", "r", "z"), ("abc", "r", "q"), ("de", "r", "q"),
                           ("bcd", "r", "xyz"), ("天安门", "r", "天"), ("ex", "", "\u3000"), ("a b", "r", "q"),
                           ("qqqqqqqq", "r", "abcdexyz")])


def one_by_one(builder, texts_a, texts_b=None, labels=None, tags=None):
    graphs = [builder(a, None if texts_b is None else texts_b[i], None if labels is None else labels[i],
                      None if tags is None else tags[i]) for i, a in enumerate(texts_a)]
    data, slices, _ = collate(HeteroData, graphs, increment=False, add_batch=False)
    return data, slices


def assert_same(mine, expected):
    (data, slices), (data_e, slices_e) = mine, expected
    got, want = data.to_dict(), data_e.to_dict()
    assert got.keys() == want.keys()
    for key in want:
        assert got[key].keys() == want[key].keys(), key
        for name, value in want[key].items():
            if isinstance(value, torch.Tensor):
                assert got[key][name].dtype == value.dtype and torch.equal(got[key][name], value), (key, name)
            else:
                assert got[key][name] == value, (key, name)
    assert slices.keys() == slices_e.keys()
    for key, value in slices_e.items():
        if isinstance(value, dict):
            assert value.keys() == slices[key].keys()
            assert all(torch.equal(slices[key][name], v) for name, v in value.items()), key
        else:
            assert torch.equal(slices[key], value), key


def random_texts(rng: random.Random, n: int) -> list[str]:
    texts = ("".join(rng.choices(PIECES, k=rng.randint(1, 7))) for _ in range(n))
    return [text if text.strip() else "a" for text in texts]


@pytest.mark.parametrize("max_length", [64, 9, 4])
@pytest.mark.parametrize("max_entities", [2, 1])
def test_random_texts_match_the_one_by_one_builder(tok, kg, max_length, max_entities):
    rng = random.Random(max_length * 10 + max_entities)
    texts = random_texts(rng, 120)
    labels = [rng.randint(0, 2) for _ in texts]
    builder = SentenceTreeBuilder(kg, tok, TreeOptions(max_length=max_length, max_entities=max_entities))
    corpus = TreeCorpusBuilder(builder)
    mine = corpus(texts, labels=labels, chunk_size=37)  # chunks of 37 are joined afterwards
    assert_same(mine, one_by_one(builder, texts, labels=labels))
    assert mine[0]["entity"].num_nodes > (len(texts) if max_length == 64 else 0)  # knowledge was injected
    pairs = corpus(texts[:60], texts[60:], labels=labels[:60])
    assert_same(pairs, one_by_one(builder, texts[:60], texts[60:], labels[:60]))


def test_options(tok, kg):
    rng = random.Random(7)
    texts = random_texts(rng, 50)
    for builder in (SentenceTreeBuilder(None, tok, TreeOptions(max_length=8)),
                    SentenceTreeBuilder(kg, tok, TreeOptions(max_entities=0)),
                    SentenceTreeBuilder(kg, tok, TreeOptions(kind="ner"))):
        assert_same(TreeCorpusBuilder(builder)(texts), one_by_one(builder, texts))
    single = SentenceTreeBuilder(kg, tok)
    assert_same(TreeCorpusBuilder(single)(["abcd"]), one_by_one(single, ["abcd"]))


def test_ner_tags(tok, kg):
    tag_to_id = {"O": 0, "B-X": 1, "I-X": 2}
    builder = SentenceTreeBuilder(kg, tok, TreeOptions(max_length=10, kind="ner"),
                                  labels=list(tag_to_id))
    rng = random.Random(3)
    texts = random_texts(rng, 40)
    tags = [[rng.choice(list(tag_to_id)) for _ in text] for text in texts]
    mine = TreeCorpusBuilder(builder)(texts, tags=tags, chunk_size=16)
    assert_same(mine, one_by_one(builder, texts, tags=tags))
    assert (mine[0]["token"].y >= 0).any() and (mine[0]["token"].y == -100).any()


def test_reference_mode_and_text_lists_in_chunks(tok, kg):
    texts = ["abcd", "天安门 ab", "xab", "a[SEP]bcd", "ＡＢ"]
    for builder in (SentenceTreeBuilder(kg, tok, TreeOptions(mode="reference", max_length=7)),
                    SentenceTreeBuilder(kg, tok, TreeOptions(max_length=7), keep_text=True)):
        mine = TreeCorpusBuilder(builder)(texts, labels=[0, 1, 0, 1, 1], chunk_size=2)
        assert_same(mine, one_by_one(builder, texts, labels=[0, 1, 0, 1, 1]))
    data, _ = mine
    assert data["token"].text[1][:4] == ["[CLS]", "天", "安", "门"] and data["word"].text[4] == ["ab"]


def test_errors_name_the_input(tok, kg):
    corpus = TreeCorpusBuilder(SentenceTreeBuilder(kg, tok))
    with pytest.raises(ValueError, match="input 1: empty text"):
        corpus(["ab", " \t"])
    with pytest.raises(ValueError, match="2 labels for 3"):
        corpus(["a", "b", "c"], labels=[0, 1])
    with pytest.raises(TypeError, match="input 0: text_b must be a str"):
        corpus(["a"], [None])
    with pytest.raises(ValueError, match="no inputs"):
        corpus([])
    ner = TreeCorpusBuilder(SentenceTreeBuilder(kg, tok, labels=["O"]))
    with pytest.raises(ValueError, match="input 1: 1 tags for 2 characters"):
        ner(["a", "ab"], tags=[["O"], ["O"]])
    with pytest.raises(ValueError, match="unknown tag"):
        ner(["a"], tags=[["B"]])
    with pytest.raises(ValueError, match="tag_to_id"):
        corpus(["a"], tags=[["O"]])


def test_loads_as_an_in_memory_dataset(tok, kg):
    builder = SentenceTreeBuilder(kg, tok)
    texts = ["abcd", "x", "天安门de"]

    class Trees(InMemoryDataset):
        def __init__(self):
            super().__init__()
            self.data, self.slices = TreeCorpusBuilder(builder)(texts, labels=[2, 0, 1])

    dataset = Trees()
    for i, text in enumerate(texts):
        expected = builder(text, label=[2, 0, 1][i])
        got = dataset[i]
        for store in ("token", "word", "entity"):
            assert got[store].num_nodes == expected[store].num_nodes
        assert torch.equal(got["token"].input_ids, expected["token"].input_ids)
        assert torch.equal(got["token", "in", "entity"].edge_index, expected["token", "in", "entity"].edge_index)


def test_real_corpora_match(shared_data, tokenizer, hownet_kg):
    def column(path, *names, limit=300):
        lines = path.read_text(encoding="utf-8").splitlines()
        header = lines[0].split("\t")
        rows = [line.split("\t") for line in lines[1:limit + 1]]
        return [[row[header.index(name)] for row in rows] for name in names]

    labels, texts = column(shared_data / "kbert/datasets/book_review/test.tsv", "label", "text_a")
    for max_length in (256, 48):
        builder = SentenceTreeBuilder(hownet_kg, tokenizer, TreeOptions(max_length=max_length))
        labels_i = [int(x) for x in labels]
        assert_same(TreeCorpusBuilder(builder)(texts, labels=labels_i), one_by_one(builder, texts, labels=labels_i))
    a, b = column(shared_data / "lcqmc/test.tsv", "text_a", "text_b")
    builder = SentenceTreeBuilder(hownet_kg, tokenizer, TreeOptions(max_length=40))
    assert_same(TreeCorpusBuilder(builder)(a, b), one_by_one(builder, a, b))
    chars, tags = column(shared_data / "kbert/datasets/msra_ner/test.tsv", "text_a", "label", limit=150)
    texts = ["".join(c.split(" ")) for c in chars]
    tags = [t.split(" ") for t in tags]
    tag_to_id = {t: i for i, t in enumerate(sorted({t for row in tags for t in row}))}
    builder = SentenceTreeBuilder(hownet_kg, tokenizer, TreeOptions(max_length=64, kind="ner"),
                                  labels=list(tag_to_id))
    assert_same(TreeCorpusBuilder(builder)(texts, tags=tags), one_by_one(builder, texts, tags=tags))


@pytest.mark.parametrize("max_length", [64, 9])
def test_knowledge_as_text_matches_the_one_by_one_builder(tok, kg, max_length):
    rng = random.Random(max_length)
    texts = random_texts(rng, 80)
    builder = SentenceTreeBuilder(kg, tok, TreeOptions(max_length=max_length, knowledge_as="text"))
    corpus = TreeCorpusBuilder(builder)
    mine = corpus(texts, labels=[0] * 80, chunk_size=23)
    assert_same(mine, one_by_one(builder, texts, labels=[0] * 80))
    assert not mine[0]["token"].branch.any() and mine[0]["entity"].num_nodes == 0
    tree = TreeCorpusBuilder(SentenceTreeBuilder(kg, tok, TreeOptions(max_length=max_length)))(texts)
    assert mine[0]["token"].num_nodes > tree[0]["token"].num_nodes - tree[0]["token"].branch.sum()  # knowledge in
    assert_same(corpus(texts[:40], texts[40:]), one_by_one(builder, texts[:40], texts[40:]))
    tag_to_id = {"O": 0, "B-X": 1}
    ner = SentenceTreeBuilder(kg, tok, TreeOptions(max_length=max_length, kind="ner",
                                                   knowledge_as="text"), labels=list(tag_to_id))
    tags = [[rng.choice(list(tag_to_id)) for _ in text] for text in texts]
    assert_same(TreeCorpusBuilder(ner)(texts, tags=tags, chunk_size=16), one_by_one(ner, texts, tags=tags))
