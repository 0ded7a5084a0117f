"""Knowledge graphs of ``subject\\tpredicate\\tobject`` triples (K-BERT's ``.spo`` files)."""

from __future__ import annotations

import functools
import os
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from graphmatch.io.datafiles import locate, resolve_path
from graphmatch.knowledge.kg_store import KGArrays, SubjectValues, load_spo
from graphmatch.knowledge.trie import FlatTrie, Trie
from graphmatch.knowledge.wordnet import packaged_graph
from graphmatch.text.segmenters import Span

#: short names for the KGs released with K-BERT (paths under the data root) and for the English
#: WordNet graph shipped in the package (:func:`graphmatch.knowledge.wordnet.packaged_graph`)
BUILTIN_KGS = {"hownet": "kbert/kgs/HowNet.spo", "medical": "kbert/kgs/Medical.spo", "wordnet": "wordnet.spo.gz"}


def builtin_kg_path(name: str, root: str | os.PathLike | None = None) -> Path:
    """The ``.spo`` file of a name in :data:`BUILTIN_KGS` (K-BERT's are located, or downloaded,
    with :func:`graphmatch.io.datafiles.locate`)."""
    return packaged_graph(root) if name == "wordnet" else locate(BUILTIN_KGS[name], root)


def is_own_kg(kg: str | os.PathLike | None) -> bool:
    """Whether ``kg`` is a user's own file (neither a name of :data:`BUILTIN_KGS` nor no knowledge)."""
    return kg is not None and str(kg).lower() not in ("none", "null", "", *BUILTIN_KGS)


def resolve_kg(kg: str | os.PathLike | None, root: str | os.PathLike | None) -> Path | None:
    """A name of :data:`BUILTIN_KGS` or a path → the ``.spo`` file; ``None``/``"none"`` → no knowledge."""
    if kg is None or str(kg).lower() in ("none", "null", ""):
        return None
    key = str(kg).lower()
    if key in BUILTIN_KGS:
        return builtin_kg_path(key, root)
    try:
        path = resolve_path(kg, root, "knowledge graph")
    except FileNotFoundError as err:
        raise FileNotFoundError(f"knowledge graph {str(kg)!r} is neither {'/'.join(BUILTIN_KGS)} nor a file "
                                f"({err})") from None
    if not path.is_file():
        raise ValueError(f"knowledge graph {path} is a folder; give a .spo file")
    return path



