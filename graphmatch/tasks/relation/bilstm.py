"""The relation task of the BiLSTM models (Att-BLSTM, the entity-aware BiLSTM): a vocabulary built
on the training split, word vectors for its embeddings, and an L2 term
:math:`\\lambda \\cdot \\tfrac12 \\sum \\lVert \\theta \\rVert^2` over every parameter but the word and
position embedding tables (all of them with ``model.l2_embeddings``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import torch
from torch_geometric.data import Dataset

from graphmatch.data.relation import relation_builder
from graphmatch.graphs.relation import RelationGraphBuilder
from graphmatch.models.att_blstm import AttBLSTM, AttBLSTMConfig
from graphmatch.models.entity_attention import EntityAttentionBiLSTM, EntityAttentionConfig
from graphmatch.tasks.relation.base import RelationTask, variant
from graphmatch.tasks.relation_keys import BiLSTMModel
from graphmatch.text.vocab import Vocab, load_word_vectors

#: parameters the L2 term leaves out (without ``model.l2_embeddings``)
_NO_L2 = ("embedding.", "position.")


def _att_blstm(task: BiLSTMRelationTask, common: dict[str, Any]) -> torch.nn.Module:
    return AttBLSTM(AttBLSTMConfig(**common))


def _entity_attention(task: BiLSTMRelationTask, common: dict[str, Any]) -> torch.nn.Module:
    m = task.model
    return EntityAttentionBiLSTM(EntityAttentionConfig(
        **common, num_positions=2 * task.data.max_distance + 1, position_dim=m.position_dim,
        heads=m.heads, latent_types=m.latent_types, attention_size=m.attention_size,
        self_attention_relu=m.self_attention_relu, entity_state=m.entity_state,
    ))


#: ``model.name`` -> the model of that BiLSTM variant, from the keys every BiLSTM shares (``common``)
MODELS = {"att_blstm": _att_blstm, "entity_attention": _entity_attention}


@variant(BiLSTMModel)
class BiLSTMRelationTask(RelationTask):
    """Relation classification with a BiLSTM over the training split's vocabulary."""

    model: BiLSTMModel

    def __init__(self, config: dict[str, Any]):
        super().__init__(config)
        self.vocab: Vocab | None = None  # from a checkpoint, or the training split's (_vocab)

    @property
    def tokenization(self) -> str:
        return self.data.tokenization or "words"

    def tokenizer_folder(self) -> Path | None:
        return None

    def vocabulary_name(self, training: bool = False) -> str:
        return "the training vocabulary" if training else "the vocabulary"

    def unk_id(self) -> int:
        return Vocab.unk_id

    def datasets(self) -> dict[str, Dataset]:
        out = super().datasets()
        self.vocab = out["train"].vocab
        return out

    def _vocab(self) -> Vocab:
        """The vocabulary of a checkpoint, else of the training split."""
        if self.vocab is None:
            self.vocab = self.train_split().vocab
        return self.vocab

    def token_vocab(self) -> Vocab | None:
        return self.vocab

    def builder(self, keep_text: bool = True) -> RelationGraphBuilder:
        return relation_builder(self.builder_options(), self._vocab(), keep_text=keep_text)

    def vocabulary_state(self) -> dict[str, Any]:
        return {"vocab": self._vocab().itos}

    def set_extra_state(self, state: dict[str, Any]) -> None:
        if "vocab" in state:
            self.vocab = Vocab(state["vocab"])
        super().set_extra_state(state)

    # ---------------------------------------------------------------- model
    def build_model(self) -> torch.nn.Module:
        m = self.model
        common = dict(
            num_words=len(self._vocab()), num_classes=len(self.label_names()), embedding_dim=m.embedding_dim,
            hidden_size=m.hidden_size, emb_dropout=m.emb_dropout, rnn_dropout=m.rnn_dropout,
            dropout=m.dropout, rnn_dropout_on=m.rnn_dropout_on, init=m.init,
        )
        return MODELS[m.name](self, common)

    def l2_parameters(self, model: torch.nn.Module) -> list[torch.nn.Parameter]:
        """Every parameter but the word and position embedding tables, or all of them with
        ``model.l2_embeddings``."""
        return [p for n, p in model.named_parameters() if self.model.l2_embeddings or not n.startswith(_NO_L2)]

    def starts_from(self) -> str | None:
        return self.model.word_vectors

    def input_files(self) -> dict[str, str]:
        """The knowledge graph's (none for a BiLSTM) and the word vectors the embeddings start from, where given."""
        vectors = self.model.word_vectors
        return {**super().input_files(), **({"word_vectors": str(vectors)} if vectors else {})}

    def init_weights(self, model: torch.nn.Module) -> None:
        """Word vectors for the embeddings (vocabulary words found in ``model.word_vectors``; others
        stay random)."""
        path = self.model.word_vectors
        if not path:
            return
        emb = model.embedding.weight
        vectors, found = load_word_vectors(path, self._vocab(), emb.size(1))
        with torch.no_grad():
            emb[found] = vectors[found].to(emb)
            emb[Vocab.pad_id] = 0.0
        print(f"word vectors: {int(found.sum())} of {len(found)} vocabulary words found in {path}", file=sys.stderr)
