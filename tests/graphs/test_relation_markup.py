import pytest

from graphmatch.graphs.relation_markup import MarkedSentence, UnrepresentableExample, locate_entities, parse_markup


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
        ("故宫位于北京。", " ", "北京", "the head entity is empty"),
    ],
)
def test_locate_entities_errors(sentence, head, tail, message):
    with pytest.raises(ValueError, match="^d.tsv:7: ") as err:
        locate_entities(sentence, head, tail, "d.tsv:7")
    assert message in str(err.value)


def test_marked_sentence_is_plain_python():
    assert MarkedSentence("ab", (0, 1), (1, 2)).entity_text(2) == "b"


def test_nested_and_overlapping_markup():
    # e2 inside e1, e1 inside e2, a shared start, a partial overlap either way round
    cases = {
        "the <e1>University of <e2>Chicago</e2></e1> press": ("University of Chicago", "Chicago"),
        "<e2>members of <e1>the jury</e1></e2> left": ("the jury", "members of the jury"),
        "<e2><e1>母亲</e1>四十岁时</e2>生下了我。": ("母亲", "母亲四十岁时"),
        "<e1>南京<e2>长江</e1>大桥</e2>建成通车。": ("南京长江", "长江大桥"),
        "<e2>南京<e1>长江</e2>大桥</e1>建成通车。": ("长江大桥", "南京长江"),
    }
    for text, (e1, e2) in cases.items():
        s = parse_markup(text)
        assert "<" not in s.text and (s.entity_text(1), s.entity_text(2)) == (e1, e2), text
    s = parse_markup("<e2><e1>母亲</e1>四十岁时</e2>生下了我。")
    assert s.text == "母亲四十岁时生下了我。" and s.e1 == (0, 2) and s.e2 == (0, 6)
    assert s.pieces() == [("", 0), ("", 0), ("母亲", 3), ("四十岁时", 2), ("生下了我。", 0)]
    assert parse_markup("<e1>南京<e2>长江</e1>大桥</e2>。").pieces() == [
        ("", 0), ("南京", 1), ("长江", 3), ("大桥", 2), ("。", 0)]
    # an entity empty apart from the other's markers is still empty
    with pytest.raises(ValueError, match="^x:1: entity e1 is empty"):
        parse_markup("<e1><e2></e1>a</e2>", "x:1")
    with pytest.raises(ValueError, match="^x:1: </e2> comes before <e2>"):
        parse_markup("<e1>a </e2>b</e1> <e2>c", "x:1")


def test_locate_nested_and_overlapping_entities():
    # the head inside the tail and the reverse, as literature corpora annotate them
    s = locate_entities("母亲四十岁时生下了我。", "母亲", "母亲四十岁时")
    assert (s.e1, s.e2) == ((0, 2), (0, 6))
    s = locate_entities("那年母亲四十岁时生下了我。", "母亲四十岁时", "母亲")
    assert (s.e1, s.e2) == ((2, 8), (2, 4))
    s = locate_entities("The University of Chicago Press", "University of Chicago", "Chicago")
    assert s.entity_text(2) == "Chicago" and s.e2 == (18, 25)
    # a partial overlap when nothing else fits
    s = locate_entities("南京长江大桥建成通车。", "南京长江", "长江大桥")
    assert (s.e1, s.e2) == ((0, 4), (2, 6))
    # nested before partly overlapping: 哈哈 occurs at 2 (overlapping 哈哈大笑 partly) and at 3 (inside it)
    s = locate_entities("他在哈哈哈大笑", "哈哈", "哈哈大笑")
    assert (s.e1, s.e2) == ((3, 5), (3, 7))
    # apart before nested, as before: 北京 outside 北京大学 is taken
    assert locate_entities("北京大学位于北京海淀区。", "北京大学", "北京").e2 == (6, 8)
    # the same span is returned; tokenisation refuses it (UnrepresentableExample)
    s = locate_entities("北京很大。", "北京", "北京")
    assert s.e1 == s.e2 == (0, 2)
    assert locate_entities("北京比北京大。", "北京", "北京").e2 == (3, 5)  # two occurrences: apart


def test_unrepresentable_example_is_a_value_error_with_its_place():
    err = UnrepresentableExample("train.tsv:12", "e1 and e2 are the same tokens")
    assert isinstance(err, ValueError) and str(err) == "train.tsv:12: e1 and e2 are the same tokens"
    assert (err.where, err.reason) == ("train.tsv:12", "e1 and e2 are the same tokens")
