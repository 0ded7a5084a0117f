"""Reading a checkpoint folder: its ``config.json``, its weight files (``model.safetensors``, a sharded
``model.safetensors.index.json`` or ``pytorch_model.bin``), its tokenizer size, and the check that
tokenizer and embedding table agree. Weight names come out normalised (a ``bert.`` prefix dropped,
TF-era ``LayerNorm.gamma``/``beta`` renamed). torch is imported only when weights are read."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphmatch.utils.deprecated import renamed
from graphmatch.utils.read_once import read_once

if TYPE_CHECKING:
    from torch import Tensor

#: weight files, in the order they are looked for
WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin")
_LEGACY = ((".gamma", ".weight"), (".beta", ".bias"))  # TF-era LayerNorm names
_SHOWN = 6  # tensor names shown in one error line


@dataclass
class PretrainedWeights:
    """A checkpoint's weights with its config, as :meth:`graphmatch.pretrained.Pretrained.checkpoint` reads them.

    Attributes:
        path: the folder (a UER checkpoint may be a weight file).
        config: its ``config.json`` (a UER checkpoint's ``google_config.json`` in
            ``transformers.BertConfig`` names, with ``layer_norm="uer"``:
            :func:`graphmatch.pretrained.uer.uer_config`).
        state: its weights, names normalised (HF: no ``bert.`` prefix, ``LayerNorm.weight/bias``;
            UER: :func:`graphmatch.pretrained.uer.normalise_uer`).
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


def not_pretrained(path: Path, why: str) -> ValueError:
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
                raise not_pretrained(path, f"{name} names missing shard(s) {missing or '(none listed)'}")
            return [path / s for s in shards]
    raise not_pretrained(path, f"no {' or '.join(WEIGHT_FILES)}")


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
        raise not_pretrained(path, "no config.json")
    return read_json(path / "config.json")


def tokenizer_size(path: str | os.PathLike) -> int | None:
    """Entries of the folder's tokenizer: lines of ``vocab.txt``, else the vocabulary (plus added
    tokens) of ``tokenizer.json``; ``None`` when the folder has neither."""
    path = Path(path)
    if (path / "vocab.txt").is_file():
        with open(path / "vocab.txt", encoding="utf-8") as f:
            return sum(1 for _ in f)
    if (path / "tokenizer.json").is_file():
        return read_tokenizer_json(path / "tokenizer.json").size
    return None


@dataclass(frozen=True)
class TokenizerJson:
    """What is read of a ``tokenizer.json`` without its tokenizer: the pre-tokeniser's JSON, and
    the entries of the vocabulary plus added tokens."""

    pre_tokenizer: Any
    size: int


def read_tokenizer_json(path: str | os.PathLike) -> TokenizerJson:
    """:class:`TokenizerJson` of a file, parsed once per process for the same content (e5-small's
    file, 250,002 pieces, takes a quarter of a second to parse, and is asked for several times);
    an unreadable file or another JSON value is a :class:`ValueError` naming it."""
    path = Path(path)
    content = path.read_bytes()

    def read() -> TokenizerJson:
        try:
            spec = json.loads(content.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise ValueError(f"{path} is not a readable JSON file ({err})") from err
        if not isinstance(spec, dict):
            raise ValueError(f"{path} is not a JSON object")
        vocab = (spec.get("model") or {}).get("vocab") or {}
        ids = set(vocab.values()) if isinstance(vocab, dict) else set(range(len(vocab)))  # WordPiece | Unigram
        ids |= {t["id"] for t in spec.get("added_tokens") or [] if isinstance(t, dict) and "id" in t}
        return TokenizerJson(spec.get("pre_tokenizer"), len(ids))

    return read_once("tokenizer_json", content, read)


def _embedding_rows(files: Sequence[Path]) -> tuple[str, int] | None:
    """Name and rows of the word-embedding table, read from the file headers when possible."""
    for file in files:
        if file.suffix == ".safetensors":
            from safetensors import safe_open

            try:
                with safe_open(str(file), framework="pt") as f:
                    for name in f.keys():  # noqa: SIM118 - safe_open is not a mapping
                        if name.endswith("word_embeddings.weight"):
                            return name, int(f.get_slice(name).get_shape()[0])
            except Exception as err:  # a truncated or corrupt header: one line naming the file
                reason = (str(err).strip().splitlines() or [""])[0]
                raise ValueError(f"cannot read the weights {file}: {type(err).__name__}: {reason} "
                                 "(a truncated or damaged file?)") from err
        else:
            state = load_file(file, mmap=True)
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



def load_file(file: Path, mmap: bool = False) -> dict[str, Tensor]:
    """The state dict of one weight file (safetensors or ``torch.save``); a corrupt file or one that
    is not a dict of tensors is a :class:`ValueError` naming it."""
    import torch
    from torch import Tensor

    try:
        if file.suffix == ".safetensors":
            from safetensors.torch import load_file as read_safetensors

            return read_safetensors(str(file))
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


def normalise_names(state: Mapping[str, Tensor], prefixes: tuple[str, ...] = ("bert.", "roberta.")
                    ) -> dict[str, Tensor]:
    """PretrainedWeights names as ``BertModel`` names them: a model prefix dropped (``BertFor*``,
    ``XLMRobertaFor*`` checkpoints), TF-era ``LayerNorm.gamma`` / ``.beta`` → ``.weight`` / ``.bias``."""
    out = {}
    for name, value in state.items():
        for prefix in prefixes:
            name = name.removeprefix(prefix)
        if "LayerNorm" in name:
            for old, new in _LEGACY:
                if name.endswith(old):
                    name = name[: -len(old)] + new
        out[name] = value
    return out




def names_shown(items: Sequence[str]) -> str:
    """At most a few tensor names for one error line, and how many more there are."""
    shown = ", ".join(items[:_SHOWN])
    return shown + (f" and {len(items) - _SHOWN} more" if len(items) > _SHOWN else "")


def count_lines(path: Path) -> int:
    """Lines of a text file (a vocabulary's entries)."""
    with open(path, encoding="utf-8") as f:
        return sum(1 for _ in f)


#: names of the previous release, kept for one release with a warning
__getattr__ = renamed(__name__, {
    "Checkpoint": "PretrainedWeights",
    "not_a_checkpoint": "not_pretrained",
}, globals())
