"""Deprecated path of :mod:`graphmatch.io.input_files` (goes in the next release)."""

from graphmatch.utils.deprecated import moved

moved(__name__, "graphmatch.io.input_files")
