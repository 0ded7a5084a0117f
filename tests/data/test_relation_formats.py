import subprocess
import sys

import pytest

from graphmatch.data.relation_formats import (
    SEMEVAL_LABELS,
    check_labels,
    detect_format,
    is_semeval,
    label_set,
    read_relation_file,
    read_semeval_file,
    read_tsv_file,
)

TSV = "故宫\t北京\t位于\t故宫位于北京市中心。\r\n\r\n马明\t星光公司\t创办\t星光公司由马明创办。\r\n"
SEMEVAL = '1\t"The <e1>lid</e1> of the <e2>jar</e2>."\nComponent-Whole(e1,e2)\nComment:\n\n'


def _write(tmp_path, content, name="f.tsv"):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


def test_read_tsv_file_locates_head_and_tail(tmp_path):
    ex = read_tsv_file(_write(tmp_path, TSV))
    assert [(e.sid, e.line, e.label) for e in ex] == [(1, 1, "位于"), (3, 3, "创办")]
    assert ex[0].sentence.entity_text(1) == "故宫" and ex[0].sentence.entity_text(2) == "北京"
    assert ex[1].sentence.e1 == (5, 7) and ex[1].sentence.e2 == (0, 4)  # the tail comes first
    unlabelled = read_tsv_file(_write(tmp_path, "故宫\t北京\t故宫位于北京。\n", "u.tsv"), labelled=False)
    assert unlabelled[0].label is None and unlabelled[0].sentence.entity_text(2) == "北京"


def test_nested_and_overlapping_entities_in_both_formats(tmp_path):
    tsv = ("母亲\t母亲四十岁时\tGeneral-Special\t母亲四十岁时生下了我。\n"
           "王家村口\t王家村\tPart-Whole\t他站在王家村口。\n"
           "南京长江\t长江大桥\tPart-Whole\t南京长江大桥建成通车。\n"
           "北京\t北京\tunknown\t北京很大。\n")
    ex = read_tsv_file(_write(tmp_path, tsv))
    assert [(e.sentence.e1, e.sentence.e2) for e in ex] == [((0, 2), (0, 6)), ((3, 7), (3, 6)), ((0, 4), (2, 6)),
                                                             ((0, 2), (0, 2))]  # the last is refused when tokenised
    semeval = ('1\t"The <e1>University of <e2>Chicago</e2></e1> Press."\nOther\n\n'
               '2\t"<e2><e1>母亲</e1>四十岁时</e2>生下了我。"\nOther\n\n'
               '3\t"The <e1>New York <e2>City</e1> Council</e2> met."\nOther\n')
    ex = read_semeval_file(_write(tmp_path, semeval, "s.txt"))
    assert [(e.sentence.entity_text(1), e.sentence.entity_text(2)) for e in ex] == [
        ("University of Chicago", "Chicago"), ("母亲", "母亲四十岁时"), ("New York City", "City Council")]


def test_bom_is_stripped_in_both_formats(tmp_path):
    assert read_tsv_file(_write(tmp_path, "\ufeff" + TSV))[0].sentence.entity_text(1) == "故宫"
    assert read_semeval_file(_write(tmp_path, "\ufeff" + SEMEVAL, "s.txt"))[0].sid == 1
    assert detect_format(_write(tmp_path, "\ufeff" + SEMEVAL, "s.txt")) == "semeval"
    assert detect_format(_write(tmp_path, "\ufeff" + TSV)) == "tsv"


