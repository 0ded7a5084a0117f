"""Graph builders, one module per paper (``kbert``, ``kbert_corpus``, ``let``, ``relation``),
each turning raw input into a :class:`~torch_geometric.data.HeteroData` graph.

Import from the submodules (``from graphmatch.graphs.kbert import SentenceTreeBuilder``): the
package itself imports nothing, so that a command needing one builder does not load the others."""
