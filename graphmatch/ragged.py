r"""Ragged-array helpers shared by every layer: prefix sums, ragged aranges, batch vectors and
all pairs within groups, in NumPy (graph building) and torch (batches on their device).

For ``counts`` :math:`c_0, c_1, \dots` of ranges laid end to end, :func:`ptr` gives the
offsets :math:`[0, c_0, c_0 + c_1, \dots]` and :func:`ranges` / :func:`ragged_arange` give,
for every element, its range :math:`k` and its offset :math:`0 \le o < c_k` in it:
``[2, 0, 3]`` → owners ``[0, 0, 2, 2, 2]``, offsets ``[0, 1, 0, 1, 2]``.

This is the lowest layer of the package: it imports torch and re-exports the NumPy helpers of
:mod:`graphmatch.ragged_np`, which code that must not load torch imports directly.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor
from torch_geometric.utils import cumsum

from graphmatch.ragged_np import ptr, ranges


def ragged_arange(counts: Tensor) -> tuple[Tensor, Tensor]:
    """torch: the range and the offset within it of every element of ranges of ``counts``."""
    total = int(counts.sum())
    owner = torch.repeat_interleave(torch.arange(counts.numel(), device=counts.device), counts, output_size=total)
    first = torch.repeat_interleave(cumsum(counts)[:-1], counts, output_size=total)
    return owner, torch.arange(total, device=counts.device) - first


def ptr_to_index(ptr_: Tensor, size: int | None = None) -> Tensor:
    """The set of every element from CSR offsets ``ptr`` (``[0, 2, 2, 5]`` → ``[0, 0, 2, 2, 2]``)."""
    counts = ptr_[1:] - ptr_[:-1]
    return torch.repeat_interleave(torch.arange(counts.numel(), device=ptr_.device), counts, output_size=size)


def batch_vector(store: Any) -> Tensor:
    """The graph of every node of a node store: PyG's ``batch`` of a batched store, zeros for
    the store of a single graph."""
    batch = getattr(store, "batch", None)
    if batch is not None:
        return batch
    device = next((v.device for v in store.values() if isinstance(v, Tensor)), None)
    return torch.zeros(store.num_nodes, dtype=torch.long, device=device)


def group_pairs(a: Tensor, a_group: Tensor, b: Tensor, b_group: Tensor, num_groups: int) -> tuple[Tensor, Tensor]:
    """Every pair ``(a_i, b_j)`` with ``a_group[i] == b_group[j]``, vectorised (``a`` major)."""
    order = torch.argsort(b_group, stable=True)
    count = torch.bincount(b_group, minlength=num_groups)
    start = cumsum(count)[:-1]
    reps = count[a_group]
    which, offset = ragged_arange(reps)
    return a[which], b[order][start[a_group[which]] + offset]


__all__ = ["batch_vector", "group_pairs", "ptr", "ptr_to_index", "ragged_arange", "ranges"]
