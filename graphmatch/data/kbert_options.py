"""Deprecated: ``graphmatch.data.kbert_options`` moved to :mod:`graphmatch.graphs.kbert.options`, beside its builder;
this path goes in the next release."""

from graphmatch.utils.deprecated import reexport

__getattr__, __all__ = reexport(__name__, ("graphmatch.graphs.kbert.options",), globals())
