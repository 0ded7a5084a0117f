r"""Knowledge that fits the sentence: K-BERT's candidate branches scored against their sentence.

K-BERT hangs the first ``max_entities`` values of every matched word in the KG's file order,
whatever the sentence says (``苹果`` gets its fruit sememes in a sentence about a phone), and
every matched word costs branch tokens. :class:`BranchSelection` instead scores *every* value
:math:`v` of a word matched in input :math:`x` by the cosine of their embeddings,

.. math::
    s(x, v) = \frac{e(x)^\top e(v)}{\lVert e(x) \rVert\, \lVert e(v) \rVert},

with :math:`e` a sentence encoder (``embed``: the fine-tuned model's own pretrained checkpoint,
mean-pooled, before training) over the input's texts and the value's object alone, and keeps

* per word the ``per_word`` (``max_entities``) best values with :math:`s \ge \tau`
  (``threshold``), and
* per input the ``top_k`` best of those over all its words (``None``: no cap).

Embeddings are memoised by text, so a corpus embeds each sentence and each distinct object once.
:attr:`BranchSelection.counts` keeps how many candidates were seen and kept, and
:attr:`BranchSelection.dropped` a sample of what was dropped, with its score.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from graphmatch.utils.ragged_np import ranges

#: how many dropped candidates :attr:`BranchSelection.dropped` keeps
DROPPED_SAMPLE = 40


class Dropped(NamedTuple):
    """A candidate branch the selection dropped."""

    sentence: str
    word: str
    value: str
    score: float


class BranchSelection:
    """Which candidate branches of a corpus to keep (see the module documentation).

    Args:
        embed: texts → their embeddings ``[len(texts), d]`` (any scale: they are normalised here).
        top_k (int, optional): branches kept per input, the best over all its words; ``None``
            keeps every word's best. (default: :obj:`None`)
        threshold (float, optional): the lowest cosine kept. (default: :obj:`0.0`)
        key (str, optional): what identifies ``embed`` (its checkpoint) in a cache key.
    """

    def __init__(self, embed: Callable[[list[str]], np.ndarray], top_k: int | None = None, threshold: float = 0.0,
                 key: str = ""):
        if top_k is not None and top_k < 0:
            raise ValueError(f"top_k must be >= 0 or None, got {top_k}")
        if not -1.0 <= threshold <= 1.0:
            raise ValueError(f"threshold must be a cosine in [-1, 1], got {threshold}")
        self.embed, self.top_k, self.threshold, self.key = embed, top_k, threshold, key
        self._rows: dict[str, int] = {}
        self._vectors = np.zeros((0, 0), dtype=np.float32)
        #: candidate branches seen and kept so far
        self.counts = [0, 0]
        #: a sample of the dropped candidates (the first :data:`DROPPED_SAMPLE`)
        self.dropped: list[Dropped] = []

    def options(self) -> dict[str, object]:
        """What a cache of trees built with this selection is keyed by."""
        return {"top_k": self.top_k, "threshold": self.threshold, "encoder": self.key}

    def mark(self) -> tuple[int, int, int]:
        """Where :attr:`counts` and :attr:`dropped` stand now (what :meth:`report` counts from)."""
        return self.counts[0], self.counts[1], len(self.dropped)

    def report(self, since: tuple[int, int, int]) -> dict[str, Any]:
        """The candidates seen and kept since :meth:`mark` gave ``since``, and those dropped meanwhile
        that :attr:`dropped` sampled: what a dataset stores of its selection."""
        return {"candidates": self.counts[0] - since[0], "kept": self.counts[1] - since[1],
                "dropped": [d._asdict() for d in self.dropped[since[2]:]]}

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        """Unit embeddings of ``texts`` ``[len(texts), d]``; texts not seen before are embedded in one call."""
        new = list(dict.fromkeys(t for t in texts if t not in self._rows))
        if new:
            found = np.asarray(self.embed(new), dtype=np.float32)
            if found.ndim != 2 or len(found) != len(new):
                raise ValueError(f"embed gave an array of shape {found.shape} for {len(new)} texts")
            found = found / np.maximum(np.linalg.norm(found, axis=1, keepdims=True), 1e-12)
            start = len(self._rows)
            self._rows.update((t, start + i) for i, t in enumerate(new))
            self._vectors = found if not start else np.concatenate([self._vectors, found])
        return self._vectors[np.fromiter(map(self._rows.__getitem__, texts), dtype=np.int64, count=len(texts))]

    def scores(self, sentences: Sequence[str], value_input: np.ndarray, objects: Sequence[str]) -> np.ndarray:
        """:math:`s(x, v)` of every candidate: the cosine of its input's sentence and its object."""
        if not len(objects):
            return np.zeros(0, dtype=np.float32)
        return np.einsum("vd,vd->v", self.vectors(sentences)[value_input], self.vectors(objects))

    def keep(self, sentences: Sequence[str], word_input: np.ndarray, word_values: np.ndarray,
             objects: Sequence[str], per_word: int, subjects: Sequence[str] = ()) -> np.ndarray:
        """Which candidates stay ``[V]`` bool: the candidates of word :math:`w` are the next
        ``word_values[w]`` of ``objects``; ``word_input[w]`` is the index of its sentence in
        ``sentences``. ``subjects`` (one per word) only labels :attr:`dropped`."""
        value_word = np.arange(len(word_values)).repeat(word_values)
        value_input = word_input[value_word]
        score = self.scores(sentences, value_input, objects)
        keep = score >= self.threshold
        keep &= _rank(value_word, score, keep) < per_word
        if self.top_k is not None:
            keep &= _rank(value_input, score, keep) < self.top_k
        self.counts[0] += len(keep)
        self.counts[1] += int(keep.sum())
        room = DROPPED_SAMPLE - len(self.dropped)
        for v in (~keep).nonzero()[0][:max(room, 0)].tolist():
            word = subjects[value_word[v]] if len(subjects) else ""
            self.dropped.append(Dropped(sentences[value_input[v]], word, objects[v], float(score[v])))
        return keep


def _rank(group: np.ndarray, score: np.ndarray, among: np.ndarray) -> np.ndarray:
    """Each element's rank by descending ``score`` within its ``group`` (groups ascending), counted
    over the elements of ``among`` only; elements outside ``among`` rank past every group's size."""
    order = np.lexsort((-score, group))
    order = order[among[order]]
    rank = np.full(len(group), np.iinfo(np.int64).max, dtype=np.int64)
    counts = np.bincount(group[order], minlength=int(group.max()) + 1 if len(group) else 0)
    _, offset = ranges(counts)
    rank[order] = offset
    return rank


__all__ = ["DROPPED_SAMPLE", "BranchSelection", "Dropped"]
