"""Relation sentence graphs with K-BERT branches (graphs/relation_kbert.py): where a branch goes
relative to the entity markers, soft and relative positions, visibility, entity tokens that
exclude branch pieces, ``inject: entities | all``, the head word of an entity, a trunk equal to
the graph without knowledge, the cut at whole words, and coverage. Expected graphs are worked
out by hand from K-BERT's definitions over a tiny BERT vocabulary of whole words."""

from __future__ import annotations

import pytest
import torch
from tiny_bert import tiny_bert_folder
from torch_geometric.data import InMemoryDataset
from torch_geometric.loader import DataLoader

from graphmatch.data.relation_formats import read_relation_file
from graphmatch.graphs.kbert import TreeOptions, visibility_mask
from graphmatch.graphs.relation import RelationGraphBuilder, RelationSentence, WordPieces
from graphmatch.graphs.relation_kbert import VALUE, VALUE_ANCHOR, VALUE_EDGE, RelationCoverage, RelationTreeBuilder
from graphmatch.graphs.relation_options import RelationOptions
from graphmatch.knowledge import KnowledgeGraph

SPO = """\
company\ttype\tgroup
company\tis a\tinstitution
chair\ttype\tartifact
chair\tis a\tseat
plastic\ttype\tsubstance
desk\ttype\tartifact
drawer\ttype\tartifact
drawer\tis a\tcontainer
ice cream\ttype\tfood
ice cream\tis a\tdessert
camera\ttype\tartifact
key\ttype\tartifact
tourist\ttype\tperson
leaf\ttype\tplant
故宫\t类型\t建筑
北京\t类型\t城市
"""
CHAIRS = "The <e1>company</e1> fabricates plastic <e2>chairs</e2>."
DRAWER = "The <e1>desk drawer</e1> held <e2>ice creams</e2>."
D = 50  # max_distance: no relative position is clipped here


@pytest.fixture(scope="module")
def pieces(tmp_path_factory) -> WordPieces:
    words = [CHAIRS, DRAWER, "type is a group institution artifact seat substance container food dessert person plant",
             "类型 建筑 城市", "long ago and far away there lived an old king who"]
    zh = [e.sentence.text for e in read_relation_file(_sample("relation_zh", "train.tsv"), "auto")]
    en = [e.sentence.text for e in read_relation_file(_sample("relation", "train.txt"), "auto")]
    return WordPieces.from_pretrained(tiny_bert_folder(tmp_path_factory.mktemp("bert") / "tiny", words + zh + en))


@pytest.fixture(scope="module")
def kg(tmp_path_factory) -> KnowledgeGraph:
    path = tmp_path_factory.mktemp("kg") / "tiny.spo"
    path.write_text(SPO, encoding="utf-8")
    return KnowledgeGraph.load(path)


def _sample(folder: str, name: str):
    from pathlib import Path

    return Path(__file__).resolve().parents[2] / "datasets" / "samples" / folder / name


def _builder(pieces, kg, keep_text=True, **options) -> RelationTreeBuilder:
    return RelationTreeBuilder(pieces, kg, RelationOptions(max_distance=D, **options), keep_text=keep_text)


def test_branches_hang_after_the_closing_marker(pieces, kg):
    data = _builder(pieces, kg)(CHAIRS, label=4)
    tok = data["token"]
    assert tok.text == ["[CLS]", "the", "[unused0]", "company", "[unused1]", "type", "group", "is", "a", "institution",
                        "fabricates", "plastic", "[unused2]", "chairs", "[unused3]", "type", "artifact", "is", "a",
                        "seat", ".", "[SEP]"]
    assert tok.word_id.tolist() == pieces.lookup(tok.text)
    assert tok.branch.int().tolist() == [0] * 5 + [1] * 5 + [0] * 5 + [1] * 5 + [0] * 2
    # the trunk numbered as if no branch existed; value pieces go on from their span's last piece
    # (company: 3, chairs: 8), and sibling values reuse the same positions
    assert tok.pos.tolist() == [0, 1, 2, 3, 4, 4, 5, 4, 5, 6, 5, 6, 7, 8, 9, 9, 10, 9, 10, 11, 10, 11]
    # relative positions on the soft positions: a branch piece lies k after its entity
    assert (tok.pos1 - D).tolist() == [p - 3 for p in tok.pos.tolist()]
    assert (tok.pos2 - D).tolist() == [p - 8 for p in tok.pos.tolist()]
    # entity tokens and starts: the trunk's, no branch piece among them
    assert data["token", "in", "entity"].edge_index.tolist() == [[3, 13], [0, 1]]
    assert data["token", "starts", "entity"].edge_index.tolist() == [[2, 12], [0, 1]]
    assert data["entity"].text == ["company", "chairs"] and data.y.tolist() == [4]
    assert data["word"].text == ["company", "chair"] and data["word"].in_entity.tolist() == [1, 2]
    assert data[VALUE].text == ["type group", "is a institution", "type artifact", "is a seat"]
    assert data[VALUE].length.tolist() == [2, 3, 2, 3]
    assert data["token", "in", "word"].edge_index.tolist() == [[3, 13], [0, 1]]
    assert data[VALUE_EDGE].edge_index.tolist() == [[5, 6, 7, 8, 9, 15, 16, 17, 18, 19], [0, 0, 1, 1, 1, 2, 2, 3, 3, 3]]
    assert data[VALUE_ANCHOR].edge_index.tolist() == [[0, 1, 2, 3], [0, 0, 1, 1]]
    assert int(data["sentence"].num_tokens) == 22
    assert data["token", "in", "sentence"].edge_index.tolist() == [list(range(22)), [0] * 22]
    data.validate()


