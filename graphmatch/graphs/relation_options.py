"""The relation graph builder's settings as one frozen object, made once from a recipe's ``data``
section (or a command line's flags) and handed to the dataset, the task, ``inspect`` and ``show``
alike; every default is written here once (the builders' own, :mod:`graphmatch.graphs.defaults`).

``max_length: auto`` is decided once, on the training sentences (:meth:`RelationOptions.decided`):
the options then carry the length, and a checkpoint stores it."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from graphmatch.graphs.defaults import RELATION_MAX_DISTANCE, RELATION_MAX_LENGTH
from graphmatch.utils.deprecated import old_keywords, options_given

#: ``max_length``'s value that leaves the length to the training sentences
AUTO = "auto"


@dataclass(frozen=True)
class RelationOptions:
    """What a relation sentence graph is built with.

    ``tokenization`` (``words``, ``chars``, a segmenter, or ``pieces``), relative positions clipped
    to ±``max_distance`` and measured from each entity's ``position_anchor``, ``max_length`` tokens
    kept (``"auto"`` until :meth:`decided`), the entity ``markers`` kept as tokens; with a knowledge
    graph, ``inject`` (where branches go), ``max_entities`` values per matched word, whether a
    value is its ``predicate`` and object, and ``noun_reading`` (``data.select.noun_reading``: a
    single word matches only where it reads as a noun).
    """

    tokenization: str = "words"
    max_distance: int = RELATION_MAX_DISTANCE
    max_length: int | str = RELATION_MAX_LENGTH
    markers: bool = True
    position_anchor: str = "span"
    inject: str = "entities"
    max_entities: int = 2
    predicate: bool = True
    noun_reading: bool = False

    @classmethod
    def of(cls, section: Any, **given: Any) -> RelationOptions:
        """The options of a ``data`` section (an object with these attributes, or a mapping), ``given``
        overriding it (e.g. the tokenization a model implies); a recipe's ``noun_reading`` is in
        its ``select``."""
        read = section.get if isinstance(section, dict) else (lambda name, default: getattr(section, name, default))
        values = {f.name: read(f.name, f.default) for f in dataclasses.fields(cls)}
        select = read("select", None)
        if select is not None:
            values["noun_reading"] = bool(select.get("noun_reading", False) if isinstance(select, dict)
                                          else select.noun_reading)
        return cls(**{**values, **given})

    @property
    def auto(self) -> bool:
        """Whether the length is still to be decided on the training sentences."""
        return self.max_length == AUTO

    def decided(self, length: int) -> RelationOptions:
        """These options with ``max_length`` decided (``auto``'s choice, or a checkpoint's)."""
        return dataclasses.replace(self, max_length=int(length))



def old_relation_keywords(where: str, options: RelationOptions | None, old: dict[str, Any]) -> RelationOptions:
    """The options of a relation builder ``where`` called with the keywords it took before it took
    :class:`RelationOptions` (``max_distance=``, ``max_length=``, ``markers=``, ``position_anchor=``,
    ``inject=``, ``max_entities=``, ``predicate=``, ``noun_readings=``), with one ``DeprecationWarning``
    (:func:`~graphmatch.utils.deprecated.old_keywords`); without them ``options`` (``None``: the defaults)."""
    found = options_given(where, RelationOptions, options, old)
    if found is not None:
        return found
    given = dict(old)
    if "noun_readings" in given:
        given["noun_reading"] = given.pop("noun_readings") is not None
    return old_keywords(where, RelationOptions(), given, names=list(old), stacklevel=5)  # the builder's caller


__all__ = ["AUTO", "RelationOptions", "old_relation_keywords"]
