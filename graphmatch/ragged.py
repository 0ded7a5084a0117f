"""Deprecated path of :mod:`graphmatch.utils.ragged` (goes in the next release)."""

from graphmatch.utils.deprecated import moved

moved(__name__, "graphmatch.utils.ragged")
