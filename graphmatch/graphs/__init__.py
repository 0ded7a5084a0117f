"""Graph builders: one module per paper, each turning raw input into a HeteroData graph."""

from graphmatch.graphs.kbert import SentenceTreeBuilder, dense_inputs, visibility_mask, visible_edge_index  # noqa: F401
from graphmatch.graphs.kbert_corpus import TreeCorpusBuilder  # noqa: F401
from graphmatch.graphs.let import LatticePairBuilder, inspect_rows, load_lexicon, sememe_vocabulary  # noqa: F401
from graphmatch.graphs.relation import RelationGraphBuilder, RelationSentence, parse_relation  # noqa: F401
