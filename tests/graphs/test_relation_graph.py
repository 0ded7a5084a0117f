
import pytest
import torch
from torch_geometric.loader import DataLoader

from graphmatch.graphs.relation import (
    RelationGraphBuilder,
    UnrepresentableExample,
    parse_relation,
    relative_positions,
    split_input_line,
    splitter,
    tokenize,
    tokenize_chars,
    tokenize_marked,
    with_markers,
)
from graphmatch.graphs.relation_markup import MarkedSentence, locate_entities, parse_markup
from graphmatch.graphs.relation_options import RelationOptions
from graphmatch.text.vocab import Vocab
from graphmatch.utils.ragged import batch_vector

SENT = "The <e1>Big Dog</e1> bit the <e2>man</e2>, sadly."


def test_tokenize_lowercases_and_splits_punctuation():
    assert tokenize("Peru's largest (3.5) don't-stop") == [
        "peru", "'", "s", "largest", "(", "3", ".", "5", ")", "don", "'", "t", "-", "stop",
    ]
    assert tokenize("  ") == []


def test_parse_spans_and_text():
    s = parse_relation(SENT)
    assert s.tokens == ["the", "big", "dog", "bit", "the", "man", ",", "sadly", "."]
    assert s.e1 == (1, 2) and s.e2 == (5, 5)
    assert s.entity_text(1) == "big dog" and s.entity_text(2) == "man"
    assert s.text == "The Big Dog bit the man, sadly."


@pytest.mark.parametrize(
    "text, message",
    [
        ("<e1>a</e1> b c", "missing entity marker <e2>"),
        ("<e1>a</e1> b <e2>c", "missing entity marker </e2>"),
        ("<e1>a</e1><e1>x</e1> <e2>c</e2>", "<e1> appears 2 times"),
        ("<e2>a</e2> b <e1>c</e1>", "wrong order"),
        ("</e1>a<e1> <e2>b</e2>", "</e1> comes before <e1>"),
        ("<e1> </e1> <e2>b</e2>", "entity e1 is empty"),
    ],
)
def test_parse_errors_name_the_place(text, message):
    with pytest.raises(ValueError, match="^TRAIN.TXT:7: ") as err:
        parse_relation(text, where="TRAIN.TXT:7")
    assert message in str(err.value)


def test_relative_positions_clip_and_shift():
    # span [3, 4], D = 2: rel = -3 -2 -1 0 0 1 2 3 → clipped -2 -2 -1 0 0 1 2 2 → +2
    assert relative_positions(8, (3, 4), 2) == [0, 0, 1, 2, 2, 3, 4, 4]
    # anchored at the entity's last token (the entity-aware paper's code): rel = i - 4
    assert relative_positions(8, (3, 4), 2, anchor="last") == [0, 0, 0, 1, 2, 3, 4, 4]


def test_builder_position_anchor():
    vocab = _vocab(SENT)
    data = RelationGraphBuilder(vocab, RelationOptions(max_distance=3, markers=False, position_anchor="last"))(SENT)
    assert (data["token"].pos1 - 3).tolist() == [-2, -1, 0, 1, 2, 3, 3, 3, 3]  # e1 = "big dog", last token 2
    assert (data["token"].pos2 - 3).tolist() == [-3, -3, -3, -2, -1, 0, 1, 2, 3]
    with pytest.raises(ValueError, match="position_anchor must be one of span, last"):
        RelationGraphBuilder(vocab, RelationOptions(position_anchor="first"))


def _vocab(*texts):
    return Vocab.build(parse_relation(t).tokens for t in texts)


