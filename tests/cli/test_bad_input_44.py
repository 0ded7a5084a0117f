"""Issue 44's bad input: each case that was silently wrong or messy is one line on stderr and exit
code 2 (the README's promise), or a one-line warning where the run may go on."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphmatch.cli.main import main

TINY = ["model.hidden_size=16", "model.num_layers=1", "model.num_heads=2", "model.intermediate_size=16",
        "model.max_position=64", "data.max_length=32", "train.progress=false", "train.epochs=1",
        "train.batch_size=8"]
RECIPE = "kbert/chnsenticorp_hownet_quick"


def _dataset(folder: Path, train: str, dev: str = "label\ttext_a\n0\t苹果\n1\t很好\n") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train.tsv").write_text(train, encoding="utf-8")
    (folder / "dev.tsv").write_text(dev, encoding="utf-8")
    (folder / "test.tsv").write_text(dev, encoding="utf-8")
    return folder


def _mixed_labels(tmp_path: Path, shared_data: Path) -> tuple[list[str], str]:
    folder = _dataset(tmp_path / "mixed", "label\ttext_a\n0\t苹果不好\n1\t很好\n0.0\t不好\n1.0\t北京很好\n")
    return (["train", RECIPE, "--out", str(tmp_path / "run"), "--set", *TINY, f"data.dataset={folder}",
             f"data.root={shared_data}", f"data.cache_dir={tmp_path / 'cache'}"],
            f"{folder / 'train.tsv'}:4: label '0.0' is the number of label '0' ({folder / 'train.tsv'}:2)")


CASES = {"mixed label spellings": _mixed_labels}


@pytest.mark.parametrize("case", sorted(CASES))
def test_one_line_and_exit_2(case: str, tmp_path: Path, shared_data: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    argv, message = CASES[case](tmp_path, shared_data)
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith(f"graphmatch {argv[0]}: error: ") and message in lines[0], lines[0]
    assert len(lines[0]) <= 300 + len(f"graphmatch {argv[0]}: error: ")
