"""Graph builders, one module per paper (``kbert``, ``let``, ``relation``), each turning raw input
into a :class:`~torch_geometric.data.HeteroData` graph; K-BERT's trees are built by one vectorised
core (``kbert.core``) for one input or a whole corpus (``kbert.corpus``), LET's pair graphs by
``let_core``. Both cores are NumPy only: ``graphmatch inspect`` uses them without importing torch.

Import from the submodules (``from graphmatch.graphs.kbert import SentenceTreeBuilder``): the
package itself imports nothing, so that a command needing one builder does not load the others."""
