r"""K-BERT: a mask-transformer over the sentence tree (the body, :class:`KBert`) with one of three
heads, each a subclass: :class:`KBertSequence` (sentence and joint-pair classification),
:class:`KBertTagger` (token tagging, NER) and :class:`KBertPairMatch` (a pair's texts read apart,
matched by their cosine). ``KBert(encoder, KBertConfig(num_labels, tagging=..., pair_encoding=...))``
makes the subclass its config names; every head keeps the parameter names of the one-class model
(``output_layer``, ``classifier``, ``match``), so checkpoints load unchanged.

`"K-BERT: Enabling Language Representation with Knowledge Graph"
<https://arxiv.org/abs/1909.07606>`_ (Liu et al., AAAI 2020). The input graph
(:mod:`graphmatch.graphs.kbert`) is turned into dense ``[B, L]`` tensors and a ``[B, L, L]``
visibility on the batch's device (:func:`graphmatch.graphs.kbert.dense_inputs`); the encoder is
:class:`~graphmatch.nn.MaskTransformerEncoder` or :class:`~graphmatch.nn.HFBertEncoder`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import torch
from torch import Tensor, nn

from graphmatch.graphs.kbert import dense_inputs, second_text
from graphmatch.models.choices import Head, PairEncoding, Pooling
from graphmatch.nn.branch_marking import BranchMarking
from graphmatch.nn.cosine_match import CosineMatchHead
from graphmatch.utils.deprecated import old_arguments


@dataclass(frozen=True)
class KBertConfig:
    r"""The settings of :class:`KBert` (its encoder is a module of its own); they name its head's
    subclass (:attr:`model_class`).

    Args:
        num_labels (int): number of classes or tags.
        tagging (bool, optional): token tagging instead of classification. (default: :obj:`False`)
        pooling (str, optional): ``"first"``, ``"mean"``, ``"max"`` or ``"last"``.
            (default: :obj:`"first"`)
        head (str, optional): ``"uer"`` or ``"bert_pooler"``. (default: :obj:`"uer"`)
        dropout (float, optional): dropout before the output layer (``head="bert_pooler"`` only).
            (default: :obj:`0.1`)
        visible_matrix (bool, optional): ablation; ``False`` lets every real token see every
            other one (injected tokens included). (default: :obj:`True`)
        soft_positions (bool, optional): ablation; ``False`` uses hard positions
            :math:`0, \dots, L-1`. (default: :obj:`True`)
        pair_encoding (str, optional): ``"joint"`` or ``"separate"`` (two labels, pairs only).
            (default: :obj:`"joint"`)
        sep_id (int, optional): the separator token's id (``pair_encoding="separate"``).
        cls_id (int, optional): what a separator that opens text b reads as
            (``pair_encoding="separate"``): XLM-R / e5's ``</s> b </s>`` becomes ``<s> b </s>``, the
            text as the encoder reads it alone. (default: :obj:`None`, kept)
        match_label (int, optional): the label of a matching pair (``pair_encoding="separate"``).
            (default: :obj:`1`)
        branch_embedding (bool, optional): a learned vector added to the embedding of every branch
            token (:class:`~graphmatch.nn.branch_marking.BranchMarking`, zero-initialised).
            (default: :obj:`False`)
        branch_bias (bool, optional): a learned scalar per layer and head added to the attention
            logits between trunk and branch tokens (zero-initialised). (default: :obj:`False`)
    """

    num_labels: int
    tagging: bool = False
    pooling: Pooling = "first"
    dropout: float = 0.1
    visible_matrix: bool = True
    soft_positions: bool = True
    head: Head = "uer"
    pair_encoding: PairEncoding = "joint"
    sep_id: int | None = None
    match_label: int = 1
    cls_id: int | None = None
    branch_embedding: bool = False
    branch_bias: bool = False

    @property
    def model_class(self) -> type[KBert]:
        """The head's subclass: :class:`KBertPairMatch` for ``pair_encoding="separate"``, else
        :class:`KBertTagger` (``tagging``) or :class:`KBertSequence`."""
        if self.pair_encoding == "separate":
            return KBertPairMatch
        return KBertTagger if self.tagging else KBertSequence


class KBert(nn.Module):
    r"""K-BERT model.

    Classification (single sentences and pairs), ``head="uer"`` (K-BERT's ``BertClassifier`` in
    ``run_kbert_cls.py``, UER's classifier: a fresh ``output_layer_1`` with tanh, no dropout):

    .. math::
        \mathbf{v} = \operatorname{pool}(\mathbf{H}), \qquad
        \mathbf{z} = \mathbf{W}_c \tanh(\mathbf{W}_1 \mathbf{v} + \mathbf{b}_1) + \mathbf{b}_c

    ``head="bert_pooler"`` (HuggingFace's ``BertForSequenceClassification``) uses the encoder's
    (pretrained BERT's) pooler :math:`\mathbf{W}_p, \mathbf{b}_p` and dropout instead:

    .. math::
        \mathbf{z} = \mathbf{W}_c\, \operatorname{Dropout}(\tanh(\mathbf{W}_p \mathbf{v} + \mathbf{b}_p)) + \mathbf{b}_c

    :math:`\operatorname{pool}` takes the ``[CLS]`` state (``"first"``), the state of the last real
    token (``"last"``) or the mean / max over the real tokens (UER's ``--pooling``; UER pools over
    the whole padded sequence, whose last position is usually padding).
    Tagging (NER): :math:`\mathbf{z}_i = \mathbf{W}_c \mathbf{h}_i + \mathbf{b}_c` for every token
    (K-BERT's ``BertTagger``; ``head="bert_pooler"`` adds dropout before :math:`\mathbf{W}_c`, as
    HuggingFace's ``BertForTokenClassification``); injected (branch) tokens carry no label
    (``y = -100``). :meth:`init_output_bias` sets :math:`\mathbf{b}_c` (e.g. to the log frequency
    of each tag).

    Pairs with ``pair_encoding="separate"`` (a bi-encoder; not in the paper): each text reads only
    itself (the visibility of a token of text a on one of text b is cut, text b's positions start
    where text a's do, one segment, a separator opening text b reads as ``cls_id``), each is
    pooled alone into :math:`\mathbf{u}, \mathbf{v}`, and with
    :math:`z = s\,(\cos(\mathbf{u}, \mathbf{v}) - t)` (:class:`~graphmatch.nn.CosineMatchHead`)
    the matching label's logit is :math:`z/2`, the other's :math:`-z/2`: an encoder trained
    contrastively on text pairs (multilingual-e5) keeps the geometry it was trained in.

    Args:
        encoder (nn.Module): ``encoder(input_ids, pos, seg, visible) -> [B, L, F]`` with
            ``hidden_size`` and ``pool(vec)``.
        config (KBertConfig): the head and its switches. (The loose arguments of old calls,
            ``KBert(encoder, num_labels, tagging=...)``, still work, with a ``DeprecationWarning``,
            until the next release.)

    Shapes:
        - **input:** a batch of K-BERT sentence-tree graphs, or dense ``[B, L]`` tensors for
          :meth:`forward_dense`
        - **output:** classification :math:`(B, C)`; tagging :math:`(N_{token}, C)` in the
          batch's token-node order
    """

    #: the official code's (UER) names a fine-tuned K-BERT file may lack (the pooler, unused by the ``uer`` head)
    checkpoint_keys_missing_ok = {"uer": ("target.nsp_linear_1.*",)}
    #: and may hold unused: the pretraining heads (a tagger keeps them)
    checkpoint_keys_unused_ok = {"uer": ("target.*",)}

    #: one row of logits per real token (tagging) rather than per input
    tagging: ClassVar[bool] = False
    #: the head's layers -> the official code's (UER) names (``head="uer"``, :meth:`uer_names`)
    uer_heads: ClassVar[dict[str, str]] = {}

    def __new__(cls, encoder: nn.Module | None = None, config: KBertConfig | Any = None, *args: Any,
                **kwargs: Any) -> KBert:
        if cls is KBert and (config is not None or args or kwargs):  # the one place the head is chosen
            if not isinstance(config, KBertConfig):  # an old call: its arguments are checked in __init__
                config = KBertConfig(*(() if config is None else (config,)), *args, **kwargs)
            cls = config.model_class
        return super().__new__(cls)

    def __init__(self, encoder: nn.Module, config: KBertConfig | Any = None, *args: Any, **kwargs: Any):
        super().__init__()
        config = old_arguments("KBert", KBertConfig, config, args, kwargs)
        num_labels, tagging, head = config.num_labels, config.tagging, config.head
        sep_id, match_label = config.sep_id, config.match_label
        if num_labels < 1:
            raise ValueError(f"num_labels must be positive, got {num_labels}")
        separate = config.pair_encoding == "separate"
        if separate and (tagging or num_labels != 2 or sep_id is None or match_label not in (0, 1)):
            raise ValueError("pair_encoding='separate' classifies pairs into two labels (a match_label of 0 or 1) "
                             f"and needs sep_id; got tagging={tagging}, num_labels={num_labels}, sep_id={sep_id}, "
                             f"match_label={match_label}")
        #: the settings it was made with
        self.config = config
        self.encoder = encoder
        self.num_labels = num_labels
        self.pooling = config.pooling
        self.head = head
        self.visible_matrix = config.visible_matrix
        self.soft_positions = config.soft_positions
        self.sep_id = sep_id
        self.cls_id = config.cls_id
        self.match_label = match_label
        self.dropout: nn.Module = nn.Dropout(config.dropout) if head == "bert_pooler" else nn.Identity()
        self.output_layer: nn.Linear | None = None
        self.classifier: nn.Linear | None = None
        self.match: CosineMatchHead | None = None
        self.build_head()
        #: the marks of the branch tokens (``None`` without them: K-BERT's model)
        self.branch_marking = BranchMarking(encoder.hidden_size, encoder.num_layers, encoder.num_heads,
                                            config.branch_embedding, config.branch_bias) \
            if config.branch_embedding or config.branch_bias else None
        self.reset_parameters()

    def build_head(self) -> None:
        """The head's layers (each subclass its own)."""
        raise NotImplementedError("KBert(encoder, config) makes a head's subclass: KBertSequence, KBertTagger or "
                                  "KBertPairMatch")

    def logits(self, hidden: Tensor, token_mask: Tensor, second: Tensor | None) -> Tensor:
        """The head: the encoder's states ``[B, L, F]`` → logits (``second``: text b's tokens, :meth:`prepare`)."""
        raise NotImplementedError

    def prepare(self, input_ids: Tensor, pos: Tensor, seg: Tensor, token_mask: Tensor, visible: Tensor
                ) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor | None]:
        """The encoder's inputs as the head reads them (default as they are, no second text)."""
        return input_ids, pos, seg, visible, None

    def reset_parameters(self) -> None:
        """``head="uer"``: PyTorch's default initialisation of the output layers, as K-BERT's scripts
        (they create the layers after initialising the encoder); ``"bert_pooler"``: BERT's
        normal(0, 0.02) weights and zero bias."""
        if self.head == "uer":
            for layer in (self.output_layer, self.classifier):
                if layer is not None:
                    layer.reset_parameters()
        else:
            nn.init.normal_(self.classifier.weight, 0.0, 0.02)
            nn.init.zeros_(self.classifier.bias)

    def init_output_bias(self, bias: Tensor) -> None:
        r"""Set the output layer's bias :math:`\mathbf{b}_c` (``[num_labels]``), e.g. to the log
        frequency of each tag so that training starts from the label prior."""
        if self.classifier is None:
            raise ValueError("pair_encoding='separate' has no output bias (its logit is the cosine head's)")
        if tuple(bias.shape) != (self.num_labels,):
            raise ValueError(f"the output bias must have {self.num_labels} values, got {list(bias.shape)}")
        with torch.no_grad():
            self.classifier.bias.copy_(bias)

    def forward(self, batch, return_attention_weights: bool = False):
        inputs = dense_inputs(batch)
        return self.forward_dense(inputs["input_ids"], inputs["pos"], inputs["seg"], inputs["token_mask"],
                                  inputs["visible"], return_attention_weights=return_attention_weights,
                                  branch=inputs["branch"])

    def attention_inputs(self, pos: Tensor, token_mask: Tensor, visible: Tensor) -> tuple[Tensor, Tensor]:
        """Positions and visibility after the ablations."""
        if not self.soft_positions:
            pos = torch.arange(pos.size(1), device=pos.device).expand_as(pos)
        if not self.visible_matrix:
            visible = token_mask.unsqueeze(1)  # [B, 1, L]: every real token sees every real token
        return pos, visible

    def separated(self, input_ids: Tensor, pos: Tensor, token_mask: Tensor, visible: Tensor
                  ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """``pair_encoding="separate"``: text b's tokens (``[B, L]`` bool), and the ids, positions
        and visibility of each text read alone (text b's positions shifted to start at text a's
        first, a separator that opens it read as ``cls_id``)."""
        b = second_text(input_ids, self.sep_id) & token_mask
        first_b = b.long().argmax(1, keepdim=True)  # 0 where a pair lost text b to the length cut
        pos = pos - b.long() * (pos.gather(1, first_b) - pos[:, :1])
        if self.cls_id is not None:
            opens = b & torch.nn.functional.pad(~b[:, :-1], (1, 0), value=True) & (input_ids == self.sep_id)
            input_ids = input_ids.masked_fill(opens, self.cls_id)
        return b, input_ids, pos, visible & (b.unsqueeze(2) == b.unsqueeze(1))

    def forward_dense(self, input_ids: Tensor, pos: Tensor, seg: Tensor, token_mask: Tensor, visible: Tensor,
                      return_attention_weights: bool = False, branch: Tensor | None = None):
        """The logits of dense inputs; ``branch`` (``[B, L]`` bool, the injected tokens) is needed
        with the branch marks."""
        marks = {}
        if self.branch_marking is not None:
            if branch is None:
                raise ValueError("the branch marks (branch_embedding, branch_bias) need branch, the injected tokens")
            marks = {"marking": self.branch_marking, "branch": branch}
        pos, visible = self.attention_inputs(pos, token_mask, visible)
        input_ids, pos, seg, visible, second = self.prepare(input_ids, pos, seg, token_mask, visible)
        hidden = self.encoder(input_ids, pos, seg, visible, return_attention_weights=return_attention_weights,
                              token_mask=token_mask, **marks)
        hidden, weights = hidden if return_attention_weights else (hidden, None)
        logits = self.logits(hidden, token_mask, second)
        return (logits, weights) if return_attention_weights else logits

    def pool(self, hidden: Tensor, token_mask: Tensor) -> Tensor:
        """``[B, L, F]`` → ``[B, F]``: the first or last token of ``token_mask``, or the mean / max
        over its tokens."""
        if self.pooling in ("first", "last"):
            mask = token_mask.long() if self.pooling == "first" else token_mask.long().flip(1)
            at = mask.argmax(1) if self.pooling == "first" else hidden.size(1) - 1 - mask.argmax(1)
            return hidden[torch.arange(hidden.size(0), device=hidden.device), at]
        mask = token_mask.unsqueeze(-1)
        if self.pooling == "mean":
            return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1)
        return hidden.masked_fill(~mask, float("-inf")).amax(1).where(mask.any(1), 0.0)

    # ------------------------------------------------ the official K-BERT code's checkpoints
    def uer_names(self) -> dict[str, str]:
        """Our name → the official K-BERT code's (UER) name, for the whole model: the encoder's
        (:func:`graphmatch.nn.uer.uer_names` under ``encoder.``) and, with ``head="uer"``, a
        classifier's ``output_layer_1`` (our ``output_layer``) and ``output_layer_2`` (our
        ``classifier``) as ``run_kbert_cls.py`` saves them, or a tagger's ``output_layer`` (our
        ``classifier``) as ``run_kbert_ner.py`` does."""
        from graphmatch.nn.mask_transformer import MaskTransformerEncoder
        from graphmatch.nn.uer import uer_names

        if not isinstance(self.encoder, MaskTransformerEncoder):
            raise ValueError("the official K-BERT code's checkpoints load into the mask-transformer encoder "
                             "(K-BERT's 'ours' backend)")
        names = {f"encoder.{ours}": name for ours, name in uer_names(self.encoder.config.num_hidden_layers).items()}
        if self.head == "uer":
            for ours, name in self.uer_heads.items():
                for p in ("weight", "bias"):
                    names[f"{ours}.{p}"] = f"{name}.{p}"
        return names

    def load_uer(self, source, log: bool = True):
        """The weights of a K-BERT classifier (tagger) fine-tuned and saved by the official code, a
        weight file or folder (:func:`graphmatch.pretrained.resolve_pretrained`) or an already read
        ``PretrainedWeights``, into this model, strictly (:meth:`uer_names`): every tensor of the model must
        be in the file and every tensor of the file used, except the pretraining heads ``target.*``
        (a tagger keeps them) and the pooler (``target.nsp_linear_1``), which the ``uer`` head does
        not use. Returns the :class:`~graphmatch.nn.pretrained.LoadReport` (printed on stderr when ``log``)."""
        from graphmatch.nn.pretrained import load_state_strict
        from graphmatch.pretrained import PretrainedWeights, resolve_pretrained

        ckpt = source if isinstance(source, PretrainedWeights) else \
            resolve_pretrained(source, "the K-BERT checkpoint").read_weights()
        if ckpt.format != "uer":
            raise ValueError(f"{ckpt.source} is not a checkpoint of the official K-BERT code (UER names)")
        report = load_state_strict(self, ckpt.state, source=ckpt.source, name_map=self.uer_names(), format="uer")
        if log:
            report.log()
        return report


class KBertSequence(KBert):
    r"""K-BERT with a sequence head: one label per input (a sentence, or a pair read jointly).
    ``head="uer"``: :math:`\mathbf{z} = \mathbf{W}_c \tanh(\mathbf{W}_1 \mathbf{v} + \mathbf{b}_1) + \mathbf{b}_c`;
    ``"bert_pooler"``: the encoder's pooler and dropout before :math:`\mathbf{W}_c` (:class:`KBert`)."""

    uer_heads = {"output_layer": "output_layer_1", "classifier": "output_layer_2"}

    def build_head(self) -> None:
        hidden = self.encoder.hidden_size
        #: UER's ``output_layer_1`` (``head="uer"``)
        self.output_layer = nn.Linear(hidden, hidden) if self.head == "uer" else None
        self.classifier = nn.Linear(hidden, self.num_labels)

    def logits(self, hidden: Tensor, token_mask: Tensor, second: Tensor | None) -> Tensor:
        v = self.pool(hidden, token_mask)
        if self.output_layer is not None:
            return self.classifier(torch.tanh(self.output_layer(v)))
        return self.classifier(self.dropout(self.encoder.pool(v)))


class KBertTagger(KBert):
    r"""K-BERT with a token head: :math:`\mathbf{z}_i = \mathbf{W}_c \mathbf{h}_i + \mathbf{b}_c` for
    every real token, ``[N_token, C]`` in the batch's token-node order."""

    tagging = True
    uer_heads = {"classifier": "output_layer"}

    def build_head(self) -> None:
        self.classifier = nn.Linear(self.encoder.hidden_size, self.num_labels)

    def logits(self, hidden: Tensor, token_mask: Tensor, second: Tensor | None) -> Tensor:
        return self.classifier(self.dropout(hidden[token_mask]))


class KBertPairMatch(KBert):
    r"""K-BERT with a pair-matching head (``pair_encoding="separate"``): each text read alone and
    pooled, :math:`z = s\,(\cos(\mathbf{u}, \mathbf{v}) - t)`, logits :math:`\mp z/2` (:class:`KBert`)."""

    def build_head(self) -> None:
        self.match = CosineMatchHead()

    def reset_parameters(self) -> None:
        self.match.reset_parameters()

    def prepare(self, input_ids: Tensor, pos: Tensor, seg: Tensor, token_mask: Tensor, visible: Tensor
                ) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor | None]:
        """Each text read alone (:meth:`separated`), one segment."""
        b, input_ids, pos, visible = self.separated(input_ids, pos, token_mask, visible)
        return input_ids, pos, torch.zeros_like(seg), visible, b

    def logits(self, hidden: Tensor, token_mask: Tensor, second: Tensor | None) -> Tensor:
        z = self.match(self.pool(hidden, token_mask & ~second), self.pool(hidden, second))
        return torch.stack([-z, z] if self.match_label else [z, -z], dim=1) / 2

    @torch.no_grad()
    def match_cosine(self, batch) -> Tensor:
        """The cosine of each pair's two text vectors, ``[B]``."""
        logits = self(batch)
        z = logits[:, self.match_label] - logits[:, 1 - self.match_label]
        return z / self.match.log_scale.exp() + self.match.threshold