class KnowledgeGraph:
    """Subjects with their ``(predicate, object)`` values, in file order, duplicates removed.

    K-BERT's reference keeps the values of a subject in a Python ``set`` and injects the
    first ``max_entities`` in iteration order, which changes with the string hash seed; here
    the first ones in file order are taken, so the choice is the same on every run.

    A graph read from files (:meth:`from_spo`) is held as arrays
    (:class:`~graphmatch.knowledge.kg_store.KGArrays`: integer ids, CSR values, the subjects'
    trie), cached by the files' digest; one made in memory (``KnowledgeGraph(triples)``,
    :meth:`add`) as a ``dict``.
    """

    def __init__(self, triples: Sequence[tuple[str, str, str]] = ()):
        self._subjects: dict[str, list[tuple[str, str]]] = {}
        self._arrays: KGArrays | None = None
        #: whether :meth:`from_spo` read the graph from its cache
        self.from_cache = False
        self._flat_tries: dict[str, FlatTrie] = {}
        for s, p, o in triples:
            self.add(s, p, o)
        self._trie: Trie | None = None

    @property
    def cache_folder(self) -> Path | None:
        """The cache folder of a graph read from files (``None``: not cached, e.g. too small)."""
        return None if self._arrays is None else self._arrays.folder

    @property
    def subjects(self) -> Mapping[str, list[tuple[str, str]]]:
        """Subject → its ``(predicate, object)`` values in file order."""
        return self._subjects if self._arrays is None else SubjectValues(self._arrays)

    def add(self, subject: str, predicate: str, obj: str) -> None:
        if self._arrays is not None:  # held as arrays: from now on a dict
            self._subjects = {s: list(v) for s, v in self.subjects.items()}
            self._arrays = None
        values = self._subjects.setdefault(subject, [])
        if (predicate, obj) not in values:
            values.append((predicate, obj))
        self._trie = None
        self._flat_tries.clear()

    def flat_trie(self, name: str = "subjects",
                  words: Callable[[Iterable[str]], Iterable[str]] | None = None) -> FlatTrie:
        """A :class:`FlatTrie` over the subjects (``words`` maps them to the trie's words; ``name``
        says which mapping), built (or read from its cache) once per graph: every builder of
        every split holding one graph (:meth:`shared`) holds one trie, which for a 2-million-subject
        file is hundreds of MB. A graph read from files has the subjects' own (``words=None``)
        already."""
        if words is None and self._arrays is not None:
            return self._arrays.trie
        trie = self._flat_tries.get(name)
        if trie is None:
            trie = self._flat_tries[name] = FlatTrie(words(self.subjects) if words else self.subjects)
        return trie

    @classmethod
    def load(cls, name_or_path: str | os.PathLike, root: str | os.PathLike | None = None,
             on_error: str = "raise") -> KnowledgeGraph:
        """``"hownet"``, ``"medical"``, ``"wordnet"`` (see :func:`builtin_kg_path`) or a path."""
        key = str(name_or_path).lower()
        path = builtin_kg_path(key, root) if key in BUILTIN_KGS else Path(name_or_path)
        return cls.from_spo(path, on_error=on_error)

    @classmethod
    def shared(cls, path: str | os.PathLike) -> KnowledgeGraph:
        """:meth:`from_spo` of one file, parsed once per process for each (path, size, mtime): every
        split and builder of a run shares it (a 2-million-triple file takes seconds to parse and
        gigabytes to hold). The graph returned is shared: do not :meth:`add` to it."""
        st = os.stat(path)
        return _shared_kg(str(Path(path).resolve()), st.st_size, st.st_mtime_ns)

    @classmethod
    def from_spo(cls, paths: str | os.PathLike | Sequence[str | os.PathLike], on_error: str = "raise",
                 cache_dir: str | os.PathLike | bool | None = None,
                 progress: Callable[[int], None] | None = None) -> KnowledgeGraph:
        """Read one or more ``.spo`` files (gzip-compressed when their name ends in ``.gz``).

        A graph of :data:`~graphmatch.knowledge.trie.CACHE_MIN_WORDS` subjects or more is kept
        as arrays under ``cache_dir`` (default ``$GRAPHMATCH_CACHE/kgs``; ``False``: never),
        keyed by the files' sha256, and read back memory-mapped (:mod:`~graphmatch.knowledge.kg_store`).

        Args:
            on_error: ``"raise"`` stops at a malformed line with ``file:line`` in the message (and
                caches nothing); ``"skip"`` drops such lines and warns once with their count. Blank
                lines are ignored; spaces around a field are stripped, with one warning counting
                such lines.
            progress: told of every ``n`` bytes parsed (not called when the cache is read).
        """
        if on_error not in ("raise", "skip"):
            raise ValueError("on_error must be 'raise' or 'skip'")
        if isinstance(paths, (str, os.PathLike)):
            paths = [paths]
        arrays, cached = load_spo(paths, on_error, cache_dir, progress)
        skipped, padded, first_padded = arrays.warnings
        if padded:
            warnings.warn(f"{first_padded}: {padded} line(s) of the knowledge graph have spaces around a subject, "
                          "predicate or object (first here); read with the spaces stripped", stacklevel=2)
        if skipped:
            warnings.warn(f"skipped {skipped} malformed line(s) in {', '.join(map(str, paths))}",
                          stacklevel=2)
        if not len(arrays) and paths:
            raise ValueError(f"{', '.join(map(str, paths))}: the knowledge graph is empty (no "
                             "'subject<TAB>predicate<TAB>object' line); give a file with triples, or no knowledge "
                             "graph (kg: null in a recipe, --kg none on the command line)")
        kg = cls()
        kg._arrays, kg.from_cache = arrays, cached
        return kg

    def __len__(self) -> int:
        return len(self.subjects)

    def __contains__(self, subject: str) -> bool:
        return subject in self.subjects if self._arrays is None else self._arrays.subject_id(subject) >= 0

    @property
    def trie(self) -> Trie:
        """A trie over all subjects (built on first use)."""
        if self._trie is None:
            self._trie = Trie(self.subjects)
        return self._trie

    def values(self, subject: str, max_entities: int | None = 2, predicate: bool = True, joiner: str = "") -> list[str]:
        """The first ``max_entities`` values of ``subject`` in file order (``None``: all).

        With ``predicate`` the value is predicate and object joined by ``joiner`` (K-BERT's
        classification input: glued for Chinese, ``义原标点``; ``joiner=" "`` for words,
        ``is a institution``); without, the object alone (its NER input).
        """
        if self._arrays is None:
            pairs = self._subjects.get(subject, ())[:max_entities]
        else:
            sid = self._arrays.subject_id(subject)
            pairs = self._arrays.pairs(sid, max_entities) if sid >= 0 else []
        return [p + joiner + o if predicate else o for p, o in pairs]

    def query(self, words: Sequence[Span]) -> list[Span]:
        """K-Query by words: the segmenter words that are subjects."""
        return [w for w in words if w.word in self]

    def longest_matches(self, text: str) -> list[Span]:
        """K-Query over characters: greedy, left to right, longest subject at each position."""
        trie = self.trie
        spans: list[Span] = []
        i = 0
        while i < len(text):
            ends, _ = trie.walk(text, i)
            if ends:
                spans.append(Span(text[i:ends[-1]], i, ends[-1]))
                i = ends[-1]
            else:
                i += 1
        return spans


@functools.lru_cache(maxsize=2)
def _shared_kg(path: str, size: int, mtime_ns: int) -> KnowledgeGraph:
    return KnowledgeGraph.from_spo(path)
