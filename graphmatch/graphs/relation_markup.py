"""A sentence with two marked entities as character spans, and the SemEval entity markup.

Pure Python (no torch): the file readers of :mod:`graphmatch.data.relation_formats` and the
graph builder of :mod:`graphmatch.graphs.relation` share it, whatever the tokenisation.

A :class:`MarkedSentence` is the plain text and the ``[start, end)`` character spans of its
two entities ``e1`` (the head) and ``e2`` (the tail). e2 may come before e1 in the text (the
head/tail format allows it, the SemEval markup does not), and the entities may nest (the head
inside the tail, ``母亲`` in ``母亲四十岁时``, or the reverse) or overlap partly, as literature
corpora annotate them. Two entities with the same span are kept here and refused when the
sentence is tokenised (:class:`UnrepresentableExample`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: the four entity markers of the SemEval markup, in the order a well-formed sentence has them
MARKERS = ("<e1>", "</e1>", "<e2>", "</e2>")
_MARKER_RE = re.compile(r"</?e[12]>")


class UnrepresentableExample(ValueError):
    """An example the relation models cannot represent, though its line is well formed: its two
    entities are the same tokens, an entity has no token, or the entities lie further apart
    than ``max_length``. A dataset may skip such lines where any other error stops it; as a
    :class:`ValueError` it is a one-line error when not caught. The message starts with
    ``where`` (``file:line``), kept as :attr:`where`."""

    def __init__(self, where: str, reason: str):
        super().__init__(f"{where}: {reason}")
        self.where = where
        self.reason = reason


@dataclass(frozen=True)
class MarkedSentence:
    """Plain ``text`` and its entities' character spans ``[start, end)``."""

    text: str
    e1: tuple[int, int]
    e2: tuple[int, int]

    def entity_text(self, which: int) -> str:
        s, e = self.e1 if which == 1 else self.e2
        return self.text[s:e]

    def pieces(self) -> list[tuple[str, int]]:
        """The text cut at the four entity boundaries: five ``(piece, k)`` in reading order, with
        ``k`` the entities the piece lies in: 0 outside both, 1 in e1, 2 in e2, 3 in both (where
        they nest or overlap); an empty piece has ``k = 0``.

        ``"母亲四十岁时"`` with e1 = ``母亲`` inside e2 gives ``("", 0), ("", 0), ("母亲", 3),
        ("四十岁时", 2), ("", 0)``.
        """
        (s1, t1), (s2, t2) = self.e1, self.e2
        cuts = [0, *sorted((s1, t1, s2, t2)), len(self.text)]
        return [
            (self.text[a:b], (a < b) * ((s1 <= a and b <= t1) + 2 * (s2 <= a and b <= t2)))
            for a, b in zip(cuts, cuts[1:], strict=False)
        ]


def parse_markup(text: str, where: str = "input") -> MarkedSentence:
    """Parse SemEval's ``… <e1>…</e1> … <e2>…</e2> …`` markup into plain text and spans.

    The entities may nest (``<e1>… <e2>…</e2> …</e1>``, or e1 inside e2) or overlap partly
    (``<e1>… <e2>… </e1> …</e2>``, the markup :func:`~graphmatch.graphs.relation.with_markers`
    writes for such a pair). Raises :class:`ValueError` starting with ``where`` (e.g.
    ``"TRAIN_FILE.TXT:5"``) when a marker is missing or repeated, closes before it opens, e2
    comes wholly before e1, or an entity holds no visible character.
    """
    found = list(_MARKER_RE.finditer(text))
    names = [m.group() for m in found]
    for marker in MARKERS:
        count = names.count(marker)
        if count == 0:
            raise ValueError(f"{where}: missing entity marker {marker} in {text!r}")
        if count > 1:
            raise ValueError(f"{where}: entity marker {marker} appears {count} times in {text!r}")
    order = {name: i for i, name in enumerate(names)}
    for k in ("1", "2"):
        if order[f"</e{k}>"] < order[f"<e{k}>"]:
            raise ValueError(f"{where}: </e{k}> comes before <e{k}> in {text!r}")
    if order["</e2>"] < order["<e1>"]:
        raise ValueError(f"{where}: entities in the wrong order (e2 comes before e1) in {text!r}")
    # each marker's offset in the plain text: its offset in ``text`` less the markers before it
    at = {m.group(): m.start() - sum(len(x.group()) for x in found[:i]) for i, m in enumerate(found)}
    plain = _MARKER_RE.sub("", text)
    sent = MarkedSentence(plain, (at["<e1>"], at["</e1>"]), (at["<e2>"], at["</e2>"]))
    for k in (1, 2):
        if not sent.entity_text(k).strip():
            raise ValueError(f"{where}: entity e{k} is empty in {text!r}")
    return sent


def locate_entities(sentence: str, head: str, tail: str, where: str = "input") -> MarkedSentence:
    """Find ``head`` (e1) and ``tail`` (e2) in ``sentence`` (exact substrings).

    Of the pairs of occurrences, the first by these keys is taken:

    1. a pair that does not overlap, the closest together first (then the earlier head, then
       the earlier tail), so that an entity that also occurs elsewhere is not read into the other;
    2. else a nested pair, one inside the other (``母亲`` in ``母亲四十岁时``), the earlier head
       first, then the earlier tail;
    3. else a partly overlapping pair, likewise;
    4. else the same span for both (``head == tail`` occurring once), which tokenisation refuses
       (:class:`UnrepresentableExample`).

    Raises :class:`ValueError` starting with ``where`` when an entity is empty or absent.
    """
    for name, entity in (("head", head), ("tail", tail)):
        if not entity.strip():
            raise ValueError(f"{where}: the {name} entity is empty")
        if entity not in sentence:
            raise ValueError(f"{where}: the {name} entity {entity!r} is not in the sentence {sentence!r}")
    _, h, t = min(
        (_pair_rank(h, h + len(head), t, t + len(tail)), h, t)
        for h in _occurrences(sentence, head)
        for t in _occurrences(sentence, tail)
    )
    return MarkedSentence(sentence, (h, h + len(head)), (t, t + len(tail)))


def _pair_rank(s1: int, t1: int, s2: int, t2: int) -> tuple[int, int]:
    """``(kind, gap)`` of two spans: kind 0 apart (gap = characters between them), 1 nested,
    2 partly overlapping, 3 the same span; lower is preferred."""
    if t1 <= s2 or t2 <= s1:
        return 0, max(s2 - t1, s1 - t2)
    if (s1, t1) == (s2, t2):
        return 3, 0
    nested = s1 <= s2 and t2 <= t1 or s2 <= s1 and t1 <= t2
    return (1 if nested else 2), 0


def _occurrences(text: str, part: str) -> list[int]:
    """Start of every (possibly overlapping) occurrence of ``part`` in ``text``."""
    out, k = [], text.find(part)
    while k >= 0:
        out.append(k)
        k = text.find(part, k + 1)
    return out
