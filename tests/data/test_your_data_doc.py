"""The five-line examples of ``docs/your_data.md`` read by the real readers, as the doc says.

The files are written as the doc's ``cat > FILE <<'EOF'`` blocks and ``cp`` lines write them;
``tests/test_doc_commands.py`` runs the doc's train and predict commands on them."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from graphmatch.data.file_split import split_line
from graphmatch.data.kbert import dataset_kind, kbert_dataset
from graphmatch.data.let import read_pairs
from graphmatch.data.relation_formats import detect_format, read_relation_file
from graphmatch.graphs.kbert import TreeOptions
from graphmatch.knowledge import KnowledgeGraph

DOC = Path(__file__).resolve().parents[2] / "docs" / "your_data.md"
HEREDOC = re.compile(r"^cat > (\S+) <<'EOF'\n(.*?)^EOF$", re.M | re.S)
COPY = re.compile(r"\bcp (\S+) (\S+)")


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    """A folder holding every file the doc's examples write."""
    work = tmp_path_factory.mktemp("your_data")
    text = DOC.read_text(encoding="utf-8")
    written = HEREDOC.findall(text)
    assert len(written) == 7
    for name, body in written:
        assert len(body.splitlines()) == 5, f"{name}: the doc promises five-line examples"
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(body, encoding="utf-8")
    for src, dest in COPY.findall(text):
        shutil.copy(work / src, work / dest)
    return work


@pytest.mark.parametrize(("folder", "kind", "labels"), [
    ("mysentiment", "classification", ["0", "1"]),
    ("mypairs", "pair", ["0", "1"]),
    ("myner", "ner", ["O", "B-疾病", "B-症状", "B-部位", "I-疾病", "I-症状", "I-部位"]),  # O, then sorted
])
def test_kbert_folders_are_read_as_their_task(files, shared_data, folder, kind, labels):
    path = files / folder
    assert dataset_kind(str(path)) == kind
    for split in ("train", "dev", "test"):
        data = kbert_dataset(str(path), split, root=shared_data, cache=files / "cache", kg=str(files / "my.spo"),
                             options=TreeOptions(max_length=64), labels=None if split == "train" else labels)
        assert len(data) == 4 and data.labels == labels


def test_one_file_is_cut_by_the_docs_data_split(files, shared_data):
    split = yaml.safe_load(re.search(r"'data\.split=(\{.*?\})'", DOC.read_text(encoding="utf-8"))[1])
    assert split == {"dev": 1, "test": 1, "seed": 1}
    path = str(files / "myreviews.tsv")
    assert dataset_kind(path, split_of=split) == "classification"
    texts = {}
    for part in ("train", "dev", "test"):
        data = kbert_dataset(path, part, root=shared_data, cache=files / "cache", kg=None, max_length=64,
                             labels=None if part == "train" else ["0", "1"], split_of=split)
        texts[part] = [ex.text_a for ex in data.read()]
        assert data.labels == ["0", "1"]
    assert [len(texts[part]) for part in ("train", "dev", "test")] == [2, 1, 1]
    lines = (files / "myreviews.tsv").read_text(encoding="utf-8").splitlines()[1:]
    assert sorted(sum(texts.values(), [])) == sorted(line.split("\t")[1] for line in lines)
    assert f"{path}: data.split (seed 1): train 2, dev 1, test 1 lines" == split_line(path, 4, split)


def test_the_let_pair_file_has_a_header_and_four_labelled_pairs(files):
    pairs = read_pairs(files / "mylet" / "train.tsv")
    assert [p.label for p in pairs] == [1, 0, 1, 0] and pairs[0].text_a == "酒店的早餐几点开始？"


def test_the_relation_file_is_head_tail_relation_sentence(files):
    path = files / "myrel" / "train.tsv"
    assert detect_format(path) == "tsv"
    examples = read_relation_file(path)
    assert [e.label for e in examples] == ["位于", "出生地", "位于", "出生地", "NA"]
    first = examples[0].sentence
    assert first.text == "故宫位于北京市中心。" and first.text[slice(*first.e1)] == "故宫"


def test_the_knowledge_graph_has_its_five_triples(files):
    kg = KnowledgeGraph.load(files / "my.spo")
    assert set(kg.subjects) == {"酒店", "早餐", "火车站", "地铁站", "房间"}
