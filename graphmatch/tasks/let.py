"""LET short-text matching (LCQMC, BQ, any ``text_a<TAB>text_b<TAB>label`` file).

Recipe keys (``data`` / ``model``)::

    data:  dataset (lcqmc | bq | tsv), root (data root holding lcqmc/, hownet/, kbert/vocab/;
           null = $GRAPHMATCH_DATA), train / dev / test (pair files; required for bq and tsv,
           optional overrides for lcqmc), format (auto | tsv | csv), segmentation (lattice | jieba
           | thulac | pkuseg | a comma list), senses (build sense/sememe nodes), max_length (pair),
           limit / dev_limit / test_limit (first N pairs of each split; graphs are built only for
           them), cache_dir, vocab (a vocab.txt; null = the BERT's, else Google's Chinese vocab),
           sememe_vectors (word2vec text; null = hownet/sememe_vec.txt), progress, workers (processes
           building the graphs; null = the CPU cores). A relative train/dev/test path is looked up in
           the working folder, then under data.root and $GRAPHMATCH_DATA.
    model: encoder (transformer | bert), bert_path (a local HF BERT folder, or minilm = the packaged
           all-MiniLM-L6-v2 of graphmatch[english]; loaded strictly), encoder_hidden / encoder_layers /
           encoder_heads / encoder_ffn (own transformer), hidden, sagt_layers, sagt_heads, heads
           (sememe and character MD-GAT), perspectives, dropout, senses (use the senses; false = the
           "senses off" ablation on the same graphs), sememe_attention (attention among sememes
           before sense pooling; false = the ablation), sememe_scope (sense | sentence: what a
           sememe attends over; sentence = the released code), sagt_mlp (MLP before SaGT's word
           update, as the released code), update (gru | residual), objective (bce | softmax),
           cls (pooled | first: c_CLS from the encoder's pooler, as the released code, or the raw
           first state), pretrained_sememes (initialise sememe embeddings from the vectors)

Metrics: accuracy and positive-class F1 (dev accuracy selects the checkpoint).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor
from torch_geometric.data import Batch, Dataset, HeteroData

from graphmatch.data.let import PairMatchingDataset, lcqmc_file, lexicon_files
from graphmatch.datafiles import resolve_path
from graphmatch.graphs.let import LatticePairBuilder, parse_segmenters, sememe_vocabulary
from graphmatch.knowledge import load_lexicon, load_sememe_vectors
from graphmatch.models.let import (
    CLS_VECTORS,
    ENCODERS,
    OBJECTIVES,
    SEMEME_SCOPES,
    LETConfig,
    LETMatcher,
    match_loss,
    match_probability,
)
from graphmatch.nn.pretrained import resolve_pretrained
from graphmatch.nn.sagt import UPDATES
from graphmatch.tasks.base import Task, register
from graphmatch.text import CharTokenizer

DATASETS = ("lcqmc", "bq", "tsv")
SPLITS = ("train", "dev", "test")
_MODEL_KEYS = ("encoder", "bert_path", "encoder_hidden", "encoder_layers", "encoder_heads", "encoder_ffn",
               "hidden", "sagt_layers", "sagt_heads", "heads", "perspectives", "dropout", "update", "objective",
               "sememe_attention", "sememe_scope", "sagt_mlp", "cls")
#: model keys with a fixed set of values, checked when the task is made
_MODEL_CHOICES = {"encoder": ENCODERS, "update": UPDATES, "objective": OBJECTIVES, "sememe_scope": SEMEME_SCOPES,
                  "cls": CLS_VECTORS}


@register
class LETTask(Task):
    """Chinese short-text matching with LET over lattice pair graphs."""

    name = "let"
    defaults = {
        "data": {
            "dataset": "lcqmc",
            "root": None,
            "train": None,
            "dev": None,
            "test": None,
            "format": "auto",
            "segmentation": "lattice",
            "senses": True,
            "max_length": 128,
            "limit": None,
            "dev_limit": None,
            "test_limit": None,
            "cache_dir": None,
            "vocab": None,
            "sememe_vectors": None,
            "progress": True,
            "workers": None,
        },
        "model": {
            "encoder": "transformer",
            "bert_path": None,
            "encoder_hidden": 128,
            "encoder_layers": 2,
            "encoder_heads": 4,
            "encoder_ffn": 512,
            "hidden": 128,
            "sagt_layers": 2,
            "sagt_heads": 1,
            "heads": 4,
            "perspectives": 20,
            "dropout": 0.2,
            "senses": True,
            "sememe_attention": True,
            "sememe_scope": "sense",
            "sagt_mlp": True,
            "update": "gru",
            "objective": "bce",
            "cls": "pooled",
            "pretrained_sememes": True,
        },
    }
    metrics = ("accuracy", "f1")
    monitor = "accuracy"
    kinds = {
        "data": {**dict.fromkeys(("root", "train", "dev", "test", "cache_dir", "vocab", "sememe_vectors"), "string"),
                 **dict.fromkeys(("limit", "dev_limit", "test_limit", "workers"), "integer")},
        "model": {"bert_path": "string"},
    }

    def __init__(self, config: dict[str, Any]):
        super().__init__(config)
        d = self.data_cfg
        if d["dataset"] not in DATASETS:
            raise ValueError(f"data.dataset must be one of {', '.join(DATASETS)}, got {d['dataset']!r}")
        parse_segmenters(d["segmentation"])  # fail early on a bad name
        m = self.model_cfg
        for key, choices in _MODEL_CHOICES.items():
            if m[key] not in choices:
                raise ValueError(f"model.{key} must be one of {', '.join(choices)}, got {m[key]!r}")
        # a local checkpoint folder or a packaged name (minilm), checked before anything is built
        self.bert_dir = (resolve_pretrained(m["bert_path"], "model.bert_path")
                         if m["encoder"] == "bert" and m["bert_path"] is not None else None)
        self._sememes: list[str] | None = None
        self._tokenizer: CharTokenizer | None = None
        self._builder: LatticePairBuilder | None = None

    # ----------------------------------------------------------------- data
    def tokenizer(self) -> CharTokenizer:
        if self._tokenizer is None:
            vocab = self.data_cfg["vocab"]
            if vocab:
                self._tokenizer = CharTokenizer(vocab)
            elif self.bert_dir is not None:
                self._tokenizer = CharTokenizer.from_pretrained(self.bert_dir)
            else:
                self._tokenizer = CharTokenizer.default(self.data_cfg["root"])
        return self._tokenizer

    def sememe_names(self) -> list[str]:
        """The sememe vocabulary: pretrained vectors first, then the lexicon's other sememes."""
        if self._sememes is None:
            d = self.data_cfg
            vectors = load_sememe_vectors(d["sememe_vectors"], d["root"])
            self._sememes = sememe_vocabulary(load_lexicon(d["root"]), vectors)
        return self._sememes

    def builder(self, keep_text: bool = False) -> LatticePairBuilder:
        if self._builder is None or self._builder.keep_text != keep_text:
            d = self.data_cfg
            self._builder = LatticePairBuilder(
                self.tokenizer(),
                load_lexicon(d["root"]) if d["senses"] else None,
                segmenters=d["segmentation"],
                max_length=d["max_length"],
                senses=d["senses"],
                sememe_index={n: i for i, n in enumerate(self.sememe_names())},
                keep_text=keep_text,
            )
        return self._builder

    def source(self, split: str) -> Path | None:
        """The pair file of ``split``; ``None`` for a missing optional test split."""
        d = self.data_cfg
        if d[split]:
            return resolve_path(d[split], d["root"], f"data.{split}")
        if d["dataset"] == "lcqmc":
            return lcqmc_file(split, d["root"])
        if split == "test":
            return None
        raise ValueError(f"data.dataset={d['dataset']!r} needs data.{split} (a pair file); "
                         f"BQ's CSV files (sentence1,sentence2,label) are supplied by the user")

    def datasets(self) -> dict[str, Dataset]:
        d = self.data_cfg
        limits = {"train": d["limit"], "dev": d["dev_limit"], "test": d["test_limit"]}
        inputs = lexicon_files(d["root"]) if d["senses"] else None
        out: dict[str, Dataset] = {}
        for split in SPLITS:
            path = self.source(split)
            if path is not None:
                out[split] = PairMatchingDataset(path, self.builder(), root=d["root"], cache=d["cache_dir"],
                                                 inputs=inputs, limit=limits[split], fmt=d["format"],
                                                 progress=d["progress"], require_labels=split != "test",
                                                 workers=d["workers"])
        return out

    def label_names(self) -> list[str]:
        return ["0", "1"]

    def encode(self, text: str, text_b: str | None = None) -> HeteroData:
        """A sentence pair (both sides are required)."""
        if text_b is None:
            raise ValueError("LET matches a pair of sentences: give text_a and text_b")
        return self.builder(keep_text=True)(text, text_b)

    def get_extra_state(self) -> dict[str, Any]:
        return {"sememes": self.sememe_names()}

    def set_extra_state(self, state: dict[str, Any]) -> None:
        self._sememes = list(state["sememes"])

    # ---------------------------------------------------------------- model
    def config_of_model(self) -> LETConfig:
        m = self.model_cfg
        values = {k: m[k] for k in _MODEL_KEYS}
        if self.bert_dir is not None:
            values["bert_path"] = str(self.bert_dir)
        return LETConfig(
            **values,
            vocab_size=self.tokenizer().vocab_size,
            senses=bool(m["senses"] and self.data_cfg["senses"]),
            num_sememes=len(self.sememe_names()),
        )

    def build_model(self) -> torch.nn.Module:
        return LETMatcher(self.config_of_model())

    def encoder_parameters(self, model: torch.nn.Module) -> list[torch.nn.Parameter]:
        """The character encoder (trained with ``optim.encoder_lr``, e.g. BERT × 0.1)."""
        return list(model.encoder.parameters())

    def encoder_layers(self, model: torch.nn.Module) -> list[list[torch.nn.Parameter]]:
        """The character encoder's embeddings and layers, bottom to top (``optim.layer_decay``)."""
        return model.encoder.layer_groups()

    def load_pretrained(self, model: torch.nn.Module) -> None:
        """BERT weights from ``model.bert_path`` (strictly: a missing or unexpected weight is an
        error, see :mod:`graphmatch.nn.pretrained`) and the pretrained sememe vectors."""
        m, d = self.model_cfg, self.data_cfg
        if self.bert_dir is not None:
            model.encoder.load_hf(self.bert_dir)
            print(f"LET: character encoder loaded from {self.bert_dir}", file=sys.stderr)
        if model.config.senses and m["pretrained_sememes"]:
            vectors = load_sememe_vectors(d["sememe_vectors"], d["root"])
            if vectors.vectors.shape[1] != model.config.sememe_dim:
                raise ValueError(f"sememe vectors are {vectors.vectors.shape[1]}-d, the model expects "
                                 f"{model.config.sememe_dim}")
            table = np.zeros((len(self.sememe_names()), vectors.vectors.shape[1]), dtype=np.float32)
            for i, name in enumerate(self.sememe_names()):
                row = vectors.index.get(name)
                if row is not None:
                    table[i] = vectors.vectors[row]
            model.init_sememes(torch.from_numpy(table))

    def loss(self, out: Tensor, batch: Batch) -> Tensor:
        return match_loss(out, batch.y)

    def decode(self, out: Tensor, batch: Batch) -> list[dict[str, Any]]:
        prob = match_probability(out.detach().float())
        n = prob.numel()
        gold = batch.y.tolist() if "y" in batch else [None] * n
        lines = batch.line.tolist() if "line" in batch else [None] * n
        return [
            {"line": line, "pred": "1" if p > 0.5 else "0", "gold": None if g is None else str(g), "prob": float(p)}
            for line, p, g in zip(lines, prob.tolist(), gold, strict=True)
        ]
