"""graphmatch: knowledge-enhanced Chinese NLP on PyTorch Geometric.

Every input becomes a :class:`torch_geometric.data.HeteroData` graph (node types ``token``,
``entity``, ``word``, ``sense``, ``sememe``); K-BERT, LET and entity-aware relation
classification are layers over those graphs, batched by PyG.
"""

__version__ = "0.1.0"
