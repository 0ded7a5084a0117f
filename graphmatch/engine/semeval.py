"""Deprecated path of :mod:`graphmatch.metrics.semeval` (goes in the next release)."""

from graphmatch.utils.deprecated import moved

moved(__name__, "graphmatch.metrics.semeval")
