"""The keys every task has are declared once (``TaskData``, ``TaskModel`` in graphmatch/tasks/keys.py):
each built-in family's sections inherit them and none declares them again."""

from __future__ import annotations

import dataclasses

import pytest

from graphmatch.tasks.keys import BUILTIN_TASKS, CommonModel, TaskData, TaskModel, keys_of
from graphmatch.tasks.recipes.keys import defaults


def declared_here(cls: type) -> set[str]:
    """The fields a dataclass declares itself (not inherited)."""
    return set(vars(cls).get("__annotations__", {}))


@pytest.mark.parametrize("name", BUILTIN_TASKS)
def test_every_family_inherits_the_shared_keys_and_declares_none_again(name):
    keys = keys_of(name)
    # a family of variants: its Model holds what they share; a variant with an encoder is a TaskModel too
    assert all(issubclass(v, keys.Model) for v in keys.variants)
    variants = [(v, TaskModel if "pretrained" in defaults(v) else CommonModel) for v in keys.variants]
    for section, base in ((keys.Data, TaskData), (keys.Model, CommonModel if keys.variants else TaskModel),
                          *variants):
        assert issubclass(section, base)
        shared = {f.name for f in dataclasses.fields(base)}
        assert not shared & declared_here(section), section.__name__
        assert {f.name: f.default for f in dataclasses.fields(section) if f.name in shared} == defaults(base)


def test_the_check_can_fail():
    @dataclasses.dataclass(frozen=True)
    class Again(TaskData):
        root: str | None = None

    assert declared_here(Again) & {"root", "cache_dir"} == {"root"}
    assert set(defaults(TaskData)) == {"root", "cache_dir"}
    assert set(defaults(TaskModel)) == {"pretrained", "class_weight"} and set(defaults(CommonModel)) == {"class_weight"}
