"""A knowledge graph as arrays: integer ids for subjects, predicates and objects, each subject's
values as a CSR row, and the K-Query trie of the subjects; parsed from ``.spo`` files and cached
by the files' sha256 digest as ``.npy`` files read back memory-mapped.

For :math:`S` subjects with :math:`V` values, subject :math:`s`'s values (in file order,
duplicates removed) are ``value_predicate[k]``, ``value_object[k]`` for
:math:`k \\in [\\text{value\\_ptr}[s], \\text{value\\_ptr}[s + 1])`, and the subject is word
:math:`s` of the trie, so that the trie's matches are subject ids.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import os
import shutil
import time
import uuid
from array import array
from collections.abc import Callable, ItemsView, Iterator, Mapping, Sequence, ValuesView
from pathlib import Path

import numpy as np

from graphmatch.io import datafiles
from graphmatch.io.text_files import decode_utf8
from graphmatch.knowledge.strings import Strings, encode_strings, prefix_levels
from graphmatch.knowledge.trie import _SHIFT, CACHE_MIN_WORDS, FlatTrie

#: bump when the cached arrays change
FORMAT = 2
#: the file written last in a cache folder: without it the folder is not read
COMPLETE = "complete"
#: a temporary folder this old was left by a killed process: removed by the next writer
STALE_S = 3600
_BLOCK = 1 << 23  # bytes read at a time
_STRINGS = ("subjects", "predicates", "objects")
_ARRAYS = ("value_ptr", "value_predicate", "value_object", "warnings")


class KGArrays:
    """The arrays of a knowledge graph (see the module's docstring) and the strings they index."""

    def __init__(self, subjects: Strings, predicates: Strings, objects: Strings, value_ptr: np.ndarray,
                 value_predicate: np.ndarray, value_object: np.ndarray, trie: FlatTrie,
                 warnings: tuple[int, int, str] = (0, 0, "")):
        self.subjects, self.objects, self.trie = subjects, objects, trie
        self.predicates = list(predicates)  # a handful: kept as Python strings
        self.value_ptr, self.value_predicate, self.value_object = value_ptr, value_predicate, value_object
        #: ``(skipped, padded, first padded line)`` of the parse, for its warnings
        self.warnings = warnings
        #: the cache folder the arrays were read from or saved to (``None``: not cached)
        self.folder: Path | None = None
        self._ids: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.subjects)

    def subject_id(self, subject: str) -> int:
        """The id of ``subject``, -1 if it is none (a walk down the trie; memoised)."""
        found = self._ids.get(subject)
        if found is None:
            found = self._ids[subject] = self.trie.index(subject)
        return found

    def pairs(self, sid: int, limit: int | None = None) -> list[tuple[str, str]]:
        """The first ``limit`` ``(predicate, object)`` values of subject ``sid`` (``None``: all)."""
        rows = range(int(self.value_ptr[sid]), int(self.value_ptr[sid + 1]))[:limit]
        preds, objects = self.predicates, self.objects
        return [(preds[p], objects[o]) for p, o in zip(self.value_predicate[rows.start:rows.stop].tolist(),
                                                      self.value_object[rows.start:rows.stop].tolist(), strict=True)]

    # ------------------------------------------------------------------ the cache
    def save(self, folder: Path) -> None:
        """Every array as ``.npy`` in ``folder``, written under a temporary name and renamed, the
        :data:`COMPLETE` marker last: a folder a killed process left is never taken as whole."""
        tmp = folder.with_name(f".{folder.name}.{uuid.uuid4().hex[:12]}.tmp")
        tmp.mkdir(parents=True)
        for left in folder.parent.glob(f".{folder.name}.*.tmp"):  # by a killed process, an hour ago or more
            with contextlib.suppress(OSError):
                if left != tmp and time.time() - left.stat().st_mtime > STALE_S:
                    shutil.rmtree(left, ignore_errors=True)
        try:
            for name in _STRINGS:
                strings = Strings.of(self.predicates) if name == "predicates" else getattr(self, name)
                np.save(tmp / f"{name}_codes.npy", np.asarray(strings.codes), allow_pickle=False)
                np.save(tmp / f"{name}_ptr.npy", np.asarray(strings.ptr), allow_pickle=False)
            skipped, padded, first = self.warnings
            warnings = np.array([skipped, padded, *encode_strings([first])[0].tolist()], dtype=np.int64)
            for name in _ARRAYS:
                array = warnings if name == "warnings" else getattr(self, name)
                np.save(tmp / f"{name}.npy", array, allow_pickle=False)
            self.trie.save(tmp)
            for file in tmp.iterdir():
                with open(file, "rb+") as f:
                    os.fsync(f.fileno())
            (tmp / COMPLETE).write_text(f"{FORMAT}\n", encoding="utf-8")
            try:
                tmp.rename(folder)
            except OSError:  # another process wrote it first
                if not (folder / COMPLETE).is_file():
                    raise
            self.folder = folder
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    @classmethod
    def load(cls, folder: Path) -> KGArrays | None:
        """The arrays :meth:`save` wrote, memory-mapped; ``None`` for an incomplete or damaged folder."""
        try:
            if (folder / COMPLETE).read_text(encoding="utf-8").strip() != str(FORMAT):
                return None

            def read(name: str) -> np.ndarray:  # a plain view of the map: slicing a np.memmap costs µs
                return np.asarray(np.load(folder / f"{name}.npy", mmap_mode="r", allow_pickle=False))

            strings = {name: Strings(read(f"{name}_codes"), read(f"{name}_ptr")) for name in _STRINGS}
            warnings = np.asarray(read("warnings"))
            first = warnings[2:].astype("<u4").tobytes().decode("utf-32-le", "surrogatepass")
            arrays = cls(**strings, value_ptr=read("value_ptr"), value_predicate=read("value_predicate"),
                         value_object=read("value_object"), trie=FlatTrie.load(folder, strings["subjects"]),
                         warnings=(int(warnings[0]), int(warnings[1]), first))
            arrays.folder = folder
            return arrays
        except (OSError, ValueError, EOFError):
            return None


