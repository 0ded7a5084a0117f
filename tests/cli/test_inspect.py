"""``graphmatch inspect``: one JSON object per input line, errors as one clear line."""

from __future__ import annotations

import json
import sys
import types

import pytest

from graphmatch.cli.main import main

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


def test_kbert_options_and_stdin(files, capsys, monkeypatch):
    vocab, kg, _ = files
    monkeypatch.setattr(sys, "stdin", __import__("io").StringIO("ABcde\n"))
    code, rows, _ = run_inspect(capsys, "kbert", "--kg", str(kg), "--vocab", str(vocab), "--mode", "reference",
                                "--max-length", "4", "-")
    assert code == 0
    assert rows[0]["tokens"] == ["[CLS]", "A", "B", "c"] and rows[0]["ids"] == [2, 1, 1, 7]  # exact lookup
    code, rows, _ = run_inspect(capsys, "kbert", "--vocab", str(vocab), "--max-entities", "0", "-")
    assert code == 0 and rows == []  # stdin already read


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


@pytest.mark.parametrize("kind,option,value", [("let", "--segmenters", "jieba"), ("relation", "--max-distance", "7")])
def test_let_and_relation_dispatch(kind, option, value, files, capsys, monkeypatch):
    _, _, tmp = files
    src = tmp / "in.txt"
    src.write_text("one\ntwo\n", encoding="utf-8")
    seen = {}

    def fake_rows(lines, args):
        seen["args"] = args
        for line in lines:
            yield {"line": line.strip()}

    monkeypatch.setitem(sys.modules, f"graphmatch.graphs.{kind}", types.SimpleNamespace(inspect_rows=fake_rows))
    code, rows, _ = run_inspect(capsys, kind, option, value, str(src))
    assert code == 0 and rows == [{"line": "one"}, {"line": "two"}]
    assert str(getattr(seen["args"], option[2:].replace("-", "_"))) == value


def test_missing_builder_module_is_a_clear_error(files, capsys, monkeypatch):
    _, _, tmp = files
    src = tmp / "in.txt"
    src.write_text("x\ty\n", encoding="utf-8")
    monkeypatch.setitem(sys.modules, "graphmatch.graphs.let", types.SimpleNamespace())  # no inspect_rows
    code, rows, err = run_inspect(capsys, "let", "--no-senses", str(src))
    assert code == 2 and rows == [] and "'let' inspection is not available" in err
