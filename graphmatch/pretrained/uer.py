r"""UER checkpoints: the files of the official K-BERT code (``autoliuweijie/K-BERT``, built on UER).

Its users hold ``google_model.bin`` (a ``torch.save``'d state dict) with ``google_config.json``
and ``google_vocab.txt``, and the classifiers (taggers) that ``run_kbert_cls.py``
(``run_kbert_ner.py``) fine-tune and save. This module recognises those files by their tensor
names (:func:`uer_files`) and reads what they mean; :mod:`graphmatch.nn.uer` maps the names onto
:class:`~graphmatch.nn.mask_transformer.MaskTransformerEncoder` and holds UER's LayerNorm.

* :func:`normalise_uer`: a ``module.`` prefix (``nn.DataParallel``) dropped, and the segment
  table cut to our two rows. UER's ``embedding.segment_embedding`` has **3 rows**: 0 padding,
  1 sentence A, 2 sentence B (``run_kbert_cls.py`` feeds ``seg + 1`` for real tokens, 0 for
  padding; its NER script feeds 1 everywhere). Our segments are 0 (text a) and 1 (text b), as
  HuggingFace's, so **our row 0 ← UER row 1, our row 1 ← UER row 2**; UER's row 0 (zeros in a
  converted Google model) only ever reaches padding, which our encoder masks out, and is dropped.
* :func:`uer_config`: ``google_config.json`` (``emb_size``, ``hidden_size``, ``feedforward_size``,
  ``heads_num``, ``layers_num``, ``dropout``) in ``transformers.BertConfig`` field names, with
  ``layer_norm="uer"``, ``layer_norm_eps=1e-6`` and the exact (erf) GELU.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphmatch.pretrained.files import count_lines, load_file, names_shown, not_pretrained, read_json

if TYPE_CHECKING:
    from torch import Tensor

#: the official file names (``run_kbert_cls.py``'s defaults), looked for first in a folder
CONFIG_FILE, WEIGHT_FILE, VOCAB_FILE = "google_config.json", "google_model.bin", "google_vocab.txt"
#: the tensor that marks a state dict as UER's
MARKER = "embedding.word_embedding.weight"
#: rows of UER's segment table (0 padding, 1 sentence A, 2 sentence B)
SEGMENT_ROWS = 3
#: keys that only a UER config has (a HuggingFace ``config.json`` has none of them)
CONFIG_KEYS = ("emb_size", "feedforward_size", "heads_num", "layers_num")


def is_uer_state(names: Iterable[str]) -> bool:
    """Whether tensor names are UER's (``embedding.word_embedding.weight``, maybe ``module.``-prefixed)."""
    return any(n in (MARKER, "module." + MARKER) for n in names)


def is_uer_config(values: Mapping[str, Any]) -> bool:
    """Whether a config dict is UER's (``heads_num``, ``layers_num``, … rather than BERT's names)."""
    return any(k in values for k in CONFIG_KEYS)


def head_kind(names: Iterable[str]) -> str | None:
    """The fine-tuned K-BERT head a UER state dict holds: ``"classifier"`` (``output_layer_1``,
    ``output_layer_2``: ``run_kbert_cls.py``), ``"tagger"`` (``output_layer``: ``run_kbert_ner.py``)
    or ``None`` (a pretrained model)."""
    names = set(names)
    if "output_layer_2.weight" in names:
        return "classifier"
    return "tagger" if "output_layer.weight" in names else None


def normalise_uer(state: Mapping[str, Tensor], source: str) -> dict[str, Tensor]:
    """UER weights as :func:`graphmatch.nn.uer.uer_names` names them: a ``module.`` prefix on every name dropped,
    the 3-row segment table cut to rows 1, 2 (our segments 0, 1). A segment table of another
    size is a :class:`ValueError` naming ``source``."""
    if state and all(n.startswith("module.") for n in state):
        state = {n.removeprefix("module."): v for n, v in state.items()}
    out = dict(state)
    name = "embedding.segment_embedding.weight"
    if name in out:
        rows = out[name].shape[0]
        if rows != SEGMENT_ROWS:
            raise ValueError(f"UER checkpoint {source}: {name} has {rows} rows; UER's has {SEGMENT_ROWS} "
                             "(0 padding, 1 sentence A, 2 sentence B)")
        out[name] = out[name][1:]
    return out


