"""Every paper model takes one config object beside it (``Model(config)``, or ``Model(encoder, config)``
for those over a pretrained encoder), as HF's ``BertLayer(config)`` does; the loose arguments of old
calls make the same model (the same parameter names and values) with one DeprecationWarning."""

from __future__ import annotations

import warnings

import pytest
import torch

from graphmatch.models import (
    AttBLSTM,
    AttBLSTMConfig,
    EntityAttentionBiLSTM,
    EntityAttentionConfig,
    KBert,
    KBertConfig,
    RelationTransformer,
    RelationTransformerConfig,
)
from graphmatch.models.kbert import KBertPairMatch, KBertSequence, KBertTagger
from graphmatch.nn import MaskTransformerConfig, MaskTransformerEncoder


def _kbert_encoder():
    return MaskTransformerEncoder(MaskTransformerConfig(vocab_size=20, hidden_size=16, num_hidden_layers=1,
                                                        num_attention_heads=2, intermediate_size=24,
                                                        max_position_embeddings=32))


def _bert_encoder():
    from transformers import BertConfig, BertModel

    return BertModel(BertConfig(vocab_size=20, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                intermediate_size=24, max_position_embeddings=32), add_pooling_layer=False)


#: name -> (the model made from a config, the same made by an old call)
CASES = {
    "AttBLSTM": (lambda: AttBLSTM(AttBLSTMConfig(30, 4, embedding_dim=8, hidden_size=6, init="official")),
                 lambda: AttBLSTM(30, 4, embedding_dim=8, hidden_size=6, init="official")),
    "EntityAttentionBiLSTM": (
        lambda: EntityAttentionBiLSTM(EntityAttentionConfig(30, 4, 11, embedding_dim=8, heads=2, hidden_size=6,
                                                            position_dim=4, entity_state="last")),
        lambda: EntityAttentionBiLSTM(num_words=30, num_classes=4, num_positions=11, embedding_dim=8, heads=2,
                                      hidden_size=6, position_dim=4, entity_state="last")),
    "RelationTransformer": (
        lambda: RelationTransformer(_bert_encoder(), RelationTransformerConfig(3, head="entity_attention",
                                                                               num_positions=11, position_dim=4,
                                                                               branch_bias=True)),
        lambda: RelationTransformer(_bert_encoder(), 3, head="entity_attention", num_positions=11, position_dim=4,
                                    branch_bias=True)),
    "KBert": (lambda: KBert(_kbert_encoder(), KBertConfig(3, tagging=True, head="bert_pooler", branch_embedding=True)),
              lambda: KBert(_kbert_encoder(), 3, True, head="bert_pooler", branch_embedding=True)),
}


def _made(make):
    torch.manual_seed(0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = make()
    return model, [w for w in caught if issubclass(w.category, DeprecationWarning)]


@pytest.mark.parametrize("name", CASES)
def test_a_config_and_an_old_call_make_the_same_model(name):
    new, old = (_made(make) for make in CASES[name])
    (model, none), (legacy, warned) = new, old
    assert none == [] and len(warned) == 1
    config = type(model.config).__name__
    assert str(warned[0].message).startswith(f"{name}() with loose settings is deprecated: pass one {config}")
    assert warned[0].filename == __file__  # it points at the old call
    assert model.config == legacy.config and type(model) is type(legacy)
    state, old_state = model.state_dict(), legacy.state_dict()
    assert list(state) == list(old_state)  # parameter names (checkpoints) unchanged
    assert all(torch.equal(state[k], old_state[k]) for k in state)


def test_the_config_names_the_kbert_head():
    encoder = _kbert_encoder()
    assert type(KBert(encoder, KBertConfig(2))) is KBertSequence
    assert type(KBert(encoder, KBertConfig(5, tagging=True))) is KBertTagger
    assert type(KBert(encoder, KBertConfig(2, pair_encoding="separate", sep_id=3))) is KBertPairMatch
    assert KBertConfig(2, pair_encoding="separate").model_class is KBertPairMatch


def test_a_config_with_loose_settings_or_a_bad_one_is_refused():
    with pytest.raises(TypeError, match=r"AttBLSTM\(\) takes its settings in one AttBLSTMConfig, not also as "
                                        r"embedding_dim="):
        AttBLSTM(AttBLSTMConfig(30, 4), embedding_dim=8)
    with pytest.raises(TypeError, match="embedding_dimm"):
        AttBLSTM(30, 4, embedding_dimm=8)
    with pytest.raises(ValueError, match="divisible by heads"):
        EntityAttentionBiLSTM(EntityAttentionConfig(30, 4, 11, embedding_dim=6, heads=4))
    with pytest.raises(ValueError, match="num_labels must be positive"):
        KBert(_kbert_encoder(), KBertConfig(0))
