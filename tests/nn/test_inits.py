import pytest
import torch

from graphmatch.nn.inits import check_choice, glorot_linear_, glorot_normal_, uniform_embedding_


def test_glorot_normal_has_the_keras_std_and_truncation():
    torch.manual_seed(0)
    w = glorot_normal_(torch.empty(300, 200))
    sigma = (2 / (300 + 200)) ** 0.5
    assert abs(w.std().item() - sigma) < 0.02 * sigma  # the truncated normal is rescaled to σ
    assert w.abs().max() <= 2 * sigma / 0.87962566 and w.abs().max() > 1.9 * sigma / 0.87962566
    v = glorot_normal_(torch.empty(10_000))  # a vector: fan_in = fan_out = n
    assert abs(v.std().item() - 0.01) < 0.0005
    k = glorot_normal_(torch.empty(400, 100), fan_in=100, fan_out=1600)
    assert abs(k.std().item() - (2 / 1700) ** 0.5) < 0.03 * (2 / 1700) ** 0.5


def test_glorot_linear_and_uniform_embedding():
    lin = torch.nn.Linear(4, 3)
    glorot_linear_(lin)
    assert lin.bias.abs().sum() == 0
    emb = torch.nn.Embedding(50, 6, padding_idx=0)
    uniform_embedding_(emb, 0.25)
    assert torch.equal(emb.weight[0], torch.zeros(6)) and emb.weight.abs().max() <= 0.25
    assert emb.weight[1:].std() > 0.12  # uniform in ±0.25: std 0.144, not N(0, 1)


def test_check_choice():
    assert check_choice("a", ("a", "b"), "model.x") == "a"
    with pytest.raises(ValueError, match=r"^model.x must be one of a, b, got 'c'$"):
        check_choice("c", ("a", "b"), "model.x")
