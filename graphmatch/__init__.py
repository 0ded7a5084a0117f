"""graphmatch: knowledge-enhanced Chinese NLP on PyTorch Geometric.

Every input becomes a :class:`torch_geometric.data.HeteroData` graph (node types ``token``,
``entity``, ``word``, ``sense``, ``sememe``); K-BERT, LET and entity-aware relation
classification are layers over those graphs, batched by PyG.
"""

__version__ = "0.1.0"

from graphmatch.utils.deprecated import keep_old_paths as _keep_old_paths  # noqa: E402
from graphmatch.utils.old_paths import OLD_PATHS as _OLD_PATHS  # noqa: E402

_keep_old_paths(_OLD_PATHS)
