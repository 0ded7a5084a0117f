"""CONTRIBUTING's "How to add a builder option", followed step by step with a throwaway option on a
copy of the K-BERT declarations: declared in the options and the recipe key, read in the builder
from its options, and nothing else changed, it reaches the builder, the cache key and the recipe
reference."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import graphmatch.data.kbert as kbert_data
import graphmatch.tasks.recipes.resolve as engine_config
from graphmatch.data.kbert import KBertClassificationDataset
from graphmatch.graphs.kbert import SentenceTreeBuilder, TreeOptions
from graphmatch.tasks.kbert_keys import KBertData, KBertKeys
from graphmatch.tasks.recipes.keys import key

# 1. Declare it: a field of the options and the recipe key of the same name, one default.


@dataclass(frozen=True)
class Options(TreeOptions):
    throwaway: int = 0


@dataclass(frozen=True)
class Data(KBertData):
    throwaway: int = key(Options.throwaway, "a throwaway builder option", interval="[0, inf)")


class Keys(KBertKeys):
    Data = Data


# 2. Read it in the builder, from its options.


def _builder_taking_the_option(monkeypatch) -> list[int]:
    """The builder reads the option; returns what each builder was made with."""
    seen: list[int] = []

    class Builder(SentenceTreeBuilder):
        __module__, __qualname__ = SentenceTreeBuilder.__module__, SentenceTreeBuilder.__qualname__

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            seen.append(self.options.throwaway)

    monkeypatch.setattr(kbert_data, "SentenceTreeBuilder", Builder)
    return seen


def test_a_builder_option_reaches_the_builder_the_cache_key_and_the_reference(samples, shared_data, tmp_path,
                                                                              monkeypatch):
    seen = _builder_taking_the_option(monkeypatch)
    # the recipe's key becomes the option by its name: no task, dataset or command passes it on
    section = Keys.sections({**Keys.defaults["data"], "throwaway": 5}, Keys.defaults["model"])[0]
    options = Options.of(section, max_length=32)
    assert options.throwaway == 5 and options.max_length == 32

    def dataset(tree: TreeOptions) -> KBertClassificationDataset:
        return KBertClassificationDataset(str(samples / "sentiment"), "dev", root=shared_data, cache=tmp_path,
                                          kg=samples / "kg" / "sample.spo", options=tree, limit=6, progress=False)

    given = dataset(options)
    assert seen == [5] and len(given) == 6  # the dataset made its builder with the option
    default = dataset(dataclasses.replace(options, throwaway=0))
    assert seen == [5, 0] and default.cache_digest != given.cache_digest  # the option keys the cache
    assert given.cache_key()["builder"]["options"]["throwaway"] == 5
    # at its default the key is the one of caches made before the option existed
    assert dataset(TreeOptions(max_length=32)).cache_digest == default.cache_digest

    # 3. Regenerate the reference: the key is in it, with its default and range
    monkeypatch.setattr(engine_config, "keys_of", lambda name, load=False: Keys)
    reference = engine_config.key_reference(["kbert"])
    assert "| `data.throwaway` | int | `0` | >= 0 | a throwaway builder option |" in reference