def test_builder_graph():
    vocab = _vocab(SENT)
    data = RelationGraphBuilder(vocab, RelationOptions(max_distance=3, markers=False), keep_text=True)(SENT, label=5)
    tok = data["token"]
    assert tok.num_nodes == 9
    assert tok.word_id.tolist() == vocab.lookup(["the", "big", "dog", "bit", "the", "man", ",", "sadly", "."])
    assert (tok.pos1 - 3).tolist() == [-1, 0, 0, 1, 2, 3, 3, 3, 3]
    assert (tok.pos2 - 3).tolist() == [-3, -3, -3, -2, -1, 0, 1, 2, 3]
    assert data["entity"].num_nodes == 2 and data["entity"].kind.tolist() == [0, 1]
    assert data["sentence"].num_nodes == 1 and data["sentence"].num_tokens.tolist() == [9]
    assert data["token", "in", "entity"].edge_index.tolist() == [[1, 2, 5], [0, 0, 1]]
    assert data["token", "in", "sentence"].edge_index.tolist() == [list(range(9)), [0] * 9]
    assert data.y.tolist() == [5] and data.y.dtype == torch.long
    assert tok.text[1] == "big" and data["entity"].text == ["big dog", "man"]
    data.validate()


def test_builder_keeps_markers_as_tokens_by_default():
    vocab = Vocab.build([["<e1>", "</e1>", "<e2>", "</e2>", *parse_relation(SENT).tokens]])
    data = RelationGraphBuilder(vocab, RelationOptions(max_distance=3), keep_text=True)(SENT)
    tok = data["token"]
    assert tok.text == ["the", "<e1>", "big", "dog", "</e1>", "bit", "the", "<e2>", "man", "</e2>", ",",
                        "sadly", "."]
    assert vocab.unk_id not in tok.word_id.tolist()
    assert data["token", "in", "entity"].edge_index.tolist() == [[2, 3, 8], [0, 0, 1]]
    assert (tok.pos1 - 3).tolist() == [-2, -1, 0, 0, 1, 2, 3, 3, 3, 3, 3, 3, 3]
    assert (tok.pos2 - 3).tolist() == [-3, -3, -3, -3, -3, -3, -2, -1, 0, 1, 2, 3, 3]
    assert data["entity"].text == ["big dog", "man"] and data["sentence"].num_tokens.tolist() == [13]


def test_builder_unknown_words_and_no_text_by_default():
    vocab = _vocab("<e1>a</e1> <e2>b</e2>")
    data = RelationGraphBuilder(vocab, RelationOptions(markers=False))("<e1>a</e1> zzz <e2>b</e2>")
    assert data["token"].word_id.tolist() == [vocab["a"], vocab.unk_id, vocab["b"]]
    assert "text" not in data["token"] and "y" not in data


def test_crop_keeps_both_entities():
    words = " ".join(f"w{i}" for i in range(20))
    text = f"{words} <e1>x</e1> w <e2>y</e2> tail tail2"
    vocab = _vocab(text)
    data = RelationGraphBuilder(vocab, RelationOptions(max_length=6, markers=False), keep_text=True)(text)
    # window ends at e2 (token 22): tokens 17..22
    assert data["token"].text == ["w17", "w18", "w19", "x", "w", "y"]
    assert data["token", "in", "entity"].edge_index.tolist() == [[3, 5], [0, 1]]
    short = "<e1>x</e1> a b c d e f <e2>y</e2> g"
    with pytest.raises(UnrepresentableExample, match=r"line 4: the entities span 8 tokens, more than max_length=6"):
        RelationGraphBuilder(_vocab(short), RelationOptions(max_length=6, markers=False))(short, where="line 4")
    marked = RelationGraphBuilder(_vocab(text), RelationOptions(max_length=8), keep_text=True)(text)
    assert marked["token"].text == ["w19", "<e1>", "x", "</e1>", "w", "<e2>", "y", "</e2>"]
    with pytest.raises(ValueError, match="the entities span 7 tokens"):
        RelationGraphBuilder(_vocab(text), RelationOptions(max_length=6))(text)


def test_builder_rejects_bad_options():
    with pytest.raises(ValueError, match="max_distance"):
        RelationGraphBuilder(_vocab(SENT), RelationOptions(max_distance=0))
    with pytest.raises(ValueError, match="max_length"):
        RelationGraphBuilder(_vocab(SENT), RelationOptions(max_length=1))


