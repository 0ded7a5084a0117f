import pytest

from graphmatch.graphs.relation_markup import MarkedSentence, locate_entities, parse_markup


def test_parse_markup_gives_plain_text_and_character_spans():
    s = parse_markup("The <e1>Big Dog</e1> bit the <e2>man</e2>, sadly.")
    assert s.text == "The Big Dog bit the man, sadly."
    assert s.e1 == (4, 11) and s.e2 == (20, 23)
    assert s.entity_text(1) == "Big Dog" and s.entity_text(2) == "man"
    assert s.pieces() == [("The ", 0), ("Big Dog", 1), (" bit the ", 0), ("man", 2), (", sadly.", 0)]


def test_parse_markup_errors_name_the_place():
    # every markup problem is covered through parse_relation in test_relation_graph.py
    with pytest.raises(ValueError, match="^f.txt:3: entities in the wrong order"):
        parse_markup("<e2>a</e2> b <e1>c</e1>", "f.txt:3")


def test_locate_entities_in_order_and_reversed():
    s = locate_entities("故宫位于北京市中心。", "故宫", "北京")
    assert (s.e1, s.e2) == ((0, 2), (4, 6))
    r = locate_entities("在西安，兵马俑吸引了很多游客。", "兵马俑", "西安")  # the tail comes first
    assert r.entity_text(1) == "兵马俑" and r.e2 == (1, 3) and r.e2 < r.e1
    assert [k for _, k in r.pieces()] == [0, 2, 0, 1, 0]


def test_locate_entities_takes_the_closest_pair_that_does_not_overlap():
    # the tail 北京 also occurs inside the head 北京大学: the occurrence outside it is taken
    s = locate_entities("北京大学位于北京海淀区。", "北京大学", "北京")
    assert (s.e1, s.e2) == ((0, 4), (6, 8))
    # the head occurs twice: the occurrence nearer the tail is taken
    s = locate_entities("马明说，星光公司是马明创办的。", "马明", "星光公司")
    assert s.e1 == (9, 11) and s.e2 == (4, 8)
    # equally near: the earlier head
    s = locate_entities("a x a", "a", "x")
    assert s.e1 == (0, 1) and s.e2 == (2, 3)


@pytest.mark.parametrize(
    "sentence, head, tail, message",
    [
        ("故宫位于北京。", "天坛", "北京", "the head entity '天坛' is not in the sentence"),
        ("故宫位于北京。", "故宫", "上海", "the tail entity '上海' is not in the sentence"),
        ("北京大学很大。", "北京大学", "北京", "overlap wherever they occur"),
        ("故宫位于北京。", " ", "北京", "the head entity is empty"),
    ],
)
def test_locate_entities_errors(sentence, head, tail, message):
    with pytest.raises(ValueError, match="^d.tsv:7: ") as err:
        locate_entities(sentence, head, tail, "d.tsv:7")
    assert message in str(err.value)


def test_marked_sentence_is_plain_python():
    assert MarkedSentence("ab", (0, 1), (1, 2)).entity_text(2) == "b"
