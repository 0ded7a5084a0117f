"""Word segmenters that return character spans.

Every segmenter maps a text to ``Span(word, start, end)`` (end exclusive) in reading order.
Whitespace yields no span. The wrapped libraries (jieba, thulac, pkuseg) are imported and
their models loaded lazily, when a text is first segmented with them, once per process.

thulac reads its model into tuples of Python integers: about 0.75 GB and seconds to load.
:class:`ThulacSegmenter` memory-maps the same int32 tables instead (thulac reads them by index
exactly as before), and :class:`PkusegSegmenter` memory-maps pkuseg's 105 MB of weights and
looks its features up in memory-mapped tables (:mod:`graphmatch.text.pkuseg_features`) instead
of unpickling its 2.6-million-entry dict: a command that segments a few sentences reads only
the pages it uses, and worker processes share them. The words are the same (tested on the
sample data).
"""

from __future__ import annotations

import abc
import array
import contextlib
import functools
import io
import logging
import mmap
import os
import struct
import sys
import warnings
import zipfile
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np


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


def mapped_int32(path: str, offset: int, count: int) -> memoryview:
    """``count`` little-endian int32 numbers at byte ``offset`` of a file, memory-mapped read-only:
    indexed like a tuple of ints, but the pages are read from the file as they are first used and
    shared by every process that maps it."""
    with open(path, "rb") as f:
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    return memoryview(mapped)[offset : offset + 4 * count].cast("i")


@contextlib.contextmanager
def mapped_thulac_tables() -> Iterator[None]:
    """While thulac loads a model: its int32 tables (``Dat`` double-array tries, ``CBModel``
    feature weights) are memory-mapped (:func:`mapped_int32`) instead of read into tuples of
    Python integers; same values, read the same way by index. Does nothing where a native int is
    not a little-endian 4-byte integer (thulac's file format)."""
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


def mapped_npz_array(path: str, name: str) -> np.ndarray | None:
    """Array ``name`` of an uncompressed ``.npz`` file, memory-mapped copy-on-write (pages are
    read as they are first used, and shared between processes); ``None`` when it is stored
    compressed (it cannot be mapped then)."""
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(f"{name}.npy")
        if info.compress_type != zipfile.ZIP_STORED:
            return None
        with archive.open(info) as member:
            version = np.lib.format.read_magic(member)
            read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
                np.lib.format.read_array_header_2_0
            shape, fortran, dtype = read_header(member)
            header = member.tell()
    with open(path, "rb") as f:  # the member's data start: after its local file header
        f.seek(info.header_offset)
        local = f.read(30)
        name_len, extra_len = struct.unpack("<HH", local[26:30])
    start = info.header_offset + 30 + name_len + extra_len + header
    return np.memmap(path, dtype=dtype, mode="c", offset=start, shape=shape, order="F" if fortran else "C")


@contextlib.contextmanager
def mapped_pkuseg_weights() -> Iterator[None]:
    """While pkuseg loads its model: the weights (``weights.npz``, 105 MB of float64) are
    memory-mapped (:func:`mapped_npz_array`) instead of read; same values."""
    from pkuseg.model import Model

    load = Model.__dict__["load"]

    def mapped_load(cls: type, model_dir: str | None = None) -> Any:
        from pkuseg.config import config

        path = os.path.join(model_dir or config.modelDir, "weights.npz")
        weights = mapped_npz_array(path, "w") if os.path.exists(path) else None
        if weights is None:  # another layout: pkuseg's own loading
            return load.__func__(cls, model_dir)
        with np.load(path) as npz:  # what pkuseg's Model.load does, with the mapped weights
            n_tag, n_feature = (int(n) for n in npz["sizes"])
        model = cls.__new__(cls)
        model.n_tag, model.n_feature = n_tag, n_feature
        model.n_transition_feature = n_tag * (n_feature + n_tag)
        if weights.shape != (model.n_transition_feature,):
            return load.__func__(cls, model_dir)
        model.w = weights
        return model

    Model.load = classmethod(mapped_load)
    try:
        yield
    finally:
        Model.load = load


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
    """pkuseg with its default model (optional extra: ``pip install graphmatch[pkuseg]``). With
    ``compact`` (the default) its weights are memory-mapped (:func:`mapped_pkuseg_weights`) and
    its feature dict is replaced by memory-mapped tables
    (:mod:`graphmatch.text.pkuseg_features`); ``compact=False`` loads both as pkuseg does.
    The words are the same."""

    name = "pkuseg"

    def __init__(self, compact: bool = True) -> None:
        try:
            import pkuseg
        except ImportError as err:
            raise ImportError(
                "pkuseg is not installed; install it with `pip install numpy cython && "
                "pip install --no-build-isolation pkuseg` (it compiles from source)"
            ) from err
        with mapped_pkuseg_weights() if compact else contextlib.nullcontext(), \
                table_pkuseg_features() if compact else contextlib.nullcontext():
            self._model = pkuseg.pkuseg()

    def segment(self, text: str) -> list[Span]:
        return align_words(text, self._model.cut(text))


class _TableFeatureExtractor:
    """Stands in for pkuseg's ``FeatureExtractor`` at segmentation time: the same normalisation,
    feature indices from :class:`~graphmatch.text.pkuseg_features.FeatureTables`, computed for
    a whole text at its first character (pkuseg asks character by character)."""

    def __init__(self, tables: Any, config: Any) -> None:
        from pkuseg.feature_extractor import FeatureExtractor

        self.normalize_text = FeatureExtractor.normalize_text
        self.tag_to_idx = tables.tag_to_idx
        self.feature_to_idx = tables  # pkuseg only takes its len()
        self._tables, self._config = tables, config
        self._nodes: list[str] | None = None
        self._features: list[list[int]] = []

    def get_node_features_idx(self, idx: int, nodes: list[str]) -> list[int]:
        if nodes is not self._nodes:
            c = self._config
            self._features = self._tables.text_features(nodes, c.wordMin, c.wordMax, c.wordFeature)
            self._nodes = nodes
        return self._features[idx]


@contextlib.contextmanager
def table_pkuseg_features() -> Iterator[None]:
    """While pkuseg loads its model: its feature extractor is :class:`_TableFeatureExtractor`
    over the tables of the model's ``features.pkl`` (built once, see
    :func:`~graphmatch.text.pkuseg_features.feature_tables`); pkuseg's own extractor where the
    tables cannot be made (no ``features.pkl``, a cache folder that cannot be written)."""
    from pkuseg.config import config
    from pkuseg.feature_extractor import FeatureExtractor

    from graphmatch.text.pkuseg_features import FeatureTables, feature_tables

    load = FeatureExtractor.__dict__["load"]

    def table_load(cls: type, model_dir: str | None = None) -> Any:
        model_dir = model_dir or config.modelDir
        try:
            tables = FeatureTables(feature_tables(model_dir))
        except (OSError, ValueError) as err:  # another layout, or no writable cache folder
            warnings.warn(f"pkuseg feature tables unavailable ({err}); loading pkuseg's own features "
                          "(seconds more and ~0.6 GB per process)", stacklevel=2)
            return load.__func__(cls, model_dir)
        return _TableFeatureExtractor(tables, config)

    FeatureExtractor.load = classmethod(table_load)
    try:
        yield
    finally:
        FeatureExtractor.load = load


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
