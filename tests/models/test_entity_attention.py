import pytest
import torch
import torch.nn.functional as F
from relation_samples import (
    TEXTS,
    Scale,
    assert_batch_equals_singles,
    bilstm_dense,
    fit_and_predict,
    multihead_dense,
    relation_batch,
)
from torch_geometric.loader import DataLoader

from graphmatch.graphs.relation import RelationGraphBuilder
from graphmatch.graphs.relation_options import RelationOptions
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


def _reference(model, g, relu: bool, entity_state: str, anchor: str, d: int):
    """The docstring's equations for one sentence, with dropouts as scalings by 0.7 (embeddings),
    0.8 (LSTM outputs) and 0.5 (z); positions recomputed here from the entity spans."""
    x = 0.7 * model.embedding.weight[g["token"].word_id]
    att = multihead_dense(model.self_attn, x)
    x = F.layer_norm(x + (torch.relu(att) if relu else att), (x.size(-1),), model.norm.weight, model.norm.bias,
                     model.norm.eps)
    fw, bw = bilstm_dense(model.lstm.lstm, x)
    h = 0.8 * torch.cat([fw, bw], dim=-1)
    tok, ent = g["token", "in", "entity"].edge_index
    n = h.size(0)
    states, types, pos = [], [], []
    for k in range(2):
        span = tok[ent == k]
        s, e = int(span.min()), int(span.max())
        state = h[span].mean(0) if entity_state == "mean" else h[e]
        a = torch.softmax(model.head.typing.types @ state, dim=0)
        states.append(state)
        types.append(a @ model.head.typing.types)
        i = torch.arange(n)
        rel = i - e if anchor == "last" else torch.where(i < s, i - s, torch.where(i > e, i - e, 0))
        pos.append(model.position.weight[rel.clamp(-d, d) + d])
    query = torch.cat([states[0], types[0], states[1], types[1]])
    u = torch.tanh(model.head.pool.key_lin(torch.cat([h, *pos], dim=-1)) + model.head.pool.query_lin(query))
    alpha = torch.softmax(u @ model.head.pool.score, dim=0)
    return model.head.classifier(0.5 * (alpha @ h)), alpha


@pytest.mark.parametrize(
    "relu, entity_state, anchor, init",
    [(False, "mean", "span", "pytorch"), (True, "last", "last", "official"), (True, "mean", "last", "pytorch")],
)
def test_outputs_follow_the_formula(relu, entity_state, anchor, init):
    vocab, _, _, _ = relation_batch()
    builder = RelationGraphBuilder(vocab, RelationOptions(max_distance=3, position_anchor=anchor))
    graphs = [builder(t, label=i) for i, t in enumerate(TEXTS)]
    batch = next(iter(DataLoader(graphs, batch_size=len(graphs))))
    model = _model(vocab, builder, self_attention_relu=relu, entity_state=entity_state, init=init).eval()
    model.emb_dropout, model.rnn_dropout, model.head.dropout = Scale(0.7), Scale(0.8), Scale(0.5)
    logits, att = model(batch, return_attention=True)
    n = batch["token"].num_nodes  # embeddings and LSTM states are dropped per token, z per sentence
    shapes = (model.emb_dropout.shapes, model.rnn_dropout.shapes, model.head.dropout.shapes)
    assert shapes == ([(n, 8)], [(n, 12)], [(6, 12)])
    ptr = batch["token"].ptr
    for k, g in enumerate(graphs):
        want, alpha = _reference(model, g, relu, entity_state, anchor, d=3)
        assert torch.allclose(logits[k], want, atol=1e-5)
        assert torch.allclose(att["token"][ptr[k]:ptr[k + 1]], alpha, atol=1e-6)


def test_official_options_change_the_output():
    vocab, builder, _, batch = relation_batch()
    base = _model(vocab, builder).eval()(batch)
    for option in ({"self_attention_relu": True}, {"entity_state": "last"}):
        assert not torch.allclose(_model(vocab, builder, **option).eval()(batch), base)


def test_official_initialisation_and_option_errors():
    vocab, builder, _, _ = relation_batch()
    model = _model(vocab, builder, init="official")
    assert model.embedding.weight[1:].abs().max() <= 0.25 and torch.equal(model.embedding.weight[0], torch.zeros(8))
    assert model.self_attn.in_proj_bias.abs().sum() == 0 and model.self_attn.out_proj.bias.abs().sum() == 0
    assert model.head.pool.key_lin.bias is None  # u = tanh(W_H[...] + W_E[...]), no bias, as the paper and its code
    assert torch.equal(model.lstm.lstm.bias_ih_l0_reverse[6:12], torch.ones(6))
    sigma = (2 / (3 + 12)) ** 0.5 / 0.87962566  # the [K, 2H] type vectors
    assert model.head.typing.types.abs().max() <= 2 * sigma
