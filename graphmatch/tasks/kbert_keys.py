"""K-BERT's recipe sections (:class:`KBertData`, :class:`KBertModel`), importable without torch
(:mod:`graphmatch.tasks.keys`); the task is :class:`graphmatch.tasks.kbert.KBertTask`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from graphmatch.graphs.defaults import KBERT_MAX_ENTITIES, KBERT_MAX_LENGTH
from graphmatch.models.choices import Head, PairEncoding, Pooling
from graphmatch.nn.choices import MODES
from graphmatch.tasks.keys import (
    BranchSelect,
    DataSplit,
    SampleLimits,
    TaskData,
    TaskKeys,
    TaskModel,
    check_split,
    knowledge_keys,
    register_keys,
    split_key,
)
from graphmatch.tasks.recipes.keys import Renamed, key

BACKENDS = ("ours", "hf")
_SIZE = "[1, inf)"
_DROPOUT = "[0, 1]"


@dataclass(frozen=True)
class KBertData(TaskData):
    """K-BERT's data: the dataset, the knowledge graph and how sentence trees are built."""

    dataset: str = key("chnsenticorp", "book_review, chnsenticorp, shopping, sst2, lcqmc, msra_ner, medical_ner, "
                                       "a folder of {train,dev,test}.tsv, or one TSV file with data.split")
    split: DataSplit | None = split_key()
    kg: str | None = key("hownet", "hownet, medical, wordnet or a .spo file; null = no knowledge")
    max_length: int = key(KBERT_MAX_LENGTH, "tokens kept after knowledge injection", interval=_SIZE)
    max_entities: int = key(KBERT_MAX_ENTITIES, "branches injected per word", interval="[0, inf)")
    vocab: str | None = key(None, "a vocab.txt; null = model.pretrained's (its vocab.txt, or a SentencePiece "
                                  "tokenizer.json), else Google's Chinese vocabulary")
    tokenization: Literal["auto", "chars", "wordpiece", "sentencepiece"] = key(
        "auto", "chars (Chinese characters; of a tokenizer.json: looked up among its pieces), wordpiece (an English "
                "checkpoint's word pieces; no NER), sentencepiece (a SentencePiece checkpoint's pieces, e.g. e5-small; "
                "no NER), or auto: for a tokenizer.json sentencepiece (chars for NER), word pieces when under half "
                "of the vocabulary's entries are CJK characters")
    limit: SampleLimits = key(SampleLimits(), "samples used per split; a count reads only the first N lines "
                                              "(graphs are built for them only)")
    mode: Literal["default", "reference"] = key("default", "the tree builder's mode (reference = the official "
                                                           "knowledge layer, quirks included)")
    positive_label: str | int | None = key(None, "the class whose F1 a pair dataset reports; null = 1")
    select: BranchSelect = key(BranchSelect(), "which candidate branches a word keeps")
    text_prefix: str | None = key(None, "written before each text as the checkpoint's pieces (never queried): an "
                                        "encoder's instruction such as e5's 'query: '; word pieces or SentencePiece")
    entity_mask: float = key(0.0, "training only: each matched word whose branch is kept has its trunk tokens "
                                  "replaced by the mask token with this probability, its branch left visible "
                                  "(needs data.kg)", interval="[0, 1]")
    knowledge_as: Literal["tree", "text"] = key("tree", "tree: K-BERT's branches on their words; text: the same "
                                                        "branches after the input as plain text, full visibility")


