"""Pretrained checkpoints found and read, outside the ``nn`` layer: ``model.pretrained`` resolved once
(a folder, a packaged short name such as ``minilm`` or ``e5-small``, a HuggingFace hub id, a UER
checkpoint, or a run's stored encoder) into a :class:`Pretrained` record, whose
:meth:`~Pretrained.checkpoint` reads the weights with names normalised. Loading those weights into a
module, strictly, is :mod:`graphmatch.nn.pretrained`'s.

* :mod:`~graphmatch.pretrained.record` — :func:`resolve_pretrained`, :class:`Pretrained`, stored encoders;
* :mod:`~graphmatch.pretrained.files` — a HuggingFace folder's config, weight files and tokenizer size;
* :mod:`~graphmatch.pretrained.uer` — the official K-BERT code's (UER) files;
* :mod:`~graphmatch.pretrained.hub` — hub ids, through the local cache.

Example::

    from graphmatch.pretrained import resolve_pretrained

    found = resolve_pretrained("minilm")
    found.bert_config().hidden_size, len(found.read_weights().state)
"""

from graphmatch.pretrained.files import PretrainedWeights, read_json, tokenizer_size
from graphmatch.pretrained.record import STORED_FILE, Pretrained, position_offset, resolve_pretrained, stored_files
from graphmatch.pretrained.uer import uer_files
from graphmatch.utils.deprecated import renamed

__all__ = ["STORED_FILE", "PretrainedWeights", "Pretrained", "position_offset", "read_json", "resolve_pretrained",
           "stored_files", "tokenizer_size", "uer_files"]


#: names of the previous release, kept for one release with a warning
__getattr__ = renamed(__name__, {
    "Checkpoint": "PretrainedWeights",
    "resolve_checkpoint": "resolve_pretrained",
}, globals())
