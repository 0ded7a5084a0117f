"""The LET lattice pair builder's settings as one frozen object, made once from a recipe's ``data``
section (or a command line's flags) and handed to the task, ``inspect`` and ``show`` alike; every
default is the builder's own (:mod:`graphmatch.graphs.defaults`, :data:`~graphmatch.graphs.let_core.ALL_SEGMENTERS`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graphmatch.graphs.defaults import LET_MAX_LENGTH
from graphmatch.graphs.let_core import ALL_SEGMENTERS, parse_segmenters


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

    def builder_arguments(self) -> dict[str, Any]:
        """The keyword arguments of a :class:`~graphmatch.graphs.let_core.LatticePairCore` (and
        :class:`~graphmatch.graphs.let.LatticePairBuilder`) these options give."""
        return {"segmenters": self.segmenters, "max_length": self.max_length, "senses": self.senses}


__all__ = ["LatticeOptions"]
