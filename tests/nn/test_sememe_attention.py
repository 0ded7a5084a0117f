import math

import pytest
import torch
from torch_geometric.utils import scatter

from graphmatch.nn.sememe_attention import SememeAttention, group_edges

# 7 sememes in 3 senses, in no particular order; sense 1 has a single sememe
GROUP = torch.tensor([2, 0, 2, 1, 0, 2, 0])


def dense_reference(layer: SememeAttention, x: torch.Tensor, group: torch.Tensor) -> torch.Tensor:
    """The layer written sense by sense with dense matrices and a plain softmax over the sense."""
    conv = layer.attention
    H, C = conv.heads, conv.out_channels
    out = torch.empty_like(x)
    for g in group.unique().tolist():
        idx = (group == g).nonzero().view(-1)
        e = x[idx]
        q = conv.lin_query(e).view(-1, H, C)
        k = conv.lin_key(e).view(-1, H, C)
        v = conv.lin_value(e).view(-1, H, C)
        f = conv.lin_score2(torch.relu(conv.lin_score1(e))).view(-1, H, C)
        score = torch.einsum("nhc,khc->nkh", q, k).unsqueeze(-1) / math.sqrt(C) + f.unsqueeze(0)  # [n, k, H, C]
        m = (torch.softmax(score, dim=1) * v.unsqueeze(0)).sum(1).reshape(len(idx), H * C)
        if layer.mlp is not None:
            m = layer.mlp(m)
        out[idx] = torch.nn.functional.layer_norm(e + m, (x.size(1),), layer.norm.weight, layer.norm.bias)
    return out


def test_group_edges_are_all_pairs_within_groups():
    edges = group_edges(GROUP)
    want = {(k, n) for n in range(7) for k in range(7) if GROUP[k] == GROUP[n]}
    assert set(map(tuple, edges.t().tolist())) == want
    assert edges.size(1) == len(want) == 3 * 3 + 1 + 3 * 3
    assert group_edges(torch.empty(0, dtype=torch.long)).shape == (2, 0)


@pytest.mark.parametrize("mlp", [True, False])
def test_equals_dense_per_sense_reference(mlp):
    torch.manual_seed(0)
    layer = SememeAttention(8, heads=2, mlp=mlp).eval()
    torch.nn.init.normal_(layer.norm.weight)
    torch.nn.init.normal_(layer.norm.bias)
    x = torch.randn(7, 8)
    out = layer(x, GROUP)
    assert out.shape == (7, 8)
    assert torch.allclose(out, dense_reference(layer, x, GROUP), atol=1e-5)
    assert repr(layer) == f"SememeAttention(8, heads=2, mlp={mlp})"


def test_attention_is_normalised_per_sense_head_and_feature():
    torch.manual_seed(1)
    layer = SememeAttention(12, heads=3).eval()
    x = torch.randn(7, 12)
    _, (edge_index, alpha) = layer(x, GROUP, return_attention_weights=True)
    assert alpha.shape == (edge_index.size(1), 3, 4)
    assert (GROUP[edge_index[0]] == GROUP[edge_index[1]]).all()  # never across senses
    sums = scatter(alpha, edge_index[1], dim=0, dim_size=7, reduce="sum")
    assert torch.allclose(sums, torch.ones(7, 3, 4), atol=1e-6)
    # feature-wise: the weights of one edge differ across the features of a head
    many = GROUP[edge_index[1]] != 1
    assert not torch.allclose(alpha[many, :, 0], alpha[many, :, 1])
    # a sense with a single sememe attends to itself with weight one
    single = (GROUP[edge_index[1]] == 1).nonzero().view(-1)
    assert single.numel() == 1 and torch.equal(alpha[single], torch.ones(1, 3, 4))


def test_other_senses_do_not_change_a_sememe():
    torch.manual_seed(2)
    layer = SememeAttention(8, heads=4).eval()
    x = torch.randn(7, 8)
    out = layer(x, GROUP)
    x2 = x.clone()
    x2[GROUP == 2] += 3.0  # change sense 2 only
    out2 = layer(x2, GROUP)
    assert torch.allclose(out[GROUP != 2], out2[GROUP != 2], atol=1e-6)
    assert not torch.allclose(out[GROUP == 2], out2[GROUP == 2])


def test_batching_equals_separate():
    torch.manual_seed(3)
    layer = SememeAttention(8, heads=2).eval()
    xa, ga = torch.randn(7, 8), GROUP
    xb, gb = torch.randn(4, 8), torch.tensor([0, 1, 0, 0])
    together = layer(torch.cat([xa, xb]), torch.cat([ga, gb + 3]), num_groups=5)
    assert torch.allclose(together, torch.cat([layer(xa, ga), layer(xb, gb)]), atol=1e-6)


def test_empty_and_single_sememe():
    torch.manual_seed(4)
    layer = SememeAttention(8, heads=2).eval()
    out = layer(torch.empty(0, 8), torch.empty(0, dtype=torch.long))
    assert out.shape == (0, 8)
    x = torch.randn(1, 8)
    m = layer.mlp(layer.attention.lin_value(x))  # alone in its sense: the attention returns its value
    assert torch.allclose(layer(x, torch.zeros(1, dtype=torch.long)), layer.norm(x + m), atol=1e-6)


def test_dropout_gradients_and_bad_heads():
    torch.manual_seed(5)
    layer = SememeAttention(8, heads=2, dropout=0.5)
    x = torch.randn(7, 8, requires_grad=True)
    layer.eval()
    assert torch.equal(layer(x, GROUP), layer(x, GROUP))
    layer.train()
    layer(x, GROUP).pow(2).sum().backward()
    assert x.grad is not None and x.grad.abs().sum() > 0
    assert all(p.grad is not None for p in layer.parameters())
    assert layer.attention.bias is None  # as the released code: no bias in the attention
    with pytest.raises(ValueError, match="divisible"):
        SememeAttention(8, heads=3)
