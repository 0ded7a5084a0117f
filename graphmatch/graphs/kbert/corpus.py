r"""Many K-BERT sentence trees at once, straight into :class:`~torch_geometric.data.InMemoryDataset`
storage.

:class:`TreeCorpusBuilder` runs the core of :class:`~graphmatch.graphs.kbert.SentenceTreeBuilder`
(:class:`~graphmatch.graphs.kbert.TreeCore`) over a whole corpus, chunk by chunk, and
writes its flat arrays in the layout of ``InMemoryDataset.collate``: one graph of concatenated
tensors with local edge indices, and the ``slices`` of every sample. The result is what
collating the graphs of ``builder(...)`` one by one gives, for every mode and option.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from typing import Any

import numpy as np
import torch
from torch import Tensor
from torch_geometric.data import HeteroData
from tqdm.auto import tqdm

from graphmatch.errors import InputError
from graphmatch.graphs.kbert.graph import SentenceTreeBuilder
from graphmatch.graphs.kbert.records import ENTITY_EDGE, NODE_TYPES, WORD_EDGE, Coverage, Trees
from graphmatch.utils import ragged

Slices = dict[Any, Any]


class TreeCorpusBuilder:
    """Builds the sentence trees of many inputs as one collated graph and its slices.

    Args:
        builder (SentenceTreeBuilder): the settings (KG, vocabulary, ``max_length`` ...).

    Call it with lists of texts; the result ``(data, slices)`` is what
    ``InMemoryDataset.collate([builder(...) for ...])`` returns (with ``slices`` also for a
    single input), ready for ``InMemoryDataset.data`` / ``slices`` or ``torch.save``.
    """

    def __init__(self, builder: SentenceTreeBuilder):
        self.builder = builder

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.builder!r})"

    def __call__(
        self,
        texts_a: Sequence[str],
        texts_b: Sequence[str] | None = None,
        labels: Sequence[int] | None = None,
        tags: Sequence[Sequence[str]] | None = None,
        chunk_size: int = 20_000,
        progress: bool = False,
        desc: str = "K-BERT graphs",
    ) -> tuple[HeteroData, Slices]:
        """The collated graphs of ``builder(texts_a[i], texts_b[i], labels[i], tags[i])``.

        Args:
            texts_a: the texts (or first texts of pairs).
            texts_b: the second texts of pairs.
            labels: one label id per input (``data.y``).
            tags: NER tags per input, one per character of ``texts_a[i]``.
            chunk_size: inputs built per vectorised step (bounds the memory).
            progress: show a progress bar over the inputs.

        Raises :class:`InputError` (a :class:`ValueError` with the input's ``index``) for an
        input :meth:`SentenceTreeBuilder.check` refuses.
        """
        n = len(texts_a)
        if n == 0:
            raise ValueError("no inputs")
        for name, column in (("texts_b", texts_b), ("labels", labels), ("tags", tags)):
            if column is not None and len(column) != n:
                raise ValueError(f"{len(column)} {name} for {n} texts_a")
        self._check(texts_a, texts_b, tags)
        parts = []
        with tqdm(total=n, desc=desc, unit="sent", disable=None if progress else True, mininterval=1.0) as bar:
            for lo in range(0, n, chunk_size):
                a, b, y, t = (None if column is None else column[lo:lo + chunk_size]
                              for column in (texts_a, texts_b, labels, tags))
                parts.append(collated(self.builder.build(a, b, t), y))
                bar.update(len(a))
        return concat_collated(parts)

    def _check(self, texts_a, texts_b, tags) -> None:
        """The builder's own checks of every input, naming the input that fails (texts without tags
        that are all non-blank strings pass in one sweep)."""
        if tags is None and all(map(_usable, texts_a)) and (texts_b is None or all(map(_usable, texts_b))):
            return
        check = self.builder.check
        for i, text in enumerate(texts_a):
            try:
                if texts_b is not None and texts_b[i] is None:  # the builder would read None as "no pair"
                    raise TypeError("text_b must be a str, got NoneType")
                check(text, None if texts_b is None else texts_b[i], None if tags is None else tags[i])
            except TypeError as err:
                raise TypeError(f"input {i}: {err}") from err
            except ValueError as err:
                raise InputError(i, str(err)) from err


def _usable(text: object) -> bool:
    """A text the builder takes: a string with something besides whitespace."""
    return type(text) is str and not text.isspace() and text != ""


def collated(trees: Trees, labels: Sequence[int] | None = None) -> tuple[HeteroData, Slices]:
    """``(data, slices)`` in ``InMemoryDataset.collate``'s layout from the flat arrays of a
    :class:`~graphmatch.graphs.kbert.Trees`; lists (``text``) become one list per input."""
    mapping: dict[Any, dict[str, Any]] = {}
    slices: Slices = {}
    n = len(trees.counts["token"])
    for key, store in trees.stores.items():
        count = trees.counts[key]
        ptr = ragged.ptr(count)
        mapping[key], slices[key] = {}, {}
        for name, value in store.items():
            if isinstance(value, list):
                mapping[key][name] = [value[lo:hi] for lo, hi in zip(ptr[:-1].tolist(), ptr[1:].tolist(), strict=True)]
                slices[key][name] = torch.arange(n + 1)
            else:
                mapping[key][name] = torch.from_numpy(np.ascontiguousarray(value))
                slices[key][name] = torch.from_numpy(ptr)
        if key in NODE_TYPES:
            mapping[key].update(num_nodes=int(count.sum()), _num_nodes=count.tolist())
    if labels is not None:
        mapping["_global_store"] = {"y": torch.as_tensor(np.asarray(labels, dtype=np.int64))}
        slices["y"] = torch.arange(n + 1)
    return HeteroData.from_dict(mapping), slices


def collated_coverage(slices: Slices) -> Coverage:
    """The knowledge :class:`~graphmatch.graphs.kbert.Coverage` of collated trees, from
    their ``slices`` (of :class:`TreeCorpusBuilder` or a dataset: ``dataset.slices``)."""
    names = {"token": "input_ids", "entity": "length", ENTITY_EDGE: "edge_index", WORD_EDGE: "edge_index"}
    return Coverage.of({key: np.diff(np.asarray(slices[key][name])) for key, name in names.items()})


def concat_collated(parts: Sequence[tuple[HeteroData, Slices]]) -> tuple[HeteroData, Slices]:
    """Join the ``(data, slices)`` of consecutive chunks of one dataset into one pair."""
    if len(parts) == 1:
        return parts[0]

    def join(values: list[Any], ptrs: list[Tensor], dim: int) -> tuple[Any, Tensor]:
        shifts = np.cumsum([int(p[-1]) for p in ptrs[:-1]]).tolist()
        ptr = torch.cat([ptrs[0]] + [p[1:] + shift for p, shift in zip(ptrs[1:], shifts, strict=True)])
        if isinstance(values[0], list):  # one list per input
            return list(chain.from_iterable(values)), ptr
        return torch.cat(values, dim), ptr

    mapping: dict[Any, dict[str, Any]] = {}
    slices: Slices = {}
    for key, value in parts[0][1].items():
        if not isinstance(value, dict):  # an attribute of the graph itself, such as ``y``
            mapping.setdefault("_global_store", {})[key], slices[key] = join(
                [data[key] for data, _ in parts], [s[key] for _, s in parts], 0)
            continue
        mapping[key], slices[key] = {}, {}
        for name in value:
            dim = -1 if name == "edge_index" else 0
            mapping[key][name], slices[key][name] = join(
                [data[key][name] for data, _ in parts], [s[key][name] for _, s in parts], dim)
        if key in NODE_TYPES:
            counts = list(chain.from_iterable(data[key]._num_nodes for data, _ in parts))
            mapping[key].update(num_nodes=sum(counts), _num_nodes=counts)
    return HeteroData.from_dict(mapping), slices


__all__ = ["InputError", "TreeCorpusBuilder", "collated", "collated_coverage", "concat_collated"]
