"""The choices of the paper models' options, importable without torch (a recipe is checked
against them before torch is loaded, :mod:`graphmatch.tasks.keys`)."""

from __future__ import annotations

from typing import Literal, get_args

# K-BERT (graphmatch.models.kbert)
Pooling = Literal["first", "mean", "max", "last"]
POOLINGS: tuple[str, ...] = get_args(Pooling)
#: classification heads: K-BERT's own (UER's ``output_layer_1`` + tanh) or BERT's pretrained pooler
Head = Literal["uer", "bert_pooler"]
HEADS: tuple[str, ...] = get_args(Head)
#: a pair read as one sequence (the paper's cross-encoder) or each text alone (a bi-encoder, cosine head)
PairEncoding = Literal["joint", "separate"]
PAIR_ENCODINGS: tuple[str, ...] = get_args(PairEncoding)

# LET (graphmatch.models.let)
Encoder = Literal["transformer", "bert"]
ENCODERS: tuple[str, ...] = get_args(Encoder)
Objective = Literal["bce", "softmax"]
OBJECTIVES: tuple[str, ...] = get_args(Objective)
#: what each sememe attends over: the sememes of its sense (paper) or of its sentence (released code)
SememeScope = Literal["sense", "sentence"]
SEMEME_SCOPES: tuple[str, ...] = get_args(SememeScope)
#: c_CLS: the encoder's pooled output (released code), the raw first state, or the mean of the token states
ClsVector = Literal["pooled", "first", "mean"]
CLS_VECTORS: tuple[str, ...] = get_args(ClsVector)

# relation BiLSTMs (graphmatch.models.att_blstm, entity_attention)
Init = Literal["pytorch", "official"]
INITS: tuple[str, ...] = get_args(Init)
RnnDropoutOn = Literal["output", "input"]
RNN_DROPOUT_ON: tuple[str, ...] = get_args(RnnDropoutOn)
#: an entity is the mean of its tokens' states, or its last token's
ENTITY_STATES = ("mean", "last")
