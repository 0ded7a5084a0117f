"""``predict --input`` reads the task's own data files (issue 31): a header row is known by the
task's column names and never scored, the gold label is taken by name, every row keeps its line;
a file without a header still works; bad lines are one error naming ``file:line``. The relation
family's files go through its own reader (``Task.read_inputs``), which knows SemEval files."""

from __future__ import annotations

import pytest

from graphmatch.data.semeval_inputs import read_relation_inputs
from graphmatch.io.input_files import read_input_file

CLASSIFICATION = ("label", "text_a")
PAIR = ("text_a", "text_b", "label")
NER = ("text_a", "label")
RELATION = ("head", "tail", "relation", "sentence")


def one(fields):  # K-BERT classification / NER's Task.input_fields
    if len(fields) != 1:
        raise ValueError(f"{len(fields)} columns; this classification model takes 1 (the text)")
    return tuple(fields)


def two(fields):  # pairs (K-BERT, LET)
    if len(fields) != 2:
        raise ValueError(f"{len(fields)} columns; this pair model takes 2 (text_a, text_b)")
    return tuple(fields)


def relation(fields):  # RelationTask.input_fields
    if len(fields) not in (1, 2, 3):
        raise ValueError(f"{len(fields)} columns; expected a marked sentence, ID and sentence, or head, tail, sentence")
    return ("\t".join(fields),)


def read(tmp_path, text, columns, bare, name="in.tsv"):
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    reader = read_relation_inputs if columns == RELATION else read_input_file  # each family's Task.read_inputs
    return [(item.fields, item.line, item.gold) for item in reader(path, columns, bare)]


def test_kbert_classification_file_with_its_header(tmp_path):
    got = read(tmp_path, "label\ttext_a\n1\t很好\n0\t太差了\n", CLASSIFICATION, one)
    assert got == [(("很好",), 2, "1"), (("太差了",), 3, "0")]


def test_a_header_of_the_input_column_alone_is_not_scored(tmp_path):
    assert read(tmp_path, "text_a\n好\n差\n坏\n", CLASSIFICATION, one) == [
        (("好",), 2, None), (("差",), 3, None), (("坏",), 4, None)]


def test_without_a_header_bare_texts_and_full_lines_both_work(tmp_path):
    assert read(tmp_path, "好\n\n差\n", CLASSIFICATION, one) == [(("好",), 1, None), (("差",), 3, None)]
    assert read(tmp_path, "1\t好\n", CLASSIFICATION, one) == [(("好",), 1, "1")]


def test_pairs_by_name_in_any_order(tmp_path):
    assert read(tmp_path, "text_a\ttext_b\tlabel\n北京\t上海\t0\n", PAIR, two) == [(("北京", "上海"), 2, "0")]
    assert read(tmp_path, "label\ttext_b\ttext_a\n1\t乙\t甲\n", PAIR, two) == [(("甲", "乙"), 2, "1")]
    assert read(tmp_path, "甲\t乙\n", PAIR, two) == [(("甲", "乙"), 1, None)]


def test_ner_file(tmp_path):
    got = read(tmp_path, "text_a\tlabel\n头 痛\tB-Symptom I-Symptom\n", NER, one)
    assert got == [(("头 痛",), 2, "B-Symptom I-Symptom")]


def test_relation_corpus_four_columns_with_and_without_header(tmp_path):
    line = "张三\t北京\t出生地\t张三出生于北京\n"
    want = [(("张三\t北京\t张三出生于北京",), 2, "出生地")]
    assert read(tmp_path, "head\ttail\trelation\tsentence\n" + line, RELATION, relation) == want
    assert read(tmp_path, line, RELATION, relation) == [(want[0][0], 1, "出生地")]
    assert read(tmp_path, "张三\t北京\t张三出生于北京\n", RELATION, relation)[0][2] is None


def test_semeval_file_as_the_organisers_wrote_it(tmp_path):
    text = ('8001\t"The <e1>cup</e1> holds <e2>tea</e2>."\nContent-Container(e2,e1)\nComment: x\n\n'
            '8002\t"A <e1>b</e1> c <e2>d</e2>."\nOther\nComment:\n\n')
    got = read(tmp_path, text, RELATION, relation, name="TEST_FILE_FULL.TXT")
    assert got == [(('8001\t"The <e1>cup</e1> holds <e2>tea</e2>."',), 1, "Content-Container(e2,e1)"),
                   (('8002\t"A <e1>b</e1> c <e2>d</e2>."',), 5, "Other")]
    unlabelled = read(tmp_path, '1\t"<e1>a</e1> <e2>b</e2>"\n2\t"<e1>c</e1> <e2>d</e2>"\n', RELATION, relation)
    assert [g for *_, g in unlabelled] == [None, None]
    after_blanks = read(tmp_path, "\n\n" + text, RELATION, relation)
    assert [(line, gold) for _, line, gold in after_blanks] == [(3, "Content-Container(e2,e1)"), (7, "Other")]


def test_semeval_from_stdin(monkeypatch):
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b'\n8001\t"<e1>a</e1> <e2>b</e2>"\nOther\n')))
    got = read_relation_inputs("-", RELATION, relation)
    assert [(item.fields, item.line, item.gold) for item in got] == [(('8001\t"<e1>a</e1> <e2>b</e2>"',), 2, "Other")]


def test_only_the_relation_family_knows_semeval_files(tmp_path):
    """The generic reader takes a SemEval file's lines as bare inputs: the format is the family's."""
    path = tmp_path / "in.tsv"
    path.write_text('8001\t"<e1>a</e1> <e2>b</e2>"\nOther\n', encoding="utf-8")
    got = read_input_file(path, RELATION, relation)
    assert [(item.fields, item.gold) for item in got] == [(('8001\t"<e1>a</e1> <e2>b</e2>"',), None),
                                                          (("Other",), None)]


def test_jsonl_by_column_name(tmp_path):
    got = read(tmp_path, '{"text_a": "甲", "text_b": "乙", "label": "1"}\n{"text": "丙", "text_b": "丁"}\n',
               PAIR, two, name="in.jsonl")
    assert got == [(("甲", "乙"), 1, "1"), (("丙", "丁"), 2, None)]


@pytest.mark.parametrize("text,columns,bare,message", [
    ("label\ttext_a\n1\t好\t多\n", CLASSIFICATION, one, "in.tsv:2: 3 columns; the header names 2"),
    ("好\n差\t坏\t多\n", CLASSIFICATION, one, "in.tsv:2: 3 columns"),
    ("label\ttext_a\n\t好\n", CLASSIFICATION, one, "in.tsv:2: the label column is empty"),
    (b"\xff\xfe\n", CLASSIFICATION, one, "in.tsv:1:"),
    ("好\n差\0\n", CLASSIFICATION, one, "in.tsv:2:"),
    ('1\t"<e1>a</e1> <e2>b</e2>"\nOther\nOther\n', RELATION, relation, "in.tsv:3: a label line"),
    ('1\t"<e1>a</e1> <e2>b</e2>"\nx\ty\n', RELATION, relation, "in.tsv:2: expected ID<TAB>"),
    ("\n\n", CLASSIFICATION, one, "in.tsv: no input lines"),
    ('{"text_a": 3}\n', CLASSIFICATION, one, "in.jsonl:1:"),
])
def test_a_bad_line_names_file_and_line(tmp_path, text, columns, bare, message):
    name = "in.jsonl" if isinstance(text, str) and text.startswith("{") else "in.tsv"
    with pytest.raises(ValueError) as err:
        read(tmp_path, text, columns, bare, name=name)
    assert message.replace(name, str(tmp_path / name)) in str(err.value)
