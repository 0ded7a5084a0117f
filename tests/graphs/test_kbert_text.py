"""``knowledge_as="text"``: the kept branches written after the input as plain text, in a second segment,
with ordinary positions and full visibility; NER tags ignore them; an input without knowledge is the
trunk alone."""

from __future__ import annotations

import pytest
import torch

from graphmatch.graphs.kbert import IGNORE_INDEX, SentenceTreeBuilder, TreeOptions, dense_inputs
from graphmatch.knowledge import KnowledgeGraph
from graphmatch.text import CharTokenizer

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *"去洗手间和火车站卫生车好：，；"]


@pytest.fixture(scope="module")
def tok() -> CharTokenizer:
    return CharTokenizer({t: i for i, t in enumerate(VOCAB)})


@pytest.fixture(scope="module")
def kg() -> KnowledgeGraph:
    return KnowledgeGraph([("洗手间", "", "卫生间"), ("火车站", "", "车站"), ("火车站", "", "站")])


def tokens(tok, data) -> str:
    return "".join(tok.id_to_token(i) for i in data["token"].input_ids.tolist())


def test_the_branches_follow_as_text(tok, kg):
    builder = SentenceTreeBuilder(kg, tok, TreeOptions(max_entities=1, knowledge_as="text"))
    data = builder("去洗手间和火车站")
    assert tokens(tok, data) == "[CLS]去洗手间和火车站[SEP]洗手间：卫生间；火车站：车站[SEP]"
    n = data["token"].num_nodes
    assert data["token"].pos.tolist() == list(range(n))
    assert data["token"].seg.tolist() == [0] * 10 + [1] * (n - 10)
    assert data["token"].char_index.tolist() == list(range(-1, 8)) + [-1] * (n - 9)
    assert not data["token"].branch.any() and data["word"].num_nodes == 0 and data["entity"].num_nodes == 0
    d = dense_inputs(data)
    assert bool(d["visible"].all())  # every token sees every other
    two = SentenceTreeBuilder(kg, tok, TreeOptions(max_entities=2, knowledge_as="text"))("火车站好")
    assert tokens(tok, two) == "[CLS]火车站好[SEP]火车站：车站，站[SEP]"


def test_no_knowledge_is_the_trunk_alone_and_the_cut_keeps_the_input(tok, kg):
    text = SentenceTreeBuilder(kg, tok, TreeOptions(knowledge_as="text"))("去和好")
    plain = SentenceTreeBuilder(None, tok)("去和好")
    for name in ("input_ids", "pos", "seg", "char_index", "branch"):
        assert torch.equal(text["token"][name], plain["token"][name]), name
    cut = SentenceTreeBuilder(kg, tok, TreeOptions(max_length=12, knowledge_as="text"))("去洗手间和火车站")
    assert tokens(tok, cut) == "[CLS]去洗手间和火车站[SEP]洗手"
    assert tokens(tok, SentenceTreeBuilder(kg, tok,
                                           TreeOptions(max_length=5, knowledge_as="text"))("去洗手间和火车站")) \
        == "[CLS]去洗手间"


def test_a_pair_has_one_knowledge_segment_after_both_texts(tok, kg):
    data = SentenceTreeBuilder(kg, tok, TreeOptions(max_entities=1, knowledge_as="text"))("去洗手间", "火车站")
    assert tokens(tok, data) == "[CLS]去洗手间[SEP]火车站[SEP]洗手间：卫生间；火车站：车站[SEP]"
    assert data["token"].seg.tolist() == [0] * 6 + [1] * 4 + [1] * 15
    assert data["token"].pos.tolist() == list(range(25))


def test_ner_tags_ignore_the_knowledge(tok, kg):
    tag_to_id = {"O": 0, "B-L": 1, "I-L": 2}
    builder = SentenceTreeBuilder(kg, tok, TreeOptions(max_entities=1, kind="ner",
                                                       knowledge_as="text"), labels=list(tag_to_id))
    tags = ["O", "B-L", "I-L", "I-L"]
    data = builder("去洗手间", tags=tags)
    assert tokens(tok, data) == "去洗手间[SEP]洗手间：卫生间[SEP]"
    assert data["token"].y.tolist() == [0, 1, 2, 2] + [IGNORE_INDEX] * 9


def test_a_bad_value_is_refused(tok, kg):
    with pytest.raises(ValueError, match="knowledge_as must be one of tree, text"):
        SentenceTreeBuilder(kg, tok, TreeOptions(knowledge_as="list"))


def test_the_recipe_key_needs_a_kg_and_keys_the_cache(capsys, samples, tmp_path):
    from graphmatch.cli.main import main

    assert main(["train", "kbert/chnsenticorp_hownet_quick", "--out", str(tmp_path / "run"), "--set", "data.kg=null",
                 "data.knowledge_as=text"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "data.knowledge_as" in err, err
    assert "knowledge_as" not in TreeOptions().cache_key()  # the tree's caches stay valid
    assert TreeOptions(knowledge_as="text").cache_key()["knowledge_as"] == "text"
