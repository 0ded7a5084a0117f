r"""The relation sentence graph (SemEval-2010 Task 8 style entity markup).

A sentence such as ``The <e1>company</e1> fabricates plastic <e2>chairs</e2>.`` becomes a
:class:`~torch_geometric.data.HeteroData` graph with

.. code-block:: text

    data["token"].word_id  [L] long   vocabulary id of each token
    data["token"].pos1     [L] long   relative position to e1, clipped to ±D and shifted by +D
    data["token"].pos2     [L] long   relative position to e2, likewise (values in [0, 2D])
    data["entity"].kind    [2] long   0 for e1, 1 for e2 (always in this order)
    data["sentence"].num_tokens [1]   one node, the relation to classify; its token count
    ("token", "in", "entity")    each entity token → its entity
    ("token", "in", "sentence")  every token → the sentence (attention pooling runs over these)
    data.y                 [1] long   the label id, when given

The relative position of token :math:`i` to an entity spanning tokens :math:`[s, e]` is
:math:`i - s` before the entity, :math:`i - e` after it and :math:`0` inside it
(``position_anchor="span"``), or :math:`i - e`, relative to the entity's last token, everywhere
(``"last"``, as the official code of Lee et al., 2019).

By default the four markers stay in the sentence as tokens (``<e1> company </e1>``), as the
papers' position indicators; entity edges and relative positions refer to the entity words.

Tokenisation (:func:`tokenize`) is deliberately simple: lowercase, then runs of letters and
digits are words and every other visible character is a token of its own
(``"don't"`` → ``don ' t``, ``"3.5"`` → ``3 . 5``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch_geometric.data import HeteroData

from graphmatch.text import Vocab

#: the four entity markers, in the order a well-formed sentence has them
MARKERS = ("<e1>", "</e1>", "<e2>", "</e2>")
_MARKER_RE = re.compile(r"</?e[12]>")
_TOKEN_RE = re.compile(r"[^\W_]+|[^\w\s]|_", re.UNICODE)

DEFAULT_MAX_DISTANCE = 50
DEFAULT_MAX_LENGTH = 90
#: what relative positions are measured from: the entity's span, or its last token
POSITION_ANCHORS = ("span", "last")


def tokenize(text: str) -> list[str]:
    """Lowercase ``text`` and split it into words (letter/digit runs) and single punctuation marks."""
    return _TOKEN_RE.findall(text.lower())


@dataclass(frozen=True)
class RelationSentence:
    """A tokenised sentence with two marked entities; spans are inclusive token ranges."""

    tokens: list[str]
    e1: tuple[int, int]
    e2: tuple[int, int]
    text: str = ""

    def entity_text(self, which: int) -> str:
        s, e = self.e1 if which == 1 else self.e2
        return " ".join(self.tokens[s : e + 1])


def parse_relation(text: str, where: str = "input") -> RelationSentence:
    """Parse ``<e1>…</e1>`` / ``<e2>…</e2>`` markup into tokens and entity spans.

    Raises :class:`ValueError` starting with ``where`` (e.g. ``"TRAIN_FILE.TXT:5"``) when a
    marker is missing or repeated, the entities are nested, overlap, come in the wrong order,
    or an entity has no tokens.
    """
    found = [(m.group(), m.start()) for m in _MARKER_RE.finditer(text)]
    names = [name for name, _ in found]
    for marker in MARKERS:
        count = names.count(marker)
        if count == 0:
            raise ValueError(f"{where}: missing entity marker {marker} in {text!r}")
        if count > 1:
            raise ValueError(f"{where}: entity marker {marker} appears {count} times in {text!r}")
    if names != list(MARKERS):
        raise ValueError(f"{where}: {_order_problem(names)} in {text!r}")
    pieces = _MARKER_RE.split(text)  # before, e1, middle, e2, after
    tokens: list[str] = []
    spans: list[tuple[int, int]] = []
    for k, piece in enumerate(pieces):
        start = len(tokens)
        tokens.extend(tokenize(piece))
        if k in (1, 3):
            if len(tokens) == start:
                raise ValueError(f"{where}: entity e{(k + 1) // 2} is empty in {text!r}")
            spans.append((start, len(tokens) - 1))
    return RelationSentence(tokens=tokens, e1=spans[0], e2=spans[1], text=_MARKER_RE.sub("", text))


def _order_problem(names: list[str]) -> str:
    pos = {name: i for i, name in enumerate(names)}
    for k in ("1", "2"):
        if pos[f"</e{k}>"] < pos[f"<e{k}>"]:
            return f"</e{k}> comes before <e{k}>"
    o1, c1, o2, c2 = (pos[m] for m in MARKERS)
    if o1 < o2 < c2 < c1 or o2 < o1 < c1 < c2:
        return "nested entities (one entity inside the other)"
    if o2 < o1 and c2 < o1:
        return "entities in the wrong order (e2 comes before e1)"
    return "overlapping entities"


def with_markers(sent: RelationSentence) -> RelationSentence:
    """``sent`` with the tokens ``<e1>``, ``</e1>``, ``<e2>``, ``</e2>`` around its entities."""
    (s1, t1), (s2, t2), tok = sent.e1, sent.e2, sent.tokens
    tokens = [*tok[:s1], MARKERS[0], *tok[s1 : t1 + 1], MARKERS[1], *tok[t1 + 1 : s2],
              MARKERS[2], *tok[s2 : t2 + 1], MARKERS[3], *tok[t2 + 1 :]]
    return RelationSentence(tokens=tokens, e1=(s1 + 1, t1 + 1), e2=(s2 + 3, t2 + 3), text=sent.text)


def relative_positions(length: int, span: tuple[int, int], max_distance: int, anchor: str = "span") -> list[int]:
    """Relative positions of ``length`` tokens to ``span`` (``anchor="span"``) or to its last
    token (``"last"``), clipped to ±D and shifted to [0, 2D]."""
    s, e = span
    d = max_distance
    if anchor == "last":
        return [min(max(i - e, -d), d) + d for i in range(length)]
    return [min(max(i - s if i < s else (i - e if i > e else 0), -d), d) + d for i in range(length)]


class RelationGraphBuilder:
    r"""Build the relation sentence graph of one marked sentence.

    Args:
        vocab (Vocab): word vocabulary (unknown words map to ``vocab.unk_id``).
        max_distance (int): relative positions are clipped to :math:`[-D, D]` and stored
            shifted by :math:`D`, so a position table needs :math:`2D + 1` rows. (default: 50)
        max_length (int): at most this many tokens are kept: a window that holds both
            entities, starting at the first token when possible. (default: 90)
        keep_text (bool): store token, entity and sentence strings as ``.text`` lists.
            (default: :obj:`False`)
        markers (bool): keep the four entity markers as tokens ``<e1> … </e1> … <e2> … </e2>``
            (the position indicators of Zhou et al. 2016, also kept by the entity-aware
            paper's code); entity edges and relative positions still refer to the entity
            words only. (default: :obj:`True`)
        position_anchor (str): relative positions to the entity's ``"span"`` (0 inside it) or
            to its ``"last"`` token (the official code of Lee et al.). (default: ``"span"``)
    """

    def __init__(
        self,
        vocab: Vocab,
        max_distance: int = DEFAULT_MAX_DISTANCE,
        max_length: int = DEFAULT_MAX_LENGTH,
        keep_text: bool = False,
        markers: bool = True,
        position_anchor: str = "span",
    ):
        if position_anchor not in POSITION_ANCHORS:
            raise ValueError(f"position_anchor must be one of {', '.join(POSITION_ANCHORS)}, got {position_anchor!r}")
        if max_distance < 1:
            raise ValueError(f"max_distance must be at least 1, got {max_distance}")
        if max_length < 2:
            raise ValueError(f"max_length must be at least 2, got {max_length}")
        self.vocab = vocab
        self.max_distance = max_distance
        self.max_length = max_length
        self.keep_text = keep_text
        self.markers = markers
        self.position_anchor = position_anchor

    @property
    def num_positions(self) -> int:
        """Rows a relative-position embedding table needs (:math:`2D + 1`)."""
        return 2 * self.max_distance + 1

    def crop(self, sent: RelationSentence, where: str = "input") -> RelationSentence:
        """Cut ``sent`` to ``max_length`` tokens around its entities (and their markers)."""
        n, m = len(sent.tokens), self.max_length
        k = int(self.markers)
        first, last = sent.e1[0] - k, sent.e2[1] + k
        if last - first + 1 > m:
            raise ValueError(
                f"{where}: the entities span {last - first + 1} tokens, more than max_length={m}"
            )
        if n <= m:
            return sent
        a = max(0, last + 1 - m)
        return RelationSentence(
            tokens=sent.tokens[a : a + m],
            e1=(sent.e1[0] - a, sent.e1[1] - a),
            e2=(sent.e2[0] - a, sent.e2[1] - a),
            text=sent.text,
        )

    def __call__(
        self, sentence: str | RelationSentence, label: int | None = None, where: str = "input"
    ) -> HeteroData:
        sent = parse_relation(sentence, where) if isinstance(sentence, str) else sentence
        if self.markers:
            sent = with_markers(sent)
        sent = self.crop(sent, where)
        n = len(sent.tokens)
        (s1, t1), (s2, t2) = sent.e1, sent.e2
        node = torch.tensor([
            self.vocab.lookup(sent.tokens),
            relative_positions(n, sent.e1, self.max_distance, self.position_anchor),
            relative_positions(n, sent.e2, self.max_distance, self.position_anchor),
        ])
        ent = list(range(s1, t1 + 1)) + list(range(s2, t2 + 1))
        data = HeteroData({
            "token": {"word_id": node[0], "pos1": node[1], "pos2": node[2], "num_nodes": n},
            "entity": {"kind": torch.tensor([0, 1]), "num_nodes": 2},  # e1, e2
            "sentence": {"num_tokens": torch.tensor([n]), "num_nodes": 1},
            ("token", "in", "entity"): {
                "edge_index": torch.tensor([ent, [0] * (t1 - s1 + 1) + [1] * (t2 - s2 + 1)])
            },
            ("token", "in", "sentence"): {"edge_index": torch.tensor([list(range(n)), [0] * n])},
        })
        if label is not None:
            data.y = torch.tensor([label], dtype=torch.long)
        if self.keep_text:
            data["token"].text = list(sent.tokens)
            data["entity"].text = [sent.entity_text(1), sent.entity_text(2)]
            data["sentence"].text = [sent.text]
        return data


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


def tokens_of(data: HeteroData, vocab: Vocab | None = None) -> Sequence[str]:
    """Token strings of a graph: ``.text`` when kept, else looked up in ``vocab``."""
    tok = data["token"]
    if "text" in tok:
        return list(tok.text)
    if vocab is None:
        return [str(i) for i in tok.word_id.tolist()]
    return [vocab.itos[i] for i in tok.word_id.tolist()]
