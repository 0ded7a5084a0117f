"""Deprecated path of :mod:`graphmatch.utils.ragged_np` (goes in the next release)."""

from graphmatch.utils.deprecated import moved

moved(__name__, "graphmatch.utils.ragged_np")
