"""LET's recipe sections (:class:`LETData`, :class:`LETModel`), importable without torch
(:mod:`graphmatch.tasks.keys`); the task is :class:`graphmatch.tasks.let.LETTask`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from graphmatch.graphs.defaults import LET_MAX_LENGTH
from graphmatch.models.choices import ClsVector, Encoder, Objective, SememeScope
from graphmatch.nn.choices import UPDATES
from graphmatch.tasks.keys import (
    DataSplit,
    SampleLimits,
    TaskData,
    TaskKeys,
    TaskModel,
    check_split,
    register_keys,
    split_key,
)
from graphmatch.tasks.recipes.keys import Renamed, key

PairDataset = Literal["lcqmc", "bq", "tsv"]
DATASETS: tuple[str, ...] = get_args(PairDataset)
_SIZE = "[1, inf)"


def _segmentation(value: str) -> str | None:
    from graphmatch.graphs.let_options import parse_segmenters  # no torch; only for a value given

    try:
        parse_segmenters(value)
    except ValueError:
        return "lattice, or any of jieba, thulac, pkuseg (a comma list)"
    return None


@dataclass(frozen=True)
class LETData(TaskData):
    """LET's data: the pair files, the lattice and the senses (data.root holds lcqmc/, hownet/, kbert/vocab/)."""

    dataset: PairDataset = key("lcqmc", "lcqmc (its files under data.root), bq or tsv "
                                                          "(pair files given as data.train/dev/test)")
    train: str | None = key(None, "training pair file (required for bq and tsv; overrides lcqmc's)")
    dev: str | None = key(None, "dev pair file (required for bq and tsv; overrides lcqmc's)")
    test: str | None = key(None, "test pair file (optional)")
    split: DataSplit | None = split_key()
    format: Literal["auto", "tsv", "csv"] = key("auto", "pair file format")
    segmentation: str = key("lattice", "word segmenters: lattice (jieba + thulac + pkuseg), one of them or a "
                                       "comma list", check=_segmentation)
    missing_segmenter: Literal["error", "skip"] = key("error", "a segmenter of data.segmentation that is not "
                                                               "installed: error, or skip it (the lattice is "
                                                               "made of the others)")
    senses: bool = key(True, "build sense and sememe nodes (HowNet)")
    max_length: int = key(LET_MAX_LENGTH, "tokens per pair, [CLS] and both [SEP] included (longest first cut)",
                          interval="[5, inf)")
    encoder_tokens: Literal["chars", "pieces"] = key(
        "chars", "what model.pretrained's encoder reads: one token per character, or its own subword pieces "
                 "(a character then takes the state of the piece it sits in)")
    limit: SampleLimits = key(SampleLimits(), "pairs used per split; a count reads only the first N pairs "
                                              "(graphs are built for them only)")
    vocab: str | None = key(None, "a vocab.txt; null = model.pretrained's, else Google's Chinese vocabulary")
    sememe_vectors: str | None = key(None, "sememe vectors (word2vec text); null = hownet/sememe_vec.txt")
    workers: int | None = key(None, "processes building the graphs; null = the CPU cores", interval=_SIZE)


@dataclass(frozen=True)
class LETModel(TaskModel):
    """LET's character encoder, SaGT and matching layers (model.pretrained: the encoder bert's, e.g. e5-small)."""

    encoder: Encoder = key("transformer", "character encoder: a small transformer trained from scratch, or bert "
                                          "(model.pretrained)")
    encoder_hidden: int = key(128, "own transformer: width", interval=_SIZE)
    encoder_layers: int = key(2, "own transformer: layers", interval=_SIZE)
    encoder_heads: int = key(4, "own transformer: attention heads", interval=_SIZE)
    encoder_ffn: int = key(512, "own transformer: feed-forward width", interval=_SIZE)
    hidden: int = key(128, "width of the graph layers", interval=_SIZE)
    sagt_layers: int = key(2, "SaGT layers", interval="[0, inf)")
    sagt_heads: int = key(1, "SaGT attention heads", interval=_SIZE)
    heads: int = key(4, "MD-GAT heads of the sememe and character attention", interval=_SIZE)
    perspectives: int = key(20, "multi-perspective cosine perspectives P", interval=_SIZE)
    dropout: float = key(0.2, "dropout", interval="[0, 1]")
    senses: bool = key(True, "use the senses; false = the senses-off ablation on the same graphs")
    sememe_attention: bool = key(True, "attention among sememes before sense pooling; false = the ablation")
    sememe_scope: SememeScope = key("sense", "what a sememe attends over; sentence = the released code")
    sagt_mlp: bool = key(True, "MLP before SaGT's word update (released code)")
    update: str = key("gru", "SaGT's word update", choices=UPDATES)
    objective: Objective = key("bce", "bce: sigmoid + binary cross-entropy (paper); softmax (released code)")
    cls: ClsVector = key("pooled", "c_CLS: the encoder's pooled output (released code), the raw first state, or "
                                   "mean: the mean of the pair's token states (e5-small: no pooler, trained so)")
    pretrained_sememes: bool = key(True, "initialise the sememe embeddings from the sememe vectors")
    freeze_word_embeddings: bool = key(False, "keep the encoder's word-embedding table as loaded (not trained)")
    unpadded: bool = key(True, "the character encoder's linear layers, LayerNorms and dropout skip the padding: "
                               "run on the real pieces only, scattered for the attention product")
    attention_fp32: bool = key(True, "under bf16 autocast the character encoder's attention product takes Q, K, "
                                     "V in fp32 (on the CPU torch's bf16 attention backward is slower than fp32's)")


@register_keys
class LETKeys(TaskKeys):
    """The sections of a ``task: let`` recipe."""

    name = "let"
    Data = LETData
    Model = LETModel
    renamed = (Renamed("model.bert_path", ("model.pretrained",)),
               Renamed("data.limit", ("data.limit.train",)),
               Renamed("data.dev_limit", ("data.limit.dev",)),
               Renamed("data.test_limit", ("data.limit.test",)),
               Renamed("data.progress", ("train.progress",)))

    @classmethod
    def check_sections(cls, data: LETData, model: LETModel) -> None:
        check_split(data.split)
        if data.split is not None and (data.train is None or data.dev or data.test):
            raise ValueError("data.split cuts dev and test out of data.train: give data.train, and data.dev and "
                             "data.test null (a recipe may set them)")
        if model.encoder == "transformer" and model.pretrained is not None:
            raise ValueError(f"model.pretrained={model.pretrained}: model.encoder=transformer is LET's own small "
                             "character transformer, trained from scratch, and loads no pretrained encoder; use "
                             "model.encoder=bert to load it, or leave model.pretrained out")
        if data.encoder_tokens == "pieces" and (model.encoder != "bert" or model.pretrained is None):
            raise ValueError("data.encoder_tokens=pieces: the pieces are a pretrained encoder's own; it needs "
                             "model.encoder=bert and model.pretrained (e.g. e5-small)")
