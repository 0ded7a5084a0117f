r"""Pretrained weights loaded strictly into a module: every weight of the module comes from the
checkpoint and every weight of the checkpoint goes into the module, except the checkpoint names the
module's class declares it may do without.

``transformers.BertModel.from_pretrained`` fills a weight the checkpoint lacks with random values
and only warns; a checkpoint that lost a tensor then trains as if nothing were wrong. Every
pretrained path of graphmatch (K-BERT's ``ours`` and ``hf`` backends, LET's character encoder,
the relation classifier's encoder) goes through this module instead. Finding and reading the
checkpoint is :mod:`graphmatch.pretrained`' (a :class:`~graphmatch.pretrained.Pretrained` record).

* :func:`load_state_strict` — weights into any module, optionally through a name map; a missing,
  unexpected or mis-shaped weight is a :class:`ValueError` naming it;
* :func:`load_bert` — a fresh ``transformers.BertModel`` with the weights of a resolved checkpoint;
* :func:`layer_groups` — an encoder's parameters bottom to top, for layer-wise learning rates.

A module declares its allowances as class attributes, per checkpoint format (as HuggingFace's
``_keys_to_ignore_on_load_missing``): :attr:`KEYS_MISSING_OK` (``fnmatch`` patterns of checkpoint
names the checkpoint may lack; those weights keep their fresh initialisation) and
:attr:`KEYS_UNUSED_OK` (names the module may leave unused). A module that declares none (such as
``transformers.BertModel``) gets BERT's (:data:`BERT_MISSING_OK`: a pooler the checkpoint lacks;
:data:`BERT_UNUSED_OK`: masked-LM / next-sentence heads and legacy position-id buffers), and a
module whose ``pooler`` is ``None`` leaves a checkpoint's pooler unused. Each allowance that applied
is one line of the :class:`LoadReport`, printed on stderr (the run log)::

    pretrained: loaded 101 tensors from /models/bert/model.safetensors
    pretrained: pooler.dense.* (2 tensors) not in the checkpoint; initialised fresh

Example::

    from graphmatch.pretrained import resolve_pretrained
    from graphmatch.nn.pretrained import load_bert

    bert, report = load_bert(resolve_pretrained("minilm"), attn_implementation="sdpa")
    report.log()
"""

from __future__ import annotations

import fnmatch
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO

from torch import Tensor, nn

from graphmatch.pretrained import Pretrained, PretrainedWeights, resolve_pretrained
from graphmatch.pretrained.files import names_shown
from graphmatch.utils.deprecated import renamed

#: checkpoint names a BERT encoder may find missing: the pooler keeps its fresh initialisation
BERT_MISSING_OK: tuple[str, ...] = ("pooler.dense.*",)
#: checkpoint names a BERT encoder may leave unused: pretraining heads and legacy buffers
BERT_UNUSED_OK: tuple[str, ...] = ("cls.predictions.*", "cls.seq_relationship.*", "lm_head.*",
                                   "embeddings.position_ids", "embeddings.token_type_ids")
#: the class attributes a module declares its allowances in (checkpoint format → patterns)
KEYS_MISSING_OK, KEYS_UNUSED_OK = "checkpoint_keys_missing_ok", "checkpoint_keys_unused_ok"


@dataclass
class LoadReport:
    """What a strict load did: the weights copied, and each allowance that applied.

    Attributes:
        source: the weight file (or a description of the state dict).
        loaded: number of tensors copied into the model.
        fresh: allowed pattern → checkpoint names the checkpoint lacked (left as initialised).
        ignored: allowed pattern → checkpoint names the model does not use.
    """

    source: str
    loaded: int = 0
    fresh: dict[str, list[str]] = field(default_factory=dict)
    ignored: dict[str, list[str]] = field(default_factory=dict)

    def lines(self) -> list[str]:
        """The run-log lines: what was loaded, then one line per allowance that applied."""
        out = [f"pretrained: loaded {self.loaded} tensors from {self.source}"]
        out += [f"pretrained: {p} ({len(n)} tensor{'s' * (len(n) != 1)}) not in the checkpoint; initialised fresh"
                for p, n in self.fresh.items()]
        out += [f"pretrained: {p} ({len(n)} tensor{'s' * (len(n) != 1)}) in the checkpoint but not used; ignored"
                for p, n in self.ignored.items()]
        return out

    def log(self, stream: TextIO | None = None) -> None:
        """Print :meth:`lines` on ``stream`` (default stderr)."""
        for line in self.lines():
            print(line, file=stream or sys.stderr)



def allowances(module: nn.Module, format: str = "hf") -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The checkpoint names ``module`` may lack and may leave unused in a checkpoint of ``format``
    (``"hf"`` or ``"uer"``): its class attributes :data:`KEYS_MISSING_OK` and :data:`KEYS_UNUSED_OK`,
    else BERT's; a module whose ``pooler`` is ``None`` may also leave ``pooler.*`` unused."""
    missing = getattr(type(module), KEYS_MISSING_OK, {}).get(format, BERT_MISSING_OK if format == "hf" else ())
    unused = getattr(type(module), KEYS_UNUSED_OK, {}).get(format, BERT_UNUSED_OK if format == "hf" else ())
    if getattr(module, "pooler", ()) is None:
        unused = (*unused, "pooler.*")
    return tuple(missing), tuple(unused)


