"""Deprecated: ``graphmatch.graphs.kbert_core`` moved into the package :mod:`graphmatch.graphs.kbert`
(records, folding, finders, layout, rules, core); this path goes in the next release."""

from graphmatch.utils.deprecated import reexport

__getattr__, __all__ = reexport(__name__, (
    "graphmatch.graphs.kbert.records",
    "graphmatch.graphs.kbert.folding",
    "graphmatch.graphs.kbert.finders",
    "graphmatch.graphs.kbert.layout",
    "graphmatch.graphs.kbert.rules",
    "graphmatch.graphs.kbert.core",
), globals())
