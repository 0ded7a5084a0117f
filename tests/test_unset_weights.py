"""Models built for a state dict draw no initial weights (``graphmatch.utils.unset_weights``)."""

from __future__ import annotations

import pytest
import torch
from transformers import BertConfig
from transformers.models.bert.modeling_bert import BertPreTrainedModel

from graphmatch.nn.bilstm import PackedBiLSTM
from graphmatch.nn.hf_bert import HFBertEncoder
from graphmatch.nn.mask_transformer import MaskTransformerConfig, MaskTransformerEncoder
from graphmatch.utils.unset_weights import INIT_FUNCTIONS, bert_model, weights_loaded_later

TINY_BERT = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                       intermediate_size=32, max_position_embeddings=32)
BUILDERS = {
    "linear and embedding": lambda: torch.nn.Sequential(torch.nn.Embedding(50, 8), torch.nn.Linear(8, 8)),
    "bilstm": lambda: PackedBiLSTM(8, 8),
    "mask transformer": lambda: MaskTransformerEncoder(MaskTransformerConfig(
        vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
        max_position_embeddings=32)),
    "transformers' BertModel": lambda: bert_model(TINY_BERT, add_pooling_layer=False),
    "HF BERT encoder": lambda: HFBertEncoder.from_config(TINY_BERT),
}


@pytest.mark.parametrize("build", BUILDERS.values(), ids=BUILDERS.keys())
def test_nothing_is_drawn_inside_and_everything_outside(build):
    """Inside, the random generator does not move (no weight was drawn); outside, the same model
    draws its weights as before, and the functions are the originals again."""
    originals = {name: getattr(torch.nn.init, name) for name in INIT_FUNCTIONS}
    init_weights = BertPreTrainedModel.__dict__["_init_weights"]
    torch.manual_seed(0)
    before = torch.get_rng_state()
    with weights_loaded_later():
        inside = build()
    assert torch.equal(torch.get_rng_state(), before)
    assert {name: getattr(torch.nn.init, name) for name in INIT_FUNCTIONS} == originals
    assert BertPreTrainedModel.__dict__["_init_weights"] is init_weights
    outside = build()
    assert not torch.equal(torch.get_rng_state(), before)
    torch.manual_seed(0)
    again = build()
    assert all(torch.equal(a, b) for a, b in zip(outside.state_dict().values(), again.state_dict().values(),
                                                 strict=True))
    assert inside.state_dict().keys() == outside.state_dict().keys()
    assert all(a.shape == b.shape for a, b in zip(inside.state_dict().values(), outside.state_dict().values(),
                                                  strict=True))


def test_buffers_made_without_init_are_kept():
    """``position_ids`` (a buffer not in the state dict) is made as usual."""
    with weights_loaded_later():
        bert = bert_model(TINY_BERT, add_pooling_layer=False)
    assert torch.equal(bert.embeddings.position_ids, torch.arange(32).unsqueeze(0))


def test_the_functions_come_back_after_an_error():
    with pytest.raises(RuntimeError), weights_loaded_later():
        raise RuntimeError("building failed")
    torch.manual_seed(0)
    before = torch.get_rng_state()
    torch.nn.Linear(4, 4)
    assert not torch.equal(torch.get_rng_state(), before)
