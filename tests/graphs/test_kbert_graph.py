"""K-BERT sentence-tree graphs: structure, soft positions, visibility, reference mode, batching.

Expected outputs are derived by hand from the paper and from docs/kbert_reference.md."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch_geometric.loader import DataLoader

from graphmatch.graphs.kbert import (
    SentenceTreeBuilder,
    TreeOptions,
    dense_inputs,
    tree_visibility,
    visibility_mask,
    visible_edge_index,
)
from graphmatch.knowledge import KnowledgeGraph
from graphmatch.text import CharTokenizer

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
CHARS = list("abcdefghijklmnopqrstuvwxyz0123456789[]") + list("我爱北京天安门")
PAD, UNK, CLS, SEP = 0, 1, 2, 3


@pytest.fixture(scope="module")
def tok() -> CharTokenizer:
    return CharTokenizer({t: i for i, t in enumerate(SPECIAL + CHARS)})


def cid(ch: str) -> int:
    return len(SPECIAL) + CHARS.index(ch)


@pytest.fixture(scope="module")
def paper_kg() -> KnowledgeGraph:
    # the paper's figure: branches (+xy, +z) on AB and (+q) on DE, written in lowercase here
    return KnowledgeGraph([("ab", "r", "xy"), ("ab", "r", "z"), ("de", "r", "q")])


def vis_of(data) -> list[list[int]]:
    visible, real = visibility_mask(data)
    assert bool(real.all())
    return visible[0].int().tolist()


def naive_visibility(data) -> np.ndarray:
    """Visibility from the definition, with plain loops (independent of the vectorised code)."""
    n = data["token"].num_nodes
    branch = data["token"].branch.tolist()
    word_of_tok = dict(zip(*data["token", "in", "word"].edge_index.tolist(), strict=True))
    ent_of_tok = dict(zip(*data["token", "in", "entity"].edge_index.tolist(), strict=True))
    word_of_ent = dict(zip(*data["entity", "on", "word"].edge_index.tolist(), strict=True))
    out = np.zeros((n, n), dtype=bool)
    for i in range(n):
        for j in range(n):
            if not branch[i] and not branch[j]:
                out[i, j] = True
            elif branch[i] and branch[j]:
                out[i, j] = ent_of_tok[i] == ent_of_tok[j]
            else:
                b, t = (i, j) if branch[i] else (j, i)
                out[i, j] = word_of_tok.get(t, -1) == word_of_ent[ent_of_tok[b]]
    return out


# ---------------------------------------------------------------- paper example
PAPER_VISIBLE = [
    # [CLS] a  b  x  y  z  c  d  e  q
    [1, 1, 1, 0, 0, 0, 1, 1, 1, 0],  # [CLS] is trunk and sees no branch
    [1, 1, 1, 1, 1, 1, 1, 1, 1, 0],  # a
    [1, 1, 1, 1, 1, 1, 1, 1, 1, 0],  # b
    [0, 1, 1, 1, 1, 0, 0, 0, 0, 0],  # x: its branch and its word
    [0, 1, 1, 1, 1, 0, 0, 0, 0, 0],  # y
    [0, 1, 1, 0, 0, 1, 0, 0, 0, 0],  # z: not its sibling branch
    [1, 1, 1, 0, 0, 0, 1, 1, 1, 0],  # c
    [1, 1, 1, 0, 0, 0, 1, 1, 1, 1],  # d
    [1, 1, 1, 0, 0, 0, 1, 1, 1, 1],  # e
    [0, 0, 0, 0, 0, 0, 0, 1, 1, 1],  # q
]


@pytest.mark.parametrize("mode", ["default", "reference"])
def test_paper_example(tok, paper_kg, mode):
    data = SentenceTreeBuilder(paper_kg, tok, TreeOptions(predicate=False, mode=mode), keep_text=True)("abcde")
    t = data["token"]
    assert t.text == ["[CLS]", "a", "b", "x", "y", "z", "c", "d", "e", "q"]
    assert t.input_ids.tolist() == [CLS] + [cid(c) for c in "abxyzcdeq"]
    assert t.pos.tolist() == [0, 1, 2, 3, 4, 3, 3, 4, 5, 6]
    assert t.seg.tolist() == [0] * 10
    assert t.branch.tolist() == [False, False, False, True, True, True, False, False, False, True]
    assert t.char_index.tolist() == [-1, 0, 1, -1, -1, -1, 2, 3, 4, -1]
    assert vis_of(data) == PAPER_VISIBLE
    assert data["word"].span.tolist() == [[0, 2], [3, 5]]
    assert data["word"].text == ["ab", "de"] and data["entity"].text == ["xy", "z", "q"]
    assert data["entity"].num_nodes == 3
    assert data["token", "in", "word"].edge_index.tolist() == [[1, 2, 7, 8], [0, 0, 1, 1]]
    assert data["token", "in", "entity"].edge_index.tolist() == [[3, 4, 5, 9], [0, 0, 1, 2]]
    assert data["entity", "on", "word"].edge_index.tolist() == [[0, 1, 2], [0, 0, 1]]
    assert "y" not in data  # no label given
    assert np.array_equal(naive_visibility(data), np.array(PAPER_VISIBLE, dtype=bool))


def test_predicate_glued_and_max_entities(tok, paper_kg):
    data = SentenceTreeBuilder(paper_kg, tok, keep_text=True)("ab")
    assert data["token"].text == ["[CLS]", "a", "b", "r", "x", "y", "r", "z"]
    assert data["token"].pos.tolist() == [0, 1, 2, 3, 4, 5, 3, 4]
    one = SentenceTreeBuilder(paper_kg, tok, TreeOptions(max_entities=1), keep_text=True)("ab")
    assert one["token"].text == ["[CLS]", "a", "b", "r", "x", "y"]  # the first value in file order
    none = SentenceTreeBuilder(paper_kg, tok, TreeOptions(max_entities=0))("ab")
    assert none["token"].num_nodes == 3 and none["word"].num_nodes == 0 and none["entity"].num_nodes == 0


@pytest.mark.parametrize("mode", ["default", "reference"])
def test_no_knowledge_is_plain_bert_input(tok, mode):
    data = SentenceTreeBuilder(None, tok, TreeOptions(mode=mode))("abcde", label=1)
    assert data["token"].input_ids.tolist() == [CLS] + [cid(c) for c in "abcde"]
    assert data["token"].pos.tolist() == list(range(6))
    assert data.y.tolist() == [1] and data.y.dtype == torch.long
    assert data["word"].num_nodes == 0 and data["token", "in", "entity"].edge_index.shape == (2, 0)
    assert all(all(row) for row in vis_of(data))


@pytest.mark.parametrize("mode", ["default", "reference"])
def test_pair(tok, paper_kg, mode):
    data = SentenceTreeBuilder(paper_kg, tok, TreeOptions(predicate=False, mode=mode), keep_text=True)("ab", "cde")
    t = data["token"]
    assert t.text == ["[CLS]", "a", "b", "x", "y", "z", "[SEP]", "c", "d", "e", "q", "[SEP]"]
    assert t.input_ids.tolist()[6] == SEP and t.input_ids.tolist()[-1] == SEP
    assert t.seg.tolist() == [0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1]
    assert t.pos.tolist() == [0, 1, 2, 3, 4, 3, 3, 4, 5, 6, 7, 7]
    assert t.char_index.tolist() == [-1, 0, 1, -1, -1, -1, -1, 0, 1, 2, -1, -1]
    assert data["word"].span.tolist() == [[0, 2], [1, 3]]  # offsets in each word's own text
    assert np.array_equal(np.array(vis_of(data), dtype=bool), naive_visibility(data))
    vis = vis_of(data)
    assert vis[1][11] == 1 and vis[11][7] == 1  # the two texts see each other
    assert vis[10] == [0] * 8 + [1, 1, 1, 0]  # q sees only de and itself


# ------------------------------------------------------------------- truncation
@pytest.mark.parametrize("mode", ["default", "reference"])
def test_truncation_mid_branch(tok, paper_kg, mode):
    builder = SentenceTreeBuilder(paper_kg, tok, TreeOptions(predicate=False, mode=mode, max_length=5), keep_text=True)
    data = builder("abcde")
    assert data["token"].text == ["[CLS]", "a", "b", "x", "y"]
    assert data["token"].pos.tolist() == [0, 1, 2, 3, 4]
    assert data["entity"].num_nodes == 1 and data["word"].num_nodes == 1  # z and q (and de) are cut
    assert data["entity"].text == ["xy"] and data["word"].span.tolist() == [[0, 2]]
    assert data["token", "in", "entity"].edge_index.tolist() == [[3, 4], [0, 0]]
    cut = SentenceTreeBuilder(paper_kg, tok, TreeOptions(predicate=False, mode=mode, max_length=4),
                              keep_text=True)("abcde")
    assert cut["token"].text == ["[CLS]", "a", "b", "x"]  # a branch cut in the middle
    assert cut["entity"].num_nodes == 1 and cut["token", "in", "entity"].edge_index.tolist() == [[3], [0]]
    assert vis_of(cut) == [[1, 1, 1, 0], [1, 1, 1, 1], [1, 1, 1, 1], [0, 1, 1, 1]]


@pytest.mark.parametrize("mode", ["default", "reference"])
def test_pair_longer_than_max_length_loses_its_final_sep(tok, mode):
    data = SentenceTreeBuilder(None, tok, TreeOptions(mode=mode, max_length=6), keep_text=True)("abc", "def")
    assert data["token"].text == ["[CLS]", "a", "b", "c", "[SEP]", "d"]  # nothing is put back
    assert data["token"].seg.tolist() == [0, 0, 0, 0, 0, 1]


@pytest.mark.parametrize("mode", ["default", "reference"])
def test_subject_longer_than_max_length(tok, mode):
    kg = KnowledgeGraph([("abcdefghij", "r", "xyz")])
    data = SentenceTreeBuilder(kg, tok, TreeOptions(mode=mode, max_length=5), keep_text=True)("abcdefghij")
    assert data["token"].text == ["[CLS]", "a", "b", "c", "d"]
    assert data["word"].num_nodes == 0 and data["entity"].num_nodes == 0
    assert data["token", "in", "word"].edge_index.shape == (2, 0)


# -------------------------------------------------------------------- bad input
@pytest.mark.parametrize("mode", ["default", "reference"])
def test_empty_text_is_an_error(tok, mode):
    builder = SentenceTreeBuilder(None, tok, TreeOptions(mode=mode))
    for args in [("",), (" \t\u3000",), ("ab", ""), ("ab", "  ")]:
        with pytest.raises(ValueError, match="empty text"):
            builder(*args)


@pytest.mark.parametrize("mode", ["default", "reference"])
def test_all_unknown_characters_become_unk(tok, mode):
    data = SentenceTreeBuilder(None, tok, TreeOptions(mode=mode))("☃€☃")
    assert data["token"].input_ids.tolist() == [CLS, UNK, UNK, UNK]
    assert data["token"].pos.tolist() == [0, 1, 2, 3]


def test_bad_options(tok):
    with pytest.raises(ValueError, match="mode"):
        SentenceTreeBuilder(None, tok, TreeOptions(mode="official"))
    with pytest.raises(ValueError, match="query"):
        SentenceTreeBuilder(None, tok, TreeOptions(query="regex"))
    with pytest.raises(ValueError, match="reference"):
        SentenceTreeBuilder(None, tok, TreeOptions(mode="reference", query="words"))
    with pytest.raises(ValueError, match="max_length"):
        SentenceTreeBuilder(None, tok, TreeOptions(max_length=0))


# ---------------------------------------------------- reference vs default mode
def test_whitespace_gives_no_token_and_no_position(tok, paper_kg):
    for mode in ("default", "reference"):
        data = SentenceTreeBuilder(paper_kg, tok, TreeOptions(predicate=False, mode=mode),
                                   keep_text=True)(" a\tb\u3000c ")
        assert data["token"].text == ["[CLS]", "a", "b", "c"]  # "a b" is not the subject "ab"
        assert data["token"].pos.tolist() == [0, 1, 2, 3]
        assert data["token"].char_index.tolist() == [-1, 1, 3, 5]
    # a subject that contains a space: the reference can never match it, the default mode can
    kg = KnowledgeGraph([("a b", "r", "q")])
    assert SentenceTreeBuilder(kg, tok, TreeOptions(mode="reference"))("a b")["entity"].num_nodes == 0
    data = SentenceTreeBuilder(kg, tok, keep_text=True)("a b")
    assert data["token"].text == ["[CLS]", "a", "b", "r", "q"] and data["word"].span.tolist() == [[0, 3]]
    assert data["token"].pos.tolist() == [0, 1, 2, 3, 4]


def test_uppercase_and_full_width(tok):
    kg = KnowledgeGraph([("ab", "r", "q")])
    ref = SentenceTreeBuilder(kg, tok, TreeOptions(mode="reference"))("ABｃ")
    assert ref["token"].input_ids.tolist() == [CLS, UNK, UNK, UNK]  # exact lookup, no K-Query match
    assert ref["entity"].num_nodes == 0
    default = SentenceTreeBuilder(kg, tok, keep_text=True)("ABｃ")
    assert default["token"].input_ids.tolist() == [CLS, cid("a"), cid("b"), cid("r"), cid("q"), cid("c")]
    assert default["token"].text[:3] == ["[CLS]", "A", "B"]  # the text as written, ids normalised
    assert default["word"].text == ["ab"]


def test_trie_quirk_forced_word_is_everything_walked(tok):
    kg = KnowledgeGraph([("ab", "r", "q"), ("abcd", "r", "z"), ("cx", "r", "y")])
    ref = SentenceTreeBuilder(kg, tok, TreeOptions(mode="reference"), keep_text=True)
    default = SentenceTreeBuilder(kg, tok, keep_text=True)
    # the walk passes "ab", goes on to "c" and stops at "x" (no child): the forced word is "abc",
    # not a subject, so neither "ab" nor "cx" gets knowledge
    assert ref("abcx")["token"].text == ["[CLS]", "a", "b", "c", "x"]
    assert default("abcx")["token"].text == ["[CLS]", "a", "b", "r", "q", "c", "x", "r", "y"]
    # when the text runs out during the walk, the forced word ends at the last complete word
    assert ref("abc")["token"].text == ["[CLS]", "a", "b", "r", "q", "c"]
    assert ref("abcd")["word"].text == ["abcd"]


def test_reference_scans_special_tags_in_the_text(tok):
    ref = SentenceTreeBuilder(None, tok, TreeOptions(mode="reference"), keep_text=True)
    data = ref("a[UNK]b", "c")
    assert data["token"].text == ["[CLS]", "a", "[UNK]", "b", "[SEP]", "c", "[SEP]"]
    assert data["token"].input_ids.tolist() == [CLS, cid("a"), UNK, cid("b"), SEP, cid("c"), SEP]
    assert data["token"].pos.tolist() == list(range(7))
    assert data["token"].char_index.tolist() == [-1, 0, 1, 6, -1, 0, -1]
    # a literal [SEP] inside text a moves the rest to segment 1, as the reference's counter does
    assert ref("a[SEP]b", "c")["token"].seg.tolist() == [0, 0, 0, 1, 1, 1, 1]
    default = SentenceTreeBuilder(None, tok, keep_text=True)("a[UNK]b")
    assert default["token"].text == ["[CLS]", "a", "[", "U", "N", "K", "]", "b"]
    assert default["token"].input_ids.tolist()[2:7] == [cid(c) for c in "[unk]"]


def test_value_characters(tok):
    kg = KnowledgeGraph([("ab", "r", "x y")])
    ref = SentenceTreeBuilder(kg, tok, TreeOptions(mode="reference"), keep_text=True)("ab")
    assert ref["token"].text == ["[CLS]", "a", "b", "r", "x", " ", "y"]  # every code point
    assert ref["token"].input_ids.tolist()[5] == UNK
    assert ref["token"].pos.tolist() == [0, 1, 2, 3, 4, 5, 6]
    default = SentenceTreeBuilder(kg, tok, keep_text=True)("ab")
    assert default["token"].text == ["[CLS]", "a", "b", "r", "x", "y"]  # whitespace dropped


# --------------------------------------------------------------------------- NER
def test_ner_tags(tok, paper_kg):
    tags = {"O": 0, "B-X": 1, "I-X": 2}
    builder = SentenceTreeBuilder(paper_kg, tok, TreeOptions(kind="ner"),
                                  labels=list(tags), keep_text=True)
    data = builder("abcde", tags=["B-X", "I-X", "O", "B-X", "I-X"])
    assert data["token"].text == ["a", "b", "x", "y", "z", "c", "d", "e", "q"]
    assert data["token"].y.tolist() == [1, 2, -100, -100, -100, 0, 1, 2, -100]
    assert data["token"].pos.tolist() == [0, 1, 2, 3, 2, 2, 3, 4, 5]
    with pytest.raises(ValueError, match="4 tags for 5 characters"):
        builder("abcde", tags=["O"] * 4)
    with pytest.raises(ValueError, match="unknown tag"):
        builder("ab", tags=["O", "B-Y"])
    with pytest.raises(ValueError, match="pair"):
        builder("ab", "cd", tags=["O", "O"])
    with pytest.raises(ValueError, match="tag_to_id"):
        SentenceTreeBuilder(paper_kg, tok)("ab", tags=["O", "O"])
    cls = SentenceTreeBuilder(paper_kg, tok, labels=list(tags))("c", tags=["B-X"])
    assert cls["token"].y.tolist() == [-100, 1]


# ------------------------------------------------------------- batching / masks
def test_batch_of_three_keeps_every_link(tok, paper_kg):
    builder = SentenceTreeBuilder(paper_kg, tok, TreeOptions(predicate=False))
    graphs = [builder("abcde", label=0), builder("xab", "de", label=1), builder("qq", label=0)]
    batch = next(iter(DataLoader(graphs, batch_size=3)))
    offsets = {t: np.cumsum([0] + [g[t].num_nodes for g in graphs]) for t in ("token", "word", "entity")}
    for rel in [("token", "in", "word"), ("token", "in", "entity"), ("entity", "on", "word")]:
        src, _, dst = rel
        expected = torch.cat([g[rel].edge_index + torch.tensor([[offsets[src][k]], [offsets[dst][k]]])
                              for k, g in enumerate(graphs)], dim=1)
        assert torch.equal(batch[rel].edge_index, expected), rel
    assert batch.y.tolist() == [0, 1, 0]
    # dense inputs: each row is the graph built alone, then padding
    dense = dense_inputs(batch)
    length = max(g["token"].num_nodes for g in graphs)
    assert dense["visible"].shape == (3, length, length)
    for k, g in enumerate(graphs):
        n = g["token"].num_nodes
        assert dense["input_ids"][k, :n].tolist() == g["token"].input_ids.tolist()
        assert dense["pos"][k, :n].tolist() == g["token"].pos.tolist()
        assert dense["seg"][k, :n].tolist() == g["token"].seg.tolist()
        assert dense["branch"][k, :n].tolist() == g["token"].branch.tolist()
        assert dense["input_ids"][k, n:].eq(0).all() and dense["pos"][k, n:].eq(0).all()
        assert dense["char_index"][k, n:].eq(-1).all()
        assert dense["token_mask"][k].tolist() == [True] * n + [False] * (length - n)
        alone, _ = visibility_mask(g)
        assert torch.equal(dense["visible"][k, :n, :n], alone[0])
        assert np.array_equal(alone[0].numpy(), naive_visibility(g))
        assert not dense["visible"][k, n:].any() and not dense["visible"][k, :, n:].any()


def test_visible_edge_index(tok, paper_kg):
    builder = SentenceTreeBuilder(paper_kg, tok, TreeOptions(predicate=False))
    one = builder("abcde")
    edges = visible_edge_index(one)
    expected = np.argwhere(np.array(PAPER_VISIBLE, dtype=bool)).T
    assert edges.tolist() == expected.tolist()
    graphs = [builder("ab"), one]
    batch = next(iter(DataLoader(graphs, batch_size=2)))
    both = visible_edge_index(batch)
    first = visible_edge_index(graphs[0])
    n0 = graphs[0]["token"].num_nodes
    assert both.tolist() == torch.cat([first, edges + n0], dim=1).tolist()


def test_dense_inputs_with_ner_labels(tok, paper_kg):
    builder = SentenceTreeBuilder(paper_kg, tok, TreeOptions(predicate=False), labels=list({"O": 0, "B": 1}))
    batch = next(iter(DataLoader([builder("ab", tags=["B", "O"]), builder("c", tags=["O"])], batch_size=2)))
    dense = dense_inputs(batch, pad_id=7)
    assert dense["labels"].tolist() == [[-100, 1, 0, -100, -100, -100], [-100, 0, -100, -100, -100, -100]]
    assert dense["input_ids"][1, 2:].eq(7).all()


def test_storage_is_linear(tok, paper_kg):
    builder = SentenceTreeBuilder(paper_kg, tok, TreeOptions(predicate=False, max_length=512))
    for n in (50, 400):
        data = builder("abcde" * (n // 5))
        length = data["token"].num_nodes
        for store in data.stores:
            for value in store.values():
                if isinstance(value, torch.Tensor):
                    assert value.dim() <= 2 and value.numel() <= 2 * length, value.shape
    assert "text" not in data["token"]  # keep_text is off


# ----------------------------------------------------------------- real data
def test_real_hownet_reference_sample(shared_data, tokenizer, hownet_kg):
    """An LCQMC test pair; the expected output was recorded from the official knowledge layer
    (HowNet, L = 256); the one queried word, 是什么, has a single value, 义原是."""
    data = SentenceTreeBuilder(hownet_kg, tokenizer, TreeOptions(mode="reference"), keep_text=True)(
        "长的清新是什么意思", "小清新的意思是什么")
    t = data["token"]
    assert t.text == ["[CLS]", "长", "的", "清", "新", "是", "什", "么", "义", "原", "是", "意", "思", "[SEP]",
                      "小", "清", "新", "的", "意", "思", "是", "什", "么", "义", "原", "是", "[SEP]"]
    assert t.input_ids.tolist() == [101, 7270, 4638, 3926, 3173, 3221, 784, 720, 721, 1333, 3221, 2692, 2590,
                                    102, 2207, 3926, 3173, 4638, 2692, 2590, 3221, 784, 720, 721, 1333, 3221,
                                    102]
    assert t.pos.tolist() == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19,
                              20, 21, 22, 20]
    assert [s + 1 for s in t.seg.tolist()] == [1] * 14 + [2] * 13  # the reference's pair mask
    trunk = [0, 1, 2, 3, 4, 5, 6, 7, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 26]
    expected = [trunk] * 5 + [sorted(trunk + [8, 9, 10])] * 3 + [[5, 6, 7, 8, 9, 10]] * 3 + [trunk] * 9 \
        + [sorted(trunk + [23, 24, 25])] * 3 + [[20, 21, 22, 23, 24, 25]] * 3 + [trunk]
    visible = visibility_mask(data)[0][0]
    assert [row.nonzero().flatten().tolist() for row in visible] == expected
    assert data["word"].text == ["是什么", "是什么"] and data["entity"].text == ["义原是", "义原是"]
    assert data["word"].span.tolist() == [[4, 7], [6, 9]]


def test_real_book_review_masks_match_definition(shared_data, tokenizer, hownet_kg):
    path = shared_data / "kbert" / "datasets" / "book_review" / "test.tsv"
    lines = path.read_text(encoding="utf-8").splitlines()[1:21]
    for mode in ("default", "reference"):
        builder = SentenceTreeBuilder(hownet_kg, tokenizer, TreeOptions(mode=mode, max_length=128))
        graphs = [builder(line.split("\t")[1], label=int(line.split("\t")[0])) for line in lines]
        assert any(g["entity"].num_nodes for g in graphs)
        batch = next(iter(DataLoader(graphs, batch_size=len(graphs))))
        visible, real = visibility_mask(batch)
        for k, g in enumerate(graphs[:5]):
            n = g["token"].num_nodes
            assert n <= 128 and int(real[k].sum()) == n
            assert np.array_equal(visible[k, :n, :n].numpy(), naive_visibility(g))
            pos, branch = g["token"].pos, g["token"].branch
            assert pos[~branch].tolist() == list(range(int((~branch).sum())))  # trunk numbered 0, 1, 2, ...
        texts = [line.split("\t")[1] for line in lines]
        for k, (a, b) in enumerate(zip(texts, texts[1:] + texts[:1], strict=True)):  # single texts and pairs
            n = graphs[k]["token"].num_nodes
            assert np.array_equal(tree_visibility(builder.build([a])), visible[k, :n, :n].numpy())
            pair = builder(a, b)
            assert np.array_equal(tree_visibility(builder.build([a], [b])), naive_visibility(pair))


def test_query_by_segmenter_words(tok):
    pytest.importorskip("jieba")
    kg = KnowledgeGraph([("爱北", "r", "x"), ("北京", "r", "y"), ("天安门", "r", "z")])
    by_trie = SentenceTreeBuilder(kg, tok, keep_text=True)("我爱北京天安门")
    assert by_trie["word"].text == ["爱北", "天安门"]  # longest match from the left
    by_words = SentenceTreeBuilder(kg, tok, TreeOptions(query="words", segmenter="jieba"),
                                   keep_text=True)("我爱北京天安门")
    assert by_words["word"].text == ["北京", "天安门"]  # jieba: 我 / 爱 / 北京 / 天安门
    assert by_words["word"].span.tolist() == [[2, 4], [4, 7]]
    assert by_words["token"].text == ["[CLS]", "我", "爱", "北", "京", "r", "y", "天", "安", "门", "r", "z"]
    assert by_words["token"].pos.tolist() == [0, 1, 2, 3, 4, 5, 6, 5, 6, 7, 8, 9]
