r"""Batches cut straight out of an :class:`~torch_geometric.data.InMemoryDataset`'s storage.

``Batch.from_data_list([dataset[i] for i in index])`` first separates every sample into its
own graph (one slice per attribute), then concatenates them again. :func:`gather_batch` gives
the same batch with one gather per attribute: for a sample :math:`i` whose attribute occupies
``slices[i]:slices[i + 1]`` of the stored tensor, the batch takes those rows (columns for an
edge index) of all samples at once, and offsets an edge index of graph :math:`g` by the nodes
of the graphs before it:

.. math::
    \text{edge\_index}^{(g)} \mathrel{+}= \Big(\sum_{h < g} n^{(h)}_\text{src},\;
    \sum_{h < g} n^{(h)}_\text{dst}\Big)^\top

Node stores get PyG's ``batch`` and ``ptr`` vectors, and the batch keeps ``_slice_dict`` and
``_inc_dict``, so that it is equal to PyG's in every respect.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import torch
from torch import Tensor
from torch_geometric.data import Batch, HeteroData, InMemoryDataset
from torch_geometric.data.storage import EdgeStorage

from graphmatch.utils import ragged


def can_gather(dataset: object) -> bool:
    """Whether :func:`gather_batch` applies: a heterogeneous in-memory dataset stored as two or
    more samples (or a view of one), without a ``transform``, whose attributes are all tensors."""
    if not isinstance(dataset, InMemoryDataset) or dataset.transform is not None or dataset.slices is None:
        return False
    data = dataset._data
    if not isinstance(data, HeteroData):
        return False
    for store in data.stores:
        for name, value in store.items():
            if name in ("num_nodes", "_num_nodes"):
                continue
            if not isinstance(value, Tensor) or value.is_sparse or "batch" in name:
                return False
    return True


class _Plan(NamedTuple):
    """What every batch of a dataset needs, worked out once."""

    source: HeteroData  # the stored graph it was made for
    nodes: dict[str, np.ndarray]  # node type -> nodes of every sample
    ptrs: list[np.ndarray]  # the distinct slice vectors
    attrs: list[tuple[Any, str, Tensor, int, bool]]  # (store key, name, stored tensor, its ptr, is an edge index)


def _plan(dataset: InMemoryDataset) -> _Plan:
    plan = dataset.__dict__.get("_gather_plan")
    if plan is not None and plan.source is dataset._data and dataset.transform is None:
        return plan
    if not can_gather(dataset):
        raise ValueError(f"{type(dataset).__name__}: not a heterogeneous in-memory dataset of tensors")
    data, slices = dataset._data, dataset.slices
    ptrs: list[np.ndarray] = []
    seen: dict[bytes, int] = {}
    attrs = []
    for store in data.stores:
        key = store._key
        for name, value in store.items():
            if name in ("num_nodes", "_num_nodes"):
                continue
            ptr = (slices[key][name] if key is not None else slices[name]).numpy()
            which = seen.setdefault(ptr.tobytes(), len(ptrs))
            if which == len(ptrs):
                ptrs.append(ptr)
            attrs.append((key, name, value, which, isinstance(store, EdgeStorage) and "index" in name))
    nodes = {store._key: np.asarray(store._num_nodes, dtype=np.int64) for store in data.node_stores}
    plan = dataset.__dict__["_gather_plan"] = _Plan(data, nodes, ptrs, attrs)
    return plan


def gather_batch(dataset: InMemoryDataset, index: Sequence[int] | Tensor) -> Batch:
    """``Batch.from_data_list([dataset[i] for i in index])``, vectorised (see the module doc).

    Raises :class:`ValueError` when :func:`can_gather` is false for ``dataset``.
    """
    plan = _plan(dataset)
    idx = np.asarray(index, dtype=np.int64).reshape(-1)
    num_graphs = idx.size
    if num_graphs == 0:
        raise ValueError("an empty batch")
    if idx.min() < 0 or idx.max() >= len(dataset):
        raise IndexError(f"index out of range for a dataset of {len(dataset)} samples")
    if dataset._indices is not None:  # a view (``dataset[10:20]``, ``index_select``)
        idx = np.asarray(dataset._indices, dtype=np.int64)[idx]
    graphs = np.arange(num_graphs)
    gathers = []
    for ptr in plan.ptrs:
        start, size = ptr[idx], ptr[idx + 1] - ptr[idx]
        owner = np.repeat(graphs, size)
        new_ptr = ragged.ptr(size)
        gathers.append((torch.from_numpy(new_ptr), owner, torch.from_numpy(np.arange(owner.size) +
                                                                            (start - new_ptr[:-1])[owner])))
    nodes = {key: counts[idx] for key, counts in plan.nodes.items()}
    node_ptr = {key: ragged.ptr(counts) for key, counts in nodes.items()}
    values: dict[Any, dict[str, Any]] = {}  # store key (None: the graph's own) -> its attributes
    slice_dict: dict = {}
    inc_dict: dict = {}
    zeros = torch.zeros(num_graphs, dtype=torch.long)
    for key, name, value, which, is_index in plan.attrs:
        new_ptr, owner, positions = gathers[which]
        gathered = value.index_select(-1 if is_index else 0, positions)
        inc = zeros
        if is_index:
            src, _, dst = key
            offsets = np.stack([node_ptr[src][:-1], node_ptr[dst][:-1]], axis=1)  # [B, 2]
            gathered = gathered + torch.from_numpy(offsets[owner].T)
            inc = torch.from_numpy(offsets).unsqueeze(-1)
        values.setdefault(key, {})[name] = gathered
        (slice_dict.setdefault(key, {}) if key is not None else slice_dict)[name] = new_ptr
        (inc_dict.setdefault(key, {}) if key is not None else inc_dict)[name] = inc
    for key, counts in nodes.items():
        total = int(node_ptr[key][-1])
        values.setdefault(key, {}).update(num_nodes=total, batch=torch.from_numpy(np.repeat(graphs, counts)),
                                          ptr=torch.from_numpy(node_ptr[key]))
    batch = Batch(_base_cls=HeteroData)
    for key, mapping in values.items():
        # what setting each attribute does, without PyG's per-attribute bookkeeping
        (batch[key] if key is not None else batch._global_store)._mapping.update(mapping)
    batch._num_graphs = num_graphs
    batch._slice_dict, batch._inc_dict = slice_dict, inc_dict
    return batch


class CollatedGraphs(InMemoryDataset):
    """Graphs held collated in memory, without files: ``data`` and ``slices`` in the layout of
    ``InMemoryDataset.collate`` (e.g. :class:`~graphmatch.graphs.kbert.TreeCorpusBuilder`'s);
    ``graphs[i]`` is one graph, :func:`gather_batch` cuts a batch of any of them at once."""

    def __init__(self, data: HeteroData, slices: dict[Any, Any]):
        super().__init__()
        self._data, self.slices = data, slices

    @property
    def node_types(self) -> list[str]:
        return self._data.node_types

    def node_counts(self, node_type: str) -> np.ndarray:
        """Nodes of ``node_type`` in every graph (the counts kept beside the slices)."""
        return np.asarray(self._data[node_type]._num_nodes, dtype=np.int64)


__all__ = ["CollatedGraphs", "can_gather", "gather_batch"]