class SubjectValues(Mapping[str, list[tuple[str, str]]]):
    """``KnowledgeGraph.subjects`` of a graph held as :class:`KGArrays`: subject →
    ``[(predicate, object), ...]``, read from the arrays when asked."""

    def __init__(self, arrays: KGArrays):
        self._arrays = arrays

    def __getitem__(self, subject: str) -> list[tuple[str, str]]:
        sid = self._arrays.subject_id(subject) if isinstance(subject, str) else -1
        if sid < 0:
            raise KeyError(subject)
        return self._arrays.pairs(sid)

    def __contains__(self, subject: object) -> bool:
        return isinstance(subject, str) and self._arrays.subject_id(subject) >= 0

    def __iter__(self) -> Iterator[str]:
        return iter(self._arrays.subjects)

    def __len__(self) -> int:
        return len(self._arrays)

    def values(self) -> ValuesView[list[tuple[str, str]]]:
        return _ValuesById(self)

    def items(self) -> ItemsView[str, list[tuple[str, str]]]:
        return _ItemsById(self)


class _ValuesById(ValuesView):
    """The values of :class:`SubjectValues` read by subject id (no lookup by name)."""

    def __iter__(self) -> Iterator[list[tuple[str, str]]]:
        arrays = self._mapping._arrays
        return (arrays.pairs(i) for i in range(len(arrays)))


class _ItemsById(ItemsView):
    def __iter__(self) -> Iterator[tuple[str, list[tuple[str, str]]]]:
        arrays = self._mapping._arrays
        return zip(arrays.subjects, (arrays.pairs(i) for i in range(len(arrays))), strict=True)


def file_digest(paths: Sequence[str | os.PathLike], on_error: str) -> str:
    """The cache key of a parse: the sha256 of the files' contents, :data:`FORMAT` and ``on_error``."""
    digest = hashlib.sha256(f"kg|{FORMAT}|{on_error}".encode())
    for path in paths:
        with open(path, "rb") as f:
            digest.update(hashlib.file_digest(f, "sha256").digest())
    return digest.hexdigest()


def cache_folder(paths: Sequence[str | os.PathLike], on_error: str,
                 cache_dir: str | os.PathLike | bool | None) -> Path | None:
    """Where the arrays of ``paths`` are cached (``cache_dir=False``: nowhere)."""
    if cache_dir is False:
        return None
    root = Path(datafiles.CACHE_DIR / "kgs" if cache_dir in (None, True) else cache_dir)  # type: ignore[arg-type]
    return root / file_digest(paths, on_error)[:32]


