"""Deprecated: ``graphmatch.data.let_options`` moved to :mod:`graphmatch.graphs.let_options`, beside its builder;
this path goes in the next release."""

from graphmatch.graphs.moved import moved

__getattr__, __all__ = moved(__name__, ("graphmatch.graphs.let_options",), globals())
