"""K-BERT's tree options are made once and their defaults written once: the recipe keys, the
dataset, ``inspect``, ``show`` and the builder all take theirs from :class:`TreeOptions`
(:mod:`graphmatch.graphs.defaults`), and the options key a cache as the builder's arguments did."""

import inspect as pyinspect

import pytest

from graphmatch.cli import inspect as cli_inspect
from graphmatch.data.kbert import KBertDataset
from graphmatch.graphs import defaults
from graphmatch.graphs.kbert import STOP_WORDS, TreeCore
from graphmatch.graphs.kbert.options import TreeOptions
from graphmatch.tasks.kbert_keys import KBertData


def _defaults(func) -> dict:
    return {name: p.default for name, p in pyinspect.signature(func).parameters.items()
            if p.default is not pyinspect.Parameter.empty}


def test_every_default_is_the_builders_and_the_recipes():
    options, core, dataset, data = TreeOptions(), _defaults(TreeCore.__init__), _defaults(KBertDataset.__init__), \
        KBertData()
    assert (options.max_length, options.max_entities, options.segmenter) == \
        (defaults.KBERT_MAX_LENGTH, defaults.KBERT_MAX_ENTITIES, defaults.KBERT_SEGMENTER) == \
        (256, 2, "jieba")
    assert (options.max_length, options.max_entities, options.mode) == (data.max_length, data.max_entities, data.mode)
    # the builder and the dataset take the tree as one object: none of its settings is a keyword of their own
    for given in (core, dataset):
        assert given["options"] is None and not set(given) & {f for f in TreeOptions.__dataclass_fields__}
    assert options.max_words == defaults.KBERT_MAX_WORDS
    # inspect leaves every builder setting it is not given to TreeOptions
    assert {k: v for k, v in _defaults(cli_inspect.kbert_rows).items()
            if k in ("max_length", "max_entities", "segmenter", "query")} == dict.fromkeys(
        ("max_length", "max_entities", "segmenter", "query"))


def test_the_options_of_a_section_and_the_builder_arguments_they_give():
    section = KBertData(max_length=64, max_entities=3, mode="reference")
    options = TreeOptions.of(section, kind="ner")
    assert (options.max_length, options.max_entities, options.mode, options.kind) == (64, 3, "reference", "ner")
    with pytest.raises(AttributeError):
        options.max_length = 1  # frozen
    assert options.cache_key(["O", "B-X"]) == {
        "max_length": 64, "max_entities": 3, "mode": "reference", "query": "trie", "segmenter": "jieba",
        "predicate": False, "add_cls": False, "tag_to_id": {"O": 0, "B-X": 1}}
    english = TreeOptions(tokenization="wordpiece", lowercase=False, noun_reading=True).cache_key()
    assert english == {"max_length": 256, "max_entities": 2, "mode": "default", "predicate": True, "add_cls": True,
                       "tokenizer": "wordpiece", "lowercase": False, "stop_words": sorted(STOP_WORDS), "max_words": 3,
                       "noun_readings": True}
    assert TreeOptions(tokenization="sentencepiece").cache_key() == {
        "max_length": 256, "max_entities": 2, "mode": "default", "query": "trie", "predicate": True, "add_cls": True,
        "tokenizer": "sentencepiece"}


@pytest.mark.parametrize("given, message", [
    (dict(kind="ner", tokenization="wordpiece"), "NER tags characters; word pieces"),
    (dict(kind="ner", tokenization="sentencepiece"), "NER tags characters; SentencePiece"),
    (dict(noun_reading=True), "noun_reading reads English words"),
    (dict(kind="tagging"), "kind must be one of"),
])
def test_options_that_cannot_go_together_are_refused(given, message):
    with pytest.raises(ValueError, match=message):
        TreeOptions(**given)
