r"""K-BERT sentence trees (`"K-BERT: Enabling Language Representation with Knowledge Graph"
<https://arxiv.org/abs/1909.07606>`_, Liu et al., AAAI 2020), one module per part:

========================  ==========================================================================
:mod:`.records`           node and edge types, :class:`Trees`, :class:`Coverage`, :class:`Part` and the
                          arrays each step of the core hands the next
:mod:`.folding`           :func:`fold` (NFKC, lowercase), :data:`STOP_WORDS`, memoised code-point tables
:mod:`.finders`           K-Query: one :class:`WordFinder` per way of finding words (:func:`word_finder`)
:mod:`.layout`            step 1: inputs written out and laid end to end
:mod:`.rules`             the cut, soft-position and visibility rules, written once: both builders call them
:mod:`.options`           :class:`TreeOptions`, the builder's settings as one object (builders and datasets take it)
:mod:`.core`              :class:`TreeCore`, the vectorised build of any number of inputs (steps 1-6)
:mod:`.one`               :class:`OneTree`, one input in plain Python (``predict``, ``show``, ``inspect``)
:mod:`.corpus`            :class:`TreeCorpusBuilder`, a whole corpus into ``InMemoryDataset`` storage
:mod:`.knowledge_text`    knowledge written as text after the input (``knowledge_as="text"``)
:mod:`.graph`             :class:`SentenceTreeBuilder` (a tree as a ``HeteroData``) and the batch-level
                          :func:`visibility_mask`, :func:`dense_inputs`, :func:`mask_matched_words`,
                          :func:`mask_groups` (entity masking, shared with the relation trees)
========================  ==========================================================================

The names below import on first use (``from graphmatch.graphs.kbert import SentenceTreeBuilder``):
the NumPy modules (``core``, ``rules``) load without torch, as ``graphmatch inspect`` needs.
"""

from __future__ import annotations

from graphmatch.utils.lazy_exports import lazy_exports

#: version of the sentence trees this package's builders write: bump it whenever they change
#: (tests/data/test_builder_formats.py fails until the checksum recorded there is updated)
FORMAT_VERSION = 1

_WHERE = {
    **dict.fromkeys(("ANCHOR_EDGE", "CLS", "EDGE_TYPES", "ENTITY_EDGE", "IGNORE_INDEX", "MIN_TOKEN_SHARE",
                     "NODE_TYPES", "QUERIES", "SEP", "SPECIAL_TAGS", "WORD_EDGE", "Coverage", "Part", "Trees"),
                    "records"),
    **dict.fromkeys(("STOP_WORDS", "fold"), "folding"),
    **dict.fromkeys(("FINDERS", "CharTrie", "CharWords", "ReferenceChars", "SentencePieceTrie", "WordFinder",
                     "WordPieceWords", "word_finder"), "finders"),
    **dict.fromkeys(("branch_position", "kept", "kept_length", "tree_size", "tree_visibility"), "rules"),
    "TreeCore": "core",
    "TreeOptions": "options",
    "OneTree": "one",
    **dict.fromkeys(("TreeCorpusBuilder", "collated", "collated_coverage", "concat_collated"), "corpus"),
    **dict.fromkeys(("KNOWLEDGE_AS", "text_trees"), "knowledge_text"),
    **dict.fromkeys(("SentenceTreeBuilder", "dense_inputs", "mask_groups", "mask_matched_words", "second_text",
                     "tree_graph", "visibility_mask", "visible_edge_index"), "graph"),
    "InputError": "corpus",
}

__getattr__, __dir__ = lazy_exports(__name__, globals(), _WHERE)

__all__ = ["FORMAT_VERSION", *sorted(_WHERE)]
