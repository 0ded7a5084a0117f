import torch
import torch.nn.functional as F

from graphmatch.nn import MultiPerspectiveCosine


def test_multi_perspective_cosine():
    torch.manual_seed(0)
    mp = MultiPerspectiveCosine(6, 3)
    a, b = torch.randn(5, 6), torch.randn(5, 6)
    want = torch.stack([F.cosine_similarity(a * w, b * w, dim=-1) for w in mp.weight], dim=-1)
    assert torch.allclose(mp(a, b), want, atol=1e-5)
    assert torch.allclose(mp(a, a), torch.ones(5, 3), atol=1e-5)
    assert mp(a, b).shape == (5, 3) and mp(a, b).abs().max() <= 1 + 1e-5
