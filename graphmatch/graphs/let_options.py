"""The LET lattice pair builder's settings as one frozen object, made once from a recipe's ``data``
section (or a command line's flags) and handed to the builder, the task, ``inspect`` and ``show``
alike; every default is written once (:mod:`graphmatch.graphs.defaults`, :data:`ALL_SEGMENTERS`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from graphmatch.graphs.defaults import LET_MAX_LENGTH
from graphmatch.utils.deprecated import old_keywords, options_given

#: LET's segmenters, whose words together form the lattice
ALL_SEGMENTERS = ("jieba", "thulac", "pkuseg")


def parse_segmenters(value: str | Sequence[str]) -> tuple[str, ...]:
    """``"lattice"`` (all three), one name, a comma-separated string or a list → segmenter names."""
    names = [v.strip() for v in value.split(",")] if isinstance(value, str) else [str(v) for v in value]
    names = [n for n in names if n]
    if names == ["lattice"]:
        return ALL_SEGMENTERS
    bad = [n for n in names if n not in ALL_SEGMENTERS]
    if bad or not names:
        raise ValueError(
            f"unknown segmentation {value!r}: use 'lattice' or any of {', '.join(ALL_SEGMENTERS)}"
        )
    return tuple(dict.fromkeys(names))



@dataclass(frozen=True)
class LatticeOptions:
    """What a LET pair graph is built with: the word ``segmenters`` of the lattice (names, in
    order), ``max_length`` tokens per pair ([CLS] and both [SEP] included), whether HowNet's
    ``senses`` and sememes are nodes, and whether the encoder reads characters or its own pieces
    (``encoder_tokens``; ``pieces`` needs the checkpoint's tokenizer, given to the builder)."""

    segmenters: tuple[str, ...] = ALL_SEGMENTERS
    max_length: int = LET_MAX_LENGTH
    senses: bool = True
    encoder_tokens: str = "chars"

    def __post_init__(self) -> None:
        object.__setattr__(self, "segmenters", parse_segmenters(self.segmenters))

    @classmethod
    def of(cls, section: Any, **given: Any) -> LatticeOptions:
        """The options of a ``data`` section (:class:`~graphmatch.tasks.let_keys.LETData`: its
        ``segmentation``, ``max_length``, ``senses`` and ``encoder_tokens``), ``given`` overriding it (e.g. the
        segmenters that are installed)."""
        values = {"segmenters": section.segmentation, "max_length": section.max_length, "senses": section.senses,
                  "encoder_tokens": section.encoder_tokens}
        return cls(**{**values, **given})



def old_lattice_keywords(where: str, options: LatticeOptions | None, old: dict[str, Any]) -> LatticeOptions:
    """The options of a lattice builder ``where`` called with the keywords it took before it took
    :class:`LatticeOptions` (``segmenters=``, ``max_length=``, ``senses=``), with one ``DeprecationWarning``
    (:func:`~graphmatch.utils.deprecated.old_keywords`); without them ``options`` (``None``: the defaults)."""
    found = options_given(where, LatticeOptions, options, old)
    if found is not None:
        return found
    return old_keywords(where, LatticeOptions(), old, stacklevel=5)  # the builder's caller


__all__ = ["ALL_SEGMENTERS", "LatticeOptions", "old_lattice_keywords", "parse_segmenters"]
