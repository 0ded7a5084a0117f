"""PyG datasets with processed caches keyed by builder options, one module per paper
(``kbert``, ``let``, ``semeval``), file formats, and batches gathered from storage.

Import from the submodules (``from graphmatch.data.kbert import kbert_dataset``): the package
itself imports nothing, so that reading one file format does not load every dataset."""
