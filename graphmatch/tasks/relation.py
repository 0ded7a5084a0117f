"""Relation classification on SemEval-2010 Task 8: Att-BLSTM and the entity-aware BiLSTM.

Recipe keys (``data`` / ``model``)::

    data:  root (data root holding semeval2010_task8/; null = $GRAPHMATCH_DATA or download),
           cache_dir (processed graphs), max_distance, max_length, dev_size, split_seed, min_freq,
           markers (keep <e1> </e1> <e2> </e2> as tokens), position_anchor (span | last: relative
           positions to the entity span or to its last token), train_file / test_file (other files
           in the organisers' format instead of TRAIN_FILE.TXT / TEST_FILE_FULL.TXT)
    model: name (att_blstm | entity_attention), embedding_dim, hidden_size, position_dim, heads,
           latent_types, attention_size, emb_dropout, rnn_dropout, dropout, rnn_dropout_on
           (output | input), self_attention_relu, entity_state (mean | last), init (pytorch |
           official), l2, l2_embeddings, word_vectors (a GloVe / word2vec text file; null =
           random initialisation)

The loss is cross-entropy plus an L2 term :math:`\\lambda \\cdot \\tfrac12 \\sum \\lVert
\\theta \\rVert^2` (TensorFlow's ``l2_loss``, as the papers' code) over every parameter but the
word and position embedding tables, or, with ``model.l2_embeddings: true``, over every
parameter as the papers' code does. Predictions are written as JSON lines and in the official
``ID<TAB>LABEL`` format (``<stem>.semeval.txt``, with ``<stem>.semeval_key.txt`` from the gold
labels) for ``perl semeval2010_task8_scorer-v1.2.pl PROPOSED KEY``.
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

from graphmatch.data.relation_formats import SEMEVAL_LABELS as LABELS
from graphmatch.data.semeval import SPLITS, SemEval2010Task8
from graphmatch.graphs.relation import POSITION_ANCHORS, RelationGraphBuilder, split_input_line, tokens_of
from graphmatch.models.att_blstm import INITS, RNN_DROPOUT_ON
from graphmatch.models.entity_attention import ENTITY_STATES
from graphmatch.tasks.base import Task, register
from graphmatch.text.vocab import Vocab, load_word_vectors

MODELS = ("att_blstm", "entity_attention")
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
    """SemEval-2010 Task 8 relation classification over relation sentence graphs."""

    name = "relation"
    defaults = {
        "data": {
            "root": None,
            "cache_dir": None,
            "max_distance": 50,
            "max_length": 90,
            "dev_size": 800,
            "split_seed": 1,
            "min_freq": 1,
            "markers": True,
            "position_anchor": "span",
            "train_file": None,
            "test_file": None,
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
        },
    }
    metrics = ("semeval2010", "accuracy")
    monitor = "semeval2010"

    def __init__(self, config: dict[str, Any]):
        super().__init__(config)
        if self.model_cfg["name"] not in MODELS:
            raise ValueError(f"model.name must be one of {', '.join(MODELS)}, got {self.model_cfg['name']!r}")
        for (section, key), choices in CHOICES.items():
            value = config[section][key]
            if value not in choices:
                raise ValueError(f"{section}.{key} must be one of {', '.join(choices)}, got {value!r}")
        self.vocab: Vocab | None = None
        self._l2_params: list[torch.nn.Parameter] = []

    # ----------------------------------------------------------------- data
    def datasets(self) -> dict[str, Dataset]:
        d = self.data_cfg
        out = {
            split: SemEval2010Task8(
                d["cache_dir"], split, data_dir=d["root"], max_distance=d["max_distance"],
                max_length=d["max_length"], dev_size=d["dev_size"], split_seed=d["split_seed"],
                min_freq=d["min_freq"], markers=d["markers"], position_anchor=d["position_anchor"],
                train_file=d["train_file"], test_file=d["test_file"],
            )
            for split in SPLITS
        }
        self.vocab = out["train"].vocab
        return out

    def label_names(self) -> list[str]:
        return list(LABELS)

    def _vocab(self) -> Vocab:
        if self.vocab is None:
            self.datasets()
        assert self.vocab is not None
        return self.vocab

    def builder(self, keep_text: bool = True) -> RelationGraphBuilder:
        d = self.data_cfg
        return RelationGraphBuilder(
            self._vocab(), d["max_distance"], d["max_length"], keep_text=keep_text, markers=d["markers"],
            position_anchor=d["position_anchor"],
        )

    def encode(self, text: str, text_b: str | None = None) -> HeteroData:
        """A marked sentence (``… <e1>…</e1> … <e2>…</e2> …``, optionally ``ID<TAB>"…"``)."""
        if text_b is not None:
            raise ValueError("relation classification takes one marked sentence, not a pair")
        sid, sentence = split_input_line(text)
        data = self.builder()(sentence)
        if sid is not None:
            data.sid = torch.tensor([int(sid)])
        return data

    def get_extra_state(self) -> dict[str, Any]:
        return {"vocab": self._vocab().itos}

    def set_extra_state(self, state: dict[str, Any]) -> None:
        self.vocab = Vocab(state["vocab"])

    # ---------------------------------------------------------------- model
    def build_model(self) -> torch.nn.Module:
        m = self.model_cfg
        common = dict(
            num_words=len(self._vocab()), num_classes=len(LABELS), embedding_dim=m["embedding_dim"],
            hidden_size=m["hidden_size"], emb_dropout=m["emb_dropout"], rnn_dropout=m["rnn_dropout"],
            dropout=m["dropout"], rnn_dropout_on=m["rnn_dropout_on"], init=m["init"],
        )
        if m["name"] == "att_blstm":
            from graphmatch.models.att_blstm import AttBLSTM

            model: torch.nn.Module = AttBLSTM(**common)
        else:
            from graphmatch.models.entity_attention import EntityAttentionBiLSTM

            model = EntityAttentionBiLSTM(
                **common, num_positions=2 * self.data_cfg["max_distance"] + 1, position_dim=m["position_dim"],
                heads=m["heads"], latent_types=m["latent_types"], attention_size=m["attention_size"],
                self_attention_relu=m["self_attention_relu"], entity_state=m["entity_state"],
            )
        self._l2_params = [
            p for n, p in model.named_parameters() if m["l2_embeddings"] or not n.startswith(_NO_L2)
        ]
        return model

    def load_pretrained(self, model: torch.nn.Module) -> None:
        """Copy vectors of ``model.word_vectors`` into the word embeddings (others stay random)."""
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
        prob, pred = torch.softmax(out.detach().float(), dim=-1).max(dim=-1)
        gold = batch.y.tolist() if "y" in batch else [None] * len(pred)
        ids = batch.sid.tolist() if "sid" in batch else [None] * len(pred)
        return [
            {"id": i, "pred": LABELS[p], "gold": None if g is None else LABELS[g], "prob": float(q)}
            for i, p, g, q in zip(ids, pred.tolist(), gold, prob.tolist(), strict=True)
        ]

    # -------------------------------------------------------------- outputs
    def write_predictions(self, path: str, rows: list[dict[str, Any]]) -> None:
        """JSON lines at ``path``, plus the official ``ID<TAB>LABEL`` answer file and key."""
        super().write_predictions(path, rows)
        stem = Path(path).with_suffix("")
        ids = [r.get("id") if r.get("id") is not None else k + 1 for k, r in enumerate(rows)]
        write_answers(f"{stem}.semeval.txt", ids, [r["pred"] for r in rows])
        if rows and all(r.get("gold") is not None for r in rows):
            write_answers(f"{stem}.semeval_key.txt", ids, [r["gold"] for r in rows])

    def explain(self, model: torch.nn.Module, data: HeteroData) -> dict[str, Any]:
        """Attention over the tokens (and, for the entity-aware model, over the latent types),
        as the arguments of :func:`graphmatch.viz.attention.draw_token_attention`."""
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
            "title": f"{LABELS[int(pred)]}  (p = {float(prob):.2f})",
        }


def write_answers(path: str | os.PathLike, ids: list[int], labels: list[str]) -> None:
    """An ``ID<TAB>LABEL`` file, every line ending in a newline, as the official scorer reads it."""
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.writelines(f"{i}\t{label}\n" for i, label in zip(ids, labels, strict=True))
