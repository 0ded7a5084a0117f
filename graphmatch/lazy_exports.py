"""Deprecated path of :mod:`graphmatch.utils.lazy_exports` (goes in the next release)."""

from graphmatch.utils.deprecated import moved

moved(__name__, "graphmatch.utils.lazy_exports")
