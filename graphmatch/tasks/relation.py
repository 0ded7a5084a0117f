"""Relation classification: Att-BLSTM, the entity-aware BiLSTM, and a pretrained transformer with
an entity-start or an entity-aware attention head, on SemEval-2010 Task 8 or any relation files.

Recipe keys (``data`` / ``model``)::

    data:  root (data root holding semeval2010_task8/; null = $GRAPHMATCH_DATA or download),
           cache_dir (processed graphs), train_file / dev_file / test_file (relation files; a null
           train_file means SemEval's TRAIN_FILE.TXT and TEST_FILE_FULL.TXT), format (auto |
           semeval | tsv), tokenization (null = words for the BiLSTM models, the pretrained
           tokenizer's pieces for the transformer ones; words | chars | jieba | thulac | pkuseg),
           negative_labels (the "no relation" labels left out of relation_f1; null = the default
           list), max_distance, max_length, dev_size, split_seed (dev held out of train when
           there is no dev_file), min_freq, markers (keep <e1> </e1> <e2> </e2> as tokens),
           position_anchor (span | last: relative positions to the entity span or to its last
           token)
    model: name (att_blstm | entity_attention | transformer_entity_start |
           transformer_entity_attention), embedding_dim, hidden_size, position_dim, heads,
           latent_types, attention_size, emb_dropout, rnn_dropout, dropout, rnn_dropout_on
           (output | input), self_attention_relu, entity_state (mean | last), init (pytorch |
           official), l2, l2_embeddings, word_vectors (a GloVe / word2vec text file; null =
           random initialisation), pretrained (the transformer's local checkpoint folder, or
           minilm), pack (two sentences per encoder row), head_hidden (R-BERT's projection size
           in the entity-start head)

The label set is the training file's. Labels that are SemEval's are scored with the official
``semeval2010`` metric; others with ``relation_f1`` (macro-F1 without the negative labels). Both
come with ``accuracy``. The BiLSTM loss is cross-entropy plus an L2 term :math:`\\lambda \\cdot
\\tfrac12 \\sum \\lVert \\theta \\rVert^2` (TensorFlow's ``l2_loss``, as the papers' code) over every
parameter but the word and position embedding tables, or, with ``model.l2_embeddings: true``,
over every parameter as the papers' code does. Predictions are written as JSON lines and, for
SemEval labels, in the official ``ID<TAB>LABEL`` format (``<stem>.semeval.txt``, with
``<stem>.semeval_key.txt`` from the gold labels) for
``perl semeval2010_task8_scorer-v1.2.pl PROPOSED KEY``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor
from torch_geometric.data import Batch, Dataset, HeteroData

from graphmatch.data.relation import SPLITS, RelationDataset, make_builder
from graphmatch.data.relation_formats import NEGATIVE_LABELS, is_semeval
from graphmatch.data.semeval import SemEval2010Task8
from graphmatch.datafiles import resolve_path
from graphmatch.graphs.relation import (
    POSITION_ANCHORS,
    TOKENIZATIONS,
    RelationGraphBuilder,
    WordPieces,
    split_input_line,
    tokens_of,
)
from graphmatch.models.att_blstm import INITS, RNN_DROPOUT_ON
from graphmatch.models.entity_attention import ENTITY_STATES
from graphmatch.nn.pretrained import ALLOW_UNEXPECTED, bert_config, layer_groups, load_pretrained, resolve_pretrained
from graphmatch.tasks.base import Task, register
from graphmatch.text.vocab import Vocab, load_word_vectors

BILSTM_MODELS = ("att_blstm", "entity_attention")
TRANSFORMER_MODELS = ("transformer_entity_start", "transformer_entity_attention")
MODELS = BILSTM_MODELS + TRANSFORMER_MODELS
_NO_L2 = ("embedding.", "position.")
#: recipe keys that take one of a few names
CHOICES = {
    ("data", "position_anchor"): POSITION_ANCHORS,
    ("model", "init"): INITS,
    ("model", "rnn_dropout_on"): RNN_DROPOUT_ON,
    ("model", "entity_state"): ENTITY_STATES,
}


@register
class RelationTask(Task):
    """Relation classification over relation sentence graphs."""

    name = "relation"
    defaults = {
        "data": {
            "root": None,
            "cache_dir": None,
            "train_file": None,
            "dev_file": None,
            "test_file": None,
            "format": "auto",
            "tokenization": None,
            "negative_labels": None,
            "max_distance": 50,
            "max_length": 90,
            "dev_size": 800,
            "split_seed": 1,
            "min_freq": 1,
            "markers": True,
            "position_anchor": "span",
        },
        "model": {
            "name": "att_blstm",
            "embedding_dim": 100,
            "hidden_size": 100,
            "position_dim": 50,
            "heads": 4,
            "latent_types": 3,
            "attention_size": 50,
            "emb_dropout": 0.3,
            "rnn_dropout": 0.3,
            "dropout": 0.5,
            "rnn_dropout_on": "output",
            "self_attention_relu": False,
            "entity_state": "mean",
            "init": "pytorch",
            "l2": 1e-5,
            "l2_embeddings": False,
            "word_vectors": None,
            "pretrained": None,
            "pack": True,
            "head_hidden": None,
        },
    }
    metrics = ("semeval2010", "accuracy")
    monitor = "semeval2010"

    def __init__(self, config: dict[str, Any]):
        super().__init__(config)
        m, d = self.model_cfg, self.data_cfg
        if m["name"] not in MODELS:
            raise ValueError(f"model.name must be one of {', '.join(MODELS)}, got {m['name']!r}")
        for (section, key), choices in CHOICES.items():
            if config[section][key] not in choices:
                raise ValueError(f"{section}.{key} must be one of {', '.join(choices)}, got {config[section][key]!r}")
        self.transformer = m["name"] in TRANSFORMER_MODELS
        if self.transformer and not m["pretrained"]:
            raise ValueError(f"model.name={m['name']} needs model.pretrained (a local checkpoint folder, or minilm)")
        if d["tokenization"] is not None:
            valid = ("pieces",) if self.transformer else TOKENIZATIONS
            if d["tokenization"] not in valid:
                raise ValueError(f"data.tokenization must be one of {', '.join(valid)} (or null) for "
                                 f"model.name={m['name']}, got {d['tokenization']!r}")
        self.vocab: Vocab | None = None
        self.labels: list[str] | None = None
        self._pieces: WordPieces | None = None
        self._l2_params: list[torch.nn.Parameter] = []

    # ----------------------------------------------------------------- data
    @property
    def tokenization(self) -> str:
        return "pieces" if self.transformer else (self.data_cfg["tokenization"] or "words")

    def datasets(self) -> dict[str, Dataset]:
        d = self.data_cfg
        options = dict(
            max_distance=d["max_distance"], max_length=d["max_length"], dev_size=d["dev_size"],
            split_seed=d["split_seed"], min_freq=d["min_freq"], markers=d["markers"],
            position_anchor=d["position_anchor"], tokenization=self.tokenization,
            pretrained=self.pretrained_dir() if self.transformer else None,
        )
        files = {key: None if d[key] is None else resolve_path(Path(d[key]).expanduser(), d["root"], f"data.{key}")
                 for key in ("train_file", "dev_file", "test_file")}
        out: dict[str, Dataset] = {}
        if files["train_file"] is None:
            if files["dev_file"] is not None:
                raise ValueError("data.dev_file needs a data.train_file (SemEval's dev is held out of its train file)")
            for split in SPLITS:
                out[split] = SemEval2010Task8(split, root=d["root"], cache=d["cache_dir"],
                                              test_file=files["test_file"], **options)
        else:
            has_test = files["test_file"] is not None
            for split in SPLITS if has_test else SPLITS[:2]:
                out[split] = RelationDataset(split, train_file=files["train_file"], dev_file=files["dev_file"],
                                             test_file=files["test_file"], format=d["format"], root=d["root"],
                                             cache=d["cache_dir"], **options)
        self.vocab = out["train"].vocab
        self._set_labels(out["train"].label_names)
        return out

    def _set_labels(self, labels: list[str]) -> None:
        self.labels = list(labels)
        if is_semeval(self.labels):
            self.metrics, self.monitor = ("semeval2010", "accuracy"), "semeval2010"
        else:
            negative = self.data_cfg["negative_labels"]
            negative = list(NEGATIVE_LABELS if negative is None else negative)
            self.metrics, self.monitor = (("relation_f1", {"negative": negative}), "accuracy"), "relation_f1"

    def label_names(self) -> list[str]:
        if self.labels is None:
            self.datasets()
        assert self.labels is not None
        return list(self.labels)

    def _vocab(self) -> Vocab:
        if self.vocab is None:
            self.datasets()
        assert self.vocab is not None
        return self.vocab

    def pieces(self) -> WordPieces:
        if self._pieces is None:
            self._pieces = WordPieces.from_pretrained(self.pretrained_dir())
        return self._pieces

    def builder(self, keep_text: bool = True) -> RelationGraphBuilder:
        options = {**self.data_cfg, "tokenization": self.tokenization}
        if self.transformer:
            return make_builder(options, None, self.pieces(), keep_text=keep_text)
        return make_builder(options, self._vocab(), keep_text=keep_text)

    def encode(self, text: str, text_b: str | None = None) -> HeteroData:
        """A marked sentence (``… <e1>…</e1> … <e2>…</e2> …``, optionally ``ID<TAB>"…"``), or a
        ``head<TAB>tail<TAB>sentence`` line."""
        from graphmatch.graphs.relation_markup import locate_entities

        if text_b is not None:
            raise ValueError("relation classification takes one marked sentence, not a pair")
        fields = text.strip("\r\n").split("\t")
        if len(fields) == 3 and "<e1>" not in text:
            return self.builder()(locate_entities(*(f.strip() for f in (fields[2], fields[0], fields[1]))))
        sid, sentence = split_input_line(text)
        data = self.builder()(sentence)
        if sid is not None:
            data.sid = torch.tensor([int(sid)])
        return data

    def get_extra_state(self) -> dict[str, Any]:
        state: dict[str, Any] = {"labels": self.label_names()}
        if not self.transformer:
            state["vocab"] = self._vocab().itos
        return state

    def set_extra_state(self, state: dict[str, Any]) -> None:
        if "vocab" in state:
            self.vocab = Vocab(state["vocab"])
        from graphmatch.data.relation_formats import SEMEVAL_LABELS

        self._set_labels(state.get("labels", list(SEMEVAL_LABELS)))  # checkpoints before labels were stored

    # ---------------------------------------------------------------- model
    def build_model(self) -> torch.nn.Module:
        m = self.model_cfg
        num_classes = len(self.label_names())
        num_positions = 2 * self.data_cfg["max_distance"] + 1
        if self.transformer:
            from transformers import BertModel

            from graphmatch.models.relation_transformer import RelationTransformer

            encoder = BertModel(bert_config(self.pretrained_dir()), add_pooling_layer=False)
            model: torch.nn.Module = RelationTransformer(
                encoder, num_classes, head=m["name"].removeprefix("transformer_"), dropout=m["dropout"],
                num_positions=num_positions, position_dim=m["position_dim"], latent_types=m["latent_types"],
                attention_size=m["attention_size"], hidden_channels=m["head_hidden"], pack=m["pack"],
                pad_id=self.pieces().tokenizer.pad_token_id or 0,
            )
            self._l2_params = [p for n, p in model.named_parameters() if not n.startswith("encoder.")]
            return model
        common = dict(
            num_words=len(self._vocab()), num_classes=num_classes, embedding_dim=m["embedding_dim"],
            hidden_size=m["hidden_size"], emb_dropout=m["emb_dropout"], rnn_dropout=m["rnn_dropout"],
            dropout=m["dropout"], rnn_dropout_on=m["rnn_dropout_on"], init=m["init"],
        )
        if m["name"] == "att_blstm":
            from graphmatch.models.att_blstm import AttBLSTM

            model = AttBLSTM(**common)
        else:
            from graphmatch.models.entity_attention import EntityAttentionBiLSTM

            model = EntityAttentionBiLSTM(
                **common, num_positions=num_positions, position_dim=m["position_dim"],
                heads=m["heads"], latent_types=m["latent_types"], attention_size=m["attention_size"],
                self_attention_relu=m["self_attention_relu"], entity_state=m["entity_state"],
            )
        self._l2_params = [
            p for n, p in model.named_parameters() if m["l2_embeddings"] or not n.startswith(_NO_L2)
        ]
        return model

    def encoder_parameters(self, model: torch.nn.Module) -> list[torch.nn.Parameter]:
        """The pretrained encoder's parameters (trained at ``optim.encoder_lr``)."""
        return list(model.encoder.parameters()) if self.transformer else []

    def encoder_layers(self, model: torch.nn.Module) -> list[list[torch.nn.Parameter]]:
        """The transformer's embeddings and layers, bottom to top (``optim.layer_decay``)."""
        if not self.transformer:
            return []
        return layer_groups(model.encoder.embeddings, model.encoder.encoder.layer)

    def pretrained_dir(self) -> Path:
        return resolve_pretrained(self.model_cfg["pretrained"])

    def load_pretrained(self, model: torch.nn.Module) -> None:
        """The transformer's pretrained weights (strictly), or word vectors for a BiLSTM's
        embeddings (vocabulary words found in ``model.word_vectors``; others stay random)."""
        if self.transformer:
            # the encoder has no pooler: a checkpoint's pooler is left unused, like its MLM head
            load_pretrained(model.encoder, self.pretrained_dir(), allow_unexpected=(*ALLOW_UNEXPECTED, "pooler.*"))
            return
        path = self.model_cfg["word_vectors"]
        if not path:
            return
        emb = model.embedding.weight
        vectors, found = load_word_vectors(path, self._vocab(), emb.size(1))
        with torch.no_grad():
            emb[found] = vectors[found].to(emb)
            emb[Vocab.pad_id] = 0.0
        print(f"word vectors: {int(found.sum())} of {len(found)} vocabulary words found in {path}", file=sys.stderr)

    def loss(self, out: Tensor, batch: Batch) -> Tensor:
        loss = F.cross_entropy(out, batch.y)
        l2 = self.model_cfg["l2"]
        if l2 and self._l2_params:
            loss = loss + 0.5 * l2 * sum(p.pow(2).sum() for p in self._l2_params)
        return loss

    def decode(self, out: Tensor, batch: Batch) -> list[dict[str, Any]]:
        labels = self.label_names()
        prob, pred = torch.softmax(out.detach().float(), dim=-1).max(dim=-1)
        gold = batch.y.tolist() if "y" in batch else [None] * len(pred)
        ids = batch.sid.tolist() if "sid" in batch else [None] * len(pred)
        return [
            {"id": i, "pred": labels[p], "gold": None if g is None else labels[g], "prob": float(q)}
            for i, p, g, q in zip(ids, pred.tolist(), gold, prob.tolist(), strict=True)
        ]

    # -------------------------------------------------------------- outputs
    def write_predictions(self, path: str, rows: list[dict[str, Any]]) -> None:
        """JSON lines at ``path``, plus (SemEval labels) the official ``ID<TAB>LABEL`` answer file and key."""
        super().write_predictions(path, rows)
        if not is_semeval(self.label_names()):
            return
        stem = Path(path).with_suffix("")
        ids = [r.get("id") if r.get("id") is not None else k + 1 for k, r in enumerate(rows)]
        write_answers(f"{stem}.semeval.txt", ids, [r["pred"] for r in rows])
        if rows and all(r.get("gold") is not None for r in rows):
            write_answers(f"{stem}.semeval_key.txt", ids, [r["gold"] for r in rows])

    def explain(self, model: torch.nn.Module, data: HeteroData) -> dict[str, Any]:
        """Attention over the tokens (and, for the entity-aware models, over the latent types),
        as the arguments of :func:`graphmatch.viz.attention.draw_token_attention`."""
        if self.model_cfg["name"] == "transformer_entity_start":
            raise ValueError("the entity_start head has no attention to draw; --explain needs an attention model")
        batch = data if isinstance(data, Batch) else Batch.from_data_list([data])
        if batch.num_graphs != 1:
            raise ValueError(f"explain draws one sentence, got a batch of {batch.num_graphs}")
        model.eval()
        with torch.no_grad():
            logits, att = model(batch, return_attention=True)
        prob, pred = torch.softmax(logits[0], -1).max(-1)
        ent = batch["token", "in", "entity"].edge_index
        return {
            "tokens": list(tokens_of(data, self.vocab)),
            "weights": att["token"].tolist(),
            "entity_tokens": [ent[0, ent[1] == k].tolist() for k in range(2)],
            "type_weights": None if "types" not in att else att["types"][0].tolist(),
            "title": f"{self.label_names()[int(pred)]}  (p = {float(prob):.2f})",
        }


def write_answers(path: str | os.PathLike, ids: list[int], labels: list[str]) -> None:
    """An ``ID<TAB>LABEL`` file, every line ending in a newline, as the official scorer reads it."""
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.writelines(f"{i}\t{label}\n" for i, label in zip(ids, labels, strict=True))
