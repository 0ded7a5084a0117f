"""Deprecated: ``graphmatch.graphs.kbert_one`` moved into the package :mod:`graphmatch.graphs.kbert`
(:mod:`.one <graphmatch.graphs.kbert.one>`); this path goes in the next release."""

from graphmatch.utils.deprecated import reexport

__getattr__, __all__ = reexport(__name__, (
    "graphmatch.graphs.kbert.one",
), globals())
