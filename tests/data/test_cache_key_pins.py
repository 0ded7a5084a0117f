"""The cache keys of datasets made before the builders took options objects, pinned: a user's graph
caches stay valid. Each digest was computed on the code before the change (commit 3e1503b) from the
project's samples; a deliberate change of a builder's graphs bumps its ``FORMAT_VERSION`` and
these digests with it (as ``test_builder_formats.py``'s checksum)."""

from __future__ import annotations

import pytest

from graphmatch.data.kbert import KBertClassificationDataset, KBertNERDataset, KBertPairDataset
from graphmatch.data.let import PairMatchingDataset
from graphmatch.data.relation import RelationDataset
from graphmatch.graphs.kbert import SentenceTreeBuilder, TreeOptions
from graphmatch.graphs.let import LatticePairBuilder
from graphmatch.graphs.let_options import LatticeOptions
from graphmatch.graphs.relation_options import RelationOptions
from graphmatch.knowledge import KnowledgeGraph
from graphmatch.text import CharTokenizer

PINNED = {
    "classification": "5500e893081d9b31ff79602fe1db706b1c161ee8eb5f138e9bd54039045354c3",
    "pair_text": "9714e7404505fae5f29d6d77c0adba47a779d0c622c91ee71253a12c48020275",
    "ner_reference": "198a92a40add94befb9177c6f3a1bbd689c084fd0d0a4f44173b4e15bbfa231e",
    "wordpiece_nouns": "5b4fbd5303380b40d1aba5a7a7b6be8b94d66592e7f24b23f75ad4d95e579966",
    "given_builder": "3683ce7642ebf7bc287b8d7d2e7bae61f6d7ed8edcb014aed4c657d8abf6e520",
    "relation_chars": "2a7d1e4f00fb5e296ab3f11d38ebcb5c2461a552c38d08d2331a1454d5e7192d",
    "let_jieba": "b0e1788f27cac9fdab41b2e1d9c41b863e338cd565438a77e828296f042ba489",
}


@pytest.fixture
def made(samples, shared_data, tmp_path):
    kg = samples / "kg" / "sample.spo"
    common = dict(root=shared_data, cache=tmp_path / "cache", progress=False, limit=6)

    def kbert(cls, name, split="dev", **kw):
        return cls(str(name), split, kg=kg, **common, **kw)

    return kg, kbert


@pytest.mark.parametrize("case", ["classification", "pair_text", "ner_reference", "given_builder"])
def test_kbert_cache_keys_are_the_ones_of_before(made, samples, shared_data, tmp_path, case):
    kg, kbert = made
    if case == "classification":
        ds = kbert(KBertClassificationDataset, samples / "sentiment", options=TreeOptions(max_length=32))
    elif case == "pair_text":
        ds = kbert(KBertPairDataset, samples / "pairs",
                   options=TreeOptions("pair", max_entities=1, knowledge_as="text"))
    elif case == "ner_reference":
        folder = tmp_path / "ner"
        folder.mkdir()
        (folder / "train.tsv").write_text("text_a\tlabel\n头 痛 三 天\tB-S I-S O O\n左 腿\tB-B I-B\n", encoding="utf-8")
        ds = kbert(KBertNERDataset, folder, "train", labels=["O", "B-B", "B-S", "I-B", "I-S"],
                   options=TreeOptions("ner", max_length=16, mode="reference"))
    else:
        tok = CharTokenizer(shared_data / "kbert" / "vocab" / "google_vocab.txt")
        builder = SentenceTreeBuilder(KnowledgeGraph.from_spo(kg), tok, TreeOptions(max_length=24, mode="reference"))
        ds = kbert(KBertClassificationDataset, samples / "sentiment", builder=builder)
    assert ds.cache_digest == PINNED[case]


def test_a_word_piece_cache_key_is_the_one_of_before(made, samples, minilm):
    _, kbert = made
    ds = kbert(KBertClassificationDataset, samples / "sentiment", vocab=minilm / "vocab.txt",
               options=TreeOptions(max_length=40, tokenization="wordpiece", noun_reading=True))
    assert ds.cache_digest == PINNED["wordpiece_nouns"]


def test_relation_and_lattice_cache_keys_are_the_ones_of_before(samples, shared_data, tmp_path):
    files = {s: samples / "relation_zh" / f"{s}.tsv" for s in ("train", "dev", "test")}
    relation = RelationDataset("train", train_file=files["train"], dev_file=files["dev"], test_file=files["test"],
                               options=RelationOptions(tokenization="chars", max_length=40, max_distance=9),
                               cache=tmp_path / "cache")
    assert relation.cache_digest == PINNED["relation_chars"]
    tok = CharTokenizer(shared_data / "kbert" / "vocab" / "google_vocab.txt")
    let = LatticePairBuilder(tok, None, LatticeOptions(segmenters="jieba", senses=False))
    lattice = PairMatchingDataset(samples / "pairs" / "dev.tsv", let, cache=tmp_path / "cache", limit=6,
                                  progress=False)
    assert lattice.cache_digest == PINNED["let_jieba"]
