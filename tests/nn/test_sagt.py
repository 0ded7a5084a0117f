import pytest
import torch
from torch_geometric.data import Batch

from graphmatch.nn.sagt import SaGT, SaGTLayer, expand_to_senses

# a toy lattice over one sentence: words 0..4, 0->1->3, 0->2->4 (two paths), 4 has no sense
NEXT = [(0, 1), (1, 3), (0, 2), (2, 4)]
REACH = {0: {0, 1, 2, 3, 4}, 1: {1, 3}, 2: {2, 4}, 3: {3}, 4: {4}}  # N+(i)
SENSE_WORD = torch.tensor([0, 0, 1, 2, 3, 3, 3])


def reach_edges():
    fwd = [(j, i) for i, js in REACH.items() for j in js]  # j -> i, j in N+(i)
    bwd = [(i, j) for i, js in REACH.items() for j in js]  # i -> j, i in N-(j)
    return torch.tensor(fwd).t(), torch.tensor(bwd).t()


def test_expand_to_senses_matches_brute_force():
    fwd, _ = reach_edges()
    perm = torch.tensor([3, 0, 6, 1, 5, 2, 4])  # senses in any order
    sense_word = SENSE_WORD[perm]
    got = expand_to_senses(fwd, sense_word, 5)
    expected = {(j, s) for j, i in fwd.t().tolist() for s in range(7) if sense_word[s] == i}
    assert set(map(tuple, got.t().tolist())) == expected
    assert got.size(1) == len(expected)


@pytest.mark.parametrize("mlp", [True, False])
def test_sagt_layer_matches_its_equations(mlp):
    torch.manual_seed(0)
    layer = SaGTLayer(8, heads=2, mlp=mlp).eval()
    x_word, x_sense = torch.randn(5, 8), torch.randn(7, 8)
    fwd, bwd = reach_edges()
    e_fwd, e_bwd = expand_to_senses(fwd, SENSE_WORD, 5), expand_to_senses(bwd, SENSE_WORD, 5)
    to_word = torch.stack([torch.arange(7), SENSE_WORD])
    w, s = layer(x_word, x_sense, e_fwd, e_bwd, to_word)
    assert w.shape == (5, 8) and s.shape == (7, 8)

    m = torch.cat([layer.sense_fwd((x_word, x_sense), e_fwd), layer.sense_bwd((x_word, x_sense), e_bwd)], -1)
    s_ref = layer.sense_update(m, x_sense)
    assert torch.allclose(s, s_ref, atol=1e-6)
    q = layer.word_conv((s_ref, x_word), to_word)
    if mlp:  # the released code's MLP between the word attention and the GRU
        lin1, _, _, lin2 = layer.word_mlp
        q = lin2(torch.relu(lin1(q)))
    w_ref = layer.word_update(q, x_word)
    assert torch.allclose(w[:4], w_ref[:4], atol=1e-6)
    assert repr(layer) == f"SaGTLayer(8, heads=2, update='gru', mlp={mlp})"
    # no output bias in the MD-GATs (the released code's FastDiSA has none)
    assert all(conv.bias is None for conv in (layer.sense_fwd, layer.sense_bwd, layer.word_conv))
    assert torch.equal(w[4], x_word[4])  # word 4 has no sense: unchanged

    # sense 2 belongs to word 1: N+(1) = {1, 3}, N-(1) = {0, 1}; word 2 and 4 are out of its reach
    x2 = x_word.clone()
    x2[[2, 4]] += 1.0
    _, s2 = layer(x2, x_sense, e_fwd, e_bwd, to_word)
    assert torch.allclose(s2[2], s[2], atol=1e-6)
    assert not torch.allclose(s2[0], s[0])  # sense 0 (word 0) reaches everything


def test_sagt_residual_update_and_bad_options():
    torch.manual_seed(1)
    layer = SaGTLayer(8, update="residual").eval()
    fwd, bwd = reach_edges()
    x_word, x_sense = torch.randn(5, 8), torch.randn(7, 8)
    e_fwd, e_bwd = expand_to_senses(fwd, SENSE_WORD, 5), expand_to_senses(bwd, SENSE_WORD, 5)
    to_word = torch.stack([torch.arange(7), SENSE_WORD])
    _, s = layer(x_word, x_sense, e_fwd, e_bwd, to_word)
    m = torch.cat([layer.sense_fwd((x_word, x_sense), e_fwd), layer.sense_bwd((x_word, x_sense), e_bwd)], -1)
    assert torch.allclose(s, torch.nn.functional.layer_norm(x_sense + m, (8,)), atol=1e-5)
    with pytest.raises(ValueError, match="even"):
        SaGTLayer(7)
    with pytest.raises(ValueError, match="divisible"):
        SaGTLayer(8, heads=3)
    with pytest.raises(ValueError, match="update"):
        SaGTLayer(8, update="lstm")


def test_sagt_without_senses_keeps_words():
    sagt = SaGT(8).eval()
    fwd, _ = reach_edges()
    x_word = torch.randn(5, 8)
    w, s = sagt(x_word, torch.empty(0, 8), fwd, torch.empty(0, dtype=torch.long))
    assert torch.equal(w, x_word) and s.shape == (0, 8)


def test_sagt_batched_equals_separate(tokenizer, hownet_lexicon):
    from graphmatch.graphs.let import LatticePairBuilder
    from graphmatch.graphs.let_options import LatticeOptions

    torch.manual_seed(2)
    builder = LatticePairBuilder(tokenizer, hownet_lexicon, LatticeOptions(segmenters="jieba"))
    graphs = [builder("苹果手机怎么样", "这个手机好用吗"), builder("今天天气", "明天会下雨吗")]
    sagt = SaGT(16, num_layers=2, heads=2).eval()

    def run(data):
        W, S = data["word"].num_nodes, data["sense"].num_nodes
        gen = torch.Generator().manual_seed(W * 1000 + S)
        x_word = torch.randn(W, 16, generator=gen)
        x_sense = torch.randn(S, 16, generator=gen)
        return x_word, x_sense, sagt(x_word, x_sense, data["word", "reach_fwd", "word"].edge_index,
                                     data["sense", "of", "word"].edge_index[1])

    separate = [run(g) for g in graphs]
    batch = Batch.from_data_list(graphs)
    xw = torch.cat([s[0] for s in separate])
    xs = torch.cat([s[1] for s in separate])
    w, s = sagt(xw, xs, batch["word", "reach_fwd", "word"].edge_index, batch["sense", "of", "word"].edge_index[1])
    assert torch.allclose(w, torch.cat([r[2][0] for r in separate]), atol=1e-5)
    assert torch.allclose(s, torch.cat([r[2][1] for r in separate]), atol=1e-5)
    assert len(sagt.layers) == 2


def test_sagt_derives_the_backward_closure_from_the_forward_one():
    torch.manual_seed(2)
    sagt = SaGT(8, num_layers=1).eval()
    fwd, bwd = reach_edges()  # bwd written out independently from REACH
    x_word, x_sense = torch.randn(5, 8), torch.randn(7, 8)
    to_word = torch.stack([torch.arange(7), SENSE_WORD])
    want = sagt.layers[0](x_word, x_sense, expand_to_senses(fwd, SENSE_WORD, 5),
                          expand_to_senses(bwd, SENSE_WORD, 5), to_word)
    got = sagt(x_word, x_sense, fwd, SENSE_WORD)
    assert torch.allclose(got[0], want[0], atol=1e-6) and torch.allclose(got[1], want[1], atol=1e-6)
