"""Deprecated: ``graphmatch.data.let_options`` moved to :mod:`graphmatch.graphs.let_options`, beside its builder;
this path goes in the next release."""

from graphmatch.utils.deprecated import reexport

__getattr__, __all__ = reexport(__name__, ("graphmatch.graphs.let_options",), globals())
