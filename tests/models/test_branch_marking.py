"""Branch marks (model.branch_embedding, model.branch_bias): zero at first, bit-equal to K-BERT then,
trained by gradients, and loaded as zeros from checkpoints saved without them."""

import pytest
import torch
from test_kbert import CONFIG, VOCAB, builder, graphs  # noqa: F401 - fixtures
from torch_geometric.data import Batch

from graphmatch.graphs.kbert import SentenceTreeBuilder, TreeOptions, dense_inputs
from graphmatch.knowledge import KnowledgeGraph
from graphmatch.models.kbert import KBert
from graphmatch.models.renamed_keys import upgrade_state_dict
from graphmatch.nn import HFBertEncoder, MaskTransformerEncoder
from graphmatch.nn.branch_marking import BranchMarking, cross_pairs
from graphmatch.text import CharTokenizer

MARKS = [dict(branch_embedding=True), dict(branch_bias=True), dict(branch_embedding=True, branch_bias=True)]


def _encoder(backend: str):
    torch.manual_seed(0)
    if backend == "ours":
        return MaskTransformerEncoder(CONFIG)
    return HFBertEncoder.from_config(CONFIG, attn_implementation=backend.removeprefix("hf_"))


def _pair(backend: str, tagging: bool = False, **marks) -> tuple[KBert, KBert]:
    """K-BERT without marks and the same weights with them (zero)."""
    plain = KBert(_encoder(backend), num_labels=3, tagging=tagging).eval()
    marked = KBert(_encoder(backend), num_labels=3, tagging=tagging, **marks).eval()
    missing, unexpected = marked.load_state_dict(plain.state_dict(), strict=False)
    assert not unexpected and all(k.startswith("branch_marking.") for k in missing)
    return plain, marked


@pytest.fixture(scope="module")
def pairs():
    """Sentence pairs (text b after [SEP]) with branches in both texts."""
    kg = KnowledgeGraph([("北京", "义原", "首都"), ("苹果", "义原", "水果")])
    tok = CharTokenizer({t: i for i, t in enumerate(VOCAB)})
    b = SentenceTreeBuilder(kg, tok, TreeOptions(max_length=32))
    return Batch.from_data_list([b("我爱北京", "苹果很好"), b("天安门", "北京")])


@pytest.fixture(scope="module")
def ner():
    kg = KnowledgeGraph([("北京", "义原", "首都")])
    tok = CharTokenizer({t: i for i, t in enumerate(VOCAB)})
    b = SentenceTreeBuilder(kg, tok, TreeOptions(max_length=32), labels=list({"O": 0, "B-LOC": 1, "I-LOC": 2}))
    return Batch.from_data_list([b("我爱北京", tags=["O", "O", "B-LOC", "I-LOC"]),
                                 b("北京很好", tags=["B-LOC", "I-LOC", "O", "O"])])


def test_cross_pairs_join_trunk_and_branch_where_visible(graphs):  # noqa: F811
    d = dense_inputs(Batch.from_data_list(graphs))
    c = cross_pairs(d["branch"], d["visible"])
    b = d["branch"]
    assert c.any()
    assert torch.equal(c, d["visible"] & (b.unsqueeze(2) ^ b.unsqueeze(1)))
    assert not (c & ~d["visible"]).any() and torch.equal(c, c.transpose(1, 2))


@pytest.mark.parametrize("backend", ["ours", "hf_sdpa", "hf_eager"])
@pytest.mark.parametrize("marks", MARKS)
def test_zero_marks_are_bit_equal_for_every_kind(graphs, pairs, ner, backend, marks):  # noqa: F811
    for batch, tagging in ((Batch.from_data_list(graphs), False), (pairs, False), (ner, True)):
        plain, marked = _pair(backend, tagging=tagging, **marks)
        with torch.no_grad():
            assert torch.equal(plain(batch), marked(batch))
        if "branch_bias" not in marks:  # the embedding alone: bit-equal with gradients too
            assert torch.equal(plain.train()(batch), marked.train()(batch))


