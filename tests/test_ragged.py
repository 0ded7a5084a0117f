import numpy as np
import pytest
import torch
from torch_geometric.data import Batch, HeteroData

from graphmatch.utils import ragged


def test_ptr_and_ranges_numpy():
    assert ragged.ptr(np.array([2, 0, 3])).tolist() == [0, 2, 2, 5]
    assert ragged.ptr(np.array([], dtype=np.int64)).tolist() == [0]
    owner, offset = ragged.ranges(np.array([2, 0, 3]))
    assert owner.tolist() == [0, 0, 2, 2, 2] and offset.tolist() == [0, 1, 0, 1, 2]


def test_ragged_arange_matches_numpy():
    counts = np.random.default_rng(0).integers(0, 5, size=40)
    owner, offset = ragged.ragged_arange(torch.from_numpy(counts))
    np_owner, np_offset = ragged.ranges(counts)
    assert owner.tolist() == np_owner.tolist() and offset.tolist() == np_offset.tolist()
    owner, offset = ragged.ragged_arange(torch.tensor([0, 0]))
    assert owner.numel() == 0 and offset.numel() == 0


def test_ptr_to_index_is_pygs_for_one_release():
    from torch_geometric.index import ptr2index

    with pytest.warns(DeprecationWarning, match="ptr_to_index is torch_geometric.index.ptr2index"):
        old = ragged.ptr_to_index
    assert old is ptr2index and old(torch.tensor([0, 2, 2, 5])).tolist() == [0, 0, 2, 2, 2]


def test_batch_vector_of_a_graph_and_a_batch():
    graphs = []
    for n in (3, 1, 2):
        g = HeteroData()
        g["token"].x = torch.zeros(n)
        graphs.append(g)
    assert ragged.batch_vector(graphs[0]["token"]).tolist() == [0, 0, 0]
    batch = Batch.from_data_list(graphs)
    assert ragged.batch_vector(batch["token"]).tolist() == [0, 0, 0, 1, 2, 2]


def test_group_pairs_equals_brute_force():
    gen = torch.Generator().manual_seed(1)
    a, b = torch.arange(30), torch.arange(100, 125)
    a_group, b_group = torch.randint(0, 6, (30,), generator=gen), torch.randint(0, 6, (25,), generator=gen)
    src, dst = ragged.group_pairs(a, a_group, b, b_group, 6)
    got = sorted(zip(src.tolist(), dst.tolist(), strict=True))
    want = sorted((int(x), int(y)) for i, x in enumerate(a) for j, y in enumerate(b) if a_group[i] == b_group[j])
    assert got == want
