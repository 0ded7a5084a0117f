"""Deprecated: ``graphmatch.data.relation_options`` moved to :mod:`graphmatch.graphs.relation_options`,
beside its builder;
this path goes in the next release."""

from graphmatch.graphs.moved import moved

__getattr__, __all__ = moved(__name__, ("graphmatch.graphs.relation_options",), globals())
