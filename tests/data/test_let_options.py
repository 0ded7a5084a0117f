"""LET's lattice options are made once, their defaults the builder's: the recipe keys, the task,
``inspect`` and ``show`` take them from :class:`LatticeOptions`."""

import inspect as pyinspect

import pytest

from graphmatch.graphs.defaults import LET_MAX_LENGTH
from graphmatch.graphs.let_core import ALL_SEGMENTERS, LatticePairCore
from graphmatch.graphs.let_options import LatticeOptions
from graphmatch.tasks.let_keys import LETData


def test_the_defaults_are_the_builders_and_the_recipes():
    core = {n: p.default for n, p in pyinspect.signature(LatticePairCore.__init__).parameters.items()}
    options, data = LatticeOptions(), LETData()
    assert options.segmenters == ALL_SEGMENTERS == core["segmenters"]
    assert options.max_length == LET_MAX_LENGTH == core["max_length"] == data.max_length == 128
    assert options.senses is core["senses"] is data.senses is True
    assert LatticeOptions.of(data) == options  # segmentation: lattice is all three


def test_a_section_gives_the_builder_arguments():
    options = LatticeOptions.of(LETData(segmentation="pkuseg,jieba,pkuseg", max_length=40, senses=False))
    assert options.builder_arguments() == {"segmenters": ("pkuseg", "jieba"), "max_length": 40, "senses": False}
    assert LatticeOptions.of(LETData(), segmenters=("jieba",)).segmenters == ("jieba",)
    with pytest.raises(ValueError, match="unknown segmentation"):
        LatticeOptions(segmenters="ltp")
    with pytest.raises(AttributeError):
        options.senses = True  # frozen
