"""PyG datasets on one cached base (``cached``: processed caches keyed by the builder's options
and format version and the inputs' sha256), one module per paper (``kbert``, ``let``,
``relation``/``semeval``), file formats, and batches gathered from storage.

Import from the submodules (``from graphmatch.data.kbert import kbert_dataset``): the package
itself imports nothing, so that reading one file format does not load every dataset."""
