"""RoBERTa / XLM-R checkpoints in every encoder: their position table starts at ``pad_token_id + 1``
(HuggingFace's XLMRobertaModel counts a sentence's positions from there), so each encoder must add
that offset to its (soft) positions to give the checkpoint's own states."""

import pytest
import torch
from transformers import BertModel, XLMRobertaModel

from graphmatch.nn.hf_bert import HFBertEncoder
from graphmatch.nn.mask_transformer import MaskTransformerConfig, MaskTransformerEncoder
from graphmatch.nn.pretrained import load_weights
from graphmatch.pretrained import position_offset, resolve_pretrained
from tests.checkpoint_folders import bert_folder, xlmr_folder

VOCAB = [f"t{i}" for i in range(40)]
IDS = torch.tensor([[0, 5, 9, 17, 23, 2], [0, 30, 31, 2, 1, 1]])  # <s> … </s>, the second padded with 1
MASK = IDS.ne(1)


@pytest.fixture(scope="module")
def xlmr(tmp_path_factory):
    folder = xlmr_folder(tmp_path_factory.mktemp("xlmr"), VOCAB)
    return folder, XLMRobertaModel.from_pretrained(folder).eval()


def _reference(model) -> torch.Tensor:
    with torch.no_grad():
        return model(input_ids=IDS, attention_mask=MASK.long()).last_hidden_state


def test_offset_of_each_convention(tmp_path):
    assert position_offset({"model_type": "xlm-roberta", "pad_token_id": 1}) == 2
    assert position_offset({"model_type": "roberta", "pad_token_id": 1}) == 2
    assert position_offset({"model_type": "bert", "pad_token_id": 0}) == 0
    assert position_offset({"model_type": "bert", "position_offset": 2}) == 2  # ours, written by to_hf
    found = resolve_pretrained(bert_folder(tmp_path / "bert", ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a"]))
    assert found.position_offset == 0 and found.bert_config().position_offset == 0


def test_mask_transformer_gives_xlmr_states(xlmr):
    folder, model = xlmr
    found = resolve_pretrained(folder)
    config = MaskTransformerConfig.from_pretrained(found)
    assert (config.position_offset, config.positions, config.type_vocab_size) == (2, 22, 1)
    enc = MaskTransformerEncoder.from_pretrained(found, log=False).eval()
    pos = torch.arange(IDS.shape[1]).expand_as(IDS)
    visible = MASK.unsqueeze(1).expand(-1, IDS.shape[1], -1)
    with torch.no_grad():
        out = enc(IDS, pos, torch.zeros_like(IDS), visible)
    ref = _reference(model)
    assert torch.allclose(out[MASK], ref[MASK], atol=1e-5)
    # without the offset the states are another model's: the test can fail
    enc.embeddings.position_offset = 0
    with torch.no_grad():
        assert not torch.allclose(enc(IDS, pos, torch.zeros_like(IDS), visible)[MASK], ref[MASK], atol=1e-3)


def test_hf_encoder_gives_xlmr_states(xlmr):
    folder, model = xlmr
    enc = HFBertEncoder.from_pretrained(resolve_pretrained(folder), log=False).eval()
    assert (enc.position_offset, enc.max_positions) == (2, 22)
    pos = torch.arange(IDS.shape[1]).expand_as(IDS)
    with torch.no_grad():
        out = enc(IDS, pos, torch.zeros_like(IDS), MASK.unsqueeze(1).expand(-1, IDS.shape[1], -1))
    assert torch.allclose(out[MASK], _reference(model)[MASK], atol=1e-5)
    with pytest.raises(ValueError, match="22 positions"):
        enc(IDS, pos + 20, torch.zeros_like(IDS), MASK.unsqueeze(1).expand(-1, IDS.shape[1], -1))


def test_masked_lm_checkpoint_loads_with_its_head_unused(tmp_path, xlmr):
    folder = xlmr_folder(tmp_path / "mlm", VOCAB, masked_lm=True)
    found = resolve_pretrained(folder)
    bert = BertModel(found.bert_config(), add_pooling_layer=False)
    report = load_weights(bert, found.read_weights(), log=False)
    assert report.ignored["lm_head.*"] and report.loaded == len(bert.state_dict())
    assert bert.config.position_offset == 2


def test_offset_survives_to_hf_and_back():
    config = MaskTransformerConfig(vocab_size=40, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                   intermediate_size=32, max_position_embeddings=24, position_offset=2)
    assert MaskTransformerConfig.from_hf(config.to_hf()).position_offset == 2
    assert "position_offset" not in MaskTransformerConfig(hidden_size=16, num_attention_heads=2).to_hf().to_dict()
    with pytest.raises(ValueError, match="position_offset"):
        MaskTransformerConfig(max_position_embeddings=4, position_offset=4)
