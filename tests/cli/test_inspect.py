"""``graphmatch inspect``: one JSON object per input line, errors as one clear line."""

from __future__ import annotations

import json
import sys

import pytest

from graphmatch.cli.inspect import kbert_rows, let_rows, relation_graph_dict, relation_rows
from graphmatch.cli.main import main
from graphmatch.graphs.relation import RelationGraphBuilder, parse_relation
from graphmatch.text import Vocab

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


@pytest.fixture()
def files(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(SPECIAL + list("abcdefghijklmnopqrstuvwxyz")) + "\n", encoding="utf-8")
    kg = tmp_path / "tiny.spo"
    kg.write_text("ab\tr\txy\nab\tr\tz\nde\tr\tq\n", encoding="utf-8")
    return vocab, kg, tmp_path


def run_inspect(capsys, *argv) -> tuple[int, list[dict], str]:
    code = main(["inspect", *argv])
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines()], err


def test_kbert_paper_example(files, capsys):
    vocab, kg, tmp = files
    src = tmp / "in.txt"
    src.write_text("abcde\n\nab\tde\n", encoding="utf-8")
    code, rows, _ = run_inspect(capsys, "kbert", "--kg", str(kg), "--vocab", str(vocab), "--no-predicate", str(src))
    assert code == 0 and len(rows) == 2  # the blank line is skipped
    first = rows[0]
    assert set(first) == {"tokens", "ids", "pos", "seg", "visible"}
    assert first["tokens"] == ["[CLS]", "a", "b", "x", "y", "z", "c", "d", "e", "q"]
    assert first["ids"][:3] == [2, 5, 6]
    assert first["pos"] == [0, 1, 2, 3, 4, 3, 3, 4, 5, 6]
    assert first["seg"] == [0] * 10
    assert first["visible"][0] == [0, 1, 2, 6, 7, 8]  # [CLS] sees no branch
    assert first["visible"][5] == [1, 2, 5]  # z: its branch and its word
    pair = rows[1]
    assert pair["tokens"] == ["[CLS]", "a", "b", "x", "y", "z", "[SEP]", "d", "e", "q", "[SEP]"]
    assert pair["seg"] == [0] * 7 + [1] * 4


def test_kbert_rows_take_keyword_options(files):
    vocab, kg, _ = files
    rows = list(kbert_rows(["abcde", "", "ab\tde"], max_length=256, kg=str(kg), vocab=str(vocab), predicate=False))
    assert rows[0]["tokens"] == ["[CLS]", "a", "b", "x", "y", "z", "c", "d", "e", "q"] and len(rows) == 2
    plain = next(kbert_rows(["abcde"], max_length=4, kg="none", vocab=str(vocab), mode="reference"))
    assert plain["tokens"] == ["[CLS]", "a", "b", "c"] and plain["visible"][0] == [0, 1, 2, 3]


def test_kbert_options_and_stdin(files, capsys, monkeypatch):
    vocab, kg, _ = files
    monkeypatch.setattr(sys, "stdin", __import__("io").StringIO("ABcde\n"))
    code, rows, _ = run_inspect(capsys, "kbert", "--kg", str(kg), "--vocab", str(vocab), "--mode", "reference",
                                "--max-length", "4", "-")
    assert code == 0
    assert rows[0]["tokens"] == ["[CLS]", "A", "B", "c"] and rows[0]["ids"] == [2, 1, 1, 7]  # exact lookup
    code, rows, err = run_inspect(capsys, "kbert", "--vocab", str(vocab), "--max-entities", "0", "-")
    assert code == 2 and rows == [] and "no input" in err  # stdin already read


@pytest.mark.parametrize("kind", ["kbert", "let", "relation"])
def test_empty_input_is_no_input_for_every_kind(files, capsys, kind):
    vocab, _, tmp = files
    src = tmp / "empty.txt"
    for content in ("", "\n \n\n"):
        src.write_text(content, encoding="utf-8")
        options = {"kbert": ["--vocab", str(vocab)], "let": ["--vocab", str(vocab), "--no-senses"], "relation": []}
        code, rows, err = run_inspect(capsys, kind, *options[kind], str(src))
        assert code == 2 and rows == [] and err.strip() == "graphmatch inspect: error: no input: every line is empty"


def test_a_byte_order_mark_is_not_a_token(files, capsys):
    vocab, kg, tmp = files
    src = tmp / "bom.txt"
    src.write_bytes("\ufeffab\n".encode())
    code, rows, _ = run_inspect(capsys, "kbert", "--vocab", str(vocab), str(src))
    assert code == 0 and rows[0]["tokens"] == ["[CLS]", "a", "b"]


def test_kbert_bad_input_names_the_line(files, capsys):
    vocab, kg, tmp = files
    src = tmp / "bad.txt"
    src.write_text("ab\nx\t \n", encoding="utf-8")
    code, rows, err = run_inspect(capsys, "kbert", "--kg", str(kg), "--vocab", str(vocab), str(src))
    assert code == 2 and "line 2: empty text" in err and len(rows) == 1
    src.write_text("a\tb\tc\n", encoding="utf-8")
    code, _, err = run_inspect(capsys, "kbert", "--vocab", str(vocab), str(src))
    assert code == 2 and "line 1: expected text or text_a<TAB>text_b, got 3 fields" in err
    code, _, err = run_inspect(capsys, "kbert", "--vocab", str(vocab), str(tmp / "missing.txt"))
    assert code == 2 and "missing.txt" in err


