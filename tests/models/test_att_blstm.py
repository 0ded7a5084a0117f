import torch
import torch.nn.functional as F
from relation_samples import Scale, assert_batch_equals_singles, bilstm_dense, fit_and_predict, relation_batch

from graphmatch.models.att_blstm import AttBLSTM


def _model(vocab, **kw):
    torch.manual_seed(0)
    return AttBLSTM(len(vocab), num_classes=6, embedding_dim=8, hidden_size=6, **kw)


def test_shapes_and_attention_normalised_per_sentence():
    vocab, _, graphs, batch = relation_batch()
    model = _model(vocab).eval()
    logits, att = model(batch, return_attention=True)
    assert logits.shape == (6, 6)
    alpha = att["token"]
    assert alpha.shape == (batch["token"].num_nodes,)
    sums = torch.zeros(6).index_add(0, batch["token"].batch, alpha)
    assert torch.allclose(sums, torch.ones(6))
    assert (alpha > 0).all()


def test_batched_equals_one_by_one():
    vocab, _, graphs, batch = relation_batch()
    model = _model(vocab).eval()
    assert_batch_equals_singles(model, graphs, batch)


def test_padding_token_embedding_is_zero_and_dropout_only_in_training():
    vocab, _, _, batch = relation_batch()
    model = _model(vocab)
    assert torch.equal(model.embedding.weight[0], torch.zeros(8))
    model.train()
    assert not torch.allclose(model(batch), model(batch))
    model.eval()
    assert torch.allclose(model(batch), model(batch))


def test_learns_the_samples():
    vocab, _, graphs, _ = relation_batch()
    pred, gold = fit_and_predict(_model(vocab, emb_dropout=0.0, rnn_dropout=0.0, dropout=0.0), graphs, lr=0.05)
    assert pred == gold


def _reference(model, graph, x_fw, x_bw, c_rnn: float, c_out: float):
    """The docstring's equations for one sentence: H = fw + bw, α = softmax(wᵀ tanh H),
    r = Hα, h* = tanh r, logits = W drop(h*) + b (``drop`` = ·c)."""
    fw, bw = bilstm_dense(model.lstm.lstm, x_fw, x_bw)
    h = c_rnn * (fw + bw)
    alpha = torch.softmax(torch.tanh(h) @ model.pool.score, dim=0)
    return model.classifier(c_out * torch.tanh(alpha @ h)), alpha


def test_outputs_follow_the_formula_with_dropout_in_place():
    vocab, _, graphs, batch = relation_batch()
    model = _model(vocab)  # N(0, 1) embeddings: states far enough from 0 that tanh(r) ≠ r
    # dropouts replaced by known scalings: each must act exactly where the equations put it
    model.emb_dropout, model.rnn_dropout, model.dropout = Scale(0.7), Scale(0.8), Scale(0.5)
    logits, att = model(batch, return_attention=True)
    n = batch["token"].num_nodes
    assert (model.emb_dropout.shapes, model.rnn_dropout.shapes, model.dropout.shapes) == ([(n, 8)], [(n, 6)], [(6, 6)])
    ptr = batch["token"].ptr
    for k, g in enumerate(graphs):
        x = 0.7 * model.embedding.weight[g["token"].word_id]
        want, alpha = _reference(model, g, x, x, c_rnn=0.8, c_out=0.5)
        assert torch.allclose(logits[k], want, atol=1e-5)
        assert torch.allclose(att["token"][ptr[k]:ptr[k + 1]], alpha, atol=1e-6)


def test_lstm_dropout_on_inputs_draws_one_mask_per_direction():
    vocab, _, graphs, batch = relation_batch()
    model = _model(vocab, rnn_dropout=0.4, rnn_dropout_on="input").train()
    model.emb_dropout, model.dropout = Scale(0.7), Scale(0.5)
    torch.manual_seed(3)
    logits = model(batch)
    assert model.dropout.shapes == [(6, 6)]  # on h*, one row per sentence
    torch.manual_seed(3)  # the layer draws the forward mask, then the backward one, on [B, L, E]
    lengths = batch["token"].ptr.diff()
    shape = (len(graphs), int(lengths.max()), 8)
    m_fw, m_bw = F.dropout(torch.ones(shape), 0.4), F.dropout(torch.ones(shape), 0.4)
    assert not torch.equal(m_fw, m_bw)
    for k, g in enumerate(graphs):
        n = int(lengths[k])
        x = 0.7 * model.embedding.weight[g["token"].word_id]
        want, _ = _reference(model, g, x * m_fw[k, :n], x * m_bw[k, :n], c_rnn=1.0, c_out=0.5)
        assert torch.allclose(logits[k], want, atol=1e-5)


def test_official_initialisation():
    vocab, _, _, _ = relation_batch()
    model = _model(vocab, init="official")
    emb = model.embedding.weight
    assert emb[1:].abs().max() <= 0.25 and emb[1:].std() > 0.1 and torch.equal(emb[0], torch.zeros(8))
    b_ih, b_hh = model.lstm.lstm.bias_ih_l0, model.lstm.lstm.bias_hh_l0
    assert torch.equal(b_ih[6:12], torch.ones(6)) and b_ih[:6].abs().sum() == 0 and b_hh.abs().sum() == 0
    assert model.classifier.bias.abs().sum() == 0
    # Glorot-normal, truncated at 2σ: σ = sqrt(2 / (fan_in + fan_out)) / 0.8796
    sigma = (2 / (6 + 6)) ** 0.5 / 0.87962566
    assert model.pool.score.abs().max() <= 2 * sigma
