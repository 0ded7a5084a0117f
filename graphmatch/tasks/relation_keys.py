"""The relation task's recipe sections (:class:`RelationData`; :class:`RelationModel`, the keys every
relation model has, and one model section per variant, which ``model.name`` picks: :class:`BiLSTMModel`,
:class:`TransformerModel`) and the rules between their keys, importable without torch
(:mod:`graphmatch.tasks.keys`); the task is :class:`graphmatch.tasks.relation.RelationTask`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

from graphmatch.graphs.defaults import (
    INJECT,
    POSITION_ANCHORS,
    RELATION_MAX_DISTANCE,
    RELATION_MAX_LENGTH,
    TOKENIZATIONS,
)
from graphmatch.models.choices import ENTITY_STATES, Init, RnnDropoutOn
from graphmatch.tasks.keys import (
    BranchSelect,
    CommonModel,
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
from graphmatch.tasks.recipes.keys import key

ModelName = Literal["att_blstm", "entity_attention", "transformer_entity_start", "transformer_entity_attention"]
MODELS: tuple[str, ...] = get_args(ModelName)
_SIZE = "[1, inf)"
_DROPOUT = "[0, 1]"


def _max_length(value: Any) -> str | None:
    ok = value == "auto" or (isinstance(value, int) and not isinstance(value, bool) and value >= 2)
    return None if ok else "a count >= 2, or auto"


@dataclass(frozen=True)
class RelationData(TaskData):
    """Relation data: the files, the tokenization and the sentence graphs (data.root holds semeval2010_task8/)."""

    train_file: str | None = key(None, "training relation file; null = SemEval's TRAIN_FILE.TXT and "
                                       "TEST_FILE_FULL.TXT")
    dev_file: str | None = key(None, "dev file; null = data.dev_size sentences held out of train")
    test_file: str | None = key(None, "test file")
    split: DataSplit | None = split_key()
    format: Literal["auto", "semeval", "tsv"] = key("auto", "relation file format")
    tokenization: str | None = key(None, "null = words for the BiLSTM models, the pretrained tokenizer's pieces "
                                         "for the transformers", choices=(*TOKENIZATIONS, "pieces"))
    negative_labels: list[str] | None = key(None, "the no-relation labels left out of relation_f1; null = the "
                                                  "default list")
    limit: SampleLimits = key(SampleLimits(), "samples used per split; a count builds graphs for the first N only "
                                              "(a fraction: for all, then cut)")
    max_distance: int = key(RELATION_MAX_DISTANCE, "relative positions are clipped to ±max_distance", interval=_SIZE)
    max_length: int | str = key(RELATION_MAX_LENGTH, "tokens kept per sentence ([CLS] and [SEP] included), a window "
                                                     "around the entities; auto = the longest training sentence",
                                check=_max_length, allowed="a count >= 2, or auto")
    on_bad_line: Literal["error", "skip"] = key("error", "a line the model cannot represent (entities further "
                                                         "apart than max_length, no token) stops the run, or is "
                                                         "skipped with one warning")
    dev_size: int = key(800, "dev sentences held out of train when there is no dev_file", interval="[0, inf)")
    split_seed: int = key(1, "seed of that hold-out")
    min_freq: int = key(1, "vocabulary: words seen at least this often in train", interval=_SIZE)
    markers: bool = key(True, "keep <e1> </e1> <e2> </e2> as tokens")
    position_anchor: str = key("span", "relative positions to the entity span or to its last token",
                               choices=POSITION_ANCHORS)
    kg: str | None = key(None, "knowledge graph whose values hang on the sentence as K-BERT branches (transformers): "
                               "wordnet, another built-in name or a .spo file; null = no knowledge")
    inject: str = key("entities", "with data.kg: branches on the two entities' head words, or on every matched word",
                      choices=INJECT)
    max_entities: int = key(2, "with data.kg: branches (values) per matched word", interval="[0, inf)")
    predicate: bool = key(True, "with data.kg: a branch is predicate and object (type group), or the object alone")
    select: BranchSelect = key(BranchSelect(), "with data.kg: which candidate branches a matched word keeps")
    entity_mask: float = key(0.0, "with data.kg, training only: each entity whose head word kept a branch has its "
                                  "pieces replaced by the mask token with this probability (e1, e2 apart), its "
                                  "branch and markers left", interval="[0, 1]")


@dataclass(frozen=True)
class RelationModel(CommonModel):
    """Relation models, the keys of every variant: `model.name` picks one, whose own keys follow in its table."""

    name: ModelName = key("att_blstm", "the model")
    dropout: float = key(0.5, "dropout before the classifier", interval=_DROPOUT)
    position_dim: int = key(50, "relative-position embedding size (the entity-aware attention)", interval=_SIZE)
    latent_types: int = key(3, "latent entity types K (the entity-aware attention)", interval=_SIZE)
    attention_size: int = key(50, "entity-aware attention size", interval=_SIZE)
    l2: float = key(1e-5, "λ of the L2 term λ·½Σ‖θ‖² added to the loss", interval="[0, inf)")

    def check_with(self, data: RelationData) -> None:
        """Raise a one-line ValueError for what this variant cannot do with ``data`` (each variant's rules)."""


@dataclass(frozen=True)
class BiLSTMModel(RelationModel):
    """A BiLSTM (Att-BLSTM, or entity-aware) over word (or character) embeddings."""

    name: Literal["att_blstm", "entity_attention"] = key("att_blstm", "the model: Att-BLSTM, or the entity-aware "
                                                                      "BiLSTM")
    embedding_dim: int = key(100, "word embedding size", interval=_SIZE)
    hidden_size: int = key(100, "BiLSTM hidden size per direction", interval=_SIZE)
    heads: int = key(4, "self-attention heads (entity_attention)", interval=_SIZE)
    emb_dropout: float = key(0.3, "dropout on the embeddings", interval=_DROPOUT)
    rnn_dropout: float = key(0.3, "dropout of the BiLSTM", interval=_DROPOUT)
    rnn_dropout_on: RnnDropoutOn = key("output", "the BiLSTM dropout on its outputs, or on each direction's "
                                                 "inputs (official code)")
    self_attention_relu: bool = key(False, "ReLU on the self-attention's output projection (official code)")
    entity_state: str = key("mean", "an entity is the mean of its tokens' states, or its last token's",
                            choices=ENTITY_STATES)
    init: Init = key("pytorch", "PyTorch's initialisation, or the official code's")
    l2_embeddings: bool = key(False, "the L2 term covers the embedding tables too (official code)")
    word_vectors: str | None = key(None, "a GloVe / word2vec text file; null = random initialisation")

    def check_with(self, data: RelationData) -> None:
        if data.kg is None:
            knowledge_keys(data_keys={"entity_mask": data.entity_mask > 0})
        else:
            raise ValueError(f"data.kg needs a transformer model (word pieces), not model.name={self.name}")
        _tokenization(data, TOKENIZATIONS, self.name)


@dataclass(frozen=True)
class TransformerModel(RelationModel, TaskModel):
    """A pretrained transformer (`model.pretrained`) over word pieces, an entity-start or attention head."""

    name: Literal["transformer_entity_start", "transformer_entity_attention"] = key(
        "transformer_entity_start", "the model: the entity-start head, or the entity-aware attention head")
    pack: bool = key(True, "two sentences per encoder row")
    head_hidden: int | None = key(None, "projection size of the entity-start head (R-BERT); null = none",
                                  interval=_SIZE)
    branch_embedding: bool = key(False, "with data.kg: a learned vector (zero at first) added to the embedding of "
                                        "every branch token")
    branch_bias: bool = key(False, "with data.kg: a learned scalar per layer and head (zero at first) added to the "
                                   "attention logits between trunk and branch tokens")

    def check_with(self, data: RelationData) -> None:
        if not self.pretrained:
            raise ValueError(f"model.name={self.name} needs model.pretrained (a local checkpoint folder, or minilm)")
        if data.kg is None:
            knowledge_keys(data_keys={"entity_mask": data.entity_mask > 0},
                           model_keys={"branch_embedding": self.branch_embedding, "branch_bias": self.branch_bias})
        _tokenization(data, ("pieces",), self.name)


def _tokenization(data: RelationData, valid: tuple[str, ...], name: str) -> None:
    if data.tokenization is not None and data.tokenization not in valid:
        raise ValueError(f"data.tokenization must be one of {', '.join(valid)} (or null) for model.name={name}, "
                         f"got {data.tokenization!r}")


@register_keys
class RelationKeys(TaskKeys):
    """The sections of a ``task: relation`` recipe."""

    name = "relation"
    Data = RelationData
    Model = RelationModel
    variants = (BiLSTMModel, TransformerModel)

    @classmethod
    def check_sections(cls, data: RelationData, model: RelationModel) -> None:
        check_split(data.split)
        if data.split is not None and (data.train_file is None or data.dev_file or data.test_file):
            raise ValueError("data.split cuts dev and test out of data.train_file: give data.train_file, and "
                             "data.dev_file and data.test_file null (a recipe may set them)")
        model.check_with(data)
        select = data.select
        if (select.by != "none" or select.noun_reading) and data.kg is None:
            what = "data.select.by: encoder" if select.by != "none" else "data.select.noun_reading"
            raise ValueError(f"{what} selects the branches of a knowledge graph: give data.kg (e.g. wordnet)")
        if select.noun_reading and str(data.kg).lower() != "wordnet":
            raise ValueError("data.select.noun_reading reads words as nouns by WordNet's tag counts: it needs "
                             f"data.kg: wordnet, not {data.kg}")
