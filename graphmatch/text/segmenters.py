"""Word segmenters that return character spans.

Every segmenter maps a text to ``Span(word, start, end)`` (end exclusive) in reading order.
Whitespace yields no span. The wrapped libraries (jieba, thulac, pkuseg) are imported and
their models loaded lazily, once per process: thulac alone loads about 0.5 GB.
"""

from __future__ import annotations

import abc
import contextlib
import functools
import io
import logging
import warnings
from collections.abc import Iterable, Sequence
from typing import NamedTuple


class Span(NamedTuple):
    """A word and its character offsets ``[start, end)`` in the text."""

    word: str
    start: int
    end: int


class Segmenter(abc.ABC):
    """Splits a text into words with their character offsets."""

    name: str

    @abc.abstractmethod
    def segment(self, text: str) -> list[Span]:
        """The words of ``text`` in order; whitespace produces no span."""


def align_words(text: str, words: Iterable[str]) -> list[Span]:
    """Place ``words`` (in order) back into ``text``; skip whitespace and words not found.

    Segmenters that return bare strings are aligned this way; a word that cannot be found
    after the cursor (a library that normalises characters) is dropped rather than misplaced.
    """
    spans: list[Span] = []
    cursor = 0
    for word in words:
        word = word.strip()
        if not word:
            continue
        start = text.find(word, cursor)
        if start < 0:
            continue
        spans.append(Span(word, start, start + len(word)))
        cursor = start + len(word)
    return spans


class JiebaSegmenter(Segmenter):
    """jieba's precise mode (``jieba.Tokenizer.tokenize``), which reports offsets itself."""

    name = "jieba"

    def __init__(self) -> None:
        import jieba

        jieba.setLogLevel(logging.WARNING)
        self._tokenizer = jieba.Tokenizer()

    def segment(self, text: str) -> list[Span]:
        return [Span(w, s, e) for w, s, e in self._tokenizer.tokenize(text) if w.strip()]


class ThulacSegmenter(Segmenter):
    """THULAC in segmentation-only mode."""

    name = "thulac"

    def __init__(self) -> None:
        import thulac

        with contextlib.redirect_stdout(io.StringIO()):  # it prints "Model loaded succeed"
            self._model = thulac.thulac(seg_only=True)

    def segment(self, text: str) -> list[Span]:
        if not text.strip():
            return []
        return align_words(text, (w for w, _ in self._model.cut(text)))


class PkusegSegmenter(Segmenter):
    """pkuseg with its default model (optional extra: ``pip install graphmatch[pkuseg]``)."""

    name = "pkuseg"

    def __init__(self) -> None:
        try:
            import pkuseg
        except ImportError as err:
            raise ImportError(
                "pkuseg is not installed; install it with `pip install numpy cython && "
                "pip install --no-build-isolation pkuseg` (it compiles from source)"
            ) from err
        self._model = pkuseg.pkuseg()

    def segment(self, text: str) -> list[Span]:
        return align_words(text, self._model.cut(text))


_SEGMENTERS: dict[str, type[Segmenter]] = {
    cls.name: cls for cls in (JiebaSegmenter, ThulacSegmenter, PkusegSegmenter)
}


@functools.cache
def get_segmenter(name: str) -> Segmenter:
    """The process-wide segmenter called ``name`` (``jieba``, ``thulac`` or ``pkuseg``)."""
    if name not in _SEGMENTERS:
        raise ValueError(f"unknown segmenter {name!r}; choose from {', '.join(_SEGMENTERS)}")
    return _SEGMENTERS[name]()


@functools.cache
def _warn_missing(name: str, reason: str) -> None:
    warnings.warn(f"segmenter {name!r} is unavailable and is skipped: {reason}", stacklevel=3)


def lattice(text: str, segmenters: Sequence[str] = ("jieba", "thulac", "pkuseg")) -> list[Span]:
    """The union of several segmentations, keyed by ``(start, end)``, sorted by position.

    A segmenter that is not installed (pkuseg is optional) is skipped with one warning.
    """
    found: dict[tuple[int, int], Span] = {}
    for name in segmenters:
        try:
            seg = get_segmenter(name)
        except ImportError as err:
            _warn_missing(name, str(err))
            continue
        for span in seg.segment(text):
            found.setdefault((span.start, span.end), span)
    return [found[key] for key in sorted(found)]
