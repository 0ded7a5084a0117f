"""Deprecated path of :mod:`graphmatch.pretrained.e5_q4` (goes in the next release)."""

from graphmatch.utils.deprecated import moved

moved(__name__, "graphmatch.pretrained.e5_q4")