def test_visibility_of_a_relation_tree(pieces, kg):
    data = _builder(pieces, kg)(CHAIRS)
    visible, real = visibility_mask(data, value=VALUE)
    assert visible.shape == (1, 22, 22) and bool(real.all())
    expected = torch.zeros(22, 22, dtype=torch.bool)
    trunk = [0, 1, 2, 3, 4, 10, 11, 12, 13, 14, 20, 21]
    expected[torch.tensor(trunk)[:, None], torch.tensor(trunk)] = True
    for span, values in ((3, [[5, 6], [7, 8, 9]]), (13, [[15, 16], [17, 18, 19]])):
        for value in values:
            for i in value:
                expected[i, value] = True  # its own value
                expected[i, span] = expected[span, i] = True  # its span, both ways
    assert torch.equal(visible[0], expected)
    # the markers, [CLS] and the other entity see no branch piece
    assert not visible[0, [0, 2, 4, 12, 13, 14]][:, 5:10].any()


def test_inject_all_and_max_entities(pieces, kg):
    everywhere = _builder(pieces, kg, inject="all")(CHAIRS)
    assert everywhere["token"].text[10:16] == ["fabricates", "plastic", "type", "substance", "[unused2]", "chairs"]
    assert everywhere["word"].text == ["company", "plastic", "chair"]
    assert everywhere["word"].in_entity.tolist() == [1, 0, 2]
    assert everywhere["token"].pos.tolist()[10:15] == [5, 6, 7, 8, 7]  # plastic 6: its branch 7, 8; then <e2> 7
    one = _builder(pieces, kg, max_entities=1)(CHAIRS)
    assert one[VALUE].text == ["type group", "type artifact"]
    assert one["token"].text[3:7] == ["company", "[unused1]", "type", "group"]
    objects = _builder(pieces, kg, predicate=False)(CHAIRS)
    assert objects["token"].text[3:8] == ["company", "[unused1]", "group", "institution", "fabricates"]
    assert objects["token"].pos.tolist()[3:8] == [3, 4, 4, 4, 5]
    none = _builder(pieces, kg, max_entities=0)(CHAIRS)
    plain = RelationGraphBuilder.for_pieces(pieces, RelationOptions(max_distance=D), keep_text=True)(CHAIRS)
    assert none["token"].text == plain["token"].text and not none["token"].branch.any()


@pytest.mark.parametrize("inject", ["entities", "all"])
def test_an_entity_gets_its_head_word_only(pieces, kg, inject):
    data = _builder(pieces, kg, inject=inject)(DRAWER)
    # desk drawer: the head drawer, not desk; ice creams: the two-word lemma ice cream
    assert data["word"].text == ["drawer", "ice cream"]
    assert data["token"].text == ["[CLS]", "the", "[unused0]", "desk", "drawer", "[unused1]", "type", "artifact", "is",
                                  "a", "container", "held", "[unused2]", "ice", "creams", "[unused3]", "type", "food",
                                  "is", "a", "dessert", ".", "[SEP]"]
    assert data["token", "in", "word"].edge_index.tolist() == [[4, 13, 14], [0, 1, 1]]
    assert data["token", "in", "entity"].edge_index.tolist() == [[3, 4, 13, 14], [0, 0, 1, 1]]
    assert data["token"].pos.tolist()[:11] == [0, 1, 2, 3, 4, 5, 5, 6, 5, 6, 7]  # from drawer's 4


