import pytest
import torch

from graphmatch.nn import EntityStartHead


def test_concatenates_cls_and_both_entity_states():
    torch.manual_seed(0)
    head = EntityStartHead(4, num_classes=3, dropout=0.0).eval()
    cls, entity = torch.randn(2, 4), torch.randn(4, 4)
    out = head(cls, entity)
    assert out.shape == (2, 3)
    r = torch.cat([cls, entity[0::2], entity[1::2]], dim=-1)  # [h_CLS; h_e1; h_e2] per sentence
    assert torch.allclose(out, head.classifier(r))
    # each sentence only depends on its own rows: changing sentence 1's e2 leaves sentence 0 alone
    entity2 = entity.clone()
    entity2[3] += 1.0
    out2 = head(cls, entity2)
    assert torch.equal(out2[0], out[0]) and not torch.allclose(out2[1], out[1])


def test_rbert_projections_and_shape_errors():
    head = EntityStartHead(4, num_classes=5, hidden_channels=6, dropout=0.0)
    assert head(torch.randn(3, 4), torch.randn(6, 4)).shape == (3, 5)
    assert len(head.project) == 3 and head.classifier.in_features == 18
    assert "hidden_channels=6" in repr(head)
    with pytest.raises(ValueError, match="expected cls \\[B, 4\\] and entity \\[2B, 4\\]"):
        head(torch.randn(3, 4), torch.randn(5, 4))
    out = head(torch.randn(3, 4, requires_grad=True), torch.randn(6, 4))
    out.sum().backward()
    assert all(p.grad is not None for p in head.parameters())
