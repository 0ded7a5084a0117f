"""benchmarks/bench_kbert_one.py: the A/B of the one-input tree against another version of its file
checks the graphs equal before it times anything."""

from __future__ import annotations

from pathlib import Path

import pytest
from benchmark_scripts import load

import graphmatch.graphs.kbert.one as kbert_one

bench = load("bench_kbert_one")
SOURCE = Path(kbert_one.__file__)


def run(before: Path, data: Path) -> None:
    bench.main(["--before", str(before), "--data-dir", str(data), "--n", "30", "--rounds", "1", "--check", "30"])


def test_same_file_times_both_sets_in_both_modes(shared_data, capsys):
    run(SOURCE, shared_data)
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith(("| LCQMC", "| book_review"))]
    assert [row.split(" | ")[1] for row in rows] == ["default", "reference"] * 2
    assert all(float(row.split(" | ")[2]) > 0 and row.endswith("×** |") for row in rows)


def test_a_version_that_builds_other_graphs_is_refused(shared_data, tmp_path):
    text = SOURCE.read_text(encoding="utf-8")
    wrong = text.replace("pos += range(cursor, end)", "pos += range(cursor + 1, end + 1)")
    assert wrong != text
    before = tmp_path / "before.py"
    before.write_text(wrong, encoding="utf-8")
    with pytest.raises(SystemExit, match="differ"):
        run(before, shared_data)
