import pytest
import torch

from graphmatch.nn.hf_bert import HFBertEncoder, additive_mask
from graphmatch.nn.mask_transformer import MaskTransformerConfig, MaskTransformerEncoder

B, L = 2, 8
CONFIG = MaskTransformerConfig(vocab_size=40, hidden_size=24, num_hidden_layers=2, num_attention_heads=3,
                               intermediate_size=32, max_position_embeddings=20)


def _inputs():
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(1, 40, (B, L), generator=g)
    pos = torch.tensor([[0, 1, 2, 3, 2, 3, 4, 5], [0, 1, 2, 3, 4, 0, 0, 0]])  # soft positions
    seg = torch.tensor([[0, 0, 0, 0, 0, 1, 1, 1], [0] * L])
    vis = torch.ones(B, L, L, dtype=torch.bool)
    vis[0, 4:6, :] = False  # tokens 4-5 form a branch seeing itself and tokens 2-3
    vis[0, :, 4:6] = False
    vis[0, 4:6, 2:6] = True
    vis[0, 2:4, 4:6] = True
    vis[1, 5:], vis[1, :, 5:] = False, False  # 3 padding tokens
    return ids, pos, seg, vis


def test_additive_mask():
    vis = torch.tensor([[[True, False], [False, False]]])
    m = additive_mask(vis, torch.float16)
    assert m.shape == (1, 1, 2, 2) and m.dtype == torch.float16
    assert m[0, 0, 0, 0] == 0 and m[0, 0, 0, 1] == torch.finfo(torch.float16).min
    assert additive_mask(vis[:, :1], torch.float32).shape == (1, 1, 1, 2)
    with pytest.raises(ValueError, match="bool"):
        additive_mask(vis.float(), torch.float32)


@pytest.mark.parametrize("impl", ["eager", "sdpa"])
def test_invisible_token_change_leaves_output_unchanged(impl):
    torch.manual_seed(0)
    enc = HFBertEncoder.from_config(CONFIG, attn_implementation=impl).eval()
    assert enc.bert.config._attn_implementation == impl
    ids, pos, seg, vis = _inputs()
    out = enc(ids, pos, seg, vis)
    assert out.shape == (B, L, 24) and torch.isfinite(out).all()
    # token 6 is invisible to the branch tokens 4-5 but visible to their word (tokens 2-3):
    # after one layer, changing it moves 2-3 and leaves 4-5 exactly as they were
    ids2 = ids.clone()
    ids2[0, 6] = (ids[0, 6] % 39) + 1
    one = HFBertEncoder.from_config(MaskTransformerConfig(**{**CONFIG.__dict__, "num_hidden_layers": 1}),
                                    attn_implementation=impl).eval()
    a, b = one(ids, pos, seg, vis), one(ids2, pos, seg, vis)
    assert torch.allclose(a[0, 4:6], b[0, 4:6], atol=1e-6)
    assert not torch.allclose(a[0, 2], b[0, 2], atol=1e-4)
    # padding of sample 1 never reaches its real tokens
    ids3 = ids.clone()
    ids3[1, 6] = 7
    assert torch.allclose(enc(ids3, pos, seg, vis)[1, :5], out[1, :5], atol=1e-6)


def test_boolean_vs_additive_mask_fact_under_eager():
    """Documents the transformers 5.x pitfall the additive mask avoids."""
    torch.manual_seed(0)
    enc = HFBertEncoder.from_config(CONFIG, attn_implementation="eager").eval()
    ids, pos, seg, vis = _inputs()
    good = enc(ids, pos, seg, vis)
    wrong = enc.bert(input_ids=ids, attention_mask=vis[:, None], token_type_ids=seg,
                     position_ids=pos).last_hidden_state
    assert not torch.allclose(good[0], wrong[0], atol=1e-3)


@pytest.mark.parametrize("impl", ["eager", "sdpa"])
def test_matches_our_encoder_with_same_weights(tmp_path, impl):
    torch.manual_seed(1)
    ours = MaskTransformerEncoder(CONFIG).eval()
    ours.save_pretrained_hf(tmp_path)
    hf = HFBertEncoder.from_pretrained(tmp_path, attn_implementation=impl).eval()
    ids, pos, seg, vis = _inputs()
    real = vis.any(-1)
    a, b = ours(ids, pos, seg, vis), hf(ids, pos, seg, vis)
    assert torch.allclose(a[real], b[real], atol=1e-5)
    assert torch.allclose(ours.pool(a[:, 0]), hf.pool(b[:, 0]), atol=1e-5)
    assert hf.hidden_size == 24


def test_attention_weights_and_position_error():
    enc = HFBertEncoder.from_config(CONFIG, attn_implementation="eager").eval()
    ids, pos, seg, vis = _inputs()
    out, weights = enc(ids, pos, seg, vis, return_attention_weights=True)
    assert len(weights) == 2 and weights[0].shape == (B, 3, L, L)
    assert (weights[0][0, :, 4, 6] == 0).all()
    with pytest.raises(ValueError, match="max_position_embeddings"):
        enc(ids, pos + 20, seg, vis)


def test_checkpoint_folders_load_strictly(tmp_path):
    from checkpoint_folders import bert_folder, edit_weights

    folder = bert_folder(tmp_path / "bert", [f"t{i}" for i in range(40)], hidden=24, layers=2, heads=3, ffn=32,
                         max_positions=20)
    enc = HFBertEncoder.from_pretrained(folder, attn_implementation="eager", log=False)
    fresh = HFBertEncoder.from_config(CONFIG)
    assert fresh.load_hf(folder, log=False).loaded == len(enc.bert.state_dict())
    assert all(torch.equal(v, fresh.bert.state_dict()[k]) for k, v in enc.bert.state_dict().items())
    groups = enc.layer_groups()
    assert len(groups) == 3 and groups[0][0] is enc.bert.embeddings.word_embeddings.weight
    assert groups[-1][-1] is enc.bert.pooler.dense.bias
    assert sum(len(g) for g in groups) == len(list(enc.parameters()))
    edit_weights(folder, drop=["embeddings.LayerNorm.bias"])
    with pytest.raises(ValueError, match=r"missing 1 weight: embeddings\.LayerNorm\.bias"):
        HFBertEncoder.from_pretrained(folder)
    with pytest.raises(ValueError, match=r"missing 1 weight: embeddings\.LayerNorm\.bias"):
        fresh.load_hf(folder)
