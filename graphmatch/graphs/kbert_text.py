"""Deprecated: ``graphmatch.graphs.kbert_text`` moved into the package :mod:`graphmatch.graphs.kbert`
(:mod:`.knowledge_text <graphmatch.graphs.kbert.knowledge_text>`); this path goes in the next release."""

from graphmatch.graphs.moved import moved

__getattr__, __all__ = moved(__name__, (
    "graphmatch.graphs.kbert.knowledge_text",
), globals())