def _matches(name: str, patterns: Iterable[str]) -> str | None:
    return next((p for p in patterns if fnmatch.fnmatchcase(name, p)), None)


def load_state_strict(
    module: nn.Module,
    state: Mapping[str, Tensor],
    *,
    source: str = "a state dict",
    name_map: Mapping[str, str] | None = None,
    format: str = "hf",
) -> LoadReport:
    """Copy ``state`` into ``module``; every difference outside the module's allowances
    (:func:`allowances` for ``format``) is an error.

    Args:
        module: the model (its parameters and persistent buffers are what is expected).
        state: checkpoint weights (names as :func:`graphmatch.pretrained.files.normalise_names` gives them).
        source: what ``state`` is, for messages (a file path).
        name_map: module name → checkpoint name, for a module whose names differ from the
            checkpoint's (names not in the map are the same in both).
        format: the checkpoint's format, ``"hf"`` or ``"uer"``: which of the module's allowances apply.

    Returns:
        The :class:`LoadReport`.

    Raises:
        ValueError: one line naming the missing, unexpected and mis-shaped weights.
    """
    name_map = dict(name_map or {})
    allow_missing, allow_unexpected = allowances(module, format)
    own = module.state_dict()
    expected = {name_map.get(k, k): k for k in own}  # checkpoint name -> module name
    report = LoadReport(source)
    missing, unexpected, shapes = [], [], []
    for ck, mine in expected.items():
        if ck in state:
            if tuple(state[ck].shape) != tuple(own[mine].shape):
                shapes.append(f"{ck} {list(state[ck].shape)} vs {list(own[mine].shape)} in the model")
        elif (p := _matches(ck, allow_missing)) is not None:
            report.fresh.setdefault(p, []).append(ck)
        else:
            missing.append(ck)
    for ck in state:
        if ck not in expected:
            if (p := _matches(ck, allow_unexpected)) is not None:
                report.ignored.setdefault(p, []).append(ck)
            else:
                unexpected.append(ck)
    problems = [f"{what} {len(names)} weight{'s' * (len(names) != 1)}: {names_shown(names)}"
                for what, names in (("missing", missing), ("unexpected", unexpected), ("mis-shaped", shapes)) if names]
    if problems:
        raise ValueError(f"pretrained checkpoint {source} does not fit the model: {'; '.join(problems)}")
    values = {mine: state[ck] for ck, mine in expected.items() if ck in state}
    result = module.load_state_dict(values, strict=False)
    assert not result.unexpected_keys, result.unexpected_keys
    report.loaded = len(values)
    return report


def layer_groups(embeddings: nn.Module, layers: Iterable[nn.Module], top: nn.Module | None = None,
                 ) -> list[list[nn.Parameter]]:
    """An encoder's parameters from the bottom up, for layer-wise learning rates: the
    embeddings (0), then each layer (1..L), with ``top`` (e.g. a pooler) in the last group."""
    groups = [list(embeddings.parameters()), *(list(layer.parameters()) for layer in layers)]
    if top is not None:
        groups[-1] = groups[-1] + list(top.parameters())
    return groups


def as_pretrained(source: str | os.PathLike | Pretrained | PretrainedWeights) -> Pretrained | PretrainedWeights:
    """A resolved or read checkpoint as given; a folder or file (a caller outside the task's recipe, such as a
    script or a test) resolved by :func:`graphmatch.pretrained.resolve_pretrained`."""
    return source if isinstance(source, (Pretrained, PretrainedWeights)) else resolve_pretrained(source)


def load_bert(found: str | os.PathLike | Pretrained, *, add_pooling_layer: bool = True, **config_overrides: Any,
              ) -> tuple[Any, LoadReport]:
    """A ``transformers.BertModel`` built from a resolved checkpoint's config (with
    ``config_overrides``, e.g. ``attn_implementation="sdpa"``) and loaded strictly.
    Returns the model and the :class:`LoadReport` (not printed: call ``report.log()``)."""
    from transformers import BertModel

    found = as_pretrained(found)
    bert = BertModel(found.bert_config(**config_overrides), add_pooling_layer=add_pooling_layer)
    ckpt = found.read_weights()
    return bert, load_state_strict(bert, ckpt.state, source=ckpt.source)


def load_weights(module: nn.Module, ckpt: PretrainedWeights, *, name_map: Mapping[str, str] | None = None,
                    log: bool = True) -> LoadReport:
    """The weights of a read checkpoint into an already built ``module``, strictly
    (:func:`load_state_strict` with the checkpoint's format); the report is printed on stderr when ``log``."""
    report = load_state_strict(module, ckpt.state, source=ckpt.source, name_map=name_map, format=ckpt.format)
    if log:
        report.log()
    return report


#: names of the previous release, kept for one release with a warning
__getattr__ = renamed(__name__, {
    "as_checkpoint": "as_pretrained",
    "load_checkpoint": "load_weights",
}, globals())
