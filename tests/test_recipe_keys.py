"""Declaring recipe keys once: types, choices, ranges, did-you-mean, renamed keys, the reference."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Literal

import pytest

from graphmatch.tasks.recipes.keys import (
    RecipeKeyDeprecated,
    Renamed,
    build,
    check,
    defaults,
    describe,
    key,
    specs,
    upgrade,
)


@dataclass(frozen=True)
class Inner:
    """A nested section."""

    a: int | None = key(None, "a count", interval="[1, inf)")


@dataclass(frozen=True)
class Section:
    """A section."""

    size: int = key(4, "a size", interval="[1, inf)")
    rate: float = key(0.5, "a rate", interval="(0, 1]")
    name: str | None = key(None, "a name")
    mode: Literal["fast", "slow"] = key("fast", "a mode")
    words: list[str] | None = key(None, "some words")
    flag: bool = key(True, "a switch")
    inner: Inner = key(Inner(), "nested keys")
    level: str | int = key("auto", "a level", choices=("auto", "1-x"), convert=lambda v: f"{v}-x" if isinstance(v, int)
                           else v)


def test_types_choices_and_ranges():
    assert check(Section, {"size": 3, "rate": 1, "name": None, "words": ["a"], "inner": {"a": 2}}, "s.") == {
        "size": 3, "rate": 1, "name": None, "words": ["a"], "inner": {"a": 2}}  # an int is a number
    assert check(Section, {"level": 1}, "s.") == {"level": "1-x"}
    bad = [
        ({"size": 1.5}, "s.size must be an integer >= 1, got 1.5"),
        ({"size": True}, "s.size must be an integer >= 1, got True"),
        ({"size": 0}, "s.size must be an integer >= 1, got 0"),
        ({"rate": 0}, "s.rate must be a number in (0, 1], got 0"),
        ({"rate": "x"}, "s.rate must be a number in (0, 1], got 'x'"),
        ({"mode": "medium"}, "s.mode must be one of fast, slow, got 'medium'"),
        ({"words": "a"}, "s.words must be a list of strings or null, got 'a'"),
        ({"words": [1]}, "s.words must be a list of strings or null, got [1]"),
        ({"flag": "yes"}, "s.flag must be a bool, got 'yes'"),
        ({"inner": {"a": 0}}, "s.inner.a must be an integer >= 1 or null, got 0"),
        ({"inner": 3}, "s.inner must be a mapping, got 3"),
        ({"level": 2.5}, "s.level must be a string or an integer, got 2.5"),
        ({"level": "2"}, "s.level must be one of auto, 1-x, got '2'"),
    ]
    for values, message in bad:
        with pytest.raises(ValueError) as err:
            check(Section, values, "s.")
        assert str(err.value) == message
    with pytest.raises(ValueError, match=r"^s.size must be an integer >= 1, got 0 \(my.yaml\)$"):
        check(Section, {"size": 0}, "s.", "my.yaml")


def test_unknown_keys_suggest_the_nearest():
    with pytest.raises(ValueError, match=r"^unknown recipe key 's.sise' in my.yaml; did you mean 's.size'\?$"):
        check(Section, {"sise": 1}, "s.", "my.yaml")
    with pytest.raises(ValueError, match=r"^unknown recipe key 's.inner.zzz'; valid keys of s.inner: a$"):
        check(Section, {"inner": {"zzz": 1}}, "s.")


def test_defaults_build_and_reference():
    assert defaults(Section)["inner"] == {"a": None} and defaults(Section)["mode"] == "fast"
    built = build(Section, {**defaults(Section), "inner": {"a": 3}})
    assert isinstance(built.inner, Inner) and built.inner.a == 3 and built.size == 4
    assert specs(Section)["mode"].choices == ("fast", "slow")
    rows = {r[0]: r for r in describe(Section, "s.")}
    assert rows["s.size"] == ("s.size", "int", "`4`", ">= 1", "a size")
    assert rows["s.inner.a"][1:4] == ("int | null", "`null`", ">= 1")
    assert rows["s.mode"][3] == "`fast`, `slow`" and rows["s.flag"][2] == "`true`"


RENAMED = [Renamed("t.limits", ("t.limits.train",)), Renamed("t.eval_limit", ("t.limits.dev", "t.limits.test")),
           Renamed("t.old", ("t.new",))]


def test_old_names_are_renamed_with_a_warning():
    with pytest.warns(RecipeKeyDeprecated, match=r"^recipe key 't.old' is deprecated; use 't.new'$"):
        assert upgrade({"t": {"old": 1}}, RENAMED) == {"t": {"new": 1}}
    with pytest.warns(RecipeKeyDeprecated, match="'t.limits' as a single value is deprecated; use 't.limits.train'"):
        layer = upgrade({"t": {"limits": 5, "eval_limit": 2}}, RENAMED)
    assert layer == {"t": {"limits": {"train": 5, "dev": 2, "test": 2}}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert upgrade({"t": {"limits": {"train": 5}}}, RENAMED) == {"t": {"limits": {"train": 5}}}  # current form
        assert upgrade({"t": {"old": 1, "new": 2}}, RENAMED, stored=True) == {"t": {"new": 2}}  # the new one wins


def test_an_old_name_beside_its_new_one_must_agree():
    with pytest.warns(RecipeKeyDeprecated):
        assert upgrade({"t": {"old": 1, "new": 1}}, RENAMED) == {"t": {"new": 1}}
    with pytest.raises(ValueError, match=r"^t.new is set twice in my.yaml: to 2, and to 1 through the deprecated "
                                         r"t.old; keep t.new$"):
        upgrade({"t": {"old": 1, "new": 2}}, RENAMED, "my.yaml")
    renamed = [Renamed("a.x", ("a.z",)), Renamed("a.y", ("a.z",))]
    with pytest.warns(RecipeKeyDeprecated):
        assert upgrade({"a": {"x": 3, "y": None}}, renamed) == {"a": {"z": 3}}  # null stands for unset
    with pytest.raises(ValueError, match=r"a.z is set twice through deprecated keys \(a.x: 3, a.y: 4\)"):
        upgrade({"a": {"x": 3, "y": 4}}, renamed)


def test_stored_let_configuration_of_the_previous_release(shared_data):
    from graphmatch.engine import resolve

    new = resolve("let/lcqmc_quick", ["model.encoder=bert", "model.pretrained=minilm", "train.progress=false"])
    old = {**new, "data": {**new["data"]}, "model": {**new["model"]}}
    limit = old["data"].pop("limit")
    old["data"].update(limit=limit["train"], dev_limit=limit["dev"], test_limit=limit["test"], progress=True)
    old["model"]["bert_path"] = old["model"].pop("pretrained")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert resolve(old, stored=True) == new
    with pytest.raises(ValueError, match="train.progress is set twice: to False, and to True through the "
                                         "deprecated data.progress"):
        resolve(old)


@dataclass(frozen=True)
class ShapeModel:
    """The keys every shape has."""

    name: Literal["square", "circle", "disc"] = key("square", "the shape")
    scale: float = key(1.0, "a scale")


@dataclass(frozen=True)
class Square(ShapeModel):
    """A square."""

    name: Literal["square"] = key("square", "the shape")
    side: int = key(2, "its side", interval="[1, inf)")


@dataclass(frozen=True)
class Round(ShapeModel):
    """A circle or a disc."""

    name: Literal["circle", "disc"] = key("circle", "the shape")
    radius: int = key(1, "its radius", interval="[1, inf)")


def test_a_family_of_variants_declares_one_model_section_each(tmp_path, monkeypatch):
    """``TaskKeys.variants``: ``model.name`` picks the section (any family, not only relation)."""
    import graphmatch.tasks.keys as task_keys
    from graphmatch.tasks.keys import TaskKeys, register_keys

    monkeypatch.setattr(task_keys, "_KEYS", dict(task_keys._KEYS))  # registered for this test only
    from graphmatch.tasks.recipes.resolve import key_reference, resolve
    from graphmatch.tasks.recipes.sections import Recipe

    @register_keys
    class Shapes(TaskKeys):
        name = "shapes_of_a_test"
        Model = ShapeModel
        variants = (Square, Round)

    assert [Shapes.model_section(n) for n in (None, "square", "disc", "hexagon")] == [Square, Square, Round,
                                                                                       ShapeModel]
    config = resolve({"task": "shapes_of_a_test", "model": {"name": "disc", "radius": 3}})
    assert config["model"] == {"name": "disc", "scale": 1.0, "radius": 3}
    assert Recipe.of(config).model == Round(name="disc", radius=3)
    assert Recipe.of(resolve({"task": "shapes_of_a_test"})).model == Square()
    recipe = tmp_path / "shape.yaml"
    recipe.write_text("task: shapes_of_a_test\nmodel:\n  name: square\n  radius: 3\n", encoding="utf-8")
    with pytest.raises(ValueError, match=rf"^unknown recipe key 'model.radius' in {recipe}; valid keys of model: "
                                         r"name, scale, side$"):
        resolve(recipe)
    recipe.write_text("task: shapes_of_a_test\nmodel:\n  name: square\n  side: 3\n  scale: 2\n", encoding="utf-8")
    switched = resolve(recipe, ["model.name=circle", "model.radius=2"])  # the file's variant, replaced
    assert switched["model"] == {"name": "circle", "scale": 2, "radius": 2}
    with pytest.raises(ValueError, match="^unknown recipe key 'model.radius'"):
        resolve(recipe, ["model.radius=2"])
    assert resolve({**config, "model": {**config["model"], "side": 2}}, stored=True) == config
    with pytest.raises(ValueError, match=r"^model.name must be one of square, circle, disc, got 'hexagon'$"):
        resolve({"task": "shapes_of_a_test", "model": {"radius": 3, "name": "hexagon"}})
    text = key_reference(["shapes_of_a_test"])
    assert "## `model` of `shapes_of_a_test` with `model.name` `circle`, `disc`\n\nA circle or a disc." in text
    assert text.count("`model.scale`") == 1 and text.count("`model.radius`") == 1
