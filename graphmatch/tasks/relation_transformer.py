"""Deprecated: moved to :mod:`graphmatch.tasks.relation.transformer` (this path works for one release)."""

import warnings

from graphmatch.tasks.relation.transformer import *  # noqa: F403
from graphmatch.tasks.relation.transformer import TransformerRelationTask, grown_embeddings  # noqa: F401

warnings.warn("graphmatch.tasks.relation_transformer is deprecated; import graphmatch.tasks.relation.transformer",
              DeprecationWarning, stacklevel=2)
