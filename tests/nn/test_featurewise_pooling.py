import pytest
import torch
from torch_geometric.utils import scatter, softmax

from graphmatch.nn.featurewise_pooling import FeatureWiseAttentionPooling

# 7 elements in sets 0, 2 and 3 of 5 (sets 1 and 4 are empty), in no particular order
INDEX = torch.tensor([2, 0, 3, 0, 2, 2, 0])


def dense_reference(pool: FeatureWiseAttentionPooling, x: torch.Tensor, index: torch.Tensor,
                    num_sets: int) -> torch.Tensor:
    """r_g = sum_n softmax_n(W2 relu(W1 x_n + b1) + b2) * (Wv x_n), set by set with a plain softmax."""
    lin1, _, _, lin2 = pool.gate_nn
    out = torch.zeros(num_sets, pool.out_channels)
    for g in range(num_sets):
        e = x[index == g]
        if len(e):
            score = lin2(torch.relu(lin1(e)))  # [n, F_out]
            out[g] = (torch.softmax(score, dim=0) * pool.nn(e)).sum(0)
    return out


def test_equals_dense_reference_and_empty_sets_are_zero():
    torch.manual_seed(0)
    pool = FeatureWiseAttentionPooling(6, 4, hidden_channels=5).eval()
    x = torch.randn(7, 6)
    out = pool(x, INDEX, dim_size=5)
    assert out.shape == (5, 4) and repr(pool) == "FeatureWiseAttentionPooling(6, 4)"
    assert torch.allclose(out, dense_reference(pool, x, INDEX, 5), atol=1e-6)
    assert torch.equal(out[1], torch.zeros(4)) and torch.equal(out[4], torch.zeros(4))
    assert pool(torch.empty(0, 6), torch.empty(0, dtype=torch.long), dim_size=3).shape == (3, 4)
    assert torch.equal(pool(torch.empty(0, 6), torch.empty(0, dtype=torch.long), dim_size=3), torch.zeros(3, 4))


def test_weights_are_normalised_per_set_and_per_feature():
    torch.manual_seed(1)
    pool = FeatureWiseAttentionPooling(6, 4).eval()
    x = torch.randn(7, 6)
    alpha = softmax(pool.gate_nn(x), INDEX, num_nodes=5)  # the weights the layer uses
    sums = scatter(alpha, INDEX, dim=0, dim_size=5, reduce="sum")
    assert torch.allclose(sums[[0, 2, 3]], torch.ones(3, 4), atol=1e-6)
    assert not torch.allclose(alpha[:, 0], alpha[:, 1])  # one weight per feature, not per element
    # the pooled vector is the per-feature convex combination of the values
    assert torch.allclose(pool(x, INDEX, dim_size=5), scatter(alpha * pool.nn(x), INDEX, 0, dim_size=5), atol=1e-6)


def test_a_single_element_pools_to_its_value_and_order_does_not_matter():
    torch.manual_seed(2)
    pool = FeatureWiseAttentionPooling(6, 4).eval()
    x = torch.randn(7, 6)
    one = pool(x[:1], torch.zeros(1, dtype=torch.long))
    assert torch.allclose(one, pool.nn(x[:1]), atol=1e-6)
    perm = torch.randperm(7)
    assert torch.allclose(pool(x[perm], INDEX[perm], dim_size=5), pool(x, INDEX, dim_size=5), atol=1e-6)


def test_batching_equals_separate():
    torch.manual_seed(3)
    pool = FeatureWiseAttentionPooling(6, 4).eval()
    xa, xb = torch.randn(7, 6), torch.randn(3, 6)
    ib = torch.tensor([1, 0, 1])
    together = pool(torch.cat([xa, xb]), torch.cat([INDEX, ib + 5]), dim_size=7)
    assert torch.allclose(together, torch.cat([pool(xa, INDEX, dim_size=5), pool(xb, ib, dim_size=2)]), atol=1e-6)


@pytest.mark.parametrize("dropout", [0.0, 0.5])
def test_gradients_and_dropout(dropout):
    torch.manual_seed(4)
    pool = FeatureWiseAttentionPooling(6, 4, dropout=dropout)
    x = torch.randn(7, 6, requires_grad=True)
    pool.eval()
    assert torch.equal(pool(x, INDEX, dim_size=5), pool(x, INDEX, dim_size=5))
    pool.train()
    pool(x, INDEX, dim_size=5).sum().backward()
    assert x.grad.abs().sum() > 0 and all(p.grad is not None for p in pool.parameters())
