"""WordNet 3.0's nouns read from its own database files (WNDB), and the English knowledge graph
derived from them.

The files (``index.noun``, ``data.noun``, ``noun.exc``; format in ``wndb(5WN)``) are found in
``$WORDNET_DIR``, then ``<data root>/wordnet`` (``root``, then ``$GRAPHMATCH_DATA``), then
``/usr/share/wordnet`` (Debian's ``wordnet-base``). A folder holding ``dict/`` (WordNet's own
release) is accepted as well.

:func:`wordnet_triples` turns them into ``subject<TAB>predicate<TAB>object`` triples, one block
per noun lemma of ``index.noun`` (in its order), the relations in the order asked for:

=============  ==============  ==========================================================
relation       predicate       object
=============  ==============  ==========================================================
``type``       ``type``        the first sense's lexicographer file (``noun.food`` → ``food``)
``hypernym``   ``is a``        the first word of the first sense's first (instance) hypernym
``holonym``    ``part of`` /   the first sense's first part / member holonym
               ``member of``
``hypernyms``  ``is a``        the first hypernym of every sense (off by default)
``synonym``    ``same as``     the first sense's other words (off by default)
=============  ==============  ==========================================================

Predicates are short English phrases so that K-BERT's branch ``predicate object`` reads as a
phrase (``company type group``, ``company is a institution``) and costs few word pieces.
Underscores become spaces (``ice_cream`` → ``ice cream``); a value equal to its subject is left
out (but for ``type``). The default graph (``type`` and ``hypernym`` for all 117,798 noun lemmas) ships in the
package as :data:`PACKAGED_GRAPH` with WordNet's licence beside it, so ``kg: wordnet`` needs no
system package; ``graphmatch kg wordnet`` rebuilds it byte for byte.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from graphmatch.io.atomic import write_atomically
from graphmatch.io.datafiles import CACHE_DIR, data_roots
from graphmatch.io.text_files import decode_utf8

PACKAGE_DATA = Path(__file__).resolve().parent / "data"
#: the default graph (``type,hypernym``), gzip-compressed, and WordNet's licence and noun exceptions
PACKAGED_GRAPH = PACKAGE_DATA / "wordnet.spo.gz"
PACKAGED_EXCEPTIONS = PACKAGE_DATA / "noun.exc"
ENV_VAR = "WORDNET_DIR"
SYSTEM_DIR = Path("/usr/share/wordnet")
FILES = ("index.noun", "data.noun", "noun.exc")
INSTALL = ("install Debian's wordnet-base (apt-get install wordnet-base, or make setup) "
           f"or set ${ENV_VAR} to a folder holding {', '.join(FILES)}")
#: WordNet's lexicographer files 3-28 (the noun ones) without their ``noun.`` prefix; numbered
#: as in WordNet's ``lexnames`` file, which Debian does not ship
NOUN_TYPES = (
    "Tops", "act", "animal", "artifact", "attribute", "body", "cognition", "communication", "event",
    "feeling", "food", "group", "location", "motive", "object", "person", "phenomenon", "plant",
    "possession", "process", "quantity", "relation", "shape", "state", "substance", "time",
)  # fmt: skip
FIRST_NOUN_FILE = 3
#: relation name → predicate (holonyms have two, see :func:`wordnet_triples`)
PREDICATES = {"type": "type", "hypernym": "is a", "holonym": "part of", "hypernyms": "is a", "synonym": "same as"}
RELATIONS = tuple(PREDICATES)
DEFAULT_RELATIONS = ("type", "hypernym")
_HOLONYMS = {"#p": "part of", "#m": "member of"}


@dataclass(frozen=True)
class Synset:
    """One noun synset: its lexicographer file number, its words (as written, underscores kept),
    its pointers to noun synsets ``(symbol, offset)`` in file order, and where it was read."""

    lexfile: int
    words: tuple[str, ...]
    pointers: tuple[tuple[str, int], ...]
    where: str

    @property
    def type(self) -> str:
        return NOUN_TYPES[self.lexfile - FIRST_NOUN_FILE]

    def first(self, *symbols: str) -> int | None:
        """The offset of the first pointer whose symbol is one of ``symbols``."""
        return next((off for sym, off in self.pointers if sym in symbols), None)


def find_wordnet_dir(root: str | os.PathLike | None = None) -> Path:
    """The first folder holding WordNet's noun files (see the module docstring for the order);
    none is a :class:`FileNotFoundError` naming where it looked and what to install."""
    env = os.environ.get(ENV_VAR)
    places = ([Path(env)] if env else []) + [base / "wordnet" for base in data_roots(root)] + [SYSTEM_DIR]
    for place in places:
        for folder in (place, place / "dict"):
            if all((folder / name).is_file() for name in FILES):
                return folder
    looked = ", ".join(map(str, places)) + ("" if env else f" (${ENV_VAR} unset)")
    raise FileNotFoundError(f"WordNet's database files not found: looked in {looked}; {INSTALL}")


def _lines(path: Path) -> Iterator[tuple[str, str]]:
    """``(where, line)`` of a WNDB file, its licence header (lines that begin with a space) skipped."""
    text = decode_utf8(path.read_bytes(), str(path))
    for lineno, line in enumerate(text.splitlines(), 1):
        if line and not line.startswith(" "):
            yield f"{path}:{lineno}", line


def _malformed(where: str, what: str, line: str) -> ValueError:
    return ValueError(f"{where}: malformed {what} line ({line[:60]!r}...); see wndb(5WN)")


def read_index(path: str | os.PathLike) -> dict[str, list[int]]:
    """``index.noun``: lemma → its synset offsets, most frequent sense first, in file order."""
    lemmas: dict[str, list[int]] = {}
    for where, line in _lines(Path(path)):
        f = line.split()
        try:
            n_synsets, n_pointers = int(f[2]), int(f[3])
            offsets = [int(x) for x in f[6 + n_pointers:]]
            ok = f[1] == "n" and len(offsets) == n_synsets > 0
        except (IndexError, ValueError):
            ok = False
        if not ok:
            raise _malformed(where, "index", line)
        lemmas[f[0]] = offsets
    return lemmas


def read_data(path: str | os.PathLike) -> dict[int, Synset]:
    """``data.noun``: offset → :class:`Synset` (pointers to other parts of speech are dropped)."""
    synsets: dict[int, Synset] = {}
    for where, line in _lines(Path(path)):
        f = line.partition(" | ")[0].split()
        try:
            lexfile, n_words = int(f[1]), int(f[3], 16)
            words = tuple(f[4:4 + 2 * n_words:2])
            at = 4 + 2 * n_words
            end = at + 1 + 4 * int(f[at])
            ptrs = [f[k:k + 4] for k in range(at + 1, end, 4)]
            pointers = tuple((sym, int(off)) for sym, off, pos, _ in ptrs if pos == "n")
            ok = (f[2] == "n" and len(words) == n_words > 0 and len(f) >= end
                  and FIRST_NOUN_FILE <= lexfile < FIRST_NOUN_FILE + len(NOUN_TYPES))
        except (IndexError, ValueError):
            ok = False
        if not ok:
            raise _malformed(where, "data", line)
        synsets[int(f[0])] = Synset(lexfile, words, pointers, where)
    return synsets


def read_exceptions(path: str | os.PathLike) -> dict[str, tuple[str, ...]]:
    """An exception list (``noun.exc``): inflected form → its base forms, underscores as spaces."""
    table: dict[str, tuple[str, ...]] = {}
    for where, line in _lines(Path(path)):
        forms = [form.replace("_", " ") for form in line.split(" ")]
        if len(forms) < 2 or not all(forms):
            raise _malformed(where, "exception", line)
        table[forms[0]] = tuple(dict.fromkeys(table.get(forms[0], ()) + tuple(forms[1:])))
    return table


class WordNet:
    """WordNet's nouns: :attr:`lemmas` (``index.noun``), :attr:`synsets` (``data.noun``) and
    :attr:`exceptions` (``noun.exc``), read from ``folder`` (default :func:`find_wordnet_dir`)."""

    def __init__(self, folder: str | os.PathLike | None = None, root: str | os.PathLike | None = None):
        self.folder = Path(folder) if folder is not None else find_wordnet_dir(root)
        missing = [name for name in FILES if not (self.folder / name).is_file()]
        if missing:
            raise FileNotFoundError(f"WordNet folder {self.folder} lacks {', '.join(missing)}; {INSTALL}")
        self.lemmas = read_index(self.folder / "index.noun")
        self.synsets = read_data(self.folder / "data.noun")
        self.exceptions = read_exceptions(self.folder / "noun.exc")
        for lemma, offsets in self.lemmas.items():
            for off in offsets:
                if off not in self.synsets:
                    raise ValueError(f"{self.folder / 'index.noun'}: lemma {lemma!r} names synset {off:08d}, "
                                     "which data.noun lacks")

    def synset(self, offset: int, by: Synset) -> Synset:
        """The synset at ``offset``, which ``by`` points to (a dangling pointer names ``by``'s line)."""
        if offset not in self.synsets:
            raise ValueError(f"{by.where}: points to synset {offset:08d}, which data.noun lacks")
        return self.synsets[offset]

    def name(self, offset: int | None, by: Synset) -> str | None:
        """The first word of a synset as text (``ice_cream`` → ``ice cream``)."""
        return None if offset is None else self.synset(offset, by).words[0].replace("_", " ")


def wordnet_triples(wn: WordNet, relations: Sequence[str] = DEFAULT_RELATIONS) -> Iterator[tuple[str, str, str]]:
    """The triples of ``relations`` (see the module docstring) for every noun lemma; an unknown
    relation is a ``ValueError`` at once."""
    unknown = [r for r in relations if r not in PREDICATES]
    if unknown or not relations:
        raise ValueError(f"unknown WordNet relation(s) {', '.join(map(repr, unknown)) or '(none given)'}; "
                         f"choose from {', '.join(RELATIONS)}")
    return _triples(wn, relations)


def _triples(wn: WordNet, relations: Sequence[str]) -> Iterator[tuple[str, str, str]]:
    for lemma, offsets in wn.lemmas.items():
        subject = lemma.replace("_", " ")
        first = wn.synsets[offsets[0]]
        seen: set[tuple[str, str]] = set()
        for relation in relations:
            for predicate, obj in _values(wn, relation, first, offsets):
                if obj is None or (predicate, obj) in seen or (relation != "type" and obj.lower() == subject):
                    continue
                seen.add((predicate, obj))
                yield subject, predicate, obj


def _values(wn: WordNet, relation: str, first: Synset, offsets: list[int]) -> Iterator[tuple[str, str | None]]:
    if relation == "type":
        yield "type", first.type
    elif relation == "hypernym":
        yield "is a", wn.name(first.first("@", "@i"), first)
    elif relation == "holonym":
        for symbol, predicate in _HOLONYMS.items():
            yield predicate, wn.name(first.first(symbol), first)
    elif relation == "hypernyms":
        for off in offsets:
            sense = wn.synsets[off]
            yield "is a", wn.name(sense.first("@", "@i"), sense)
    else:  # synonym
        for word in first.words:
            yield "same as", word.replace("_", " ")


def write_spo(triples: Iterable[tuple[str, str, str]], path: str | os.PathLike) -> tuple[int, int]:
    """Write ``subject<TAB>predicate<TAB>object`` lines to ``path`` (atomically), gzip-compressed
    when it ends in ``.gz`` (deterministic: no name, mtime 0). Returns (triples, subjects)."""
    lines = [f"{s}\t{p}\t{o}\n" for s, p, o in triples]
    data = "".join(lines).encode("utf-8")

    def write(tmp: str) -> None:
        with open(tmp, "wb") as f:
            if str(path).endswith(".gz"):
                with gzip.GzipFile(filename="", mode="wb", fileobj=f, compresslevel=9, mtime=0) as gz:
                    gz.write(data)
            else:
                f.write(data)

    write_atomically(path, write)
    return len(lines), len({line.split("\t", 1)[0] for line in lines})


def packaged_graph(root: str | os.PathLike | None = None) -> Path:
    """The default WordNet graph: the packaged :data:`PACKAGED_GRAPH`, or where a copy lacks it,
    one built from WordNet's files into the cache; neither is one line saying what to install."""
    if PACKAGED_GRAPH.is_file():
        return PACKAGED_GRAPH
    cached = CACHE_DIR / "wordnet" / "wordnet.spo.gz"
    if not cached.is_file():
        try:
            folder = find_wordnet_dir(root)
        except FileNotFoundError as err:
            raise FileNotFoundError(f"the packaged WordNet graph {PACKAGED_GRAPH} is missing (reinstall graphmatch) "
                                    f"and cannot be rebuilt: {err}") from None
        cached.parent.mkdir(parents=True, exist_ok=True)
        write_spo(wordnet_triples(WordNet(folder)), cached)
    return cached
