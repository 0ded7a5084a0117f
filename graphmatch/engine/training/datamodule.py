"""Batches of PyG graphs for Lightning: :class:`torch_geometric.data.lightning.LightningDataset`
with samplers that make runs reproducible and distributed evaluation exact.

* training: a :class:`~torch.utils.data.DistributedSampler` on every run (one replica on one
  device), so the order of epoch ``e`` is a permutation drawn from ``seed + e`` alone, and under
  DDP each process gets its shard. The loader tells Lightning's checkpoints how many batches of
  the epoch are done (``state_dict``) and skips them when resumed, so a run resumed from any
  checkpoint, mid-epoch included, sees the same batches as an uninterrupted one;
* length bucketing (``train.bucket``): :class:`BucketBatchSampler` takes the same per-epoch
  permutation (and shard), sorts each chunk of 50 batches' worth of samples by size (token
  nodes, :func:`sample_sizes`, read from an in-memory dataset's storage without building a
  graph), cuts the chunks into batches and shuffles the batches, so that a batch holds samples
  of similar length and pads little. It depends on ``seed + epoch`` alone and resumes
  mid-epoch as exactly as the plain order;
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

import numpy as np
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


def sample_sizes(dataset: Sequence[HeteroData]) -> np.ndarray:
    """The size of every sample, for length bucketing: its ``token`` nodes (all its nodes when
    it has no ``token`` type).

    An in-memory dataset (or an :class:`IndexedDataset` over one) answers from its storage (the
    per-sample node counts kept beside its slices) without building a graph; any other dataset
    is asked sample by sample.
    """
    n = len(dataset)
    base = dataset.dataset if isinstance(dataset, IndexedDataset) else dataset
    if can_gather(base):
        data = base._data
        types = ["token"] if "token" in data.node_types else data.node_types
        counts = sum(_stored_node_counts(base, t) for t in types)
        if base._indices is not None:  # a view of the stored samples
            counts = counts[np.asarray(base._indices, dtype=np.int64)]
        return counts[:n]

    def size(g: Any) -> int:
        return g["token"].num_nodes if isinstance(g, HeteroData) and "token" in g.node_types else g.num_nodes

    return np.array([size(base[i]) for i in range(n)], dtype=np.int64)


def _stored_node_counts(dataset: Any, node_type: str) -> np.ndarray:
    """Nodes of ``node_type`` in every stored sample: the kept ``num_nodes`` of each sample, else
    the slice lengths of one of its node attributes."""
    store = dataset._data[node_type]
    if hasattr(store, "_num_nodes"):  # kept by PyG's collation when the samples set num_nodes
        return np.asarray(store._num_nodes, dtype=np.int64)
    names = [name for name in dataset.slices[node_type] if store.is_node_attr(name)]
    if not names:
        raise ValueError(f"cannot tell the size of the stored {node_type!r} nodes (no node attribute)")
    return np.diff(dataset.slices[node_type][names[0]].numpy()).astype(np.int64)


class BucketBatchSampler(Sampler[list[int]]):
    """Batches of samples of similar size, in an order drawn from ``seed + epoch`` alone.

    The epoch's indices come from ``sampler`` (the :class:`ResumableSampler` permutation, this
    process's shard under DDP); each run of ``chunk × batch_size`` of them is sorted by size
    and cut into batches, and the batches are shuffled with a generator seeded by
    ``(seed, epoch)``. There are as many batches as without bucketing.

    Args:
        sampler: the epoch's shuffled indices (its ``epoch`` and ``seed`` are used; Lightning
            calls its ``set_epoch`` as ``batch_sampler.sampler``).
        sizes: size of every sample of the dataset (:func:`sample_sizes`).
        batch_size: samples per batch.
        chunk: batches per sorted chunk (larger: less padding, less randomness).
    """

    def __init__(self, sampler: ResumableSampler, sizes: np.ndarray, batch_size: int, chunk: int = 50):
        self.sampler, self.sizes = sampler, np.asarray(sizes)
        self.batch_size, self.chunk = batch_size, chunk
        self.skip, self.skip_epoch = 0, -1

    @property
    def epoch(self) -> int:
        return self.sampler.epoch

    def batches(self) -> list[list[int]]:
        """The batches of the current epoch, none skipped."""
        order = np.fromiter(iter(self.sampler), dtype=np.int64)
        span, size = self.chunk * self.batch_size, self.batch_size
        batches: list[list[int]] = []
        for start in range(0, order.size, span):
            part = order[start : start + span]
            part = part[np.argsort(self.sizes[part], kind="stable")]
            batches += [part[i : i + size].tolist() for i in range(0, part.size, size)]
        shuffle = np.random.default_rng((self.sampler.seed, self.sampler.epoch)).permutation(len(batches))
        return [batches[i] for i in shuffle]

    def __iter__(self) -> Iterator[list[int]]:
        # a generator: the order is drawn at the first batch, after Lightning's set_epoch (it may
        # create the loader's iterator before), as PyG's loader does with a plain sampler
        batches = self.batches()
        if self.skip and self.epoch == self.skip_epoch:
            batches, self.skip = batches[self.skip :], 0
        yield from batches

    def __len__(self) -> int:
        return math.ceil(len(self.sampler) / self.batch_size)


class ResumableLoader(DataLoader):
    """PyG :class:`~torch_geometric.loader.DataLoader` with Lightning's ``state_dict`` /
    ``load_state_dict`` loader interface: the state is the epoch and the number of batches done.

    Args:
        dataset: the training graphs.
        sampler: its :class:`ResumableSampler`, or a :class:`BucketBatchSampler` (then the
            loader's ``batch_size`` is the bucket sampler's).
        progress: returns how many batches of the current epoch are done.
    """

    def __init__(self, dataset: Any, sampler: ResumableSampler | BucketBatchSampler, progress: Callable[[], int],
                 **kwargs: Any):
        if isinstance(sampler, BucketBatchSampler):
            kwargs.pop("batch_size", None)
            super().__init__(dataset, batch_sampler=sampler, **kwargs)
        else:
            super().__init__(dataset, sampler=sampler, **kwargs)
        self.order = sampler
        self._progress = progress

    def state_dict(self) -> dict[str, int]:
        return {"epoch": int(self.order.epoch), "batches": int(self._progress())}

    def load_state_dict(self, state: dict[str, int]) -> None:
        if 0 < state["batches"] < len(self):
            bucketed = isinstance(self.order, BucketBatchSampler)
            self.order.skip = state["batches"] * (1 if bucketed else self.batch_size)
            self.order.skip_epoch = state["epoch"]


class GraphDataModule(LightningDataset):
    """Train/dev/test splits of graphs as a Lightning data module (PyG ``DataLoader`` batches).

    Args:
        train, dev, test: the splits; any may be ``None`` (no loader for it), e.g. all but one
            when a checkpoint is only evaluated.
        batch_size: training batch size (per process).
        eval_batch_size: dev/test batch size (per process).
        seed: seed of the per-epoch training permutation.
        num_workers: loader worker processes.
        bucket: form training batches of samples of similar size (:class:`BucketBatchSampler`).
    """

    def __init__(
        self,
        train: Sequence[HeteroData] | None,
        dev: Sequence[HeteroData] | None,
        test: Sequence[HeteroData] | None,
        batch_size: int,
        eval_batch_size: int,
        seed: int,
        num_workers: int = 0,
        bucket: bool = False,
    ):
        super().__init__(
            train, dev, test, batch_size=batch_size, num_workers=num_workers, pin_memory=torch.cuda.is_available()
        )
        self.eval_batch_size = eval_batch_size
        self.seed = seed
        self.bucket = bucket
        self._sizes: np.ndarray | None = None

    def _world(self) -> tuple[int, int]:
        trainer = getattr(self, "trainer", None)
        if trainer is None:
            return 1, 0
        return trainer.world_size, trainer.global_rank

    def _batches_done(self) -> int:
        trainer = getattr(self, "trainer", None)
        # processed, not completed: a checkpoint saved at on_train_batch_end (a signal) has trained
        # on the batch that Lightning counts as completed only when it resumes
        return 0 if trainer is None else trainer.fit_loop.epoch_loop.batch_progress.current.processed

    def train_dataloader(self) -> DataLoader:
        world, rank = self._world()
        sampler: ResumableSampler | BucketBatchSampler = ResumableSampler(
            self.train_dataset, num_replicas=world, rank=rank, shuffle=True, seed=self.seed, drop_last=False
        )
        if self.bucket:
            if self._sizes is None:
                self._sizes = sample_sizes(self.train_dataset)
            sampler = BucketBatchSampler(sampler, self._sizes, self.kwargs["batch_size"])
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
