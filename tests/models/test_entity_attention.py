import pytest
import torch
from relation_samples import assert_batch_equals_singles, fit_and_predict, relation_batch

from graphmatch.models.entity_attention import EntityAttentionBiLSTM


def _model(vocab, builder, **kw):
    torch.manual_seed(0)
    return EntityAttentionBiLSTM(
        len(vocab), num_classes=6, num_positions=builder.num_positions, embedding_dim=8, position_dim=4,
        heads=2, hidden_size=6, latent_types=3, attention_size=5, **kw,
    )


def test_shapes_and_normalised_weights():
    vocab, builder, _, batch = relation_batch()
    model = _model(vocab, builder).eval()
    logits, att = model(batch, return_attention=True)
    assert logits.shape == (6, 6)
    sums = torch.zeros(6).index_add(0, batch["token"].batch, att["token"])
    assert torch.allclose(sums, torch.ones(6))
    assert att["types"].shape == (6, 2, 3)
    assert torch.allclose(att["types"].sum(-1), torch.ones(6, 2))


def test_batched_equals_one_by_one():
    vocab, builder, graphs, batch = relation_batch()
    model = _model(vocab, builder).eval()
    assert_batch_equals_singles(model, graphs, batch, keys=("token", "types"))


def test_entities_and_positions_matter():
    vocab, builder, graphs, _ = relation_batch()
    model = _model(vocab, builder).eval()
    g = graphs[1].clone()
    base, base_att = model(g, return_attention=True)
    moved = g.clone()
    moved["token", "in", "entity"].edge_index = torch.tensor([[0, 3], [0, 1]])
    out, att = model(moved, return_attention=True)
    assert not torch.allclose(out, base) and not torch.allclose(att["types"], base_att["types"])
    shifted = g.clone()
    shifted["token"].pos1 = torch.flip(shifted["token"].pos1, [0])
    assert not torch.allclose(model(shifted), base)


def test_gradients_reach_every_parameter():
    vocab, builder, _, batch = relation_batch()
    model = _model(vocab, builder)
    torch.nn.functional.cross_entropy(model(batch), batch.y).backward()
    missing = [n for n, p in model.named_parameters() if p.grad is None or p.grad.abs().sum() == 0]
    assert missing == []


def test_learns_the_samples():
    vocab, builder, graphs, _ = relation_batch()
    pred, gold = fit_and_predict(_model(vocab, builder, emb_dropout=0.0, rnn_dropout=0.0, dropout=0.0), graphs, lr=0.03)
    assert pred == gold


def test_bad_input():
    vocab, builder, graphs, _ = relation_batch()
    with pytest.raises(ValueError, match="divisible by heads"):
        EntityAttentionBiLSTM(10, 3, 11, embedding_dim=6, heads=4)
    g = graphs[0].clone()
    g["entity"].num_nodes = 3
    with pytest.raises(ValueError, match="expected 2 entity nodes per sentence"):
        _model(vocab, builder)(g)
