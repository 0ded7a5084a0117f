import math

import pytest
import torch

from graphmatch.nn.cosine_match import CosineMatchHead


def test_logit_is_the_scaled_cosine_above_the_threshold():
    head = CosineMatchHead(init_scale=20.0)
    with torch.no_grad():
        head.threshold.fill_(0.5)
    u, v = torch.randn(4, 8), torch.randn(4, 8)
    want = 20.0 * (torch.nn.functional.cosine_similarity(u, v, dim=-1) - 0.5)
    assert torch.allclose(head(u, v), want, atol=1e-5)
    assert head.log_scale.item() == pytest.approx(math.log(20.0))
    with pytest.raises(ValueError, match="positive"):
        CosineMatchHead(init_scale=0.0)


def test_threshold_fitted_between_the_two_classes():
    head = CosineMatchHead()
    acc = head.fit_threshold(torch.tensor([0.9, 0.7, 0.8, 0.6]), torch.tensor([True, False, True, False]))
    assert acc == 1.0 and head.threshold.item() == pytest.approx(0.75)
    # one mismatch above the best cut: 4 of 5 right, t between 0.8 and 0.7
    acc = head.fit_threshold(torch.tensor([0.95, 0.9, 0.8, 0.7, 0.6]),
                             torch.tensor([False, True, True, False, False]))
    assert acc == pytest.approx(0.8) and head.threshold.item() == pytest.approx(0.75)


def test_one_class_puts_the_threshold_outside_every_cosine():
    head = CosineMatchHead()
    cos = torch.tensor([0.9, 0.7])
    assert head.fit_threshold(cos, torch.tensor([True, True])) == 1.0
    assert head.threshold.item() < 0.7
    assert head.fit_threshold(cos, torch.tensor([False, False])) == 1.0
    assert head.threshold.item() > 0.9
    with pytest.raises(ValueError, match="as many match labels"):
        head.fit_threshold(cos, torch.tensor([True]))


def test_weighted_fit_counts_each_class_by_its_weight():
    """Three matches and one mismatch: unweighted the best cut calls everything a match (3 of 4);
    with the mismatch weighted 3 (balanced), the cut above it wins."""
    head = CosineMatchHead()
    cos, match = torch.tensor([0.9, 0.8, 0.7, 0.6]), torch.tensor([True, False, True, True])
    assert head.fit_threshold(cos, match) == pytest.approx(0.75) and head.threshold.item() < 0.6
    acc = head.fit_threshold(cos, match, weight=(3.0, 1.0))  # 0.9 a match, the rest not: 1 + 3 of 3 + 3
    assert acc == pytest.approx(4 / 6) and head.threshold.item() == pytest.approx(0.85)
