"""Folding (NFKC, lowercase, character for character), English stop words, and memoised tables
of code points, for K-Query."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable

import numpy as np

from graphmatch.graphs.kbert.records import (
    _UNSET,
)

#: English function words that never make a K-Query match in word-piece mode: many are
#: WordNet nouns (``a``, ``in``, ``it``, ``be``, ``us``; morphy turns ``has`` into ``ha`` and
#: ``does`` into ``doe``). Closed classes only: articles and determiners, pronouns, prepositions,
#: conjunctions, auxiliary and modal verbs, a few adverbs and interjections, and the pieces a
#: basic tokenizer leaves of contractions (``don ' t``, ``it ' s``). Content words stay.
_STOP_WORDS = """
a an the this that these those some any each every no all both either neither such another other
same own few more most less least much many several enough
i me my mine myself we us our ours ourselves you your yours yourself yourselves he him his himself
she her hers herself it its itself they them their theirs themselves one ones oneself who whom whose
which what whatever whoever whichever someone somebody something anyone anybody anything everyone
everybody everything nobody nothing none
about above across after against along amid among around as at before behind below beneath beside
besides between beyond by despite down during except for from in inside into like near of off on
onto out outside over past per since than through throughout till to toward towards under
underneath unlike until up upon via with within without
and or nor but so yet if then else because although though while whereas whether unless once when
where why how wherever whenever
am is are was were be been being have has had having do does did doing done will would shall should
can could may might must ought
not only just very too also there here now again ever never always often still already almost quite
rather even perhaps
yes oh ok okay
s t d m ll re ve n ca wo sha don doesn didn isn aren wasn weren hasn haven hadn won wouldn shouldn couldn mustn
ain
"""
STOP_WORDS = frozenset(_STOP_WORDS.split())


def _fold_char(ch: str) -> str:
    folded = unicodedata.normalize("NFKC", ch).lower()
    if len(folded) == 1:
        return folded
    return ch.lower() if len(ch.lower()) == 1 else ch


class _Fold(dict):
    """``str.translate`` table of :func:`fold`, memoised."""

    def __missing__(self, code: int) -> int:
        self[code] = ord(_fold_char(chr(code)))
        return self[code]


_FOLD = _Fold()


def fold(text: str) -> str:
    """``text`` in NFKC form (full-width -> half-width) and lowercase, character for character:
    a character whose folded form is longer stays as it is, so offsets do not move. Default mode
    runs K-Query on this form (``ＤＶＤ播放机`` finds ``dvd播放机``)."""
    return text.translate(_FOLD)


class _CodeTable:
    """A memoised function of code points, looked up for many at once: ``table(codes)``."""

    def __init__(self, fill: Callable[[str], int]):
        self._fill = fill
        self._table = np.full(0x110000, _UNSET, dtype=np.int32)

    def __call__(self, codes: np.ndarray) -> np.ndarray:
        out = self._table[codes]
        new = out == _UNSET
        if new.any():
            for code in np.unique(codes[new]).tolist():
                self._table[code] = self._fill(chr(code))
            out = self._table[codes]
        return out


__all__ = ["STOP_WORDS", "fold"]
