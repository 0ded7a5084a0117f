"""The relation task of the pretrained transformers (an entity-start or an entity-aware attention
head): the checkpoint's word pieces (with the entity markers it may add), optionally K-BERT
branches from ``data.kg``, the encoder trained at ``optim.encoder_lr`` layer by layer, and the L2
term over the head only."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import torch

from graphmatch.data.relation import relation_builder
from graphmatch.data.relation_pieces import relation_pieces
from graphmatch.graphs.branch_selection import BranchSelection
from graphmatch.graphs.kbert import visibility_mask
from graphmatch.graphs.relation import RelationGraphBuilder, WordPieces
from graphmatch.graphs.relation_kbert import VALUE, mask_entities, trunk_only
from graphmatch.knowledge import resolve_kg
from graphmatch.nn.pretrained import layer_groups, load_weights
from graphmatch.pretrained import PretrainedWeights, resolve_pretrained
from graphmatch.tasks.knowledge_selection import branch_selection
from graphmatch.tasks.relation.base import RelationTask, variant
from graphmatch.tasks.relation_keys import TransformerModel
from graphmatch.utils.unset_weights import bert_model


@variant(TransformerModel)
class TransformerRelationTask(RelationTask):
    """Relation classification with a pretrained transformer over its word pieces."""

    model: TransformerModel

    def __init__(self, config: dict[str, Any]):
        super().__init__(config)
        # the checkpoint, resolved once (a folder, minilm, a hub id or a run's stored encoder)
        self.pretrained = resolve_pretrained(self.model.pretrained)
        self._pieces: WordPieces | None = None
        self._trees: dict[bool, RelationGraphBuilder] = {}
        self._selection: BranchSelection | None = None

    @property
    def tokenization(self) -> str:
        return "pieces"

    def tokenizer_folder(self) -> Path | None:
        return self.pretrained_dir()

    def starts_from(self) -> str | None:
        return self.model.pretrained

    def vocabulary_name(self, training: bool = False) -> str:
        return f"model.pretrained={self.model.pretrained}'s vocabulary"

    def unk_id(self) -> int:
        return self.pieces().tokenizer.unk_token_id

    def pieces(self) -> WordPieces:
        if self._pieces is None:
            self._pieces = relation_pieces(self.pretrained_dir())  # e5-small: the markers as 4 added tokens
        return self._pieces

    def pretrained_dir(self) -> Path:
        """The folder of the transformer's config and tokenizer."""
        return self.pretrained.folder

    def selection(self) -> BranchSelection | None:
        """``data.select``'s branch selection over the checkpoint's own mean-pooled embeddings (one
        for every split and :meth:`builder`: each text is embedded once), ``None`` for ``by: none``."""
        if self._selection is None and self.data.kg is not None:
            self._selection = branch_selection(self.data.select, self.pretrained, self.recipe.train.progress)
        return self._selection

    def builder(self, keep_text: bool = True) -> RelationGraphBuilder:
        options = self.builder_options()
        if self.data.kg is None:
            return relation_builder(options, None, self.pieces(), keep_text=keep_text)
        if keep_text not in self._trees:  # made once: its K-Query memoises lemmas and values
            self._trees[keep_text] = relation_builder(options, None, self.pieces(), keep_text, self.knowledge_graph(),
                                                      self.selection())
        return self._trees[keep_text]

    # ---------------------------------------------------------------- model
    def build_model(self) -> torch.nn.Module:
        from graphmatch.models.relation_transformer import RelationTransformer, RelationTransformerConfig

        m = self.model
        # one embedding row per token of the tokenizer: the checkpoint's, and any marker it added
        encoder = bert_model(self.pretrained.bert_config(vocab_size=self.pieces().vocab_size), add_pooling_layer=False)
        return RelationTransformer(encoder, RelationTransformerConfig(
            len(self.label_names()), head=m.name.removeprefix("transformer_"), dropout=m.dropout,
            num_positions=2 * self.data.max_distance + 1, position_dim=m.position_dim, latent_types=m.latent_types,
            attention_size=m.attention_size, hidden_channels=m.head_hidden, pack=m.pack,
            pad_id=self.pieces().tokenizer.pad_token_id or 0, branch_embedding=m.branch_embedding,
            branch_bias=m.branch_bias,
        ))

    def training_batch(self, batch: Any) -> Any:
        """``data.entity_mask``: the pieces of each entity whose head word kept a branch masked at
        random, its branch and markers left (:func:`~graphmatch.graphs.relation_kbert.mask_entities`);
        training only."""
        if self.data.entity_mask <= 0:
            return batch
        return mask_entities(batch, self.data.entity_mask, self.mask_id())

    def mask_id(self) -> int:
        """The vocabulary's mask token (``[MASK]``, e5's ``<mask>``)."""
        mask_id = self.pieces().tokenizer.mask_token_id
        if mask_id is None:
            raise ValueError(f"data.entity_mask: the tokenizer of model.pretrained={self.model.pretrained} has no "
                             "mask token")
        return int(mask_id)

    # ---------------------------------------------------------------- probe
    def branch_kg(self) -> str | None:
        """The KG's path with ``data.kg`` (``graphmatch probe``), else ``None``."""
        kg = None if self.data.kg is None else resolve_kg(self.data.kg, self.data.root)
        return None if kg is None else str(kg)

    def probe_batch(self, model: torch.nn.Module, batch: Any) -> dict[str, Any]:
        """The logits with the branches and with every branch piece cut out of the sentence trees
        (:func:`~graphmatch.graphs.relation_kbert.trunk_only`: with soft positions, the model on the
        trunk alone, whichever head reads it), and the attention weights with them
        (:meth:`Task.probe_batch <graphmatch.tasks.base.Task.probe_batch>`; no word spans: no NER)."""
        visible, real = visibility_mask(batch, value=VALUE)
        branch = torch.zeros_like(real)
        branch[real] = batch["token"].branch
        return {"out": model(batch), "out_cut": model(trunk_only(batch)), "branch": branch, "token_mask": real,
                "visible": visible, "weights": model.tree_attention(batch),
                "spans": [[] for _ in range(len(real))]}

    def l2_parameters(self, model: torch.nn.Module) -> list[torch.nn.Parameter]:
        """The head's parameters (not the encoder's)."""
        return [p for n, p in model.named_parameters() if not n.startswith("encoder.")]

    def encoder_parameters(self, model: torch.nn.Module) -> list[torch.nn.Parameter]:
        """The pretrained encoder's parameters (trained at ``optim.encoder_lr``)."""
        return list(model.encoder.parameters())

    def encoder_layers(self, model: torch.nn.Module) -> list[list[torch.nn.Parameter]]:
        """The transformer's embeddings and layers, bottom to top (``optim.layer_decay``)."""
        return layer_groups(model.encoder.embeddings, model.encoder.encoder.layer)

    def init_weights(self, model: torch.nn.Module) -> None:
        """The pretrained weights, strictly; the word-embedding table grown for the markers the
        tokenizer added (:func:`grown_embeddings`)."""
        # the encoder has no pooler: a checkpoint's pooler is left unused, like its MLM head
        ckpt, rows = self.pretrained.read_weights(), model.encoder.config.vocab_size
        ckpt, added = grown_embeddings(ckpt, rows, model.encoder.config.initializer_range)
        load_weights(model.encoder, ckpt)
        if added:
            print(f"pretrained: {added} embedding rows added for the entity markers "
                  f"{' '.join(self.pieces().markers)} (the checkpoint's mean row plus noise)", file=sys.stderr)

    def optimiser_warning(self) -> str | None:
        """One line when the transformer trains with a BiLSTM's optimiser (a BiLSTM recipe whose
        ``model.name`` was switched): no ``optim.encoder_lr`` or no warm-up, saying what to set."""
        o, m = self.recipe.optim, self.model
        if o.encoder_lr is not None and o.warmup > 0:
            return None
        what = [f"{o.optimizer}, lr {o.lr:g}", *(["no optim.encoder_lr"] if o.encoder_lr is None else []),
                *(["no warm-up"] if o.warmup == 0 else []), *([f"model.l2 {m.l2:g}"] if m.l2 else [])]
        return (f"model.name={m.name} trains with a BiLSTM's optimiser ({', '.join(what)}): set optim.optimizer=adamw "
                "optim.encoder_lr=5e-5 optim.warmup=0.1 optim.schedule=linear model.l2=0, or start from "
                "relation/zh_e5_entity_start (Chinese) or relation/semeval_minilm_entity_start")


def grown_embeddings(ckpt: PretrainedWeights, rows: int, std: float) -> tuple[PretrainedWeights, int]:
    """``ckpt`` with its word-embedding table grown to ``rows`` (tokens the tokenizer added, e.g. the
    entity markers of a SentencePiece checkpoint): each new row the mean of the checkpoint's rows plus
    normal noise of ``std``, so that the markers start apart and among the pretrained embeddings.
    Returns the checkpoint (``ckpt`` itself when nothing is added) and the rows added."""
    name = "embeddings.word_embeddings.weight"
    table = ckpt.state.get(name)
    if table is None or table.shape[0] >= rows:
        return ckpt, 0
    added = rows - table.shape[0]
    new = table.mean(0, keepdim=True) + std * torch.randn(added, table.shape[1], dtype=table.dtype)
    return dataclasses.replace(ckpt, state={**ckpt.state, name: torch.cat([table, new])}), added
