"""Pretrained checkpoints found and read, outside the ``nn`` layer: ``model.pretrained`` resolved once
(a folder, a packaged short name such as ``minilm`` or ``e5-small``, a HuggingFace hub id, a UER
checkpoint, or a run's stored encoder) into a :class:`Pretrained` record, whose
:meth:`~Pretrained.checkpoint` reads the weights with names normalised. Loading those weights into a
module, strictly, is :mod:`graphmatch.nn.pretrained`'s.

* :mod:`~graphmatch.checkpoints.record` — :func:`resolve_checkpoint`, :class:`Pretrained`, stored encoders;
* :mod:`~graphmatch.checkpoints.files` — a HuggingFace folder's config, weight files and tokenizer size;
* :mod:`~graphmatch.checkpoints.uer` — the official K-BERT code's (UER) files;
* :mod:`~graphmatch.checkpoints.hub` — hub ids, through the local cache.

Example::

    from graphmatch.checkpoints import resolve_checkpoint

    found = resolve_checkpoint("minilm")
    found.bert_config().hidden_size, len(found.checkpoint().state)
"""

from graphmatch.checkpoints.files import Checkpoint, read_json, tokenizer_size
from graphmatch.checkpoints.record import STORED_FILE, Pretrained, position_offset, resolve_checkpoint, stored_files
from graphmatch.checkpoints.uer import uer_files

__all__ = ["STORED_FILE", "Checkpoint", "Pretrained", "position_offset", "read_json", "resolve_checkpoint",
           "stored_files", "tokenizer_size", "uer_files"]
