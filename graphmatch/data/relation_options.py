"""Deprecated: ``graphmatch.data.relation_options`` moved to :mod:`graphmatch.graphs.relation_options`,
beside its builder;
this path goes in the next release."""

from graphmatch.utils.deprecated import reexport

__getattr__, __all__ = reexport(__name__, ("graphmatch.graphs.relation_options",), globals())
