"""The official K-BERT code's UER checkpoints: UER's LayerNorm, the name map, strict loading
(graphmatch.nn.uer, graphmatch.nn.pretrained, MaskTransformerEncoder)."""

import json

import pytest
import torch
from torch import nn
from uer_checkpoints import CONFIG, VOCAB, uer_folder, uer_hidden, uer_inputs, uer_state

from graphmatch.nn.mask_transformer import MaskTransformerConfig, MaskTransformerEncoder
from graphmatch.nn.uer import UERLayerNorm, uer_names
from graphmatch.pretrained import resolve_pretrained as resolve_record
from graphmatch.pretrained import uer_files
from graphmatch.pretrained.uer import normalise_uer


def resolve_pretrained(path, key="model.pretrained"):
    return resolve_record(path, key).path


def read_checkpoint(path):
    return resolve_record(path).read_weights()


def checkpoint_config(path):
    return dict(resolve_record(path).config)


def bert_config(path):
    return resolve_record(path).bert_config()


def _dense_uer_norm(x, gamma, beta, eps=1e-6):
    n = x.size(-1)
    mean = x.sum(-1, keepdim=True) / n
    std = (((x - mean) ** 2).sum(-1, keepdim=True) / (n - 1)).sqrt()
    return gamma * (x - mean) / (std + eps) + beta


def test_uer_layer_norm_follows_its_formula():
    torch.manual_seed(0)
    norm = UERLayerNorm(8)
    assert norm.eps == 1e-6 and [n for n, _ in norm.named_parameters()] == ["weight", "bias"]
    with torch.no_grad():
        norm.weight.normal_()
        norm.bias.normal_()
    x = torch.randn(3, 5, 8) * 4 + 1
    assert torch.allclose(norm(x), _dense_uer_norm(x, norm.weight, norm.bias), atol=1e-6)
    bert = nn.LayerNorm(8, eps=1e-6)
    bert.load_state_dict(norm.state_dict())
    assert (norm(x) - bert(x)).abs().max() > 1e-2  # unbiased std, eps outside the root: not BERT's
    # a constant row: BERT's divides by sqrt(eps), UER's by eps; both give beta
    assert torch.allclose(norm(torch.ones(1, 8)), norm.bias)


def test_layer_norm_option_and_default():
    small = dict(vocab_size=10, hidden_size=8, num_hidden_layers=1, num_attention_heads=2, intermediate_size=8)
    default = MaskTransformerEncoder(MaskTransformerConfig(**small))
    norms = [m for m in default.modules() if isinstance(m, nn.LayerNorm)]
    assert len(norms) == 3 and all(type(m) is nn.LayerNorm for m in norms)  # BERT's, as before
    uer = MaskTransformerEncoder(MaskTransformerConfig(**small, layer_norm="uer", layer_norm_eps=1e-6))
    norms = [m for m in uer.modules() if isinstance(m, nn.LayerNorm)]
    assert len(norms) == 3 and all(type(m) is UERLayerNorm for m in norms)
    assert all(torch.equal(m.weight, torch.ones(8)) for m in norms)  # reset_parameters covers them
    assert default.state_dict().keys() == uer.state_dict().keys()
    with pytest.raises(ValueError, match="layer_norm must be one of bert, uer, got 'rms'"):
        MaskTransformerConfig(**small, layer_norm="rms")
    with pytest.raises(ValueError, match="BertModel has no 'uer' LayerNorm"):
        uer.config.to_hf()


def test_name_map_covers_the_encoder_and_uer_names():
    config = MaskTransformerConfig(vocab_size=len(VOCAB), hidden_size=16, num_hidden_layers=2, num_attention_heads=4,
                                   intermediate_size=24, layer_norm="uer")
    names = uer_names(2)
    assert set(names) == set(MaskTransformerEncoder(config).state_dict())
    state = uer_state(target=True)
    assert set(names.values()) - set(state) == set()  # every name mapped exists in a UER state dict
    assert set(state) - set(names.values()) == {n for n in state if n.startswith("target.")
                                                and not n.startswith("target.nsp_linear_1.")}
    # a state dict in memory (DataParallel's prefix, the official segment rows) loads the same way
    encoder = MaskTransformerEncoder(config)
    report = encoder.load_uer_state_dict({f"module.{k}": v for k, v in state.items()})
    assert report.loaded == len(names) and set(report.ignored) == {"target.*"}
    assert torch.equal(encoder.embeddings.segment.weight, state["embedding.segment_embedding.weight"][1:])


