"""WordNet's morphology for nouns (``morphy(7WN)``): the lemma of an inflected English noun.

A word's candidate base forms, in order: the word itself; its entries in the exception list
(``geese`` → ``goose``); for ``-ful`` words the base of the rest plus ``ful`` (``boxesful`` →
``boxful``); then the detachment rules below, except for words that end in ``ss`` or have at
most two letters; for a phrase, the same for its last word (``snow geese`` → ``snow goose``).
The first candidate that is a lemma of the knowledge graph wins; none is ``None``.

=========  ======  ==============================
suffix     ending  example
=========  ======  ==============================
``s``      --      ``cats`` → ``cat``
``ses``    ``s``   ``buses`` → ``bus``
``xes``    ``x``   ``boxes`` → ``box``
``zes``    ``z``   ``waltzes`` → ``waltz``
``ches``   ``ch``  ``churches`` → ``church``
``shes``   ``sh``  ``dishes`` → ``dish``
``men``    ``man`` ``firemen`` → ``fireman``
``ies``    ``y``   ``companies`` → ``company``
=========  ======  ==============================
"""

from __future__ import annotations

from collections.abc import Container, Iterator, Mapping, Sequence

from graphmatch.knowledge.wordnet import PACKAGED_EXCEPTIONS, WordNet, read_exceptions

NOUN_RULES = (("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"),
              ("men", "man"), ("ies", "y"))


class Lemmatizer:
    """Nouns to their lemmas in ``lemmas`` (e.g. a :class:`~graphmatch.knowledge.KnowledgeGraph`'s
    ``subjects``, whose multiword lemmas are written with spaces).

    Args:
        exceptions: inflected form → base forms (default: WordNet's ``noun.exc``, packaged).
    """

    def __init__(self, lemmas: Container[str], exceptions: Mapping[str, Sequence[str]] | None = None):
        self.lemmas = lemmas
        self.exceptions = read_exceptions(PACKAGED_EXCEPTIONS) if exceptions is None else exceptions

    @classmethod
    def from_wordnet(cls, wn: WordNet) -> Lemmatizer:
        """WordNet's own noun lemmas and exception list."""
        return cls({lemma.replace("_", " ") for lemma in wn.lemmas}, wn.exceptions)

    def bases(self, word: str) -> Iterator[str]:
        """Candidate base forms of ``word`` in morphy's order, whether lemmas or not."""
        yield word
        yield from self.exceptions.get(word, ())
        if word.endswith("ful") and len(word) > 3:
            yield from (base + "ful" for base in self._detach(word[:-3]))
        yield from self._detach(word)
        prefix, _, last = word.rpartition(" ")
        if prefix:
            yield from (f"{prefix} {base}" for base in (*self.exceptions.get(last, ()), *self._detach(last)))

    @staticmethod
    def _detach(word: str) -> Iterator[str]:
        if word.endswith("ss") or len(word) <= 2:
            return
        yield from (word[: -len(suffix)] + ending for suffix, ending in NOUN_RULES if word.endswith(suffix))

    def lemma(self, word: str) -> str | None:
        """The lemma of ``word`` (words separated by spaces or underscores; tried as written,
        then lower-cased), or ``None``."""
        word = " ".join(word.replace("_", " ").split())
        for form in dict.fromkeys((word, word.lower())):
            found = next((base for base in self.bases(form) if base in self.lemmas), None)
            if found is not None:
                return found
        return None

    def match(self, mention: str) -> str | None:
        """The lemma of a mention as a whole, else of its head (last) word, else ``None``."""
        whole = self.lemma(mention)
        if whole is not None:
            return whole
        words = mention.split()
        return self.lemma(words[-1]) if len(words) > 1 else None
