"""LET's lattice options are made once, their defaults the builder's: the recipe keys, the task,
``inspect`` and ``show`` take them from :class:`LatticeOptions`."""

import inspect as pyinspect

import pytest

from graphmatch.graphs.defaults import LET_MAX_LENGTH
from graphmatch.graphs.let_core import ALL_SEGMENTERS, LatticePairCore
from graphmatch.graphs.let_options import LatticeOptions
from graphmatch.tasks.let_keys import LETData
from graphmatch.text import CharTokenizer


def test_the_defaults_are_the_builders_and_the_recipes():
    core = {n: p.default for n, p in pyinspect.signature(LatticePairCore.__init__).parameters.items()}
    options, data = LatticeOptions(), LETData()
    assert options.segmenters == ALL_SEGMENTERS
    assert options.max_length == LET_MAX_LENGTH == data.max_length == 128
    assert options.senses is data.senses is True
    assert LatticeOptions.of(data) == options  # segmentation: lattice is all three
    # the builder takes the lattice as one object: none of its settings is a keyword of its own
    assert core["options"] is None and not set(core) & {"segmenters", "max_length", "senses", "encoder_tokens"}


def test_a_section_gives_the_builders_options():
    options = LatticeOptions.of(LETData(segmentation="pkuseg,jieba,pkuseg", max_length=40, senses=False))
    assert (options.segmenters, options.max_length, options.senses) == (("pkuseg", "jieba"), 40, False)
    options = LatticeOptions.of(LETData(segmentation="jieba", max_length=40, senses=False))
    tokenizer = CharTokenizer({t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])})
    builder = LatticePairCore(tokenizer, None, options)
    assert builder.lattice_options is options
    assert (builder.segmenters, builder.max_length, builder.senses) == (("jieba",), 40, False)
    assert LatticeOptions.of(LETData(), segmenters=("jieba",)).segmenters == ("jieba",)
    with pytest.raises(ValueError, match="unknown segmentation"):
        LatticeOptions(segmenters="ltp")
    with pytest.raises(AttributeError):
        options.senses = True  # frozen
