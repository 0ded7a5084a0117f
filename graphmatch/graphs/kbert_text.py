"""Deprecated: ``graphmatch.graphs.kbert_text`` moved into the package :mod:`graphmatch.graphs.kbert`
(:mod:`.knowledge_text <graphmatch.graphs.kbert.knowledge_text>`); this path goes in the next release."""

from graphmatch.utils.deprecated import reexport

__getattr__, __all__ = reexport(__name__, (
    "graphmatch.graphs.kbert.knowledge_text",
), globals())