@pytest.mark.parametrize(
    "content, line, message",
    [
        (b"\xe6\x95\x85\xe5\xae\xab\t\xe5\x8c\x97\xe4\xba\xac\tx\tok\n\xff\xfe\tb\tc\td\n", 2, "not valid UTF-8"),
        ("故宫\t北京\t位于\n", 1, "expected 4 tab-separated fields"),
        ("故宫\t北京\t位于\t故宫很大。\n", 1, "the tail entity '北京' is not in the sentence '故宫很大。'"),
        ("a\tb\t位于\ta b\n故宫\t北京\t\t故宫在北京\n", 2, "the relation field is empty"),
    ],
)
def test_bad_tsv_lines_name_file_and_line(tmp_path, content, line, message):
    path = _write(tmp_path, content)
    with pytest.raises(ValueError, match=f"^{path}:{line}: ") as err:
        read_tsv_file(path)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_empty_missing_and_folder(tmp_path):
    with pytest.raises(ValueError, match="empty file"):
        read_tsv_file(_write(tmp_path, "\n\n"))
    with pytest.raises(FileNotFoundError, match="does not exist"):
        read_tsv_file(tmp_path / "nope.tsv")
    with pytest.raises(FileNotFoundError, match="it is a folder"):
        read_relation_file(tmp_path)
    with pytest.raises(ValueError, match="unknown relation file format 'csv'"):
        read_relation_file(_write(tmp_path, TSV), "csv")


def test_semeval_invalid_utf8_and_duplicate_ids(tmp_path):
    bad = _write(tmp_path, SEMEVAL.encode() + b'2\t"<e1>a\xff</e1> <e2>b</e2>"\nOther\n', "s.txt")
    with pytest.raises(ValueError, match=f"^{bad}:5: not valid UTF-8"):
        read_semeval_file(bad)
    dup = _write(tmp_path, SEMEVAL + SEMEVAL, "d.txt")
    with pytest.raises(ValueError, match=f"^{dup}:5: sentence id 1 already appears on line 1$"):
        read_semeval_file(dup)


def test_label_set_and_checks(tmp_path):
    semeval = read_semeval_file(_write(tmp_path, SEMEVAL + SEMEVAL.replace("1\t", "2\t").replace(
        "Component-Whole(e1,e2)", "Other"), "s.txt"))
    assert label_set(semeval) == ["Other", "Component-Whole(e1,e2)"]  # SemEval's order, train's labels
    assert is_semeval(label_set(semeval)) and is_semeval(SEMEVAL_LABELS) and not is_semeval(["位于"])
    train = read_tsv_file(_write(tmp_path, TSV))
    labels = label_set(train)
    assert labels == ["位于", "创办"]
    test = _write(tmp_path, "故宫\t北京\t位于\t故宫在北京。\n李华\t成都\t出生于\t李华出生于成都。\n", "test.tsv")
    with pytest.raises(ValueError, match=f"^{test}:2: label '出生于' does not occur in the training data; "
                                         "training labels: 位于, 创办$"):
        check_labels(read_tsv_file(test), labels, test)
    check_labels(train, labels, "train.tsv")


def test_readers_import_no_torch():
    code = ("import sys, graphmatch.data.relation_formats as f; "
            "assert 'torch' not in sys.modules, 'torch imported'; print(len(f.SEMEVAL_LABELS))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "19", out.stderr


@pytest.mark.parametrize("char", ["\x00", "\x01", "\x1b", "\x7f"])
def test_control_characters_name_file_and_line(tmp_path, char):
    path = tmp_path / "train.tsv"
    path.write_text(f"故宫\t北京\t位于\t故宫位于北京。\n长城\t北京\t位于\t长城{char}位于北京。\n", encoding="utf-8")
    with pytest.raises(ValueError, match=rf"^{path}:2: control character U\+{ord(char):04X} in the text"):
        read_relation_file(path)
    semeval = tmp_path / "train.txt"
    semeval.write_text(f'1\t"The <e1>a</e1>{char} b <e2>c</e2>"\nOther\n', encoding="utf-8")
    with pytest.raises(ValueError, match=rf"^{semeval}:1: control character"):
        read_relation_file(semeval)


def test_a_bom_at_the_start_of_a_later_line_is_stripped(tmp_path):
    """Two files joined: the second one's BOM would otherwise be part of the head entity."""
    ex = read_tsv_file(_write(tmp_path, TSV + "\ufeff" + TSV))
    half = len(ex) // 2
    assert len(ex) == 2 * half and [e.sentence.entity_text(1) for e in ex[half:]] == [
        e.sentence.entity_text(1) for e in ex[:half]]
