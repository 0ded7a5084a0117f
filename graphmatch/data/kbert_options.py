"""Deprecated: ``graphmatch.data.kbert_options`` moved to :mod:`graphmatch.graphs.kbert.options`, beside its builder;
this path goes in the next release."""

from graphmatch.graphs.moved import moved

__getattr__, __all__ = moved(__name__, ("graphmatch.graphs.kbert.options",), globals())
