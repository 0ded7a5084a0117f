r"""Whether an English word reads as a noun where it stands: WordNet's branches are nouns'
(:mod:`~graphmatch.knowledge.wordnet`), and a word matched where it is a verb or an adjective
(``born``, ``die``, ``far``, ``old``) gets the branches of a noun it is not.

The prior is how often SemCor tags the lemma as a noun (WordNet's ``cntlist.rev``: the tag count
of every sense, by part of speech), and without tagged uses how many of its senses are nouns
(``index.noun``, ``index.verb``, ``index.adj``, ``index.adv``):

.. math::
    p_\text{noun}(\ell) = \frac{c_n(\ell)}{c_n(\ell) + c_v(\ell) + c_a(\ell) + c_r(\ell)}

:data:`PACKAGED_SHARES` holds :math:`p_\text{noun}` of every noun lemma that has another part of
speech (the others are nouns only) and marks the lemmas WordNet also writes capitalised (names:
``Yugoslavia``, ``Johnson``), so no system package is needed; :func:`noun_shares` rebuilds it from
the database files. :meth:`NounReadings.fits` decides one word in its sentence:

1. a single letter never matches alone (the ``u`` of ``U.S.``, the ``b`` of ``Lyndon B. Johnson``);
2. a capitalised word inside a sentence (not all capitals) is a name: it matches only a lemma
   WordNet knows as a name;
3. a lemma never tagged as a noun but tagged as another part of speech (:math:`p_\text{noun} = 0`:
   ``born``, ``old``, ``far``) is not a noun;
4. after a determiner or possessive (``the``, ``a``, ``his`` …) it is a noun (``the die``);
5. after ``to``, a modal or a subject pronoun (``will``, ``they`` …) it is not, if it has
   another part of speech (``they die``);
6. otherwise it is a noun when :math:`p_\text{noun} \ge 1/2`.
"""

from __future__ import annotations

import gzip
import os
from collections import Counter
from pathlib import Path

from graphmatch.knowledge.wordnet import PACKAGE_DATA, find_wordnet_dir, read_data

#: ``lemma\tshare\tname``: the noun share of the lemmas with another part of speech (1 for the others),
#: and 1 for a lemma WordNet writes capitalised (gzip)
PACKAGED_SHARES = PACKAGE_DATA / "noun_share.tsv.gz"
_POS = {"1": "n", "2": "v", "3": "a", "4": "r", "5": "a"}  # cntlist.rev's ss_type; 5: adjective satellite
_INDEXES = {"n": "index.noun", "v": "index.verb", "a": "index.adj", "r": "index.adv"}
DETERMINERS = frozenset((
    "the", "a", "an", "this", "that", "these", "those", "his", "her", "its", "their", "our", "my", "your",
    "some", "any", "every", "each", "no", "another", "either", "neither", "such", "what", "which", "whose"))
VERB_CUES = frozenset(("to", "will", "would", "can", "could", "should", "may", "might", "must", "shall", "i", "you",
                       "he", "she", "we", "they", "who", "not", "never"))


def _index_senses(path: Path) -> dict[str, int]:
    senses = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith(" "):
            f = line.split()
            senses[f[0]] = int(f[2])
    return senses


def noun_shares(folder: str | os.PathLike | None = None) -> tuple[dict[str, float], set[str]]:
    """:math:`p_\\text{noun}` (rounded to 3 decimals) of every noun lemma with another part of
    speech, and the lemmas written capitalised in ``data.noun`` (names), from the database files
    in ``folder`` (default :func:`find_wordnet_dir`)."""
    folder = Path(folder) if folder is not None else find_wordnet_dir()
    names = {word.lower().replace("_", " ") for synset in read_data(folder / "data.noun").values()
             for word in synset.words if word != word.lower()}
    senses = {pos: _index_senses(folder / name) for pos, name in _INDEXES.items()}
    tagged: Counter[tuple[str, str]] = Counter()
    for line in (folder / "cntlist.rev").read_text(encoding="utf-8").splitlines():
        key, _, count = line.split()
        lemma, _, rest = key.partition("%")
        tagged[lemma, _POS[rest[0]]] += int(count)
    shares = {}
    for lemma in senses["n"]:
        others = [pos for pos in "var" if lemma in senses[pos]]
        if not others:
            continue
        counts = {pos: tagged[lemma, pos] for pos in "nvar"}
        if not sum(counts.values()):  # no tagged use: the share of its senses
            counts = {pos: senses[pos].get(lemma, 0) for pos in "nvar"}
        shares[lemma.replace("_", " ")] = round(counts["n"] / sum(counts.values()), 3)
    return shares, names


def write_shares(shares: dict[str, float], names: set[str], path: str | os.PathLike) -> None:
    """``lemma\\tshare\\tname`` lines, sorted, gzip-compressed with no timestamp (rebuilt byte for byte)."""
    lemmas = sorted(set(shares) | names)
    text = "".join(f"{w}\t{shares.get(w, 1.0):g}\t{int(w in names)}\n" for w in lemmas)
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
        f.write(text.encode("utf-8"))


def read_shares(path: str | os.PathLike = PACKAGED_SHARES) -> tuple[dict[str, float], set[str]]:
    """What :func:`write_shares` wrote: the shares below 1 and the names."""
    shares, names = {}, set()
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            lemma, share, name = line.rstrip("\n").split("\t")
            if share != "1":
                shares[lemma] = float(share)
            if name == "1":
                names.add(lemma)
    return shares, names


class NounReadings:
    """The rules of the module documentation over noun shares and names (default: :data:`PACKAGED_SHARES`)."""

    def __init__(self, shares: dict[str, float] | None = None, names: set[str] | None = None):
        if shares is None:
            shares, names = read_shares()
        self.shares, self.names = dict(shares), set(names or ())

    def share(self, lemma: str) -> float:
        """:math:`p_\\text{noun}` of a noun lemma (1 for a noun only)."""
        return self.shares.get(lemma, 1.0)

    def fits(self, word: str, lemma: str, previous: str | None, initial: bool) -> bool:
        """Whether ``word`` (as written), of noun lemma ``lemma``, reads as a noun after the word
        ``previous`` (``None`` at the start of a text); ``initial``: it starts its sentence."""
        if len(word) == 1:
            return False
        if word[0].isupper() and not word.isupper() and not initial:
            return lemma in self.names
        share = self.share(lemma)
        if share == 0.0:
            return False
        prev = previous.lower() if previous is not None else None
        if prev in DETERMINERS:
            return True
        if prev in VERB_CUES and share < 1.0:
            return False
        return share >= 0.5


__all__ = ["DETERMINERS", "PACKAGED_SHARES", "VERB_CUES", "NounReadings", "noun_shares", "read_shares",
           "write_shares"]
