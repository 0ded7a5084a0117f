import math

import pytest
import torch
from torch_geometric.utils import scatter, to_torch_csc_tensor

from graphmatch.nn import MDGATConv


def dense_reference(conv: MDGATConv, x_src, x_dst, edge_index):
    """MD-GAT written with dense [N_dst, N_src] matrices and a masked softmax."""
    H, C = conv.heads, conv.out_channels
    q = conv.lin_query(x_dst).view(-1, H, C)
    k = conv.lin_key(x_src).view(-1, H, C)
    v = conv.lin_value(x_src).view(-1, H, C)
    f = conv.lin_score2(torch.relu(conv.lin_score1(x_src))).view(-1, H, C)
    pair = torch.einsum("ihc,jhc->ijh", q, k) / math.sqrt(C)  # [Nd, Ns, H]
    score = pair.unsqueeze(-1) + f.unsqueeze(0)  # [Nd, Ns, H, C]
    adj = torch.zeros(x_dst.size(0), x_src.size(0), dtype=torch.bool)
    adj[edge_index[1], edge_index[0]] = True
    score = score.masked_fill(~adj[:, :, None, None], float("-inf"))
    alpha = torch.softmax(score, dim=1).nan_to_num(0.0)
    out = (alpha * v.unsqueeze(0)).sum(dim=1)
    out = out.reshape(-1, H * C) if conv.concat else out.mean(dim=1)
    return out + conv.bias


def test_mdgat_conv_shapes_and_dense_equality():
    torch.manual_seed(0)
    x = torch.randn(4, 8)
    edge_index = torch.tensor([[0, 1, 2, 3, 0, 2], [0, 0, 1, 1, 2, 3]])
    conv = MDGATConv(8, 16, heads=2)
    assert str(conv) == "MDGATConv(8, 16, heads=2)"
    torch.nn.init.normal_(conv.bias)
    out = conv(x, edge_index)
    assert out.size() == (4, 32)
    assert torch.allclose(out, dense_reference(conv, x, x, edge_index), atol=1e-5)

    adj = to_torch_csc_tensor(edge_index, size=(4, 4))
    assert torch.allclose(conv(x, adj.t()), out, atol=1e-6)

    conv_mean = MDGATConv(8, 16, heads=2, concat=False)
    out_mean = conv_mean(x, edge_index)
    assert out_mean.size() == (4, 16)
    assert torch.allclose(out_mean, dense_reference(conv_mean, x, x, edge_index), atol=1e-5)


def test_mdgat_conv_attention_normalised_per_destination_and_feature():
    torch.manual_seed(1)
    x = torch.randn(5, 6)
    edge_index = torch.tensor([[0, 1, 2, 3, 4, 0, 1, 4], [0, 0, 0, 1, 1, 2, 3, 3]])
    conv = MDGATConv(6, 4, heads=3)
    out, (ei, alpha) = conv(x, edge_index, return_attention_weights=True)
    assert out.size() == (5, 12)
    assert torch.equal(ei, edge_index)
    assert alpha.size() == (8, 3, 4)
    sums = scatter(alpha, edge_index[1], dim=0, dim_size=5, reduce="sum")
    has_in = torch.tensor([True, True, True, True, False])
    assert torch.allclose(sums[has_in], torch.ones(4, 3, 4), atol=1e-6)
    # the weights differ across features: the score really is multi-dimensional
    assert not torch.allclose(alpha[:3, :, 0], alpha[:3, :, 1])
    # a node without incoming edges gets only the bias (zero at initialisation)
    assert torch.allclose(out[4], torch.zeros(12))

    adj = to_torch_csc_tensor(edge_index, size=(5, 5))
    _, (ei_sparse, alpha_sparse) = conv(x, adj.t(), return_attention_weights=True)
    dense = torch.zeros(5, 5, 3, 4)
    dense[ei[0], ei[1]] = alpha
    assert torch.allclose(dense[ei_sparse[0], ei_sparse[1]], alpha_sparse, atol=1e-6)


def test_mdgat_conv_bipartite():
    torch.manual_seed(2)
    x_src, x_dst = torch.randn(6, 8), torch.randn(3, 5)
    edge_index = torch.tensor([[0, 1, 2, 3, 4, 5, 5], [0, 0, 1, 1, 1, 2, 0]])
    conv = MDGATConv((8, 5), 7, heads=2)
    out = conv((x_src, x_dst), edge_index)
    assert out.size() == (3, 14)
    assert torch.allclose(out, dense_reference(conv, x_src, x_dst, edge_index), atol=1e-5)

    adj = to_torch_csc_tensor(edge_index, size=(6, 3))
    assert torch.allclose(conv((x_src, x_dst), adj.t()), out, atol=1e-6)

    # a destination set larger than the edges reach still gets its rows
    out = conv((x_src, torch.randn(4, 5)), edge_index)
    assert out.size() == (4, 14)


def test_mdgat_conv_dropout_and_gradients():
    torch.manual_seed(3)
    x = torch.randn(4, 8, requires_grad=True)
    edge_index = torch.tensor([[0, 1, 2, 3], [1, 2, 3, 0]])
    conv = MDGATConv(8, 8, dropout=0.5)
    conv.eval()
    a = conv(x, edge_index)
    assert torch.equal(a, conv(x, edge_index))  # no dropout in eval mode
    conv.train()
    conv(x, edge_index).sum().backward()
    assert x.grad is not None and x.grad.abs().sum() > 0
    assert all(p.grad is not None for p in conv.parameters())


@pytest.mark.parametrize("heads", [1, 4])
def test_mdgat_conv_reset_parameters_changes_weights(heads):
    conv = MDGATConv(8, 4, heads=heads)
    before = conv.lin_query.weight.clone()
    conv.reset_parameters()
    assert not torch.equal(before, conv.lin_query.weight)
