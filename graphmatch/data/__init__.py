"""PyG datasets with processed caches keyed by builder options."""

from graphmatch.data.kbert import (  # noqa: F401
    KBertClassificationDataset,
    KBertNERDataset,
    KBertPairDataset,
    kbert_dataset,
)
from graphmatch.data.let import PairMatchingDataset, read_pairs  # noqa: F401
from graphmatch.data.semeval import SemEval2010Task8, read_semeval_file  # noqa: F401
from graphmatch.data.vocab import Vocab, load_word_vectors  # noqa: F401
