"""``datasets/``: cards that match the registry, and the project's own sample set."""

import csv
import re
from pathlib import Path

import pytest

from graphmatch.io.datafiles import REGISTRY, sha256

DATASETS = Path(__file__).resolve().parents[1] / "datasets"
SAMPLES = DATASETS / "samples"
CARDS = [
    "semeval2010_task8", "kbert_kgs", "kbert_vocab", "book_review", "chnsenticorp", "shopping",
    "medical_ner", "msra_ner", "lcqmc", "hownet", "bq", "wordnet", "sst2",
]  # fmt: skip


def test_datasets_is_not_a_python_package():
    assert not list(DATASETS.rglob("__init__.py")), "datasets/ would shadow HuggingFace datasets"
    assert not list(DATASETS.rglob("*.py"))


def test_every_card_exists_and_is_linked_from_the_readme():
    readme = (DATASETS / "README.md").read_text(encoding="utf-8")
    for name in CARDS:
        card = DATASETS / f"{name}.md"
        assert card.is_file(), name
        assert f"({name}.md)" in readme
        text = card.read_text(encoding="utf-8")
        assert re.search(r"licen[cs]e|terms", text, re.I) and "GRAPHMATCH_DATA" in text


def test_every_registered_file_is_on_a_card_with_its_sha256_and_url():
    cards = {name: (DATASETS / f"{name}.md").read_text(encoding="utf-8") for name in CARDS}
    for relpath, (url, digest) in REGISTRY.items():
        holders = [name for name, text in cards.items() if f"`{relpath}`" in text]
        assert holders, f"{relpath} is on no card"
        text = cards[holders[0]]
        row = next(line for line in text.splitlines() if f"`{relpath}`" in line and digest in line)
        assert url is None or url in row


def test_card_checksums_match_the_shared_files(shared_data):
    text = "\n".join((DATASETS / f"{name}.md").read_text(encoding="utf-8") for name in CARDS)
    rows = re.findall(r"^\| `([^`]+)` \| [\d,]+ \| `([0-9a-f]{64})` \|", text, re.M)
    assert sorted(relpath for relpath, _ in rows) == sorted(REGISTRY)
    for relpath, digest in rows:
        assert sha256(shared_data / relpath) == digest, relpath


def _tsv(path):
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


@pytest.mark.parametrize("split, size", [("train", 80), ("dev", 20), ("test", 20)])
def test_sentiment_samples(split, size):
    rows = _tsv(SAMPLES / "sentiment" / f"{split}.tsv")
    assert rows[0] == ["label", "text_a"] and len(rows) - 1 == size
    labels = [r[0] for r in rows[1:]]
    assert sorted(set(labels)) == ["0", "1"] and labels.count("1") == size // 2
    assert all(len(r) == 2 and r[1].strip() for r in rows[1:])


@pytest.mark.parametrize("split, size", [("train", 60), ("dev", 20), ("test", 20)])
def test_pair_samples(split, size):
    rows = _tsv(SAMPLES / "pairs" / f"{split}.tsv")
    assert rows[0] == ["text_a", "text_b", "label"] and len(rows) - 1 == size
    assert {r[2] for r in rows[1:]} == {"0", "1"}


def test_samples_do_not_cross_splits():
    seen: dict[str, str] = {}
    for split in ("train", "dev", "test"):
        for row in _tsv(SAMPLES / "sentiment" / f"{split}.tsv")[1:]:
            assert seen.setdefault(row[1], split) == split
        for row in _tsv(SAMPLES / "pairs" / f"{split}.tsv")[1:]:
            for q in row[:2]:
                assert seen.setdefault(q, split) == split


def test_relation_samples_read_as_semeval():
    from graphmatch.data.semeval import read_semeval_file

    train = read_semeval_file(SAMPLES / "relation" / "train.txt")
    test = read_semeval_file(SAMPLES / "relation" / "test.txt")
    assert (len(train), len(test)) == (40, 15)
    labels = {e.label for e in train}
    assert labels == {"Cause-Effect(e1,e2)", "Cause-Effect(e2,e1)", "Component-Whole(e1,e2)",
                      "Component-Whole(e2,e1)", "Other"}  # fmt: skip
    assert {e.label for e in test} == labels and test[0].sid == 8001


def test_sample_kg_loads_and_matches_sample_sentences():
    from graphmatch.knowledge import KnowledgeGraph

    kg = KnowledgeGraph.load(SAMPLES / "kg" / "sample.spo")
    assert 40 <= sum(len(v) for v in kg.subjects.values()) <= 60
    hits = sum(bool(kg.longest_matches(r[1])) for r in _tsv(SAMPLES / "sentiment" / "train.tsv")[1:])
    assert hits >= 40  # most sample reviews mention something the KG knows


def test_samples_stay_small():
    total = sum(p.stat().st_size for p in SAMPLES.rglob("*") if p.is_file())
    assert total < 50_000


def test_relation_zh_samples_read_as_head_tail_tsv():
    from graphmatch.data.relation_formats import read_tsv_file

    parts = {s: read_tsv_file(SAMPLES / "relation_zh" / f"{s}.tsv") for s in ("train", "dev", "test")}
    assert [len(parts[s]) for s in parts] == [40, 20, 20]
    for split, examples in parts.items():
        labels = [e.label for e in examples]
        assert sorted(set(labels)) == ["位于", "出生于", "创办", "无关系", "毕业于"]
        assert all(labels.count(label) == len(labels) // 5 for label in set(labels)), split
    sentences = [e.sentence.text for examples in parts.values() for e in examples]
    assert len(set(sentences)) == len(sentences)  # no sentence in two places
    assert any(e.sentence.e2 < e.sentence.e1 for e in parts["train"])  # some tails come first
