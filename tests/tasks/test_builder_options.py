"""The builders' defaults and choices restated for the torch-free recipe keys
(:mod:`graphmatch.tasks.builder_options`) are the builders' own."""

from graphmatch.graphs import kbert_core, let_core, relation, relation_kbert
from graphmatch.tasks import builder_options as opts


def test_the_restated_builder_options_are_the_builders():
    assert opts.KBERT_MAX_LENGTH == kbert_core.DEFAULT_MAX_LENGTH
    assert opts.LET_MAX_LENGTH == let_core.DEFAULT_MAX_LENGTH
    assert opts.RELATION_MAX_DISTANCE == relation.DEFAULT_MAX_DISTANCE
    assert opts.RELATION_MAX_LENGTH == relation.DEFAULT_MAX_LENGTH
    assert opts.TOKENIZATIONS == relation.TOKENIZATIONS
    assert opts.POSITION_ANCHORS == relation.POSITION_ANCHORS
    assert opts.INJECT == relation_kbert.INJECT
