"""K-BERT: sentence classification, sentence-pair classification and NER over sentence trees.

Recipe keys: :class:`~graphmatch.tasks.kbert_keys.KBertData` and
:class:`~graphmatch.tasks.kbert_keys.KBertModel` (declared without torch, :mod:`graphmatch.tasks.keys`;
every key, its default and allowed values: ``docs/recipes.md``). Ablations: ``data.kg: null`` (no knowledge),
``model.visible_matrix: false`` (full attention over the injected sequence),
``model.soft_positions: false`` (hard positions 0..L-1).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch_geometric.data import Batch, Dataset, HeteroData

from graphmatch.checkpoints import resolve_checkpoint
from graphmatch.data.batching import CollatedGraphs, gather_batch
from graphmatch.data.kbert import KINDS, check_files, dataset_kind, tree_builder
from graphmatch.data.kbert_options import TreeOptions
from graphmatch.data.labels import positive_label
from graphmatch.datafiles import locate
from graphmatch.graphs.branch_selection import BranchSelection
from graphmatch.graphs.kbert import IGNORE_INDEX, SentenceTreeBuilder, dense_inputs, mask_matched_words
from graphmatch.graphs.kbert_corpus import InputError, TreeCorpusBuilder, collated_coverage
from graphmatch.knowledge import BUILTIN_KGS, resolve_kg
from graphmatch.models.kbert import KBert
from graphmatch.nn.loss_precision import fp32_logits
from graphmatch.tasks.base import Task, register
from graphmatch.tasks.kbert_keys import BACKENDS, KBertData, KBertKeys, KBertModel  # noqa: F401 - re-exported
from graphmatch.tasks.knowledge_selection import branch_selection, selection_lines
from graphmatch.text.checkpoint import tokenization_of, tokenizer_for, vocab_size
from graphmatch.text.sentencepiece import is_sentencepiece
from graphmatch.text.wordpiece import WordPieceTokenizer


@register
class KBertTask(KBertKeys, Task):
    """K-BERT (Liu et al., AAAI 2020) on its classification, pair and NER datasets."""

    DESCRIBED_KEYS = ("data.dataset", "data.kg", "model.pretrained", "model.hidden_size", "model.num_layers")

    def __init__(self, config: dict[str, Any]):
        super().__init__(config)
        m = self.model
        # resolved once (a folder, UER checkpoint, minilm, hub id or a run's stored encoder) and passed down
        self.pretrained = resolve_checkpoint(m.pretrained) if m.pretrained is not None else None
        #: ``classification``, ``pair`` or ``ner``: a checkpoint's (:meth:`set_extra_state`), else read from
        #: the training file's header on first use (:attr:`kind`), so that prediction needs no dataset
        self._kind: str | None = None
        self.labels: list[str] | None = None  # from a checkpoint, or the training split's (label_names)
        self._vocab_tokenization: tuple[str, bool] | None = None  # vocab_tokenization(): read once
        self._tree_options: TreeOptions | None = None
        self._train: Dataset | None = None
        self._builder: SentenceTreeBuilder | None = None
        self._selection: BranchSelection | None = None
        self._mask_id: int | None = None  # the vocabulary's mask token (data.entity_mask)

    @property
    def kind(self) -> str:
        """The data's kind: the checkpoint's, else the dataset's (:func:`~graphmatch.data.kbert.dataset_kind`)."""
        if self._kind is None:
            self._set_kind(dataset_kind(self.data.dataset, self.data.root))
        return self._kind

    def _set_kind(self, kind: str) -> None:
        if self.model.pair_encoding == "separate" and kind != "pair":
            raise ValueError(f"model.pair_encoding: separate reads the two texts of a pair apart; {self.data.dataset} "
                             f"is {'an NER' if kind == 'ner' else 'a single-sentence'} dataset (use joint)")
        self._kind = kind

    @property
    def metrics(self) -> tuple[Any, ...]:
        """NER: entity F1; pairs: accuracy and the F1 of the positive class (data.positive_label, else "1")."""
        if self.kind == "ner":
            return ("ner_f1", "accuracy")
        if self.kind == "pair":
            positive = self.data.positive_label
            return ("accuracy", "f1" if positive is None else ("f1", {"positive": str(positive)}))
        return ("accuracy",)

    @property
    def monitor(self) -> str:
        return "ner_f1" if self.kind == "ner" else "accuracy"

    # ----------------------------------------------------------------- data
    def vocab_path(self) -> Path:
        d = self.data
        if d.vocab is not None:
            return Path(d.vocab)
        if self.pretrained is not None and self.pretrained.vocab is not None:
            return self.pretrained.vocab
        if self.pretrained is not None:
            spm = self.pretrained.folder / "tokenizer.json"
            if spm.is_file() and is_sentencepiece(spm):
                return spm
            raise FileNotFoundError(f"model.pretrained: no vocab.txt in the checkpoint folder {self.pretrained.folder} "
                                    "(K-BERT reads a BERT vocabulary or a SentencePiece tokenizer.json; or give "
                                    "data.vocab)")
        return locate("kbert/vocab/google_vocab.txt", d.root)

    def vocab_tokenization(self) -> tuple[str, bool]:
        """How the vocabulary is read, ``(tokenization, lowercase)`` (``chars``, ``wordpiece`` or
        ``sentencepiece``): ``data.tokenization`` (``auto``: what the vocabulary
        is, :func:`~graphmatch.text.checkpoint.tokenization_of`); lower case as the checkpoint's
        ``tokenizer_config.json`` says. Word pieces with NER data are a one-line error. The vocabulary
        is read once per task (every split and the builder ask)."""
        if self._vocab_tokenization is None:
            kind = tokenization_of(self.vocab_path(), self.data.tokenization, tagging=self.kind == "ner")
            if kind in ("wordpiece", "sentencepiece") and self.kind == "ner":
                what = "word-piece" if kind == "wordpiece" else "SentencePiece"
                raise ValueError(f"data.tokenization: {self.vocab_path()} is a {what} vocabulary, and K-BERT NER "
                                 f"({self.data.dataset}) tags characters; use a character vocabulary for NER")
            lowercase = WordPieceTokenizer.lowercase_of(self.pretrained.folder) if self.pretrained is not None else True
            self._vocab_tokenization = kind, lowercase
        return self._vocab_tokenization

    def selection(self) -> BranchSelection | None:
        """``data.select``'s branch selection (one for all splits: each text is embedded once), or
        ``None`` for K-BERT's injection."""
        if self._selection is None:
            self._selection = branch_selection(self.data.select, self.pretrained, self.recipe.train.progress,
                                               self.data.text_prefix or "")
        return self._selection

    @property
    def tree_options(self) -> TreeOptions:
        """What every sentence tree of this task is built with (the datasets' and :meth:`builder`'s),
        made once from the ``data`` section, the data's kind and the vocabulary's tokenization."""
        if self._tree_options is None:
            tokenization, lowercase = self.vocab_tokenization()
            options = TreeOptions.of(self.data, kind=self.kind, tokenization=tokenization, lowercase=lowercase)
            tags = int(options.builder_options()["add_cls"])
            if self.data.max_length <= tags:
                raise ValueError(f"data.max_length={self.data.max_length} holds only the [CLS] tag and no text "
                                 f"token: give at least {tags + 1}")
            self._tree_options = options
        return self._tree_options

    def _common(self) -> dict[str, Any]:
        d = self.data
        return dict(root=d.root, cache=d.cache_dir, kg=d.kg, vocab=self.vocab_path(),
                    progress=self.recipe.train.progress, selection=self.selection(), options=self.tree_options)

    def train_split(self) -> Dataset:
        """The training split, built (or read from its cache) once; its labels are the task's."""
        if self._train is None:
            self._train = KINDS[self.kind](self.data.dataset, "train", limit=self.data.limit.count("train"),
                                           **self._common())
        return self._train

    def datasets(self) -> dict[str, Dataset]:
        """The three splits; a dataset folder's files are all checked first, before any graph is
        built (:func:`~graphmatch.data.kbert.check_files`)."""
        data_kind = dataset_kind(self.data.dataset, self.data.root)
        if data_kind != self.kind:  # a checkpoint's kind (set_extra_state) against the data's
            raise ValueError(f"the checkpoint holds a model of {self.kind} data; data.dataset={self.data.dataset!r} "
                             f"is {data_kind} data: evaluate it on {self.kind} data")
        limits = {split: self.data.limit.count(split) for split in ("train", "dev", "test")}
        check_files(self.data.dataset, self.kind, self.data.root, limits)
        train = self.train_split()
        if self.labels is not None and list(train.labels) != self.labels:
            raise ValueError(f"the labels of the data ({list(train.labels)}) differ from the checkpoint's "
                             f"({self.labels})")
        labels = self.label_names()
        out: dict[str, Dataset] = {"train": train}
        for split in ("dev", "test"):
            out[split] = KINDS[self.kind](self.data.dataset, split, labels=labels,
                                          limit=self.data.limit.count(split), **self._common())
        return out

    def report(self, datasets: dict[str, Dataset]) -> list[str]:
        """The knowledge coverage of each split, one line: the share of sentences with at least one
        branch and the branches per sentence (:func:`~graphmatch.graphs.kbert_corpus.collated_coverage`);
        and a second line, :meth:`Coverage.warning <graphmatch.graphs.kbert_core.Coverage.warning>`,
        when the graph matched almost nothing of the training split (the wrong language?)."""
        if self.data.kg is None or str(self.data.kg).lower() in ("none", "null", "") or self.data.max_entities == 0:
            return []
        coverage = {split: collated_coverage(ds.slices) for split, ds in datasets.items() if ds is not None}
        parts = [f"{split} {100 * c.share:.1f} % of {c.inputs:,} with a branch, {c.per_input:.2f} branches per "
                 f"sentence" for split, c in coverage.items()]
        kg = Path(str(self.data.kg)).name  # a built-in name, or the .spo file's
        lines = [f"knowledge coverage ({kg}): " + "; ".join(parts)]
        warning = coverage["train"].warning(kg) if "train" in coverage else None
        return lines + ([f"warning: {warning}"] if warning else []) + selection_lines(self.data.select.by, datasets)

    def label_names(self) -> list[str]:
        """The labels (tags) of a checkpoint (:meth:`set_extra_state`), else of the training split
        (built for this; dev and test are not)."""
        if self.labels is None:
            self.labels = self._checked(self.train_split().labels)
        return list(self.labels)

    def get_extra_state(self) -> dict[str, Any]:
        return {"labels": self.label_names(), "kind": self.kind}

    def set_extra_state(self, state: dict[str, Any]) -> None:
        if self._kind is None and state.get("kind") is not None:  # restored: the data folder is not read
            self._set_kind(state["kind"])
        if state.get("kind", self.kind) != self.kind:
            raise ValueError(f"the checkpoint holds a model of {state['kind']} data; data.dataset="
                             f"{self.data.dataset!r} is {self.kind} data: evaluate it on {state['kind']} data")
        self.labels = self._checked(state["labels"])

    def _checked(self, labels: list[str]) -> list[str]:
        """``labels``, after checking that a pair dataset's positive class is one of them."""
        if self.kind == "pair":
            positive_label(labels, self.data.positive_label)
        return list(labels)

    @property
    def positive_label(self) -> str | None:
        """The class whose probability rows carry as ``score``: the positive class of pairs, class
        ``"1"`` of a classification with one, else None."""
        labels = self.label_names()
        if self.kind == "pair":
            return positive_label(labels, self.data.positive_label)
        return "1" if self.kind == "classification" and "1" in labels else None

    def builder(self, keep_text: bool = False) -> SentenceTreeBuilder:
        """The sentence-tree builder of this configuration (the one the datasets use)."""
        if self._builder is None or self._builder.keep_text != keep_text:
            d = self.data
            options = self.tree_options.builder_options(self.label_names())
            self._builder = tree_builder(resolve_kg(d.kg, d.root), self.vocab_path(), options,
                                         keep_text=keep_text, selection=self.selection())
        return self._builder

    def input_files(self) -> dict[str, str]:
        """The knowledge graph and the vocabulary (identified in the run folder by path and sha256)."""
        kg = resolve_kg(self.data.kg, self.data.root)
        return {**({"kg": str(kg)} if kg is not None else {}), "vocab": str(self.vocab_path())}

    def used(self) -> str:
        """The encoder (pretrained, or its size from scratch), the knowledge graph and the dataset."""
        m, d = self.model, self.data
        encoder = m.pretrained or f"from scratch ({m.num_layers} layers, hidden {m.hidden_size})"
        return f"K-BERT, encoder {encoder}, knowledge {d.kg or 'none'}; data: {d.dataset}"

    def user_files(self) -> dict[str, str]:
        """A ``.spo`` file given as ``data.kg`` (not a built-in name) and a ``data.vocab`` file."""
        kg = self.data.kg
        own_kg = kg is not None and str(kg).lower() not in ("none", "null", "", *BUILTIN_KGS)
        return {**({"kg": "data.kg"} if own_kg else {}), **({"vocab": "data.vocab"} if self.data.vocab else {})}

    def knowledge_graph(self) -> str | None:
        """The KG's path, when branches hang on the tree (``data.knowledge_as: text`` has none to probe)."""
        kg = resolve_kg(self.data.kg, self.data.root)
        return None if kg is None or self.data.knowledge_as != "tree" else str(kg)

    def probe_batch(self, model: torch.nn.Module, batch: Batch) -> dict[str, Any]:
        """The model's output with its branches and with every branch token cut out of the
        visibility and the pooling (no token sees one, none is pooled: with soft positions, the
        model on the trunk alone), the attention weights with them (:meth:`Task.probe_batch`)."""
        d = dense_inputs(batch)
        branch, real = d["branch"], d["token_mask"]
        args = (d["input_ids"], d["pos"], d["seg"])
        out, weights = model.forward_dense(*args, real, d["visible"], return_attention_weights=True, branch=branch)
        cut = d["visible"] & ~branch.unsqueeze(1) & ~branch.unsqueeze(2)
        out_cut = model.forward_dense(*args, real & ~branch, cut, branch=branch)
        if model.tagging:  # one row per real token: the cut model's rows go to the trunk tokens
            out_cut = out.clone().index_put_(((~branch)[real].nonzero().squeeze(1),), out_cut)
        if not all(isinstance(w, torch.Tensor) for w in weights):
            weights = None  # the sparse attention path keeps no dense weights
        word = batch["word"]
        graph = word.batch.tolist() if "batch" in word else [0] * word.num_nodes
        spans: list[list[tuple[int, int]]] = [[] for _ in range(len(branch))]
        for g, (lo, hi) in zip(graph, word.span.tolist(), strict=True):
            spans[g].append((lo, hi))
        return {"out": out, "out_cut": out_cut, "branch": branch, "token_mask": real, "visible": d["visible"],
                "weights": weights, "spans": spans}

    def input_columns(self) -> tuple[str, ...]:
        """The dataset files' columns: ``label, text_a`` (classification), ``text_a, text_b, label``
        (pairs), ``text_a, label`` (NER)."""
        return {"pair": ("text_a", "text_b", "label"), "ner": ("text_a", "label")}.get(self.kind, ("label", "text_a"))

    def dataset_fields(self, fields: Sequence[str]) -> tuple[str, ...]:
        """An NER file's space-separated characters joined into the text (as its dataset reads them)."""
        return tuple(field.replace(" ", "") for field in fields) if self.kind == "ner" else tuple(fields)

    def input_fields(self, fields: Sequence[str]) -> tuple[str, ...]:
        """Two columns (text_a, text_b) for a pair model, else one (the text)."""
        expected = 2 if self.kind == "pair" else 1
        if len(fields) != expected:
            raise ValueError(f"{len(fields)} columns; this {self.kind} model takes "
                             f"{'2 (text_a, text_b)' if expected == 2 else '1 (the text)'}")
        return tuple(fields)

    def encode_for_prediction(self, text: str, text_b: str | None = None) -> tuple[HeteroData, dict[str, Any]]:
        """The graph, and the branches K-BERT injected into it (``entities``)."""
        data = self.encode(text, text_b, keep_text=True)
        entities = list(data["entity"].text) if "text" in data["entity"] else []
        for store in data.node_stores:
            if "text" in store:
                del store["text"]
        return data, {"entities": entities}

    def encode_many(self, inputs: Sequence[tuple[str, str | None]]
                    ) -> tuple[Sequence[HeteroData], list[dict[str, Any]]]:
        """Every input's graph built in one vectorised pass
        (:class:`~graphmatch.graphs.kbert_corpus.TreeCorpusBuilder`, the builder of
        :meth:`encode_for_prediction`), kept collated (:class:`~graphmatch.data.batching.CollatedGraphs`),
        and the branches injected into each (``entities``)."""
        if not inputs:
            return [], []
        for i, (_, text_b) in enumerate(inputs):
            try:
                self._check_pair(text_b)
            except ValueError as err:
                raise InputError(i, str(err)) from err
        texts_a = [text for text, _ in inputs]
        texts_b = [text_b for _, text_b in inputs] if self.kind == "pair" else None
        data, slices = TreeCorpusBuilder(self.builder(keep_text=True))(texts_a, texts_b)
        texts = data["entity"].text if "text" in data["entity"] else [[] for _ in texts_a]
        for store in data.node_stores:
            if "text" in store:
                del store["text"]
                del slices[store._key]["text"]
        if self.kind == "ner":
            data.num_chars = torch.tensor([len(text) for text in texts_a])
            slices["num_chars"] = torch.arange(len(texts_a) + 1)
        return CollatedGraphs(data, slices), [{"entities": list(entities)} for entities in texts]

    def _check_pair(self, text_b: str | None) -> None:
        if self.kind == "pair" and text_b is None:
            raise ValueError("this K-BERT model classifies sentence pairs: give text_b too")
        if self.kind != "pair" and text_b is not None:
            raise ValueError(f"this K-BERT model ({self.kind}) takes one text, not a pair")

    def encode_with_text(self, text: str, text_b: str | None = None) -> HeteroData:
        return self.encode(text, text_b, keep_text=True)

    def encode(self, text: str, text_b: str | None = None, keep_text: bool = False) -> HeteroData:
        self._check_pair(text_b)
        data = self.builder(keep_text)(text, text_b)
        if self.kind == "ner":
            data.num_chars = torch.tensor([len(text)])
        return data

    # ---------------------------------------------------------------- model
    def _encoder_config(self):
        from graphmatch.nn.mask_transformer import MaskTransformerConfig

        m = self.model
        overrides = dict(hidden_dropout_prob=m.dropout, attention_probs_dropout_prob=m.attention_dropout,
                         attention_mode=m.attention_mode, sparse_threshold=m.sparse_threshold)
        if m.layer_norm != "auto":
            overrides["layer_norm"] = m.layer_norm
        if self.pretrained is not None:  # UER: its LayerNorm (layer_norm="uer") comes with the config
            config = MaskTransformerConfig.from_pretrained(self.pretrained, **overrides)
        else:
            config = MaskTransformerConfig(
                vocab_size=vocab_size(self.vocab_path()), hidden_size=m.hidden_size,
                num_hidden_layers=m.num_layers, num_attention_heads=m.num_heads,
                intermediate_size=m.intermediate_size, max_position_embeddings=m.max_position, **overrides)
        if self.data.max_length > config.positions:
            raise ValueError(f"data.max_length ({self.data.max_length}) exceeds the encoder's {config.positions} "
                             f"positions (max_position_embeddings {config.max_position_embeddings}"
                             + (f", from row {config.position_offset})" if config.position_offset else ")"))
        entries = vocab_size(self.vocab_path())
        if entries > config.vocab_size:
            raise ValueError(f"the vocabulary {self.vocab_path()} has {entries} entries but the encoder "
                             f"only {config.vocab_size} token embeddings")
        return config

    def build_model(self) -> torch.nn.Module:
        m = self.model
        config = self._encoder_config()
        if m.backend == "hf":
            from graphmatch.nn.hf_bert import HFBertEncoder

            encoder: torch.nn.Module = HFBertEncoder.from_config(config, attn_implementation=m.attn_implementation)
        else:
            from graphmatch.nn.mask_transformer import MaskTransformerEncoder

            encoder = MaskTransformerEncoder(config)
        labels = self.label_names()
        pair: dict[str, Any] = {}
        if m.pair_encoding == "separate":
            if len(labels) != 2:
                raise ValueError(f"model.pair_encoding: separate tells a match from a mismatch; {self.data.dataset} "
                                 f"has {len(labels)} labels ({', '.join(labels)})")
            tokenizer = tokenizer_for(self.vocab_path(), *self.vocab_tokenization())
            pair = dict(pair_encoding="separate", match_label=labels.index(self.positive_label),
                        sep_id=tokenizer.sep_id, cls_id=tokenizer.cls_id)
        return KBert(encoder, len(labels), tagging=self.kind == "ner", pooling=m.pooling,
                     dropout=m.dropout, visible_matrix=m.visible_matrix, soft_positions=m.soft_positions,
                     head=m.head, branch_embedding=m.branch_embedding, branch_bias=m.branch_bias, **pair)

    def encoder_parameters(self, model: torch.nn.Module) -> list[torch.nn.Parameter]:
        return list(model.encoder.parameters())

    def encoder_layers(self, model: torch.nn.Module) -> list[list[torch.nn.Parameter]]:
        """The encoder's embeddings and layers, bottom to top (``optim.layer_decay``)."""
        return model.encoder.layer_groups()

    def init_weights(self, model: torch.nn.Module) -> None:
        """Weights of ``model.pretrained`` (a local HF BERT folder or ``minilm``) into the encoder,
        strictly (:mod:`graphmatch.nn.pretrained`): a missing or unexpected weight is an error; for NER
        with ``model.tag_prior``, the tag layer's bias from the training tags (:meth:`tag_log_prior`)."""
        if self.kind == "ner" and self.model.tag_prior:
            model.init_output_bias(self.tag_log_prior())
        if self.pretrained is not None:
            ckpt = self.pretrained.checkpoint()
            if ckpt.format == "uer" and _has_uer_head(model, ckpt.state):
                model.load_uer(ckpt)  # a classifier (tagger) fine-tuned by the official code: its head too
            else:
                model.encoder.load_hf(ckpt)
        if model.match is not None:
            accuracy = self.fit_match_threshold(model)
            print(f"pair head: threshold {model.match.threshold.item():.4f}, where the cosine classifies "
                  f"{100 * accuracy:.1f} % of the first {min(512, len(self.train_split()))} training pairs best"
                  + ("" if self.model.class_weight == "none" else f" (labels weighted: {self.model.class_weight})"),
                  file=sys.stderr)

    def fit_match_threshold(self, model: KBert, pairs: int = 512) -> float:
        """``model.pair_encoding: separate``: the cosine head's threshold where it classifies the first
        ``pairs`` training pairs best, as the encoder reads them now (before training), each pair
        counted with its label's ``model.class_weight``; returns that (weighted) accuracy."""
        w = self.class_weights()
        weight = (1.0, 1.0) if w is None else (float(w[1 - model.match_label]), float(w[model.match_label]))
        return model.match.fit_threshold(*self.match_cosines(model, self.train_split(), pairs), weight=weight)

    @staticmethod
    def match_cosines(model: KBert, dataset: Dataset, limit: int | None = None,
                      batch_size: int = 64) -> tuple[torch.Tensor, torch.Tensor]:
        """``model.pair_encoding: separate``: the cosine of each pair's two texts (``[N]``, eval
        mode) and whether the pair matches, over the first ``limit`` pairs of ``dataset``."""
        n = len(dataset) if limit is None else min(limit, len(dataset))
        was_training = model.training
        model.eval()
        cos, match = [], []
        with torch.no_grad():
            for start in range(0, n, batch_size):
                batch = gather_batch(dataset, range(start, min(start + batch_size, n)))
                cos.append(model.match_cosine(batch))
                match.append(batch.y == model.match_label)
        model.train(was_training)
        return torch.cat(cos), torch.cat(match)

    def tag_log_prior(self) -> torch.Tensor:
        """Log frequency of each tag over the training tokens (add-one smoothed), ``[num_tags]``.

        Starting the tagger from this bias keeps a model trained from scratch from collapsing: with
        a zero bias the quickest way to the tag prior (``O`` is 89 % of MSRA's tags) is to map every
        token to one state, after which no token-specific gradient reaches the encoder and it
        predicts ``O`` everywhere (``docs/kbert.md``, *NER*)."""
        y = self.train_split().label_ids()  # every training token of the split at once
        counts = torch.bincount(y[y >= 0], minlength=len(self.label_names())).double() + 1.0
        return (counts / counts.sum()).log().float()

    # ---------------------------------------------------------- loss, decode
    def training_batch(self, batch: Batch) -> Batch:
        """``data.entity_mask``: the trunk tokens of matched words (with a kept branch) masked at
        random, their branches visible (:func:`~graphmatch.graphs.kbert.mask_matched_words`); training only."""
        if self.data.entity_mask <= 0:
            return batch
        if self._mask_id is None:
            self._mask_id = tokenizer_for(self.vocab_path(), *self.vocab_tokenization()).mask_id
        return mask_matched_words(batch, self.data.entity_mask, self._mask_id)

    def training_labels(self) -> torch.Tensor:
        return self.train_split().label_ids()

    def loss(self, out: torch.Tensor, batch: Batch) -> torch.Tensor:
        """Cross-entropy, weighted per label as ``model.class_weight`` says (NER: per tag)."""
        out = fp32_logits(out)  # fp32 under mixed precision
        weight = self.class_weights()
        weight = None if weight is None else weight.to(out)
        if self.kind == "ner":
            return F.cross_entropy(out, batch["token"].y, weight=weight, ignore_index=IGNORE_INDEX)
        return F.cross_entropy(out, batch.y, weight=weight)

    def decode(self, out: torch.Tensor, batch: Batch) -> list[dict[str, Any]]:
        if self.kind == "ner":
            return self._decode_tags(out, batch)
        labels = self.label_names()
        probs = out.detach().float().softmax(-1)
        best, pred = probs.max(-1)
        y = getattr(batch, "y", None)
        gold = y.tolist() if y is not None else [None] * len(pred)
        score = self.positive_label
        positive = labels.index(score) if score is not None else None
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


def _has_uer_head(model: KBert, state: dict[str, torch.Tensor]) -> bool:
    """Whether ``state`` holds the model's head under the official code's names, shapes included."""
    if model.head != "uer":
        return False
    own = model.state_dict()
    head = {ours: name for ours, name in model.uer_names().items() if not ours.startswith("encoder.")}
    return bool(head) and all(name in state and state[name].shape == own[ours].shape for ours, name in head.items())


