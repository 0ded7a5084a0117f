"""Small synthetic graphs in the shapes the builders produce (no data files needed)."""

from __future__ import annotations

import pytest
import torch
from torch_geometric.data import HeteroData


def tree_graph() -> HeteroData:
    """A K-BERT-like sentence tree: [CLS] 我 在 北京 (义原) (首都) 吃 苹果 (水果)."""
    text = ["[CLS]", "我", "在", "北", "京", "义", "原", "首", "都", "吃", "苹", "果", "水", "果"]
    data = HeteroData()
    data["token"].input_ids = torch.arange(100, 100 + len(text))
    data["token"].pos = torch.tensor([0, 1, 2, 3, 4, 5, 6, 5, 6, 5, 6, 7, 8, 9])
    data["token"].branch = torch.tensor([0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 1, 1], dtype=torch.bool)
    data["token"].num_nodes = len(text)
    data["token"].text = text
    data["word"].span = torch.tensor([[2, 4], [5, 7]])
    data["word"].num_nodes = 2
    data["word"].text = ["北京", "苹果"]
    data["entity"].num_nodes = 3
    data["entity"].text = ["义原", "首都", "水果"]
    data["token", "in", "word"].edge_index = torch.tensor([[3, 4, 10, 11], [0, 0, 1, 1]])
    data["token", "in", "entity"].edge_index = torch.tensor([[5, 6, 7, 8, 12, 13], [0, 0, 1, 1, 2, 2]])
    data["entity", "on", "word"].edge_index = torch.tensor([[0, 1, 2], [0, 0, 1]])
    return data


def lattice_graph(with_text: bool = True) -> HeteroData:
    """A LET-like lattice over 南京市长江大桥 with senses, sememes and a reachability closure."""
    chars = list("南京市长江大桥")
    words = ["南京", "南京市", "市长", "长江", "江大桥", "大桥"]
    spans = [(0, 2), (0, 3), (2, 4), (3, 5), (4, 7), (5, 7)]
    data = HeteroData()
    data["token"].input_ids = torch.arange(len(chars))
    data["token"].num_nodes = len(chars)
    data["word"].span = torch.tensor(spans)
    data["word"].num_nodes = len(words)
    contains = [(w, c) for w, (s, e) in enumerate(spans) for c in range(s, e)]
    data["word", "contains", "token"].edge_index = torch.tensor(contains).t()
    nxt = [(a, b) for a, (_, e) in enumerate(spans) for b, (s, _) in enumerate(spans) if s == e]
    data["word", "next", "word"].edge_index = torch.tensor(nxt).t()
    data["word", "reach_fwd", "word"].edge_index = torch.tensor([[0, 1, 2, 0], [0, 1, 2, 3]])  # self-loops
    data["sense"].num_nodes = 4
    data["sense", "of", "word"].edge_index = torch.tensor([[0, 1, 2, 3], [0, 2, 3, 5]])
    data["sememe"].sememe_id = torch.tensor([3, 1, 4, 1, 5, 9])
    data["sememe"].vec = torch.randn(6, 20)
    data["sememe"].num_nodes = 6
    data["sememe", "of", "sense"].edge_index = torch.tensor([[0, 1, 2, 3, 4, 5], [0, 0, 1, 2, 3, 3]])
    if with_text:
        data["token"].text = chars
        data["word"].text = words
        data["sense"].text = ["地方|城", "官|职位", "水域|河流", "建筑物|桥"]
        data["sememe"].text = ["地方", "城", "官", "水域", "建筑物", "桥"]
    return data


@pytest.fixture
def tree() -> HeteroData:
    return tree_graph()


@pytest.fixture
def lattice() -> HeteroData:
    return lattice_graph()


@pytest.fixture
def unlabelled() -> HeteroData:
    return lattice_graph(with_text=False)
