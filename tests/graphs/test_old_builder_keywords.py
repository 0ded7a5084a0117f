"""The builders' keywords of before they took options objects still work for one release: one
``DeprecationWarning`` per call, and the same graph as the options form."""

from __future__ import annotations

import warnings

import pytest
import torch

from graphmatch.graphs.kbert import SentenceTreeBuilder, TreeCore, TreeOptions
from graphmatch.knowledge import KnowledgeGraph
from graphmatch.text import CharTokenizer


def same(a, b) -> None:
    assert a.node_types == b.node_types and a.edge_types == b.edge_types
    for store, other in zip(a.stores, b.stores, strict=True):
        assert sorted(store.keys()) == sorted(other.keys())
        for name, value in store.items():
            assert torch.equal(value, other[name]) if torch.is_tensor(value) else value == other[name], name


def old(make, *args, **kwargs):
    """What ``make(*args, **kwargs)`` gives, and checks it warned once, at this call, naming the keywords."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        made = make(*args, **kwargs)
    deprecations = [w for w in seen if issubclass(w.category, DeprecationWarning)]
    assert len(deprecations) == 1, [str(w.message) for w in deprecations]
    assert deprecations[0].filename == __file__  # it points at the old call
    message = str(deprecations[0].message)
    assert "is deprecated: pass options=" in message and all(f"{name}=" in message for name in kwargs
                                                                 if name not in ("keep_text", "selection"))
    return made


@pytest.fixture
def tok() -> CharTokenizer:
    return CharTokenizer({t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *"abcdexyzq"])})


@pytest.fixture
def kg() -> KnowledgeGraph:
    return KnowledgeGraph([("ab", "r", "xyz"), ("ab", "s", "q"), ("d", "r", "y")])


@pytest.mark.parametrize("given, options, labels", [
    (dict(max_length=6, max_entities=1), TreeOptions(max_length=6, max_entities=1), None),
    (dict(mode="reference", predicate=False), TreeOptions(mode="reference", predicate=False), None),
    (dict(query="words", segmenter="jieba", knowledge_as="text"),
     TreeOptions(query="words", segmenter="jieba", knowledge_as="text"), None),
    (dict(predicate=False, add_cls=False, tag_to_id={"O": 0, "B-X": 1}), TreeOptions("ner"), ["O", "B-X"]),
    (dict(add_cls=False), TreeOptions("ner", predicate=True), None),
])
def test_the_keyword_form_warns_once_and_builds_the_same_tree(tok, kg, given, options, labels):
    tags = ["B-X", "O", "O", "B-X", "O"] if labels else None
    for cls in (SentenceTreeBuilder, TreeCore):
        before = old(cls, kg, tok, keep_text=True, **given)
        now = cls(kg, tok, options, labels=labels, keep_text=True)
        assert before.options.cache_key(labels) == now.options.cache_key(labels)
        assert (before.predicate, before.add_cls, before.tag_to_id) == (now.predicate, now.add_cls, now.tag_to_id)
        if cls is SentenceTreeBuilder:
            same(before("abcde", tags=tags), now("abcde", tags=tags))
            if tags is None:
                same(before("ab dq", "de"), now("ab dq", "de"))
        else:
            assert before.build(["abcde"]).stores.keys() == now.build(["abcde"]).stores.keys()


def test_the_options_form_does_not_warn_and_refuses_both_forms(tok, kg):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SentenceTreeBuilder(kg, tok, TreeOptions(max_length=8), keep_text=True)
        SentenceTreeBuilder(kg, tok)
    with pytest.raises(TypeError, match="options= only, not also as max_length="):
        SentenceTreeBuilder(kg, tok, TreeOptions(), max_length=8)
    with pytest.raises(TypeError, match="unexpected keyword argument 'max_lenght'"):
        SentenceTreeBuilder(kg, tok, max_lenght=8)
    with pytest.raises(TypeError, match="one TreeOptions"):
        SentenceTreeBuilder(kg, tok, 64)


SENTENCE = "The <e1>company</e1> fabricates plastic <e2>chairs</e2> ."


@pytest.mark.parametrize("given", [dict(max_distance=3, markers=False, position_anchor="last"),
                                   dict(max_length=8), dict(max_distance=2, keep_text=True)])
def test_the_relation_builders_keyword_form_warns_once_and_builds_the_same_graph(given):
    from graphmatch.graphs.relation import RelationGraphBuilder, tokenize
    from graphmatch.graphs.relation_options import RelationOptions
    from graphmatch.text.vocab import Vocab

    vocab = Vocab.build([tokenize(SENTENCE.replace("<e1>", " ").replace("</e1>", " ")
                                  .replace("<e2>", " ").replace("</e2>", " "))])
    keep_text = given.pop("keep_text", False)
    before = old(RelationGraphBuilder, vocab, keep_text=keep_text, **given)
    now = RelationGraphBuilder(vocab, RelationOptions(**given), keep_text=keep_text)
    assert before.options == now.options
    same(before(SENTENCE, label=2), now(SENTENCE, label=2))
    with pytest.raises(TypeError, match="options= only, not also as max_length="):
        RelationGraphBuilder(vocab, RelationOptions(), max_length=8)


def test_the_relation_tree_builders_keyword_form_warns_once_and_builds_the_same_graph(tmp_path):
    from tiny_bert import tiny_bert_folder

    from graphmatch.graphs.relation import WordPieces
    from graphmatch.graphs.relation_kbert import RelationTreeBuilder
    from graphmatch.graphs.relation_options import RelationOptions

    words = ["The company fabricates plastic chairs .", "type group is a institution chair seat"]
    pieces = WordPieces.from_pretrained(tiny_bert_folder(tmp_path / "bert", words))
    spo = tmp_path / "tiny.spo"
    spo.write_text("company\ttype\tgroup\ncompany\tis a\tinstitution\nchair\ttype\tseat\n", encoding="utf-8")
    kg = KnowledgeGraph.load(spo)
    before = old(RelationTreeBuilder, pieces, kg, keep_text=True, max_distance=5, inject="all", max_entities=1,
                 predicate=False)
    now = RelationTreeBuilder(pieces, kg, RelationOptions(max_distance=5, inject="all", max_entities=1,
                                                          predicate=False), keep_text=True)
    assert before.options == now.options
    graph = now(SENTENCE, label=1)
    assert graph["value"].text == ["group", "seat"]  # the knowledge is in: objects alone, one per entity
    same(before(SENTENCE, label=1), graph)


def test_the_lattice_builders_keyword_form_warns_once_and_builds_the_same_graph(tok):
    from graphmatch.graphs.let import LatticePairBuilder
    from graphmatch.graphs.let_options import LatticeOptions

    before = old(LatticePairBuilder, tok, None, keep_text=True, segmenters="jieba", max_length=9, senses=False)
    now = LatticePairBuilder(tok, None, LatticeOptions(segmenters=("jieba",), max_length=9, senses=False),
                             keep_text=True)
    assert before.lattice_options == now.lattice_options and before.options() == now.options()
    same(before("abcde", "dexyz", 1), now("abcde", "dexyz", 1))
    with pytest.raises(TypeError, match="options= only, not also as senses="):
        LatticePairBuilder(tok, None, LatticeOptions(), senses=False)
