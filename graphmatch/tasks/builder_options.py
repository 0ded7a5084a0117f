"""The graph builders' defaults and choices that recipe keys name, restated here so that the keys
are declared without NumPy or torch (:mod:`graphmatch.tasks.keys`); the builders in
:mod:`graphmatch.graphs` keep their own, and ``tests/tasks/test_builder_options.py`` checks that
both say the same."""

from __future__ import annotations

#: ``graphs.kbert_core.DEFAULT_MAX_LENGTH``: tokens a sentence tree keeps
KBERT_MAX_LENGTH = 256
#: ``graphs.let_core.DEFAULT_MAX_LENGTH``: tokens a pair keeps ([CLS] and both [SEP] included)
LET_MAX_LENGTH = 128
#: ``graphs.relation.DEFAULT_MAX_DISTANCE`` and ``DEFAULT_MAX_LENGTH``
RELATION_MAX_DISTANCE = 50
RELATION_MAX_LENGTH = 90
#: ``graphs.relation.TOKENIZATIONS``: tokenisations of the BiLSTM models
TOKENIZATIONS = ("words", "chars", "jieba", "thulac", "pkuseg")
#: ``graphs.relation.POSITION_ANCHORS``: what relative positions are measured from
POSITION_ANCHORS = ("span", "last")
#: ``graphs.relation_kbert.INJECT``: where branches go
INJECT = ("entities", "all")
