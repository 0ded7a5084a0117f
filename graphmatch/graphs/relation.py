r"""The relation sentence graph: a sentence with two entities, tokenised any of several ways.

A sentence such as ``The <e1>company</e1> fabricates plastic <e2>chairs</e2>.`` becomes a
:class:`~torch_geometric.data.HeteroData` graph with

.. code-block:: text

    data["token"].word_id  [L] long   vocabulary id of each token (a word, a character or a word piece)
    data["token"].pos1     [L] long   relative position to e1, clipped to ±D and shifted by +D
    data["token"].pos2     [L] long   relative position to e2, likewise (values in [0, 2D])
    data["entity"].kind    [2] long   0 for e1, 1 for e2 (always in this order)
    data["sentence"].num_tokens [1]   one node, the relation to classify; its token count
    ("token", "in", "entity")      each entity token → its entity
    ("token", "starts", "entity")  the opening marker of each entity → it (with markers only)
    ("token", "in", "sentence")    every token → the sentence (attention pooling runs over these)
    data.y                 [1] long   the label id, when given

The relative position of token :math:`i` to an entity spanning tokens :math:`[s, e]` is
:math:`i - s` before the entity, :math:`i - e` after it and :math:`0` inside it
(``position_anchor="span"``), or :math:`i - e`, relative to the entity's last token, everywhere
(``"last"``, as the official code of Lee et al., 2019).

By default the four markers stay in the sentence as tokens (``<e1> company </e1>``), as the
papers' position indicators; entity edges and relative positions refer to the entity tokens.

The entities may nest or overlap (``母亲`` inside ``母亲四十岁时``): each entity keeps its own
span, the token → entity edges of the shared tokens go to both entities, the relative positions
are measured from each span, and the markers nest (:func:`with_markers`:
``<e2> <e1> 母 亲 </e1> 四 十 岁 时 </e2>``); a marker inside the other entity's span is not one
of its tokens. Two entities on the same tokens, an entity without tokens and entities further
apart than ``max_length`` raise :class:`UnrepresentableExample`, which a dataset may skip.

Tokenisation is a function from a piece of text to its tokens (:func:`splitter`): English words
(:func:`tokenize`: lowercase, runs of letters and digits are words, every other visible
character is a token: ``"don't"`` → ``don ' t``), Chinese characters (:func:`tokenize_chars`),
the words of a segmenter of :mod:`graphmatch.text`, or a pretrained tokenizer's word pieces
(:class:`WordPieces`, whose graphs also hold ``[CLS]`` first and ``[SEP]`` last and whose
markers are the vocabulary's ``[unused0]`` … slots). The text is cut at the entity boundaries
first (:meth:`MarkedSentence.pieces`) and every piece tokenised on its own, so an entity
always maps to whole tokens.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any, Protocol

import torch
from torch_geometric.data import HeteroData
from torch_geometric.utils import cumsum

from graphmatch.graphs.defaults import (  # noqa: F401 - the relation graphs' choices, re-exported
    POSITION_ANCHORS,
    RELATION_MAX_DISTANCE,
    RELATION_MAX_LENGTH,
    TOKENIZATIONS,
)
from graphmatch.graphs.relation_markup import MARKERS, MarkedSentence, UnrepresentableExample, parse_markup
from graphmatch.graphs.relation_options import RelationOptions, old_relation_keywords

#: version of the relation sentence graphs (this module, relation_markup) this builder writes: bump it
#: whenever they change (tests/data/test_builder_formats.py fails until the checksum recorded there is updated)
FORMAT_VERSION = 2

_TOKEN_RE = re.compile(r"[^\W_]+|[^\w\s]|_", re.UNICODE)
# CJK ideographs (unified, extension A, compatibility), each a token of its own
_CJK_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_UNUSED_RE = re.compile(r"\[unused(\d+)\]")



def tokenize(text: str) -> list[str]:
    """Lowercase ``text`` and split it into words (letter/digit runs) and single punctuation marks."""
    return _TOKEN_RE.findall(text.lower())


def tokenize_chars(text: str) -> list[str]:
    """Every CJK character a token of its own; the rest as :func:`tokenize` splits it
    (``"我买了iPhone 12"`` → ``我 买 了 iphone 12``)."""
    return tokenize(_CJK_RE.sub(lambda m: f" {m.group()} ", text))


def splitter(name: str) -> Callable[[str], list[str]]:
    """The tokenisation called ``name``: ``words`` (:func:`tokenize`), ``chars``
    (:func:`tokenize_chars`) or a segmenter of :mod:`graphmatch.text` (``jieba``, ``thulac``,
    ``pkuseg``: its words, lowercased)."""
    if name == "words":
        return tokenize
    if name == "chars":
        return tokenize_chars
    if name not in TOKENIZATIONS:
        raise ValueError(f"unknown tokenization {name!r}; choose one of {', '.join(TOKENIZATIONS)}")
    from graphmatch.text.segmenters import get_segmenter

    segmenter = get_segmenter(name)
    return lambda text: [span.word.lower() for span in segmenter.segment(text)]


class Lookup(Protocol):
    def lookup(self, tokens: Sequence[str]) -> list[int]: ...


class WordPieces:
    """A pretrained BERT-family tokenizer as a relation tokenisation: word pieces, ids from its
    vocabulary, ``[CLS]`` … ``[SEP]`` around the sentence and the entity markers mapped to the
    first four ``[unusedN]`` slots of the vocabulary (their embeddings are trained from there;
    the vocabulary and the embedding table keep their size).

    Args:
        tokenizer: a ``transformers`` tokenizer (fast or slow) with ``cls_token`` and ``sep_token``.
        markers: four vocabulary tokens for ``<e1>``, ``</e1>``, ``<e2>``, ``</e2>``; default the
            four ``[unusedN]`` tokens of lowest id.
    """

    def __init__(self, tokenizer, markers: Sequence[str] | None = None):
        self.tokenizer = tokenizer
        vocab = tokenizer.get_vocab()
        if markers is None:
            unused = sorted((vocab[t], t) for t in vocab if _UNUSED_RE.fullmatch(t))
            if len(unused) < 4:
                raise ValueError(
                    f"the tokenizer of {tokenizer.name_or_path} has {len(unused)} [unusedN] tokens; "
                    "entity markers need 4"
                )
            markers = [t for _, t in unused[:4]]
        missing = [m for m in markers if m not in vocab]
        if len(markers) != 4 or missing:
            raise ValueError(f"entity markers must be 4 vocabulary tokens, got {list(markers)}")
        self.markers = tuple(markers)
        self.wrap = (tokenizer.cls_token, tokenizer.sep_token)
        self.vocab_size = len(tokenizer)
        self._batch = None  # split_many's tokenizer (False: none)
        self._digest: tuple[int, str] | None = None  # (vocabulary size, digest)

    @classmethod
    def from_pretrained(cls, path: str | os.PathLike) -> WordPieces:
        """The tokenizer of a local checkpoint folder (``vocab.txt`` / ``tokenizer.json``); no download."""
        from transformers import AutoTokenizer

        return cls(AutoTokenizer.from_pretrained(str(path), local_files_only=True))

    def split(self, text: str) -> list[str]:
        return self.tokenizer.tokenize(text)

    def split_many(self, texts: Sequence[str]) -> list[list[str]]:
        """:meth:`split` of every text: one call of a fast tokenizer's backend for all of them (a
        slow tokenizer splits them one by one)."""
        if self._batch is None:
            backend = getattr(self.tokenizer, "backend_tokenizer", None)
            if backend is not None:  # a copy that neither pads nor truncates, as tokenize() reads a text
                from tokenizers import Tokenizer

                backend = Tokenizer.from_str(backend.to_str())
                backend.no_padding()
                backend.no_truncation()
            self._batch = backend or False
        if not self._batch or not texts:
            return [self.split(text) for text in texts]
        return [e.tokens for e in self._batch.encode_batch(list(texts), add_special_tokens=False)]

    def lookup(self, tokens: Sequence[str]) -> list[int]:
        return self.tokenizer.convert_tokens_to_ids(list(tokens))

    @property
    def digest(self) -> str:
        """A short digest of the vocabulary and markers (for cache keys); computed once per
        vocabulary size (a dataset's cache folder asks for it often, and e5's has 250,006 pieces)."""
        size = len(self.tokenizer)
        if self._digest is None or self._digest[0] != size:
            items = sorted(self.tokenizer.get_vocab().items(), key=lambda kv: kv[1])
            text = "\n".join(t for t, _ in items) + "\n" + " ".join(self.markers)
            text += f"\nlower={getattr(self.tokenizer, 'do_lower_case', None)}"
            self._digest = (size, hashlib.sha256(text.encode("utf-8")).hexdigest()[:10])
        return self._digest[1]


@dataclass(frozen=True)
class RelationSentence:
    """A tokenised sentence with two entities; spans are inclusive token ranges (e2 may come
    first, and they may nest or overlap). ``marks`` are the positions of the four markers
    ``<e1>``, ``</e1>``, ``<e2>``, ``</e2>`` among the tokens (empty without markers)."""

    tokens: list[str]
    e1: tuple[int, int]
    e2: tuple[int, int]
    text: str = ""
    marks: tuple[int, ...] = ()

    def entity_tokens(self, which: int) -> list[int]:
        """Positions of the tokens of entity ``which`` (1 or 2): its span less any marker in it."""
        s, e = self.e1 if which == 1 else self.e2
        return [i for i in range(s, e + 1) if i not in self.marks]

    def entity_text(self, which: int) -> str:
        return " ".join(self.tokens[i] for i in self.entity_tokens(which))


def tokenize_marked(
    sent: MarkedSentence, split: Callable[[str], list[str]] = tokenize, where: str = "input"
) -> RelationSentence:
    """Tokenise each piece of ``sent`` between entity boundaries with ``split`` (a piece shared
    by nested or overlapping entities belongs to both). An entity that yields no token, or two
    entities on the same tokens, is an :class:`UnrepresentableExample` starting with ``where``."""
    tokens: list[str] = []
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for piece, k in sent.pieces():
        start = len(tokens)
        tokens.extend(split(piece))
        for which in (1, 2):
            if k & which and len(tokens) > start:
                first.setdefault(which, start)
                last[which] = len(tokens) - 1
    for which in (1, 2):
        if which not in first:
            raise UnrepresentableExample(
                where, f"entity e{which} ({sent.entity_text(which)!r}) has no tokens in {sent.text!r}"
            )
    e1, e2 = (first[1], last[1]), (first[2], last[2])
    if e1 == e2:
        raise UnrepresentableExample(
            where, f"e1 and e2 are the same tokens ({sent.entity_text(1)!r}); a relation needs two entities"
        )
    return RelationSentence(tokens=tokens, e1=e1, e2=e2, text=sent.text)


def parse_relation(
    text: str, where: str = "input", split: Callable[[str], list[str]] = tokenize
) -> RelationSentence:
    """Parse ``<e1>…</e1>`` / ``<e2>…</e2>`` markup (:func:`parse_markup`) and tokenise it."""
    return tokenize_marked(parse_markup(text, where), split, where)


def with_markers(sent: RelationSentence, markers: Sequence[str] = MARKERS) -> RelationSentence:
    """``sent`` with ``markers`` (``<e1>``, ``</e1>``, ``<e2>``, ``</e2>``) around its entities.

    Between two tokens the closing markers come first, then the opening ones: apart, the
    entities read ``<e1> a </e1> <e2> b </e2>``. Nested, they nest as brackets: the inner
    entity closes first and, sharing the first token, the outer opens first (``<e2> <e1> 母 亲
    </e1> 四 十 岁 时 </e2>``). Overlapping partly, each closes after its own last token, so they
    close in the order they opened: ``<e1> a <e2> b </e1> c </e2>``. Bracket nesting is
    impossible there without repeating a marker or moving a boundary; this keeps the markup
    well-formed in the sense the models and :func:`parse_markup` rely on, each marker once and
    before its closing one, the tokens of entity :math:`k` (other markers aside) exactly those
    between ``<ek>`` and ``</ek>``, so writing the markers back as text parses to the same spans.
    """
    (s1, t1), (s2, t2) = sent.e1, sent.e2
    # (token the marker goes before, closing 0 / opening 1, inner first, marker): at one place the
    # later opened entity closes first and the later closing one opens first
    placed = sorted([(t1 + 1, 0, -s1, 1), (t2 + 1, 0, -s2, 3), (s1, 1, -t1, 0), (s2, 1, -t2, 2)])
    tokens, marks = list(sent.tokens), [0, 0, 0, 0]
    for j, (place, *_, m) in enumerate(placed):  # the j markers placed before this one precede it
        marks[m] = place + j
        tokens.insert(place + j, markers[m])

    def moved(i: int) -> int:  # where token i of ``sent`` lands
        return i + sum(place <= i for place, *_ in placed)

    return RelationSentence(tokens=tokens, e1=(moved(s1), moved(t1)), e2=(moved(s2), moved(t2)), text=sent.text,
                            marks=tuple(marks))


def relative_positions(length: int | Sequence[int], span: tuple[int, int], max_distance: int,
                       anchor: str = "span") -> list[int]:
    """Relative positions of ``length`` tokens (or of tokens at the given positions, such as a
    sentence tree's soft positions) to ``span`` (``anchor="span"``) or to its last token
    (``"last"``), clipped to ±D and shifted to [0, 2D]."""
    s, e = span
    d = max_distance
    positions = range(length) if isinstance(length, int) else length
    if anchor == "last":
        return [min(max(i - e, -d), d) + d for i in positions]
    return [min(max(i - s if i < s else (i - e if i > e else 0), -d), d) + d for i in positions]


def _shift(sent: RelationSentence, tokens: list[str], by: int) -> RelationSentence:
    return RelationSentence(tokens=tokens, e1=(sent.e1[0] + by, sent.e1[1] + by),
                            e2=(sent.e2[0] + by, sent.e2[1] + by), text=sent.text,
                            marks=tuple(i + by for i in sent.marks))


class RelationGraphBuilder:
    r"""Build the relation sentence graph of one sentence.

    Args:
        vocab: token → id map with ``lookup(tokens)`` (a :class:`~graphmatch.text.Vocab`, or
            :class:`WordPieces`).
        options (RelationOptions, optional): every setting of the graph
            (:class:`~graphmatch.graphs.relation_options.RelationOptions`, its length decided).
            ``max_distance``: relative positions are clipped to :math:`[-D, D]` and stored
            shifted by :math:`D`, so a position table needs :math:`2D + 1` rows;
            ``max_length``: at most this many tokens are kept (``[CLS]`` and ``[SEP]`` included),
            a window that holds both entities, starting at the first token when possible;
            ``markers``: keep the four entity markers as tokens ``<e1> … </e1> … <e2> … </e2>``
            (the position indicators of Zhou et al. 2016, also kept by the entity-aware
            paper's code; entity edges and relative positions still refer to the entity
            tokens only); ``position_anchor``: relative positions to the entity's ``"span"``
            (0 inside it) or to its ``"last"`` token (the official code of Lee et al.).
            (default: ``RelationOptions()``)
        keep_text (bool): store token, entity and sentence strings as ``.text`` lists.
            (default: :obj:`False`)
        split (callable): the tokenisation of a piece of text (:func:`splitter`).
            (default: :func:`tokenize`)
        split_many (callable, optional): ``split`` of many pieces at once, which :meth:`many`
            uses (:meth:`WordPieces.split_many`). (default: :obj:`None`, one piece at a time)
        marker_tokens (sequence of str): the four marker tokens. (default: :data:`MARKERS`)
        wrap (tuple, optional): tokens put before and after the sentence (``[CLS]``, ``[SEP]``).

    The keywords of old (``max_distance=``, ``max_length=``, ``markers=``, ``position_anchor=``)
    still work for one release, with a ``DeprecationWarning``.
    """

    def __init__(
        self,
        vocab: Lookup,
        options: RelationOptions | None = None,
        *,
        keep_text: bool = False,
        split: Callable[[str], list[str]] = tokenize,
        split_many: Callable[[Sequence[str]], list[list[str]]] | None = None,
        marker_tokens: Sequence[str] = MARKERS,
        wrap: tuple[str, str] | None = None,
        **old: Any,
    ):
        options = old_relation_keywords(type(self).__name__, options, old)
        if options.auto:
            raise ValueError("max_length: auto is decided on the training sentences before a graph is built")
        #: every setting of the graph, as given
        self.options = options
        max_distance, max_length, markers = options.max_distance, options.max_length, options.markers
        position_anchor = options.position_anchor
        if position_anchor not in POSITION_ANCHORS:
            raise ValueError(f"position_anchor must be one of {', '.join(POSITION_ANCHORS)}, got {position_anchor!r}")
        if max_distance < 1:
            raise ValueError(f"max_distance must be at least 1, got {max_distance}")
        if max_length < 2 + 2 * (wrap is not None):
            raise ValueError(f"max_length must be at least {2 + 2 * (wrap is not None)}, got {max_length}")
        self.vocab = vocab
        self.max_distance = max_distance
        self.max_length = max_length
        self.keep_text = keep_text
        self.markers = markers
        self.split, self.split_many = split, split_many
        self.marker_tokens = tuple(marker_tokens)
        self.wrap = wrap
        self.position_anchor = position_anchor

    @classmethod
    def for_pieces(cls, pieces: WordPieces, options: RelationOptions | None = None, **kwargs) -> RelationGraphBuilder:
        """A builder over a pretrained tokenizer's word pieces (markers in ``[unused]`` slots,
        ``[CLS]``/``[SEP]`` around the sentence), with ``options`` and ``keep_text``."""
        return cls(pieces, options, split=pieces.split, split_many=pieces.split_many, marker_tokens=pieces.markers,
                   wrap=pieces.wrap, **kwargs)

    @property
    def num_positions(self) -> int:
        """Rows a relative-position embedding table needs (:math:`2D + 1`)."""
        return 2 * self.max_distance + 1

    def crop(self, sent: RelationSentence, where: str = "input") -> RelationSentence:
        """Cut ``sent`` to ``max_length`` tokens (less the wrapping tokens) around its entities
        (and their markers); entities further apart are an :class:`UnrepresentableExample`."""
        n, m = len(sent.tokens), self.max_length - 2 * (self.wrap is not None)
        ends = (*sent.e1, *sent.e2, *sent.marks)
        first, last = min(ends), max(ends)
        if last - first + 1 > m:
            raise UnrepresentableExample(
                where,
                f"the entities span {last - first + 1} tokens, more than max_length={self.max_length}"
                + (" less [CLS] and [SEP]" if self.wrap else ""),
            )
        if n <= m:
            return sent
        a = max(0, last + 1 - m)
        return _shift(sent, sent.tokens[a : a + m], -a)

    def tokenized(self, sentence: str | MarkedSentence | RelationSentence, where: str = "input") -> RelationSentence:
        """The tokens the graph is built from: tokenised, marked, cropped and wrapped."""
        if isinstance(sentence, str):
            sentence = parse_markup(sentence, where)
        sent = tokenize_marked(sentence, self.split, where) if isinstance(sentence, MarkedSentence) else sentence
        if self.markers:
            sent = with_markers(sent, self.marker_tokens)
        sent = self.crop(sent, where)
        if self.wrap:
            sent = _shift(sent, [self.wrap[0], *sent.tokens, self.wrap[1]], 1)
        return sent

    def __call__(
        self, sentence: str | MarkedSentence | RelationSentence, label: int | None = None, where: str = "input"
    ) -> HeteroData:
        sent = self.tokenized(sentence, where)
        n = len(sent.tokens)
        node, in_entity, starts = self._arrays(sent)
        node = torch.tensor(node)
        data = HeteroData({
            "token": {"word_id": node[0], "pos1": node[1], "pos2": node[2], "num_nodes": n},
            "entity": {"kind": torch.tensor([0, 1]), "num_nodes": 2},  # e1, e2
            "sentence": {"num_tokens": torch.tensor([n]), "num_nodes": 1},
            ("token", "in", "entity"): {"edge_index": torch.tensor(in_entity)},
            ("token", "in", "sentence"): {"edge_index": torch.tensor([list(range(n)), [0] * n])},
        })
        if starts is not None:
            data["token", "starts", "entity"].edge_index = torch.tensor(starts)
        if label is not None:
            data.y = torch.tensor([label], dtype=torch.long)
        if self.keep_text:
            data["token"].text = list(sent.tokens)
            data["entity"].text = [sent.entity_text(1), sent.entity_text(2)]
            data["sentence"].text = [sent.text]
        return data

    def _arrays(self, sent: RelationSentence) -> tuple[list[list[int]], list[list[int]], list[list[int]] | None]:
        """A tokenized sentence's ``[word_id, pos1, pos2]`` rows, its token → entity edges (nested
        entities share tokens) and, with markers, each entity's opening marker → entity edge."""
        n = len(sent.tokens)
        node = [self.vocab.lookup(sent.tokens),
                relative_positions(n, sent.e1, self.max_distance, self.position_anchor),
                relative_positions(n, sent.e2, self.max_distance, self.position_anchor)]
        ent1, ent2 = sent.entity_tokens(1), sent.entity_tokens(2)
        starts = [[sent.marks[0], sent.marks[2]], [0, 1]] if self.markers else None
        return node, [ent1 + ent2, [0] * len(ent1) + [1] * len(ent2)], starts

    def collated(self, sents: Sequence[RelationSentence],
                 labels: Sequence[int] | None = None) -> tuple[dict[Any, Any], dict[Any, Any]]:
        """The graphs of tokenized sentences (:meth:`tokenized`) as PyG stores a list of them
        (``InMemoryDataset.collate``: the collated graph's ``to_dict()`` and the slices), built at
        once from the sentences' rows: the same tensors as :meth:`__call__` one sentence at a time,
        without a ``HeteroData`` per sentence. Not with ``keep_text``."""
        if self.keep_text:
            raise ValueError("collated: graphs with text are built one at a time")
        if type(self).__call__ is not RelationGraphBuilder.__call__:
            raise TypeError(f"collated: builds {RelationGraphBuilder.__name__}'s graphs, not {type(self).__name__}'s")
        if not sents:
            raise ValueError("collated: no sentences")
        rows = [self._arrays(s) for s in sents]
        tokens = [len(s.tokens) for s in sents]
        g = len(sents)

        def flat(lists: Sequence[list[int]]) -> torch.Tensor:
            return torch.tensor(list(chain.from_iterable(lists)), dtype=torch.long)

        def edges(pairs: Sequence[list[list[int]]]) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
            return ({"edge_index": torch.stack([flat([p[0] for p in pairs]), flat([p[1] for p in pairs])])},
                    {"edge_index": cumsum(torch.tensor([len(p[0]) for p in pairs]))})

        node = [flat([r[0][k] for r in rows]) for k in range(3)]
        by_token = cumsum(torch.tensor(tokens))  # where each graph's rows start (PyG's slices)
        data: dict[Any, Any] = {"_global_store": {}}
        slices: dict[Any, Any] = {}
        if labels is not None:
            data["_global_store"]["y"], slices["y"] = torch.tensor(list(labels), dtype=torch.long), torch.arange(g + 1)
        data["token"] = {"word_id": node[0], "pos1": node[1], "pos2": node[2], "num_nodes": sum(tokens),
                         "_num_nodes": tokens}
        slices["token"] = {"word_id": by_token, "pos1": by_token.clone(), "pos2": by_token.clone()}
        data["entity"] = {"kind": torch.tensor([0, 1]).repeat(g), "num_nodes": 2 * g, "_num_nodes": [2] * g}
        slices["entity"] = {"kind": torch.arange(0, 2 * g + 1, 2)}
        data["sentence"] = {"num_tokens": torch.tensor(tokens), "num_nodes": g, "_num_nodes": [1] * g}
        slices["sentence"] = {"num_tokens": torch.arange(g + 1)}
        names = [("token", "in", "entity"), ("token", "in", "sentence")]
        groups = [[r[1] for r in rows], [[list(range(n)), [0] * n] for n in tokens]]
        if self.markers:
            names.append(("token", "starts", "entity"))
            groups.append([r[2] for r in rows])
        for name, pairs in zip(names, groups, strict=True):
            data[name], slices[name] = edges(pairs)
        return data, slices

    def many(self, sentences: Sequence[MarkedSentence]) -> list[HeteroData]:
        """The graph of each sentence (:meth:`__call__`, ``where`` = ``"input"``). With ``split_many``
        the text pieces of all of them are cut in one call (the same tokens as one at a time).
        Raises :class:`~graphmatch.errors.InputError` with the position of the first
        sentence refused."""
        from graphmatch.errors import InputError

        cut = iter(self.split_many([piece for s in sentences for piece, _ in s.pieces()])) if self.split_many else None
        graphs = []
        for i, sentence in enumerate(sentences):
            try:
                if cut is not None:
                    sentence = tokenize_marked(sentence, lambda _piece: next(cut))
                graphs.append(self(sentence))
            except ValueError as err:
                raise InputError(i, str(err)) from err
        return graphs


def split_input_line(line: str) -> tuple[str | None, str]:
    """``'8001\\t"The <e1>…"'`` → ``("8001", 'The <e1>…')``; a bare marked sentence → ``(None, line)``."""
    line = line.strip()
    sid = None
    head, sep, rest = line.partition("\t")
    if sep and head.strip().isdigit():
        sid, line = head.strip(), rest.strip()
    if len(line) >= 2 and line[0] == line[-1] == '"':
        line = line[1:-1]
    return sid, line


def tokens_of(data: HeteroData, vocab=None) -> Sequence[str]:
    """Token strings of a graph: ``.text`` when kept, else looked up in ``vocab`` (``itos``)."""
    tok = data["token"]
    if "text" in tok:
        return list(tok.text)
    if vocab is None or not hasattr(vocab, "itos"):
        return [str(i) for i in tok.word_id.tolist()]
    return [vocab.itos[i] for i in tok.word_id.tolist()]
