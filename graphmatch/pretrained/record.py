"""A pretrained encoder resolved once from ``model.pretrained`` (:func:`resolve_pretrained`) into a
:class:`Pretrained` record that the task passes down: a local HuggingFace folder, a UER checkpoint,
a packaged short name (:data:`~graphmatch.pretrained.packaged.SHORT_NAMES`), a hub id, or a run's stored
encoder (:meth:`Pretrained.store`: config and tokenizer files, no weights)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphmatch.io.atomic import write_atomically
from graphmatch.pretrained import uer
from graphmatch.pretrained.files import (
    PretrainedWeights,
    check_vocabulary,
    count_lines,
    load_file,
    normalise_names,
    read_config,
    read_json,
    tokenizer_size,
    weight_files,
)
from graphmatch.pretrained.hub import hub_snapshot, is_hub_id
from graphmatch.pretrained.packaged import SHORT_NAMES, packaged_pretrained
from graphmatch.utils.deprecated import renamed, renamed_method

#: tokenizer files kept with a trained model (``tokenizer.json`` only when there is no vocabulary file)
TOKENIZER_FILES = ("vocab.txt", uer.VOCAB_FILE, "tokenizer_config.json", "special_tokens_map.json",
                   "added_tokens.json")
#: the file that marks a stored encoder folder (:meth:`Pretrained.store`)
STORED_FILE = "pretrained.json"
#: checkpoints laid out as BERT whose position table starts at ``pad_token_id + 1`` (fairseq's convention)
ROBERTA_TYPES = ("roberta", "xlm-roberta", "camembert")
#: the config types :meth:`Pretrained.bert_config` reads
BERT_LAYOUT_TYPES = ("bert", *ROBERTA_TYPES)


def position_offset(config: Mapping[str, Any]) -> int:
    r"""The position-table row of a sequence's first token: 0 for BERT, ``pad_token_id + 1`` for
    RoBERTa and XLM-R (token :math:`i` reads row :math:`i + \text{pad} + 1`); a config that names it
    (``position_offset``, as ours write) is taken at its word."""
    if "position_offset" in config:
        return int(config["position_offset"])
    return int(config.get("pad_token_id", 1)) + 1 if config.get("model_type") in ROBERTA_TYPES else 0


@dataclass(frozen=True)
class Pretrained:
    """A pretrained encoder, resolved once from ``model.pretrained`` (:func:`resolve_pretrained`) and passed
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

    @property
    def position_offset(self) -> int:
        """The position-table row of the first token (:func:`position_offset`)."""
        return position_offset(self.config)

    def bert_config(self, **overrides: Any):
        """The ``transformers.BertConfig`` (``overrides`` replace fields) of a BERT, RoBERTa or XLM-R
        checkpoint (the same modules and names); its ``position_offset`` attribute is
        :attr:`position_offset`, which the encoders add to every position. A UER or other config is a
        :class:`ValueError`."""
        from transformers import BertConfig

        if self.format == "uer":
            raise ValueError(f"pretrained checkpoint {self.source} is a UER (official K-BERT) checkpoint: "
                             "transformers' BertModel cannot compute its LayerNorm; load it into the "
                             "mask-transformer encoder (K-BERT's 'ours' backend)")
        kind = self.config.get("model_type", "bert")
        if kind not in BERT_LAYOUT_TYPES:
            raise ValueError(f"pretrained checkpoint {self.source} is a {kind!r} model; this encoder loads "
                             f"checkpoints of model_type {', '.join(map(repr, BERT_LAYOUT_TYPES))}")
        values = {k: v for k, v in self.config.items() if k != "model_type"}
        return BertConfig.from_dict({**values, "position_offset": self.position_offset, **overrides})

    def read_weights(self) -> PretrainedWeights:
        """The weights (names normalised) with the config; a stored encoder has none (:class:`ValueError`)."""
        if self.stored:
            raise ValueError(f"{self.path} holds a trained model's encoder config and tokenizer, not pretrained "
                             "weights (they are in the run's checkpoint)")
        if self.format == "uer":
            state = uer.normalise_uer(load_file(self.weights[0]), str(self.weights[0]))
        else:
            state = {}
            for file in self.weights:
                state.update(load_file(file))
            state = normalise_names(state)
        source = str(self.weights[0]) if len(self.weights) == 1 else f"{self.path} ({len(self.weights)} shards)"
        return PretrainedWeights(self.path, dict(self.config), state, source, self.format, self.vocab)

    checkpoint = renamed_method("checkpoint", read_weights)

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
    size = tokenizer_size(folder) if vocab is None or vocab.name == "vocab.txt" else count_lines(vocab)
    if size is not None and config.get("vocab_size") not in (None, size):
        raise ValueError(f"stored encoder {folder}: its tokenizer has {size} entries but its config.json says "
                         f"vocab_size {config['vocab_size']} (the checkpoint's embedding rows); they must agree")
    return Pretrained(str(info.get("source", folder)), folder, str(info.get("format", "hf")),
                      config, vocab, (), _tokenizer_files(folder))


def resolve_pretrained(name_or_path: str | os.PathLike, key: str = "model.pretrained") -> Pretrained:
    """Resolve ``model.pretrained`` once: a local HuggingFace checkpoint folder, a UER checkpoint
    (folder or weight file), a stored encoder folder (:meth:`Pretrained.store`), a packaged short name
    (:data:`SHORT_NAMES`: ``minilm``, ``e5-small``) or a HuggingFace hub id (:func:`hub_snapshot`),
    config read once.

    A HuggingFace folder must hold ``config.json`` and weights, and its tokenizer must match its
    embedding table (:func:`~graphmatch.pretrained.files.check_vocabulary`); a UER checkpoint needs
    ``google_config.json`` beside the weights, and ``google_vocab.txt`` matching them. ``key`` names
    the recipe key in messages.

    Raises:
        FileNotFoundError: no such folder, a short name whose package is not installed (the message
            says what to install), or a hub id neither cached nor downloadable.
        ValueError: not a checkpoint, or tokenizer and weights disagree."""
    text = os.fspath(name_or_path)
    local = Path(text).expanduser()
    if local.is_dir() and (local / STORED_FILE).is_file():
        return _stored(local)
    if text in SHORT_NAMES:
        path = packaged_pretrained(text, key)
    elif not local.exists() and is_hub_id(text):
        path = hub_snapshot(text, key)
    elif local.exists():
        path = local
    else:
        raise FileNotFoundError(f"{key}: no checkpoint folder {local} (give a local HuggingFace checkpoint folder, a "
                                f"UER (official K-BERT) checkpoint, a HuggingFace hub id or one of the packaged "
                                f"names: {', '.join(SHORT_NAMES)})")
    if (files := uer.uer_files(path)) is not None:
        config = uer.checked_config(files, load_file(files.weights, mmap=True))
        return Pretrained(text, path, "uer", config, files.vocab, (files.weights,),
                          _tokenizer_files(files.weights.parent) if files.vocab else ())
    config = read_config(path)
    weights = tuple(weight_files(path))
    check_vocabulary(path, weights)
    vocab = path / "vocab.txt" if (path / "vocab.txt").is_file() else None
    return Pretrained(text, path, "hf", config, vocab, weights, _tokenizer_files(path))


#: names of the previous release, kept for one release with a warning
__getattr__ = renamed(__name__, {
    "resolve_checkpoint": "resolve_pretrained",
}, globals())
