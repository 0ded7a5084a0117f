"""The relation builder's settings are one frozen object, made once from the ``data`` section:
its defaults are the recipe keys' and the builders', and ``max_length: auto`` is decided on it
once (the training split's choice, or a checkpoint's) and carried by it."""

import dataclasses
import inspect

import pytest

from graphmatch.engine import resolve
from graphmatch.graphs.relation import RelationGraphBuilder
from graphmatch.graphs.relation_kbert import RelationTreeBuilder
from graphmatch.graphs.relation_options import RelationOptions
from graphmatch.tasks.base import get_task
from graphmatch.tasks.relation_keys import RelationData
from graphmatch.text.vocab import Vocab

QUICK = ["model.embedding_dim=16", "model.hidden_size=16", "model.position_dim=4", "model.heads=2",
         "model.attention_size=6"]


def test_the_defaults_are_the_keys_and_the_builders():
    options, keys = RelationOptions(), RelationData()
    for field in dataclasses.fields(RelationOptions):
        if field.name != "tokenization":  # the key's null: the model's own
            section = keys.select if field.name == "noun_reading" else keys  # data.select.noun_reading
            assert getattr(section, field.name) == getattr(options, field.name), field.name
    # the builders take the graph as one object: none of its settings is a keyword of their own
    for builder in (RelationGraphBuilder, RelationTreeBuilder):
        params = inspect.signature(builder).parameters
        assert params["options"].default is None and not set(params) & {f.name for f in dataclasses.fields(options)}
    assert RelationOptions.of(RelationData()).noun_reading is False
    assert RelationOptions.of({"select": {"noun_reading": True}}).noun_reading is True
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.max_length = 3
    with pytest.raises(ValueError, match="max_length: auto is decided"):
        RelationGraphBuilder(Vocab.build([["a"]]), RelationOptions(max_length="auto"))


def test_max_length_auto_is_decided_once_and_carried_by_the_options(tmp_path):
    config = resolve("relation/zh_entity_attention", [f"data.cache_dir={tmp_path}", *QUICK])
    task = get_task("relation")(config)
    assert task.options == RelationOptions.of(task.data, tokenization="chars") and task.options.auto
    assert not hasattr(task, "_max_length")
    length = task.max_length()
    assert task.options == RelationOptions.of(task.data, tokenization="chars").decided(length)
    assert length == task.train_split().max_length == 23 and task.builder_options() is task.options
    assert task.get_extra_state()["max_length"] == 23
    assert task.builder().max_length == 23
    fresh = get_task("relation")(config)  # from a checkpoint: decided without building the data
    fresh.set_extra_state(task.get_extra_state())
    assert fresh.options == task.options and fresh._train is None and fresh.max_length() == 23
    fixed = get_task("relation")(resolve("relation/zh_entity_attention",
                                         [f"data.cache_dir={tmp_path}", "data.max_length=40", *QUICK]))
    assert fixed.options.max_length == 40 and fixed.max_length() == 40 and fixed._train is None
