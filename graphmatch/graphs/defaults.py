"""The graph builders' defaults and choices that recipe keys and command lines name, each written
here once, in plain Python: the builders (:mod:`~graphmatch.graphs.kbert.core`,
:mod:`~graphmatch.graphs.let_core`, :mod:`~graphmatch.graphs.relation`), their settings objects
(:mod:`graphmatch.graphs.kbert.options`, :mod:`graphmatch.graphs.relation_options`) and the recipe keys,
declared without NumPy or torch (:mod:`graphmatch.tasks.keys`), all read them from here."""

from __future__ import annotations

#: tokens a K-BERT sentence tree keeps (K-BERT's ``seq_length``)
KBERT_MAX_LENGTH = 256
#: values K-Inject hangs on a matched word, the first ones in file order
KBERT_MAX_ENTITIES = 2
#: K-Query's longest match over word pieces, in words
KBERT_MAX_WORDS = 3
#: the segmenter of K-Query by words (``query="words"``) over characters
KBERT_SEGMENTER = "jieba"
#: tokens a LET pair keeps ([CLS] and both [SEP] included)
LET_MAX_LENGTH = 128
#: relative positions of a relation sentence are clipped to ±this
RELATION_MAX_DISTANCE = 50
#: tokens a relation sentence keeps ([CLS] and [SEP] included)
RELATION_MAX_LENGTH = 90
#: tokenisations of the relation BiLSTM models
TOKENIZATIONS = ("words", "chars", "jieba", "thulac", "pkuseg")
#: what relation positions are measured from
POSITION_ANCHORS = ("span", "last")
#: where a relation tree's branches go
INJECT = ("entities", "all")
