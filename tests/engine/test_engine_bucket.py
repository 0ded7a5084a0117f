"""Length bucketing (``train.bucket``): sizes read from storage, batches of similar size drawn
from seed + epoch alone, sharded under DDP, and resumed mid-epoch exactly."""

from __future__ import annotations

import math
from pathlib import Path

import lightning.pytorch as pl
import numpy as np
import pytest
import torch
from engine_helpers import TOY, Crash
from torch_geometric.data import InMemoryDataset
from toy_task import ToyTask, toy_graph

from graphmatch.engine import resolve, train
from graphmatch.engine.runs.checkpoint import read_checkpoint
from graphmatch.engine.training.datamodule import BucketBatchSampler, IndexedDataset, ResumableSampler, sample_sizes


class Stored(InMemoryDataset):
    """Graphs kept the way graphmatch's datasets keep them: one collated storage plus slices."""

    def __init__(self, graphs):
        super().__init__()
        self.data, self.slices = self.collate(graphs)


def _graphs(n: int, seed: int = 0):
    gen = torch.Generator().manual_seed(seed)
    lengths = torch.randint(2, 40, (n,), generator=gen).tolist()
    return [toy_graph(torch.randn(k, 4, generator=gen), [1, k - 1], y=k % 2) for k in lengths], lengths


def _padding(batches, sizes) -> int:
    return sum(len(b) * int(sizes[b].max()) - int(sizes[b].sum()) for b in batches)


def test_sizes_come_from_storage_without_building_graphs(monkeypatch):
    graphs, lengths = _graphs(30)
    stored = Stored(graphs)
    monkeypatch.setattr(Stored, "get", lambda *a: pytest.fail("a graph was built"))
    assert sample_sizes(stored).tolist() == lengths
    assert sample_sizes(IndexedDataset(stored, limit=12)).tolist() == lengths[:12]
    assert sample_sizes(stored[5:9]).tolist() == lengths[5:9]  # a view
    for g in graphs:  # samples that set their token count: PyG's collation keeps it per sample
        g["token"].num_nodes = g["token"].x.size(0)
    assert sample_sizes(Stored(graphs)).tolist() == lengths
    monkeypatch.undo()
    assert sample_sizes(graphs).tolist() == lengths  # a plain list: asked graph by graph


def test_bucket_batches_are_tight_reproducible_and_complete():
    sizes = np.array(_graphs(203)[1])
    batches_of = {}
    for epoch in (0, 1):
        sampler = ResumableSampler(range(203), num_replicas=1, rank=0, shuffle=True, seed=5)
        sampler.set_epoch(epoch)
        bucket = BucketBatchSampler(sampler, sizes, batch_size=8, chunk=5)
        batches = [np.array(b) for b in bucket]
        assert len(batches) == len(bucket) == math.ceil(203 / 8)
        assert sorted(np.concatenate(batches).tolist()) == list(range(203))  # every sample once
        assert list(bucket) == [b.tolist() for b in batches]  # the same again
        plain = [np.array(list(sampler))[i : i + 8] for i in range(0, 203, 8)]
        assert _padding(batches, sizes) < _padding(plain, sizes) / 3
        batches_of[epoch] = [b.tolist() for b in batches]
    assert batches_of[0] != batches_of[1]  # a new order every epoch


def test_bucket_shards_and_resume():
    sizes = np.array(_graphs(50)[1])
    shards = []
    for rank in (0, 1):
        sampler = ResumableSampler(range(50), num_replicas=2, rank=rank, shuffle=True, seed=1)
        shards.append([i for b in BucketBatchSampler(sampler, sizes, batch_size=4, chunk=2) for i in b])
    assert len(shards[0]) == len(shards[1]) == 25 and set(shards[0]) | set(shards[1]) == set(range(50))
    sampler = ResumableSampler(range(50), num_replicas=1, rank=0, shuffle=True, seed=1)
    bucket = BucketBatchSampler(sampler, sizes, batch_size=4)
    full = list(bucket)
    bucket.skip, bucket.skip_epoch = 3, 0
    assert list(bucket) == full[3:] and list(bucket) == full  # skipped once, then whole epochs again


class Batches(pl.Callback):
    """Records the sample indices of every training batch."""

    def __init__(self) -> None:
        self.seen: list[list[int]] = []

    def on_train_batch_start(self, trainer, module, batch, idx) -> None:
        self.seen.append(batch.sample_index.tolist())


def test_training_uses_bucketed_batches_and_resumes_exactly(tmp_path: Path) -> None:
    sets = ["train.bucket=true", "model.dropout=0.3", "train.val_every_steps=3", "train.keep_last=true"]
    batches = Batches()
    straight = train(TOY, sets, tmp_path / "straight", callbacks=[batches])
    assert len(batches.seen) == 32
    # the toy task's samples have 3 to 8 tokens; 128 samples = one chunk an epoch: each batch spans
    # at most two neighbouring lengths, against nearly the whole range without bucketing
    sizes = sample_sizes(ToyTask(resolve(TOY, sets)).datasets()["train"])
    assert max(int(np.ptp(sizes[b])) for b in batches.seen[:8]) <= 1
    broken = tmp_path / "broken"
    with pytest.raises(RuntimeError, match="simulated crash"):
        train(TOY, sets, broken, callbacks=[Crash(at_epoch=2)])
    assert read_checkpoint(broken / "last.ckpt")["global_step"] == 15  # mid-epoch 2
    resumed = Batches()
    train(resume=broken, callbacks=[resumed])
    assert resumed.seen == batches.seen[15:]
    a, b = read_checkpoint(straight / "last.ckpt")["state_dict"], read_checkpoint(broken / "last.ckpt")["state_dict"]
    assert all(torch.equal(a[k], b[k]) for k in a)