@pytest.mark.parametrize("backend", ["ours", "hf_sdpa", "hf_eager"])
def test_gradients_reach_both_marks_and_move_the_output(graphs, backend):  # noqa: F811
    batch = Batch.from_data_list(graphs)
    plain, marked = _pair(backend, tagging=True, branch_embedding=True, branch_bias=True)  # every token's output
    marked.train()
    marked(batch).logsumexp(-1).sum().backward()
    m = marked.branch_marking
    assert m.embedding.grad.abs().sum() > 0 and m.bias.grad.abs().sum() > 0
    assert m.bias.grad.shape == (CONFIG.num_hidden_layers, CONFIG.num_attention_heads)
    with torch.no_grad():
        m.embedding.fill_(0.5)
        m.bias.fill_(2.0)
        assert not torch.allclose(plain.eval()(batch), marked.eval()(batch), atol=1e-4)


def test_the_bias_acts_on_trunk_branch_pairs_only(graphs):  # noqa: F811
    """A bias of +inf-like size puts each trunk token of a matched word entirely on its branch tokens."""
    batch = Batch.from_data_list(graphs)
    _, marked = _pair("ours", branch_bias=True)
    d = dense_inputs(batch)
    with torch.no_grad():
        marked.branch_marking.bias.fill_(50.0)
        _, weights = marked(batch, return_attention_weights=True)
    c = cross_pairs(d["branch"], d["visible"])
    rows = c.any(-1)  # tokens with a partner across trunk / branch
    mass = (weights[0] * c.unsqueeze(1)).sum(-1)  # [B, H, L]
    assert torch.allclose(mass[rows.unsqueeze(1).expand_as(mass)], torch.tensor(1.0), atol=1e-4)
    with torch.no_grad():
        marked.branch_marking.bias.zero_()
        _, zero = marked(batch, return_attention_weights=True)
    unaffected = d["token_mask"] & ~rows  # tokens that see no partner across: the bias changes nothing there
    assert torch.allclose(weights[0][unaffected.unsqueeze(1).expand(-1, 4, -1)],
                          zero[0][unaffected.unsqueeze(1).expand(-1, 4, -1)], atol=1e-6)


def test_ours_and_hf_agree_with_marks(tmp_path, graphs):  # noqa: F811
    batch = Batch.from_data_list(graphs)
    _, ours = _pair("ours", branch_embedding=True, branch_bias=True)
    with torch.no_grad():
        ours.branch_marking.embedding.normal_()
        ours.branch_marking.bias.normal_()
    ours.encoder.save_pretrained_hf(tmp_path)
    hf = KBert(HFBertEncoder.from_pretrained(tmp_path, attn_implementation="eager", log=False), 3,
               branch_embedding=True, branch_bias=True).eval()
    for name in ("classifier", "output_layer", "branch_marking"):
        getattr(hf, name).load_state_dict(getattr(ours, name).state_dict())
    with torch.no_grad():
        assert torch.allclose(ours(batch), hf(batch), atol=1e-5)


def test_checkpoints_without_marks_load_them_as_zeros(graphs):  # noqa: F811
    plain, _ = _pair("ours")
    marked = KBert(_encoder("ours"), 3, branch_embedding=True, branch_bias=True)
    with torch.no_grad():
        marked.branch_marking.embedding.fill_(1.0)
        marked.branch_marking.bias.fill_(1.0)
    state = plain.state_dict()
    upgraded = upgrade_state_dict(marked, state)
    assert torch.equal(upgraded["branch_marking.bias"], torch.zeros(2, 4)) and "branch_marking.bias" not in state
    marked.load_state_dict(state)  # strict: the missing marks are filled with zeros, nothing else is
    assert not marked.branch_marking.embedding.any() and not marked.branch_marking.bias.any()
    del state["encoder.pooler.bias"]
    with pytest.raises(RuntimeError, match="encoder.pooler.bias"):
        marked.load_state_dict(state)
    with pytest.raises(ValueError, match="embedding, the bias or both"):
        BranchMarking(8, 2, 2, embedding=False, bias=False)
