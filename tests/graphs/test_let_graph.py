import pytest
import torch
from torch_geometric.data import Batch

from graphmatch.graphs.let import (
    EDGE_TYPES,
    NODE_TYPES,
    LatticePairBuilder,
    parse_segmenters,
    sememe_vocabulary,
)
from graphmatch.graphs.let_options import LatticeOptions
from graphmatch.knowledge import HowNetLexicon, load_sememe_vectors
from graphmatch.text import get_segmenter

A, B = "喜欢打篮球的男生喜欢什么样的女生", "爱打篮球的男生喜欢什么样的女生"


@pytest.fixture(scope="module")
def builder(tokenizer, hownet_lexicon):
    return LatticePairBuilder(tokenizer, hownet_lexicon, LatticeOptions(segmenters="jieba"), keep_text=True)


def closure(next_pairs: list[tuple[int, int]], n: int) -> torch.Tensor:
    """Reflexive-transitive closure by repeated boolean products (the brute-force reference)."""
    adj = torch.eye(n, dtype=torch.long)
    for i, j in next_pairs:
        adj[i, j] = 1
    reach = adj.clone()
    for _ in range(n):
        reach = ((reach @ adj) > 0).long()
    return reach.bool()


def test_schema_and_tokens(builder, tokenizer):
    data = builder(A, B, 1)
    assert set(data.node_types) == set(NODE_TYPES)
    assert set(data.edge_types) == set(EDGE_TYPES)
    tok = data["token"]
    assert tok.num_nodes == len(A) + len(B) + 3
    assert tok.input_ids[0] == tokenizer.cls_id and tok.input_ids[len(A) + 1] == tokenizer.sep_id
    assert tok.input_ids[-1] == tokenizer.sep_id
    assert tok.input_ids[1:len(A) + 1].tolist() == [tokenizer.token_to_id(c) for c in A]
    assert tok.sent.tolist() == [0] * (len(A) + 2) + [1] * (len(B) + 1)
    assert tok.char_index.tolist() == [-1, *range(len(A)), -1, *range(len(B)), -1]
    assert data.y.tolist() == [1]
    for t in NODE_TYPES:  # a sentence id on every node
        assert data[t].sent.numel() == data[t].num_nodes


def test_words_contain_their_characters(builder):
    data = builder(A, B)
    ei = data["word", "contains", "token"].edge_index
    texts = data["token"].text
    for w, (word, sent, (s, e)) in enumerate(zip(data["word"].text, data["word"].sent.tolist(),
                                                 data["word"].span.tolist(), strict=True)):
        toks = ei[1, ei[0] == w].tolist()
        assert "".join(texts[t] for t in toks) == word == (A, B)[sent][s:e]
        assert all(data["token"].sent[t] == sent for t in toks)
    # jieba's words of each sentence are all in the lattice, keyed by (start, end)
    spans = {(s, tuple(sp)) for s, sp in zip(data["word"].sent.tolist(), data["word"].span.tolist(),
                                             strict=True)}
    for s, text in enumerate((A, B)):
        for w in get_segmenter("jieba").segment(text):
            assert (s, (w.start, w.end)) in spans


def test_lattice_next_and_reachable_closures(builder):
    data = builder(A, B)
    W = data["word"].num_nodes
    span, sent = data["word"].span, data["word"].sent
    nxt = data["word", "next", "word"].edge_index
    expected = {(i, j) for i in range(W) for j in range(W)
                if sent[i] == sent[j] and span[j, 0] == span[i, 1]}
    assert set(map(tuple, nxt.t().tolist())) == expected
    reach = closure(list(expected), W)
    fwd = data["word", "reach_fwd", "word"].edge_index  # j -> i for j in N+(i)
    dense_fwd = torch.zeros(W, W, dtype=torch.bool)
    dense_fwd[fwd[1], fwd[0]] = True  # [i, j]: j reachable forward from i
    assert torch.equal(dense_fwd, reach)
    assert ("word", "reach_bwd", "word") not in data.edge_types  # derived as reach_fwd reversed
    assert dense_fwd.diagonal().all()  # self-loops
    # no reachability across sentences
    assert (sent[fwd[0]] == sent[fwd[1]]).all()
    # the first word of a sentence reaches its last word
    first, last = 0, int((sent == 0).sum()) - 1
    assert reach[first, last]


def test_senses_and_sememes_follow_hownet(builder, hownet_lexicon):
    data = builder("苹果手机", "买个手机")
    words = data["word"].text
    sense_word = data["sense", "of", "word"].edge_index[1]
    sememe_sense = data["sememe", "of", "sense"].edge_index[1]
    for w, word in enumerate(words):
        senses = [k for k in range(data["sense"].num_nodes) if sense_word[k] == w]
        expected = {tuple(dict.fromkeys(s)) for s in hownet_lexicon.senses(word)}
        got = {tuple(data["sememe"].text[m] for m in (sememe_sense == k).nonzero().view(-1).tolist())
               for k in senses}
        assert got == expected
    assert "手机" in words and data["sense"].num_nodes > 0
    names = {i: n for n, i in builder.sememe_index.items()}
    assert [names[i] for i in data["sememe"].sememe_id.tolist()] == data["sememe"].text
    assert torch.equal(data["sense"].sent, data["word"].sent[sense_word])


