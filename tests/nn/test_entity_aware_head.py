import pytest
import torch

from graphmatch.nn import EntityAwareAttentionHead


def _inputs():
    torch.manual_seed(0)
    x = torch.randn(7, 8)  # sentence 0: tokens 0-3, sentence 1: tokens 4-6
    index = torch.tensor([0, 0, 0, 0, 1, 1, 1])
    positions = torch.randn(7, 6)  # [p1; p2], embedded
    entity = torch.randn(4, 8)
    return x, positions, entity, index


def test_attention_is_normalised_per_sentence_and_types_per_entity():
    head = EntityAwareAttentionHead(8, num_classes=3, position_channels=6, latent_types=5, attention_size=6,
                                    dropout=0.0).eval()
    logits, alpha, types = head(*_inputs(), return_attention=True)
    assert logits.shape == (2, 3) and alpha.shape == (7,) and types.shape == (2, 2, 5)
    assert torch.allclose(alpha[:4].sum(), torch.tensor(1.0)) and torch.allclose(alpha[4:].sum(), torch.tensor(1.0))
    assert torch.allclose(types.sum(-1), torch.ones(2, 2))
    x, positions, entity, index = _inputs()
    z = torch.stack([(alpha[:4, None] * x[:4]).sum(0), (alpha[4:, None] * x[4:]).sum(0)])
    assert torch.allclose(logits, head.classifier(z), atol=1e-6)


def test_the_query_reads_each_sentences_own_entities():
    head = EntityAwareAttentionHead(8, num_classes=3, position_channels=6, dropout=0.0).eval()
    x, positions, entity, index = _inputs()
    base = head(x, positions, entity, index)
    moved = entity.clone()
    moved[2:] += 3.0  # sentence 1's entities
    out = head(x, positions, moved, index)
    assert torch.equal(out[0], base[0]) and not torch.allclose(out[1], base[1])
    single = head(x[4:], positions[4:], entity[2:], torch.zeros(3, dtype=torch.long))
    assert torch.allclose(single[0], base[1], atol=1e-6)
    with pytest.raises(ValueError, match="expected entity states \\[2B, 8\\]"):
        head(x, positions, entity[:3], index)


def test_rows_in_any_order_and_no_bias():
    """The rows may be an edge list in any order (the BiLSTM's token → sentence edges): the same
    logits, and each row keeps its weight; ``bias=False`` drops the attention's bias."""
    head = EntityAwareAttentionHead(8, num_classes=3, position_channels=6, dropout=0.0, bias=False,
                                    init="glorot").eval()
    assert head.pool.key_lin.bias is None
    x, positions, entity, index = _inputs()
    logits, alpha, _ = head(x, positions, entity, index, return_attention=True)
    perm = torch.tensor([6, 2, 4, 0, 5, 1, 3])
    shuffled, shuffled_alpha, _ = head(x[perm], positions[perm], entity, index[perm], return_attention=True)
    assert torch.allclose(shuffled, logits, atol=1e-6) and torch.allclose(shuffled_alpha, alpha[perm], atol=1e-6)