def test_config_from_google_config(tmp_path):
    (tmp_path / "google_config.json").write_text(json.dumps(CONFIG))
    config = MaskTransformerConfig.from_uer(tmp_path / "google_config.json", vocab_size=21)
    assert (config.hidden_size, config.num_hidden_layers, config.num_attention_heads, config.intermediate_size,
            config.vocab_size, config.max_position_embeddings, config.type_vocab_size) == (16, 2, 4, 24, 21, 512, 2)
    assert (config.layer_norm, config.layer_norm_eps, config.hidden_act) == ("uer", 1e-6, "gelu")
    assert config.hidden_dropout_prob == config.attention_probs_dropout_prob == 0.1
    assert MaskTransformerConfig.from_uer({"emb_size": 768, "feedforward_size": 3072, "hidden_size": 768,
                                           "heads_num": 12, "layers_num": 12, "dropout": 0.1}).vocab_size == 21128
    with pytest.raises(ValueError, match="has no heads_num"):
        MaskTransformerConfig.from_uer({"hidden_size": 16, "feedforward_size": 24})
    with pytest.raises(ValueError, match="emb_size 8 differs from hidden_size 16"):
        MaskTransformerConfig.from_uer({**CONFIG, "emb_size": 8})


def test_pretrained_folder_loads_strictly_and_computes_the_official_model(tmp_path, capsys):
    state = uer_state()
    folder = uer_folder(tmp_path / "models", state)
    assert resolve_pretrained(folder) == folder
    ckpt = read_checkpoint(folder)
    assert ckpt.format == "uer" and ckpt.vocab == folder / "google_vocab.txt"
    assert ckpt.source == str(folder / "google_model.bin")
    assert checkpoint_config(folder) == ckpt.config and ckpt.config["vocab_size"] == len(VOCAB)
    encoder = MaskTransformerEncoder.from_pretrained(folder).eval()
    assert encoder.config.layer_norm == "uer" and encoder.config.max_position_embeddings == 512
    log = capsys.readouterr().err.splitlines()
    assert log == [f"pretrained: loaded {len(encoder.state_dict())} tensors from {folder / 'google_model.bin'}",
                   "pretrained: target.* (8 tensors) in the checkpoint but not used; ignored"]
    # the weights in place: segments 0 / 1 are UER's rows 1 / 2; the pooler is the NSP head's first layer
    ours = encoder.state_dict()
    assert torch.equal(ours["embeddings.segment.weight"], state["embedding.segment_embedding.weight"][1:])
    assert torch.equal(ours["pooler.weight"], state["target.nsp_linear_1.weight"])
    key = "encoder.transformer.1.self_attn.linear_layers.1.bias"
    assert torch.equal(ours["layers.1.attention.key.bias"], state[key])
    assert torch.equal(ours["layers.0.output_norm.weight"], state["encoder.transformer.0.layer_norm_2.gamma"])
    # the forward pass is the official model's on the real tokens (UER segments = ours + 1)
    src, seg, pos, vm = uer_inputs()
    real, ours_seg = seg > 0, (seg - 1).clamp(min=0)
    want = uer_hidden(state, src, seg, pos, vm)
    sparse = MaskTransformerEncoder.from_pretrained(folder, log=False, attention_mode="sparse").eval()
    for model in (encoder, sparse):
        with torch.no_grad():
            got = model(src, pos, ours_seg, vm)
        assert torch.allclose(got[real], want[real], atol=1e-5), model.config.attention_mode
    # the same weights under BERT's LayerNorm would not be
    bert_ln = MaskTransformerEncoder(MaskTransformerConfig.from_pretrained(folder, layer_norm="bert")).eval()
    bert_ln.load_state_dict(ours)
    with torch.no_grad():
        assert (bert_ln(src, pos, ours_seg, vm)[real] - want[real]).abs().max() > 1e-3