def test_let_rows(shared_data, hownet_lexicon):
    from graphmatch.graphs.let import EDGE_TYPES

    options = dict(segmenters="jieba", data_dir=str(shared_data))
    lines = ["text_a\ttext_b\tlabel\n", "苹果手机\t买个手机\t1\n", "\n", "你好\t您好\n"]
    rows = list(let_rows(lines, **options))
    assert len(rows) == 2
    json.dumps(rows, ensure_ascii=False)
    row = rows[0]
    assert row["label"] == 1 and rows[1]["label"] is None
    word = next(w for w in row["words"] if w["word"] == "手机")
    assert word["senses"] == [list(s) for s in hownet_lexicon.senses("手机")]
    assert set(row["edges"]) == {"_".join(et) for et in EDGE_TYPES}
    assert next(let_rows(lines[:2], **options, senses=False))["num_nodes"]["sense"] == 0
    with pytest.raises(ValueError, match="line 2: text_b is empty"):
        list(let_rows(["a\tb\t0", "你好\t \t1"], **options, senses=False))
    with pytest.raises(ValueError, match="line 1: label must be 0 or 1"):
        list(let_rows(["你好\t您好\t3"], **options, senses=False))


SENT = "The <e1>Big Dog</e1> bit the <e2>man</e2>, sadly."


def test_relation_rows():
    lines = ['8001\t"The <e1>company</e1> fabricates plastic <e2>chairs</e2>."', "", SENT]
    rows = list(relation_rows(lines, max_distance=2, markers=False))
    assert [r["line"] for r in rows] == [1, 3] and rows[0]["id"] == "8001" and "id" not in rows[1]
    assert rows[0]["tokens"] == ["the", "company", "fabricates", "plastic", "chairs", "."]
    assert rows[0]["pos1"] == [-1, 0, 1, 2, 2, 2]  # unshifted, clipped to ±2
    assert rows[0]["entities"][1] == {"name": "e2", "text": "chairs", "tokens": [4]}
    assert rows[1]["edges"]["token-in-entity"] == [[1, 2, 5], [0, 0, 1]]
    # the vocabulary is built over the given lines: "the" (3 times) is the most frequent word
    assert rows[0]["word_id"][0] == rows[1]["word_id"][0] == 2 and 1 not in rows[0]["word_id"]
    default = next(relation_rows(lines[:1]))  # markers kept, positions clipped to ±50
    assert default["tokens"] == ["the", "<e1>", "company", "</e1>", "fabricates", "plastic", "<e2>", "chairs",
                                 "</e2>", "."]
    assert default["pos2"][0] == -7 and default["entities"][0]["tokens"] == [2]


def test_relation_rows_errors_name_the_line():
    with pytest.raises(ValueError, match="^line 2: missing entity marker <e2>"):
        list(relation_rows(["<e1>a</e1> <e2>b</e2>", "<e1>only</e1> one"]))
    with pytest.raises(ValueError, match="empty"):
        list(relation_rows(["", "  "]))


def test_relation_graph_dict_reports_label():
    data = RelationGraphBuilder(Vocab.build([parse_relation(SENT).tokens]), keep_text=True)(SENT, label=3)
    assert relation_graph_dict(data)["y"] == 3


def test_inspect_relation_cli(tmp_path, capsys):
    path = tmp_path / "in.txt"
    path.write_text(f"{SENT}\n\n<e1>a</e1> b <e2>c</e2>\n", encoding="utf-8")
    assert main(["inspect", "relation", "--max-distance", "1", str(path)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["line"] for r in rows] == [1, 3] and rows[1]["pos2"] == [-1, -1, -1, -1, -1, 0, 1]
    path.write_text("<e1>a</e1> b\n", encoding="utf-8")
    assert main(["inspect", "relation", str(path)]) == 2
    assert "line 1: missing entity marker <e2>" in capsys.readouterr().err


def test_inspect_relation_head_tail_lines_per_character_and_pieces(tmp_path, capsys):
    path = tmp_path / "zh.tsv"
    lines = "\ufeff兵马俑\t西安\t位于\t在西安，兵马俑很有名。\n天坛\t北京\t位于\t故宫位于北京。\n"
    path.write_text(lines, encoding="utf-8")
    assert main(["inspect", "relation", "--tokenization", "chars", str(path)]) == 2
    err = capsys.readouterr().err
    assert "line 2: the head entity '天坛' is not in the sentence" in err and len(err.strip().splitlines()) == 1
    path.write_text("兵马俑\t西安\t位于\t在西安，兵马俑很有名。\n", encoding="utf-8")
    assert main(["inspect", "relation", "--tokenization", "chars", str(path)]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["tokens"][:5] == ["在", "<e2>", "西", "安", "</e2>"]
    assert [e["text"] for e in row["entities"]] == ["兵 马 俑", "西 安"]
    from tiny_bert import tiny_bert_folder

    folder = tiny_bert_folder(tmp_path / "bert", ["在西安，兵马俑很有名。"])
    assert main(["inspect", "relation", "--pretrained", str(folder), str(path)]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["tokens"][0] == "[CLS]" and row["tokens"][-1] == "[SEP]" and "[unused2]" in row["tokens"]