def uer_config(values: Mapping[str, Any], vocab_size: int, max_positions: int = 512,
               source: str = "google_config.json") -> dict[str, Any]:
    """``google_config.json`` values → :class:`~graphmatch.nn.mask_transformer.MaskTransformerConfig`
    fields (``transformers.BertConfig`` names). UER's own defaults apply to a missing key
    (``hidden_size``/``emb_size`` 768, ``layers_num`` 12, ``dropout`` 0.1); ``heads_num`` and
    ``feedforward_size`` have none and must be given. ``vocab_size`` and ``max_positions`` are the
    rows of the word and position tables."""
    hidden, emb = values.get("hidden_size", 768), values.get("emb_size", 768)
    missing = [k for k in ("heads_num", "feedforward_size") if values.get(k) is None]
    if missing:
        raise ValueError(f"UER config {source} has no {' or '.join(missing)} (UER has no default for them)")
    if emb != hidden:
        raise ValueError(f"UER config {source}: emb_size {emb} differs from hidden_size {hidden}; "
                         "the BERT encoder needs them equal")
    dropout = float(values.get("dropout", 0.1))
    return dict(vocab_size=int(vocab_size), hidden_size=int(hidden),
                num_hidden_layers=int(values.get("layers_num", 12)), num_attention_heads=int(values["heads_num"]),
                intermediate_size=int(values["feedforward_size"]), hidden_act="gelu",
                hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout,
                max_position_embeddings=int(max_positions), type_vocab_size=SEGMENT_ROWS - 1,
                layer_norm="uer", layer_norm_eps=1e-6)


# ------------------------------------------------------------------------------ files
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
    (:func:`is_uer_state`): ``path`` itself, or in a folder without a
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
        if not is_uer_state(load_file(path, mmap=True)):
            raise not_pretrained(path, f"a weight file alone is read only as a UER (official K-BERT) state dict, "
                                          f"which has {MARKER}; give the folder of a HuggingFace checkpoint")
    elif path.is_dir():
        folder = path
        if (path / "config.json").is_file() and not is_uer_config(read_json(path / "config.json")):
            return None
        bins = sorted(path.glob("*.bin"))
        weights = _first_file(path, [WEIGHT_FILE]) or (bins[0] if len(bins) == 1 else None)
        if weights is None and len(bins) > 1 and (path / CONFIG_FILE).is_file():
            listed = ", ".join(b.name for b in bins)
            raise ValueError(f"UER checkpoint folder {path} holds several weight files ({listed}) and no "
                             f"{WEIGHT_FILE}: give the file")
        if weights is None and (path / CONFIG_FILE).is_file():
            raise ValueError(f"UER checkpoint folder {path} has {CONFIG_FILE} but no {WEIGHT_FILE} "
                             "(nor another *.bin)")
        if weights is None or not is_uer_state(load_file(weights, mmap=True)):
            return None
    else:
        return None
    config = _first_file(folder, [CONFIG_FILE])
    if config is None and (folder / "config.json").is_file() and is_uer_config(read_json(folder / "config.json")):
        config = folder / "config.json"
    if config is None:
        raise ValueError(f"UER checkpoint {weights}: no {CONFIG_FILE} beside it (the number of attention heads "
                         "is not in the weights); put the official code's config there")
    return UERFiles(weights, config, _first_file(folder, [VOCAB_FILE, "vocab.txt"]))


def checked_config(files: UERFiles, state: Mapping[str, Tensor]) -> dict[str, Any]:
    """The checked config of a UER checkpoint: its vocabulary must have as many entries as its
    word-embedding table has rows."""
    names = {n.removeprefix("module."): n for n in state}
    missing = [n for n in (MARKER, "embedding.position_embedding.weight") if n not in names]
    if missing:
        raise ValueError(f"pretrained checkpoint {files.weights} does not fit the model: missing "
                         f"{len(missing)} weight{'s' * (len(missing) != 1)}: {names_shown(missing)}")
    rows = int(state[names[MARKER]].shape[0])
    if files.vocab is not None:
        size = count_lines(files.vocab)
        if size != rows:
            raise ValueError(f"pretrained checkpoint {files.weights}: its vocabulary ({files.vocab.name}) has {size} "
                             f"entries but its weights have {rows} embedding rows ({MARKER}); they must agree")
    positions = int(state[names["embedding.position_embedding.weight"]].shape[0])
    return uer_config(read_json(files.config), rows, positions, source=str(files.config))
