"""The builders' options as a recipe names them (defaults, choices, the LET segmenter list),
importable without NumPy or torch: a recipe is checked against them before either is loaded
(:mod:`graphmatch.tasks.keys`). Each builder module re-exports the names it uses."""

from __future__ import annotations

from collections.abc import Sequence

# K-BERT (graphs.kbert_core)
#: tokens a sentence tree keeps by default (the recipes' ``data.max_length``)
KBERT_MAX_LENGTH = 256

# LET (graphs.let_core)
ALL_SEGMENTERS = ("jieba", "thulac", "pkuseg")
#: tokens a pair keeps by default ([CLS] and both [SEP] included); the recipes' ``data.max_length``
LET_MAX_LENGTH = 128


def parse_segmenters(value: str | Sequence[str]) -> tuple[str, ...]:
    """``"lattice"`` (all three), one name, a comma-separated string or a list → segmenter names."""
    names = [v.strip() for v in value.split(",")] if isinstance(value, str) else [str(v) for v in value]
    names = [n for n in names if n]
    if names == ["lattice"]:
        return ALL_SEGMENTERS
    bad = [n for n in names if n not in ALL_SEGMENTERS]
    if bad or not names:
        raise ValueError(
            f"unknown segmentation {value!r}: use 'lattice' or any of {', '.join(ALL_SEGMENTERS)}"
        )
    return tuple(dict.fromkeys(names))


# relation sentences (graphs.relation, relation_kbert)
RELATION_MAX_DISTANCE = 50
RELATION_MAX_LENGTH = 90
#: tokenisations of the BiLSTM models (:func:`graphmatch.graphs.relation.splitter`); ``pieces`` is a
#: pretrained tokenizer's
TOKENIZATIONS = ("words", "chars", "jieba", "thulac", "pkuseg")
#: what relative positions are measured from: the entity's span, or its last token
POSITION_ANCHORS = ("span", "last")
#: where branches go: the entities' head words only, or every matched word
INJECT = ("entities", "all")