def test_files_are_recognised_by_their_names(tmp_path):
    state = uer_state(head="classifier", target=False)
    # a fine-tuned classifier file, saved under DataParallel's module. prefix, with the config beside it
    folder = uer_folder(tmp_path / "outputs", {f"module.{k}": v for k, v in state.items()},
                        weights="kbert_book_review.bin")
    file = folder / "kbert_book_review.bin"
    assert resolve_pretrained(file) == file and uer_files(folder).weights == file
    ckpt = read_checkpoint(file)
    assert ckpt.format == "uer" and not any(n.startswith("module.") for n in ckpt.state)
    encoder = MaskTransformerEncoder.from_pretrained(file, log=False)  # head unused, pooler fresh
    assert torch.equal(encoder.state_dict()["embeddings.word.weight"], state["embedding.word_embedding.weight"])
    report = encoder.load_weights(ckpt, log=False)
    assert report.fresh == {"target.nsp_linear_1.*": ["target.nsp_linear_1.weight", "target.nsp_linear_1.bias"]}
    assert set(report.ignored) == {"output_layer_1.*", "output_layer_2.*"}
    # the official code's torch (2019) wrote the legacy, non-zip format
    legacy = uer_folder(tmp_path / "legacy", {})
    torch.save(state, legacy / "google_model.bin", _use_new_zipfile_serialization=False)
    assert set(read_checkpoint(legacy).state) == set(state)
    # transformers is told plainly that it cannot load UER
    with pytest.raises(ValueError, match="is a UER .* transformers' BertModel cannot compute its LayerNorm"):
        bert_config(folder)


def _error(path):
    with pytest.raises(ValueError) as err:
        MaskTransformerEncoder.from_pretrained(path, log=False)
    message = str(err.value)
    assert "\n" not in message
    return message


def test_bad_checkpoints_are_one_line_errors(tmp_path):
    state = uer_state()
    missing = uer_folder(tmp_path / "missing", {k: v for k, v in state.items()
                                                if k != "encoder.transformer.1.feed_forward.linear_2.weight"})
    assert _error(missing).endswith("does not fit the model: missing 1 weight: "
                                    "encoder.transformer.1.feed_forward.linear_2.weight")
    extra = uer_folder(tmp_path / "extra", {**state, "encoder.transformer.2.layer_norm_1.gamma": torch.ones(16)})
    assert _error(extra).endswith("unexpected 1 weight: encoder.transformer.2.layer_norm_1.gamma")
    vocab = uer_folder(tmp_path / "vocab", state, vocab=[*VOCAB, "q"])
    assert _error(vocab) == (f"pretrained checkpoint {vocab / 'google_model.bin'}: its vocabulary (google_vocab.txt) "
                             f"has {len(VOCAB) + 1} entries but its weights have {len(VOCAB)} embedding rows "
                             "(embedding.word_embedding.weight); they must agree")
    with pytest.raises(ValueError, match="its vocabulary .* they must agree"):
        resolve_pretrained(vocab)
    shapes = uer_folder(tmp_path / "shapes", {**state, "encoder.transformer.0.self_attn.final_linear.bias":
                                              torch.zeros(8)})
    assert "mis-shaped 1 weight: encoder.transformer.0.self_attn.final_linear.bias [8] vs [16]" in _error(shapes)
    segments = uer_folder(tmp_path / "segments", {**state, "embedding.segment_embedding.weight": torch.zeros(2, 16)})
    assert "embedding.segment_embedding.weight has 2 rows; UER's has 3" in _error(segments)
    alone = tmp_path / "alone"
    alone.mkdir()
    torch.save(state, alone / "google_model.bin")
    assert _error(alone / "google_model.bin").startswith(f"UER checkpoint {alone / 'google_model.bin'}: no "
                                                         "google_config.json beside it")
    hf_file = tmp_path / "hf.bin"
    torch.save({"embeddings.word_embeddings.weight": torch.zeros(3, 4)}, hf_file)
    assert "a weight file alone is read only as a UER (official K-BERT) state dict" in _error(hf_file)
    with pytest.raises(ValueError, match="has 2 rows"):
        normalise_uer({"module.embedding.segment_embedding.weight": torch.zeros(2, 4)}, "x.bin")
