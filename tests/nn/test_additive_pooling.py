import pytest
import torch

from graphmatch.nn import AdditiveAttentionPooling, LatentEntityTyping, PackedBiLSTM


def _groups():
    torch.manual_seed(0)
    x = torch.randn(7, 4)
    index = torch.tensor([0, 0, 0, 1, 1, 3, 3])  # group 2 is empty
    return x, index


def test_plain_pooling_matches_dense_formula():
    x, index = _groups()
    pool = AdditiveAttentionPooling(4)
    out, alpha = pool(x, index, dim_size=4, return_attention_weights=True)
    assert out.shape == (4, 4) and alpha.shape == (7,)
    for g in range(4):
        sel = index == g
        if not sel.any():
            assert torch.equal(out[g], torch.zeros(4))
            continue
        w = torch.softmax(torch.tanh(x[sel]) @ pool.score, dim=0)
        assert torch.allclose(alpha[sel], w)
        assert torch.allclose(out[g], (w[:, None] * x[sel]).sum(0), atol=1e-6)


def test_weights_sum_to_one_per_group_and_ptr_agrees():
    x, _ = _groups()
    index = torch.tensor([0, 0, 0, 1, 1, 2, 2])
    pool = AdditiveAttentionPooling(4)
    out, alpha = pool(x, index, return_attention_weights=True)
    sums = torch.zeros(3).index_add(0, index, alpha)
    assert torch.allclose(sums, torch.ones(3))
    out_ptr = pool(x, ptr=torch.tensor([0, 3, 5, 7]))
    assert torch.allclose(out, out_ptr, atol=1e-6)


def test_unsorted_index():
    x, index = _groups()
    pool = AdditiveAttentionPooling(4)
    perm = torch.randperm(7)
    assert torch.allclose(pool(x, index, dim_size=4), pool(x[perm], index[perm], dim_size=4), atol=1e-6)


def test_projected_keys_and_query():
    torch.manual_seed(1)
    x, index = _groups()
    key = torch.randn(7, 3)
    query = torch.randn(4, 5)
    pool = AdditiveAttentionPooling(3, attention_channels=6, query_channels=5)
    out, alpha = pool(x, index, dim_size=4, key=key, query=query, return_attention_weights=True)
    u = torch.tanh(pool.key_lin(key) + pool.query_lin(query)[index])
    for g in (0, 1, 3):
        sel = index == g
        w = torch.softmax(u[sel] @ pool.score, dim=0)
        assert torch.allclose(alpha[sel], w, atol=1e-6)
        assert torch.allclose(out[g], (w[:, None] * x[sel]).sum(0), atol=1e-6)
    # a different query changes the weights of its own group only
    q2 = query.clone()
    q2[1] += 3.0
    _, alpha2 = pool(x, index, dim_size=4, key=key, query=q2, return_attention_weights=True)
    assert torch.allclose(alpha2[index != 1], alpha[index != 1])
    assert not torch.allclose(alpha2[index == 1], alpha[index == 1])


def test_gradients_reach_all_parameters():
    x, index = _groups()
    pool = AdditiveAttentionPooling(4, attention_channels=3, query_channels=2)
    pool(x, index, dim_size=4, query=torch.randn(4, 2)).sum().backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in pool.parameters())


def test_bad_input():
    x, index = _groups()
    with pytest.raises(ValueError, match="needs attention_channels"):
        AdditiveAttentionPooling(4, query_channels=3)
    with pytest.raises(ValueError, match="pass a query exactly"):
        AdditiveAttentionPooling(4)(x, index, query=torch.randn(4, 2))
    with pytest.raises(ValueError, match="pass a query exactly"):
        AdditiveAttentionPooling(4, 3, query_channels=2)(x, index)
    with pytest.raises(ValueError, match=r"key must be \[7, 4\]"):
        AdditiveAttentionPooling(4)(x, index, key=torch.randn(7, 5))
    with pytest.raises(ValueError, match="query has 2 rows for 4 sets"):
        AdditiveAttentionPooling(4, 3, query_channels=2)(x, index, dim_size=4, query=torch.randn(2, 2))


def test_latent_entity_typing():
    torch.manual_seed(0)
    typing = LatentEntityTyping(6, num_types=3)
    h = torch.randn(5, 6)
    t, a = typing(h, return_attention_weights=True)
    assert t.shape == (5, 6) and a.shape == (5, 3)
    assert torch.allclose(a.sum(-1), torch.ones(5))
    assert torch.allclose(a, torch.softmax(h @ typing.types.t(), -1))
    assert torch.allclose(t, a @ typing.types)
    with pytest.raises(ValueError, match=r"expected \[M, 6\]"):
        typing(torch.randn(5, 4))
    with pytest.raises(ValueError, match="num_types"):
        LatentEntityTyping(6, num_types=0)


