"""Models built for a state dict: no initial weights drawn.

A restored run (``graphmatch predict``, ``evaluate``, ``probe``) builds its model and then loads every
parameter from the checkpoint, strictly, so the initial weights its constructors draw are thrown
away; for e5-small's 250,006 × 384 word-embedding table, drawn twice by ``transformers.BertModel``
(by ``nn.Embedding`` and by transformers' ``_init_weights``), that is most of a second.

Inside :func:`weights_loaded_later`, torch's ``nn.init`` functions return their tensor untouched
and :func:`bert_model` skips transformers' initialisation: the parameters keep whatever memory held
until the state dict is loaded, and the random generator does not move. Buffers made without
``nn.init`` (``position_ids``, say) are made as usual.

Only for a model whose every parameter is loaded afterwards. Training draws its initial weights:
later draws (dropout, a head built after the encoder) depend on them.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import Any

import torch

#: the ``torch.nn.init`` functions that fill a tensor in place
INIT_FUNCTIONS = ("uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_", "eye_", "dirac_",
                  "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "orthogonal_",
                  "sparse_")
_LATER = contextvars.ContextVar("weights_loaded_later", default=False)


def _untouched(tensor: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
    return tensor


@contextlib.contextmanager
def _replaced(owner: Any, names: tuple[str, ...], value: Any) -> Iterator[None]:
    saved = {name: owner.__dict__[name] for name in names if name in owner.__dict__}
    try:
        for name in saved:
            setattr(owner, name, value)
        yield
    finally:
        for name, original in saved.items():
            setattr(owner, name, original)


@contextlib.contextmanager
def weights_loaded_later() -> Iterator[None]:
    """Modules built inside draw no initial weights (module docstring). The ``torch.nn.init``
    functions are replaced for the whole process while it lasts: build, then leave."""
    token = _LATER.set(True)
    try:
        with _replaced(torch.nn.init, INIT_FUNCTIONS, _untouched):
            yield
    finally:
        _LATER.reset(token)


def bert_model(config: Any, add_pooling_layer: bool) -> torch.nn.Module:
    """``transformers.BertModel(config)``; inside :func:`weights_loaded_later`, without transformers'
    ``_init_weights``, which draws from its own copy of torch's init functions."""
    from transformers import BertModel

    if not _LATER.get():
        return BertModel(config, add_pooling_layer=add_pooling_layer)
    from transformers.models.bert.modeling_bert import BertPreTrainedModel

    with _replaced(BertPreTrainedModel, ("_init_weights",), lambda self, module: None):
        return BertModel(config, add_pooling_layer=add_pooling_layer)


__all__ = ["bert_model", "weights_loaded_later"]
