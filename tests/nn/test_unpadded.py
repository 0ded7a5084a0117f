"""``MaskTransformerConfig.unpadded``: the layers run on the real tokens only and compute what the
padded encoder computes for them."""

import dataclasses

import torch

from graphmatch.nn.branch_marking import BranchMarking
from graphmatch.nn.mask_transformer import MaskTransformerConfig, MaskTransformerEncoder

B, L = 3, 9
LENGTHS = (9, 5, 2)


def _encoders(**kw) -> tuple[MaskTransformerEncoder, MaskTransformerEncoder]:
    torch.manual_seed(0)
    config = MaskTransformerConfig(vocab_size=50, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                                   intermediate_size=24, max_position_embeddings=16, **kw)
    padded = MaskTransformerEncoder(config)
    unpadded = MaskTransformerEncoder(dataclasses.replace(config, unpadded=True))
    unpadded.load_state_dict(padded.state_dict())
    return padded.eval(), unpadded.eval()


def _inputs():
    g = torch.Generator().manual_seed(3)
    real = torch.arange(L) < torch.tensor(LENGTHS)[:, None]
    ids = torch.randint(1, 50, (B, L), generator=g).masked_fill(~real, 0)
    pos = torch.arange(L).expand(B, L).clone()
    seg = torch.zeros(B, L, dtype=torch.long)
    vis = (torch.rand(B, L, L, generator=g) < 0.6) | torch.eye(L, dtype=torch.bool)
    vis = vis & real[:, :, None] & real[:, None, :]
    return ids, pos, seg, vis, real


def test_real_tokens_get_the_padded_encoders_output_and_padding_zero():
    padded, unpadded = _encoders()
    ids, pos, seg, vis, real = _inputs()
    want, want_w = padded(ids, pos, seg, vis, return_attention_weights=True, token_mask=real)
    got, got_w = unpadded(ids, pos, seg, vis, return_attention_weights=True, token_mask=real)
    assert torch.allclose(got[real], want[real], atol=1e-5)
    assert got[~real].abs().max() == 0
    for w, v in zip(got_w, want_w, strict=True):
        assert torch.allclose(w.transpose(1, 2)[real], v.transpose(1, 2)[real], atol=1e-6)
    # without token_mask (another caller) the unpadded encoder runs padded
    assert torch.equal(unpadded(ids, pos, seg, vis), padded(ids, pos, seg, vis))


def test_gradients_match():
    padded, unpadded = _encoders()
    ids, pos, seg, vis, real = _inputs()
    grads = []
    for enc in (padded.train(), unpadded.train()):
        enc.zero_grad()
        for m in enc.modules():  # dropout off, training mode on (the LayerNorm / attention paths)
            if isinstance(m, torch.nn.Dropout):
                m.p = 0.0
        for layer in enc.layers:
            layer.attention.attention_dropout = 0.0
        out = enc(ids, pos, seg, vis, token_mask=real)
        (out[real] ** 2).sum().backward()
        grads.append({n: p.grad for n, p in enc.named_parameters()})
    assert [n for n, g in grads[0].items() if g is None] == [n for n, g in grads[1].items() if g is None]
    for name, g in grads[0].items():
        assert g is None or torch.allclose(grads[1][name], g, atol=1e-5), name


def test_branch_marks_and_bf16_take_the_unpadded_path():
    padded, unpadded = _encoders()
    ids, pos, seg, vis, real = _inputs()
    branch = torch.zeros(B, L, dtype=torch.bool)
    branch[0, 6:] = True
    for enc in (padded, unpadded):
        enc.marking = BranchMarking(16, 2, 2, embedding=True, bias=True)
        torch.nn.init.normal_(enc.marking.embedding, 0, 0.5)
        torch.nn.init.normal_(enc.marking.bias, 0, 1.0)
    unpadded.marking.load_state_dict(padded.marking.state_dict())
    want = padded(ids, pos, seg, vis, marking=padded.marking, branch=branch, token_mask=real)
    got = unpadded(ids, pos, seg, vis, marking=unpadded.marking, branch=branch, token_mask=real)
    assert torch.allclose(got[real], want[real], atol=1e-5)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        low = unpadded(ids, pos, seg, vis, token_mask=real)
    assert low.dtype == torch.float32 and torch.allclose(low[real], padded(ids, pos, seg, vis)[real], atol=0.1)


def test_the_sparse_attention_path_stays_padded():
    padded, unpadded = _encoders(attention_mode="sparse")
    ids, pos, seg, vis, real = _inputs()
    assert torch.allclose(unpadded(ids, pos, seg, vis, token_mask=real)[real],
                          padded(ids, pos, seg, vis, token_mask=real)[real], atol=1e-5)