def test_batching_three_graphs_keeps_every_link():
    texts = [
        SENT,
        "<e1>A</e1> b c <e2>d e f</e2>",
        "x y <e1>the cat</e1> sat on the <e2>mat</e2> .",
    ]
    builder = RelationGraphBuilder(_vocab(*texts), RelationOptions(max_distance=4))
    graphs = [builder(t, label=i) for i, t in enumerate(texts)]
    batch = next(iter(DataLoader(graphs, batch_size=3)))
    assert batch.num_graphs == 3 and batch.y.tolist() == [0, 1, 2]
    tok_ptr, ent_ptr = batch["token"].ptr, batch["entity"].ptr
    assert ent_ptr.tolist() == [0, 2, 4, 6] and batch["sentence"].ptr.tolist() == [0, 1, 2, 3]
    batch_vec = batch_vector(batch["token"])
    for k, g in enumerate(graphs):
        lo, hi = int(tok_ptr[k]), int(tok_ptr[k + 1])
        assert (batch_vec[lo:hi] == k).all()
        for key in ("word_id", "pos1", "pos2"):
            assert torch.equal(batch["token"][key][lo:hi], g["token"][key])
        for rel, dst_ptr in ((("token", "in", "entity"), ent_ptr), (("token", "in", "sentence"), None)):
            ei = batch[rel].edge_index
            mine = (ei[0] >= lo) & (ei[0] < hi)
            src = ei[0, mine] - lo
            dst = ei[1, mine] - (dst_ptr[k] if dst_ptr is not None else k)
            assert torch.equal(torch.stack([src, dst]), g[rel].edge_index)
    # the token -> entity edges of graph k point at entity nodes 2k and 2k+1 only
    ei = batch["token", "in", "entity"].edge_index
    assert torch.equal(batch["entity"].batch[ei[1]], batch["token"].batch[ei[0]])


def test_split_input_line():
    assert split_input_line('8001\t"The <e1>a</e1> <e2>b</e2>."\r\n') == ("8001", "The <e1>a</e1> <e2>b</e2>.")
    assert split_input_line("plain <e1>a</e1> <e2>b</e2>") == (None, "plain <e1>a</e1> <e2>b</e2>")


def test_chinese_characters_and_segmenter_words():
    assert tokenize_chars("我买了iPhone 12，很好") == ["我", "买", "了", "iphone", "12", "，", "很", "好"]
    sent = locate_entities("在西安，兵马俑吸引了很多游客。", "兵马俑", "西安")
    chars = tokenize_marked(sent, tokenize_chars)
    assert chars.tokens[:7] == ["在", "西", "安", "，", "兵", "马", "俑"]
    assert chars.e1 == (4, 6) and chars.e2 == (1, 2)
    words = tokenize_marked(sent, splitter("jieba"))
    assert words.tokens[words.e1[0] : words.e1[1] + 1] == ["兵马俑"]
    assert words.tokens[words.e2[0] : words.e2[1] + 1] == ["西安"]
    with pytest.raises(ValueError, match="unknown tokenization 'bpe'"):
        splitter("bpe")


def test_tail_before_head_keeps_marker_names_and_starts_edges():
    sent = locate_entities("在西安，兵马俑很有名。", "兵马俑", "西安")
    vocab = Vocab.build([list("在西安，兵马俑很有名。") + ["<e1>", "</e1>", "<e2>", "</e2>"]])
    data = RelationGraphBuilder(vocab, RelationOptions(max_distance=5), keep_text=True, split=splitter("chars"))(sent)
    assert data["token"].text == ["在", "<e2>", "西", "安", "</e2>", "，", "<e1>", "兵", "马", "俑", "</e1>",
                                  "很", "有", "名", "。"]
    assert data["token", "in", "entity"].edge_index.tolist() == [[7, 8, 9, 2, 3], [0, 0, 0, 1, 1]]
    assert data["token", "starts", "entity"].edge_index.tolist() == [[6, 1], [0, 1]]
    assert data["entity"].text == ["兵 马 俑", "西 安"]
    assert (data["token"].pos1 - 5).tolist()[:3] == [-5, -5, -5] and int(data["token"].pos2[2]) == 5
    data.validate()