def test_trunk_is_the_graph_without_knowledge(pieces, kg):
    """Every sample sentence, English and Chinese (nested, overlapping, tail before head): the
    trunk of the tree is the plain graph's token sequence, with its entities and starts."""
    plain = RelationGraphBuilder.for_pieces(pieces, RelationOptions(max_distance=D), keep_text=True)
    for folder, name in (("relation", "train.txt"), ("relation", "test.txt"), ("relation_zh", "train.tsv")):
        examples = read_relation_file(_sample(folder, name), "auto")
        trees = _builder(pieces, kg, inject="all").graphs([e.sentence for e in examples])
        branches = 0
        for example, tree in zip(examples, trees, strict=True):
            old = plain(example.sentence)
            trunk = (~tree["token"].branch).nonzero().flatten()
            branches += int(tree["token"].branch.sum())
            assert tree["token"].word_id[trunk].tolist() == old["token"].word_id.tolist()
            for edge in (("token", "in", "entity"), ("token", "starts", "entity")):
                src, dst = tree[edge].edge_index
                assert trunk[old[edge].edge_index[0]].tolist() == src.tolist()
                assert old[edge].edge_index[1].tolist() == dst.tolist()
            assert tree["token"].pos[trunk].tolist() == list(range(len(trunk)))
        assert branches > 0, (folder, name)


def test_a_long_sentence_is_cut_at_whole_words(pieces, kg):
    text = "long ago and far away there lived an old king who " + CHAIRS + " long ago and far away"
    data = _builder(pieces, kg, max_length=12)(text)
    tok = data["token"]
    trunk = [t for t, b in zip(tok.text, tok.branch.tolist(), strict=True) if not b]
    assert len(trunk) <= 12 and trunk[0] == "[CLS]" and trunk[-1] == "[SEP]"
    assert trunk[1:11] == ["who", "the", "[unused0]", "company", "[unused1]", "fabricates", "plastic", "[unused2]",
                           "chairs", "[unused3]"]
    assert data[VALUE].text == ["type group", "is a institution", "type artifact", "is a seat"]
    with pytest.raises(ValueError, match="more than max_length=8"):
        _builder(pieces, kg, max_length=8)(text)


def test_without_markers(pieces, kg):
    data = _builder(pieces, kg, markers=False)(CHAIRS)
    assert data["token"].text[:9] == ["[CLS]", "the", "company", "type", "group", "is", "a", "institution",
                                      "fabricates"]
    assert ("token", "starts", "entity") not in data.edge_types
    assert data["token", "in", "entity"].edge_index.tolist() == [[2, 10], [0, 1]]


def test_bad_input(pieces, kg):
    with pytest.raises(ValueError, match="inject must be one of entities, all"):
        _builder(pieces, kg, inject="words")
    with pytest.raises(TypeError, match="needs the sentence's text"):
        _builder(pieces, kg)(RelationSentence(["a", "b"], (0, 0), (1, 1)))
    with pytest.raises(ValueError, match="here: missing entity marker"):
        _builder(pieces, kg)("no markers", where="here")


def test_batches_and_coverage(pieces, kg):
    builder = _builder(pieces, kg, keep_text=False)
    graphs = builder.graphs([CHAIRS, DRAWER, "<e1>long</e1> ago <e2>king</e2>"], [0, 1, 2])
    assert torch.equal(graphs[0]["token"].word_id, builder(CHAIRS)["token"].word_id)
    batch = next(iter(DataLoader(graphs, batch_size=3)))
    visible, _ = visibility_mask(batch, value=VALUE)
    for k, g in enumerate(graphs):
        n = g["token"].num_nodes
        assert torch.equal(visible[k, :n, :n], visibility_mask(g, value=VALUE)[0][0])
    data, slices = InMemoryDataset.collate(graphs)
    cov = RelationCoverage.of(data, slices)
    assert (cov.knowledge.inputs, cov.knowledge.with_branch, cov.knowledge.branches) == (3, 2, 8)
    assert (cov.e1, cov.e2, cov.both) == (2, 2, 2)
    assert (cov.tokens, cov.trunk) == (22 + 23 + 9, 12 + 13 + 9)
    assert "e1 has a branch in 66.7 %" in str(cov)


def test_parse_relation_round_trip_keeps_spans(pieces, kg):
    """The tokens between <ek> and </ek> are exactly entity k's: no branch among them."""
    data = _builder(pieces, kg, inject="all")(DRAWER)
    text = data["token"].text
    for k, (open_, close) in enumerate((("[unused0]", "[unused1]"), ("[unused2]", "[unused3]"))):
        inside = list(range(text.index(open_) + 1, text.index(close)))
        src, dst = data["token", "in", "entity"].edge_index
        assert src[dst == k].tolist() == inside
        assert not data["token"].branch[inside].any()


def test_core_parts_refuse_bad_parts(pieces, kg):
    from graphmatch.graphs.kbert import Part, TreeCore
    from graphmatch.text import CharTokenizer

    core = _builder(pieces, kg).core
    with pytest.raises(ValueError, match="a part's query must be one of all, head, none"):
        core.build_parts([[Part("company", query="some")]])
    with pytest.raises(ValueError, match="a tag part needs its tag"):
        core.build_parts([[Part("", tag=True)]])
    reference = TreeCore(kg, CharTokenizer({t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]",
                                                                        "[MASK]"])}), TreeOptions(mode="reference"))
    with pytest.raises(ValueError, match="build_parts needs mode='default'"):
        reference.build_parts([[Part("故宫")]])