def test_senses_off_and_no_lexicon(tokenizer, hownet_lexicon):
    for b in (LatticePairBuilder(tokenizer, hownet_lexicon, LatticeOptions(segmenters="jieba", senses=False)),
              LatticePairBuilder(tokenizer, None, LatticeOptions(segmenters="jieba"))):
        data = b(A, B)
        assert data["sense"].num_nodes == 0 and data["sememe"].num_nodes == 0
        assert data["sense", "of", "word"].edge_index.shape == (2, 0)
        assert set(data.edge_types) == set(EDGE_TYPES)
        assert not hasattr(data["word"], "text")  # keep_text off


def test_sememe_index_drops_unknown_sememes(tokenizer, hownet_lexicon):
    b = LatticePairBuilder(tokenizer, hownet_lexicon, LatticeOptions(segmenters="jieba"), sememe_index={"用具": 0})
    data = b("手机", "苹果")
    assert data["sememe"].sememe_id.unique().tolist() == [0]
    assert data["sense"].num_nodes == 1  # only 手机's sense holds 用具


def test_truncation_longest_first(tokenizer):
    b = LatticePairBuilder(tokenizer, None, LatticeOptions(segmenters="jieba", max_length=13))
    data = b("一二三四五六七八九十", "甲乙")  # budget 10: a keeps 8, b keeps 2
    assert data["token"].num_nodes == 13
    assert (data["token"].sent == 1).sum() == 3
    assert data["word"].span[data["word"].sent == 0].max() <= 8
    data = b("一二三四五六七八九十", "甲乙丙丁戊己庚辛")  # both long: 5 and 5
    assert (data["token"].char_index >= 0).sum() == 10
    assert (data["token"].sent == 1).sum() == 6
    with pytest.raises(ValueError, match="max_length"):
        LatticePairBuilder(tokenizer, None, LatticeOptions(max_length=4))


def test_bad_input(builder):
    with pytest.raises(ValueError, match="text_b is empty"):
        builder("你好", "  ")
    with pytest.raises(ValueError, match="text_a is empty"):
        builder("", "你好")
    with pytest.raises(ValueError, match="label must be 0 or 1"):
        builder("你好", "您好", 2)
    # punctuation only, Latin letters only: still a graph, words without senses
    data = builder("？？！", "hello world")
    assert data["word"].num_nodes >= 2
    assert data["token"].num_nodes == 3 + 3 + 10
    assert (data["word"].sent == 1).any()
    texts = data["word"].text
    assert "hello" in texts and "world" in texts
    assert data["word", "contains", "token"].edge_index.size(1) == 3 + 10


def test_batching_offsets_edges(builder):
    d1, d2 = builder(A, B, 1), builder("手机", "电话", 0)
    batch = Batch.from_data_list([d1, d2])
    assert batch.y.tolist() == [1, 0]
    for et in EDGE_TYPES:
        ei = batch[et].edge_index
        assert ei.size(1) == d1[et].edge_index.size(1) + d2[et].edge_index.size(1)
        src, dst = et[0], et[2]
        # every edge stays inside its own graph
        assert torch.equal(batch[src].batch[ei[0]], batch[dst].batch[ei[1]])
    assert batch["sememe"].sememe_id.numel() == d1["sememe"].num_nodes + d2["sememe"].num_nodes


def test_segmentation_options():
    assert parse_segmenters("lattice") == ("jieba", "thulac", "pkuseg")
    assert parse_segmenters("jieba, thulac") == ("jieba", "thulac")
    assert parse_segmenters(["thulac"]) == ("thulac",)
    with pytest.raises(ValueError, match="unknown segmentation"):
        parse_segmenters("ltp")


def test_thulac_lattice_is_union(tokenizer):
    b = LatticePairBuilder(tokenizer, None, LatticeOptions(segmenters=("jieba", "thulac")), keep_text=True)
    text = "南京市长江大桥欢迎您"
    data = b(text, "大桥")
    spans = {tuple(s) for s, t in zip(data["word"].span.tolist(), data["word"].sent.tolist(), strict=True)
             if t == 0}
    union = {(w.start, w.end) for name in ("jieba", "thulac") for w in get_segmenter(name).segment(text)}
    assert spans == union
    assert len(union) > len(get_segmenter("jieba").segment(text))  # thulac adds words


@pytest.mark.usefixtures("pkuseg")  # optional; make test installs it, so CI fails without it
def test_pkuseg_lattice(tokenizer):
    a, b = "我爱北京天安门", "北京欢迎你"
    data = LatticePairBuilder(tokenizer, None, LatticeOptions(segmenters="pkuseg"), keep_text=True)(a, b)
    got = set(zip(data["word"].sent.tolist(), map(tuple, data["word"].span.tolist()), data["word"].text, strict=True))
    pkuseg = get_segmenter("pkuseg")
    want = {(k, (w.start, w.end), w.word) for k, text in enumerate((a, b)) for w in pkuseg.segment(text)}
    assert got == want and {"北京", "天安门", "欢迎"} <= {w for *_, w in got}


def test_sememe_vocabulary(shared_data, hownet_lexicon):
    vecs = load_sememe_vectors(root=shared_data)
    names = sememe_vocabulary(hownet_lexicon, vecs)
    assert names[: len(vecs.names)] == vecs.names
    assert set(hownet_lexicon.sememe_names) <= set(names)
    assert len(names) == len(set(names))
    assert sememe_vocabulary(HowNetLexicon({"x": [("a",)]}), None) == ["a"]
