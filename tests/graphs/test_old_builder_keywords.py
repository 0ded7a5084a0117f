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
    """What ``make(*args, **kwargs)`` gives, and checks it warned once, naming the keywords."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        made = make(*args, **kwargs)
    deprecations = [w for w in seen if issubclass(w.category, DeprecationWarning)]
    assert len(deprecations) == 1, [str(w.message) for w in deprecations]
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
