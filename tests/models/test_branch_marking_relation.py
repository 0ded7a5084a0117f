"""Branch marks on the relation transformer's K-BERT branches: zero at first (bit-equal), trained by gradients."""

import pytest
import torch
from test_relation_transformer import _model, graphs, trees  # noqa: F401 - fixtures
from torch_geometric.loader import DataLoader

MARKS = [dict(branch_embedding=True), dict(branch_bias=True), dict(branch_embedding=True, branch_bias=True)]


@pytest.mark.parametrize("marks", MARKS)
@pytest.mark.parametrize("pack", [True, False])
def test_relation_trees_zero_marks_bit_equal_and_trained(graphs, trees, marks, pack):  # noqa: F811
    folder, _ = graphs
    plain = _model(folder, "entity_start", pack=pack)
    marked = _model(folder, "entity_start", pack=pack, **marks)
    batch = next(iter(DataLoader(trees, batch_size=len(trees))))
    with torch.no_grad():
        assert torch.equal(plain(batch), marked(batch))
    marked.train()
    marked(batch).logsumexp(-1).sum().backward()
    for p in marked.branch_marking.parameters():
        assert p.grad.abs().sum() > 0
