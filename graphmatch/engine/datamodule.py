"""Batches of PyG graphs for Lightning: :class:`torch_geometric.data.lightning.LightningDataset`
with samplers that make runs reproducible and distributed evaluation exact.

* training: a :class:`~torch.utils.data.DistributedSampler` on every run (one replica on one
  device), so the order of epoch ``e`` is a permutation drawn from ``seed + e`` alone, and under
  DDP each process gets its shard. The loader tells Lightning's checkpoints how many batches of
  the epoch are done (``state_dict``) and skips them when resumed, so a run resumed from any
  checkpoint, mid-epoch included, sees the same batches as an uninterrupted one;
* evaluation: :class:`ShardSampler`, which splits dev/test across processes *without* padding,
  so every sample is scored exactly once when the rows are gathered.

Every graph handed to a loader carries ``sample_index`` (its position in the split), with
which rows gathered from several processes are put back in dataset order. Batches of an
in-memory dataset are cut straight out of its storage (:func:`graphmatch.data.batching.gather_batch`),
equal to PyG's collation of the samples and many times faster.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch
from torch.utils.data import DistributedSampler, Sampler
from torch_geometric.data import Batch, HeteroData
from torch_geometric.data.lightning import LightningDataset
from torch_geometric.loader import DataLoader as PyGDataLoader

from graphmatch.data.batching import can_gather, gather_batch


class IndexedDataset(torch.utils.data.Dataset):
    """A view of a PyG dataset (or list of graphs) whose items carry ``sample_index``.

    Args:
        dataset: any indexable collection of :class:`~torch_geometric.data.HeteroData`.
        limit: keep the first ``limit`` samples (an int) or that fraction of them (a float).
    """

    def __init__(self, dataset: Sequence[HeteroData], limit: int | float | None = None):
        self.dataset = dataset
        n = len(dataset)
        if limit is not None:
            n = min(n, limit if isinstance(limit, int) else max(1, math.ceil(limit * n)))
        self.length = n
        self.gather = can_gather(dataset)

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int) -> HeteroData:
        if not 0 <= index < self.length:
            raise IndexError(index)
        data = copy.copy(self.dataset[index])
        data.sample_index = torch.tensor([index])
        return data

    def __getitems__(self, indices: list[int]) -> Batch | list[HeteroData]:
        """The samples of one batch: already collated when the dataset allows (see
        :func:`~graphmatch.data.batching.gather_batch`), else a list for PyG's collation."""
        if not self.gather:
            return [self[i] for i in indices]
        if min(indices) < 0 or max(indices) >= self.length:
            raise IndexError(f"index out of range for {self.length} samples")
        batch = gather_batch(self.dataset, indices)
        batch.sample_index = torch.tensor(indices, dtype=torch.long)
        batch._slice_dict["sample_index"] = torch.arange(len(indices) + 1)
        batch._inc_dict["sample_index"] = torch.zeros(len(indices), dtype=torch.long)
        return batch


class _Collate:
    """PyG's collation, except for a batch the dataset has already collated."""

    def __init__(self, collate: Callable[[list[HeteroData]], Batch]):
        self.collate = collate

    def __call__(self, items: Batch | list[HeteroData]) -> Batch:
        return items if isinstance(items, Batch) else self.collate(items)


class DataLoader(PyGDataLoader):
    """PyG's :class:`~torch_geometric.loader.DataLoader` that passes through a batch the
    dataset has already collated (:meth:`IndexedDataset.__getitems__`)."""

    def __init__(self, dataset: Any, **kwargs: Any):
        super().__init__(dataset, **kwargs)
        self.collate_fn = _Collate(self.collate_fn)


class ShardSampler(Sampler[int]):
    """Indices ``rank, rank + world, rank + 2·world, ...``: an unpadded, ordered shard."""

    def __init__(self, length: int, num_replicas: int = 1, rank: int = 0):
        self.length, self.num_replicas, self.rank = length, num_replicas, rank

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.rank, self.length, self.num_replicas))

    def __len__(self) -> int:
        return len(range(self.rank, self.length, self.num_replicas))