@pytest.mark.parametrize("merge, width", [("sum", 5), ("concat", 10)])
def test_packed_bilstm_ignores_padding(merge, width):
    torch.manual_seed(0)
    lstm = PackedBiLSTM(3, 5, merge=merge)
    x = torch.randn(2, 6, 3)
    mask = torch.tensor([[True] * 6, [True] * 2 + [False] * 4])
    out = lstm(x, mask)
    assert out.shape == (2, 6, width)
    assert torch.equal(out[1, 2:], torch.zeros(4, width))
    alone = lstm(x[1:, :2], mask[1:, :2])
    assert torch.allclose(out[1, :2], alone[0], atol=1e-6)
    x2 = x.clone()
    x2[1, 2:] = 100.0  # garbage in the padding changes nothing
    assert torch.allclose(lstm(x2, mask), out)
    if merge == "sum":
        full, _ = lstm.lstm(x[:1])
        assert torch.allclose(out[0], full[0, :, :5] + full[0, :, 5:], atol=1e-6)


def test_packed_bilstm_errors():
    with pytest.raises(ValueError, match="merge"):
        PackedBiLSTM(3, 4, merge="mean")
    with pytest.raises(ValueError, match="at least one token"):
        PackedBiLSTM(3, 4)(torch.randn(1, 2, 3), torch.zeros(1, 2, dtype=torch.bool))


def test_packed_bilstm_input_dropout_one_mask_per_direction():
    torch.manual_seed(0)
    lstm = PackedBiLSTM(3, 4, merge="concat", input_dropout=0.5).train()
    x = torch.randn(2, 5, 3)
    mask = torch.tensor([[True] * 5, [True] * 3 + [False] * 2])
    torch.manual_seed(7)
    out = lstm(x, mask)
    torch.manual_seed(7)
    m_fw = torch.nn.functional.dropout(torch.ones_like(x), 0.5)  # drawn first, then the backward mask
    m_bw = torch.nn.functional.dropout(torch.ones_like(x), 0.5)
    for k, n in enumerate((5, 3)):
        on_fw, _ = lstm.lstm(x[k : k + 1, :n] * m_fw[k : k + 1, :n])
        on_bw, _ = lstm.lstm(x[k : k + 1, :n] * m_bw[k : k + 1, :n])
        assert torch.allclose(out[k, :n, :4], on_fw[0, :, :4], atol=1e-6)
        assert torch.allclose(out[k, :n, 4:], on_bw[0, :, 4:], atol=1e-6)
    assert torch.equal(out[1, 3:], torch.zeros(2, 8))
    lstm.eval()  # no dropout outside training: both directions read the same input
    full, _ = lstm.lstm(x[:1])
    assert torch.allclose(lstm(x, mask)[0], full[0], atol=1e-6)
    with pytest.raises(ValueError, match="input_dropout"):
        PackedBiLSTM(3, 4, input_dropout=1.0)


def test_glorot_inits_of_the_papers_code():
    torch.manual_seed(0)
    lstm = PackedBiLSTM(30, 20, init="glorot")
    sigma = (2 / (30 + 20 + 80)) ** 0.5  # one [in + h, 4h] kernel per direction, as TensorFlow's LSTMCell
    for name, p in lstm.lstm.named_parameters():
        if name.startswith("weight"):
            assert abs(p.std().item() - sigma) < 0.1 * sigma and p.abs().max() <= 2 * sigma / 0.87962566
        elif name.startswith("bias_ih"):
            assert torch.equal(p, torch.cat([torch.zeros(20), torch.ones(20), torch.zeros(40)]))
        else:
            assert p.abs().sum() == 0
    pool = AdditiveAttentionPooling(3, attention_channels=6, query_channels=5, bias=False, init="glorot")
    assert pool.key_lin.bias is None and pool.score.abs().max() <= 2 * (1 / 6) ** 0.5 / 0.87962566
    assert LatentEntityTyping(6, 3, init="glorot").types.abs().max() <= 2 * (2 / 9) ** 0.5 / 0.87962566
    for build in (lambda: PackedBiLSTM(3, 4, init="he"), lambda: AdditiveAttentionPooling(3, init="he"),
                  lambda: LatentEntityTyping(3, init="he")):
        with pytest.raises(ValueError, match="init must be one of default, glorot"):
            build()


def test_old_pooling_names_warn_and_give_the_renamed_classes():
    import graphmatch.nn as gnn

    with pytest.warns(DeprecationWarning, match="AttentionPooling is renamed AdditiveAttentionPooling"):
        assert gnn.AttentionPooling is gnn.AdditiveAttentionPooling
    with pytest.warns(DeprecationWarning, match="AttentivePooling is renamed FeatureWiseAttentionPooling"):
        assert gnn.AttentivePooling is gnn.FeatureWiseAttentionPooling
    with pytest.raises(AttributeError, match="no attribute 'Pooling'"):
        gnn.Pooling  # noqa: B018
