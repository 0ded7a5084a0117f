import torch
from relation_samples import assert_batch_equals_singles, fit_and_predict, relation_batch

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