class ResumableSampler(DistributedSampler):
    """:class:`~torch.utils.data.DistributedSampler` that can start epoch ``skip_epoch`` after
    its first ``skip`` indices (the samples a resumed run has already trained on)."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.skip, self.skip_epoch = 0, -1

    def __iter__(self) -> Iterator[int]:
        indices = list(super().__iter__())
        if self.skip and self.epoch == self.skip_epoch:  # Lightning may iterate once before set_epoch
            indices, self.skip = indices[self.skip :], 0
        return iter(indices)


class ResumableLoader(DataLoader):
    """PyG :class:`~torch_geometric.loader.DataLoader` with Lightning's ``state_dict`` /
    ``load_state_dict`` loader interface: the state is the epoch and the number of batches done.

    Args:
        dataset: the training graphs.
        sampler: its :class:`ResumableSampler`.
        progress: returns how many batches of the current epoch are done.
    """

    def __init__(self, dataset: Any, sampler: ResumableSampler, progress: Callable[[], int], **kwargs: Any):
        super().__init__(dataset, sampler=sampler, **kwargs)
        self._progress = progress

    def state_dict(self) -> dict[str, int]:
        return {"epoch": int(self.sampler.epoch), "batches": int(self._progress())}

    def load_state_dict(self, state: dict[str, int]) -> None:
        if 0 < state["batches"] < len(self):
            self.sampler.skip = state["batches"] * self.batch_size
            self.sampler.skip_epoch = state["epoch"]


class GraphDataModule(LightningDataset):
    """Train/dev/test splits of graphs as a Lightning data module (PyG ``DataLoader`` batches).

    Args:
        train, dev, test: the splits (``test`` may be ``None``).
        batch_size: training batch size (per process).
        eval_batch_size: dev/test batch size (per process).
        seed: seed of the per-epoch training permutation.
        num_workers: loader worker processes.
    """

    def __init__(
        self,
        train: Sequence[HeteroData],
        dev: Sequence[HeteroData],
        test: Sequence[HeteroData] | None,
        batch_size: int,
        eval_batch_size: int,
        seed: int,
        num_workers: int = 0,
    ):
        super().__init__(
            train, dev, test, batch_size=batch_size, num_workers=num_workers, pin_memory=torch.cuda.is_available()
        )
        self.eval_batch_size = eval_batch_size
        self.seed = seed

    def _world(self) -> tuple[int, int]:
        trainer = getattr(self, "trainer", None)
        if trainer is None:
            return 1, 0
        return trainer.world_size, trainer.global_rank

    def _batches_done(self) -> int:
        trainer = getattr(self, "trainer", None)
        return 0 if trainer is None else trainer.fit_loop.epoch_loop.batch_progress.current.completed

    def train_dataloader(self) -> DataLoader:
        world, rank = self._world()
        sampler = ResumableSampler(
            self.train_dataset, num_replicas=world, rank=rank, shuffle=True, seed=self.seed, drop_last=False
        )
        # the loaders draw their workers' base seed from their own generator, not torch's global
        # one, so that creating an iterator never shifts the model's random stream (dropout)
        generator = torch.Generator().manual_seed(self.seed)
        return ResumableLoader(self.train_dataset, sampler, self._batches_done, generator=generator, **self.kwargs)

    def _eval_loader(self, dataset: Any) -> DataLoader:
        world, rank = self._world()
        kwargs = {**self.kwargs, "batch_size": self.eval_batch_size, "generator": torch.Generator().manual_seed(0)}
        return DataLoader(dataset, sampler=ShardSampler(len(dataset), world, rank), **kwargs)

    def val_dataloader(self) -> DataLoader:
        return self._eval_loader(self.val_dataset)

    def test_dataloader(self) -> DataLoader:
        return self._eval_loader(self.test_dataset)
