import pytest
import torch

from graphmatch.nn.mask_transformer import MaskTransformerConfig, MaskTransformerEncoder

B, L = 2, 10


def _config(**kw) -> MaskTransformerConfig:
    base = dict(vocab_size=60, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                intermediate_size=48, max_position_embeddings=32)
    return MaskTransformerConfig(**{**base, **kw})


def _inputs(seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(1, 60, (B, L), generator=g)
    pos = torch.arange(L).expand(B, L).clone()
    seg = torch.zeros(B, L, dtype=torch.long)
    vis = torch.rand(B, L, L, generator=g) < 0.5
    vis = vis | vis.transpose(1, 2) | torch.eye(L, dtype=torch.bool)
    vis[1, 7:], vis[1, :, 7:] = False, False  # sample 1 has 7 tokens
    ids[1, 7:] = 0
    return ids, pos, seg, vis


@pytest.fixture
def encoder():
    torch.manual_seed(0)
    return MaskTransformerEncoder(_config()).eval()


def test_output_shape_and_attention_weights(encoder):
    out, weights = encoder(*_inputs(), return_attention_weights=True)
    assert out.shape == (B, L, 32)
    assert len(weights) == 2 and weights[0].shape == (B, 4, L, L)
    assert torch.isfinite(out).all()
    assert encoder.pool(out[:, 0]).abs().max() <= 1.0


def test_dense_and_sparse_encoders_agree(encoder):
    ids, pos, seg, vis = _inputs(1)
    dense = encoder(ids, pos, seg, vis)
    for layer in encoder.layers:
        layer.attention.mode = "sparse"
    assert torch.allclose(dense, encoder(ids, pos, seg, vis), atol=1e-5)


def test_an_invisible_token_has_no_influence(encoder):
    """A chain visibility (i sees i-1, i, i+1) through 2 layers: token 0 depends on tokens 0-2
    only; changing token 3 leaves it exactly as it was, changing token 2 does not."""
    ids, pos, seg, _ = _inputs(2)
    idx = torch.arange(L)
    chain = ((idx[:, None] - idx[None, :]).abs() <= 1).expand(B, L, L).clone()
    out = encoder(ids, pos, seg, chain)
    far, near = ids.clone(), ids.clone()
    far[:, 3] = ids[:, 3] % 59 + 1
    near[:, 2] = ids[:, 2] % 59 + 1
    assert torch.equal(out[:, 0], encoder(far, pos, seg, chain)[:, 0])
    # two hops away: a small but real influence (about 5e-5 here), far above rounding noise
    assert (out[:, 0] - encoder(near, pos, seg, chain)[:, 0]).abs().max() > 1e-6
    assert (out[:, 4] - encoder(far, pos, seg, chain)[:, 4]).abs().max() > 1e-4


def test_visibility_and_soft_positions_matter(encoder):
    ids, pos, seg, vis = _inputs(2)
    out = encoder(ids, pos, seg, vis)
    full = torch.ones_like(vis)
    assert not torch.allclose(out, encoder(ids, pos, seg, full), atol=1e-4)
    soft = pos.clone()
    soft[:, 5:] -= 2
    assert not torch.allclose(out, encoder(ids, soft, seg, vis), atol=1e-4)


def test_position_overflow_is_a_clear_error(encoder):
    ids, pos, seg, vis = _inputs()
    with pytest.raises(ValueError, match="max_position_embeddings"):
        encoder(ids, pos + 30, seg, vis)


def test_bad_config():
    with pytest.raises(ValueError, match="hidden_act"):
        _config(hidden_act="swishy")
    with pytest.raises(ValueError, match="divisible"):
        _config(num_attention_heads=5)


def test_hf_checkpoint_round_trip(tmp_path, encoder):
    from transformers import BertModel

    vocab = tmp_path / "v.txt"
    vocab.write_text("".join(f"t{i}\n" for i in range(60)))  # as many entries as embedding rows
    encoder.save_pretrained_hf(tmp_path / "ckpt", vocab=vocab)
    assert (tmp_path / "ckpt" / "vocab.txt").read_text() == vocab.read_text()
    ids, pos, seg, vis = _inputs(3)
    ours = encoder(ids, pos, seg, vis)
    for impl in ("eager", "sdpa"):
        bert = BertModel.from_pretrained(tmp_path / "ckpt", attn_implementation=impl).eval()
        mask = torch.zeros(vis.shape).masked_fill(~vis, torch.finfo(torch.float32).min)[:, None]
        hf = bert(input_ids=ids, attention_mask=mask, token_type_ids=seg, position_ids=pos)
        real = vis.any(-1)
        assert torch.allclose(ours[real], hf.last_hidden_state[real], atol=1e-5)
        assert torch.allclose(encoder.pool(ours[:, 0]), hf.pooler_output, atol=1e-5)
    back = MaskTransformerEncoder.from_hf(tmp_path / "ckpt").eval()
    assert back.config == encoder.config
    assert torch.equal(back(ids, pos, seg, vis), ours)


def test_from_hf_model_and_overrides():
    from transformers import BertModel

    torch.manual_seed(1)
    bert = BertModel(_config().to_hf()).eval()
    enc = MaskTransformerEncoder.from_hf(bert, hidden_dropout_prob=0.0, attention_mode="dense").eval()
    assert enc.config.hidden_dropout_prob == 0.0 and enc.layers[0].attention.mode == "dense"
    ids, pos, seg, vis = _inputs(4)
    mask = torch.zeros(vis.shape).masked_fill(~vis, torch.finfo(torch.float32).min)[:, None]
    ref = bert(input_ids=ids, attention_mask=mask, token_type_ids=seg, position_ids=pos).last_hidden_state
    real = vis.any(-1)
    assert torch.allclose(enc(ids, pos, seg, vis)[real], ref[real], atol=1e-5)


def test_checkpoint_folders_load_strictly(tmp_path, capsys):
    from checkpoint_folders import bert_folder, edit_weights

    vocab = [f"t{i}" for i in range(60)]
    folder = bert_folder(tmp_path / "bert", vocab, hidden=32, layers=2, heads=4, ffn=48, max_positions=32)
    enc = MaskTransformerEncoder.from_hf(folder, log=False)
    assert enc.config == _config(hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1)
    state = enc.hf_state_dict()
    from safetensors.torch import load_file

    assert all(torch.equal(state[k], v) for k, v in load_file(str(folder / "model.safetensors")).items())
    # one tensor gone from model.safetensors: an error naming it, not a random weight
    edit_weights(folder, drop=["encoder.layer.1.output.dense.weight"])
    with pytest.raises(ValueError, match=r"missing 1 weight: encoder\.layer\.1\.output\.dense\.weight"):
        MaskTransformerEncoder.from_hf(folder)
    with pytest.raises(ValueError, match=r"missing 1 weight: encoder\.layer\.1\.output\.dense\.weight"):
        MaskTransformerEncoder(_config()).load_hf(folder)
    # a checkpoint without pooler (and a BertFor* one, names prefixed 'bert.'): fresh pooler, reported
    nopool = bert_folder(tmp_path / "nopool", vocab, hidden=32, layers=2, heads=4, ffn=48, max_positions=32,
                         pooler=False)
    capsys.readouterr()
    enc = MaskTransformerEncoder.from_hf(nopool)
    assert "pooler.dense.* (2 tensors) not in the checkpoint; initialised fresh" in capsys.readouterr().err
    report = enc.load_hf_state_dict({f"bert.{k}": v for k, v in state.items()})
    assert report.loaded == len(state) and torch.equal(enc.pooler.weight, state["pooler.dense.weight"])


def test_layer_groups(encoder):
    groups = encoder.layer_groups()
    assert len(groups) == 3 and groups[0][0] is encoder.embeddings.word.weight
    assert groups[-1][-2] is encoder.pooler.weight
    assert sum(len(g) for g in groups) == len(list(encoder.parameters()))
