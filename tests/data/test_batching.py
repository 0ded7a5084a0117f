"""Batches cut out of a dataset's storage equal PyG's collation of the samples, for every dataset."""

from __future__ import annotations

import pytest
import torch
from torch_geometric.data import Batch

from graphmatch.data.batching import can_gather, gather_batch
from graphmatch.data.kbert import kbert_dataset
from graphmatch.data.let import PairMatchingDataset
from graphmatch.data.semeval import SemEval2010Task8
from graphmatch.engine.training.datamodule import DataLoader, IndexedDataset
from graphmatch.graphs.kbert import TreeOptions
from graphmatch.graphs.let import LatticePairBuilder
from graphmatch.graphs.let_options import LatticeOptions

INDEX = [5, 0, 7, 7, 3, 1]  # out of order and repeated


def assert_same_batch(got: Batch, want: Batch) -> None:
    assert got.num_graphs == want.num_graphs
    assert got.node_types == want.node_types and set(got.edge_types) == set(want.edge_types)
    for store in want.stores:
        key = store._key
        mine = got[key] if key is not None else got._global_store
        assert set(mine.keys()) == set(store.keys()), key
        for name, value in store.items():
            if isinstance(value, torch.Tensor):
                assert mine[name].dtype == value.dtype and torch.equal(mine[name], value), (key, name)
            else:
                assert mine[name] == value, (key, name)
    for mine, theirs in ((got._slice_dict, want._slice_dict), (got._inc_dict, want._inc_dict)):
        assert mine.keys() == theirs.keys()
        for key, value in theirs.items():
            if isinstance(value, dict):
                assert all(torch.equal(mine[key][name], v) for name, v in value.items()), key
            else:
                assert torch.equal(mine[key], value), key


def check_dataset(dataset) -> None:
    assert can_gather(dataset)
    assert_same_batch(gather_batch(dataset, INDEX), Batch.from_data_list([dataset[i] for i in INDEX]))
    assert gather_batch(dataset, torch.tensor([2])).num_graphs == 1
    view = dataset[[9, 2, 4]]  # a view maps its indices to the stored samples
    assert_same_batch(gather_batch(view, [2, 0]), Batch.from_data_list([dataset[4], dataset[9]]))


@pytest.fixture(scope="module")
def kbert(shared_data, tmp_path_factory):
    cache = tmp_path_factory.mktemp("kbert_cache")
    kw = dict(root=shared_data, cache=cache, options=TreeOptions(max_length=64), limit=12, progress=False)
    return {"cls": kbert_dataset("chnsenticorp", "dev", **kw),
            "pair": kbert_dataset("lcqmc", "dev", **kw),
            "ner": kbert_dataset("msra_ner", "dev", **kw)}


@pytest.mark.parametrize("kind", ["cls", "pair", "ner"])
def test_kbert(kbert, kind):
    check_dataset(kbert[kind])


def test_let(shared_data, samples, tokenizer, hownet_lexicon, tmp_path):
    builder = LatticePairBuilder(tokenizer, hownet_lexicon, LatticeOptions(segmenters="jieba"))
    check_dataset(PairMatchingDataset(samples / "pairs" / "dev.tsv", builder, cache=tmp_path, progress=False))


def test_semeval(samples, tmp_path):
    relation = samples / "relation"
    check_dataset(SemEval2010Task8("test", cache=tmp_path, train_file=relation / "train.txt",
                                   test_file=relation / "test.txt", dev_size=10))


def test_what_cannot_be_gathered(kbert):
    dataset = kbert["cls"]
    assert not can_gather(list(dataset))
    single = dataset.copy(torch.tensor([3]))  # stored as one graph, without slices
    assert single.slices is None and not can_gather(single)
    with_transform = dataset.copy()
    with_transform.transform = lambda data: data
    assert not can_gather(with_transform)
    with pytest.raises(ValueError, match="not a heterogeneous in-memory dataset"):
        gather_batch(with_transform, [0])
    with pytest.raises(IndexError):
        gather_batch(dataset, [0, len(dataset)])
    with pytest.raises(ValueError, match="empty"):
        gather_batch(dataset, [])


def test_loader_batches_equal_pyg_collation(kbert):
    dataset = IndexedDataset(kbert["ner"], limit=10)
    fast = list(DataLoader(dataset, batch_size=4))
    slow = list(DataLoader([dataset[i] for i in range(len(dataset))], batch_size=4))
    assert [b.num_graphs for b in fast] == [4, 4, 2]
    for got, want in zip(fast, slow, strict=True):
        assert_same_batch(got, want)
    assert torch.equal(fast[-1].sample_index, torch.tensor([8, 9]))
    with pytest.raises(IndexError):
        dataset.__getitems__([9, 10])  # beyond the limit, though inside the dataset