@dataclass(frozen=True)
class KBertModel(TaskModel):
    """K-BERT's encoder and head; model.pretrained may also be an official K-BERT/UER checkpoint."""

    backend: Literal["ours", "hf"] = key("ours", "the mask-transformer: ours, or hf (transformers.BertModel)")
    hidden_size: int = key(768, "encoder width (without model.pretrained)", interval=_SIZE)
    num_layers: int = key(12, "encoder layers (without model.pretrained)", interval=_SIZE)
    num_heads: int = key(12, "attention heads (without model.pretrained)", interval=_SIZE)
    intermediate_size: int = key(3072, "feed-forward width (without model.pretrained)", interval=_SIZE)
    max_position: int = key(512, "position table size (without model.pretrained)", interval="[1, 65536]")
    dropout: float = key(0.1, "hidden dropout (and the bert_pooler head's)", interval=_DROPOUT)
    attention_dropout: float = key(0.1, "attention-probability dropout", interval=_DROPOUT)
    pooling: Pooling = key("first", "sentence vector: [CLS], mean, max or last real token")
    head: Head = key("uer", "uer: K-BERT's fresh tanh layer, no dropout; bert_pooler: BERT's pooler + dropout")
    pair_encoding: PairEncoding = key("joint", "pairs: joint (one sequence, the paper's) or separate (each text "
                                               "sees only itself, pooled alone; the match logit from their "
                                               "cosine, its threshold fitted on training pairs; two labels)")
    tag_prior: bool = key(True, "NER: the tag layer's bias starts at the log frequency of each training tag")
    visible_matrix: bool = key(True, "K-BERT's visible matrix; false = full attention (ablation)")
    soft_positions: bool = key(True, "soft positions; false = hard positions 0..L-1 (ablation)")
    attention_mode: str = key("auto", "masked attention kernel (ours only)", choices=MODES)
    sparse_threshold: float = key(0.02, "visible fraction below which auto attention goes sparse",
                                  interval="[0, 1]")
    unpadded: bool = key(True, "the linear layers, LayerNorms and dropout skip the padding: run on the real "
                               "tokens only, scattered for the attention product (ours only)")
    attention_fp32: bool = key(True, "under bf16 autocast the attention product takes Q, K, V in fp32 (on the "
                                     "CPU torch's bf16 attention backward is slower than fp32's; ours only)")
    attn_implementation: Literal["sdpa", "eager"] = key("sdpa", "HF attention implementation (hf only)")
    layer_norm: Literal["auto", "bert", "uer"] = key("auto", "the encoder's LayerNorm: auto = uer for an official "
                                                             "K-BERT/UER checkpoint, else bert (ours only)")
    branch_embedding: bool = key(False, "a learned vector (zero at first) added to the embedding of every branch "
                                        "token (needs data.kg)")
    branch_bias: bool = key(False, "a learned scalar per layer and head (zero at first) added to the attention "
                                   "logits between trunk and branch tokens (needs data.kg)")
    freeze_word_embeddings: bool = key(False, "keep the encoder's word-embedding table as loaded (not trained: no "
                                             "gradient, no optimiser state; e5's is 96 M of its 117 M weights)")


@register_keys
class KBertKeys(TaskKeys):
    """The sections of a ``task: kbert`` recipe."""

    name = "kbert"
    Data = KBertData
    Model = KBertModel
    renamed = (Renamed("data.limit", ("data.limit.train",)),
               Renamed("data.limit_eval", ("data.limit.dev", "data.limit.test")))

    @classmethod
    def check_sections(cls, data: KBertData, model: KBertModel) -> None:
        check_split(data.split)
        if data.kg is None or str(data.kg).lower() in ("none", "null", ""):
            knowledge_keys(data_keys={"entity_mask": data.entity_mask > 0, "knowledge_as": data.knowledge_as == "text"},
                           model_keys={"branch_embedding": model.branch_embedding, "branch_bias": model.branch_bias})
        if data.select.by == "encoder" and model.pretrained is None:
            raise ValueError("data.select.by: encoder scores branches with model.pretrained's embeddings; give "
                             "model.pretrained (e.g. e5-small) or data.select.by: none")
        if data.select.by != "none" and data.mode == "reference":
            raise ValueError("data.select.by: a branch selection needs data.mode: default (the reference mode "
                             "injects K-BERT's first values)")
