"""LET short-text matching (LCQMC, BQ, any ``text_a<TAB>text_b<TAB>label`` file).

Recipe keys: :class:`~graphmatch.tasks.let_keys.LETData` and :class:`~graphmatch.tasks.let_keys.LETModel`
(declared without torch, :mod:`graphmatch.tasks.keys`; every key, its default and allowed values:
``docs/recipes.md``). A relative ``data.train`` / ``dev`` / ``test`` path is looked up in the
working folder, then under ``data.root`` and ``$GRAPHMATCH_DATA``.

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

from graphmatch.data.file_split import split_line
from graphmatch.data.let import PairMatchingDataset, lcqmc_file, lexicon_files, read_pairs
from graphmatch.graphs.let import LatticePairBuilder, parse_segmenters, sememe_vocabulary
from graphmatch.graphs.let_options import LatticeOptions
from graphmatch.io.datafiles import resolve_path
from graphmatch.knowledge import load_lexicon, load_sememe_vectors
from graphmatch.models.let import LETConfig, LETMatcher, match_loss, match_probability
from graphmatch.pretrained import resolve_pretrained
from graphmatch.tasks.base import Task, register
from graphmatch.tasks.keys import split_of
from graphmatch.tasks.let_keys import DATASETS, LETData, LETKeys, LETModel  # noqa: F401 - re-exported
from graphmatch.text import CharTokenizer
from graphmatch.text.pretrained import char_tokenizer_of, pair_segments, piece_tokenizer_of
from graphmatch.text.segmenters import installed_segmenters, segmenter_version

SPLITS = ("train", "dev", "test")
#: model keys that are LETConfig fields of the same name
_MODEL_KEYS = ("encoder", "encoder_hidden", "encoder_layers", "encoder_heads", "encoder_ffn",
               "hidden", "sagt_layers", "sagt_heads", "heads", "perspectives", "dropout", "update", "objective",
               "sememe_attention", "sememe_scope", "sagt_mlp", "cls", "freeze_word_embeddings", "unpadded",
               "attention_fp32")


@register
class LETTask(LETKeys, Task):
    """Chinese short-text matching with LET over lattice pair graphs."""

    metrics = ("accuracy", "f1")
    monitor = "accuracy"

    def __init__(self, config: dict[str, Any]):
        super().__init__(config)
        m = self.model
        # a local checkpoint folder or a packaged name (minilm), checked before anything is built
        self.pretrained = resolve_pretrained(m.pretrained) if m.encoder == "bert" and m.pretrained is not None else None
        self._sememes: list[str] | None = None
        self._train: Dataset | None = None
        self._segmenters = self.segmenters()  # a missing segmenter fails before anything is built
        # data.encoder_tokens=pieces: the checkpoint's own subword tokenizer, checked before anything is built
        # (a checkpoint whose vocabulary is characters is a one-line error)
        self._pieces = (piece_tokenizer_of(self.pretrained.folder, "data.encoder_tokens")
                        if self.data.encoder_tokens == "pieces" else None)
        self._tokenizer: CharTokenizer | None = None
        self._builder: LatticePairBuilder | None = None

    # ----------------------------------------------------------------- data
    def tokenizer(self) -> CharTokenizer:
        if self._tokenizer is None:
            vocab = self.data.vocab
            if vocab:
                self._tokenizer = CharTokenizer(vocab)
            elif self.pretrained is not None:
                self._tokenizer = char_tokenizer_of(self.pretrained.folder)
            else:
                self._tokenizer = CharTokenizer.default(self.data.root)
        return self._tokenizer

    def sememe_names(self) -> list[str]:
        """The sememe vocabulary: pretrained vectors first, then the lexicon's other sememes."""
        if self._sememes is None:
            d = self.data
            vectors = load_sememe_vectors(d.sememe_vectors, d.root)
            self._sememes = sememe_vocabulary(load_lexicon(d.root), vectors)
        return self._sememes

    def builder(self, keep_text: bool = False) -> LatticePairBuilder:
        if self._builder is None or self._builder.keep_text != keep_text:
            options = LatticeOptions.of(self.data, segmenters=self._segmenters)
            self._builder = LatticePairBuilder(
                self.tokenizer(),
                load_lexicon(self.data.root) if options.senses else None,
                options,
                sememe_index={n: i for i, n in enumerate(self.sememe_names())},
                keep_text=keep_text,
                pieces=self._pieces,
            )
        return self._builder

    def segmenters(self) -> tuple[str, ...]:
        """The segmenters of ``data.segmentation`` that are installed; a missing one is an error
        unless ``data.missing_segmenter=skip`` (then it is left out with one warning)."""
        return installed_segmenters(parse_segmenters(self.data.segmentation), self.data.missing_segmenter,
                                    key="data.segmentation",
                                    skip=", or set data.missing_segmenter=skip to build the lattice without it")

    def environment(self) -> dict[str, Any]:
        return {"segmenters": {name: segmenter_version(name) for name in self._segmenters}}

    #: the files a user may give by path, each with the recipe key that names it
    USER_FILES = {"vocab": "data.vocab", "sememe_vectors": "data.sememe_vectors"}

    def input_files(self) -> dict[str, str]:
        """A ``data.vocab`` and ``data.sememe_vectors`` file, where given."""
        return {name: str(getattr(self.data, key.split(".")[1])) for name, key in self.USER_FILES.items()
                if getattr(self.data, key.split(".")[1])}

    def user_files(self) -> dict[str, str]:
        """Both of :meth:`input_files`, copied into the run: a loaded run reads its vocabulary there
        (the sememe vectors only start a fresh model, and are a few MB)."""
        return {name: self.USER_FILES[name] for name in self.input_files()}

    def source(self, split: str) -> Path | None:
        """The pair file of ``split``; ``None`` for a missing optional test split."""
        d = self.data
        if d.split is not None:  # every split is cut from the training file
            split = "train"
        if getattr(d, split):
            return resolve_path(getattr(d, split), d.root, f"data.{split}")
        if d.dataset == "lcqmc":
            return lcqmc_file(split, d.root)
        if split == "test":
            return None
        raise ValueError(f"data.dataset={d.dataset!r} needs data.{split} (a pair file); "
                         f"BQ's CSV files (sentence1,sentence2,label) are supplied by the user")

    def split(self, split: str) -> Dataset | None:
        """One split's pair graphs (built, or read from their cache); None for a missing optional test
        split. The training split is made once."""
        if split == "train" and self._train is not None:
            return self._train
        d = self.data
        path = self.source(split)
        if path is None:
            return None
        dataset = PairMatchingDataset(path, self.builder(), root=d.root, cache=d.cache_dir,
                                      inputs=lexicon_files(d.root) if d.senses else None,
                                      limit=self.data.limit.count(split), fmt=d.format,
                                      progress=self.recipe.train.progress,
                                      require_labels=split != "test" or d.split is not None, workers=d.workers,
                                      split_of=split_of(d.split), split=split)
        if split == "train":
            self._train = dataset
        return dataset

    def datasets(self) -> dict[str, Dataset]:
        """The splits there are files of, or the three ``data.split`` cuts of ``data.train`` (their sizes
        in one line)."""
        out = {split: ds for split in SPLITS if (ds := self.split(split)) is not None}
        if self.data.split is not None:
            path = out["train"].source
            print(split_line(path, len(read_pairs(path, self.data.format)), split_of(self.data.split)), file=sys.stderr)
        return out

    def training_labels(self) -> Tensor:
        return self.split("train")._data.y

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
        m = self.model
        if m.encoder == "bert" and self.pretrained is None:
            raise ValueError("model.encoder=bert needs model.pretrained (a local BERT folder, minilm or e5-small)")
        return LETConfig(
            **{k: getattr(m, k) for k in _MODEL_KEYS},
            bert_path=self.pretrained,
            vocab_size=self.tokenizer().vocab_size,
            senses=m.senses and self.data.senses,
            num_sememes=len(self.sememe_names()),
            # type 1 for the second sentence only where the checkpoint's pair template has it (not e5)
            segments=self.pretrained is None or pair_segments(self.pretrained.folder),
        )

    def build_model(self) -> torch.nn.Module:
        return LETMatcher(self.config_of_model())

    def encoder_parameters(self, model: torch.nn.Module) -> list[torch.nn.Parameter]:
        """The character encoder (trained with ``optim.encoder_lr``, e.g. BERT × 0.1)."""
        return list(model.encoder.parameters())

    def encoder_layers(self, model: torch.nn.Module) -> list[list[torch.nn.Parameter]]:
        """The character encoder's embeddings and layers, bottom to top (``optim.layer_decay``)."""
        return model.encoder.layer_groups()

    def init_weights(self, model: torch.nn.Module) -> None:
        """BERT weights from ``model.pretrained`` (strictly: a missing or unexpected weight is an
        error, see :mod:`graphmatch.nn.pretrained`) and the pretrained sememe vectors."""
        m, d = self.model, self.data
        if self.pretrained is not None:
            model.encoder.load_hf(self.pretrained.read_weights())
            print(f"LET: character encoder loaded from {self.pretrained.path}", file=sys.stderr)
        if model.config.senses and m.pretrained_sememes:
            vectors = load_sememe_vectors(d.sememe_vectors, d.root)
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
        """The match loss (:func:`~graphmatch.models.let.match_loss`), labels weighted as
        ``model.class_weight`` says."""
        return match_loss(out, batch.y, self.class_weights())

    def decode(self, out: Tensor, batch: Batch) -> list[dict[str, Any]]:
        prob = match_probability(out.detach().float())
        n = prob.numel()
        gold = batch.y.tolist() if "y" in batch else [None] * n
        lines = batch.line.tolist() if "line" in batch else [None] * n
        return [
            {"line": line, "pred": "1" if p > 0.5 else "0", "gold": None if g is None else str(g), "prob": float(p)}
            for line, p, g in zip(lines, prob.tolist(), gold, strict=True)
        ]