def parse_spo(paths: Sequence[str | os.PathLike], on_error: str = "raise",
              progress: Callable[[int], None] | None = None) -> KGArrays:
    """The arrays of ``.spo`` files (see :meth:`KnowledgeGraph.from_spo` for the format and
    ``on_error``); ``progress(n)`` is told of every ``n`` bytes read. One pass of plain Python
    over the lines gives every subject, predicate and object its id (in order of first
    occurrence); the rest is vectorised."""
    ids: tuple[dict[str, int], dict[str, int], dict[str, int]] = ({}, {}, {})
    column = (array("q"), array("q"), array("q"))
    skipped = padded = 0
    first_padded = ""
    for path in paths:
        if not Path(path).is_file():
            raise FileNotFoundError(f"knowledge graph file not found: {path}")
        last = 0
        for block in _blocks(path):
            lines = decode_utf8(block, str(path), last + 1).split("\n")[:-1]
            s_ids, p_ids, o_ids = ids
            add_s, add_p, add_o = (c.append for c in column)
            for lineno, line in enumerate(lines, last + 1):
                line = line.strip()
                if not line:
                    continue
                fields = line.split("\t")
                if len(fields) == 3:
                    s, p, o = fields
                    s, p, o = s.strip(), p.strip(), o.strip()
                    if s and p and o:
                        if len(s) + len(p) + len(o) + 2 != len(line):
                            padded += 1
                            first_padded = first_padded or f"{path}:{lineno}"
                        add_s(s_ids.setdefault(s, len(s_ids)))
                        add_p(p_ids.setdefault(p, len(p_ids)))
                        add_o(o_ids.setdefault(o, len(o_ids)))
                        continue
                if on_error == "raise":
                    raise ValueError(f"{path}:{lineno}: expected 'subject<TAB>predicate<TAB>object', got {line!r}")
                skipped += 1
            last += len(lines)
            if progress is not None:
                progress(len(block))
    sid, pid, oid = (np.frombuffer(c, dtype=np.int64) if len(c) else np.zeros(0, dtype=np.int64) for c in column)
    rows = _first_triples(sid, pid, oid, len(ids[1]), len(ids[2]))
    value_ptr = np.zeros(len(ids[0]) + 1, dtype=np.int64)
    np.cumsum(np.bincount(sid[rows], minlength=len(ids[0])), out=value_ptr[1:])
    names = list(ids[0])
    s_codes, s_ptr = encode_strings(names)
    node, keys, level_ptr = prefix_levels(s_codes, s_ptr, _SHIFT)
    subjects = Strings(s_codes, s_ptr)
    ids[0].clear()
    del names
    trie = FlatTrie.from_levels(keys, level_ptr, node, subjects)
    return KGArrays(subjects, Strings.of(list(ids[1])), Strings.of(list(ids[2])), value_ptr,
                    pid[rows].astype(np.int32), oid[rows].astype(np.int32), trie, (skipped, padded, first_padded))


def _first_triples(sid: np.ndarray, pid: np.ndarray, oid: np.ndarray, predicates: int, objects: int) -> np.ndarray:
    """The rows of the first occurrence of each (subject, predicate, object), grouped by subject,
    in file order within a subject."""
    if len(sid) and (int(sid.max()) + 1) * predicates * objects < 2**62:
        _, first = np.unique((sid * predicates + pid) * objects + oid, return_index=True)
    else:
        order = np.lexsort((oid, pid, sid))
        new = np.ones(len(order), dtype=bool)
        new[1:] = (np.diff(sid[order]) != 0) | (np.diff(pid[order]) != 0) | (np.diff(oid[order]) != 0)
        first = order[new]
    kept = np.sort(first)
    return kept[np.argsort(sid[kept], kind="stable")]


def load_spo(paths: Sequence[str | os.PathLike], on_error: str = "raise",
             cache_dir: str | os.PathLike | bool | None = None,
             progress: Callable[[int], None] | None = None) -> tuple[KGArrays, bool]:
    """The arrays of ``paths`` from their cache, or parsed (and cached when the graph has at least
    :data:`~graphmatch.knowledge.trie.CACHE_MIN_WORDS` subjects); with whether the cache was read.
    A file that fails to parse caches nothing."""
    for path in paths:
        if not Path(path).is_file():
            raise FileNotFoundError(f"knowledge graph file not found: {path}")
    folder = cache_folder(paths, on_error, cache_dir)
    if folder is not None and folder.is_dir():
        arrays = KGArrays.load(folder)
        if arrays is not None:
            return arrays, True
    arrays = parse_spo(paths, on_error, progress)
    if folder is not None and len(arrays) >= CACHE_MIN_WORDS:
        if folder.is_dir():  # damaged or of another format
            shutil.rmtree(folder, ignore_errors=True)
        arrays.save(folder)
    return arrays, False


def _blocks(path: str | os.PathLike) -> Iterator[bytes]:
    """The file's bytes in blocks of whole lines (the last one ending with ``\\n``)."""
    with (gzip.open if str(path).endswith(".gz") else open)(path, "rb") as f:
        rest = b""
        while chunk := f.read(_BLOCK):
            chunk = rest + chunk
            cut = chunk.rfind(b"\n") + 1
            rest = chunk[cut:]
            if cut:
                yield chunk[:cut]
        if rest:
            yield rest + b"\n"
