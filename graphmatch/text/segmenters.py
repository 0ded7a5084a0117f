"""Word segmenters that return character spans.

Every segmenter maps a text to ``Span(word, start, end)`` (end exclusive) in reading order.
Whitespace yields no span. The wrapped libraries (jieba, thulac, pkuseg) are imported and
their models loaded lazily, when a text is first segmented with them, once per process.

thulac reads its model into tuples of Python integers: about 0.75 GB and seconds to load.
:class:`ThulacSegmenter` memory-maps the same int32 tables instead (thulac reads them by index
exactly as before), and :class:`PkusegSegmenter` memory-maps pkuseg's 105 MB of weights and
looks its features up in memory-mapped tables (:mod:`graphmatch.text.pkuseg_adapter`) instead
of unpickling its 2.6-million-entry dict: a command that segments a few sentences reads only
the pages it uses, and worker processes share them. The words are the same (tested on the
sample data).
"""

from __future__ import annotations

import abc
import array
import contextlib
import functools
import importlib
import io
import logging
import os
import struct
import sys
import warnings
from collections.abc import Iterable, Iterator, Sequence
from importlib import metadata
from typing import Any, NamedTuple

from graphmatch.text.mapped_files import mapped_int32


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


@contextlib.contextmanager
def mapped_thulac_tables() -> Iterator[None]:
    """While thulac loads a model: its int32 tables (``Dat`` double-array tries, ``CBModel``
    feature weights) are memory-mapped (:func:`~graphmatch.text.mapped_files.mapped_int32`)
    instead of read into tuples of Python integers; same values, read the same way by index. Does
    nothing where a native int is not a little-endian 4-byte integer (thulac's file format)."""
    from thulac.base.Dat import Dat
    from thulac.character.CBModel import CBModel

    if array.array("i").itemsize != 4 or sys.byteorder != "little":
        yield
        return
    dat_init, model_init = Dat.__init__, CBModel.__init__

    def read_dat(self: Any, filename: str | None = None, *args: Any, **kwargs: Any) -> None:
        if not filename:  # a table built in memory (thulac's datSize=, oldDat=): thulac's own code
            dat_init(self, filename, *args, **kwargs)
            return
        self.datSize = os.path.getsize(filename) // 8  # as thulac: a trailing partial entry is ignored
        self.dat = mapped_int32(filename, 0, 2 * self.datSize)

    def read_model(self: Any, filename: str) -> None:
        with open(filename, "rb") as f:
            self.l_size, self.f_size = struct.unpack("<ii", f.read(8))
            labels = self.l_size * self.l_size
            self.ll_weights = struct.unpack(f"<{labels}i", f.read(4 * labels))
        self.fl_weights = mapped_int32(filename, 8 + 4 * labels, self.f_size * self.l_size)

    Dat.__init__, CBModel.__init__ = read_dat, read_model
    try:
        yield
    finally:
        Dat.__init__, CBModel.__init__ = dat_init, model_init


class ThulacSegmenter(Segmenter):
    """THULAC in segmentation-only mode (its tables memory-mapped, see
    :func:`mapped_thulac_tables`; ``compact=False`` loads them as thulac does)."""

    name = "thulac"

    def __init__(self, compact: bool = True) -> None:
        import thulac

        tables = mapped_thulac_tables() if compact else contextlib.nullcontext()
        with tables, contextlib.redirect_stdout(io.StringIO()):  # it prints "Model loaded succeed"
            self._model = thulac.thulac(seg_only=True)

    def segment(self, text: str) -> list[Span]:
        if not text.strip():
            return []
        return align_words(text, (w for w, _ in self._model.cut(text)))


class PkusegSegmenter(Segmenter):
    """pkuseg with its default model (optional: :data:`INSTALL` says how to install it). With
    ``compact`` (the default) its weights are memory-mapped and its feature dict is replaced by
    memory-mapped tables (:class:`~graphmatch.text.pkuseg_adapter.PkusegAdapter`);
    ``compact=False`` loads both as pkuseg does. The words are the same."""

    name = "pkuseg"

    def __init__(self, compact: bool = True) -> None:
        from graphmatch.text.pkuseg_adapter import PkusegAdapter  # NumPy tables: only when pkuseg is used

        self._model = PkusegAdapter(compact).build()

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


#: how to install each segmenter (pkuseg builds against NumPy and Cython: see the Makefile's .pkuseg stamp)
INSTALL = {"jieba": "pip install jieba", "thulac": "pip install thulac",
           "pkuseg": "pip install numpy cython && pip install --no-build-isolation pkuseg"}


def segmenter_version(name: str) -> str | None:
    """The installed version of the library behind segmenter ``name`` (``None``: not installed)."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def installed_segmenters(names: Sequence[str], missing: str = "error", key: str = "segmenters",
                         skip: str = "") -> tuple[str, ...]:
    """``names`` whose library imports. A missing one raises :class:`ValueError` (one line naming
    it, the setting ``key`` and how to install it, or ``skip``, how to go on without it) when
    ``missing="error"``; with ``"skip"`` it is left out with one warning."""
    kept = []
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError as err:
            if missing != "skip":
                raise ValueError(f"{key}: segmenter {name!r} is not installed ({err}); install it with "
                                 f"`{INSTALL.get(name, 'pip install ' + name)}`{skip}") from err
            _warn_missing(name, str(err))
            continue
        kept.append(name)
    return tuple(kept)


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
