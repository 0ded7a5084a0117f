import pytest
import torch

from graphmatch.nn.mask_attention import MaskSelfAttention, dense_to_edge_index, visibility_density

B, L, F, H = 3, 9, 16, 4


def _visible(seed: int = 0, lengths=(9, 6, 4), p: float = 0.5) -> torch.Tensor:
    """Random symmetric visibility with a diagonal; padding rows/cols all False."""
    g = torch.Generator().manual_seed(seed)
    vis = torch.rand(len(lengths), L, L, generator=g) < p
    vis = vis | vis.transpose(1, 2) | torch.eye(L, dtype=torch.bool)
    real = torch.arange(L) < torch.tensor(lengths)[:, None]
    return vis & real[:, :, None] & real[:, None, :]


@pytest.fixture
def layer():
    torch.manual_seed(0)
    return MaskSelfAttention(F, heads=H).eval()


def test_shapes_and_weights_normalised(layer):
    x, vis = torch.randn(B, L, F), _visible()
    out, w = layer(x, vis, mode="dense", return_attention_weights=True)
    assert out.shape == (B, L, F) and w.shape == (B, H, L, L)
    real = vis.any(-1)
    sums = w.sum(-1)  # [B, H, L]
    assert torch.allclose(sums[real[:, None, :].expand_as(sums)], torch.ones(()), atol=1e-6)
    assert (sums[~real[:, None, :].expand_as(sums)] == 0).all()
    assert (w[~vis[:, None].expand_as(w)] == 0).all()  # nothing attends where it cannot see


@pytest.mark.parametrize("lengths", [(9, 6, 4), (9, 9, 9), (1, 9, 2)])
def test_dense_and_sparse_paths_agree(layer, lengths):
    x, vis = torch.randn(B, L, F, requires_grad=True), _visible(1, lengths, p=0.3)
    dense, wd = layer(x, vis, mode="dense", return_attention_weights=True)
    sparse, ws = layer(x, vis, mode="sparse", return_attention_weights=True)
    assert torch.allclose(dense, sparse, atol=1e-5)
    assert torch.allclose(wd, ws, atol=1e-5)
    assert torch.allclose(layer(x, vis, mode="dense"), dense, atol=1e-6)  # fused == explicit
    gd = torch.autograd.grad(dense.sum(), x)[0]
    gs = torch.autograd.grad(layer(x, vis, mode="sparse").sum(), x)[0]
    assert torch.allclose(gd, gs, atol=1e-5)


def test_padding_rows_give_no_nan(layer):
    x, vis = torch.randn(B, L, F, requires_grad=True), _visible(2, (3, 1, 9))
    for mode in ("dense", "sparse"):
        out = layer(x, vis, mode=mode)
        assert torch.isfinite(out).all()
        out.sum().backward()
        assert torch.isfinite(x.grad).all()
        # a padded row's context is zero: its output is the output projection's bias
        assert torch.allclose(out[1, 5], layer.out.bias, atol=1e-6)
        x.grad = None


def test_invisible_token_has_no_influence(layer):
    x, vis = torch.randn(B, L, F), _visible(3)
    i = 0
    hidden = (~vis[0, i]).nonzero()[0].item()
    x2 = x.clone()
    x2[0, hidden] += 5.0
    for mode in ("dense", "sparse"):
        a, b = layer(x, vis, mode=mode), layer(x2, vis, mode=mode)
        assert torch.allclose(a[0, i], b[0, i], atol=1e-6)
        seen = vis[0, :, hidden].nonzero()[0].item()
        assert not torch.allclose(a[0, seen], b[0, seen], atol=1e-4)


def test_key_padding_mask_equals_full_padding_visibility(layer):
    x = torch.randn(B, L, F)
    real = torch.arange(L) < torch.tensor([9, 5, 2])[:, None]
    full = real[:, :, None] & real[:, None, :]
    a = layer(x, real[:, None, :])
    b = layer(x, full, mode="sparse")
    assert torch.allclose(a[real], b[real], atol=1e-5)


def test_sparse_adjacency_input(layer):
    x, vis = torch.randn(B, L, F), _visible(4)
    ei = dense_to_edge_index(vis)
    out, (ei2, alpha) = layer(x.reshape(B * L, F), edge_index=ei, return_attention_weights=True)
    assert out.shape == (B * L, F) and alpha.shape == (ei.size(1), H) and ei2 is ei
    assert torch.allclose(out.view(B, L, F), layer(x, vis, mode="dense"), atol=1e-5)
    per_query = torch.zeros(B * L, H).index_add_(0, ei[1], alpha)
    assert torch.allclose(per_query[vis.reshape(B * L, L).any(-1)], torch.ones(()), atol=1e-6)


def test_auto_mode_follows_density(monkeypatch):
    layer = MaskSelfAttention(F, heads=H, sparse_threshold=0.3).eval()
    dense_vis = _visible(5, p=0.9)
    sparse_vis = torch.eye(L, dtype=torch.bool).expand(B, L, L).clone()
    assert visibility_density(dense_vis) > 0.8
    assert visibility_density(sparse_vis) == pytest.approx(1 / L)
    assert layer.resolve_mode(dense_vis) == "dense"
    assert layer.resolve_mode(sparse_vis) == "sparse"
    calls = []
    monkeypatch.setattr(layer, "_sparse", lambda *a: calls.append("sparse") or (torch.zeros(B * L, F), None))
    layer(torch.randn(B, L, F), sparse_vis)
    layer(torch.randn(B, L, F), dense_vis)
    assert calls == ["sparse"]


def test_attention_dropout_only_in_training():
    layer = MaskSelfAttention(F, heads=H, attention_dropout=0.5)
    x, vis = torch.randn(B, L, F), _visible(6)
    layer.train()
    torch.manual_seed(0)
    a = layer(x, vis, mode="dense")
    torch.manual_seed(1)
    assert not torch.allclose(a, layer(x, vis, mode="dense"))
    layer.eval()
    assert torch.allclose(layer(x, vis, mode="dense"), layer(x, vis, mode="sparse"), atol=1e-5)


def test_bad_input_errors(layer):
    x = torch.randn(B, L, F)
    with pytest.raises(ValueError, match="bool"):
        layer(x, torch.ones(B, L, L))
    with pytest.raises(ValueError, match=r"\[B, L, L\]"):
        layer(x, torch.ones(B, L, L + 1, dtype=torch.bool))
    with pytest.raises(ValueError, match="either"):
        layer(x)
    with pytest.raises(ValueError, match="divisible"):
        MaskSelfAttention(10, heads=3)
    with pytest.raises(ValueError, match="mode"):
        MaskSelfAttention(F, mode="fast")


def test_additive_mask_and_mixed_precision(layer):
    from graphmatch.nn.mask_attention import additive_attention_mask

    vis = _visible(7, (9, 3, 5))
    mask, has_any = additive_attention_mask(vis)
    assert mask.shape == (B, 1, L, L) and torch.isfinite(mask).all()
    assert (mask[:, 0][vis] == 0).all() and (mask[:, 0][~vis] == torch.finfo(torch.float32).min).all()
    assert torch.equal(has_any, vis.any(-1))
    x = torch.randn(B, L, F)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = layer(x, vis, mode="dense", attn_mask=(mask, has_any))
    assert torch.isfinite(out).all() and out.dtype == torch.bfloat16
    ref = layer(x, vis, mode="dense")
    # bf16 keeps 8 significant bits (spacing 2^-7 at 1): allow two spacings of the largest output
    # (0.003-0.004 seen for outputs up to ~1)
    assert (out.float() - ref).abs().max() <= 2 * 2**-7 * ref.abs().max()
