"""What stays fp32 under ``torch.autocast("cpu", torch.bfloat16)`` (``train.precision=bf16-mixed``):
the visible matrix's mask stays exact (a hidden token gets no attention at all), the residual stream
and LayerNorm's output are fp32, softmax over attention is fp32, and the losses are fp32."""

import pytest
import torch
import torch.nn.functional as F

from graphmatch.models.let import match_loss
from graphmatch.nn.loss_precision import fp32_logits
from graphmatch.nn.mask_attention import MaskSelfAttention
from graphmatch.nn.mask_transformer import MaskTransformerConfig, MaskTransformerEncoder

B, L, H = 2, 10, 32


def bf16():
    return torch.autocast("cpu", dtype=torch.bfloat16)


def _chain() -> torch.Tensor:
    idx = torch.arange(L)
    return ((idx[:, None] - idx[None, :]).abs() <= 1).expand(B, L, L).clone()


def test_a_hidden_token_gets_exactly_no_attention_in_bf16():
    torch.manual_seed(0)
    attn = MaskSelfAttention(H, heads=4, mode="dense").eval()
    x, vis = torch.randn(B, L, H), _chain()
    with bf16():
        out, weights = attn(x, vis, return_attention_weights=True)
        fused = attn(x, vis)  # the SDPA path training takes
        far = x.clone()
        far[:, 5:] = 100 * torch.randn(B, L - 5, H)  # tokens token 0 cannot see, made huge
        fused_far = attn(far, vis)
    assert fused.dtype == torch.bfloat16 and weights.dtype == torch.float32  # softmax over attention in fp32
    assert torch.equal(weights.masked_select(~vis[:, None]), torch.zeros(int((~vis).sum()) * 4))
    assert torch.allclose(weights.sum(-1), torch.ones(B, 4, L))
    assert torch.equal(fused[:, :4], fused_far[:, :4])  # tokens 0-3 see 0-4 only: bit for bit the same
    assert not torch.equal(fused[:, 5:], fused_far[:, 5:])


@pytest.mark.parametrize("layer_norm", ["bert", "uer"])
def test_the_residual_stream_and_layernorm_stay_fp32(layer_norm):
    torch.manual_seed(0)
    config = MaskTransformerConfig(vocab_size=60, hidden_size=H, num_hidden_layers=2, num_attention_heads=4,
                                   intermediate_size=48, max_position_embeddings=32, layer_norm=layer_norm)
    encoder = MaskTransformerEncoder(config).eval()
    ids = torch.randint(1, 60, (B, L))
    pos, seg = torch.arange(L).expand(B, L), torch.zeros(B, L, dtype=torch.long)
    fp32 = encoder(ids, pos, seg, _chain())
    with bf16():
        mixed = encoder(ids, pos, seg, _chain())
        assert encoder.layers[0].attention.query(fp32).dtype == torch.bfloat16  # the products do run in bf16
    assert mixed.dtype == torch.float32  # LayerNorm's output, the layer's output
    assert (mixed - fp32).abs().max() < 0.1 and not torch.equal(mixed, fp32)


def test_losses_are_fp32_with_fp32_class_weights():
    logits = torch.randn(8, 3, dtype=torch.bfloat16, requires_grad=True)
    y = torch.tensor([0, 1, 2, 0, 1, 2, 0, 0])
    weight = torch.tensor([0.4173, 1.0, 2.3331])
    assert fp32_logits(logits).dtype == torch.float32 and fp32_logits(logits.float().double()).dtype == torch.float64
    with bf16():
        loss = F.cross_entropy(fp32_logits(logits), y, weight=weight.to(fp32_logits(logits)))
        binary = match_loss(torch.randn(8, dtype=torch.bfloat16), (y > 0).long(), weight[:2])
        pair = match_loss(logits[:, :2], (y > 0).long(), weight[:2])
    exact = F.cross_entropy(logits.float(), y, weight=weight)
    assert loss.dtype == binary.dtype == pair.dtype == torch.float32
    assert loss.item() == exact.item()  # the weights were not rounded to bf16
    loss.backward()
    assert logits.grad is not None and logits.grad.dtype == torch.bfloat16


def test_attention_fp32_runs_the_product_in_fp32_under_bf16(monkeypatch):
    """``attention_fp32``: the projections stay bf16, SDPA runs on fp32 Q, K, V and mask; a hidden token
    still gets no attention, and both results are fp32's to bf16's rounding."""
    import graphmatch.nn.mask_attention as module

    seen = []
    sdpa = F.scaled_dot_product_attention

    def recording(q, k, v, attn_mask=None, dropout_p=0.0):
        seen.append((q.dtype, k.dtype, v.dtype, attn_mask.dtype, torch.is_autocast_enabled("cpu")))
        return sdpa(q, k, v, attn_mask=attn_mask, dropout_p=dropout_p)

    monkeypatch.setattr(module.F, "scaled_dot_product_attention", recording)
    torch.manual_seed(0)
    x, vis = torch.randn(B, L, H, requires_grad=True), _chain()
    for fp32 in (False, True):
        attn = MaskSelfAttention(H, heads=4, mode="dense", attention_fp32=fp32)
        torch.manual_seed(1)
        attn.reset_parameters()
        exact = attn(x, vis)
        with bf16():
            out = attn(x, vis)
            far = x.detach().clone()
            far[:, 5:] = 100 * torch.randn(B, L - 5, H)
            assert torch.equal(out[:, :4], attn(far, vis)[:, :4])  # hidden tokens: no attention
        # outside autocast too, which would cast fp32 inputs back to bf16 inside the kernel
        assert seen[-1] == ((*(torch.float32,) * 4, False) if fp32 else (*(torch.bfloat16,) * 4, True))
        out.float().sum().backward()
        assert attn.query.weight.grad is not None and attn.query.weight.grad.dtype == torch.float32
        assert (out.float() - exact).abs().max() < 0.02


def test_the_encoder_config_reaches_every_attention_layer():
    config = MaskTransformerConfig(vocab_size=60, hidden_size=H, num_hidden_layers=2, num_attention_heads=4,
                                   intermediate_size=48, max_position_embeddings=32, attention_fp32=True)
    assert all(layer.attention.attention_fp32 for layer in MaskTransformerEncoder(config).layers)
    assert not MaskTransformerEncoder(MaskTransformerConfig(vocab_size=60, hidden_size=H, num_hidden_layers=1,
                                                            num_attention_heads=4)).layers[0].attention.attention_fp32
    assert "attention_fp32" not in config.to_hf().to_dict()
