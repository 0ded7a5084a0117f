"""K-BERT: sentence classification, sentence-pair classification and NER over sentence trees.

Recipe keys: :class:`~graphmatch.tasks.kbert_keys.KBertData` and
:class:`~graphmatch.tasks.kbert_keys.KBertModel` (declared without torch, :mod:`graphmatch.tasks.keys`;
every key, its default and allowed values: ``docs/recipes.md``). Ablations: ``data.kg: null`` (no knowledge),
``model.visible_matrix: false`` (full attention over the injected sequence),
``model.soft_positions: false`` (hard positions 0..L-1).

One class per kind of data, chosen once from ``data.dataset`` when the task is made
(:func:`~graphmatch.data.kbert.dataset_kind`): ``KBertTask(config)`` is the class :data:`KINDS_OF_TASK`
holds for that kind, :class:`KBertClassificationTask`, :class:`KBertPairTask` or :class:`KBertNERTask`;
recipes and run folders keep saying ``task: kbert``. :class:`KBertTask` holds what they share: the
vocabulary, the trees, the encoder and the checkpoint.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import torch
import torch.nn.functional as F
from torch_geometric.data import Batch, Dataset, HeteroData

from graphmatch.data.batching import CollatedGraphs, gather_batch
from graphmatch.data.file_split import split_line
from graphmatch.data.kbert import KINDS, check_files, data_lines, dataset_kind, tree_builder
from graphmatch.data.labels import positive_label
from graphmatch.errors import InputError
from graphmatch.graphs.branch_selection import BranchSelection
from graphmatch.graphs.kbert import IGNORE_INDEX, SentenceTreeBuilder, dense_inputs, mask_matched_words
from graphmatch.graphs.kbert.corpus import TreeCorpusBuilder, collated_coverage
from graphmatch.graphs.kbert.options import TreeOptions
from graphmatch.io.datafiles import locate
from graphmatch.knowledge import is_own_kg, resolve_kg
from graphmatch.models.kbert import KBert, KBertConfig
from graphmatch.nn.loss_precision import fp32_logits
from graphmatch.pretrained import resolve_pretrained
from graphmatch.tasks.base import Task, register
from graphmatch.tasks.kbert_keys import BACKENDS, KBertData, KBertKeys, KBertModel  # noqa: F401 - re-exported
from graphmatch.tasks.keys import split_of
from graphmatch.tasks.knowledge_selection import branch_selection, selection_lines
from graphmatch.tasks.recipes.sections import Recipe
from graphmatch.text.pretrained import tokenization_of, tokenizer_for, vocab_size
from graphmatch.text.sentencepiece import is_sentencepiece
from graphmatch.text.wordpiece import WordPieceTokenizer

T = TypeVar("T", bound="KBertTask")

#: the kind of data (:func:`~graphmatch.data.kbert.dataset_kind`) -> its task class (filled by :func:`kind`)
KINDS_OF_TASK: dict[str, type[KBertTask]] = {}


def kind(name: str) -> Callable[[type[T]], type[T]]:
    """Class decorator: the K-BERT task of data of kind ``name``."""

    def add(cls: type[T]) -> type[T]:
        cls.kind = name
        KINDS_OF_TASK[name] = cls
        return cls

    return add


@register
class KBertTask(KBertKeys, Task):
    """K-BERT (Liu et al., AAAI 2020) on its classification, pair and NER datasets: what the three
    share. ``KBertTask(config)`` makes the class of the data's kind (:meth:`kind_of`)."""

    #: the kind of data this class reads (set by :func:`kind`)
    kind: ClassVar[str]
    #: the dataset's columns, in file order
    columns: ClassVar[tuple[str, ...]] = ("label", "text_a")
    #: how the data are named in messages
    described: ClassVar[str] = "a single-sentence"

    def __new__(cls, config: Recipe | Mapping[str, Any] | None = None):
        if cls is KBertTask and config is not None:  # the one place the kind is chosen
            data = Recipe.of(config, cls).data
            with contextlib.suppress(ValueError, OSError):  # no data to read (a moved run): the checkpoint says
                cls = cls.kind_of(dataset_kind(data.dataset, data.root, split_of(data.split)))
        return super().__new__(cls)

    @staticmethod
    def kind_of(name: str) -> type[KBertTask]:
        """The task class of data of kind ``name`` (a one-line error naming the registered kinds)."""
        if name not in KINDS_OF_TASK:
            raise ValueError(f"data.dataset: K-BERT has no task for {name!r} data; registered: "
                             f"{', '.join(sorted(KINDS_OF_TASK))}")
        return KINDS_OF_TASK[name]

    DESCRIBED_KEYS = ("data.dataset", "data.kg", "model.pretrained", "model.hidden_size", "model.num_layers")

    def __init__(self, config: dict[str, Any]):
        super().__init__(config)
        m = self.model
        # resolved once (a folder, UER checkpoint, minilm, hub id or a run's stored encoder) and passed down
        self.pretrained = resolve_pretrained(m.pretrained) if m.pretrained is not None else None
        if type(self) is not KBertTask:  # else once a checkpoint names the kind (_become)
            self.check_pair_encoding()
        self.labels: list[str] | None = None  # from a checkpoint, or the training split's (label_names)
        self._vocab_tokenization: tuple[str, bool] | None = None  # vocab_tokenization(): read once
        self._tree_options: TreeOptions | None = None
        self._train: Dataset | None = None
        self._builder: SentenceTreeBuilder | None = None
        self._selection: BranchSelection | None = None
        self._mask_id: int | None = None  # the vocabulary's mask token (data.entity_mask)

    def check_pair_encoding(self) -> None:
        """``model.pair_encoding: separate`` reads a pair's two texts apart: only pairs have them."""
        if self.model.pair_encoding == "separate":
            raise ValueError(f"model.pair_encoding: separate reads the two texts of a pair apart; {self.data.dataset} "
                             f"is {self.described} dataset (use joint)")

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
        is, :func:`~graphmatch.text.pretrained.tokenization_of`); lower case as the checkpoint's
        ``tokenizer_config.json`` says. Word pieces with NER data are a one-line error. The vocabulary
        is read once per task (every split and the builder ask)."""
        if self._vocab_tokenization is None:
            kind = self.checked_tokenization(tokenization_of(self.vocab_path(), self.data.tokenization,
                                                             tagging=self.tags_tokens))
            lowercase = WordPieceTokenizer.lowercase_of(self.pretrained.folder) if self.pretrained is not None else True
            self._vocab_tokenization = kind, lowercase
        return self._vocab_tokenization

    #: one label per token (NER) rather than per input
    tags_tokens: ClassVar[bool] = False

    def checked_tokenization(self, tokenization: str) -> str:
        """The vocabulary's tokenization, after checking that this kind of data can use it (any)."""
        return tokenization

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
            tags = int(options.add_cls)
            if self.data.max_length <= tags:
                raise ValueError(f"data.max_length={self.data.max_length} holds only the [CLS] tag and no text "
                                 f"token: give at least {tags + 1}")
            self._tree_options = options
        return self._tree_options

    def _common(self) -> dict[str, Any]:
        d = self.data
        return dict(root=d.root, cache=d.cache_dir, kg=d.kg, vocab=self.vocab_path(), split_of=split_of(d.split),
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
        split = split_of(self.data.split)
        data_kind = dataset_kind(self.data.dataset, self.data.root, split)  # the data's own error when they are gone
        if type(self) is KBertTask:
            self._become(data_kind)
        self.check_kind(data_kind, "data.dataset")
        limits = {split: self.data.limit.count(split) for split in ("train", "dev", "test")}
        check_files(self.data.dataset, self.kind, self.data.root, limits, split)
        train = self.train_split()
        if self.labels is not None and list(train.labels) != self.labels:
            raise ValueError(f"the labels of the data ({list(train.labels)}) differ from the checkpoint's "
                             f"({self.labels})")
        labels = self.label_names()
        out: dict[str, Dataset] = {"train": train}
        for part in ("dev", "test"):
            out[part] = KINDS[self.kind](self.data.dataset, part, labels=labels,
                                         limit=self.data.limit.count(part), **self._common())
        if split is not None:
            print(split_line(train.source, len(data_lines(train.source, train.required)), split), file=sys.stderr)
        return out

    def report(self, datasets: dict[str, Dataset]) -> list[str]:
        """The knowledge coverage of each split, one line: the share of sentences with at least one
        branch and the branches per sentence (:func:`~graphmatch.graphs.kbert.collated_coverage`);
        and a second line, :meth:`Coverage.warning <graphmatch.graphs.kbert.Coverage.warning>`,
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

    def check_kind(self, kind: str, where: str) -> None:
        """A one-line error when ``kind`` (the data's or a checkpoint's) is not this task's."""
        if kind != self.kind:
            model, data = (kind, self.kind) if where == "the checkpoint" else (self.kind, kind)
            raise ValueError(f"the checkpoint holds a model of {model} data; data.dataset={self.data.dataset!r} is "
                             f"{data} data: evaluate it on {model} data")

    def _become(self, kind: str) -> None:
        """A task made without its data (a moved run) takes the class of ``kind``, then its checks."""
        self.__class__ = self.kind_of(kind)
        self.check_pair_encoding()

    def set_extra_state(self, state: dict[str, Any]) -> None:
        if type(self) is KBertTask:  # made without its data: the checkpoint says which kind it reads
            self._become(state["kind"])
        self.check_kind(state.get("kind", self.kind), "the checkpoint")
        self.labels = self._checked(state["labels"])

    def _checked(self, labels: list[str]) -> list[str]:
        """``labels``, after the checks of this kind of data (a pair dataset's positive class is one of them)."""
        return list(labels)

    @property
    def positive_label(self) -> str | None:
        """The class whose probability rows carry as ``score``: the positive class of pairs, class
        ``"1"`` of a classification with one, else None."""
        return None

    def builder(self, keep_text: bool = False) -> SentenceTreeBuilder:
        """The sentence-tree builder of this configuration (the one the datasets use)."""
        if self._builder is None or self._builder.keep_text != keep_text:
            d = self.data
            labels = self.label_names() if self.tree_options.ner else None
            self._builder = tree_builder(resolve_kg(d.kg, d.root), self.vocab_path(), self.tree_options, labels=labels,
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
        return {**({"kg": "data.kg"} if is_own_kg(self.data.kg) else {}),
                **({"vocab": "data.vocab"} if self.data.vocab else {})}

    def branch_kg(self) -> str | None:
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
        out_cut = self.cut_rows(out, model.forward_dense(*args, real & ~branch, cut, branch=branch), branch, real)
        if not all(isinstance(w, torch.Tensor) for w in weights):
            weights = None  # the sparse attention path keeps no dense weights
        word = batch["word"]
        graph = word.batch.tolist() if "batch" in word else [0] * word.num_nodes
        spans: list[list[tuple[int, int]]] = [[] for _ in range(len(branch))]
        for g, (lo, hi) in zip(graph, word.span.tolist(), strict=True):
            spans[g].append((lo, hi))
        return {"out": out, "out_cut": out_cut, "branch": branch, "token_mask": real, "visible": d["visible"],
                "weights": weights, "spans": spans}

    @staticmethod
    def cut_rows(out: torch.Tensor, out_cut: torch.Tensor, branch: torch.Tensor, real: torch.Tensor) -> torch.Tensor:
        """The output of the model without its branches, as :meth:`probe_batch` returns it (one row per input)."""
        return out_cut

    def input_columns(self) -> tuple[str, ...]:
        """The dataset files' columns: ``label, text_a`` (classification), ``text_a, text_b, label``
        (pairs), ``text_a, label`` (NER)."""
        return self.columns

    def dataset_fields(self, fields: Sequence[str]) -> tuple[str, ...]:
        """A row's fields as its dataset reads them."""
        return tuple(fields)

    #: the text columns of one input, as messages name them
    input_texts: ClassVar[tuple[str, ...]] = ("the text",)

    def input_fields(self, fields: Sequence[str]) -> tuple[str, ...]:
        """Two columns (text_a, text_b) for a pair model, else one (the text)."""
        if len(fields) != len(self.input_texts):
            raise ValueError(f"{len(fields)} columns; this {self.kind} model takes "
                             f"{len(self.input_texts)} ({', '.join(self.input_texts)})")
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
        (:class:`~graphmatch.graphs.kbert.TreeCorpusBuilder`, the builder of
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
        texts_b = self.second_texts([text_b for _, text_b in inputs])
        data, slices = TreeCorpusBuilder(self.builder(keep_text=True))(texts_a, texts_b)
        texts = data["entity"].text if "text" in data["entity"] else [[] for _ in texts_a]
        for store in data.node_stores:
            if "text" in store:
                del store["text"]
                del slices[store._key]["text"]
        self.add_lengths(data, texts_a, slices)
        return CollatedGraphs(data, slices), [{"entities": list(entities)} for entities in texts]

    def second_texts(self, texts_b: list[str | None]) -> list[str | None] | None:
        """What the corpus builder gets as the second texts (pairs: ``texts_b``; default none)."""
        return None

    def add_lengths(self, data: HeteroData, texts: Sequence[str], slices: dict[str, Any] | None = None) -> None:
        """What decoding needs of the inputs besides their graphs (NER: each text's length; default nothing)."""

    def _check_pair(self, text_b: str | None) -> None:
        if text_b is not None:
            raise ValueError(f"this K-BERT model ({self.kind}) takes one text, not a pair")

    def encode_with_text(self, text: str, text_b: str | None = None) -> HeteroData:
        return self.encode(text, text_b, keep_text=True)

    def encode(self, text: str, text_b: str | None = None, keep_text: bool = False) -> HeteroData:
        self._check_pair(text_b)
        data = self.builder(keep_text)(text, text_b)
        self.add_lengths(data, [text])
        return data

    # ---------------------------------------------------------------- model
    def _encoder_config(self):
        from graphmatch.nn.mask_transformer import MaskTransformerConfig

        m = self.model
        overrides = dict(hidden_dropout_prob=m.dropout, attention_probs_dropout_prob=m.attention_dropout,
                         attention_mode=m.attention_mode, sparse_threshold=m.sparse_threshold, unpadded=m.unpadded,
                         attention_fp32=m.attention_fp32)
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
        words = encoder.bert.embeddings.word_embeddings if m.backend == "hf" else encoder.embeddings.word
        words.weight.requires_grad_(not m.freeze_word_embeddings)  # left out of the optimiser when frozen
        labels = self.label_names()
        return KBert(encoder, KBertConfig(
            len(labels), tagging=self.tags_tokens, pooling=m.pooling, dropout=m.dropout,
            visible_matrix=m.visible_matrix, soft_positions=m.soft_positions, head=m.head,
            branch_embedding=m.branch_embedding, branch_bias=m.branch_bias, **self.pair_model_args()))

    def pair_model_args(self) -> dict[str, Any]:
        """The model's arguments for reading a pair's texts apart (none but for pairs)."""
        return {}

    def encoder_parameters(self, model: torch.nn.Module) -> list[torch.nn.Parameter]:
        return list(model.encoder.parameters())

    def encoder_layers(self, model: torch.nn.Module) -> list[list[torch.nn.Parameter]]:
        """The encoder's embeddings and layers, bottom to top (``optim.layer_decay``)."""
        return model.encoder.layer_groups()

    def init_weights(self, model: torch.nn.Module) -> None:
        """Weights of ``model.pretrained`` (a local HF BERT folder or ``minilm``) into the encoder,
        strictly (:mod:`graphmatch.nn.pretrained`): a missing or unexpected weight is an error; for NER
        with ``model.tag_prior``, the tag layer's bias from the training tags (:meth:`tag_log_prior`)."""
        if self.pretrained is not None:
            ckpt = self.pretrained.read_weights()
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
        return F.cross_entropy(out, batch.y, weight=None if weight is None else weight.to(out))

    def decode(self, out: torch.Tensor, batch: Batch) -> list[dict[str, Any]]:
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


def _has_uer_head(model: KBert, state: dict[str, torch.Tensor]) -> bool:
    """Whether ``state`` holds the model's head under the official code's names, shapes included."""
    if model.head != "uer":
        return False
    own = model.state_dict()
    head = {ours: name for ours, name in model.uer_names().items() if not ours.startswith("encoder.")}
    return bool(head) and all(name in state and state[name].shape == own[ours].shape for ours, name in head.items())


@kind("classification")
class KBertClassificationTask(KBertTask):
    """K-BERT sentence classification: one label per text, ``score`` the probability of class ``"1"``
    where there is one."""

    @property
    def positive_label(self) -> str | None:
        return "1" if "1" in self.label_names() else None


@kind("pair")
class KBertPairTask(KBertTask):
    """K-BERT sentence-pair classification: two texts per input, joint (one tree) or read apart by a
    cosine head (``model.pair_encoding: separate``); F1 of the positive class (``data.positive_label``,
    else ``"1"``) beside accuracy."""

    columns = ("text_a", "text_b", "label")
    input_texts = ("text_a", "text_b")

    def __init__(self, config: dict[str, Any]):
        super().__init__(config)
        positive = None if self.data.positive_label is None else str(self.data.positive_label)
        self.metrics = ("accuracy", "f1" if positive is None else ("f1", {"positive": positive}))

    def check_pair_encoding(self) -> None:
        """Either encoding reads pairs."""

    def _checked(self, labels: list[str]) -> list[str]:
        positive_label(labels, self.data.positive_label)
        return list(labels)

    @property
    def positive_label(self) -> str | None:
        return positive_label(self.label_names(), self.data.positive_label)

    def second_texts(self, texts_b: list[str | None]) -> list[str | None] | None:
        return texts_b

    def _check_pair(self, text_b: str | None) -> None:
        if text_b is None:
            raise ValueError("this K-BERT model classifies sentence pairs: give text_b too")

    def pair_model_args(self) -> dict[str, Any]:
        """``model.pair_encoding: separate``: the label that means a match and the tokens that part the texts."""
        if self.model.pair_encoding != "separate":
            return {}
        labels = self.label_names()
        if len(labels) != 2:
            raise ValueError(f"model.pair_encoding: separate tells a match from a mismatch; {self.data.dataset} "
                             f"has {len(labels)} labels ({', '.join(labels)})")
        tokenizer = tokenizer_for(self.vocab_path(), *self.vocab_tokenization())
        return dict(pair_encoding="separate", match_label=labels.index(self.positive_label),
                    sep_id=tokenizer.sep_id, cls_id=tokenizer.cls_id)


@kind("ner")
class KBertNERTask(KBertTask):
    """K-BERT NER: one tag per character (branch tokens untagged), scored by entity F1."""

    columns = ("text_a", "label")
    described = "an NER"
    tags_tokens = True
    metrics = ("ner_f1", "accuracy")
    monitor = "ner_f1"

    def checked_tokenization(self, tokenization: str) -> str:
        """Characters only: word pieces are a one-line error."""
        if tokenization in ("wordpiece", "sentencepiece"):
            what = "word-piece" if tokenization == "wordpiece" else "SentencePiece"
            raise ValueError(f"data.tokenization: {self.vocab_path()} is a {what} vocabulary, and K-BERT NER "
                             f"({self.data.dataset}) tags characters; use a character vocabulary for NER")
        return tokenization

    @staticmethod
    def cut_rows(out: torch.Tensor, out_cut: torch.Tensor, branch: torch.Tensor, real: torch.Tensor) -> torch.Tensor:
        """One row per real token: the cut model's rows go to the trunk tokens."""
        return out.clone().index_put_(((~branch)[real].nonzero().squeeze(1),), out_cut)

    def dataset_fields(self, fields: Sequence[str]) -> tuple[str, ...]:
        """An NER file's space-separated characters joined into the text (as its dataset reads them)."""
        return tuple(field.replace(" ", "") for field in fields)

    def add_lengths(self, data: HeteroData, texts: Sequence[str], slices: dict[str, Any] | None = None) -> None:
        """Each text's length in characters (``num_chars``: decoding tags every one)."""
        data.num_chars = torch.tensor([len(text) for text in texts])
        if slices is not None:
            slices["num_chars"] = torch.arange(len(texts) + 1)

    def init_weights(self, model: torch.nn.Module) -> None:
        """As :meth:`KBertTask.init_weights`, the tag layer's bias first from the training tags with
        ``model.tag_prior`` (:meth:`tag_log_prior`)."""
        if self.model.tag_prior:
            model.init_output_bias(self.tag_log_prior())
        super().init_weights(model)

    def tag_log_prior(self) -> torch.Tensor:
        """Log frequency of each tag over the training tokens (add-one smoothed), ``[num_tags]``.

        Starting the tagger from this bias keeps a model trained from scratch from collapsing: with
        a zero bias the quickest way to the tag prior (``O`` is 89 % of MSRA's tags) is to map every
        token to one state, after which no token-specific gradient reaches the encoder and it
        predicts ``O`` everywhere (``docs/kbert.md``, *NER*)."""
        y = self.train_split().label_ids()  # every training token of the split at once
        counts = torch.bincount(y[y >= 0], minlength=len(self.label_names())).double() + 1.0
        return (counts / counts.sum()).log().float()

    def loss(self, out: torch.Tensor, batch: Batch) -> torch.Tensor:
        """Cross-entropy over the tagged tokens, weighted per tag as ``model.class_weight`` says."""
        out = fp32_logits(out)  # fp32 under mixed precision
        weight = self.class_weights()
        return F.cross_entropy(out, batch["token"].y, weight=None if weight is None else weight.to(out),
                               ignore_index=IGNORE_INDEX)

    def decode(self, out: torch.Tensor, batch: Batch) -> list[dict[str, Any]]:
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