def test_word_pieces_with_markers_in_unused_slots(tmp_path):
    from tiny_bert import tiny_bert_folder

    from graphmatch.graphs.relation import WordPieces

    folder = tiny_bert_folder(tmp_path / "bert", [SENT, "the dog"])
    pieces = WordPieces.from_pretrained(folder)
    assert pieces.markers == ("[unused0]", "[unused1]", "[unused2]", "[unused3]")
    builder = RelationGraphBuilder.for_pieces(pieces, RelationOptions(max_distance=3), keep_text=True)
    data = builder(SENT, label=2)
    tok = data["token"]
    assert tok.text == ["[CLS]", "the", "[unused0]", "big", "dog", "[unused1]", "bit", "the", "[unused2]", "man",
                        "[unused3]", ",", "sadly", ".", "[SEP]"]
    assert tok.word_id.tolist() == pieces.tokenizer.convert_tokens_to_ids(tok.text)
    assert tok.word_id.tolist()[2] == 1 and tok.word_id.tolist()[10] == 4  # [unused0], [unused3]
    assert data["token", "starts", "entity"].edge_index.tolist() == [[2, 8], [0, 1]]
    assert data["token", "in", "entity"].edge_index.tolist() == [[3, 4, 9], [0, 0, 1]]
    assert int(data["sentence"].num_tokens) == 15 and data.y.tolist() == [2]
    # max_length counts [CLS] and [SEP]: 11 keeps the 9 pieces from the first marker to the last
    short = RelationGraphBuilder.for_pieces(pieces, RelationOptions(max_length=11), keep_text=True)(SENT)
    assert short["token"].text == ["[CLS]", "[unused0]", "big", "dog", "[unused1]", "bit", "the", "[unused2]", "man",
                                   "[unused3]", "[SEP]"]
    assert short["token", "starts", "entity"].edge_index.tolist() == [[1, 7], [0, 1]]
    with pytest.raises(ValueError, match="span 9 tokens, more than max_length=10 less \\[CLS\\] and \\[SEP\\]"):
        RelationGraphBuilder.for_pieces(pieces, RelationOptions(max_length=10))(SENT)
    assert pieces.digest == WordPieces.from_pretrained(folder).digest
    first = pieces.digest
    assert pieces.digest is first  # computed once: a dataset's cache folder asks for it often
    pieces.tokenizer.add_tokens(["zebra"])  # a grown vocabulary is another digest
    assert pieces.digest != first and pieces.digest == WordPieces(pieces.tokenizer).digest


# ------------------------------------------------------------ nested and overlapping entities
MOTHER = "母亲四十岁时生下了我。"  # the literature corpora's case: the head 母亲 inside the tail 母亲四十岁时
CHAR_VOCAB = Vocab.build([list("母亲四十岁时生下了我。南京长江大桥建成通车") + ["<e1>", "</e1>", "<e2>", "</e2>"]])


def _chars(keep_markers=True, **kwargs):
    return RelationGraphBuilder(CHAR_VOCAB, RelationOptions(max_distance=5, markers=keep_markers, **kwargs),
                                keep_text=True, split=tokenize_chars)


def test_head_inside_tail_characters_with_markers():
    data = _chars()(locate_entities(MOTHER, "母亲", "母亲四十岁时"), label=1)
    tok = data["token"]
    # both start at 母: the outer entity (e2) opens first, the inner one (e1) closes first
    assert tok.text == ["<e2>", "<e1>", "母", "亲", "</e1>", "四", "十", "岁", "时", "</e2>", *"生下了我。"]
    assert CHAR_VOCAB.unk_id not in tok.word_id.tolist()
    # 母 亲 are tokens of both entities; the marker </e1> inside e2 is not an e2 token
    assert data["token", "in", "entity"].edge_index.tolist() == [[2, 3, 2, 3, 5, 6, 7, 8], [0, 0, 1, 1, 1, 1, 1, 1]]
    assert data["token", "starts", "entity"].edge_index.tolist() == [[1, 0], [0, 1]]
    assert data["entity"].text == ["母 亲", "母 亲 四 十 岁 时"]
    # positions from each span: e1 = tokens 2..3, e2 = tokens 2..8
    assert (tok.pos1 - 5).tolist() == [-2, -1, 0, 0, 1, 2, 3, 4, 5, 5, 5, 5, 5, 5, 5]
    assert (tok.pos2 - 5).tolist() == [-2, -1, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 5]
    data.validate()


