r"""K-Query over the words of English texts (word-piece mode of :mod:`graphmatch.graphs.kbert.core`),
for a whole corpus at once.

At every word :math:`i` the longest run of words :math:`i..j` (:math:`j - i <` ``max_words``,
within the word's text) whose text, lower-cased with runs of whitespace made one space, WordNet's
morphology (:class:`~graphmatch.knowledge.Lemmatizer`) maps to a KG subject; the runs found are
then taken greedily left to right. With :math:`c_i` "word :math:`i` is not a stop word" and
:math:`g_i` "word :math:`i` is glued to word :math:`i + 1`" (no space between), a run may be
tried when

.. math::
    \text{ok}(i, i) = c_i, \qquad
    \text{ok}(i, j > i) = (c_i \lor g_i) \land (c_j \lor g_{j-1})

Every mask is an array operation over all words; the runs are tried by length, longest first,
each length over all the words still without a match at once, so the lemmas asked for are
exactly those a word-by-word scan asks for. Lemmas are memoised per builder (:class:`LemmaMemo`):
a corpus looks each distinct run text up once.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from graphmatch.knowledge import Lemmatizer
from graphmatch.knowledge.noun_reading import NounReadings

_MISSING = object()
#: a word that starts its sentence follows one of these (or nothing)
SENTENCE_ENDS = frozenset(".!?;:\"'(")


class LemmaMemo:
    """The KG subject of run texts, memoised by the text as written and as normalised
    (lower-cased, runs of whitespace made one space)."""

    def __init__(self, lemmatizer: Lemmatizer):
        self.lemmatizer = lemmatizer
        self.memo: dict[str, str | None] = {}

    def __call__(self, text: str) -> str | None:
        found = self.memo.get(text, _MISSING)
        if found is _MISSING:
            key = " ".join(text.lower().split())
            found = self.memo[key] if key in self.memo else self.lemmatizer.lemma(key)
            self.memo[text] = self.memo[key] = found
        return found  # type: ignore[return-value]

    def many(self, texts: Sequence[str]) -> list[str | None]:
        """The subjects of ``texts`` (one dictionary lookup each once memoised)."""
        get = self.memo.get
        found = [get(t, _MISSING) for t in texts]
        for k in [k for k, f in enumerate(found) if f is _MISSING]:
            found[k] = self(texts[k])
        return found  # type: ignore[return-value]


def word_runs(string: str, start: np.ndarray, end: np.ndarray, text_first: np.ndarray, text_last: np.ndarray,
              lemmas: LemmaMemo, stop_words: Collection[str], max_words: int,
              noun_readings: NounReadings | None = None) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Every word's longest run with a subject (see the module docstring), before the greedy choice.

    Args:
        string: the texts laid end to end; word :math:`i` is ``string[start[i]:end[i]]``.
        text_first, text_last: the first and last word of each word's text.
        noun_readings: a lone word's match must read as a noun there (:meth:`NounReadings.fits`).

    Returns the runs' start and end characters (sorted by start) and their subjects.
    """
    n = len(start)
    words = [string[lo:hi] for lo, hi in zip(start.tolist(), end.tolist(), strict=True)]
    content = np.fromiter((w.lower() not in stop_words for w in words), dtype=bool, count=n)
    glued = np.zeros(n, dtype=bool)  # glued[i]: no space between word i and word i + 1
    glued[:-1] = end[:-1] == start[1:]
    index = np.arange(n)
    opens = content | ((index < text_last) & glued)  # may start a run of two or more words
    subject = np.full(n, -1, dtype=np.int64)  # the run's subject, in ``found``
    run_end = np.zeros(n, dtype=np.int64)
    found: list[str] = []
    for k in range(max_words - 1, -1, -1):  # run length k + 1, longest first
        j = index + k
        if k:
            ok = (j <= text_last) & opens
            ok[ok] &= content[j[ok]] | glued[j[ok] - 1]
        else:
            ok = content.copy()
        ask = (ok & (subject < 0)).nonzero()[0]
        if not len(ask):
            continue
        hi = end[j[ask]]
        got = lemmas.many([string[a:b] for a, b in zip(start[ask].tolist(), hi.tolist(), strict=True)])
        hit = np.fromiter((g is not None for g in got), dtype=bool, count=len(got))
        if k == 0 and noun_readings is not None:
            hit = _noun_reading(hit, ask, got, words, text_first, noun_readings)
        at = ask[hit]
        subject[at] = len(found) + np.arange(len(at))
        run_end[at] = hi[hit]
        found.extend(g for g, h in zip(got, hit.tolist(), strict=True) if h)
    at = (subject >= 0).nonzero()[0]
    return start[at], run_end[at], [found[s] for s in subject[at].tolist()]


def _noun_reading(hit: np.ndarray, ask: np.ndarray, got: list[str | None], words: list[str],
                  text_first: np.ndarray, readings: NounReadings) -> np.ndarray:
    """Which lone-word matches read as nouns after their previous word."""
    out = hit.copy()
    for k in hit.nonzero()[0].tolist():
        i = int(ask[k])
        previous = words[i - 1] if i > text_first[i] else None
        initial = previous is None or previous in SENTENCE_ENDS
        out[k] = readings.fits(words[i], got[k], previous, initial)  # type: ignore[arg-type]
    return out


__all__ = ["SENTENCE_ENDS", "LemmaMemo", "word_runs"]
