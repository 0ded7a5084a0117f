"""Deprecated: moved to :mod:`graphmatch.tasks.relation.bilstm` (this path works for one release)."""

import warnings

from graphmatch.tasks.relation.bilstm import *  # noqa: F403
from graphmatch.tasks.relation.bilstm import BiLSTMRelationTask  # noqa: F401

warnings.warn("graphmatch.tasks.relation_bilstm is deprecated; import graphmatch.tasks.relation.bilstm",
              DeprecationWarning, stacklevel=2)
