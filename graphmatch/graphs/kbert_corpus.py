"""Deprecated: ``graphmatch.graphs.kbert_corpus`` moved into the package :mod:`graphmatch.graphs.kbert`
(:mod:`.corpus <graphmatch.graphs.kbert.corpus>`); this path goes in the next release."""

from graphmatch.utils.deprecated import reexport

__getattr__, __all__ = reexport(__name__, (
    "graphmatch.graphs.kbert.corpus",
), globals())
