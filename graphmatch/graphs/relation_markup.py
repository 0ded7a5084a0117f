"""A sentence with two marked entities as character spans, and the SemEval entity markup.

Pure Python (no torch): the file readers of :mod:`graphmatch.data.relation_formats` and the
graph builder of :mod:`graphmatch.graphs.relation` share it, whatever the tokenisation.

A :class:`MarkedSentence` is the plain text and the ``[start, end)`` character spans of its
two entities ``e1`` (the head) and ``e2`` (the tail). The entities never overlap; e2 may come
before e1 in the text (the head/tail format allows it, the SemEval markup does not).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: the four entity markers of the SemEval markup, in the order a well-formed sentence has them
MARKERS = ("<e1>", "</e1>", "<e2>", "</e2>")
_MARKER_RE = re.compile(r"</?e[12]>")


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
        """The text cut at the four entity boundaries: ``(piece, k)`` in reading order with
        ``k`` = 0 outside the entities, 1 for e1 and 2 for e2."""
        (s1, t1), (s2, t2) = self.e1, self.e2
        first, second = ((s1, t1, 1), (s2, t2, 2)) if s1 <= s2 else ((s2, t2, 2), (s1, t1, 1))
        return [
            (self.text[: first[0]], 0),
            (self.text[first[0] : first[1]], first[2]),
            (self.text[first[1] : second[0]], 0),
            (self.text[second[0] : second[1]], second[2]),
            (self.text[second[1] :], 0),
        ]


def parse_markup(text: str, where: str = "input") -> MarkedSentence:
    """Parse SemEval's ``… <e1>…</e1> … <e2>…</e2> …`` markup into plain text and spans.

    Raises :class:`ValueError` starting with ``where`` (e.g. ``"TRAIN_FILE.TXT:5"``) when a
    marker is missing or repeated, the entities are nested, overlap, come in the wrong order,
    or an entity holds no visible character.
    """
    found = [m.group() for m in _MARKER_RE.finditer(text)]
    for marker in MARKERS:
        count = found.count(marker)
        if count == 0:
            raise ValueError(f"{where}: missing entity marker {marker} in {text!r}")
        if count > 1:
            raise ValueError(f"{where}: entity marker {marker} appears {count} times in {text!r}")
    if found != list(MARKERS):
        raise ValueError(f"{where}: {_order_problem(found)} in {text!r}")
    before, e1, middle, e2, after = _MARKER_RE.split(text)
    for k, piece in ((1, e1), (2, e2)):
        if not piece.strip():
            raise ValueError(f"{where}: entity e{k} is empty in {text!r}")
    s1 = len(before)
    s2 = s1 + len(e1) + len(middle)
    return MarkedSentence(before + e1 + middle + e2 + after, (s1, s1 + len(e1)), (s2, s2 + len(e2)))


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


def locate_entities(sentence: str, head: str, tail: str, where: str = "input") -> MarkedSentence:
    """Find ``head`` (e1) and ``tail`` (e2) in ``sentence`` (exact substrings).

    When an entity occurs more than once, the pair of occurrences that do not overlap and lie
    closest together is taken (ties: the earlier head, then the earlier tail). Raises
    :class:`ValueError` starting with ``where`` when an entity is empty or absent, or when every
    occurrence of one overlaps every occurrence of the other (e.g. the tail inside the head).
    """
    for name, entity in (("head", head), ("tail", tail)):
        if not entity.strip():
            raise ValueError(f"{where}: the {name} entity is empty")
        if entity not in sentence:
            raise ValueError(f"{where}: the {name} entity {entity!r} is not in the sentence {sentence!r}")
    best: tuple[int, int, int] | None = None
    for h in _occurrences(sentence, head):
        for t in _occurrences(sentence, tail):
            if h < t + len(tail) and t < h + len(head):
                continue  # overlap
            gap = t - (h + len(head)) if h < t else h - (t + len(tail))
            if best is None or gap < best[0]:
                best = (gap, h, t)
    if best is None:
        raise ValueError(f"{where}: head {head!r} and tail {tail!r} overlap wherever they occur in {sentence!r}")
    _, h, t = best
    return MarkedSentence(sentence, (h, h + len(head)), (t, t + len(tail)))


def _occurrences(text: str, part: str) -> list[int]:
    """Start of every (possibly overlapping) occurrence of ``part`` in ``text``."""
    out, k = [], text.find(part)
    while k >= 0:
        out.append(k)
        k = text.find(part, k + 1)
    return out