def test_tail_inside_head_characters_without_markers():
    data = _chars(keep_markers=False)(locate_entities(MOTHER, "母亲四十岁时", "母亲"))
    assert data["token"].text == list(MOTHER)
    assert data["token", "in", "entity"].edge_index.tolist() == [[0, 1, 2, 3, 4, 5, 0, 1], [0, 0, 0, 0, 0, 0, 1, 1]]
    assert (data["token"].pos1 - 5).tolist() == [0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5]
    assert (data["token"].pos2 - 5).tolist() == [0, 0, 1, 2, 3, 4, 5, 5, 5, 5, 5]
    assert ("token", "starts", "entity") not in data.edge_types
    last = _chars(keep_markers=False, position_anchor="last")(locate_entities(MOTHER, "母亲四十岁时", "母亲"))
    assert (last["token"].pos2 - 5).tolist()[:4] == [-1, 0, 1, 2]  # from e2's last token 亲


def test_partial_overlap_closes_in_the_order_opened():
    # 南京长江 and 长江大桥 share 长江
    data = _chars()(locate_entities("南京长江大桥建成通车。", "南京长江", "长江大桥"))
    assert data["token"].text[:10] == ["<e1>", "南", "京", "<e2>", "长", "江", "</e1>", "大", "桥", "</e2>"]
    assert data["token", "in", "entity"].edge_index.tolist() == [[1, 2, 4, 5, 4, 5, 7, 8], [0, 0, 0, 0, 1, 1, 1, 1]]
    assert data["token", "starts", "entity"].edge_index.tolist() == [[0, 3], [0, 1]]
    assert (data["token"].pos1 - 5).tolist()[:10] == [-1, 0, 0, 0, 0, 0, 1, 2, 3, 4]
    assert (data["token"].pos2 - 5).tolist()[:10] == [-4, -3, -2, -1, 0, 0, 0, 0, 0, 1]
    # the tail first: the same markup with the names swapped
    swapped = _chars()(locate_entities("南京长江大桥建成通车。", "长江大桥", "南京长江"))
    assert swapped["token"].text[:10] == ["<e2>", "南", "京", "<e1>", "长", "江", "</e2>", "大", "桥", "</e1>"]
    assert swapped["entity"].text == ["长 江 大 桥", "南 京 长 江"]


@pytest.mark.parametrize(
    "text, marked, e1, e2",
    [
        ("He taught at the <e1>University of <e2>Chicago</e2></e1> for years.",
         "he taught at the <e1> university of <e2> chicago </e2> </e1> for years .",
         "university of chicago", "chicago"),
        ("<e2>Members of <e1>the jury</e1></e2> left.",
         "<e2> members of <e1> the jury </e1> </e2> left .", "the jury", "members of the jury"),
        ("The <e1>New York <e2>City</e1> Council</e2> met.",
         "the <e1> new york <e2> city </e1> council </e2> met .", "new york city", "city council"),
        ("<e1><e2>Paris</e2> Hilton</e1> arrived.", "<e1> <e2> paris </e2> hilton </e1> arrived .",
         "paris hilton", "paris"),
    ],
)
def test_english_markup_nests_and_round_trips(text, marked, e1, e2):
    sent = with_markers(parse_relation(text))
    assert " ".join(sent.tokens) == marked
    assert (sent.entity_text(1), sent.entity_text(2)) == (e1, e2)
    # the marked tokens parse back to the same entities: each marker once, before its closing one
    again = parse_relation(" ".join(sent.tokens))
    assert (again.entity_text(1), again.entity_text(2)) == (e1, e2)
    data = RelationGraphBuilder(Vocab.build([sent.tokens]), keep_text=True)(text)
    assert data["entity"].text == [e1, e2]
    ent = data["token", "in", "entity"].edge_index
    for k, words in enumerate((e1, e2)):
        assert [data["token"].text[i] for i in ent[0, ent[1] == k].tolist()] == words.split()
        assert data["token"].text[int(data["token", "starts", "entity"].edge_index[0, k])] == f"<e{k + 1}>"


