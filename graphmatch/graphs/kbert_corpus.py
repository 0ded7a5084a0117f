"""Deprecated: ``graphmatch.graphs.kbert_corpus`` moved into the package :mod:`graphmatch.graphs.kbert`
(:mod:`.corpus <graphmatch.graphs.kbert.corpus>`); this path goes in the next release."""

from graphmatch.graphs.moved import moved

__getattr__, __all__ = moved(__name__, (
    "graphmatch.graphs.kbert.corpus",
), globals())
