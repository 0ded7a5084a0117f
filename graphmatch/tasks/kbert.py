"""K-BERT: sentence classification, sentence-pair classification and NER over sentence trees.

Recipe keys (``data`` / ``model``)::

    data:  dataset (book_review | chnsenticorp | shopping | lcqmc | msra_ner | medical_ner | a folder
           of {train,dev,test}.tsv), root (data root; null = $GRAPHMATCH_DATA or download),
           cache_dir, kg (hownet | medical | a .spo path | null = no knowledge), max_length,
           max_entities, vocab (null = model.pretrained's vocab.txt or Google's Chinese vocab),
           limit (first N training lines), limit_eval (first N dev/test lines), mode (default | reference),
           positive_label (the class whose F1 a pair dataset reports; null = "1")
    model: backend (ours | hf), pretrained (a local BERT checkpoint folder, or minilm = the packaged
           all-MiniLM-L6-v2 of graphmatch[english]; its config.json sets the sizes; loaded strictly),
           hidden_size, num_layers, num_heads, intermediate_size, max_position, dropout,
           attention_dropout, pooling (first | mean | max | last), head (uer | bert_pooler: K-BERT's
           classifier, a fresh tanh layer without dropout, or BERT's pretrained pooler + dropout),
           tag_prior (NER: start the tag layer's bias at the log frequency of each training tag),
           visible_matrix, soft_positions, attention_mode (auto | dense | sparse; ours only),
           sparse_threshold, attn_implementation (sdpa | eager; hf only)

Ablations: ``data.kg: null`` (no knowledge), ``model.visible_matrix: false`` (full attention
over the injected sequence), ``model.soft_positions: false`` (hard positions 0..L-1).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch_geometric.data import Batch, Dataset, HeteroData

from graphmatch.data.kbert import KINDS, dataset_kind, make_builder, resolve_kg, tree_options
from graphmatch.data.labels import positive_label
from graphmatch.datafiles import locate
from graphmatch.graphs.kbert import IGNORE_INDEX, SentenceTreeBuilder
from graphmatch.models.kbert import HEADS, POOLINGS, KBert
from graphmatch.nn.pretrained import bert_config, resolve_pretrained
from graphmatch.tasks.base import Task, register

BACKENDS = ("ours", "hf")


@register
class KBertTask(Task):
    """K-BERT (Liu et al., AAAI 2020) on its classification, pair and NER datasets."""

    name = "kbert"
    defaults = {
        "data": {
            "dataset": "chnsenticorp",
            "root": None,
            "cache_dir": None,
            "kg": "hownet",
            "max_length": 256,
            "max_entities": 2,
            "vocab": None,
            "limit": None,
            "limit_eval": None,
            "mode": "default",
            "positive_label": None,
        },
        "model": {
            "backend": "ours",
            "pretrained": None,
            "hidden_size": 768,
            "num_layers": 12,
            "num_heads": 12,
            "intermediate_size": 3072,
            "max_position": 512,
            "dropout": 0.1,
            "attention_dropout": 0.1,
            "pooling": "first",
            "head": "uer",
            "tag_prior": True,
            "visible_matrix": True,
            "soft_positions": True,
            "attention_mode": "auto",
            "sparse_threshold": 0.02,
            "attn_implementation": "sdpa",
        },
    }

    kinds = {
        "data": {"root": "string", "cache_dir": "string", "vocab": "string", "limit": "integer",
                 "limit_eval": "integer"},
        "model": {"pretrained": "string"},
    }

    def __init__(self, config: dict[str, Any]):
        super().__init__(config)
        m = self.model_cfg
        if m["backend"] not in BACKENDS:
            raise ValueError(f"model.backend must be one of {', '.join(BACKENDS)}, got {m['backend']!r}")
        if m["pooling"] not in POOLINGS:
            raise ValueError(f"model.pooling must be one of {', '.join(POOLINGS)}, got {m['pooling']!r}")
        if m["head"] not in HEADS:
            raise ValueError(f"model.head must be one of {', '.join(HEADS)}, got {m['head']!r}")
        # a local checkpoint folder or a packaged name (minilm), checked before anything is built
        self.pretrained = resolve_pretrained(m["pretrained"]) if m["pretrained"] is not None else None
        self.kind = dataset_kind(self.data_cfg["dataset"], self.data_cfg["root"])
        if self.kind == "ner":
            self.metrics, self.monitor = ("ner_f1", "accuracy"), "ner_f1"
        elif self.kind == "pair":
            self.metrics, self.monitor = ("accuracy", "f1"), "accuracy"
        else:
            self.metrics, self.monitor = ("accuracy",), "accuracy"
        self.labels: list[str] | None = None
        self.positive_label: str | None = None  # the class whose probability rows carry as "score"
        self._builder: SentenceTreeBuilder | None = None

    # ----------------------------------------------------------------- data
    def vocab_path(self) -> Path:
        d = self.data_cfg
        if d["vocab"] is not None:
            return Path(d["vocab"])
        if self.pretrained is not None and (self.pretrained / "vocab.txt").is_file():
            return self.pretrained / "vocab.txt"
        return locate("kbert/vocab/google_vocab.txt", d["root"])

    def datasets(self) -> dict[str, Dataset]:
        d = self.data_cfg
        cls = KINDS[self.kind]
        common = dict(root=d["root"], cache=d["cache_dir"], kg=d["kg"], max_length=d["max_length"],
                      max_entities=d["max_entities"], vocab=self.vocab_path(), mode=d["mode"],
                      progress=self.config.get("train", {}).get("progress", True))
        train = cls(d["dataset"], "train", limit=d["limit"], **common)
        self._set_labels(train.labels)
        out: dict[str, Dataset] = {"train": train}
        for split in ("dev", "test"):
            out[split] = cls(d["dataset"], split, labels=self.labels, limit=d["limit_eval"], **common)
        return out

    def label_names(self) -> list[str]:
        if self.labels is None:
            self.datasets()
        assert self.labels is not None
        return list(self.labels)

    def get_extra_state(self) -> dict[str, Any]:
        return {"labels": self.label_names(), "kind": self.kind}

    def set_extra_state(self, state: dict[str, Any]) -> None:
        if state.get("kind", self.kind) != self.kind:
            raise ValueError(f"the checkpoint holds a model of {state['kind']} data; data.dataset="
                             f"{self.data_cfg['dataset']!r} is {self.kind} data: evaluate it on {state['kind']} data")
        self._set_labels(state["labels"])

    def _set_labels(self, labels: list[str]) -> None:
        self.labels = list(labels)
        if self.kind == "pair":  # F1 of the positive class (data.positive_label)
            self.positive_label = positive_label(self.labels, self.data_cfg["positive_label"])
            self.metrics = ("accuracy", ("f1", {"positive": self.positive_label}))
        elif self.kind == "classification":  # rows carry the score of class "1" when there is one
            self.positive_label = "1" if "1" in self.labels else None

    def builder(self, keep_text: bool = False) -> SentenceTreeBuilder:
        """The sentence-tree builder of this configuration (the one the datasets use)."""
        if self._builder is None or self._builder.keep_text != keep_text:
            d = self.data_cfg
            options = tree_options(self.kind, self.label_names(), d["max_length"], d["max_entities"], d["mode"])
            self._builder = make_builder(resolve_kg(d["kg"], d["root"]), self.vocab_path(), options,
                                         keep_text=keep_text)
        return self._builder

    def encode(self, text: str, text_b: str | None = None) -> HeteroData:
        if self.kind == "pair" and text_b is None:
            raise ValueError("this K-BERT model classifies sentence pairs: give text_b too")
        if self.kind != "pair" and text_b is not None:
            raise ValueError(f"this K-BERT model ({self.kind}) takes one text, not a pair")
        data = self.builder()(text, text_b)
        if self.kind == "ner":
            data.num_chars = torch.tensor([len(text)])
        return data

    # ---------------------------------------------------------------- model
    def _encoder_config(self):
        from graphmatch.nn.mask_transformer import MaskTransformerConfig

        m = self.model_cfg
        overrides = dict(hidden_dropout_prob=m["dropout"], attention_probs_dropout_prob=m["attention_dropout"],
                         attention_mode=m["attention_mode"], sparse_threshold=m["sparse_threshold"])
        if self.pretrained is not None:
            config = MaskTransformerConfig.from_hf(bert_config(self.pretrained))
            for key, value in overrides.items():
                setattr(config, key, value)
        else:
            config = MaskTransformerConfig(
                vocab_size=_count_lines(self.vocab_path()), hidden_size=m["hidden_size"],
                num_hidden_layers=m["num_layers"], num_attention_heads=m["num_heads"],
                intermediate_size=m["intermediate_size"], max_position_embeddings=m["max_position"], **overrides)
        if self.data_cfg["max_length"] > config.max_position_embeddings:
            raise ValueError(f"data.max_length ({self.data_cfg['max_length']}) exceeds the encoder's "
                             f"max_position_embeddings ({config.max_position_embeddings})")
        vocab_size = _count_lines(self.vocab_path())
        if vocab_size > config.vocab_size:
            raise ValueError(f"the vocabulary {self.vocab_path()} has {vocab_size} entries but the encoder "
                             f"only {config.vocab_size} token embeddings")
        return config

    def build_model(self) -> torch.nn.Module:
        m = self.model_cfg
        config = self._encoder_config()
        if m["backend"] == "hf":
            from graphmatch.nn.hf_bert import HFBertEncoder

            encoder: torch.nn.Module = HFBertEncoder.from_config(config, attn_implementation=m["attn_implementation"])
        else:
            from graphmatch.nn.mask_transformer import MaskTransformerEncoder

            encoder = MaskTransformerEncoder(config)
        return KBert(encoder, len(self.label_names()), tagging=self.kind == "ner", pooling=m["pooling"],
                     dropout=m["dropout"], visible_matrix=m["visible_matrix"], soft_positions=m["soft_positions"],
                     head=m["head"])

    def encoder_parameters(self, model: torch.nn.Module) -> list[torch.nn.Parameter]:
        return list(model.encoder.parameters())

    def encoder_layers(self, model: torch.nn.Module) -> list[list[torch.nn.Parameter]]:
        """The encoder's embeddings and layers, bottom to top (``optim.layer_decay``)."""
        return model.encoder.layer_groups()

    def load_pretrained(self, model: torch.nn.Module) -> None:
        """Weights of ``model.pretrained`` (a local HF BERT folder or ``minilm``) into the encoder,
        strictly (:mod:`graphmatch.nn.pretrained`): a missing or unexpected weight is an error; for NER
        with ``model.tag_prior``, the tag layer's bias from the training tags (:meth:`tag_log_prior`)."""
        if self.kind == "ner" and self.model_cfg["tag_prior"]:
            model.init_output_bias(self.tag_log_prior())
        if self.pretrained is not None:
            model.encoder.load_hf(self.pretrained)

    def tag_log_prior(self) -> torch.Tensor:
        """Log frequency of each tag over the training tokens (add-one smoothed), ``[num_tags]``.

        Starting the tagger from this bias keeps a model trained from scratch from collapsing: with
        a zero bias the quickest way to the tag prior (``O`` is 89 % of MSRA's tags) is to map every
        token to one state, after which no token-specific gradient reaches the encoder and it
        predicts ``O`` everywhere (``docs/kbert.md``, *NER*)."""
        train = self.datasets()["train"]
        y = train._data["token"].y  # every training token of the (in-memory) split at once
        counts = torch.bincount(y[y >= 0], minlength=len(self.label_names())).double() + 1.0
        return (counts / counts.sum()).log().float()

    # ---------------------------------------------------------- loss, decode
    def loss(self, out: torch.Tensor, batch: Batch) -> torch.Tensor:
        if self.kind == "ner":
            return F.cross_entropy(out, batch["token"].y, ignore_index=IGNORE_INDEX)
        return F.cross_entropy(out, batch.y)

    def decode(self, out: torch.Tensor, batch: Batch) -> list[dict[str, Any]]:
        if self.kind == "ner":
            return self._decode_tags(out, batch)
        labels = self.label_names()
        probs = out.detach().float().softmax(-1)
        best, pred = probs.max(-1)
        y = getattr(batch, "y", None)
        gold = y.tolist() if y is not None else [None] * len(pred)
        positive = labels.index(self.positive_label) if self.positive_label in labels else None
        rows = []
        for i, (p, conf, g) in enumerate(zip(pred.tolist(), best.tolist(), gold, strict=True)):
            row = {"pred": labels[p], "gold": labels[g] if g is not None else None, "prob": conf}
            if positive is not None:
                row["score"] = float(probs[i, positive])
            rows.append(row)
        return rows

    def _decode_tags(self, out: torch.Tensor, batch: Batch) -> list[dict[str, Any]]:
        """Tags of the original characters: branch tokens are skipped, a character cut by
        truncation (or whitespace) is predicted ``O``."""
        labels = self.label_names()
        tok = batch["token"]
        num_graphs = batch.num_graphs if isinstance(batch, Batch) else 1
        graph = tok.batch if "batch" in tok else torch.zeros(tok.num_nodes, dtype=torch.long, device=out.device)
        probs = out.detach().float().softmax(-1)
        conf, pred = probs.max(-1)
        num_chars = batch.num_chars.view(-1)
        start = torch.cumsum(num_chars, 0) - num_chars
        trunk = tok.char_index >= 0
        outside = labels.index("O") if "O" in labels else 0
        chars = torch.full((int(num_chars.sum()),), outside, dtype=torch.long, device=out.device)
        chars[start[graph[trunk]] + tok.char_index[trunk]] = pred[trunk]
        mean_conf = torch.zeros(num_graphs, device=out.device).index_add_(0, graph[trunk], conf[trunk])
        mean_conf = mean_conf / torch.bincount(graph[trunk], minlength=num_graphs).clamp(min=1)
        sizes = num_chars.tolist()
        preds = chars.split(sizes)
        tags = getattr(batch, "tags", None)
        golds = tags.split(sizes) if tags is not None else [None] * num_graphs
        return [{"pred": [labels[t] for t in p.tolist()],
                 "gold": [labels[t] for t in g.tolist()] if g is not None else None,
                 "prob": float(c)} for p, g, c in zip(preds, golds, mean_conf.tolist(), strict=True)]


def _count_lines(path: Path) -> int:
    with open(path, encoding="utf-8") as f:
        return sum(1 for _ in f)
