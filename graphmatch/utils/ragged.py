r"""Ragged-array helpers shared by every layer: prefix sums, ragged aranges, batch vectors and
all pairs within groups, in NumPy (graph building) and torch (batches on their device).

For ``counts`` :math:`c_0, c_1, \dots` of ranges laid end to end, :func:`ptr` gives the
offsets :math:`[0, c_0, c_0 + c_1, \dots]` and :func:`ranges` / :func:`ragged_arange` give,
for every element, its range :math:`k` and its offset :math:`0 \le o < c_k` in it:
``[2, 0, 3]`` → owners ``[0, 0, 2, 2, 2]``, offsets ``[0, 1, 0, 1, 2]``.

This is the lowest layer of the package: it imports torch and re-exports the NumPy helpers of
:mod:`graphmatch.utils.ragged_np`, which code that must not load torch imports directly.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor
from torch_geometric.utils import cumsum

from graphmatch.utils.ragged_np import ptr, ranges


def ragged_arange(counts: Tensor) -> tuple[Tensor, Tensor]:
    """torch: the range and the offset within it of every element of ranges of ``counts``."""
    total = int(counts.sum())
    owner = torch.repeat_interleave(torch.arange(counts.numel(), device=counts.device), counts, output_size=total)
    first = torch.repeat_interleave(cumsum(counts)[:-1], counts, output_size=total)
    return owner, torch.arange(total, device=counts.device) - first


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


def __getattr__(name: str) -> Any:
    if name == "ptr_to_index":  # PyG's own, for one release
        import warnings

        from torch_geometric.index import ptr2index

        warnings.warn("graphmatch.ragged.ptr_to_index is torch_geometric.index.ptr2index; the old name goes in "
                      "the next release", DeprecationWarning, stacklevel=2)
        return ptr2index
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["batch_vector", "group_pairs", "ptr", "ragged_arange", "ranges"]