def test_nested_entities_with_segmenter_words():
    sent = tokenize_marked(locate_entities(MOTHER, "母亲", "母亲四十岁时"), splitter("jieba"))
    assert sent.tokens[sent.e1[0] : sent.e1[1] + 1] == ["母亲"]  # the shared piece is cut out before segmenting
    assert "".join(sent.tokens[sent.e2[0] : sent.e2[1] + 1]) == "母亲四十岁时"
    assert sent.e1[0] == sent.e2[0] == 0


def test_nested_batch_gives_each_entity_its_span():
    from torch_geometric.utils import scatter

    graphs = [_chars()(locate_entities(MOTHER, "母亲", "母亲四十岁时")),
              _chars()(locate_entities("南京长江大桥建成通车。", "南京长江", "长江大桥"))]
    batch = next(iter(DataLoader(graphs, batch_size=2)))
    src, dst = batch["token", "in", "entity"].edge_index
    # an entity state as the models take it: the mean over its token -> entity edges
    state = scatter(batch["token"].word_id[src].float(), dst, dim=0, dim_size=4, reduce="mean")
    for k, (g, e) in enumerate([(0, 0), (0, 1), (1, 0), (1, 1)]):
        ei = graphs[g]["token", "in", "entity"].edge_index
        assert float(state[k]) == pytest.approx(graphs[g]["token"].word_id[ei[0, ei[1] == e]].float().mean().item())


def test_nested_word_pieces(tmp_path):
    from tiny_bert import tiny_bert_folder

    from graphmatch.graphs.relation import WordPieces

    pieces = WordPieces.from_pretrained(tiny_bert_folder(tmp_path / "bert", [MOTHER]))
    data = RelationGraphBuilder.for_pieces(pieces, keep_text=True)(locate_entities(MOTHER, "母亲", "母亲四十岁时"))
    assert data["token"].text[:11] == ["[CLS]", "[unused2]", "[unused0]", "母", "亲", "[unused1]", *"四十岁时",
                                       "[unused3]"]
    assert data["token", "starts", "entity"].edge_index.tolist() == [[2, 1], [0, 1]]
    assert data["token", "in", "entity"].edge_index.tolist() == [[3, 4, 3, 4, 6, 7, 8, 9], [0, 0, 1, 1, 1, 1, 1, 1]]
    # crop keeps the outer markers: the 10 tokens from [unused2] to [unused3] and [CLS], [SEP]
    short = RelationGraphBuilder.for_pieces(pieces, RelationOptions(max_length=12), keep_text=True)(
        locate_entities("我记得" + MOTHER, "母亲", "母亲四十岁时"))
    assert short["token"].text == ["[CLS]", "[unused2]", "[unused0]", "母", "亲", "[unused1]", *"四十岁时",
                                   "[unused3]", "[SEP]"]
    with pytest.raises(UnrepresentableExample, match="span 10 tokens"):
        RelationGraphBuilder.for_pieces(pieces, RelationOptions(max_length=11))(
            locate_entities(MOTHER, "母亲", "母亲四十岁时"))


@pytest.mark.parametrize(
    "sentence, message",
    [
        (locate_entities("北京很大。", "北京", "北京"), "e1 and e2 are the same tokens ('北京')"),
        (parse_markup("<e1><e2>dog</e2> </e1> barked"), "e1 and e2 are the same tokens ('dog ')"),
        (MarkedSentence("a , b", (2, 3), (4, 5)), "entity e1 (',') has no tokens"),
    ],
)
def test_unrepresentable_examples_are_their_own_error(sentence, message):
    def drop_commas(text):
        return text.replace(",", " ").split()

    with pytest.raises(UnrepresentableExample, match="^f.tsv:3: ") as err:
        tokenize_marked(sentence, drop_commas, "f.tsv:3")
    assert message in str(err.value) and err.value.where == "f.tsv:3"
    assert isinstance(err.value, ValueError)  # uncaught, a one-line error like any other
    with pytest.raises(UnrepresentableExample):
        RelationGraphBuilder(CHAR_VOCAB, split=drop_commas)(sentence)
